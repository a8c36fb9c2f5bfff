r"""Built-in demo datasets: synthetic stand-ins for the paper's case studies, and the authors' demo input.

The Togo and Nigeria data of the targeted-DP paper are proprietary (digest ``shared/spec/000-targeted-dp.md``,
"Data availability"). The demos here are SYNTHETIC: generated deterministically by this module from a fixed seed
and a latent model, matched to the paper's Table S1, so that every user of the Studio sees the same numbers.

``togo-demo`` (cash-transfer targeting)
    4,201 subscribers × 10 monthly phone-use features and a consumption target. A latent wealth
    :math:`w \sim N(0, 1)` and a latent "sociability" :math:`a \sim N(0, 1)` drive each feature as a log-normal
    :math:`v_j = m_j \exp(\sigma_j(\lambda_j w + \kappa_j a + \sqrt{1-\lambda_j^2-\kappa_j^2}\,e_j))` (skewed
    like real call-detail records; counts rounded, data use zero for the 1 in 4 without mobile data, more often
    the poor). Latent consumption is :math:`g = \rho w + \sqrt{1-\rho^2}\,e`; the target is a fixed increasing
    function of g whose values are the quantiles of a scaled log-normal matched EXACTLY to Table S1: range
    [0.005, 1], mean 0.073, sd 0.068. Targeted = at or below the 29th percentile.
``nigeria-demo`` (phone-data micro-lending)
    20,788 borrowers × 15 phone and mobile-money features (same construction, latent creditworthiness),
    a binary ``low_risk`` label with exactly 13,159 ones (mean 0.633, sd 0.482 as in Table S1: the top
    13,159 of a noisy credit score), plus ``loan_amount`` (naira) and ``interest`` (naira due on top of the loan)
    for the lending program's profit.
``replication``
    The authors' own demo input (``shared/reference/tdp-replication/replication_input.csv``, itself synthetic:
    their script draws it at random), when that folder is present. Their code divides every row by the largest
    row norm without standardising, so the default spec is ``maxnorm`` with ``standardize=False``.

Measured non-private effectiveness with the default spec (5-fold CV, ``KFold(shuffle=True, random_state=0)``;
checked by ``tests/engine/test_demos.py``): ``togo-demo`` ridge targeting accuracy ≈ 0.77 (29th-percentile rule
on actual and predicted consumption); ``nigeria-demo`` logistic-regression accuracy ≈ 0.76 (majority class 0.633).

Adding a demo is one entry in ``_DEMOS``: a title, a builder returning the frame, spec, program and texts, and
an availability check.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from engine.data.preparation import DataSpec, Normalization, load_table
from engine.errors import InvalidParameterError

Program = Literal["targeting", "lending", "classification", "regression", "sums"]

#: Table S1 of the paper (and the sizes of the two case studies).
TOGO_N, TOGO_D = 4201, 10
TOGO_RANGE, TOGO_MEAN, TOGO_SD, TOGO_PERCENTILE = (0.005, 1.0), 0.073, 0.068, 29
NIGERIA_N, NIGERIA_D = 20788, 15
NIGERIA_POSITIVES = 13159  # round(0.633 × 20,788): label mean 0.63301, sd 0.48198

TOGO_SEED = 20240826
NIGERIA_SEED = 20240827

#: Latent-consumption correlation with wealth (tuned so that non-private targeting accuracy is ≈ 0.77).
TOGO_RHO = 0.85
#: Latent-credit-score correlation with creditworthiness (tuned so that logistic accuracy is ≈ 0.76).
NIGERIA_RHO = 0.85


@dataclass(frozen=True)
class DemoDataset:
    """A built-in dataset with its default spec and the program it illustrates.

    Attributes
    ----------
    name : str
        Registry name (``togo-demo``, ``nigeria-demo``, ``replication``, …).
    title, description : str
        Shown in the dashboard; the title says "synthetic" for generated data.
    frame : pandas.DataFrame
        A fresh copy for each :func:`load_demo` call (mutating it does not affect later calls).
    spec : DataSpec
        Default features, target, program roles and normalisation.
    program : str
        ``"targeting"``, ``"lending"`` or ``"sums"`` (per-record sums).
    synthetic : bool
    notes : tuple of str
        Provenance and caveats, one sentence each.
    """

    name: str
    title: str
    description: str
    frame: pd.DataFrame
    spec: DataSpec
    program: Program
    synthetic: bool
    notes: tuple[str, ...] = field(default=())


# ----------------------------------------------------------------------------------------------------------------
# Where the shared reference folder is
# ----------------------------------------------------------------------------------------------------------------


def shared_dir() -> Path:
    """The shared reference folder: ``$STUDIO_SHARED`` if set, else ``<repo>/../shared`` (may not exist)."""
    override = os.environ.get("STUDIO_SHARED")
    if override:
        return Path(override)
    return (Path(__file__).resolve().parents[2] / ".." / "shared").resolve()


def replication_path() -> Path:
    """Path of the authors' demo input inside :func:`shared_dir`."""
    return shared_dir() / "reference" / "tdp-replication" / "replication_input.csv"


# ----------------------------------------------------------------------------------------------------------------
# Generators
# ----------------------------------------------------------------------------------------------------------------


def _latent_lognormal(
    rng: np.random.Generator, w: np.ndarray, a: np.ndarray, median: float, sigma: float, lw: float, la: float
) -> np.ndarray:
    """Log-normal feature driven by wealth ``w`` (loading lw) and activity ``a`` (loading la)."""
    u = lw * w + la * a + math.sqrt(1.0 - lw**2 - la**2) * rng.standard_normal(w.shape[0])
    return median * np.exp(sigma * u)


def _share(rng: np.random.Generator, w: np.ndarray, base: float, lw: float, noise: float) -> np.ndarray:
    """A share in (0, 1): logistic of a wealth-driven score."""
    return special.expit(base + lw * w + noise * rng.standard_normal(w.shape[0]))


@functools.lru_cache(maxsize=4)
def table_s1_consumption_quantiles(n: int = TOGO_N) -> np.ndarray:
    r"""Sorted consumption values with exactly Table S1's range, mean and sd, for ``n`` records.

    :math:`t_i = 0.005 + 0.995\,u_i^p`, :math:`u_i = (c_i - c_1)/(c_n - c_1)`, :math:`c_i = \exp(s\,\Phi^{-1}((i -
    1/2)/n))` — a scaled log-normal shape; (s, p) solve mean = 0.073 and sd (population) = 0.068. The demo
    assigns these values to records in the order of their latent consumption. Read-only.

    >>> t = table_s1_consumption_quantiles()
    >>> round(float(t.min()), 6), round(float(t.max()), 6), round(float(t.mean()), 6), round(float(t.std()), 6)
    (0.005, 1.0, 0.073, 0.068)
    """
    q = stats.norm.ppf((np.arange(n) + 0.5) / n)
    low, high = TOGO_RANGE

    def values(params: np.ndarray) -> np.ndarray:
        s, p = params
        c = np.exp(s * q)
        u = (c - c[0]) / (c[-1] - c[0])
        return low + (high - low) * u**p

    def residual(params: np.ndarray) -> list[float]:
        t = values(params)
        return [t.mean() - TOGO_MEAN, t.std() - TOGO_SD]

    sol = optimize.least_squares(
        residual, [0.7, 1.1], bounds=([0.05, 0.05], [5.0, 5.0]), xtol=1e-15, ftol=1e-15, gtol=1e-15
    )
    out = values(sol.x)
    out.setflags(write=False)
    return out


#: (name, median, log-sd, wealth loading, activity loading, rounding) of the Togo demo's features.
_TOGO_FEATURES: tuple[tuple[str, float, float, float, float, int], ...] = (
    ("calls_out", 60, 0.8, 0.55, 0.60, 0),
    ("calls_in", 70, 0.7, 0.40, 0.65, 0),
    ("call_minutes_out", 90, 0.9, 0.60, 0.50, 1),
    ("sms_out", 15, 1.0, 0.35, 0.55, 0),
    ("sms_in", 20, 0.9, 0.30, 0.55, 0),
    ("data_mb", 150, 1.4, 0.70, 0.20, 1),
    ("recharge_amount", 2500, 0.9, 0.75, 0.30, -1),
    ("recharge_count", 6, 0.6, 0.45, 0.35, 0),
    ("unique_contacts", 25, 0.6, 0.45, 0.55, 0),
)


@functools.lru_cache(maxsize=1)
def _togo_frame() -> pd.DataFrame:
    rng = np.random.default_rng(TOGO_SEED)
    n = TOGO_N
    wealth = rng.standard_normal(n)
    activity = rng.standard_normal(n)
    cols: dict[str, np.ndarray] = {}
    for name, median, sigma, lw, la, digits in _TOGO_FEATURES:
        values = _latent_lognormal(rng, wealth, activity, median, sigma, lw, la)
        values = np.round(values, digits)
        if digits == 0:
            values = np.maximum(values, 0.0)
        cols[name] = values
    no_data = rng.random(n) < special.expit(-1.4 - 0.9 * wealth)  # ~1 in 4 has no mobile data, more often the poor
    cols["data_mb"] = np.where(no_data, 0.0, cols["data_mb"])
    cols["recharge_amount"] = np.maximum(cols["recharge_amount"], 100.0)  # smallest top-up card: 100 CFA francs
    cols["recharge_count"] = np.maximum(cols["recharge_count"], 1.0)
    cols["unique_contacts"] = np.maximum(cols["unique_contacts"], 1.0)
    cols["active_days"] = np.round(30 * _share(rng, wealth, 2.0, 0.35, 0.6) + 0.0)
    latent = TOGO_RHO * wealth + math.sqrt(1.0 - TOGO_RHO**2) * rng.standard_normal(n)
    consumption = np.empty(n)
    consumption[np.argsort(latent, kind="stable")] = table_s1_consumption_quantiles(n)
    cols["consumption"] = consumption
    return pd.DataFrame(cols)


#: (name, median, log-sd, creditworthiness loading, activity loading, rounding) of the Nigeria demo's features.
_NIGERIA_FEATURES: tuple[tuple[str, float, float, float, float, int], ...] = (
    ("airtime_topup_ngn", 1500, 0.9, 0.55, 0.30, 0),
    ("topup_count", 8, 0.6, 0.35, 0.35, 0),
    ("calls_out", 80, 0.8, 0.30, 0.60, 0),
    ("calls_in", 90, 0.7, 0.25, 0.60, 0),
    ("call_minutes", 120, 0.9, 0.35, 0.50, 1),
    ("sms_out", 10, 1.1, 0.15, 0.50, 0),
    ("data_mb", 400, 1.3, 0.50, 0.30, 1),
    ("unique_contacts", 40, 0.6, 0.30, 0.60, 0),
    ("mm_inflow_ngn", 20000, 1.2, 0.60, 0.20, -1),
    ("mm_outflow_ngn", 18000, 1.2, 0.55, 0.25, -1),
    ("mm_tx_count", 12, 0.8, 0.45, 0.30, 0),
    ("account_age_months", 30, 0.8, 0.40, 0.00, 0),
    ("avg_balance_ngn", 300, 1.1, 0.50, 0.10, 0),
)


@functools.lru_cache(maxsize=1)
def _nigeria_frame() -> pd.DataFrame:
    rng = np.random.default_rng(NIGERIA_SEED)
    n = NIGERIA_N
    credit = rng.standard_normal(n)
    activity = rng.standard_normal(n)
    cols: dict[str, np.ndarray] = {}
    for name, median, sigma, lw, la, digits in _NIGERIA_FEATURES:
        values = _latent_lognormal(rng, credit, activity, median, sigma, lw, la)
        cols[name] = np.maximum(np.round(values, digits), 0.0)
    cols["account_age_months"] = np.clip(cols["account_age_months"], 1.0, 240.0)
    cols["active_days"] = np.round(30 * _share(rng, credit, 1.8, 0.4, 0.7))
    cols["night_activity_share"] = np.round(_share(rng, credit, -1.5, -0.35, 0.5), 3)
    score = NIGERIA_RHO * credit + math.sqrt(1.0 - NIGERIA_RHO**2) * rng.standard_normal(n)
    low_risk = np.zeros(n)
    low_risk[np.argsort(-score, kind="stable")[:NIGERIA_POSITIVES]] = 1.0
    cols["low_risk"] = low_risk
    loan = 10000 * np.exp(0.6 * (0.3 * credit + math.sqrt(1 - 0.09) * rng.standard_normal(n)))
    cols["loan_amount"] = np.clip(np.round(loan / 500) * 500, 1000.0, 200000.0)
    rate = np.clip(0.15 - 0.03 * credit + 0.02 * rng.standard_normal(n), 0.05, 0.30)
    cols["interest"] = np.round(cols["loan_amount"] * rate)
    return pd.DataFrame(cols)


@functools.lru_cache(maxsize=4)
def _replication_frame(path: str, mtime_ns: int) -> pd.DataFrame:
    return load_table(path)


# ----------------------------------------------------------------------------------------------------------------
# Registry
# ----------------------------------------------------------------------------------------------------------------


def _togo() -> DemoDataset:
    frame = _togo_frame()
    features = tuple(c for c in frame.columns if c != "consumption")
    return DemoDataset(
        name="togo-demo",
        title="Togo cash transfers (synthetic)",
        description=(
            "SYNTHETIC stand-in for the Novissi targeting study: 4,201 subscribers, 10 monthly phone-use "
            "features and daily consumption scaled to [0.005, 1] (mean 0.073, sd 0.068, as the paper's "
            "Table S1). A household is eligible if its consumption is at or below the 29th percentile."
        ),
        frame=frame.copy(),
        spec=DataSpec(features=features, target="consumption"),
        program="targeting",
        synthetic=True,
        notes=(
            "Generated by engine/data/demos.py from a latent-wealth model with a fixed seed; no real person's "
            "data.",
            "Features are skewed like call-detail records (log-normal counts, amounts in CFA francs, "
            "zero data use for about 1 in 4).",
            "Consumption values are matched exactly to Table S1 (range, mean, sd); non-private ridge targeting "
            "reaches about 0.77 accuracy with the default preparation.",
        ),
    )


def _nigeria() -> DemoDataset:
    frame = _nigeria_frame()
    extra = {"low_risk", "loan_amount", "interest"}
    features = tuple(c for c in frame.columns if c not in extra)
    return DemoDataset(
        name="nigeria-demo",
        title="Nigeria micro-loans (synthetic)",
        description=(
            "SYNTHETIC stand-in for the phone-data lending study: 20,788 borrowers, 15 phone and mobile-money "
            "features, a low-risk label (mean 0.633, sd 0.482, as the paper's Table S1), loan amounts and the "
            "interest due, in naira."
        ),
        frame=frame.copy(),
        spec=DataSpec(
            features=features,
            target="low_risk",
            roles={"loan_amount": "loan_amount", "interest": "interest"},
        ),
        program="lending",
        synthetic=True,
        notes=(
            "Generated by engine/data/demos.py from a latent-creditworthiness model with a fixed seed; no real "
            "person's data.",
            "low_risk = 1 for exactly 13,159 of 20,788 borrowers (the highest noisy credit scores).",
            "loan_amount: 1,000–200,000 naira in steps of 500; interest: naira due on top of the loan "
            "(5–30% of it, higher for riskier borrowers).",
            "Non-private logistic regression reaches about 0.76 accuracy with the default preparation "
            "(0.633 by always approving).",
        ),
    )


def _replication() -> DemoDataset:
    path = replication_path()
    frame = _replication_frame(str(path), path.stat().st_mtime_ns)
    features = tuple(c for c in frame.columns if c != "targeting_variable")
    return DemoDataset(
        name="replication",
        title="Authors' demo input (synthetic)",
        description=(
            "The demo input shipped with the targeted-DP authors' replication code (4,201 rows, features "
            "'0'–'9', target 'targeting_variable' in [0, 1]). Their script draws it at random; it is not the "
            "Togo data."
        ),
        frame=frame.copy(),
        spec=DataSpec(
            features=features,
            target="targeting_variable",
            normalization=Normalization(method="maxnorm", standardize=False),
        ),
        program="targeting",
        synthetic=True,
        notes=(
            f"Read from {path}.",
            "Default preparation as in the authors' code: every row divided by the largest row norm, no "
            "standardisation (their non-private targeting accuracy: 0.90954).",
            "Source: github.com/nitinkohli/targeted_differential_privacy_replication (Apache-2.0).",
        ),
    )


def _establishments() -> DemoDataset:
    module = importlib.import_module("engine.data.establishments")
    return module.establishments_demo()


def _always() -> bool:
    return True


def _module_has(module: str, attribute: str) -> Callable[[], bool]:
    def check() -> bool:
        if importlib.util.find_spec(module) is None:
            return False
        return hasattr(importlib.import_module(module), attribute)

    return check


@dataclass(frozen=True)
class _Entry:
    build: Callable[[], DemoDataset]
    available: Callable[[], bool] = _always
    unavailable_hint: str = ""


_DEMOS: dict[str, _Entry] = {
    "togo-demo": _Entry(_togo),
    "nigeria-demo": _Entry(_nigeria),
    "replication": _Entry(
        _replication,
        lambda: replication_path().is_file(),
        "it reads the authors' demo input from shared/reference/tdp-replication/ — set STUDIO_SHARED to the "
        "folder that holds reference/",
    ),
    "establishments-demo": _Entry(
        _establishments,
        _module_has("engine.data.establishments", "establishments_demo"),
        "its generator (engine/data/establishments.py) is not installed",
    ),
}


def demo_names() -> list[str]:
    """Names of the demo datasets available here (``replication`` only when the shared folder is present)."""
    return [name for name, entry in _DEMOS.items() if entry.available()]


def load_demo(name: str) -> DemoDataset:
    """A built-in dataset by name, with a fresh copy of its frame.

    >>> demo = load_demo("togo-demo")
    >>> demo.frame.shape, demo.program, demo.synthetic
    ((4201, 11), 'targeting', True)
    """
    if not isinstance(name, str) or name not in _DEMOS:
        raise InvalidParameterError(
            f"unknown demo dataset {name!r}; available: {', '.join(demo_names())}"
        )
    entry = _DEMOS[name]
    if not entry.available():
        raise InvalidParameterError(
            f"the demo dataset {name!r} is not available here: {entry.unavailable_hint}; available: "
            f"{', '.join(demo_names())}"
        )
    return entry.build()


__all__ = [
    "DemoDataset",
    "demo_names",
    "load_demo",
    "replication_path",
    "shared_dir",
    "table_s1_consumption_quantiles",
]
