"""The chosen candidate as a notebook and a script (engine/notebook.py, issue 36 §4): executed for real (``nbclient``
runs the notebook in a Jupyter kernel; the script runs in Python), they print the guarantee first and reproduce the
record's numbers; a record whose numbers the data do not give stops the notebook with the difference named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from engine.data.demos import load_demo
from engine.data.preparation import prepare
from engine.notebook import notebook_json, script_text
from tests.engine.test_decision_record import make_record

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def record():
    demo = load_demo("togo-demo")
    return make_record((demo, prepare(demo.frame, demo.spec)))


def _execute(text: str, folder: Path):
    import nbclient
    import nbformat

    notebook = nbformat.reads(text, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


def _reproduced(stream_text: str) -> dict:
    line = next(t for t in stream_text.splitlines() if t.startswith("REPRODUCED "))
    return json.loads(line.removeprefix("REPRODUCED "))


@pytest.fixture
def kernel_env(monkeypatch):
    """The kernel (a subprocess) imports the engine from this checkout."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


@pytest.mark.slow
def test_the_notebook_prints_the_guarantee_first_and_reproduces_the_record(record, tmp_path, kernel_env):
    notebook = _execute(notebook_json(record), tmp_path)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert outputs[0]["name"] == "stdout" and outputs[0]["text"] == "\n".join(record.guarantee) + "\n"
    done = _reproduced("".join(o.get("text", "") for o in outputs))
    assert done["guarantee"] == list(record.guarantee)
    assert (done["n"], done["d"], done["features"]) == (record.data.n, record.data.d, list(record.data.features))
    assert done["fingerprint_matches"] is True and done["seeded"] is False
    assert done["sampler"] == "opendp"  # as privatize --config releases an unseeded Gaussian record
    assert [f["m"] for f in done["feasibility"]] == [f.m for f in record.targets.feasibility]
    assert [f["gamma"] for f in done["feasibility"]] == [0.99, 0.95]
    rows = (tmp_path / "private.csv").read_text().splitlines()
    assert len(rows) == record.data.n + 1 and rows[0].split(",") == list(record.data.features)


@pytest.mark.slow
def test_a_record_the_data_do_not_reproduce_stops_the_notebook_with_the_difference(record, tmp_path, kernel_env):
    import nbclient

    wrong = replace(record, data=replace(record.data, n=record.data.n - 1))
    with pytest.raises(nbclient.exceptions.CellExecutionError, match=r"n: reproduced 4201, the record says 4200"):
        _execute(notebook_json(wrong), tmp_path)
    assert not (tmp_path / "private.csv").exists()  # stopped before the release


def test_the_script_reproduces_the_record_too(record, tmp_path):
    script = tmp_path / "reproduce.py"
    script.write_text(script_text(record))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(record.guarantee[0] + "\n")
    done = _reproduced(out.stdout)
    assert done["guarantee"] == list(record.guarantee) and done["sampler"] == "opendp"
