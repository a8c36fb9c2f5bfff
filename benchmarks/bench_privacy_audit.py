"""The empirical privacy audit of every mechanism family, with more samples than the tests; writes
``docs/privacy-audit.md``.

The same audit functions as ``tests/engine/test_privacy_audit.py`` (``engine.audit.families``), on the same
worst-case inputs, with larger sizes: each statistical audit's bound is tighter and each exact count-release audit
resolves outputs further into the tails. A second table runs the tests' mutation audits at the tests' own sizes over
several seeds: the spread of the bounds is what the tests' docstrings rely on when they say why their sizes suffice.

Run ``python benchmarks/bench_privacy_audit.py`` (about 3–4 CPU minutes) or ``bash scripts/studio.sh bench
privacy_audit``. Times are CPU seconds of this process (the 2-core machine is shared; its load average is written
into the document).
"""

from __future__ import annotations

import datetime
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.audit.families import (  # noqa: E402
    CONFIDENCE,
    AuditRecord,
    count_release_audit,
    gaussian_audit,
    jl_laplace_audit,
    opendp_gaussian_audit,
    per_record_audit,
    per_record_claim,
    projection_audit,
    tdp_policy_audit,
)
from engine.audit.mutants import scaled_noise, with_sensitivity  # noqa: E402
from engine.audit.neighbours import coupled_count_tables  # noqa: E402
from engine.mechanisms.gaussian import GaussianMechanism  # noqa: E402
from engine.mechanisms.jl_laplace import JLLaplace  # noqa: E402
from engine.mechanisms.private_projection import PrivateProjection  # noqa: E402
from engine.per_record import SUM_MECHANISMS  # noqa: E402
from engine.public_info.count_release import CountReleaseConfig  # noqa: E402

DOC = ROOT / "docs" / "privacy-audit.md"
PROJECTION = dict(b=1.0, epsilon1=2.0, delta1=1e-2, epsilon2=0.01, delta2=1e-12, k=50)


def derived_delta_z(public, has_subcount: bool) -> float:
    """Δ_z for independent people derived from the declared public statistics (issue 30 §1): the engine's
    derivation, as the releases use it."""
    from engine.public_info.dependence import DependenceModel, derive_sensitivity

    return derive_sensitivity(tuple(public), DependenceModel(), subcounts=has_subcount).value


def _statistical() -> list[AuditRecord]:
    out: list[AuditRecord] = []
    for calibration, eps, dlt in (("analytic", 1.0, 1e-5), ("classical", 0.9, 1e-3)):
        mech = GaussianMechanism(b=0.5, epsilon=eps, delta=dlt, calibration=calibration)
        out.append(gaussian_audit(mech, 4_000_000, rng=np.random.default_rng(101))[1])
        out.append(gaussian_audit(scaled_noise(mech, 0.5), 4_000_000, rng=np.random.default_rng(102),
                                  mutation="half σ")[1])
    mech = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    out.append(tdp_policy_audit(mech, 2.0, 2_000_000, rng=np.random.default_rng(103))[1])
    out.append(tdp_policy_audit(scaled_noise(mech, 0.5), 2.0, 2_000_000, rng=np.random.default_rng(104),
                                mutation="half σ")[1])
    odp = GaussianMechanism(b=0.5, epsilon=1.0, delta=0.1)
    out.append(opendp_gaussian_audit(odp, 10_000)[1])
    out.append(opendp_gaussian_audit(scaled_noise(odp, 0.5), 10_000, mutation="half σ")[1])
    proj = PrivateProjection(**PROJECTION)
    out.append(projection_audit(proj, 10_000, rng=np.random.default_rng(105))[1])
    out.append(projection_audit(scaled_noise(proj, 0.25), 10_000, rng=np.random.default_rng(106),
                                mutation="σ1 / 4")[1])
    out.append(projection_audit(PrivateProjection(**PROJECTION, output_scale="paper"), 10_000,
                                rng=np.random.default_rng(107))[1])
    rank = PrivateProjection(**{**PROJECTION, "rank": 1, "epsilon2": 0.5, "delta2": 1e-3})
    out.append(projection_audit(rank, 10_000, rng=np.random.default_rng(108), d=2)[1])
    for relation, n, kwargs in (("element", 50_000, {}), ("row", 20_000, {"known": 100, "per_release": 100})):
        jl = JLLaplace(k=1, epsilon=1.0, d=1, relation=relation)
        out.append(jl_laplace_audit(jl, n, rng=np.random.default_rng(109), **kwargs)[1])
        out.append(jl_laplace_audit(scaled_noise(jl, 0.25), n, rng=np.random.default_rng(110),
                                    mutation="Laplace scale / 4", **kwargs)[1])
    for kind in sorted(SUM_MECHANISMS):
        sm = SUM_MECHANISMS[kind]()
        x = float(sm.max_protected_value(0.5)) if sm.UNIT == "rho" else float(sm.policy_inverse(1.0))
        claim = per_record_claim(sm, x, 0.01)
        n = 300_000 if kind == "epl" else 1_000_000
        out.append(per_record_audit(sm, x, n, rng=np.random.default_rng(111), claim=claim)[1])
        out.append(per_record_audit(sm.with_noise(sm.noise / 2), x, n, rng=np.random.default_rng(112), claim=claim,
                                    mutation="half the noise")[1])
    return out


def _count_cases():
    for method, base in (("postprocess", "congenial"), ("wasserstein", "naive"), ("wasserstein", "congenial"),
                         ("wasserstein", "prior")):
        for public in ((), ("subcount",), ("total",), ("total", "subcount"), ("last-period", "total"),
                       ("last-period", "total", "subcount")):
            for has in (False, True):
                if ("subcount" in public and not has) or (method == "wasserstein" and base != "naive"
                                                          and "total" not in public) \
                        or (base == "prior" and "last-period" not in public):
                    continue
                yield method, base, public, has


def _counts() -> list[AuditRecord]:
    out: list[AuditRecord] = []
    for method, base, public, has in _count_cases():
        tables = coupled_count_tables(public, has, previous=(3, 8))
        three_d = method == "postprocess" and "total" in public and "subcount" in public and has
        tail = 1e-8 if three_d else 1e-12
        dz = derived_delta_z(public, has)
        config = CountReleaseConfig(method=method, base=base, epsilon=1.0, public=public, sensitivity=dz)
        out.append(count_release_audit(tables, config, tail=tail)[1])
        if "total" in public:
            ignored = dz / 2 if base != "naive" else dz / 4
            what = "total ignored" if base != "naive" else "total ignored and factor 2 dropped"
            bad = with_sensitivity(config, ignored)  # a Δ_z the engine refuses once issue 30 §1 is fixed
            out.append(count_release_audit(tables, bad, tail=tail, mutation=what)[1])
    # Issue 30's post-processing oracle: two regions with 50 cases each, the default public set.
    public = ("last-period", "total", "subcount")
    big = coupled_count_tables(public, True, counts=(50, 50))
    derived = CountReleaseConfig(method="postprocess", epsilon=1.0, public=public, sensitivity=4.0)
    for dz, tail, floor, what in ((2.0, 1e-12, 1e-10, "the issue's Δ_z = 2 (total ignored)"),
                                  (4.0, 1e-8, 1e-6, "")):
        config = with_sensitivity(derived, dz)
        out.append(count_release_audit(big, config, tail=tail, floor=floor, mutation=what)[1])
    return out


def _spread() -> list[dict]:
    """The tests' mutation audits at the tests' sizes, over several seeds (what their docstrings rely on)."""
    rows = []

    clock = [time.process_time()]

    def one(name, claim, runs, test_size):
        good, bad = zip(*runs, strict=True)
        now = time.process_time()
        rows.append({"name": name, "claim": claim, "size": test_size, "seeds": len(bad),
                     "real_max": max(good), "mutant_min": min(bad), "mutant_max": max(bad),
                     "cpu_s": now - clock[0]})
        clock[0] = now

    for calibration, eps, dlt, n in (("analytic", 1.0, 1e-5, 1_000_000), ("classical", 0.9, 1e-3, 2_000_000)):
        mech = GaussianMechanism(b=0.5, epsilon=eps, delta=dlt, calibration=calibration)
        runs = [(gaussian_audit(mech, n, rng=np.random.default_rng(s))[0].epsilon_lower,
                 gaussian_audit(scaled_noise(mech, 0.5), n, rng=np.random.default_rng(s))[0].epsilon_lower)
                for s in range(10)]
        one(f"Gaussian {calibration} (ε = {eps:g}, δ = {dlt:g}), half σ", eps, runs, f"{n:,} per record")
    odp = GaussianMechanism(b=0.5, epsilon=1.0, delta=0.1)
    runs = [(opendp_gaussian_audit(odp, 3_000)[0].epsilon_lower,
             opendp_gaussian_audit(scaled_noise(odp, 0.5), 3_000)[0].epsilon_lower) for _ in range(5)]
    one("OpenDP sampler (ε = 1, δ = 0.1), half σ (unseeded)", 1.0, runs, "3,000 per record")
    proj = PrivateProjection(**PROJECTION)
    runs = [(projection_audit(proj, 2_000, rng=np.random.default_rng(s))[0].epsilon_lower,
             projection_audit(scaled_noise(proj, 0.25), 5_000, rng=np.random.default_rng(s))[0].epsilon_lower)
            for s in range(4, 9)]
    one("Private projection, σ1 / 4", proj.epsilon, runs, "5,000 per record; the real one 2,000")
    for relation, n, kwargs in (("element", 5_000, {}), ("row", 3_000, {"known": 100, "per_release": 100})):
        jl = JLLaplace(k=1, epsilon=1.0, d=1, relation=relation)
        runs = [(jl_laplace_audit(jl, n, rng=np.random.default_rng(s), **kwargs)[0].epsilon_lower,
                 jl_laplace_audit(scaled_noise(jl, 0.25), n, rng=np.random.default_rng(s), **kwargs)[0].epsilon_lower)
                for s in range(1, 6)]
        one(f"JL + Laplace {relation}-wise, Laplace scale / 4", 1.0, runs, f"{n:,} per input")
    epl = SUM_MECHANISMS["epl"]()
    x = float(epl.policy_inverse(1.0))
    claim = per_record_claim(epl, x, 0.01)
    runs = [(per_record_audit(epl, x, 60_000, rng=np.random.default_rng(s), claim=claim)[0].epsilon_lower,
             per_record_audit(epl.with_noise(epl.noise / 2), x, 60_000, rng=np.random.default_rng(s),
                              claim=claim)[0].epsilon_lower) for s in range(11, 16)]
    one("Per-record general EPL (ε = 1), half the noise", 1.0, runs, "60,000 per input")
    return rows


def _fmt_eps(r: AuditRecord) -> str:
    return f"{r.audited_epsilon:.3f}" if np.isfinite(r.audited_epsilon) else "∞"


def _write_doc(records: list[AuditRecord], spread: list[dict], load: tuple[float, float, float]) -> None:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    lines = [
        "# Empirical privacy audit",
        "",
        "Does each mechanism's realised privacy loss stay within the guarantee the Studio prints? Generated by",
        "`python benchmarks/bench_privacy_audit.py` (also `bash scripts/studio.sh bench privacy_audit`) — do not edit",
        f"by hand. Last run: {datetime.date.today().isoformat()}, commit {commit}, load average "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1 / 5 / 15 min) on the shared 2-core machine.",
        "",
        "The same audits, with fewer samples and fixed seeds, run in the test suite "
        "(`tests/engine/test_privacy_audit.py`); the code is `engine/audit/` (issue 30 §5).",
        "",
        "## How to read the table",
        "",
        "- **Mechanism**: the configuration audited, on worst-case neighbouring inputs (`engine/audit/neighbours.py`):",
        "  two records exactly B apart (targeted DP), a changing entry or record next to rows that reveal the secret",
        "  projection P (JL + Laplace), a record alone (per-record sums), and the coupled tables of one person's",
        "  secret under the declared public statistics (count releases: with the total public one region goes up",
        "  and another down, so the tables are 2 apart per count, 4 with a sub-count).",
        "- **Mutation**: empty for the real mechanism. Otherwise a copy of the real mechanism with less noise that keeps",
        "  printing the real guarantee (`engine/audit/mutants.py`; for count releases, a smaller Δ_z): the audit must",
        "  catch it.",
        "- **Claimed ε / δ**: the guarantee the Studio prints for that pair (for per-record mechanisms, the printed",
        "  per-record loss of that record: pure ε at δ = 0, or the ε its ρ implies at δ = 0.01; for the targeted-DP",
        "  policy, ε(t), δ(t) of the switch lemma at distance t).",
        "- **Audited ε**: *lower bound* — a Clopper–Pearson lower confidence bound on ε at the claimed δ, confidence",
        f"  {CONFIDENCE:.6f} (threshold test on the likelihood-ratio statistic, chosen on one half of the releases,",
        "  bounded on the other): a mechanism that keeps its claim shows a bound above it with probability ≤ 1e-6.",
        "  *exact* — the realised ε = max over outputs of |ln P(y | x₁) − ln P(y | x₀)| from the exact output laws",
        "  (`engine/audit/counts.py`), reported as the rigorous lower end of its interval when the law is enumerated",
        "  over a noise window (post-processing); the Detail column gives the interval, the outputs it covers and the",
        "  mass left out.",
        "- **Samples**: releases drawn on both inputs together (statistical audits) or outputs resolved (exact).",
        "- **CPU s**: CPU seconds of the audit in this process. Tests never compare times.",
        "- **Verdict**: *within the claim* / *CLAIM VIOLATED* for the real mechanisms; *caught* / *NOT CAUGHT* for",
        "  mutations. Count releases use Δ_z derived from the public statistics (the fix of issue 30 §1); the rows",
        "  marked *total ignored* are the Δ_z the Studio printed before that fix.",
        "",
        "## Results",
        "",
        "| Family | Mechanism | Mutation | Claimed ε | Claimed δ | Audited ε | Method | Samples | CPU s | Verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        lines.append(
            f"| {r.family} | {r.mechanism} | {r.mutation or '—'} | {r.claimed_epsilon:.4g} | {r.claimed_delta:.3g} | "
            f"{_fmt_eps(r)} | {r.method} | {r.samples:,} | {r.cpu_seconds:.2f} | **{r.verdict}** |"
        )
    lines += [
        "",
        "## Details",
        "",
    ]
    for r in records:
        tag = f" — {r.mutation}" if r.mutation else ""
        lines.append(f"- {r.family}: {r.mechanism}{tag}: {r.detail}.")
    lines += [
        "",
        "## Margins of the tests' mutation audits",
        "",
        "The tests run each mutation audit once, at a fixed seed and a small size. Here the same audits run over",
        "several seeds at the tests' sizes: the mutant's bound must clear the claim for every seed, and the real",
        "mechanism's bound stay below it.",
        "",
        "| Audit (test size) | Claimed ε | Seeds | Real mechanism: largest bound | Mutant: bounds | CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for s in spread:
        lines.append(f"| {s['name']} ({s['size']}) | {s['claim']:.4g} | {s['seeds']} | {s['real_max']:.3f} | "
                     f"{s['mutant_min']:.3f} – {s['mutant_max']:.3f} | {s['cpu_s']:.1f} |")
    lines += [
        "",
        "## What the audit shows",
        "",
        "- **Count releases with the total public** (issue 30 §1): with Δ_z = 2 for a table with sub-counts — the seed",
        "  paper's case-study assumption and the Studio's former default — the realised ε exceeds the claimed ε = 1 for",
        "  every method and base that uses the total: 1.50 for the congenial Wasserstein mechanism on the issue's",
        "  table (exact), 1.92 for post-processing on two regions of 50 cases (over the outputs of probability",
        "  ≥ 1e-10; 1.73 over ≥ 1e-4, 1.86 over ≥ 1e-6: it keeps growing toward the post-processing bound 4a = 2 as",
        "  rarer outputs are resolved). Δ_z derived from the public set (4 with a sub-count, 2 for counts only) brings",
        "  every realised ε within the claim. The naive Wasserstein base is the exception: its factor 2 is spare (it",
        "  realises exactly ε/2 at the derived Δ_z), so ignoring the total alone realises exactly ε.",
        "- **Every other printed guarantee holds** on its worst-case inputs, and every mutation is caught. Several",
        "  guarantees are loose — the private projection, JL + Laplace and the classical Gaussian calibration keep",
        "  their claims even with half their noise by a visible margin in these experiments, which is why their",
        "  mutations are a quarter of the noise (projection, JL) or the audit is run at δ = 1e-3 (classical).",
        "",
    ]
    DOC.write_text("\n".join(lines))


def run() -> list[dict]:
    load = os.getloadavg()
    records = _statistical() + _counts()
    spread = _spread()
    _write_doc(records, spread, load)
    rows = []
    for r in records:
        rows.append({"name": f"{r.family}: {r.mechanism}" + (f" [{r.mutation}]" if r.mutation else ""),
                     "seconds": round(r.cpu_seconds, 3), "claimed": round(r.claimed_epsilon, 4),
                     "audited": round(r.audited_epsilon, 4), "verdict": r.verdict})
    for s in spread:
        rows.append({"name": f"test-size spread: {s['name']}", "seconds": round(s["cpu_s"], 2),
                     "mutant_min": round(s["mutant_min"], 3), "real_max": round(s["real_max"], 3)})
    rows.append({"name": "load average (1 min) at start", "seconds": 0.0, "note": f"{load[0]:.2f}"})
    return rows


if __name__ == "__main__":
    started = time.process_time()
    for row in run():
        print(row)
    print(f"wrote {DOC.relative_to(ROOT)} ({time.process_time() - started:.1f} CPU s)")
