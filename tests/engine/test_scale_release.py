"""Out-of-core release on Dask (engine.scale): statistics, distribution, determinism, atomic output, refusals.

A thread-based LocalCluster (processes=False) keeps these fast; the real multi-process cluster started with
Dask's own command-line entry points is in test_scale_cluster.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.data.preparation import DataSpec, Normalization, TableProblem, prepare
from engine.errors import InvalidParameterError
from engine.mechanisms.gaussian import GaussianMechanism
from engine.mechanisms.jl_laplace import JLLaplace
from engine.mechanisms.private_projection import (
    PrivateProjection,
    _covariance_basis,
    _draw_projection,
    _projection_operators,
)
from engine.release import ReleaseConfig
from engine.rng import SEEDED_WARNING
from engine.scale.atomic_output import SIDECAR_NAME
from engine.scale.cluster import dask_client
from engine.scale.out_of_core import fit_preparation, run_out_of_core_release
from engine.scale.partition_preparation import prepare_rows, public_map
from engine.scale.partitioned_input import open_partitioned_input

FEATURES = ("a", "b", "c")
BOUNDS = Normalization("bounds", lower=(-4.0, -6.0, -8.0), upper=(4.0, 8.0, 12.0))


@pytest.fixture(scope="module")
def client():
    with dask_client(None, n_workers=2, processes=False) as c:
        yield c


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n, 3)) * [1.0, 2.0, 3.0] + [0.0, 1.0, 2.0]
    return pd.DataFrame(values, columns=list(FEATURES))


def _write_parquet(frame: pd.DataFrame, folder: Path, files: int) -> Path:
    folder.mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), files)):
        frame.iloc[part].to_parquet(folder / f"f{i:02d}.parquet", index=False, row_group_size=97)
    return folder


def _read_output(folder: Path) -> pd.DataFrame:
    files = sorted(folder.glob("part-*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


# ------------------------------------------------------------------------------------------------ preparation
@pytest.mark.parametrize("method", ["clip", "scaled", "maxnorm"])
def test_pass_one_statistics_and_prepared_rows_equal_the_in_memory_prepare(tmp_path, client, method):
    frame = _table(1500, seed=1)
    source = _write_parquet(frame, tmp_path / "in", files=4)
    spec = DataSpec(FEATURES, normalization=Normalization(method))
    plan = open_partitioned_input(str(source), partition_rows=400)
    assert plan.npartitions == 4 and plan.rows == 1500
    prep, reports = fit_preparation(client, plan, spec)
    memory = prepare(frame, spec)
    # Same statistics up to summation order (Chan's merge vs one numpy pass): 1e-12 relative.
    np.testing.assert_allclose(prep.centre, memory.centre, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(prep.scale, memory.scale, rtol=1e-12)
    assert prep.row_factor == pytest.approx(memory.row_factor, rel=1e-12)
    x, clipped, _ = prepare_rows(frame[list(FEATURES)].to_numpy(), prep)
    np.testing.assert_allclose(x, memory.x, rtol=1e-11, atol=1e-13)
    assert clipped == memory.clipped_rows
    assert sum(r["n"] for r in reports) == 1500


def test_public_bounds_need_no_pass_and_prepare_bit_for_bit(tmp_path, client):
    frame = _table(300, seed=2)
    spec = DataSpec(FEATURES, normalization=BOUNDS)
    plan = open_partitioned_input(str(_write_parquet(frame, tmp_path / "in", files=2)), partition_rows=100)
    assert fit_preparation(client, plan, spec) == (None, None)
    x, _, clipped_values = prepare_rows(frame[list(FEATURES)].to_numpy(), public_map(BOUNDS, 3))
    memory = prepare(frame, spec)
    assert np.array_equal(x, memory.x) and clipped_values == memory.clipped_values


# ------------------------------------------------------------------------------------------------ distribution
def _release(client, tmp_path, frame, mechanism, *, seed, partition_rows=250, files=3, name="out", **kw):
    source = tmp_path / f"in-{name}"
    if not source.exists():
        _write_parquet(frame, source, files)
    config = ReleaseConfig(DataSpec(FEATURES, normalization=BOUNDS), mechanism.to_dict(), seed=seed)
    out = tmp_path / name
    summary = run_out_of_core_release(client, str(source), str(out), config, partition_rows=partition_rows, **kw)
    return summary, _read_output(out), prepare(frame, config.data).x


def _driver_rng(seed: int) -> np.random.Generator:
    """The driver stream of run_out_of_core_release (first child of the seed's SeedSequence)."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0])


def test_projection_release_has_the_in_memory_fast_path_distribution(tmp_path, client):
    """Given R (the same sampler, re-drawn from the driver stream), the residual rows are N(0, k²σ1² FᵀF) in both
    engines: whitened by F they are i.i.d. standard normal. Seeded, so the test is deterministic."""
    n, k = 1500, 40
    frame = _table(n, seed=3)
    mech = PrivateProjection(b=0.5, epsilon1=2.0, delta1=1e-4, epsilon2=0.5, delta2=1e-5, k=k)
    summary, released, x = _release(client, tmp_path, frame, mech, seed=11)
    sigma1 = mech.sigma1(3)

    def whitened(values: np.ndarray, r_mat: np.ndarray) -> np.ndarray:
        a, f = _projection_operators(r_mat, None)
        assert a is None  # full row rank: A = I exactly
        return ((values - x) / (k * sigma1)) @ np.linalg.inv(f)

    w_dask = whitened(released.to_numpy(), _draw_projection(3, k, _driver_rng(11)))
    memory = mech.release(x, rng=np.random.default_rng(12))
    w_mem = whitened(memory.value, _draw_projection(3, k, np.random.default_rng(12)))
    for w in (w_dask, w_mem):
        flat = w.ravel()
        se = 1.0 / np.sqrt(flat.size)
        assert abs(flat.mean()) < 5 * se
        assert abs(flat.var() - 1.0) < 5 * np.sqrt(2.0) * se
        assert abs(np.corrcoef(w.T)[np.triu_indices(3, 1)]).max() < 5 * np.sqrt(1.0 / n)
        assert stats.kstest(flat, "norm").pvalue > 1e-3
    assert stats.ks_2samp(w_dask.ravel(), w_mem.ravel()).pvalue > 1e-3
    # The reported noise sd is the one of this R, and the residuals have it.
    residual = released.to_numpy() - x
    sd = summary["noise_sd_per_coordinate"]
    assert np.sqrt((residual**2).mean()) == pytest.approx(sd, rel=5 * np.sqrt(2.0 / residual.size))
    assert summary["execution"]["mode"] == "global"
    assert "exactly the distribution of the in-memory release" in summary["guarantee"]["describe"][-1]


def test_projection_shared_pieces_at_reduced_rank_equal_the_in_memory_ones(tmp_path, client):
    """Rank < d: XᵀX by reduction, privatized once. With the same driver stream the in-memory path draws the same R
    and G', so V, A and F agree to rounding."""
    frame = _table(900, seed=4)
    spec = DataSpec(FEATURES, normalization=BOUNDS)
    x = prepare(frame, spec).x
    parts = np.array_split(x, 4)
    for covariance in ("gram", "centred"):
        mech = PrivateProjection(b=0.5, epsilon1=2.0, delta1=1e-4, epsilon2=0.5, delta2=1e-5, k=30, rank=2,
                                 covariance=covariance)

        def reduce(kind: str) -> np.ndarray:
            gram = sum(p.T @ p for p in parts)
            if kind == "gram":
                return gram
            mean = sum(p.sum(axis=0) for p in parts) / len(x)
            return (gram - len(x) * np.outer(mean, mean)) / (len(x) - 1)

        pieces, details = mech.partition_plan("global", 3, np.random.default_rng(5), reduce)
        rng = np.random.default_rng(5)
        r_mat = _draw_projection(3, 30, rng)
        a, f = _projection_operators(r_mat, _covariance_basis(x, 2, mech.sigma2, covariance, rng))
        np.testing.assert_allclose(pieces.a, a, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(np.abs(pieces.f), np.abs(f), rtol=1e-8, atol=1e-10)  # rows of F up to sign
        assert details["covariance_step_changes_output"] == "yes"


def test_gaussian_and_jl_releases_have_the_in_memory_distribution(tmp_path, client):
    n = 1200
    frame = _table(n, seed=6)
    gauss = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    summary, released, x = _release(client, tmp_path, frame, gauss, seed=21, name="g")
    z = ((released.to_numpy() - x) / gauss.sigma).ravel()
    z_mem = ((gauss.release(x, rng=np.random.default_rng(22)).value - x) / gauss.sigma).ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3 and stats.ks_2samp(z, z_mem).pvalue > 1e-3
    assert abs(z.mean()) < 5 / np.sqrt(z.size) and abs(z.var() - 1) < 5 * np.sqrt(2 / z.size)
    assert summary["noise_sd_per_coordinate"] == pytest.approx(gauss.sigma)
    other, _, _ = _release(client, tmp_path, frame, gauss, seed=21, name="g2", mode="partitioned")
    assert other["execution"]["mode"] == "global" and "same release" in other["execution"]["mode_note"]

    jl = JLLaplace(k=6, epsilon=2.0, d=3, target_delta=1e-6)
    summary, released, x = _release(client, tmp_path, frame, jl, seed=31, name="jl")
    assert list(released.columns) == [f"z{i}" for i in range(1, 7)]
    p = _driver_rng(31).normal(0.0, 1.0 / np.sqrt(6), size=(3, 6))  # P: drawn once on the driver
    noise = (released.to_numpy() - x @ p).ravel()
    assert stats.kstest(noise, "laplace", args=(0.0, jl.laplace_scale)).pvalue > 1e-3
    mem = jl.release(x, rng=np.random.default_rng(32))
    p_mem = np.random.default_rng(32).normal(0.0, 1.0 / np.sqrt(6), size=(3, 6))
    assert stats.ks_2samp(noise, (mem.value - x @ p_mem).ravel()).pvalue > 1e-3
    assert summary["details"]["laplace_scale"] == pytest.approx(jl.laplace_scale)
    assert summary["sampler"]["name"] == "numpy" and summary["details"]["sampler"] == "numpy"


def test_an_unseeded_gaussian_release_uses_opendp_in_every_partition_and_says_so(tmp_path, client):
    """Issue 30 §3: the out-of-core release draws with the sampler the release uses — OpenDP's vetted sampler by
    default for an unseeded Gaussian release, as in memory — and every output names it; a seeded one is numpy's and
    OpenDP with a seed is refused before any work."""
    frame = _table(300, seed=8)
    gauss = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    summary, released, x = _release(client, tmp_path, frame, gauss, seed=None, name="vetted", partition_rows=100)
    assert summary["sampler"]["name"] == "opendp" and "vetted" in summary["sampler"]["note"]
    assert summary["details"]["sampler"] == summary["details"]["implementation"] == "opendp"
    # OpenDP's certified ρ at (Δ', σ'): never above the mechanism's Δ²/(2σ²), below it by at most σ' rounded up to
    # 32 significant bits (2^-31 relative on σ, so 2^-30 on ρ)
    rho = summary["details"]["opendp_rho"]
    assert 0.5**2 / (2 * gauss.sigma**2) * (1 - 2.0**-30) <= rho <= 0.5**2 / (2 * gauss.sigma**2) * (1 + 1e-12)
    assert any("OpenDP" in line and "make_gaussian" in line for line in summary["guarantee"]["describe"])
    sidecar = json.loads((tmp_path / "vetted" / SIDECAR_NAME).read_text())
    assert sidecar["sampler"]["name"] == "opendp"
    z = ((released.to_numpy() - x) / gauss.sigma).ravel()  # noise on every entry, of the calibrated scale
    assert np.all(z != 0) and abs(z.var() - 1) < 5 * np.sqrt(2 / z.size)
    asked, _, _ = _release(client, tmp_path, frame, gauss, seed=None, name="asked", sampler="numpy")
    assert asked["sampler"]["name"] == "numpy" and "not a vetted sampler" in asked["sampler"]["note"]
    seeded, _, _ = _release(client, tmp_path, frame, gauss, seed=4, name="seeded")
    assert seeded["sampler"]["name"] == "numpy" and "not private" in seeded["sampler"]["note"]
    with pytest.raises(InvalidParameterError, match="cannot be seeded"):
        _release(client, tmp_path, frame, gauss, seed=4, name="refused", sampler="opendp")
    assert not (tmp_path / "refused").exists()


# ------------------------------------------------------------------------------------------------ determinism
@pytest.mark.slow
def test_seeded_output_is_identical_for_1_2_and_3_partitions_per_worker(tmp_path):
    """6 partitions on 6, 3 and 2 workers; and the same rows stored in a different file layout."""
    frame = _table(600, seed=7)
    mech = PrivateProjection(b=0.5, epsilon1=2.0, delta1=1e-4, epsilon2=0.5, delta2=1e-5, k=25)
    config = ReleaseConfig(DataSpec(FEATURES), mech.to_dict(), seed=99)  # clip + standardise: pass 1 runs too
    _write_parquet(frame, tmp_path / "in3", files=3)
    _write_parquet(frame, tmp_path / "in5", files=5)
    outputs = []
    for workers, source in ((6, "in3"), (3, "in3"), (2, "in5")):
        out = tmp_path / f"out{workers}"
        with dask_client(None, n_workers=workers, processes=False) as c:
            summary = run_out_of_core_release(c, str(tmp_path / source), str(out), config, partition_rows=100)
        assert summary["execution"]["input"]["partitions"] == 6
        outputs.append([f.read_bytes() for f in sorted(out.glob("part-*.parquet"))])
    assert len(outputs[0]) == 6
    assert outputs[0] == outputs[1] == outputs[2]
    # Another seed gives other noise.
    with dask_client(None, n_workers=2, processes=False) as c:
        other = dataclass_seed(config, 100)
        run_out_of_core_release(c, str(tmp_path / "in3"), str(tmp_path / "other"), other, partition_rows=100)
    assert [f.read_bytes() for f in sorted((tmp_path / "other").glob("part-*.parquet"))] != outputs[0]


def dataclass_seed(config: ReleaseConfig, seed: int) -> ReleaseConfig:
    return ReleaseConfig(config.data, config.mechanism, seed=seed)


# ------------------------------------------------------------------------------------------------ atomic output
def test_failure_in_a_late_partition_leaves_no_output_and_names_the_whole_table_row(tmp_path, client):
    frame = _table(400, seed=8)
    frame.loc[377, "b"] = np.nan  # in the last partition (rows 300..399), found only in the release pass
    source = _write_parquet(frame, tmp_path / "in", files=2)
    config = ReleaseConfig(DataSpec(FEATURES, normalization=BOUNDS), GaussianMechanism(0.5, 1.0, 1e-5).to_dict(),
                           seed=1)
    with pytest.raises(TableProblem, match=r"'b' has a missing value in data row 378 \(counting") as info:
        run_out_of_core_release(client, str(source), str(tmp_path / "out"), config, partition_rows=100)
    assert info.value.row == 377
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # no output, no staging folder left


def test_interrupted_run_leaves_no_complete_looking_output(tmp_path, client):
    frame = _table(600, seed=9)
    source = _write_parquet(frame, tmp_path / "in", files=3)
    config = ReleaseConfig(DataSpec(FEATURES, normalization=BOUNDS), GaussianMechanism(0.5, 1.0, 1e-5).to_dict())
    staged: list[list[str]] = []

    def interrupt(progress):
        if progress.message == "release" and progress.done == 2:
            staging = [p for p in tmp_path.iterdir() if ".partial-" in p.name]
            staged.append(sorted(f.name for f in staging[0].iterdir()))
            raise KeyboardInterrupt  # Ctrl-C half-way through the release pass

    with pytest.raises(KeyboardInterrupt):
        run_out_of_core_release(client, str(source), str(tmp_path / "out"), config, partition_rows=100,
                                progress=interrupt)
    assert len(staged[0]) >= 2  # partitions were being written …
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]  # … and nothing remains, under any name


def test_vetted_partition_tasks_stop_when_the_staging_folder_goes(tmp_path, client):
    """The driver removes the staging folder when a release stops; partition tasks drawing OpenDP noise see it
    between chunks and end (StagingCancelToken), reported as a cancelled release — not as noise drawn to the end
    and then a failed write into a missing folder."""
    from engine.errors import CancelledError

    frame = _table(40_000, seed=3)  # 4 partitions of 30,000 values: seconds of vetted noise each
    source = _write_parquet(frame, tmp_path / "in", files=1)
    config = ReleaseConfig(DataSpec(FEATURES, normalization=BOUNDS), GaussianMechanism(0.5, 1.0, 1e-5).to_dict())

    def remove_staging(progress):
        if progress.message == "release" and progress.done == 0:
            for staging in [p for p in tmp_path.iterdir() if ".partial-" in p.name]:
                shutil.rmtree(staging)

    with pytest.raises(CancelledError, match="the release was cancelled"):
        run_out_of_core_release(client, str(source), str(tmp_path / "out"), config, partition_rows=10_000,
                                progress=remove_staging)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_output_folder_is_complete_with_its_sidecar(tmp_path, client):
    frame = _table(500, seed=10)
    mech = GaussianMechanism(b=0.5, epsilon=1.0, delta=1e-5)
    summary, released, _ = _release(client, tmp_path, frame, mech, seed=5, partition_rows=200)
    out = tmp_path / "out"
    sidecar = json.loads((out / SIDECAR_NAME).read_text())
    assert sidecar == json.loads(json.dumps(summary))
    assert sidecar["rows"] == 500 and len(released) == 500 and sidecar["execution"]["files"] == [
        "part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert sidecar["seeded"] is True and sidecar["warning"] == SEEDED_WARNING
    assert sidecar["preparation"]["privacy_note"].startswith("Data-independent")
    assert sidecar["guarantee"]["headline"] == mech.guarantee().headline()
    with pytest.raises(InvalidParameterError, match="exists already"):
        run_out_of_core_release(client, str(tmp_path / "in-out"), str(out),
                                ReleaseConfig(DataSpec(FEATURES, normalization=BOUNDS), mech.to_dict()))


def test_partitioned_mode_states_parallel_composition(tmp_path, client):
    frame = _table(800, seed=12)
    mech = PrivateProjection(b=0.5, epsilon1=2.0, delta1=1e-4, epsilon2=0.5, delta2=1e-5, k=30)
    summary, released, x = _release(client, tmp_path, frame, mech, seed=3, partition_rows=200, mode="partitioned")
    assert summary["execution"]["mode"] == "partitioned"
    assert "4 disjoint parts" in summary["guarantee"]["describe"][-1]
    assert "parallel composition" in summary["guarantee"]["describe"][-1]
    assert summary["guarantee"]["headline"] == mech.guarantee().headline()
    residual = released.to_numpy() - x
    assert np.sqrt((residual**2).mean()) == pytest.approx(summary["noise_sd_per_coordinate"], rel=0.1)


# ------------------------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize(
    ("mechanism", "mode", "message"),
    [
        ({"kind": "mondrian", "k": 2}, "global", "median splits depend on all rows"),
        ({"kind": "projection", "b": 0.5, "epsilon1": 1, "delta1": 1e-4, "epsilon2": 0.5, "delta2": 1e-5,
          "partitions": 3}, "global", "random permutation"),
        ({"kind": "projection", "b": 0.5, "epsilon1": 1, "delta1": 1e-4, "epsilon2": 0.5, "delta2": 1e-5,
          "implementation": "reference"}, "global", "n × k matrices"),
        ({"kind": "jl-laplace", "k": 4, "epsilon": 1, "d": 3}, "partitioned", "ONE secret P"),
    ],
)
def test_refused_configurations_say_why_before_any_work(tmp_path, client, mechanism, mode, message):
    config = ReleaseConfig(DataSpec(FEATURES, normalization=BOUNDS), mechanism)
    with pytest.raises(InvalidParameterError, match=message):
        run_out_of_core_release(client, str(tmp_path / "missing"), str(tmp_path / "out"), config, mode=mode)
    assert not (tmp_path / "out").exists()


def test_cli_refuses_mondrian_in_one_line(tmp_path, capsys):
    from engine.cli import main

    source = _write_parquet(_table(100), tmp_path / "in", files=1)
    code = main(["privatize", "--input", str(source), "--features", "a,b,c", "--mechanism", "mondrian",
                 "--anonymity-k", "2", "--engine", "dask", "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "Mondrian k-anonymity cannot run under --engine dask" in err and "not partition-local" in err
    assert not (tmp_path / "out").exists()


def test_cli_dask_only_flags_need_engine_dask(tmp_path, capsys):
    from engine.cli import main

    code = main(["privatize", "--dataset", "togo-demo", "--mechanism", "gaussian", "--b", "0.5", "--epsilon", "1",
                 "--delta", "1e-5", "--scheduler", "tcp://127.0.0.1:8786", "--output", str(tmp_path / "x.csv")])
    assert code == 2 and "--scheduler applies to --engine dask only" in capsys.readouterr().err


def test_csv_input_gives_the_same_statistics(tmp_path, client):
    frame = _table(700, seed=13)
    (tmp_path / "in").mkdir()
    frame.iloc[:300].to_csv(tmp_path / "in" / "a.csv", index=False)
    frame.iloc[300:].to_csv(tmp_path / "in" / "b.csv", index=False)
    spec = DataSpec(FEATURES, normalization=Normalization("maxnorm"))
    plan = open_partitioned_input(str(tmp_path / "in" / "*.csv"))
    assert plan.kind == "csv" and plan.npartitions == 2
    prep, _ = fit_preparation(client, plan, spec)
    reread = pd.concat([pd.read_csv(tmp_path / "in" / n) for n in ("a.csv", "b.csv")], ignore_index=True)
    memory = prepare(reread, spec)
    np.testing.assert_allclose(prep.centre, memory.centre, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(prep.scale, memory.scale, rtol=1e-12)
    assert prep.max_norm == pytest.approx(1 / memory.row_factor, rel=1e-12)
    with pytest.raises(InvalidParameterError, match="--partition-rows needs Parquet input"):
        open_partitioned_input(str(tmp_path / "in"), partition_rows=10)


def test_text_cell_in_a_parquet_partition_gets_the_in_memory_message_with_the_whole_table_row(tmp_path, client):
    frame = _table(300, seed=14)
    text = frame.assign(c=frame["c"].map(repr))  # numbers written as text (as in a CSV export) …
    text.loc[250, "c"] = "n/a?"  # … and one cell that is not a number
    (tmp_path / "in").mkdir()
    frame.iloc[:200].to_parquet(tmp_path / "in" / "0.parquet", index=False)
    text.iloc[200:].to_parquet(tmp_path / "in" / "1.parquet", index=False)  # column c stored as text here
    config = ReleaseConfig(DataSpec(FEATURES), GaussianMechanism(0.5, 1.0, 1e-5).to_dict())
    expected = prepare_problem(text, config.data)
    with pytest.raises(TableProblem) as info:
        run_out_of_core_release(client, str(tmp_path / "in"), str(tmp_path / "out"), config, partition_rows=120)
    assert str(info.value) == expected and info.value.row == 250
    assert not (tmp_path / "out").exists()


def prepare_problem(frame: pd.DataFrame, spec: DataSpec) -> str:
    with pytest.raises(TableProblem) as info:
        prepare(frame, spec)
    return str(info.value)


def test_progress_bar_on_a_stream():
    import io

    from engine.cli.privatize_dask import StderrProgress
    from engine.progress import Progress

    stream = io.StringIO()
    bar = StderrProgress(stream, width=10)
    bar(Progress(0, 4, "release"))
    bar(Progress(3, 4, "release"))
    assert stream.getvalue().splitlines() == [
        "release: [..........] 0/4 partitions",
        "release: [########..] 3/4 partitions",
    ]


# ------------------------------------------------------------------------------------------------ issue 33 §2
def _old_digest(values: dict[str, np.ndarray], columns: tuple[str, ...], rows: int) -> str:
    """The digest as defined before issue 33 §2 (one canonical copy per column): the oracle of the fast path."""
    import hashlib

    h = hashlib.sha256(f"rows={rows}\n".encode())
    for column in columns:
        canon = np.where(np.isnan(values[column]), np.nan, values[column] + 0.0).astype("<f8", copy=False)
        h.update(b"column\x00" + column.encode("utf-8") + b"\x00f8\x00" + canon.tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("n", [0, 1, 1000, (1 << 15) + 7, 3 * (1 << 15)])
def test_partition_digest_in_blocks_is_the_defined_digest_bit_for_bit(n):
    from engine.scale.partition_preparation import canonical_digest

    rng = np.random.default_rng(n)
    values = {c: rng.normal(size=n) * 10.0 ** rng.integers(-200, 200, size=n) for c in FEATURES}
    values["a"][::5] = -0.0  # the canonical form folds −0 into +0
    values["b"][::7] = 0.0
    spec = DataSpec(FEATURES)
    expected = _old_digest(values, FEATURES, n)
    assert canonical_digest(values, spec, n, finite=True) == expected
    assert canonical_digest(values, spec, n) == expected
    values["c"] = values["c"].copy()
    values["c"][::3] = -values["c"][::3] + 1.0  # any change of a value changes the digest
    assert canonical_digest(values, spec, n, finite=True) != expected or n == 0


def test_partition_digest_with_missing_values_keeps_one_nan_pattern():
    from engine.scale.partition_preparation import canonical_digest

    v = np.array([1.0, np.nan, -0.0, 2.5])
    other = np.array([1.0, -np.nan, 0.0, 2.5])
    spec = DataSpec(("a",))
    assert canonical_digest({"a": v}, spec, 4) == canonical_digest({"a": other}, spec, 4) == _old_digest(
        {"a": v}, ("a",), 4)


@pytest.mark.parametrize("method", ["clip", "scaled", "maxnorm", "bounds"])
@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 9000])
def test_partition_prepared_in_row_blocks_from_columns_equals_the_whole_matrix_map(method, n):
    from engine.data.preparation import _safe_row_norms, _shrink_into_ball
    from engine.scale.partition_preparation import PreparationMap, prepare_columns

    rng = np.random.default_rng(n)
    raw = rng.normal(size=(n, 3)) * [1.0, 20.0, 1e-3] + [0.0, 5.0, 0.0]
    if method == "bounds":
        prep = public_map(BOUNDS, 3)
    else:
        centre, scale = np.array([0.1, 5.0, 0.0]), np.array([1.0, 20.0, 1e-3])
        factor = {"clip": 1.0, "scaled": 1 / (2 * np.sqrt(3)), "maxnorm": 1 / 7.0}[method]
        prep = PreparationMap(Normalization(method), centre, scale, factor, 7.0 if method == "maxnorm" else None)
    x, rows, values = prepare_columns({c: raw[:, j].copy() for j, c in enumerate(FEATURES)}, FEATURES, prep)
    # The oracle: the whole-matrix steps as prepare_rows applied them before issue 33 §2
    with np.errstate(all="ignore"):
        if method == "bounds":
            lo, hi = np.array(BOUNDS.lower), np.array(BOUNDS.upper)
            want_values = int(((raw < lo) | (raw > hi)).sum())
            want = np.clip((np.clip(raw, lo, hi) - prep.centre) / prep.scale, -1.0, 1.0) * prep.row_factor
            want_rows = 0
        else:
            z = (raw - prep.centre) / prep.scale
            norms = _safe_row_norms(z)
            if method == "maxnorm":
                want, want_rows = z / 7.0, 0
            else:
                if method == "scaled":
                    norms, z = norms * prep.row_factor, z * prep.row_factor
                want_rows = int((norms > 1.0).sum())
                want = z / np.maximum(norms, 1.0)[:, None]
            want_values = 0
    _shrink_into_ball(want)
    assert np.array_equal(x, want)
    assert (rows, values) == (want_rows, want_values)
    assert np.linalg.norm(x, axis=1).max() <= 1.0
    assert np.array_equal(prepare_rows(raw, prep)[0], want)


def test_partition_check_gives_each_columns_range_and_refuses_what_the_full_check_refuses():
    from engine.scale.partition_preparation import check_partition

    spec = DataSpec(FEATURES)
    good = {"a": np.array([3.0, -1.0, 2.0]), "b": np.array([0.0, 5.0, 1.0]), "c": np.array([-2.0, -2.5, 7.0])}
    ranges: dict[str, tuple[float, float]] = {}
    assert check_partition(good, spec, ranges)[0] is None
    assert ranges == {"a": (-1.0, 3.0), "b": (0.0, 5.0), "c": (-2.5, 7.0)}
    for bad in (np.nan, np.inf, -np.inf, 2e150):
        values = {**good, "b": np.array([0.0, bad, 1.0])}
        ranges = {}
        problem, _ = check_partition(values, spec, ranges)
        assert problem is not None and problem["column"] == "b" and problem["row"] == 1, (bad, problem)
        assert ranges == {}
