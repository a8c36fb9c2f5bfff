r"""Tradeoff sweeps: program effectiveness against protection over a grid of privacy parameters.

A sweep answers "what does each (B, ε, δ) cost my program, and what does it buy against real attacks?" on the
user's own data — the paper's Figures 2 and 3 for any dataset. For every cell of the grid

    mechanism × B values × budgets (ε1, δ1, ε2, δ2) × repetitions

it privatizes the released rows with a fresh random stream, scores the program on the release
(:func:`engine.evaluation.programs.evaluate_program`), runs the attacks (singling out, attribute inference with
the holdout as control, distinguishing) and records one tidy row. Two reference points come with every sweep
(``references=True``): the **non-private** release (the data itself; distinguishing protection 0) and
**classic DP** (B = 2 with the same budgets; the B = 2 grid points when B = 2 is in the grid).

Design
------
* Holdout. One holdout of ``holdout`` rows (default :func:`~engine.attacks.attribute_inference.
  default_holdout_size`) is drawn per sweep from the analysis configuration's holdout seed, BEFORE privatizing; every cell privatizes the
  same released rows, so the non-private program baseline, the non-private singling-out baseline and the CV folds
  are computed once, and repetitions vary the mechanism's noise and the attack's random choices only.
* Seeds. The holdout is drawn from the analysis configuration's ``holdout_seed`` (the same rows for every sweep
  of the same data, so the non-private reference is one number on every page). ``engine.rng.spawn_seeds(seed,
  1 + cells)``: child 0 is left unused (it drew the holdout before), child i + 1 drives cell i
  (grid points in order — non-private, then each budget × B, then extra classic-DP points — repetitions inner).
  Rows are returned in cell order, so the same seed gives the same table whatever the number of workers.
* Parallelism. ``workers > 1`` runs cells in a ``ProcessPoolExecutor`` (``fork`` from a single-threaded caller such
  as the CLI, ``forkserver`` under the threaded dashboard, where forking is unsafe). The pool is started by the
  first pooled sweep of the session and reused by the next ones (shut down at exit): no process start-up, imports
  or compilation per sweep. The data go to each worker once per sweep (with its first task, or when the worker
  asks for them), never per task. Every process limits BLAS to one thread, so inline and pooled runs compute
  bit-identical numbers.
* Gaussian. ``mechanism="gaussian"`` runs the Gaussian mechanism at the same TOTAL budget (ε1 + ε2, δ1 + δ2) and
  the same B, so the Studio can show honestly where the simpler mechanism gives more for the same guarantee.
* Cache. Finished sweeps are kept in an in-process LRU keyed by (data fingerprint, configuration JSON — which
  includes the seed).

Interval convention: :meth:`SweepResult.summary` reports, per grid point, the mean, the sample sd (ddof = 1)
and by default a 95 % confidence interval for the MEAN, mean ± t₀.₉₇₅,r−1 · sd/√r over the r repetitions
(``interval="runs"`` gives the 2.5–97.5 % range of single runs instead: what one release may give).

Modules
-------
* :mod:`engine.sweeps.grid` — :class:`Budget`, :class:`SweepConfig`, :class:`GridPoint`, :func:`paper_budgets`,
  :func:`preset`, :func:`released_rows` and the table's constants.
* :mod:`engine.sweeps.results` — :class:`SweepResult` (table, summary, Pareto frontier) and :func:`pareto_mask`.
* :mod:`engine.sweeps.runner` — :func:`run_sweep`, the process pool, the cache, :func:`analyse_reference` and
  :func:`estimate_seconds`.

References
----------
.. [1] Kohli & Blumenstock, "Enabling Humanitarian Applications with Targeted Differential Privacy",
       arXiv:2408.13424, Methods (case studies, privacy attacks), Figures 2–3. Digest:
       ``shared/spec/000-targeted-dp.md``.
"""

from __future__ import annotations

# Re-exports: the names of the former single module ``engine/sweeps.py`` (``X as X`` keeps the ones outside
# ``__all__`` importable).
from engine.sweeps.grid import AI_CELL_PREFIX as AI_CELL_PREFIX
from engine.sweeps.grid import (
    ATTACKS,
    PAPER_B_VALUES,
    PROTECTION_COLUMNS,
    Budget,
    SweepConfig,
    paper_budgets,
    preset,
    released_rows,
    sweep_mechanisms,
)
from engine.sweeps.grid import DESCRIPTOR_COLUMNS as DESCRIPTOR_COLUMNS
from engine.sweeps.grid import MAX_CELLS as MAX_CELLS
from engine.sweeps.grid import REFERENCES as REFERENCES
from engine.sweeps.grid import AttackName as AttackName
from engine.sweeps.grid import GridPoint as GridPoint
from engine.sweeps.results import SweepResult, TrivialRule, combined_summary, pareto_mask
from engine.sweeps.runner import _CACHE as _CACHE
from engine.sweeps.runner import _WORKER_MODULES as _WORKER_MODULES
from engine.sweeps.runner import CACHE_SIZE as CACHE_SIZE
from engine.sweeps.runner import (
    analyse_reference,
    clear_cache,
    default_workers,
    estimate_seconds,
    plan_sweeps,
    run_sweep,
)

__all__ = [
    "ATTACKS",
    "PAPER_B_VALUES",
    "PROTECTION_COLUMNS",
    "Budget",
    "SweepConfig",
    "SweepResult",
    "TrivialRule",
    "analyse_reference",
    "clear_cache",
    "combined_summary",
    "default_workers",
    "estimate_seconds",
    "paper_budgets",
    "pareto_mask",
    "plan_sweeps",
    "preset",
    "released_rows",
    "run_sweep",
    "sweep_mechanisms",
]
