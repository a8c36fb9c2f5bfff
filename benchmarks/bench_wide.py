"""Benchmark a Mechanisms run on wide tables (issue 35 item 1): 2,000 rows × 10 to 500 columns, and a Stop.

Rows:

* ``Mechanisms run, 2,000 × d`` for d in :data:`COLUMNS` — the page's one engine call,
  :func:`engine.release_analysis.analyse_release`, as the page makes it: the private projection (B = 0.25, ε = 4,
  δ = 1/(n + 1)) released, then it and its alternatives at the same guarantee (Gaussian, JL + Laplace, k-anonymity
  with k = 2) analysed — five releases each, the program on each, the three attacks on every release — with the page's
  threads (``PAGE_THREADS``) and one BLAS thread, as the server runs it. On a generated table with a yes/no outcome
  (``bench_dashboard._generated_table``; classification program). Wall and CPU seconds, the CPU seconds of the attacks
  (attribute inference, singling out) summed over the four mechanisms, and the run's time estimate
  (:func:`engine.release_analysis.estimate_release_analysis`, what the page says before a run of more than
  ``CONFIRM_SECONDS``) next to the measured time. Target: 2,000 × 500 under 30 s.
* ``one analysis, 2,000 × d`` — :func:`engine.analysis.analyse` of the chosen mechanism's first release with the
  three attacks (the analysis' one entry point; its first call on the data includes the non-private references,
  which are timed apart), single-threaded.
* ``Stop during a run, 2,000 × 500`` — the same run in a worker thread, its cancel token set :data:`STOP_AFTER`
  seconds after the first attribute-inference attack started: seconds until the run's call has returned
  (:class:`~engine.errors.CancelledError`) and until every thread it started has ended. Target: 2 s.

The machine is shared: the load average is printed with every row, and the CPU seconds are the figures to compare.
Run ``python benchmarks/bench_wide.py`` (``--columns 10,100`` for some widths only) or
``bash scripts/studio.sh bench wide``.
"""

from __future__ import annotations

import os
import pathlib
import sys
import threading
import time

if __name__ == "__main__":  # allow running as a script from anywhere
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


#: Rows of the generated tables.
ROWS = 2_000
#: Column counts benchmarked (the upload's limit is 500).
COLUMNS = (10, 50, 100, 200, 300, 450, 500)
#: Seconds a Mechanisms run on 2,000 × 500 may take.
TARGET_SECONDS = 30.0
#: Seconds a Stop may take to end the run and its threads.
STOP_TARGET_SECONDS = 2.0
#: Seconds after the first attribute-inference attack of the 2,000 × 500 run started when the Stop is given.
STOP_AFTER = 2.0


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def _table(d: int):
    from bench_dashboard import _generated_table

    return _generated_table(ROWS, d, seed=0)


def _timed(module, name: str, totals: dict[str, float], lock: threading.Lock):
    """Wrap ``module.name`` to add its thread's CPU seconds to ``totals[name]``; returns the original."""
    original = getattr(module, name)

    def wrapper(*args, **kwargs):
        started = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            with lock:
                totals[name] = totals.get(name, 0.0) + time.thread_time() - started

    setattr(module, name, wrapper)
    return original


def mechanisms_run(d: int) -> dict:
    """The page's run on 2,000 × d, timed, with the attacks' CPU seconds and the page's estimate."""
    from threadpoolctl import threadpool_limits

    import engine.attacks.attribute_inference as ai
    import engine.attacks.singling_out as so
    from engine.analysis import AnalysisConfig, clear_analysis_cache
    from engine.mechanisms.private_projection import PrivateProjection
    from engine.release import ReleaseConfig
    from engine.release_analysis import PAGE_THREADS, analyse_release, estimate_release_analysis

    frame, spec, program = _table(d)
    mechanism = PrivateProjection.from_budget(0.25, 4.0, 1.0 / (ROWS + 1))
    config = ReleaseConfig.of(spec, mechanism)
    analysis = AnalysisConfig(program=program)
    estimate = estimate_release_analysis(config, analysis, mechanism.guarantee(), n=ROWS, d=d)
    totals: dict[str, float] = {}
    lock = threading.Lock()
    originals = [(ai, "attribute_inference", _timed(ai, "attribute_inference", totals, lock)),
                 (so, "singling_out", _timed(so, "singling_out", totals, lock))]
    clear_analysis_cache()  # a first run on these data, as the page's: the references are built in it
    try:
        with threadpool_limits(1):
            started, started_cpu = time.perf_counter(), time.process_time()
            analyse_release(frame, config, analysis, mechanism.guarantee(), seed=1, workers=PAGE_THREADS)
            wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    finally:
        for module, name, original in originals:
            setattr(module, name, original)
    row = {"name": f"Mechanisms run, {ROWS:,} × {d}", "seconds": wall, "cpu_seconds": cpu,
           "attribute_inference_cpu": totals.get("attribute_inference", 0.0),
           "singling_out_cpu": totals.get("singling_out", 0.0),
           "estimate_seconds": estimate.seconds, "estimate_cpu_seconds": estimate.cpu_seconds,
           "note": f"4 mechanisms × 5 releases, each attacked, {PAGE_THREADS} threads, 1 BLAS thread ({_load()})"}
    if d == max(COLUMNS):
        row.update(target=TARGET_SECONDS, ratio=wall / TARGET_SECONDS)
    return row


def one_analysis(d: int) -> dict:
    """:func:`engine.analysis.analyse` of the projection's release with the three attacks, single-threaded."""
    from threadpoolctl import threadpool_limits

    from engine.analysis import AnalysisConfig, AnalysisData, analyse
    from engine.data.preparation import prepare
    from engine.mechanisms.private_projection import PrivateProjection

    frame, spec, program = _table(d)
    prepared = prepare(frame, spec)
    mechanism = PrivateProjection.from_budget(0.25, 4.0, 1.0 / (ROWS + 1))
    with threadpool_limits(1):
        started = time.process_time()
        data = AnalysisData.build(prepared, AnalysisConfig(program=program))
        references = time.process_time() - started
        started, started_cpu = time.perf_counter(), time.process_time()
        analyse(data, mechanism, seed=1)
        wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    return {"name": f"one analysis, {ROWS:,} × {d}", "seconds": wall, "cpu_seconds": cpu,
            "note": f"engine.analysis.analyse of the projection's release, 3 attacks; the non-private references "
                    f"before it {references:.2f} CPU s ({_load()})"}


def stop_during_a_run(d: int = 500) -> dict:
    """A run on 2,000 × d in a worker thread, cancelled :data:`STOP_AFTER` seconds into its attacks: seconds until
    the call returned and until every thread it started had ended."""
    from threadpoolctl import threadpool_limits

    import engine.attacks.attribute_inference as ai
    from engine.analysis import AnalysisConfig, clear_analysis_cache
    from engine.errors import CancelledError
    from engine.mechanisms.private_projection import PrivateProjection
    from engine.progress import CancelToken
    from engine.release import ReleaseConfig
    from engine.release_analysis import PAGE_THREADS, analyse_release

    frame, spec, program = _table(d)
    mechanism = PrivateProjection.from_budget(0.25, 4.0, 1.0 / (ROWS + 1))
    config = ReleaseConfig.of(spec, mechanism)
    token = CancelToken()
    outcome: dict[str, object] = {}
    before = set(threading.enumerate())

    def work() -> None:
        try:
            with threadpool_limits(1):
                analyse_release(frame, config, AnalysisConfig(program=program), mechanism.guarantee(), seed=1,
                                workers=PAGE_THREADS, cancel=token)
            outcome["result"] = "finished before the stop"
        except CancelledError:
            outcome["result"] = "cancelled"

    attacking = threading.Event()
    original = ai.attribute_inference

    def attack(*args, **kwargs):
        attacking.set()
        return original(*args, **kwargs)

    ai.attribute_inference = attack
    clear_analysis_cache()
    runner = threading.Thread(target=work, name="bench-run")
    try:
        runner.start()
        attacking.wait(600)
        time.sleep(STOP_AFTER)
        stopped = time.perf_counter()
        token.cancel()
        runner.join()
    finally:
        ai.attribute_inference = original
    returned = time.perf_counter() - stopped
    while [t for t in threading.enumerate() if t not in before and t.is_alive()]:
        time.sleep(0.01)
    ended = time.perf_counter() - stopped
    return {"name": f"Stop during a run, {ROWS:,} × {d}", "seconds": ended, "target": STOP_TARGET_SECONDS,
            "ratio": ended / STOP_TARGET_SECONDS,
            "note": f"stopped {STOP_AFTER:g} s into the attacks: {outcome.get('result')}; the call returned after "
                    f"{returned:.2f} s, "
                    f"every thread it started had ended after {ended:.2f} s ({_load()})"}


def rows(columns: tuple[int, ...] = COLUMNS):
    """The rows, one at a time (printed as they come when run as a script)."""
    from engine.attacks.precompile import compile_kernels

    compile_kernels()  # the kernels' compilation is not a run's time
    for d in columns:
        yield mechanisms_run(d)
        yield one_analysis(d)
    yield stop_during_a_run()


def run(columns: tuple[int, ...] = COLUMNS) -> list[dict]:
    return list(rows(columns))


if __name__ == "__main__":
    wanted = COLUMNS
    if "--columns" in sys.argv:
        wanted = tuple(int(c) for c in sys.argv[sys.argv.index("--columns") + 1].split(","))
    for result in rows(wanted):
        extras = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()
                           if k != "name")
        print(f"{result['name']}: {extras}", flush=True)
