"""Record-level privacy mechanisms. Importing this package registers every mechanism in ``MECHANISMS``."""

from engine.mechanisms.base import MECHANISMS, RecordMechanism, mechanism_from_dict, register

__all__ = ["MECHANISMS", "RecordMechanism", "mechanism_from_dict", "register"]
