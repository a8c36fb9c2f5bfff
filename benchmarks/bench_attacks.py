"""Benchmark the privacy attacks on a 4,201 × 10 dataset, and the authors' singling-out logic on the same data.

Rows reported:

* ``singling out (ours) …`` — :func:`engine.attacks.singling_out.singling_out` (all five net sizes) on
  ``togo-demo`` prepared into the unit ball: the non-private baseline, the paper-faithful attack on the
  as-printed release (X/k + noise) and the knows-scale attack on the unbiased release (private projection,
  B = 0.25, the authors' ε1 = 3, δ1 = 0.00015, ε2 = 0.9999, δ2 = 0.00008, k = 10⁴).
* ``singling out, numpy brute force`` — the O(n²d) predicate, vectorised (the test oracle).
* ``singling out, authors' pso_utils logic`` — their ``multi_sd``/``all_rows_multi_sd`` re-expressed: a Python
  loop over privatized rows; for every row and net size, one pandas comparison per column against all original
  rows, the column sd recomputed each time (``X_Syn[j].std()``), and their per-row ``print`` (sent to a null
  stream here). A full repetition takes minutes, so it is run on the first ``AUTHORS_ROWS`` privatized rows and
  extrapolated linearly to all 4,201 (each privatized row's work is independent of the others and touches all
  4,201 original rows, so the cost is linear in the number of privatized rows). The result on those rows is
  checked against ours.
* ``attribute inference (ours)`` — :func:`engine.attacks.attribute_inference.attribute_inference`, 3 adversaries ×
  10 secret columns, 500 + 500 targets, on a release of 3,701 rows (500 held out).
* ``per cell, <dataset>: <attack> …`` — one sweep cell's attacks (issue 11), today's code next to the code
  before the speed-ups (commit :data:`BEFORE`, loaded from git into a private module for the comparison only) on
  the same inputs: ``togo-demo`` (4,201 × 10), ``nigeria-demo`` (20,788 × 15), a generated 25,000 × 30 table
  and a generated 200,000 × 15 table, each prepared into the unit ball, 500 rows held out, the unbiased
  private-projection release (B = 0.25) of the rest. Singling out: 5 nets, knows-scale, the non-unique share
  passed in as a sweep does. Attribute inference: 3 adversaries × d secret columns, 500 + 500 targets. CPU
  seconds (``time.process_time``, less sensitive to other load on a shared machine than wall time) and wall
  seconds, medians; the outputs of both versions are checked identical. The issue's targets are printed next
  to the nigeria-demo figures (attribute inference ≤ 0.1 s, singling out ≤ 0.05 s per cell).

* ``per cell, nigeria-demo … B=<b>`` — the same on nigeria-demo for B ∈ {0.05, 0.1, 0.25, 1, 2}: the noise of
  the release decides how much the attribute-inference search can prune (little at small B, where the release
  lies among the targets).

Run ``python benchmarks/bench_attacks.py`` (``--per-cell`` for the per-cell rows only; ``--per-cell --quick``
skips the 200,000-row table; ``--per-b`` for the B rows) or ``bash scripts/studio.sh bench attacks``.
"""

from __future__ import annotations

import contextlib
import functools
import io
import pathlib
import statistics
import subprocess
import sys
import time
import types

if __name__ == "__main__":  # allow running as a script from anywhere
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from engine.attacks.attribute_inference import attribute_inference, holdout_split  # noqa: E402
from engine.attacks.singling_out import (  # noqa: E402
    AUTHORS_NET_SIZES,
    SinglingOutConfig,
    singled_out_rows,
    singled_out_rows_bruteforce,
    singling_out,
    singling_out_baseline,
)

#: Privatized rows run through the authors' logic (the rest is extrapolated linearly).
AUTHORS_ROWS = 150
#: The issue's figure for the authors' scripts: ~10 minutes for 5 B values × 5 repetitions.
AUTHORS_REPORTED_SECONDS_25_REPS = 600.0
PROJECTION = {"epsilon1": 3.0, "delta1": 0.00015, "epsilon2": 0.9999, "delta2": 0.00008, "k": 10_000}


def _data(name: str = "togo-demo") -> tuple[np.ndarray, str]:
    """A demo prepared into the unit ball, or synthetic data of togo's size if the data module is absent."""
    try:
        from engine.data.demos import load_demo
        from engine.data.preparation import prepare

        demo = load_demo(name)
        return prepare(demo.frame, demo.spec).x, f"{name} (prepared)"
    except ImportError:  # pragma: no cover - only before the data module landed
        rng = np.random.default_rng(0)
        x = rng.lognormal(size=(4201, 10))
        x = (x - x.mean(0)) / x.std(0)
        return x / np.linalg.norm(x, axis=1).max(), "synthetic 4201 x 10"


def _releases(x: np.ndarray, b: float, seed: int) -> dict[str, tuple[np.ndarray, float]]:
    from engine.mechanisms.private_projection import PrivateProjection

    out = {}
    for scale in ("paper", "unbiased"):
        mech = PrivateProjection(b=b, output_scale=scale, covariance="centred", **PROJECTION)
        rel = mech.release(x, rng=np.random.default_rng(seed))
        out[scale] = (rel.value, float(rel.details["output_scale"]))
    return out


def _median_seconds(fn, repeats: int) -> float:
    return _median_times(fn, repeats)[0]


def _median_times(fn, repeats: int) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds (``time.process_time``) of ``repeats`` calls."""
    wall, cpu = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return statistics.median(wall), statistics.median(cpu)


#: The commit before issue 11's speed-ups: its attack modules are timed next to today's.
BEFORE = "0f1fddc04dd1973f23d8bf0f3160266354c9740e"
#: The issue's per-cell targets (seconds) on nigeria-demo.
TARGETS = {"attribute inference": 0.1, "singling out": 0.05}
REPO = pathlib.Path(__file__).resolve().parents[1]


def _module_before(path: str, name: str) -> types.ModuleType | None:
    """``path`` as it was at :data:`BEFORE`, imported as module ``name`` (None without git or that commit)."""
    if name in sys.modules:
        return sys.modules[name]
    try:
        source = subprocess.run(["git", "show", f"{BEFORE}:{path}"], capture_output=True, text=True, check=True,
                                cwd=REPO).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while the class is created
    exec(compile(source, f"{BEFORE[:7]}:{path}", "exec"), module.__dict__)
    return module


def _generated(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Skewed, signed columns, centred, standardised and scaled into the unit ball (like a prepared table)."""
    rng = np.random.default_rng(seed)
    x = rng.lognormal(size=(n, d)) * rng.choice([-1.0, 1.0], size=(n, d))
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    return x / np.linalg.norm(x, axis=1).max()


def _cell_inputs(name: str, b: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    from engine.mechanisms.private_projection import PrivateProjection

    if name.startswith("generated"):
        n, d = (int(v) for v in name.split()[1].split("x"))
        x, label = _generated(n, d), name
    else:
        x, label = _data(name)
    rel_idx, hold_idx = holdout_split(x.shape[0], 500, rng=np.random.default_rng(2))
    x_rel = x[rel_idx]
    delta = 1.0 / (x_rel.shape[0] + 1)
    mech = PrivateProjection(b=b, output_scale="unbiased", covariance="centred", epsilon1=3.0, delta1=delta,
                             epsilon2=0.9999, delta2=delta, k=10_000)
    released = mech.release(x_rel, rng=np.random.default_rng(3)).value
    return x_rel, x[hold_idx], released, label


def _seeded(attack, *args):
    """Run the attack with the same fresh generator every time (identical targets and known columns)."""
    return attack(*args, rng=np.random.default_rng(4))


def _ai_counts(result) -> list[int]:
    return [round(c.main_success * result.n_attacks) for c in result.cells] + [
        round(c.control_success * result.n_control) for c in result.cells]


def per_cell(names: tuple[str, ...] = ("togo-demo", "nigeria-demo", "generated 25000x30", "generated 200000x15"),
             repeats: int = 5, b: float = 0.25) -> list[dict]:
    """One sweep cell's attacks per dataset, today's code and the code at :data:`BEFORE`, side by side.

    ``b``: the release's B (noise grows with B; at small B the release lies among the targets and the
    attribute-inference search prunes less — see :func:`per_b`).
    """
    from engine.attacks._chebyshev import ColumnIndex
    from engine.attacks.attribute_inference import AttributeInferenceConfig
    from engine.attacks.singling_out import SinglingOutConfig, non_unique_share

    old_ai = _module_before("engine/attacks/attribute_inference.py", "_before_attribute_inference")
    old_so = _module_before("engine/attacks/singling_out.py", "_before_singling_out")
    rows: list[dict] = []
    for name in names:
        x_rel, x_hold, released, label = _cell_inputs(name, b)
        if b != 0.25:
            label = f"{label} B={b:g}"
        n, d = x_rel.shape[0] + x_hold.shape[0], x_rel.shape[1]
        reps = repeats if n <= 50_000 else 1
        shared = non_unique_share(x_rel)
        started = time.process_time()
        index = ColumnIndex.build(x_rel)  # once per data set, as AnalysisData.so_index: every cell reuses it
        index_seconds = time.process_time() - started
        so_args = (x_rel, released)
        ai_args = (x_rel, released, x_hold)
        versions = {
            "singling out": {
                "now": functools.partial(singling_out, *so_args, SinglingOutConfig(), non_unique=shared, index=index),
                "before": None if old_so is None else functools.partial(
                    old_so.singling_out, *so_args, old_so.SinglingOutConfig(), non_unique=shared),
            },
            "attribute inference": {
                "now": functools.partial(_seeded, attribute_inference, *ai_args, AttributeInferenceConfig()),
                "before": None if old_ai is None else functools.partial(
                    _seeded, old_ai.attribute_inference, *ai_args, old_ai.AttributeInferenceConfig()),
            },
        }
        for attack, fns in versions.items():
            timed, outputs = {}, {}
            for version, fn in fns.items():
                if fn is None:
                    continue
                outputs[version] = fn()  # warm-up, and the output compared below
                timed[version] = _median_times(fn, reps)
            if "before" in outputs:
                same = (_ai_counts(outputs["now"]) == _ai_counts(outputs["before"]) if attack == "attribute inference"
                        else outputs["now"].n_singled_out == outputs["before"].n_singled_out)
                if not same:
                    raise AssertionError(f"{attack} on {label}: today's result differs from {BEFORE[:7]}'s")
            wall, cpu = timed["now"]
            row = {"name": f"per cell, {label} {n}x{d}: {attack}", "seconds": wall, "cpu_seconds": cpu}
            if "before" in timed:
                row.update(before_seconds=timed["before"][0], before_cpu_seconds=timed["before"][1],
                           speedup_cpu=timed["before"][1] / cpu)
            row["target"] = f"<= {TARGETS[attack]} s" if name == "nigeria-demo" else "none per cell"
            row["note"] = (f"median of {reps}; release {x_rel.shape[0]} rows; results identical to {BEFORE[:7]}"
                           if "before" in timed else f"median of {reps}; {BEFORE[:7]} not available")
            if attack == "singling out":
                row["note"] += f"; the rows' index, built once per data set: {index_seconds:.2f} CPU s"
            rows.append(row)
    return rows


def per_b(bs: tuple[float, ...] = (0.05, 0.1, 0.25, 1.0, 2.0), repeats: int = 3) -> list[dict]:
    """nigeria-demo cells across the quick preset's B values: how the attack cost depends on the release's noise."""
    rows: list[dict] = []
    for b in bs:
        rows += per_cell(("nigeria-demo",), repeats=repeats, b=b)
    return rows


# ------------------------------------------------------------------------------------------------------------
# The authors' singling-out logic (pso_utils.multi_sd / all_rows_multi_sd), re-expressed without their I/O.
# ------------------------------------------------------------------------------------------------------------
def _authors_multi_sd(row_syn_num: int, x_syn: pd.DataFrame, x_train: pd.DataFrame, sink) -> list[int]:
    row_syn = np.asarray(x_syn.iloc[row_syn_num])
    out = []
    for v, jitter_factor in enumerate(AUTHORS_NET_SIZES):
        predicate_array = []
        for j in x_syn.columns:
            predicate_val = row_syn[j]
            predicate_val_jitter = x_syn[j].std() * jitter_factor
            predicate_array.append(
                (x_train[j] <= predicate_val + predicate_val_jitter) & (x_train[j] >= predicate_val - predicate_val_jitter)
            )
        predicate = predicate_array[0]
        for j in range(1, len(predicate_array)):
            predicate = predicate & predicate_array[j]
        num_net = np.sum(predicate)
        if num_net == 1:
            row_so = int(np.where(predicate == 1)[0][0])
            out.append(row_so)
            print(f"Private row {row_syn_num} was able to single out a non-private row {row_so} using Net {v}", file=sink)
        else:
            print(f"Private row {row_syn_num} was unable to single out a non-private row using Net {v}", file=sink)
            out.append(-1)
    return out


def _authors_rows(x_priv: np.ndarray, x: np.ndarray, rows: int) -> list[list[int]]:
    x_syn = pd.DataFrame(x_priv)
    x_train = pd.DataFrame(x)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        return [_authors_multi_sd(r, x_syn, x_train, sink) for r in range(rows)]


def run() -> list[dict]:
    x, source = _data()
    n, d = x.shape
    releases = _releases(x, 0.25, seed=1)
    paper_value, paper_scale = releases["paper"]
    unbiased_value, _ = releases["unbiased"]
    rows: list[dict] = []

    # ---- ours
    baseline_s = _median_seconds(lambda: singling_out_baseline(x, SinglingOutConfig.paper()), 3)
    paper_s = _median_seconds(lambda: singling_out(x, paper_value, SinglingOutConfig.paper(), release_scale=paper_scale), 3)
    ours_s = _median_seconds(lambda: singling_out(x, unbiased_value), 3)
    rows += [
        {"name": f"singling out (ours), non-private baseline, 5 nets, {source} {n}x{d}", "seconds": baseline_s,
         "note": "median of 3"},
        {"name": "singling out (ours), paper adversary on X/k release, 5 nets", "seconds": paper_s, "note": "median of 3"},
        {"name": "singling out (ours), knows-scale adversary on unbiased release, 5 nets", "seconds": ours_s,
         "note": "median of 3"},
    ]

    # ---- numpy brute force (the test oracle), paper setting
    sd = np.std(paper_value, axis=0, ddof=1)
    brute_s = _median_seconds(lambda: [singled_out_rows_bruteforce(x, paper_value, c * sd) for c in AUTHORS_NET_SIZES], 1)
    rows.append({"name": "singling out, vectorised numpy brute force (paper setting), 5 nets", "seconds": brute_s,
                 "ratio_vs_ours": brute_s / paper_s, "note": "O(n^2 d); 1 run"})

    # ---- the authors' logic on a subsample of privatized rows, extrapolated; checked against ours
    started = time.perf_counter()
    theirs = _authors_rows(paper_value, x, AUTHORS_ROWS)
    sub_s = time.perf_counter() - started
    per_rep = sub_s * n / AUTHORS_ROWS
    for v, c in enumerate(AUTHORS_NET_SIZES):
        found = sorted({r[v] for r in theirs if r[v] != -1})
        ours = singled_out_rows(x, paper_value[:AUTHORS_ROWS], c * sd).tolist()
        if found != ours:
            raise AssertionError(f"authors' logic and ours disagree at c = {c}: {found} vs {ours}")
    rows.append({
        "name": f"singling out, authors' pso_utils logic, one repetition (5 nets), {n} privatized rows",
        "seconds": per_rep,
        "measured_seconds": sub_s,
        "measured_rows": AUTHORS_ROWS,
        "ratio_vs_ours": per_rep / paper_s,
        "note": (f"EXTRAPOLATED: measured on the first {AUTHORS_ROWS} privatized rows x {n}/{AUTHORS_ROWS}; "
                 "results on those rows identical to ours; their per-row print sent to a null stream"),
    })
    rows.append({
        "name": "singling out, 5 B x 5 repetitions: authors' logic (extrapolated) vs ours",
        "seconds": 25 * paper_s,
        "authors_seconds": 25 * per_rep,
        "issue_reported_authors_seconds": AUTHORS_REPORTED_SECONDS_25_REPS,
        "ratio": per_rep / paper_s,
        "note": "25 x one repetition each (ours: paper adversary, same data and release)",
    })

    # ---- attribute inference (one repetition: 3 adversaries x d secret columns, 500 + 500 targets)
    rng = np.random.default_rng(2)
    rel_idx, hold_idx = holdout_split(n, 500, rng=rng)
    released = _releases(x[rel_idx], 0.25, seed=3)["unbiased"][0]
    ai_s = _median_seconds(
        lambda: attribute_inference(x[rel_idx], released, x[hold_idx], rng=np.random.default_rng(4)), 3
    )
    rows.append({"name": f"attribute inference (ours), 3 adversaries x {d} secrets, 500+500 targets, "
                         f"release {len(rel_idx)} rows", "seconds": ai_s, "note": "median of 3"})
    return rows + per_cell() + per_b()


if __name__ == "__main__":
    if "--per-b" in sys.argv[1:]:
        rows = per_b()
    elif "--per-cell" in sys.argv[1:]:
        quick = "--quick" in sys.argv[1:]
        rows = per_cell(("togo-demo", "nigeria-demo", "generated 25000x30") if quick else per_cell.__defaults__[0])
    else:
        rows = run()
    for row in rows:
        extras = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items() if k != "name")
        print(f"{row['name']}: {extras}")
