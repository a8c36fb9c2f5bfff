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


def register(subparsers) -> None:
    from engine.cli._common import add_overwrite_argument

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
    parser.add_argument("--dataset", metavar="NAME|FILE", required=True,
                        help="built-in demo (togo-demo, nigeria-demo, replication) or a CSV/Parquet file")
    parser.add_argument("--target-column", metavar="COL", help="outcome column of a file (default: the demo's)")
    parser.add_argument("--features", metavar="COLS", help="comma-separated feature columns of a file")
    parser.add_argument("--program", choices=("targeting", "lending", "classification", "regression"),
                        help="default: the demo's program, else targeting")
    parser.add_argument("--target", required=True, metavar="METRIC>=VALUE",
                        help="e.g. accuracy>=0.72, gamma>=0.9 (decision agreement), profit>=90%% (of non-private), "
                             "extra_exclusion_errors_population<=10000")
    from engine.mechanisms import budgeted_kinds, preselected_kinds

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
    from engine.data.demos import demo_names, load_demo
    from engine.data.preparation import DataSpec, load_table, prepare
    from engine.errors import InvalidParameterError
    from engine.evaluation.programs import ProgramConfig
    from engine.output_files import write_text
    from engine.recommend import RecommendConfig, Target

    dataset_file = args.dataset if Path(args.dataset).is_file() else None
    output = checked_output(args.output, inputs=[("--dataset", dataset_file)], overwrite=args.overwrite)
    from engine.mechanisms import preselected_kinds

    chosen = preselected_kinds() if args.mechanisms is None else tuple(
        m.strip() for m in args.mechanisms.split(",") if m.strip())
    config = RecommendConfig(
        Target.parse(args.target),
        mechanisms=chosen,
        b_values=tuple(parse_float_list("--b-values", args.b_values)),
        delta=args.delta, confidence=args.confidence, steps=args.steps,
        max_repetitions=args.max_repetitions, seed=args.seed,
    )
    if args.dataset in demo_names():
        demo = load_demo(args.dataset)
        frame, spec = demo.frame, demo.spec
        program = demo.program_config() or ProgramConfig()
        if args.program is not None and args.program != program.kind:
            program = ProgramConfig(kind=args.program)
    elif dataset_file is not None:
        if not args.target_column:
            raise InvalidParameterError("--target-column is required for a file: name the outcome column")
        frame = load_table(Path(dataset_file))
        features = (tuple(c.strip() for c in args.features.split(",") if c.strip()) if args.features else
                    tuple(str(c) for c in frame.columns if str(c) != args.target_column))
        spec = DataSpec(features, target=args.target_column)
        program = ProgramConfig(kind=args.program or "targeting")
    else:
        raise InvalidParameterError(
            f"--dataset must be a demo name ({', '.join(demo_names())}) or an existing file; got {args.dataset!r}"
        )
    from engine.recommend import recommend

    def report(p) -> None:
        print(f"[{p.done}/{p.total}] {p.message}", file=sys.stderr, flush=True)

    result = recommend(prepare(frame, spec), program, config, progress=report)
    payload = result.to_dict()
    write_text(output, json.dumps(_jsonable(payload), indent=2, allow_nan=False, ensure_ascii=False),
               overwrite=args.overwrite)
    print_json(payload)
    return 0
