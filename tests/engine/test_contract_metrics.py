"""The mechanism contract's structural goals (issue 32) hold on the whole tree, not only on the day they were
reported: no mechanism-name switch or hand-kept list of mechanisms outside the mechanisms' own modules, and one
release function that calls a mechanism's ``release`` (``scripts/contract_metrics.py`` counts them; run it with
``--details`` to see every counted line)."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _metrics():
    spec = importlib.util.spec_from_file_location("contract_metrics", ROOT / "scripts" / "contract_metrics.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_mechanism_name_switch_or_hand_kept_list_and_one_release_function():
    metrics = _metrics()
    names = metrics.mechanism_names(False)
    assert names["name switches (lines)"] == 0, names
    assert names["hand-kept mechanism lists"] == 0, names
    assert metrics.release_implementations(False) == 1
