"""Program settings as command-line flags, shared by ``sweep`` and ``recommend`` (through
:mod:`engine.cli._dataset`; one parser, one mapping)."""

from __future__ import annotations

import argparse
from typing import Any

from engine.errors import InvalidParameterError


def add_program_arguments(parser: argparse.ArgumentParser) -> None:
    """``--target-share``, ``--population``, ``--approve-share`` / ``--approve-threshold`` and the units of the
    lending program's interest and revenue columns."""
    group = parser.add_argument_group("program settings (default: the demo's, or the program's defaults)")
    group.add_argument("--target-share", type=float, default=None, metavar="S",
                       help="targeting: share of people targeted, also the share counted as truly poor (0.29 in "
                            "the paper)")
    group.add_argument("--population", type=float, default=None, metavar="N",
                       help="targeting: people the sample stands for, to scale exclusion errors (default: the "
                            "sample itself; the Togo demo: 4.95 million)")
    rule = group.add_mutually_exclusive_group()
    rule.add_argument("--approve-share", type=float, default=None, metavar="S",
                      help="lending/classification: approve the share S of applicants the model rates most likely "
                           "to repay")
    rule.add_argument("--approve-threshold", type=float, default=None, metavar="P",
                      help="lending: approve when the predicted probability of repaying is ≥ P; classification: "
                           "predict the positive class when its predicted probability is ≥ P (default 0.5)")
    group.add_argument("--interest-unit", choices=("amount", "rate", "percent"), default=None,
                       help="lending: the interest column holds money per applicant (amount), a fraction of the "
                            "loan (rate) or a percentage of the loan (percent)")
    group.add_argument("--revenue-unit", choices=("amount", "rate", "percent"), default=None,
                       help="lending: the same for the revenue column")
    group.add_argument("--loan-amount", type=float, default=None, metavar="L",
                       help="lending without a loan_amount column: the amount assumed for every applicant (default 10)")
    group.add_argument("--interest-rate", type=float, default=None, metavar="R",
                       help="lending without an interest column: interest owed on a loan, as a share of it (default "
                            "0.15)")
    group.add_argument("--revenue-rate", type=float, default=None, metavar="R",
                       help="lending without revenue and interest columns: revenue of a repaid loan, as a share of "
                            "it (default 0.15)")
    group.add_argument("--profit-convention", choices=("paper", "ordinary"), default=None,
                       help="lending: paper (default; rejecting an applicant who would have repaid costs its revenue) "
                            "or ordinary profit and loss (0); both totals are reported either way")


def program_overrides(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    """The :class:`~engine.evaluation.programs.ProgramConfig` fields the flags set (validated by the config)."""
    out: dict[str, Any] = {}
    if args.target_share is not None:
        if kind != "targeting":
            raise InvalidParameterError(f"--target-share applies to the targeting program; the program is {kind!r}")
        out["quantile"] = args.target_share
    if args.population is not None:
        out["population"] = args.population
    if args.approve_share is not None or args.approve_threshold is not None:
        if kind not in ("lending", "classification"):
            raise InvalidParameterError(
                f"--approve-share/--approve-threshold apply to lending and classification; the program is {kind!r}"
            )
        if args.approve_share is not None:
            out.update(approval_rule="top_share", approve_share=args.approve_share)
        else:
            out.update(approval_rule="threshold", approval_threshold=args.approve_threshold)
    if args.interest_unit is not None:
        out["interest_unit"] = args.interest_unit
    if args.revenue_unit is not None:
        out["revenue_unit"] = args.revenue_unit
    lending = {"loan_amount": args.loan_amount, "interest_rate": args.interest_rate,
               "revenue_rate": args.revenue_rate, "profit_convention": args.profit_convention}
    given = {k: v for k, v in lending.items() if v is not None}
    if given and kind != "lending":
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        raise InvalidParameterError(f"{flags} appl{'y' if len(given) > 1 else 'ies'} to the lending program; the "
                                    f"program is {kind!r}")
    out.update(given)
    return out
