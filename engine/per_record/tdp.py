"""Former name of :mod:`engine.per_record.tdp_losses` (per-record losses under targeted DP), kept so that existing
imports keep working; import from :mod:`engine.per_record.tdp_losses` (the calculus itself is
:mod:`engine.accounting.tdp`).
"""

from engine.per_record.tdp_losses import (
    SOURCE,
    WORST_CASE_DISTANCE,
    TDPPolicy,
    TDPRecordLosses,
    nearest_neighbour_distances,
    tdp_policy,
    tdp_record_losses,
)

__all__ = [
    "SOURCE",
    "WORST_CASE_DISTANCE",
    "TDPPolicy",
    "TDPRecordLosses",
    "nearest_neighbour_distances",
    "tdp_policy",
    "tdp_record_losses",
]
