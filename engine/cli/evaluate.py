"""``python -m engine evaluate``: re-run a decision record's analysis on the data — the numbers the dashboard showed.

Example::

    python -m engine evaluate --config record.json --seed 7
    python -m engine evaluate --config record.json --input my-data.csv --repetitions 10

Reads the record's release configuration (data preparation and mechanism), its program and its γ targets, and runs
the one analysis the dashboard and the sweeps run (:func:`engine.analysis.analyse_mechanisms`): the mechanism on
the released rows (all rows minus the attribute-inference holdout), the program on the release with its interval
over ``--repetitions`` releases, the decision agreement with the non-private program (not Theorem 1's worst-case γ) against each γ
target and Theorem 1, the trivial rules it must beat, and the three attacks. Prints JSON on stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.errors import InvalidParameterError

#: Largest decision record the command reads (a record is a few hundred KB at most).
MAX_RECORD_BYTES = 20 * 1024 * 1024


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="re-run a decision record's analysis: program, decision agreement, attacks",
        description=(
            "Release the record's data with its mechanism and evaluate the release exactly as the dashboard's "
            "Mechanisms page and the sweeps do: program effectiveness with an interval, the decision agreement against the "
            "record's targets, the rules that use no data, and the three attacks."
        ),
        epilog="The analysis is a simulation (seeded): nothing it prints is a release.",
    )
    parser.add_argument("--config", metavar="FILE", required=True, help="decision record (JSON) from the Export page")
    parser.add_argument("--input", metavar="FILE", help="the data (CSV/Parquet) when the record was made on an upload")
    parser.add_argument("--seed", type=int, default=0, help="root seed of the analysis (default 0)")
    parser.add_argument("--repetitions", type=int, default=5, help="releases for the intervals (default 5)")
    parser.add_argument("--attacks", metavar="LIST", default="singling_out,attribute_inference,distinguishing",
                        help="comma-separated attacks to run (default: all three)")
    parser.set_defaults(func=run)


def _record(path: str):
    from engine.decision_record import load_decision_record

    file = Path(path)
    if not file.is_file():
        raise InvalidParameterError(f"there is no decision record at {path!r} — check the path")
    if file.stat().st_size > MAX_RECORD_BYTES:
        raise InvalidParameterError(
            f"{path!r} is {file.stat().st_size / 1024 / 1024:.1f} MB, larger than any decision record "
            f"({MAX_RECORD_BYTES // 1024 // 1024} MB at most) — check that it is the file exported by the Studio"
        )
    try:
        return load_decision_record(file.read_bytes())
    except RecursionError:
        raise InvalidParameterError(f"{path!r} is nested too deeply to be a decision record") from None


def run(args: argparse.Namespace) -> int:
    from engine.analysis import AnalysisConfig, analyse_mechanisms, gamma_check
    from engine.cli._common import print_json
    from engine.data.demos import demo_names, load_demo
    from engine.data.preparation import load_table, prepare

    record = _record(args.config)
    release = record.release
    if args.input is not None:
        frame = load_table(Path(args.input))
    elif release.dataset is not None and release.dataset in demo_names():
        frame = load_demo(release.dataset).frame
    else:
        raise InvalidParameterError("the record was made on an uploaded file: give the data with --input FILE")
    attacks = tuple(a.strip() for a in args.attacks.split(",") if a.strip())
    prepared = prepare(frame, release.data)
    program = record.program if prepared.y is not None else None
    config = AnalysisConfig(program=program, attacks=attacks)
    mechanism = release.build_mechanism()
    data, (point,) = analyse_mechanisms(prepared, [mechanism], config, seed=args.seed,
                                        repetitions=args.repetitions)
    first = point.first
    out: dict = {
        "simulation": "seeded analysis — not a release; nothing here is private",
        "seed": args.seed,
        "mechanism": mechanism.to_dict(),
        "guarantee": mechanism.guarantee().headline(),
        "n_released": data.n_released,
        "n_holdout": data.n_holdout,
        "repetitions": point.repetitions,
        "noise_sd_per_coordinate": first.noise_sd,
    }
    if first.program is not None:
        metric = first.program.headline_metric
        mean, sd, lo, hi = point.interval(metric)
        g = point.decision_agreement
        no_data = point.no_data_agreement
        candidate = record.candidate
        out["program"] = {
            "kind": first.program.kind,
            "headline_metric": metric,
            "private": {"mean": mean, "sd": sd, "ci_low": lo, "ci_high": hi},
            "non_private": first.baseline.headline,  # type: ignore[union-attr]
            "metrics_first_release": dict(first.program.metrics),
            "trivial_rules": first.program.baselines,
            "no_better_than": first.program.beaten_by(),
            "decision_agreement": {"mean": g[0], "sd": g[1], "ci_low": g[2], "ci_high": g[3],
                                   "what": "share of people whose decision on the release is the non-private "
                                           "program's, on these data (not Theorem 1's worst-case γ)"},
            "no_data_agreement": no_data,
            "gamma_targets": [
                gamma_check(t, (g[0], g[2], g[3]), b=candidate.b, epsilon=candidate.epsilon,
                            delta=candidate.delta, no_data=no_data).text
                for t in record.targets.gammas
            ],
        }
    protection: dict[str, object] = {}
    for attack in first.metrics.attacks:  # the aggregation rule of engine.analysis: every release attacked
        mean, sd, lo, hi = point.protection(attack.attack)
        protection[f"protection_{attack.attack}"] = {"mean": mean, "sd": sd, "ci_low": lo, "ci_high": hi}
        for key, _ in attack.details:
            protection[key] = point.interval(key)[0]
    out["protection"] = protection
    out["aggregation"] = (
        f"every number is the mean over the {point.repetitions} releases (every release is scored and attacked; "
        "attribute inference: each cell averaged over the releases, then the worst cell), with 95 % intervals"
    )
    print_json(out)
    return 0
