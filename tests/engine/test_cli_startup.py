"""Start-up of the command line: ``python -m engine --help`` imports nothing heavy, and a subcommand imports only
its own module (issue 11: ``--help`` took 2.1 s of imports). Structural checks on ``sys.modules``, not timings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import COMMANDS, SUMMARIES, build_parser

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "scipy", "sklearn", "pyarrow", "plotly", "streamlit")


def _modules_after(*argv: str) -> tuple[int, list[str], str]:
    """Run ``python -m engine *argv`` in a fresh interpreter; its exit code, loaded modules and stderr."""
    code = (
        "import json, runpy, sys\n"
        f"sys.argv = ['engine', *{list(argv)!r}]\n"
        "try:\n"
        "    runpy.run_module('engine', run_name='__main__', alter_sys=True)\n"
        "    rc = 0\n"
        "except SystemExit as exc:\n"
        "    rc = exc.code if isinstance(exc.code, int) else 1\n"
        "sys.stdout.flush()\n"
        "print('\\n' + json.dumps([rc, sorted(sys.modules)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    rc, modules = json.loads(out.stdout.strip().splitlines()[-1])
    return rc, modules, out.stderr


@pytest.mark.parametrize("argv", [("--help",), ("--version",), ("no-such-command",), ()])
def test_top_level_invocations_import_nothing_heavy(argv):
    rc, modules, _ = _modules_after(*argv)
    heavy = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
    assert heavy == [], heavy
    assert not [m for m in modules if m.startswith("engine.cli.") and m != "engine.cli._common"]
    assert rc == (0 if argv in {("--help",), ("--version",)} else 2)


def test_a_subcommand_imports_only_its_own_module():
    rc, modules, stderr = _modules_after("feasibility", "--gamma", "0.99", "--epsilon", "1", "--delta", "1e-4")
    assert rc == 0, stderr
    loaded = {m for m in modules if m.startswith("engine.cli.")}
    assert loaded == {"engine.cli.feasibility", "engine.cli._common"}
    assert not {"pandas", "sklearn"} & {m.split(".")[0] for m in modules}


#: Never needed to release data: the analysis' libraries (attacks, programs, sweeps), the dashboard's, the cluster's.
NOT_FOR_A_RELEASE = ("sklearn", "numba", "plotly", "streamlit", "dask", "distributed")


@pytest.mark.parametrize(("mechanism", "flags", "scipy_allowed"), [
    ("projection", ("--epsilon1", "3", "--delta1", "1.6e-4", "--epsilon2", "0.9999", "--delta2", "7.9e-5"), False),
    ("gaussian", ("--epsilon", "3", "--delta", "1e-4"), True),  # σ's calibration: scipy.optimize and .special
])
def test_privatize_imports_only_what_the_release_needs(tmp_path, mechanism, flags, scipy_allowed):
    rc, modules, stderr = _modules_after("privatize", "--dataset", "togo-demo", "--mechanism", mechanism, "--b", "0.25",
                                         *flags, "--seed", "1", "--output", str(tmp_path / "private.csv"))
    assert rc == 0, stderr
    assert (tmp_path / "private.csv").stat().st_size > 0
    top = {m.split(".")[0] for m in modules}
    assert not top & set(NOT_FOR_A_RELEASE), sorted(top & set(NOT_FOR_A_RELEASE))
    assert not [m for m in modules if m.startswith(("engine.attacks", "engine.sweeps", "engine.evaluation"))]
    scipy_modules = {m for m in modules if m.startswith("scipy.")}
    assert ("scipy" in top) == scipy_allowed
    assert "scipy.stats" not in scipy_modules  # the JL mechanism's tail bounds import it when they run


def test_subcommand_help_is_its_full_help():
    rc, modules, _ = _modules_after("policy", "--help")
    assert rc == 0
    assert "engine.cli.policy" in modules and "engine.cli.sweep" not in modules


def test_summaries_are_the_modules_own_help_lines():
    def helps(parser):
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        return {a.dest: a.help for a in sub._choices_actions}

    assert helps(build_parser()) == SUMMARIES  # every module fully registered
    assert helps(build_parser("")) == SUMMARIES  # summaries only
    assert tuple(SUMMARIES) == COMMANDS
    for name in COMMANDS:
        assert helps(build_parser(name)) == SUMMARIES


def test_json_output_converts_numpy_values(capsys):
    import numpy as np

    from engine.cli._common import print_json

    print_json({"a": np.arange(3), "b": np.float64(0.5), "c": [np.int64(2), float("inf")]})
    assert json.loads(capsys.readouterr().out) == {"a": [0, 1, 2], "b": 0.5, "c": [2, "inf"]}


def test_privatize_help_imports_numpy_at_most():
    """Issue 33: `privatize --help` took 0.87 s (pandas imported at the top of cli/_data_flags.py, the mechanisms for
    their names); now it imports numpy at most (the data spec's constants), in about the time of `import numpy`."""
    rc, modules, stderr = _modules_after("privatize", "--help")
    assert rc == 0, stderr
    heavy = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
    assert heavy in ([], ["numpy"]), heavy
    assert not [m for m in modules if m.startswith(("engine.mechanisms", "engine.release", "engine.data.preparation",
                                                     "engine.scale.out_of_core"))]


def test_an_unknown_mechanism_is_refused_with_every_registered_one(capsys):
    """The help does not keep its own list of mechanisms (the registry is their one home, and --help does not import
    it): an unknown KIND is refused with the registry's list, in one line."""
    from engine.cli import main
    from engine.mechanisms import MECHANISMS

    assert main(["privatize", "--mechanism", "nosuch", "--dataset", "togo-demo", "--output", "unused.csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and all(kind in err for kind in MECHANISMS), err


def test_the_command_line_runs_native_pools_on_one_thread_unless_told_otherwise():
    """Issue 33: one rule everywhere — the command line, like the server and the sweeps' workers, gives BLAS and
    OpenMP one thread each before numpy loads (engine.native_threads); an operator's own setting wins."""
    import os

    from engine.native_threads import NATIVE_THREADS

    code = ("import json, os, runpy, sys\nsys.argv = ['engine', '--version']\n"
            "try:\n    runpy.run_module('engine', run_name='__main__', alter_sys=True)\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps({{k: os.environ.get(k) for k in {sorted(NATIVE_THREADS)!r}}}))\n")
    env = {k: v for k, v in os.environ.items() if k not in NATIVE_THREADS}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60, env=env)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == NATIVE_THREADS
    env["OMP_NUM_THREADS"] = "3"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60, env=env)
    assert json.loads(out.stdout.strip().splitlines()[-1])["OMP_NUM_THREADS"] == "3"
