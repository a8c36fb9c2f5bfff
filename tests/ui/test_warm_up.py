"""A page never imports alongside the background warm-up (ui.common.wait_for_warm_up): two threads importing the
same packages at once can deadlock on the import locks, which Python resolves by handing one of them a partially
initialised module (an AppTest showed "cannot import name 'euclidean' from partially initialized module
'scipy.spatial.distance'")."""

from __future__ import annotations

import sys
import threading

import pytest

from ui import common


def test_a_page_run_waits_for_the_warm_up_to_finish(monkeypatch, tmp_path):
    (tmp_path / "studio_slow_module.py").write_text("import time\ntime.sleep(0.3)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(common, "WARM_MODULES", ("studio_slow_module",))
    monkeypatch.setattr(common, "_warm_started", threading.Event())
    monkeypatch.setattr(common, "_warm_thread", [])
    monkeypatch.delitem(sys.modules, "studio_slow_module", raising=False)
    common.warm_up()
    common.warm_up()  # idempotent: one thread
    assert len(common._warm_thread) == 1 and common._warm_thread[0].is_alive()
    common.wait_for_warm_up()
    assert not common._warm_thread[0].is_alive() and sys.modules["studio_slow_module"].DONE
    monkeypatch.delitem(sys.modules, "studio_slow_module")



@pytest.fixture
def fresh_warm_up(monkeypatch):
    """A warm-up not yet started in this process, whose gc.freeze calls are recorded instead of made."""
    frozen: list[bool] = []
    monkeypatch.setattr(common.gc, "freeze", lambda: frozen.append(True))
    monkeypatch.setattr(common, "_warm_started", threading.Event())
    monkeypatch.setattr(common, "_frozen", threading.Event())
    monkeypatch.setattr(common, "_warm_thread", [])
    return frozen


def test_the_warm_up_freezes_the_imported_objects_once(monkeypatch, tmp_path, fresh_warm_up):
    """After the warm-up's imports, their objects leave the garbage collector's walk (gc.freeze), once per process:
    Streamlit's full collection after every script run then costs ~0 instead of ~100 ms of CPU."""
    (tmp_path / "studio_quick_module.py").write_text("DONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(common, "WARM_MODULES", ("studio_quick_module",))
    monkeypatch.delitem(sys.modules, "studio_quick_module", raising=False)
    common.warm_up()
    common.wait_for_warm_up()
    assert sys.modules["studio_quick_module"].DONE and fresh_warm_up == [True]
    common.freeze_imported_objects()  # a second call (another session's warm-up) freezes nothing more
    assert fresh_warm_up == [True]
    monkeypatch.delitem(sys.modules, "studio_quick_module")


def test_a_failed_warm_up_import_freezes_nothing(monkeypatch, fresh_warm_up):
    monkeypatch.setattr(common, "WARM_MODULES", ("studio_module_that_does_not_exist",))
    common.warm_up()
    common.wait_for_warm_up()
    assert fresh_warm_up == []

