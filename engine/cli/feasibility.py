"""``python -m engine feasibility``: Theorem 1's answers for one (γ, ε, δ), optionally checked at a given B.

Example::

    python -m engine feasibility --gamma 0.99 --epsilon 1 --delta 1e-4 --b 0.4

prints JSON with ``Q``, ``m``, ``B_sup``, ``B_max_integer``, ``dp_feasible``, ``gamma_max_at_B2`` (and, with
``--b``, ``B``, ``steps`` (⌈2/B⌉), ``is_feasible``, ``gamma_max`` and ``min_epsilon`` at that B).
"""

from __future__ import annotations

import argparse

from engine.accounting.tdp import steps
from engine.cli._common import print_json
from engine.theory.feasibility import feasibility_report, gamma_max, is_feasible, min_epsilon


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "feasibility",
        help="Theorem 1: which target distances B are ruled out for γ-accurate targeting",
        description=(
            "Theorem 1 of Kohli & Blumenstock (targeted DP): a (B, ε, δ)-TDP release can be γ-accurate for "
            "targeting only if ceil(2/B) >= ceil(ln(Q)/ε). Prints the largest feasible B, whether classic DP "
            "(B = 2) is ruled out and the highest accuracy classic DP allows."
        ),
        epilog="The condition is necessary, not sufficient: the B that delivers γ on your task may be smaller.",
    )
    parser.add_argument("--gamma", type=float, required=True, help="required targeting accuracy, in [0.5, 1)")
    parser.add_argument("--epsilon", type=float, required=True, help="privacy loss ε > 0")
    parser.add_argument("--delta", type=float, required=True, help="δ in [0, 1)")
    parser.add_argument("--b", type=float, default=None, help="also check this target distance B in (0, 2]")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    report = feasibility_report(args.gamma, args.epsilon, args.delta)
    payload: dict[str, object] = {
        "gamma": report.gamma,
        "epsilon": report.epsilon,
        "delta": report.delta,
        "Q": report.q,
        "ln_Q": report.log_q,
        "m": report.m,
        "B_sup": report.b_sup,
        "B_sup_attained": report.b_sup_attained,
        "B_max_integer": report.b_max_integer,
        "dp_feasible": report.dp_feasible,
        "gamma_max_at_B2": report.gamma_max_at_b2,
        "min_epsilon_at_B2": report.min_epsilon_at_b2,
    }
    if args.b is not None:
        feasible = is_feasible(args.b, report.gamma, report.epsilon, report.delta)  # validates B first
        payload.update(
            {
                "B": float(args.b),
                "steps": steps(2.0, args.b),
                "is_feasible": feasible,
                "gamma_max": gamma_max(args.b, report.epsilon, report.delta),
                "min_epsilon": min_epsilon(args.b, report.gamma, report.delta),
            }
        )
    payload["summary"] = report.describe()
    print_json(payload)
    return 0
