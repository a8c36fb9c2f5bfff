"""Sections of the Studio's pages: each module draws one part of a page from engine results and makes no number.

A page reads its widgets, builds the engine's configuration, makes one (cached) engine call and calls these.
"""

__all__ = [
    "data_preview",
    "data_upload",
    "feasibility_example",
    "mechanisms_form",
    "mechanisms_results",
    "per_record_cells",
    "per_record_policy",
    "per_record_tdp",
    "public_info_calculators",
    "public_info_dependence",
    "tradeoffs_form",
    "tradeoffs_results",
    "tradeoffs_run",
    "workshop_pin",
    "workshop_view",
]
