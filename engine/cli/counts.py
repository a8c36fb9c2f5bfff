"""``python -m engine counts``: release a region × period count table subject to public information (ε-TP).

Examples::

    python -m engine counts --dataset counties-demo --method wasserstein --base congenial --epsilon 1 \\
        --public last-period,total,subcount --replicates 10 --seed 1 --output released.csv
    python -m engine counts --input my_counts.csv --count cases --subcount deaths --method postprocess \\
        --epsilon 0.5 --public total,subcount --output released.csv

Writes the released table (CSV: region, period, replicate, count[, subcount]) and prints its guarantee, the
whole-study ε both ways, the configuration and the time as JSON. Without ``--seed`` the noise comes from the
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
                        help="Δ_z (default: 2, the paper's, or the --dependence model's)")
    parser.add_argument("--dependence", metavar="N,Z0,Z1", default=None,
                        help="correlated counts: groups of N people, z0 ≤ z1 (§4.4); the release uses this model's "
                             "exact Δ_z (doubled when the table has a sub-count) unless --sensitivity is larger")
    parser.add_argument("--replicates", type=int, default=1, help="independent releases (default 1)")
    parser.add_argument("--seed", type=int, default=None, help="seed (simulation only — NOT private)")
    parser.add_argument("--output", metavar="FILE", required=True, help="where to write the released table (CSV)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys
    import time
    from pathlib import Path

    import numpy as np
    import pandas as pd

    from engine.accounting.composition import study_budget
    from engine.cli._common import print_json
    from engine.public_info.count_release import CountReleaseConfig, release_counts, sensitivity_for
    from engine.public_info.count_table import counties_demo, load_count_table
    from engine.public_info.dependence import DependenceModel
    from engine.rng import SEEDED_WARNING, make_rng

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
        replicates=args.replicates, dependence=model,
        sensitivity=args.sensitivity if args.sensitivity is not None else sensitivity_for(table, model),
    )
    out_path = Path(args.output)
    if not out_path.parent.is_dir():
        raise InvalidParameterError(f"--output: the folder {str(out_path.parent)!r} does not exist")
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
    frame.to_csv(out_path, index=False)
    budget = study_budget(config.epsilon, t)
    payload = {
        "guarantee": release.guarantee.to_dict(),
        "statement": release.guarantee.describe(),
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
    print_json(payload)
    return 0
