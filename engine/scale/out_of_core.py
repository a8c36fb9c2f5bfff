"""The out-of-core release: a table that does not fit in memory, prepared and privatized on a Dask cluster.

:func:`run_out_of_core_release` runs a :class:`~engine.release.ReleaseConfig` over a partitioned input
(:mod:`engine.scale.partitioned_input`) and writes a partitioned Parquet dataset atomically
(:mod:`engine.scale.atomic_output`) with a sidecar JSON holding the guarantee and the run's metadata.

Passes (each a set of Dask tasks, one per partition):

1. Only when the preparation is data-dependent (``clip``/``maxnorm`` with standardisation, or ``maxnorm``): the
   column statistics and, for ``maxnorm``, the largest row norm, by reduction
   (:mod:`engine.scale.partition_preparation`). Public bounds need no pass. The partitions are checked here.
2. Only for the projection at rank < d (global mode): XᵀX of the whole prepared table, by reduction.
3. The release: every partition is read, prepared with the fixed map, released by the one release function
   (:func:`engine.release.privatize`) with the mechanism's partition plan (the shared pieces, drawn once on the
   driver: :meth:`~engine.mechanisms.base.RecordMechanism.partition_plan`), the sampler the release uses and its OWN
   random stream, and written as one Parquet file.

Sampler: resolved here, where the release is made (:func:`engine.release.release_sampler`): the one asked for, or by
default OpenDP's vetted sampler for an unseeded release of a mechanism it can express (the Gaussian mechanism) and
numpy otherwise — as in memory. Every partition draws with it, and ``_release.json`` names it.

Randomness: one ``numpy.random.SeedSequence`` (the configuration's seed, or OS entropy) is split into a driver
stream (R, the covariance noise, JL's P) and a parent of the partition streams; partition j uses the parent's
j-th child, whichever worker runs it. A seeded rerun on any number of workers therefore writes identical files
(for the same input and ``partition_rows``); a seed makes the output NOT private (:data:`engine.rng.SEEDED_WARNING`).
"""

from __future__ import annotations

import importlib
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.data.preparation import SCALED_SPREAD, TableProblem, TooFewRowsError, privacy_note, table_problems
from engine.errors import CancelledError, InvalidParameterError
from engine.fingerprint import FINGERPRINT_TEXT, keyed_hasher
from engine.mechanisms.base import PartitionPlan
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.release import ReleaseConfig, privatize, release_sampler, sampler_note
from engine.rng import SEEDED_WARNING
from engine.scale.atomic_output import check_output_directory, commit, staging_directory, write_partition
from engine.scale.partition_mechanisms import MODES, check_supported, stated_guarantee
from engine.scale.partition_preparation import (
    PreparationMap,
    canonical_digest,
    check_partition,
    check_whole_table,
    combine_moments,
    feature_matrix,
    partition_max_norm,
    partition_moments,
    prepare_columns,
    prepare_rows,
    public_map,
    raise_problem,
)
from engine.scale.partitioned_input import PartitionedInput, open_partitioned_input, read_partition

_FINGERPRINT_VERSION = b"privacy-parameter-studio/table/partitioned/v1\n"


# ------------------------------------------------------------------------------------------------ worker tasks
def _read(partition: Any, columns: tuple[str, ...]) -> tuple[Any, dict[str, Any] | None]:
    """The partition's data, or a problem report when the file cannot be read (errors travel back as data)."""
    import pyarrow

    try:
        return read_partition(partition, columns), None
    except (pyarrow.ArrowException, OSError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, {"message": f"could not read the input: {reason} — check or export the file again",
                      "control": "file", "column": None, "row": None}


def _stats_task(partition: Any, columns: tuple[str, ...], spec, moments: bool) -> dict[str, Any]:
    data, failure = _read(partition, columns)
    if failure is not None:
        return {"n": 0, "problem": failure}
    ranges: dict[str, tuple[float, float]] = {}
    problem, values = check_partition(data, spec, ranges)
    n = _length(data)
    report: dict[str, Any] = {"n": n, "problem": problem}
    if problem is None and n:
        features = tuple(spec.features)
        report["min"], report["max"] = _feature_ranges(values, features, ranges if ranges else None)
        if moments:
            report["moments"] = partition_moments(feature_matrix(values, spec))
    return report


def _feature_ranges(values: dict[str, np.ndarray], features: tuple[str, ...],
                    ranges: dict[str, tuple[float, float]] | None) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's smallest and largest value: from the partition check's ``ranges`` when it has them."""
    if ranges is not None:
        return np.array([ranges[f][0] for f in features]), np.array([ranges[f][1] for f in features])
    return (np.array([values[f].min() for f in features]), np.array([values[f].max() for f in features]))


def _length(data: pd.DataFrame | dict[str, np.ndarray]) -> int:
    return len(data) if isinstance(data, pd.DataFrame) else len(next(iter(data.values())))


def _max_norm_task(partition: Any, columns: tuple[str, ...], spec, centre: np.ndarray, scale: np.ndarray) -> float:
    values = check_partition(read_partition(partition, columns), spec)[1]
    return partition_max_norm(feature_matrix(values, spec), centre, scale)


def _gram_task(partition: Any, columns: tuple[str, ...], spec, prep: PreparationMap) -> tuple[np.ndarray, np.ndarray, int]:
    values = check_partition(read_partition(partition, columns), spec)[1]
    x = prepare_rows(feature_matrix(values, spec), prep)[0]
    return x.T @ x, x.sum(axis=0), x.shape[0]


@dataclass(frozen=True)
class PartitionJob:
    """Everything a pass-3 task needs, broadcast once to every worker."""

    columns: tuple[str, ...]
    spec: Any
    prep: PreparationMap | None  # None: public map computed from the spec (see public_map)
    plan: PartitionPlan
    sampler: str
    seeded: bool
    stream_entropy: Any
    stream_key: tuple[int, ...]
    stream_pool: int
    directory: str
    checked: bool  # partitions already checked in pass 1
    output_columns: tuple[str, ...]

    def rng(self, index: int) -> np.random.Generator:
        """The partition's own stream: child ``index`` of the parent sequence (as ``SeedSequence.spawn`` makes)."""
        seq = np.random.SeedSequence(self.stream_entropy, spawn_key=(*self.stream_key, index), pool_size=self.stream_pool)
        return np.random.default_rng(seq)


class StagingCancelToken(CancelToken):
    """Cancelled once the release's staging folder is gone: the driver removes it when the release stops (Ctrl-C,
    an error), before it closes the cluster. A partition task drawing vetted noise (minutes for a large partition)
    looks between chunks, at most every :data:`CANCEL_POLL` seconds, so the workers stop within about a second
    instead of finishing noise nobody will write — on a remote cluster too (its workers write into that folder)."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        self._directory = directory
        self._gone = False
        self._looked = -math.inf

    @property
    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self._gone and now - self._looked >= CANCEL_POLL:
            self._looked = now
            self._gone = not os.path.isdir(self._directory)
        return self._gone or super().cancelled


#: Seconds between a partition task's looks at its staging folder.
CANCEL_POLL = 0.25


def _release_task(partition: Any, index: int, job: PartitionJob) -> dict[str, Any]:
    data, failure = _read(partition, job.columns)
    if failure is not None:
        return {"index": index, "n": 0, "problem": failure}
    n = _length(data)
    ranges: dict[str, tuple[float, float]] = {}
    problem, values = check_partition(data, job.spec, ranges)
    del data
    report: dict[str, Any] = {"index": index, "n": n, "problem": problem}
    if problem is not None:
        return report
    features = tuple(job.spec.features)
    finite = len(ranges) == len(job.spec.columns)  # the fast check passed: no NaN, and each column's range is known
    report["digest"] = canonical_digest(values, job.spec, n, finite=finite)
    if not job.checked and n:
        report["min"], report["max"] = _feature_ranges(values, features, ranges if finite else None)
    prep = job.prep if job.prep is not None else public_map(job.spec.normalization, len(features))
    assert prep is not None, "the driver fits the map first when it needs the data's statistics"
    # The matrix is built and prepared a block of rows at a time from the columns (no stacked copy of the partition)
    x, report["clipped_rows"], report["clipped_values"] = prepare_columns(values, features, prep)
    del values
    # one thread per partition task: the cluster runs the partitions in parallel
    cancel = StagingCancelToken(job.directory) if job.sampler == "opendp" else None
    try:
        release = privatize(job.plan, x, sampler=job.sampler, rng=job.rng(index), seeded=job.seeded, workers=1,
                            cancel=cancel)
    except CancelledError:
        return {**report, "cancelled": True}
    value = np.asarray(release.value)
    report["details"], report["guarantee"] = dict(release.details), release.guarantee
    del x, release
    try:
        report["file"] = write_partition(value, job.output_columns, job.directory, index)
    except OSError as exc:
        report["io_error"] = f"cannot write partition {index} into {job.directory!r}: {exc.strerror or exc}"
    return report


# ------------------------------------------------------------------------------------------------ driver
def _run(client: Any, tasks: list, what: str, progress: ProgressCallback | None) -> list[Any]:
    """Compute Dask tasks, reporting progress as they finish; results in task order. Cancels the rest on failure."""
    from distributed import as_completed

    futures = client.compute(tasks)
    position = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(futures)
    try:
        done = 0
        if progress is not None:
            progress(Progress(0, len(futures), what))
        for future in as_completed(futures, loop=client.loop):
            results[position[future.key]] = future.result()
            done += 1
            if progress is not None:
                progress(Progress(done, len(futures), what))
    except BaseException:
        client.cancel(futures)
        raise
    return results


def _check_columns(plan: PartitionedInput, spec) -> None:
    empty = pd.DataFrame({c: pd.Series([], dtype=float) for c in plan.columns})
    problems = [p for p in table_problems(empty, spec) if not isinstance(p, TooFewRowsError)]
    if problems:
        raise problems[0]


def _raise_first_problem(reports: list[dict[str, Any]]) -> None:
    offset = 0
    for report in reports:
        if report["problem"] is not None:
            raise_problem(report["problem"], offset)
        offset += int(report["n"])


def _ranges(reports: list[dict[str, Any]], d: int) -> tuple[np.ndarray, np.ndarray]:
    kept = [r for r in reports if "min" in r]
    if not kept:
        return np.zeros(d), np.zeros(d)
    return np.min([r["min"] for r in kept], axis=0), np.max([r["max"] for r in kept], axis=0)


def fit_preparation(
    client: Any, plan: PartitionedInput, spec, progress: ProgressCallback | None = None
) -> tuple[PreparationMap | None, list[dict[str, Any]] | None]:
    """Pass 1: the data-dependent part of the map (None when the map is public) and the partitions' reports.

    Returns the :class:`PreparationMap` — centre, scale and row factor equal to the in-memory
    :func:`engine.data.preparation.prepare` up to floating-point summation order — or ``(None, None)`` when
    ``spec.normalization`` needs no statistic of the data.
    """
    import dask

    norm = spec.normalization
    d = len(spec.features)
    public = public_map(norm, d)
    if public is not None:
        return None, None
    stats = dask.delayed(_stats_task, pure=True)
    reports = _run(
        client,
        [stats(p, plan.columns, spec, norm.standardize) for p in plan.partitions],
        "pass 1: column statistics",
        progress,
    )
    _raise_first_problem(reports)
    rows = int(sum(r["n"] for r in reports))
    check_whole_table(rows, *_ranges(reports, d), spec)
    if norm.standardize:
        centre, scale = combine_moments([r["moments"] for r in reports if "moments" in r])
    else:
        centre, scale = np.zeros(d), np.ones(d)
    if not (np.all(np.isfinite(scale)) and np.all(scale > 0)):
        bad = int(np.flatnonzero(~(np.isfinite(scale) & (scale > 0)))[0])
        raise TableProblem(
            f"feature column {spec.features[bad]!r} cannot be scaled (its spread is zero or too large) — rescale "
            f"or remove it",
            control="features",
            column=spec.features[bad],
        )
    if norm.method == "clip":
        return PreparationMap(norm, centre, scale, 1.0), reports
    if norm.method == "scaled":  # numeric features only here: m = d
        return PreparationMap(norm, centre, scale, 1.0 / (SCALED_SPREAD * math.sqrt(d))), reports
    task = dask.delayed(_max_norm_task, pure=True)
    norms = _run(
        client, [task(p, plan.columns, spec, centre, scale) for p in plan.partitions], "pass 1b: largest row norm",
        progress,
    )
    biggest = float(max(norms))
    if not (math.isfinite(biggest) and biggest > 0):
        raise TableProblem(
            "the rows cannot be scaled into the unit ball (the largest row norm is zero or too large) — rescale the "
            "features",
            control="features",
        )
    return PreparationMap(norm, centre, scale, 1.0 / biggest, max_norm=biggest), reports


def partitioned_fingerprint(digests: list[str], rows: int, spec, partition_rows: int | None) -> str:
    """Keyed fingerprint of a partitioned table: HMAC (the data holder's key) over the partitions' digests.

    It identifies the same table read with the same partitioning; it differs from the in-memory fingerprint of
    the same table (that one hashes the columns in one piece).
    """
    h = keyed_hasher()
    h.update(_FINGERPRINT_VERSION)
    h.update(f"rows={rows}\npartition_rows={partition_rows}\n".encode())
    for digest in digests:
        h.update(bytes.fromhex(digest))
    h.update(b"spec\x00" + spec.key().encode("utf-8"))
    return h.hexdigest()


def run_out_of_core_release(
    client: Any,
    source: str | PartitionedInput,
    output: str,
    config: ReleaseConfig,
    *,
    mode: str = "global",
    sampler: str | None = None,
    partition_rows: int | None = None,
    progress: ProgressCallback | None = None,
    cluster: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Prepare and privatize the table at ``source`` on the cluster of ``client``; write ``output`` atomically.

    Parameters
    ----------
    client : distributed.Client
        From :func:`engine.scale.cluster.dask_client`.
    source : str or PartitionedInput
        Parquet/CSV file, folder or glob pattern (or an already planned input).
    output : str
        A new folder: partitioned Parquet (``part-00000.parquet`` …) plus ``_release.json``.
    config : ReleaseConfig
        Data spec, mechanism and seed (None = OS entropy).
    mode : {"global", "partitioned"}
        :data:`engine.scale.partition_mechanisms.MODES`.
    sampler : {"opendp", "numpy"}, optional
        The noise sampler; default :func:`engine.release.release_sampler` (OpenDP for an unseeded release of a
        mechanism it can express, numpy otherwise). A sampler the mechanism cannot use is refused.
    partition_rows : int, optional
        Rows per partition (Parquet input).
    progress : callable, optional
        Called with :class:`engine.progress.Progress` after every finished partition of every pass.
    cluster : dict, optional
        :func:`engine.scale.cluster.cluster_summary`, recorded in the metadata.
    overwrite : bool
        Replace an existing release folder under ``output`` once the new release is complete
        (:func:`engine.scale.atomic_output.check_output_directory`).

    Returns
    -------
    dict
        The summary also written as the sidecar: the fields of :func:`engine.release.release_summary` (guarantee,
        noise, details, seed and warning, data fingerprint summary, preparation and its privacy note, config)
        plus ``output``, ``rows``, ``columns`` and ``execution`` (engine, mode, partitions, passes, cluster).

    Raises
    ------
    EngineError
        Unsupported mechanism or mode, bad input, output folder exists, data problems (named by whole-table row).
    """
    import dask

    if not isinstance(config, ReleaseConfig):
        raise InvalidParameterError(f"config must be a ReleaseConfig; got {type(config).__name__}")
    started = time.perf_counter()
    mechanism = config.build_mechanism()
    mode, mode_note = check_supported(mechanism, mode)
    chosen = release_sampler(config, sampler)
    check_output_directory(output, overwrite=overwrite)
    plan = source if isinstance(source, PartitionedInput) else open_partitioned_input(source, partition_rows=partition_rows)
    out, _ = check_output_directory(output, overwrite=overwrite, inputs=[("--input", p) for p in plan.paths])
    spec = config.data
    _check_columns(plan, spec)
    d = len(spec.features)
    timings: dict[str, float] = {}

    root = np.random.SeedSequence(config.seed)
    driver_seq, parent = root.spawn(2)

    t_import = time.perf_counter()
    client.run(importlib.import_module, __name__)  # every worker imports the engine once, before the passes
    timings["worker imports"] = time.perf_counter() - t_import

    t0 = time.perf_counter()
    prep, stats_reports = fit_preparation(client, plan, spec, progress)
    if stats_reports is not None:
        timings["pass 1 (statistics)"] = time.perf_counter() - t0
    public = public_map(spec.normalization, d)

    def covariance(kind: str) -> np.ndarray:
        t1 = time.perf_counter()
        task = dask.delayed(_gram_task, pure=True)
        parts = _run(client, [task(p, plan.columns, spec, prep or public) for p in plan.partitions],
                     "pass 2: XᵀX", progress)
        gram = np.sum([g for g, _, _ in parts], axis=0)
        sums = np.sum([s for _, s, _ in parts], axis=0)
        n = int(sum(m for _, _, m in parts))
        timings["pass 2 (XᵀX)"] = time.perf_counter() - t1
        if kind == "gram":
            return gram
        mean = sums / n
        return np.atleast_2d((gram - n * np.outer(mean, mean)) / (n - 1))

    partition_plan, details = mechanism.partition_plan(mode, d, np.random.default_rng(driver_seq), covariance)
    # As release_frame: the features' names, or z1 … zk when the mechanism changes the dimension (JL + Laplace).
    k = partition_plan.output_dimension(d)
    output_columns = tuple(spec.features) if k == d and not mechanism.tags().projects else tuple(
        f"z{i + 1}" for i in range(k))

    t2 = time.perf_counter()
    with staging_directory(out) as staging:
        job = PartitionJob(
            columns=plan.columns, spec=spec, prep=prep, plan=partition_plan, sampler=chosen, seeded=config.seeded,
            stream_entropy=parent.entropy,
            stream_key=tuple(parent.spawn_key), stream_pool=parent.pool_size, directory=str(staging),
            checked=stats_reports is not None, output_columns=output_columns,
        )
        job_future = client.scatter(job, broadcast=True, hash=False)
        task = dask.delayed(_release_task, pure=True)
        reports = _run(client, [task(p, j, job_future) for j, p in enumerate(plan.partitions)],
                       "release", progress)
        if any(r.get("cancelled") for r in reports):  # the staging folder went away under the release
            raise CancelledError("the release was cancelled (its staging folder was removed); nothing was written")
        _raise_first_problem(reports)
        for report in reports:
            if "io_error" in report:
                raise InvalidParameterError(report["io_error"])
        rows = int(sum(r["n"] for r in reports))
        if stats_reports is None:
            check_whole_table(rows, *_ranges(reports, d), spec)
        timings["pass 3 (release)"] = time.perf_counter() - t2
        details = partition_plan.finish(details, [(int(r["n"]), r["details"]) for r in reports], d)
        details["sampler"] = chosen
        released = next((r["guarantee"] for r in reports if r["n"]), None)
        guarantee = released if released is not None else mechanism.guarantee()
        summary = _summary(
            config, mechanism, chosen, guarantee, mode, plan, details, reports, rows, output_columns, out, timings,
            time.perf_counter() - started, cluster,
        )
        if mode_note is not None:
            summary["execution"]["mode_note"] = mode_note
        commit(staging, out, summary, overwrite=overwrite)
    return summary


def _summary(config, mechanism, sampler, released, mode, plan, details, reports, rows, columns, out, timings,
             seconds, cluster):
    guarantee = stated_guarantee(released, mode, plan.npartitions)
    implied = guarantee.implied_dp()
    noise = details.get("noise_sd_per_coordinate")
    norm = config.data.normalization
    spec = config.data
    digests = [r["digest"] for r in reports]
    return _jsonable({
        "output": str(out),
        "rows": rows,
        "columns": list(columns),
        "mechanism": config.kind,
        "sampler": {
            "name": sampler,
            "note": sampler_note(sampler, kind=mechanism.KIND, tags=mechanism.tags(), seeded=config.seeded),
        },
        "guarantee": {
            "headline": guarantee.headline(),
            "describe": list(guarantee.describe()),
            "dict": guarantee.to_dict(),
            "implied_dp": implied.to_dict() if implied is not guarantee else None,
        },
        "noise_sd_per_coordinate": None if noise is None or (isinstance(noise, float) and math.isnan(noise)) else noise,
        "details": dict(details),
        "seconds": seconds,
        "seeded": config.seeded,
        "seed": config.seed,
        "warning": SEEDED_WARNING if config.seeded else None,
        "data": {
            "n": rows,
            "d": len(spec.features),
            "features": list(spec.features),
            "target": spec.target,
            "roles": dict(spec.roles or {}),
            "normalization": norm.to_dict(),
            "sha256": partitioned_fingerprint(digests, rows, spec, plan.partition_rows),
            "fingerprint_scheme": (
                f"{FINGERPRINT_TEXT}; computed over the {plan.npartitions} partitions' digests, so it matches "
                "the same table read with the same partitioning, not the in-memory fingerprint"
            ),
        },
        "preparation": {
            "description": norm.describe(),
            "privacy_note": privacy_note(norm),
            "internal_not_private": {
                "clipped_rows": int(sum(r["clipped_rows"] for r in reports)),
                "clipped_values": int(sum(r["clipped_values"] for r in reports)),
                "note": "exact counts from the confidential data: keep internal, do not publish with the release",
            },
            "output_units": (
                "prepared scale: each input row was mapped into the unit L2 ball as described; the released "
                "values are not in the data's original units"
            ),
        },
        "config": config.to_dict(),
        "execution": {
            "engine": "dask",
            "mode": mode,
            "mode_text": MODES[mode].format(m=plan.npartitions),
            "input": plan.describe(),
            "random_streams": (
                "one SeedSequence (the seed, or OS entropy) split into a driver stream (shared pieces) and one child "
                "stream per partition index: the output does not depend on the number of workers"
            ),
            "passes_seconds": timings,
            "cluster": cluster,
            "files": [r["file"] for r in reports],
        },
    })


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Path):
        return str(value)
    return value


__all__ = ["PartitionJob", "fit_preparation", "partitioned_fingerprint", "run_out_of_core_release"]
