"""The Public information page's Δ_z calculators for the paper's Examples 1 and 2 (digest §5.1, §5.2): the user
picks one and its inputs and sees Δ_z, with the paper's error stated where the corrected formula differs (G3)."""

from __future__ import annotations

import json
import math

import streamlit as st

from engine.public_info.sensitivity import GAUSSIAN_Z_CONSTRUCTIONS
from ui import cached
from ui.common import Labels, user_errors
from ui.figures.theme import fmt

CALCULATORS = {
    "gaussian": "Gaussian mean with a correlated public Z (Example 1)",
    "binary": "Binary counts with public SDL properties: k-anonymity, t-closeness (Example 2, Eq. 35)",
}


def draw_calculators() -> None:
    """An expander: the calculator's inputs, then Δ_z from the engine."""
    with st.expander("Δ_z calculators of the paper's Examples 1 and 2", icon=":material/calculate:"):
        which = st.radio("Calculator", list(CALCULATORS), format_func=CALCULATORS.get, key="public_info.calc")
        if which == "gaussian":
            _gaussian()
        else:
            _binary()


def _gaussian() -> None:
    c1, c2, c3, c4 = st.columns(4)
    construction = c1.selectbox("How Z is built", list(GAUSSIAN_Z_CONSTRUCTIONS), key="public_info.calc_z",
                                format_func=Labels(GAUSSIAN_Z_CONSTRUCTIONS))
    n = int(c2.number_input("n records", 2, 100_000, 100, key="public_info.calc_n"))
    delta = float(c3.number_input("Δ (records in [−Δ/2, Δ/2])", 0.001, 1e6, 1.0, key="public_info.calc_delta"))
    tau2 = float(c4.number_input("τ² (noise in Z)", 1e-8, 1e8, 0.04, format="%g", key="public_info.calc_tau2"))
    sigma_min = float(c1.number_input("σ min", 0.0, 1e6, 0.0, key="public_info.calc_smin"))
    bounded = c2.toggle("σ bounded above", True, key="public_info.calc_bounded")
    sigma_max = float(c3.number_input("σ max", 0.0, 1e6, 2.0, key="public_info.calc_smax", disabled=not bounded))
    offset = float(c4.number_input("observed z − μ_Z", -1e6, 1e6, 1.0, key="public_info.calc_offset"))
    inputs = {"delta": delta, "n": n, "construction": construction, "tau2": tau2, "sigma_min": sigma_min,
              "sigma_max": sigma_max if bounded else math.inf, "z_offset": offset}
    with user_errors():
        r = cached.gaussian_sensitivity_calculator(json.dumps(inputs))
        st.metric("Δ_z = Δ · sup |β₁|", fmt(r.delta_z, 6))
        where = "" if r.sigma_at is None else f" at σ = {fmt(r.sigma_at, 6)}, where the supremum is attained"
        st.caption(f"β₁ = {fmt(r.beta1, 6)}{where}; DP's value is Δ/n = {fmt(delta / n, 6)}.")
        if r.paper_differs:
            st.warning(
                f"The paper's Eq. 16 gives {fmt(r.paper_eq16, 6)}; the correct value is {fmt(r.delta_z, 6)}. Eq. 16 "
                f"adds β_Z·(z − μ_Z) = {fmt(r.beta_z * r.z_offset, 6)}, a term that cancels between the two "
                "secret-conditional means (digest G3): Δ_z does not depend on the observed z.",
                icon=":material/report:")
        else:
            st.caption("Here the paper's Eq. 16 gives the same value (its extra term β_Z·(z − μ_Z) is 0).")


def _binary() -> None:
    c1, c2, c3, c4 = st.columns(4)
    n = int(c1.number_input("n records", 2, 1000, 20, key="public_info.calc_bn"))
    use_k = c2.toggle("k-anonymity public", True, key="public_info.calc_usek")
    k = int(c2.number_input("k (S ∈ {k..n−k})", 0, n // 2, min(3, n // 2), key="public_info.calc_k",
                            disabled=not use_k))
    use_t = c3.toggle("t-closeness public", False, key="public_info.calc_uset")
    t_star = float(c3.number_input("t*", 0.0, 1.0, 0.5, key="public_info.calc_tstar", disabled=not use_t))
    t = float(c4.number_input("t (|S/n − t*| ≤ t)", 0.0, 1.0, 0.3, key="public_info.calc_t", disabled=not use_t))
    inputs: dict = {"n": n, **({"k": k} if use_k else {}), **({"t_star": t_star, "t": t} if use_t else {})}
    with user_errors():
        value = cached.binary_sensitivity_calculator(json.dumps(inputs))
        st.metric("Δ_z (Eq. 35)", value)
        st.caption("Records iid Bernoulli(p), p ∈ {0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99}; W∞ computed "
                   "exactly by the log-space stochastic-dominance test (digest G4b), never with float quantiles, "
                   "which lose tail mass below ~1e-16. Public SDL properties restrict which secret pairs are "
                   "protected (both secrets must stay possible), not the sensitivity.")
