"""``python -m engine counts``: release a region × period count table subject to public information (ε-TP).

Examples::

    python -m engine counts --dataset counties-demo --method wasserstein --base congenial --epsilon 1 \\
        --public last-period,total,subcount --output released.csv
    python -m engine counts --input my_counts.csv --count cases --subcount deaths --method postprocess \\
        --epsilon 0.5 --public total,subcount --output released.csv
    # a simulation of the release's error (seeded: NOT private)
    python -m engine counts --dataset counties-demo --method postprocess --epsilon 1 --replicates 10 --seed 1 \\
        --output simulated.csv

Writes the released table (CSV: region, period, replicate, count[, subcount]) and prints its guarantee, how Δ_z was
derived, the whole-study ε both ways, the configuration and the time as JSON. Δ_z is derived from ``--public``,
``--dependence`` and whether the table has a sub-count (``--sensitivity`` may only raise it). R replicates written
to one file spend R·ε per period, and the printed guarantee says so. Without ``--seed`` the noise comes from the
operating system's entropy; with it the output is reproducible and NOT private.
"""

from __future__ import annotations

import argparse

from engine.errors import InvalidParameterError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "counts",
        help="release a region × period count table subject to public totals / last period / sub-count ≤ count",
        description=(
            "Release every period of a count table with the post-processing baseline (discrete Laplace + projection) "
            "or the exact Wasserstein exponential mechanism, subject to the declared public information; prints "
            "the ε-TP guarantee as JSON."
        ),
        epilog="Never use --seed for a real release: seeded noise can be regenerated and removed.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", choices=("counties-demo",), help="built-in synthetic table")
    source.add_argument("--input", metavar="FILE", help="your table (CSV or Parquet), one row per region × period")
    parser.add_argument("--region", default="region", help="region column of --input (default: region)")
    parser.add_argument("--period", default="period", help="period column of --input (default: period)")
    parser.add_argument("--count", default="count", help="count column of --input (default: count)")
    parser.add_argument("--subcount", default=None, help="optional sub-count column (≤ count) of --input")
    parser.add_argument("--population", default=None, help="optional population column of --input")
    parser.add_argument("--method", choices=("postprocess", "wasserstein"), required=True)
    parser.add_argument("--base", choices=("naive", "congenial", "prior"), default="congenial",
                        help="base measure of the Wasserstein mechanism (default congenial)")
    parser.add_argument("--epsilon", type=float, required=True, help="ε per period (> 0)")
    parser.add_argument("--public", default="last-period,total,subcount",
                        help="comma-separated public statistics: last-period, total, subcount (default: all three)")
    parser.add_argument("--alpha", type=float, default=1.0, help="Dirichlet–multinomial concentration α (prior base)")
    parser.add_argument("--sensitivity", type=float, default=None,
                        help="a larger Δ_z than the derived one (default: derived from --public, --dependence and "
                             "whether the table has a sub-count — 4 for count + sub-count with the total public; a "
                             "smaller value is refused)")
    parser.add_argument("--dependence", metavar="N,Z0,Z1", default=None,
                        help="correlated counts: groups of N people, z0 ≤ z1 (§4.4); Δ_z is derived from this model "
                             "and --public")
    parser.add_argument("--replicates", type=int, default=1,
                        help="independent releases in one file (default 1); published together they spend "
                             "R·ε per period, and the printed guarantee says so — use --seed for a simulation")
    parser.add_argument("--seed", type=int, default=None, help="seed (simulation only — NOT private)")
    parser.add_argument("--output", metavar="FILE", required=True, help="where to write the released table (CSV)")
    from engine.cli._common import add_overwrite_argument

    add_overwrite_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys
    import time
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from engine.accounting.composition import compose_replicates, study_budget
    from engine.cli._common import checked_output, print_json
    from engine.export_csv import write_safe_csv
    from engine.limits import check_privacy_parameters
    from engine.public_info.count_release import CountReleaseConfig, release_counts
    from engine.public_info.count_table import counties_demo, load_count_table
    from engine.public_info.dependence import DependenceModel
    from engine.rng import SEEDED_WARNING, make_rng

    check_privacy_parameters({"epsilon": args.epsilon}, owner="the count release (--epsilon)")
    out_path = checked_output(args.output, inputs=[("--input", args.input)], overwrite=args.overwrite)  # before any work
    public = tuple(p.strip() for p in args.public.split(",") if p.strip())
    model = DependenceModel()
    if args.dependence is not None:
        parts = args.dependence.split(",")
        try:
            n, z0, z1 = int(parts[0]), float(parts[1]), float(parts[2])
        except (ValueError, IndexError):
            raise InvalidParameterError(
                f"--dependence must be N,Z0,Z1 (e.g. 100,0,0.5); got {args.dependence!r}") from None
        if len(parts) != 3:
            raise InvalidParameterError(f"--dependence must be N,Z0,Z1 (e.g. 100,0,0.5); got {args.dependence!r}")
        model = DependenceModel("correlated", n=n, z0=z0, z1=z1)
    rng = make_rng(args.seed)
    if args.dataset:
        table = counties_demo()
    else:
        path = Path(args.input)
        if not path.is_file():
            raise InvalidParameterError(f"--input must be an existing file; got {args.input!r}")
        table = load_count_table(path, region=args.region, period=args.period, count=args.count,
                                 subcount=args.subcount, population=args.population)
    config = CountReleaseConfig(
        method=args.method, base=args.base, epsilon=args.epsilon, public=public, alpha=args.alpha,
        replicates=args.replicates, dependence=model, sensitivity=args.sensitivity,
    )
    delta_z = config.delta_z(subcounts=table.subcounts is not None)  # refuses a smaller --sensitivity, with why
    started = time.perf_counter()
    release = release_counts(
        table, config, rng=rng,
        progress=lambda p: print(f"{p.done}/{p.total} {p.message}", file=sys.stderr, flush=True),
    )
    seconds = time.perf_counter() - started
    r, j, t = release.counts.shape
    frame = pd.DataFrame({
        "region": np.tile(np.repeat(np.array(table.regions, dtype=object), t), r),
        "period": np.tile(np.array(table.periods, dtype=object), r * j),
        "replicate": np.repeat(np.arange(r), j * t),
        "count": release.counts.ravel(),
    })
    if release.subcounts is not None:
        frame["subcount"] = release.subcounts.ravel()
    write_safe_csv(frame, out_path, overwrite=args.overwrite)  # atomic; formula-like region names neutralised
    published = compose_replicates(release.guarantee, r)  # all r replicates together: r·ε per period
    budget = study_budget(published.epsilon, t)
    payload = {
        "guarantee": published.to_dict(),
        "statement": published.describe(),
        "delta_z": {"value": delta_z.value, "derived": delta_z.derived, "exact": delta_z.exact,
                    "override": delta_z.override, "reason": delta_z.describe()},
        "replicates": r,
        "epsilon_per_replicate": config.epsilon,
        "study_epsilon": {"per_period": budget.epsilon_per_period, "parallel": budget.parallel,
                          "sequential": budget.sequential},
        "config": config.to_dict(),
        "data": {"label": table.label, "synthetic": table.synthetic, "regions": j, "periods": t,
                 "notes": list(table.notes)},
        "output": str(out_path),
        "rows": int(len(frame)),
        "seconds": round(seconds, 3),
        "seed": args.seed,
    }
    if args.seed is not None:
        payload["warning"] = SEEDED_WARNING
    elif r > 1:
        payload["warning"] = (
            f"{r} releases of the same table in one file: published together they spend ε = {published.epsilon:.6g} "
            "per period, not the ε of one release (averaging them removes the noise). Publish one replicate, or add "
            "--seed for a simulation (not private)."
        )
    print_json(payload)
    return 0
