r"""Sweep runner: the holdout, the cells (inline or in a process pool), the in-process cache and the reference
markers.

See :mod:`engine.sweeps` for the design (holdout, seeds, parallelism, cache).
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures as cf
import dataclasses
import functools
import hashlib
import itertools
import math
import multiprocessing
import os
import pickle
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from engine.accounting.tdp import tdp_to_dp
from engine.analysis import (
    AnalysisData,
    PointAnalysis,
    PreparedRows,
    analyse,
    clear_analysis_cache,
)
from engine.errors import CancelledError, InvalidParameterError, ResourceLimitError
from engine.mechanisms import RecordMechanism
from engine.progress import CancelToken, Progress, ProgressCallback
from engine.rng import spawn_seeds
from engine.sweeps.grid import GridPoint, SweepConfig
from engine.sweeps.results import SweepResult
from engine.validation import check_integer

__all__ = ["CACHE_SIZE", "analyse_reference", "clear_cache", "default_workers", "estimate_seconds", "plan_sweeps",
           "run_sweep", "shutdown_pools", "warm_pool"]

#: Finished sweeps kept by the in-process cache.
CACHE_SIZE = 8
#: Most worker processes one sweep may use.
MAX_WORKERS = 64
#: Sweeps estimated to take less than this many seconds in one process run inline (:func:`plan_sweeps`): a pool's
#: first start (its processes' imports, the attacks' compiled kernels, the data's context in each) costs about as much.
INLINE_BELOW_SECONDS = 5.0


@dataclass
class _Context:
    """Everything a cell needs that does not depend on the noise (sent to each worker once)."""

    config: SweepConfig
    data: AnalysisData
    points: list[GridPoint]


_WORKER_CONTEXT: _Context | None = None
#: The sweep whose context a worker process holds (see :func:`_worker_cell`).
_WORKER_TOKEN: int | None = None
#: Modules the forkserver imports once, so that forked workers start with them loaded.
_WORKER_MODULES: tuple[str, ...] = (
    "engine.sweeps.grid",
    "engine.sweeps.results",
    "engine.sweeps.runner",
    "engine.mechanisms.private_projection",
    "engine.mechanisms.gaussian",
    "engine.mechanisms.jl_laplace",
    "engine.attacks.singling_out",
    "engine.attacks.attribute_inference",
    "engine.attacks.distinguishing",
    "engine.attacks._chebyshev",
    "engine.attacks._l1",
    "engine.evaluation.programs",
    "threadpoolctl",
)
_CACHE: collections.OrderedDict[str, SweepResult] = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()
#: Cells that :func:`estimate_seconds` timed, by (sweep cache key, cell): the sweep that follows takes their rows
#: instead of running them again (the same cell, seed and context give the same row). At most :data:`_TIMED_SIZE`.
_TIMED: collections.OrderedDict[tuple[str, int], dict] = collections.OrderedDict()
_TIMED_SIZE = 16


def clear_cache() -> None:
    """Forget every cached sweep (and the analysis inputs kept for them)."""
    with _CACHE_LOCK:
        _CACHE.clear()
        _TIMED.clear()
    clear_analysis_cache()


def _cache_key(fingerprint: str, config: SweepConfig) -> str:
    return hashlib.sha256((fingerprint + "\x00" + config.to_json(sort_keys=True)).encode()).hexdigest()


def _data_fingerprint(data: PreparedRows) -> str:
    """The data's fingerprint (computed from the arrays when the object has none), checking it is prepared data."""
    from engine.analysis import _data_arrays

    return _data_arrays(data, need_outcome=True)[3]


def _point_descriptors(point: GridPoint, config: SweepConfig, mechanism: RecordMechanism | None = None
                       ) -> dict[str, Any]:
    if point.budget is None:
        return {
            "point": point.index, "reference": point.reference, "mechanism": "none", "b": math.nan,
            "epsilon1": math.nan, "delta1": math.nan, "epsilon2": math.nan, "delta2": math.nan,
            "epsilon": math.nan, "delta": math.nan, "implied_epsilon": math.nan, "implied_delta": math.nan,
        }
    budget = point.budget
    assert mechanism is not None
    # ε and δ are what the point's guarantee states: the budget's totals for a mechanism that spends it exactly,
    # the achieved δ_fail (≤ the target) for the JL release. The budget's split is kept so that sweeps of every
    # mechanism over the same budgets line up row for row. An element-wise guarantee covers one entry, so no
    # whole-record (classic DP) statement is implied.
    e1, d1, e2, d2 = float(budget.epsilon1), float(budget.delta1), float(budget.epsilon2), float(budget.delta2)
    guarantee = _point_guarantee(mechanism)
    eps, dlt = float(guarantee.epsilon), float(guarantee.delta)
    if guarantee.relation == "element":
        implied_eps, implied_delta = math.nan, math.nan
    else:
        implied_eps, implied_delta = tdp_to_dp(eps, dlt, point.b)
    return {
        "point": point.index, "reference": point.reference, "mechanism": config.mechanism, "b": point.b,
        "epsilon1": e1, "delta1": d1, "epsilon2": e2, "delta2": d2, "epsilon": eps, "delta": dlt,
        "implied_epsilon": float(implied_eps), "implied_delta": float(implied_delta),
    }


@functools.lru_cache(maxsize=1024)
def _point_guarantee(mechanism: RecordMechanism) -> Any:
    """The grid point's guarantee (data-free; once per configuration and process, not per repetition)."""
    return mechanism.guarantee()


def _run_cell(ctx: _Context, cell: int, point_index: int, rep: int, seed: np.random.SeedSequence) -> dict:
    cpu_started = time.process_time()
    point = ctx.points[point_index]
    config = ctx.config
    if point.budget is None:
        mechanism = None
        row: dict[str, Any] = _point_descriptors(point, config)
    else:
        mechanism = config.mechanism_for(point.b, point.budget, d=ctx.data.x_rel.shape[1])
        row = _point_descriptors(point, config, mechanism)
    row["rep"] = rep
    row.update(analyse(ctx.data, mechanism, seed=seed).row())
    # CPU time is a diagnostic (it varies run to run), kept out of the deterministic table.
    return {"cell": cell, **row, "_cpu_seconds": time.process_time() - cpu_started}


def _init_worker() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def _reference_cell(ctx: _Context, cell: int, mechanism: RecordMechanism, seed: np.random.SeedSequence,
                    whole: bool) -> dict:
    """One release of :func:`analyse_reference`: its whole analysis when ``whole`` (the first release's, which the
    caller keeps), else only its typed numbers (the release itself is not sent back)."""
    result = analyse(ctx.data, mechanism, seed=seed)
    return {"cell": cell, "result": result if whole else None, "metrics": result.metrics}


def _task(kind: str) -> Callable[..., dict]:
    """What a pool task of ``kind`` runs: ``"cell"`` a sweep's cell, ``"reference"`` a release of a reference."""
    tasks: dict[str, Callable[..., dict]] = {"cell": _run_cell, "reference": _reference_cell}
    return tasks[kind]


def _worker_cell(token: int, payload: bytes | None, kind: str, cell: int, *args: Any) -> dict:
    """``_task(kind)(context, cell, *args)`` in a pool worker. A worker keeps the context of the last sweep it served
    (``token``); when it holds another sweep's, it installs ``payload`` (the pickled context) or, without one, asks
    for it."""
    global _WORKER_CONTEXT, _WORKER_TOKEN
    if token != _WORKER_TOKEN:
        if payload is None:
            return {"cell": cell, _NEED_CONTEXT: True}
        _WORKER_CONTEXT, _WORKER_TOKEN = pickle.loads(payload), token
    assert _WORKER_CONTEXT is not None
    return _task(kind)(_WORKER_CONTEXT, cell, *args)


def _analysis_data(data: PreparedRows, config: SweepConfig, use_cache: bool = True) -> AnalysisData:
    """The sweep's analysis inputs (holdout split, non-private program and singling-out references):
    :meth:`AnalysisData.cached`, so a sweep, its time estimate, its reference markers and the Mechanisms page's runs
    on the same data build them once."""
    analysis = config.analysis_config()
    return AnalysisData.cached(data, analysis) if use_cache else AnalysisData.build(data, analysis)


def _build_context(data: PreparedRows, config: SweepConfig, use_cache: bool) -> _Context:
    analysis_data = _analysis_data(data, config, use_cache)
    points = config.points()
    if config.mechanism_class.TAGS.projects:
        # Every grid point of a projected release has the sweep's dimension: check the adversary's known records
        # once, up front, on the first private point.
        first = next((p.b, p.budget) for p in points if p.budget is not None)
        analysis_data.check_mechanism(config.mechanism_for(first[0], first[1], d=analysis_data.x_rel.shape[1]))
    return _Context(config, analysis_data, points)


def run_sweep(
    data: PreparedRows,
    config: SweepConfig,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
    workers: int = 1,
    on_row: Callable[[dict], None] | None = None,
    use_cache: bool = True,
    client: Any = None,
) -> SweepResult:
    """Run a tradeoff sweep on prepared data.

    Parameters
    ----------
    data : PreparedData
        Prepared features ``x`` (rows in the unit L2 ball), outcome ``y``, program ``extras`` and ``fingerprint``
        (any object with these attributes; the fingerprint is computed if missing).
    config : SweepConfig
    progress : callable, optional
        Called with :class:`~engine.progress.Progress` after every finished cell.
    cancel : CancelToken, optional
        Checked between cells. When set, running cells finish, no new cell starts, and
        :class:`~engine.errors.CancelledError` is raised; its attribute ``partial`` is a :class:`SweepResult`
        with ``complete=False`` holding every finished row (also delivered one by one through ``on_row``).
    workers : int
        Worker processes, in [1, 64]; 1 runs inline. The table does not depend on it.
    on_row : callable, optional
        Called with every finished row (a dict) as it arrives (in completion order).
    use_cache : bool
        Reuse (and store) a finished sweep with the same data fingerprint and configuration, and the analysis inputs
        (holdout, non-private program and singling-out references) that :func:`estimate_seconds`,
        :func:`analyse_reference` and other sweeps of the same data and analysis configuration share.
    client : distributed.Client, optional
        Run the cells as tasks on this Dask cluster instead of local processes (``workers`` is then ignored). The
        cell context (prepared data, holdout, references) is scattered to every worker once, not shipped per task;
        every cell's seed comes from the grid, so the table is the local run's, cell for cell. Progress, ``cancel``
        (pending tasks are cancelled, running ones finish) and partial results work as with the local pool. See
        :func:`engine.scale.cluster.dask_client` for a client to a running scheduler or a ``LocalCluster``.

    Returns
    -------
    SweepResult

    Raises
    ------
    CancelledError
        The cancel token was set (``err.partial`` holds the finished rows).
    DataValidationError, InsufficientDataError, InvalidParameterError
        The data do not fit the program or the grid.
    """
    if not isinstance(config, SweepConfig):
        raise InvalidParameterError(f"config must be a SweepConfig; got {type(config).__name__}")
    n_workers = check_integer("workers", workers, 1, MAX_WORKERS)
    fingerprint = _data_fingerprint(data)
    key = _cache_key(fingerprint, config)
    if use_cache:
        with _CACHE_LOCK:
            cached = _CACHE.get(key)
            if cached is not None:
                _CACHE.move_to_end(key)
        if cached is not None:
            total = len(cached.table)
            if progress is not None:
                progress(Progress(total, total, "loaded from cache"))
            return dataclasses.replace(cached, table=cached.table.copy(), from_cache=True)

    started = time.perf_counter()
    if cancel is not None:
        cancel.raise_if_cancelled("the sweep")
    points = config.points()
    tasks = [(p.index, rep) for p in points for rep in range(config.repetitions)]
    seeds = spawn_seeds(config.seed, len(tasks) + 1)
    ctx = _build_context(data, config, use_cache)  # the holdout comes from the analysis configuration's holdout_seed
    total = len(tasks)
    rows: dict[int, dict] = {}

    cpu = [0.0]

    def finished(row: dict) -> None:
        cpu[0] += float(row.pop("_cpu_seconds", 0.0))
        rows[row["cell"]] = row
        if on_row is not None:
            on_row(dict(row))
        if progress is not None:
            point = ctx.points[int(row["point"])]
            label = "non-private" if point.budget is None else f"B={point.b:g}, ε={point.budget.epsilon:g}"
            progress(Progress(len(rows), total, f"{label}, repetition {int(row['rep']) + 1}",
                              elapsed=time.perf_counter() - started))

    todo = list(range(total))
    if use_cache:  # cells the time estimate ran (estimate_seconds): their rows, not a second run
        with _CACHE_LOCK:
            timed = [_TIMED.pop((key, cell)) for cell in todo if (key, cell) in _TIMED]
        for row in timed:
            finished(dict(row))
        todo = [cell for cell in todo if cell not in rows]
    cancelled = False
    if client is not None:
        cancelled = _run_dask(client, ctx, tasks, todo, seeds, cancel, finished)
    elif n_workers == 1:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            for cell in todo:
                if cancel is not None and cancel.cancelled:
                    cancelled = True
                    break
                point_index, rep = tasks[cell]
                finished(_run_cell(ctx, cell, point_index, rep, seeds[cell + 1]))
    else:
        cancelled = _run_pool(ctx, todo, "cell", lambda cell: (*tasks[cell], seeds[cell + 1]), n_workers, cancel,
                              finished)

    table = _table([rows[c] for c in sorted(rows)])
    result = SweepResult(
        config=config,
        table=table,
        fingerprint=fingerprint,
        n_released=ctx.data.n_released,
        n_holdout=ctx.data.n_holdout,
        complete=not cancelled,
        seconds=time.perf_counter() - started,
        cpu_seconds=cpu[0],
    )
    if cancelled:
        err = CancelledError(
            f"the sweep was cancelled after {len(rows)} of {total} cells; the finished rows are kept"
        )
        err.partial = result  # type: ignore[attr-defined]
        raise err
    if use_cache:
        with _CACHE_LOCK:
            _CACHE[key] = dataclasses.replace(result, table=table.copy())
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    return result


def _start_method() -> str:
    """``fork`` from a single-threaded process (the CLI, scripts: instant start, nothing re-imported);
    ``forkserver`` when other threads run (the dashboard: forking a threaded process is unsafe); ``spawn`` where
    neither exists."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


#: Marks a pool worker's answer "send me this sweep's context" (it held another sweep's).
_NEED_CONTEXT = "_need_context"
#: Worker pools kept for the session, by (workers, start method): started by the first sweep, reused by the next
#: ones (no process start-up, imports or compilation per sweep), shut down at exit (:func:`shutdown_pools`).
_POOLS: dict[tuple[int, str], cf.ProcessPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
_SWEEP_TOKENS = itertools.count(1)


def _pool(n_workers: int, method: str | None = None) -> cf.ProcessPoolExecutor:
    """The session's pool of ``n_workers`` processes for ``method`` (default: the current :func:`_start_method`),
    started when first asked."""
    method = _start_method() if method is None else method
    with _POOLS_LOCK:
        pool = _POOLS.get((n_workers, method))
        if pool is None and method == "forkserver":
            # A pool forked earlier (before the session had threads — a pool's own threads included) is safe to reuse.
            pool = _POOLS.get((n_workers, "fork"))
        if pool is None:
            mp_context = multiprocessing.get_context(method)
            if method == "forkserver":
                # Workers fork from a server that has already imported everything a cell needs.
                mp_context.set_forkserver_preload(list(_WORKER_MODULES))
            pool = cf.ProcessPoolExecutor(max_workers=n_workers, mp_context=mp_context, initializer=_init_worker)
            _POOLS[(n_workers, method)] = pool
        return pool


def _warm_worker() -> None:
    """A pool worker's first task from :func:`warm_pool`: load the attacks' compiled kernels (from numba's cache)."""
    from engine.attacks.precompile import compile_kernels

    compile_kernels()


def warm_pool(workers: int) -> None:
    """Start the session's pool of ``workers`` processes (:func:`_pool`) and load the attacks' kernels in each, in the
    background: returns at once (a forked pool, for a process without other threads, starts in milliseconds and is
    started before returning), and a pooled sweep that follows finds the workers ready (in a running pool the tasks
    take microseconds). Nothing for one worker (inline). On a machine with a spare core this costs no wall time: the
    timed cells of the estimate, and an inline sweep, use one core."""
    n_workers = check_integer("workers", workers, 1, MAX_WORKERS)
    if n_workers == 1:
        return
    method = _start_method()  # decided here: the thread below would make this process look threaded

    def start() -> None:
        pool = _pool(n_workers, method)
        try:
            for _ in range(n_workers):
                pool.submit(_warm_worker)
        except (RuntimeError, cf.BrokenExecutor):
            # Shut down (at exit, shutdown_pools) or broken meanwhile: nothing to warm; a sweep starts a new pool.
            pass

    if method == "fork":
        start()  # forking takes milliseconds, and forking from a second thread would not be safe
    else:  # the forkserver imports the workers' modules first (about a second): not on the caller's time
        threading.Thread(target=start, name="warm-pool", daemon=True).start()


def shutdown_pools() -> None:
    """Stop the session's worker processes (run at exit; the next pooled sweep starts new ones)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown_pools)


def _run_pool(ctx: _Context, todo: list[int], kind: str, arguments: Callable[[int], tuple],
              n_workers: int, cancel: CancelToken | None, finished: Callable[[dict], None]) -> bool:
    """Run ``_task(kind)(ctx, cell, *arguments(cell))`` for the cells ``todo`` in the session's worker processes, at
    most 2 × workers in flight, handing each answer to ``finished``; returns True when cancelled.

    The context goes to each worker once per sweep: a task carries only the sweep's token, and a worker holding
    another sweep's context answers so; that cell is sent again with the pickled context. A broken pool (a worker
    killed) is dropped, so the next sweep starts a new one.
    """
    token = next(_SWEEP_TOKENS)
    payload = pickle.dumps(ctx, protocol=pickle.HIGHEST_PROTOCOL)
    pool = _pool(n_workers)
    cancelled = False
    pending: set[cf.Future] = set()
    retry: list[int] = []  # cells whose worker asked for the context
    next_cell = 0  # position in todo

    def submit(cell: int, with_context: bool) -> None:  # the first tasks carry the context: no round trip
        pending.add(pool.submit(_worker_cell, token, payload if with_context else None, kind, cell, *arguments(cell)))

    try:
        while next_cell < len(todo) or pending or retry:
            while retry:
                submit(retry.pop(), True)
            while not cancelled and next_cell < len(todo) and len(pending) < 2 * n_workers:
                submit(todo[next_cell], next_cell < 2 * n_workers)
                next_cell += 1
            done, pending = cf.wait(pending, timeout=0.2, return_when=cf.FIRST_COMPLETED)
            for future in done:
                row = future.result()
                if row.pop(_NEED_CONTEXT, False):
                    retry.append(int(row["cell"]))
                else:
                    finished(row)
            if cancel is not None and cancel.cancelled and not cancelled:
                cancelled = True
                next_cell = len(todo)  # submit nothing more; let the running cells finish
                retry.clear()
    except BaseException as exc:
        for future in pending:  # not started yet: never run; running ones finish in the background
            future.cancel()
        if isinstance(exc, cf.BrokenExecutor):
            with _POOLS_LOCK:
                for key, kept in list(_POOLS.items()):
                    if kept is pool:
                        del _POOLS[key]
            raise ResourceLimitError(
                "a worker process stopped before it finished (most often the machine ran out of memory); the next "
                "run starts new ones — run again, with fewer worker processes if it happens again"
            ) from exc
        raise
    return cancelled


def _dask_cell(ctx: _Context, cell: int, point_index: int, rep: int, seed: np.random.SeedSequence) -> dict:
    """One cell on a Dask worker, single-threaded BLAS like a pool worker (the numbers do not depend on it)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _run_cell(ctx, cell, point_index, rep, seed)


def _run_dask(client: Any, ctx: _Context, tasks, todo: list[int], seeds, cancel: CancelToken | None,
              finished: Callable[[dict], None]) -> bool:
    """Run the cells ``todo`` as tasks on a Dask cluster; returns True when cancelled.

    The context goes to every worker once (``scatter(broadcast=True)``); at most 2 × workers tasks are in flight, so
    a cancel leaves little running. Any exception raised while rows arrive (the dashboard's stop of a closed or
    rerun session) cancels the tasks not yet finished before it propagates.
    """
    from distributed import as_completed

    workers = max(1, len(client.scheduler_info(n_workers=-1).get("workers", {})))
    context = client.scatter(ctx, broadcast=True)
    in_flight = 2 * workers
    next_cell = 0
    cancelled = False

    def submit(cell: int):
        point_index, rep = tasks[cell]
        return client.submit(_dask_cell, context, cell, point_index, rep, seeds[cell + 1], pure=False,
                             key=f"sweep-cell-{cell}-{secrets.token_hex(4)}")

    first: list[Any] = []
    while next_cell < len(todo) and len(first) < in_flight:
        first.append(submit(todo[next_cell]))
        next_cell += 1
    running = as_completed(first, loop=client.loop)
    try:
        for future in running:
            finished(future.result())
            if cancel is not None and cancel.cancelled:
                cancelled = True
                break
            if next_cell < len(todo):
                running.add(submit(todo[next_cell]))
                next_cell += 1
    finally:
        leftover = list(running.futures)  # submitted, not yet handed out
        if leftover:
            client.cancel(leftover)
        client.cancel([context])
    return cancelled


def _table(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if "cell" in frame.columns:
        frame = frame.drop(columns="cell")
    return frame.reset_index(drop=True)


def analyse_reference(data: PreparedRows, config: SweepConfig, mechanism: RecordMechanism, *, repetitions: int | None = None,
                      workers: int = 1) -> PointAnalysis:
    """A mechanism outside the grid (e.g. k-anonymity, the paper's non-DP baseline) analysed on exactly the
    sweep's released rows and holdout, with ``repetitions`` (default: the sweep's) releases, so its marker sits on
    the same axes as the sweep's points.

    Seeds: the sweep's holdout (the analysis configuration's holdout_seed), and releases from a stream spawned from
    the sweep seed that no cell uses. ``workers`` > 1 analyses the releases in the session's worker processes, as a
    sweep's cells (single-threaded BLAS, as in a sweep); the numbers do not depend on it.
    """
    reps = config.repetitions if repetitions is None else check_integer("repetitions", repetitions, 1, 10_000)
    n_workers = check_integer("workers", workers, 1, MAX_WORKERS)
    built = _analysis_data(data, config)
    seeds = np.random.SeedSequence(config.seed, spawn_key=(2**31,)).spawn(reps)
    if n_workers == 1 or reps == 1:
        results = [analyse(built, mechanism, seed=s) for s in seeds]
        return PointAnalysis(mechanism, results[0], tuple(r.metrics for r in results))
    found: dict[int, dict] = {}
    _run_pool(_Context(config, built, config.points()), list(range(reps)), "reference",
              lambda cell: (mechanism, seeds[cell], cell == 0), n_workers, None,
              lambda answer: found.__setitem__(int(answer["cell"]), answer))
    return PointAnalysis(mechanism, found[0]["result"], tuple(found[r]["metrics"] for r in range(reps)))


def default_workers() -> int:
    """Worker processes a sweep runs on unless told otherwise: one per core this process may use (its CPU affinity,
    e.g. a container's share, where the system reports it), at most :data:`MAX_WORKERS`. The page and the command line
    start with it; a sweep on one worker runs inline.

    >>> 1 <= default_workers() <= (os.cpu_count() or 1)
    True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity (macOS, Windows)
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def estimate_seconds(data: PreparedRows, configs: Sequence[SweepConfig], workers: int = 1) -> float:
    """Wall time the sweeps will take, from one timed cell of each (the middle one of the private grid points'
    first repetitions: a cell's cost falls as B grows, by 1.5-2.5× across the quick grid on 25,000 × 30, so the
    first point overstated the sweep by about 70 %), divided among ``workers``. A rough figure to show before a long
    run starts; the progress bar refines it.

    The timed cell is the sweep's own (its seed, single-threaded BLAS as in the sweep): its row is kept, and the next
    :func:`run_sweep` of that configuration on the same data (with ``use_cache``) takes it instead of running the
    cell again, so the estimate costs no extra work. The cells of several configurations are timed at once on
    threads (the attacks' kernels and numpy release the interpreter lock), each by its thread's CPU time — a pool
    worker's cell runs on one core, so its CPU time is its wall time there."""
    from threadpoolctl import threadpool_limits

    n_workers = check_integer("workers", workers, 1, MAX_WORKERS)
    fingerprint = _data_fingerprint(data)

    def timed(config: SweepConfig) -> float:
        ctx = _build_context(data, config, True)
        tasks = [(p.index, rep) for p in ctx.points for rep in range(config.repetitions)]
        private = [c for c, (index, rep) in enumerate(tasks) if ctx.points[index].budget is not None and rep == 0]
        cell = private[len(private) // 2]
        seeds = spawn_seeds(config.seed, len(tasks) + 1)
        with threadpool_limits(1):  # here too: OpenMP's limit is per thread (BLAS's is the caller's, process-wide)
            started = time.thread_time()
            row = _run_cell(ctx, cell, tasks[cell][0], tasks[cell][1], seeds[cell + 1])
            seconds = time.thread_time() - started
        row["_cpu_seconds"] = seconds  # process_time would count the other thread's cell too
        with _CACHE_LOCK:
            _TIMED[(_cache_key(fingerprint, config), cell)] = row
            while len(_TIMED) > _TIMED_SIZE:
                _TIMED.popitem(last=False)
        return seconds * config.n_cells

    for config in configs:  # the analysis inputs once, before the threads (they share them)
        _analysis_data(data, config)
    with threadpool_limits(1):
        if len(configs) > 1:
            with cf.ThreadPoolExecutor(min(len(configs), os.cpu_count() or 1), thread_name_prefix="estimate") as pool:
                total = sum(pool.map(timed, configs))
        else:
            total = sum(timed(config) for config in configs)
    return total / min(n_workers, os.cpu_count() or 1)


def plan_sweeps(data: PreparedRows, configs: Sequence[SweepConfig], workers: int) -> tuple[int, float]:
    """The worker processes to run ``configs`` on and the wall time that will take: ``(workers, seconds)``.

    ``workers`` as asked, except 1 (inline) when the sweeps would take under :data:`INLINE_BELOW_SECONDS` in one
    process (:func:`estimate_seconds`): a pool would not repay its start-up, and the table does not depend on it.
    With more than one worker asked, the session's pool starts in the background first (:func:`warm_pool`), so its
    start-up overlaps the timed cells instead of following them.
    """
    n_workers = check_integer("workers", workers, 1, MAX_WORKERS)
    warm_pool(n_workers)
    inline = estimate_seconds(data, configs, 1)
    chosen = 1 if inline < INLINE_BELOW_SECONDS else n_workers
    return chosen, inline / min(chosen, os.cpu_count() or 1)
