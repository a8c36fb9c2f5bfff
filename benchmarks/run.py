"""Run every benchmark module (``benchmarks/bench_*.py``) and print one table of times and ratios.

Each module exposes ``run() -> list[dict]``; a dict has at least ``name`` and ``seconds`` and may carry
``target``, ``ratio``, ``peak_mb`` and free-text ``note``. Usage::

    bash scripts/studio.sh bench            # all benchmarks
    bash scripts/studio.sh bench sweep      # only modules whose name contains "sweep"
    bash scripts/studio.sh bench wide       # bench_wide: Mechanisms runs on 2,000 × 10–500 columns, and a Stop
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def main(argv: list[str]) -> int:
    wanted = argv[1:]
    rows: list[dict] = []
    for path in sorted(HERE.glob("bench_*.py")):
        if wanted and not any(w in path.stem for w in wanted):
            continue
        started = time.perf_counter()
        print(f"== {path.stem}", flush=True)
        for row in _load(path).run():
            row = {"module": path.stem, **row}
            rows.append(row)
            extras = ", ".join(f"{k}={_fmt(v)}" for k, v in row.items() if k not in {"module", "name"})
            print(f"  {row['name']}: {extras}", flush=True)
        print(f"   ({time.perf_counter() - started:.1f} s for the module)", flush=True)
    out = HERE.parent / "test-artifacts" / "benchmarks.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=2, default=str))
    print(f"wrote {out.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
