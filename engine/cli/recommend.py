"""``python -m engine recommend``: the most protective (B, ε) that still meets the program's target on the data.

Example::

    python -m engine recommend --dataset togo-demo --program targeting --target "accuracy>=0.72" \\
        --mechanisms gaussian,projection --confidence 0.95 --output rec.json

Searches each mechanism's frontier with Theorem 1's pruning, bisection in ε and sequential testing
(:mod:`engine.recommend`), prints the recommendation as JSON and writes it to ``--output``.
"""

from __future__ import annotations

import argparse
import sys

from engine.cli._dataset import add_dataset_arguments


def register(subparsers) -> None:
    from engine.cli._common import add_overwrite_argument
    from engine.mechanisms import budgeted_kinds, preselected_kinds

    parser = subparsers.add_parser(
        "recommend",
        help="the most protective (B, ε) that meets the program's target on your data",
        description=(
            "Search (B, ε) for each mechanism — Theorem 1 prunes what is ruled out, ε is bisected for each B, "
            "releases are added only while the verdict is open — and recommend the frontier point with the "
            "smallest implied classic-DP ε, with its interval, its protections and Theorem 1's region."
        ),
        epilog="A seeded simulation: nothing it prints is a release.",
    )
    # The data, program and preparation flags of sweep, from the one shared definition; the outcome column is
    # --target-column here because --target is the metric target.
    add_dataset_arguments(parser, outcome=("--target-column",))
    parser.add_argument("--target", required=True, metavar="METRIC>=VALUE",
                        help="e.g. accuracy>=0.72, gamma>=0.9 (decision agreement), profit>=90%% (of non-private), "
                             "extra_exclusion_errors_population<=10000")
    parser.add_argument("--mechanisms", default=None,
                        help=f"comma-separated: {', '.join(budgeted_kinds())} (default: "
                             f"{','.join(preselected_kinds())})")
    parser.add_argument("--b-values", default="0.1,0.25,0.5,1,2", help="comma-separated B values to search")
    parser.add_argument("--delta", type=float, default=None, help="δ of every candidate (default 1/(n + 1))")
    parser.add_argument("--confidence", type=float, default=0.95, help="level of each verdict (default 0.95)")
    parser.add_argument("--steps", type=int, default=7, help="bisection halvings of log ε per B (default 7)")
    parser.add_argument("--max-repetitions", type=int, default=10, help="most releases per point (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="root seed of the search (default 0)")
    parser.add_argument("--output", metavar="FILE", required=True, help="where to write the recommendation (JSON)")
    add_overwrite_argument(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from engine.cli._common import _jsonable, checked_output, parse_float_list, print_json
    from engine.cli._dataset import load_dataset
    from engine.mechanisms import preselected_kinds
    from engine.output_files import write_text
    from engine.recommend import RecommendConfig, Target

    dataset_file = args.dataset if args.dataset and Path(args.dataset).is_file() else None
    output = checked_output(args.output, inputs=[("--dataset", dataset_file), ("--config", args.config)],
                            overwrite=args.overwrite)  # before any work
    chosen = preselected_kinds() if args.mechanisms is None else tuple(
        m.strip() for m in args.mechanisms.split(",") if m.strip())
    config = RecommendConfig(
        Target.parse(args.target),
        mechanisms=chosen,
        b_values=tuple(parse_float_list("--b-values", args.b_values)),
        delta=args.delta, confidence=args.confidence, steps=args.steps,
        max_repetitions=args.max_repetitions, seed=args.seed,
    )
    loaded = load_dataset(args)  # the same data, program and preparation as sweep's (engine.cli._dataset)
    for note in loaded.notes:
        print(f"note: {note}", file=sys.stderr)
    from engine.recommend import recommend

    def report(p) -> None:
        print(f"[{p.done}/{p.total}] {p.message}", file=sys.stderr, flush=True)

    result = recommend(loaded.prepared, loaded.program, config, progress=report)
    payload = {**result.to_dict(), "program": loaded.program.to_dict(), "data": loaded.summary()}
    write_text(output, json.dumps(_jsonable(payload), indent=2, allow_nan=False, ensure_ascii=False),
               overwrite=args.overwrite)
    print_json(payload)
    return 0
