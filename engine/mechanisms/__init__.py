"""Record-level privacy mechanisms. Importing this package registers every mechanism in ``MECHANISMS``."""

from engine.mechanisms import (
    gaussian,  # noqa: F401,E402  (registers "gaussian")
    jl_laplace,  # noqa: F401,E402  (registers "jl-laplace")
    mondrian,  # noqa: F401,E402  (registers "mondrian")
    private_projection,  # noqa: F401,E402  (registers "projection")
)
from engine.mechanisms.base import MECHANISMS, RecordMechanism, mechanism_from_dict, register

__all__ = ["MECHANISMS", "RecordMechanism", "mechanism_from_dict", "register"]
