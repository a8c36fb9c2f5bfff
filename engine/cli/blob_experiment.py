"""``python -m engine blob-experiment``: the JL + Laplace paper's clustering experiment (its Table 1).

Example::

    python -m engine blob-experiment --d 3 --k 2 --reps 20 --seed 1

prints JSON with the mean and sd over repetitions of the k-means clustering accuracy on the original data
("none"), the projection alone, and the element-wise and row-wise private releases at ε = 4, plus the guarantees
of both releases (with the paper's vacuous bounds flagged). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import sys

from engine.cli._common import print_json
from engine.progress import Progress
from engine.rng import SEEDED_WARNING, fresh_seed, make_rng


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "blob-experiment",
        help="JL + Laplace release: k-means accuracy on two Gaussian blobs (the paper's Table 1)",
        description=(
            "Two isotropic Gaussian blobs (centre distance 4, sd 1; Bayes accuracy 0.977), released by the JL "
            "projection alone and by JL + Laplace noise (element-wise and row-wise), clustered with k-means. "
            "Element- and row-wise releases share each repetition's data, projection and noise draw (paired)."
        ),
        epilog="Assumptions the paper leaves open (N, t = t_min, k-means settings) are those of the digest, §6–§8.",
    )
    parser.add_argument("--d", type=int, required=True, help="data dimension d")
    parser.add_argument("--k", type=int, required=True, help="projection dimension k")
    parser.add_argument("--n", type=int, default=1000, help="points per repetition (default 1000)")
    parser.add_argument("--epsilon", type=float, default=4.0, help="ε of the Laplace stage (paper: 4)")
    parser.add_argument("--reps", type=int, default=20, help="repetitions (default 20)")
    parser.add_argument("--seed", type=int, default=None, help="seed for a reproducible simulation")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine.evaluation.clustering import blob_experiment
    from engine.mechanisms.jl_laplace import JLLaplace

    seed = fresh_seed() if args.seed is None else args.seed

    def report(p: Progress) -> None:
        print(f"repetition {p.done}/{p.total}", file=sys.stderr, flush=True)

    result = blob_experiment(args.d, args.k, n=args.n, epsilon=args.epsilon, repetitions=args.reps,
                             rng=make_rng(seed), progress=report)
    releases = {
        "element": JLLaplace(k=args.k, epsilon=args.epsilon, d=args.d, relation="element"),
        "row": JLLaplace(k=args.k, epsilon=args.epsilon, d=args.d, relation="row", b=1.0),
    }
    print_json({
        "d": args.d, "k": args.k, "n": args.n, "epsilon": args.epsilon, "repetitions": args.reps, "seed": seed,
        "warning": SEEDED_WARNING,
        "accuracy": {name: {"mean": result.mean(name), "sd": result.sd(name)} for name in result.accuracies},
        "guarantees": {name: {"headline": m.guarantee().headline(), "delta_fail": m.delta_fail,
                              "delta_fail_paper_bound": m.delta_fail_paper, "warnings": m.warnings(),
                              "laplace_scale": m.laplace_scale}
                       for name, m in releases.items()},
    })
    return 0
