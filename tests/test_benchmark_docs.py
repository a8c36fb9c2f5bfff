"""The timings in docs/performance.md are written by the benchmark runner, between markers (issue 32)."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _runner():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_the_docs_have_the_markers_and_the_runner_rewrites_only_between_them(tmp_path):
    run = _runner()
    docs = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert docs.count(run.START) == 1 and docs.count(run.END) == 1
    copy = tmp_path / "performance.md"
    copy.write_text(docs, encoding="utf-8")
    table = run.markdown_table([{"module": "bench_x", "name": "a | b", "seconds": 1.23456, "target": "≤ 2 s",
                                 "ratio": 3.0}], commit="abc1234", when="2026-01-01 00:00 UTC", load="1.00",
                               modules=["bench_x"])
    run.write_docs(copy, table)
    new = copy.read_text(encoding="utf-8")
    assert "| bench_x | a / b | 1.235 | ≤ 2 s | ratio=3 |" in new and "abc1234" in new
    before, after = docs.split(run.START)[0], docs.split(run.END)[1]
    assert new.startswith(before) and new.endswith(after)
