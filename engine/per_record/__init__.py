"""Per-record differential privacy: policy functions and slowly scaling mechanisms for sums.

Importing this package registers every sum mechanism in :data:`SUM_MECHANISMS` (KIND → class).

Modules (one concept each): ``units`` (ε ↔ ρ, ρ → (ε, δ)), ``base`` (the SumMechanism interface and registry),
``baseline`` (Gaussian, unit splitting), ``transformation`` (k-th root, log), ``generalized_gaussian``, ``epl``
(exponential polylogarithmic), ``calibration`` (equal accuracy, target loss), ``accuracy`` (error curves,
simulation, frontier), ``cells`` (per-cell releases), ``losses`` (per-record losses and summaries, policy curves,
composition), ``tdp_losses`` (targeted DP as a per-record guarantee; ``tdp`` is its former name).

References
----------
.. [1] Finley, Caruso, Doty, Machanavajjhala, Meyer, Pujol, Sexton, Terner, "Slowly Scaling Per-Record
       Differential Privacy", arXiv:2409.18118 (2024). Digest: ``shared/spec/003-per-record-dp.md``.
"""

from engine.per_record import baseline, epl, generalized_gaussian, transformation  # noqa: F401  (registration)
from engine.per_record.base import SUM_MECHANISMS, SumMechanism, make_sum_mechanism, sum_mechanism_from_dict
from engine.per_record.baseline import GaussianSum, UnitSplitting
from engine.per_record.epl import EPL, EPL1, EPL2
from engine.per_record.generalized_gaussian import GeneralizedGaussian
from engine.per_record.transformation import KthRootTransformation, LogTransformation

__all__ = [
    "EPL",
    "EPL1",
    "EPL2",
    "SUM_MECHANISMS",
    "GaussianSum",
    "GeneralizedGaussian",
    "KthRootTransformation",
    "LogTransformation",
    "SumMechanism",
    "UnitSplitting",
    "make_sum_mechanism",
    "sum_mechanism_from_dict",
]
