"""Record-level privacy mechanisms. Importing this package registers every mechanism in ``MECHANISMS``."""

from engine.mechanisms.base import MECHANISMS, RecordMechanism, mechanism_from_dict, register
from engine.mechanisms import jl_laplace  # noqa: F401,E402  (registers "jl-laplace")
from engine.mechanisms import private_projection  # noqa: F401,E402  (registers "projection")
from engine.mechanisms import mondrian  # noqa: F401,E402  (registers "mondrian")
from engine.mechanisms import gaussian  # noqa: F401,E402  (registers "gaussian")

__all__ = ["MECHANISMS", "RecordMechanism", "mechanism_from_dict", "register"]
