"""``python -m engine policy``: per-record losses of given record values under a per-record sum mechanism.

Example (Example 2.16 of the per-record paper)::

    python -m engine policy --mechanism unit-splitting --tau 10 --sigma 7.0710678 --values 5,5,10,20,30,10000

prints JSON with the mechanism, its unit (``rho`` for PRzCDP, ``epsilon`` for PRDP), and for each value its loss
in that unit and in ρ (and, with ``--delta``, the ε of (ε, δ)-DP implied: from ρ for PRzCDP mechanisms; for
PRDP mechanisms never more than the pure ε itself). With ``--target-sd`` (and
``--q-ref``) the noise parameter is first calibrated to that accuracy.

:mod:`engine.per_record` (scipy special functions, quadrature tables) is imported inside :func:`run`, not at
module load: building the CLI parser registers every subcommand, so a top-level import would slow every
``python -m engine …`` command. The mechanism names are therefore listed here (:data:`KINDS`; a test checks that
they match :data:`engine.per_record.SUM_MECHANISMS`).
"""

from __future__ import annotations

import argparse
import dataclasses

from engine.cli._common import parse_float_list, print_json
from engine.errors import InvalidParameterError

#: KIND of every per-record sum mechanism (the keys of ``engine.per_record.SUM_MECHANISMS``), sorted.
KINDS: tuple[str, ...] = ("epl", "epl1", "epl2", "gaussian", "generalized-gaussian", "kth-root", "log",
                          "unit-splitting")

#: CLI option → mechanism field, for every field any sum mechanism has.
_PARAMETERS = {
    "sigma": "noise scale σ (> 0)",
    "tau": "unit-splitting threshold τ (> 0)",
    "k": "root order k (whole number in [1, 12])",
    "a": "offset a (k-th root: ≥ 0; log: > 0; EPL: ≥ e^(p−1))",
    "p": "shape p (generalized Gaussian: (0, 1]; EPL: ≥ 1)",
    "d": "EPL exponent d (> 0; > 1 for p = 1)",
    "scale": "EPL p = 1 scale σ·a (> 0)",
}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "policy",
        help="per-record privacy loss of record values under a per-record sum mechanism",
        description=(
            "Policy functions of per-record DP (Finley et al., 'Slowly Scaling Per-Record Differential "
            "Privacy'): for a sum, a record's per-record sensitivity is its own value, and its loss is the "
            "mechanism's policy at that value. Losses are in ρ (per-record zCDP) or ε (per-record pure DP); the ρ "
            "value is always given too, so mechanisms can be compared."
        ),
        epilog=f"Mechanisms: {', '.join(KINDS)}. Only give the parameters the mechanism has.",
    )
    parser.add_argument("--mechanism", required=True, choices=KINDS, help="mechanism KIND")
    for name, text in _PARAMETERS.items():
        parser.add_argument(f"--{name}", type=int if name == "k" else float, default=None, help=text)
    parser.add_argument("--values", required=True, help="comma-separated record values (≥ 0), e.g. 5,5,10,20,30,10000")
    parser.add_argument("--delta", type=float, default=None,
                        help="also give each loss as the ε of (ε, δ)-DP at this δ (pure ε stays ε)")
    parser.add_argument("--target-sd", type=float, default=None, help="first calibrate the noise to this SD")
    parser.add_argument("--q-ref", type=float, default=0.0, help="planning total for --target-sd (default 0)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine.per_record import SUM_MECHANISMS, make_sum_mechanism
    from engine.per_record.calibration import calibrate_sd
    from engine.per_record.units import CONVERSION_TEXT, UNIT_LABELS, dp_epsilon

    cls = SUM_MECHANISMS[args.mechanism]
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    given = {name: getattr(args, name) for name in _PARAMETERS if getattr(args, name) is not None}
    unknown = sorted(set(given) - fields)
    if unknown:
        raise InvalidParameterError(
            f"--{unknown[0]} is not a parameter of {args.mechanism}; its parameters are "
            + ", ".join(f"--{f}" for f in sorted(fields))
        )
    mechanism = make_sum_mechanism(args.mechanism, **given)
    if args.target_sd is not None:
        mechanism = calibrate_sd(mechanism, args.target_sd, args.q_ref)
    values = parse_float_list("--values", args.values)
    losses = mechanism.policy(values)
    rhos = mechanism.policy_rho(values)
    dp = dp_epsilon(losses, mechanism.UNIT, args.delta) if args.delta is not None else None
    rows = []
    for i, v in enumerate(values):
        row = {"value": v, "loss": float(losses[i]), "unit": mechanism.UNIT, "rho": float(rhos[i])}
        if dp is not None:
            row["dp_epsilon"] = float(dp[i])
        rows.append(row)
    payload: dict[str, object] = {
        "mechanism": mechanism.to_dict(),
        "label": mechanism.LABEL,
        "unit": mechanism.UNIT,
        "unit_label": UNIT_LABELS[mechanism.UNIT],
        "source": mechanism.SOURCES,
        "losses": rows,
    }
    if args.target_sd is not None:
        payload["calibration"] = {"target_sd": args.target_sd, "q_ref": args.q_ref,
                                  mechanism.NOISE_PARAMETER: mechanism.noise}
    if dp is not None:
        text = CONVERSION_TEXT["cks"]
        if mechanism.UNIT == "epsilon":
            text = ("pure per-record ε-DP implies (ε, δ)-DP for every δ: min(ε, " + text + " applied to ρ)")
        payload["dp_conversion"] = {"delta": args.delta, "method": "cks", "text": text}
    print_json(payload)
    return 0
