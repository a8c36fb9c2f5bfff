"""Record-level privacy mechanisms. Importing this package registers every mechanism in ``MECHANISMS``.

Registration order is the order every list of mechanisms shows (forms, sweeps, the honest comparison): the
targeted-DP paper's private projection first, then the Gaussian mechanism, the secure-release paper's JL release and
the k-anonymity baseline. A new mechanism is one more module registered here (or anywhere: ``register`` is all).
"""

# isort: off
from engine.mechanisms import private_projection  # noqa: F401  (registers "projection")
from engine.mechanisms import gaussian  # noqa: F401  (registers "gaussian")
from engine.mechanisms import jl_laplace  # noqa: F401  (registers "jl-laplace")
from engine.mechanisms import mondrian  # noqa: F401  (registers "mondrian")

# isort: on
from engine.mechanisms.base import (
    MECHANISMS,
    MechanismTags,
    RecordMechanism,
    budgeted_kinds,
    mechanism_from_dict,
    preselected_kinds,
    register,
    unregister,
)

__all__ = [
    "MECHANISMS",
    "MechanismTags",
    "RecordMechanism",
    "budgeted_kinds",
    "mechanism_from_dict",
    "preselected_kinds",
    "register",
    "unregister",
]
