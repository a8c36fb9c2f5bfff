"""Public information: partially private data, ε-TP guarantees and count-table releases with invariants.

Implements Seeman, Reimherr & Slavković, "Formal Privacy for Partially Private Data" (digest
``shared/spec/001-partially-private-data.md``): one module per concept.

* :mod:`~engine.public_info.guarantee` — :class:`TPGuarantee` (ε-TP subject to Z);
* composition — Lemmas 6–8 with the G5/G6 caveats, per-period vs whole-study ε: in the one composition module,
  :mod:`engine.accounting.composition` (``sequential_composition``, ``parallel_composition``,
  ``study_budget``), generic over the guarantee's standard;
* :mod:`~engine.public_info.sensitivity` — Δ_z calculators (Examples 1–2, Figure 4) and exact W∞;
* :mod:`~engine.public_info.discrete_laplace`, :mod:`~engine.public_info.knorm` — noise;
* :mod:`~engine.public_info.projection` — the post-processing baseline's two-stage projection;
* :mod:`~engine.public_info.wasserstein` — the exact L1 Wasserstein exponential mechanism (naive / congenial /
  prior-congenial bases);
* :mod:`~engine.public_info.l2_mcmc` — the paper's L2-loss variant by Metropolis MCMC (labelled approximate ε-TP);
* :mod:`~engine.public_info.conditioning` — Lemma 8 (cost 2ε);
* :mod:`~engine.public_info.semantics` — Lemma 4's band, the realised-ε audit, Corollary 13;
* :mod:`~engine.public_info.inference` — Algorithms 1–2, Bayes risk, test power;
* :mod:`~engine.public_info.count_table`, :mod:`~engine.public_info.count_release` — data and the case-study release;
* :mod:`~engine.public_info.results` — the study builder behind the dashboard page (Figures 1–3).
"""

from engine.public_info.count_release import CountRelease, CountReleaseConfig, release_counts
from engine.public_info.count_table import CountTable, count_table_from_frame, counties_demo, load_count_table
from engine.public_info.guarantee import PUBLIC_STATISTICS, IncompatibleGuaranteeError, TPGuarantee
from engine.public_info.results import CountStudyConfig, CountStudyResults, build_count_study
from engine.public_info.sensitivity import (
    binary_sdl_sensitivity,
    correlated_counts_sensitivity,
    gaussian_sensitivity,
    w_infinity,
)

__all__ = [
    "PUBLIC_STATISTICS",
    "CountRelease",
    "CountReleaseConfig",
    "CountStudyConfig",
    "CountStudyResults",
    "CountTable",
    "IncompatibleGuaranteeError",
    "TPGuarantee",
    "binary_sdl_sensitivity",
    "build_count_study",
    "correlated_counts_sensitivity",
    "count_table_from_frame",
    "counties_demo",
    "gaussian_sensitivity",
    "load_count_table",
    "release_counts",
    "w_infinity",
]
