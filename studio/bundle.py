"""``studio bundle DIR``: everything needed to install the Studio on a machine without internet (a data enclave).

On a connected machine, :func:`bundle` writes into ``DIR``

1. the Studio's wheel, built from its source checkout (``pip wheel --no-deps``), or — for an installed Studio
   without a checkout — fetched from the package index;
2. a wheel of every dependency the Studio's wheel declares, at the pinned versions, for the target platform
   (``pip download`` of the Studio's wheel: the wheelhouse holds exactly what its metadata asks for);
3. ``INSTALL.txt``: what the folder is and the one command to run on the offline machine::

       python3 -m venv studio-env
       studio-env/bin/pip install --no-index --find-links DIR privacy-parameter-studio

The target platform is this machine's unless ``python_version`` / ``platform`` name another (then only binary
wheels are taken, as pip requires). Nothing is installed here.
"""

from __future__ import annotations

import platform as _platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from engine import __version__
from engine.errors import EngineError, InvalidParameterError

PROJECT = "privacy-parameter-studio"
NOTE = "INSTALL.txt"


@dataclass(frozen=True)
class BundleReport:
    """What :func:`bundle` wrote: the folder, its wheels and their total size."""

    directory: Path
    wheels: tuple[str, ...]
    bytes: int
    target: str

    def describe(self) -> str:
        return (f"Wrote {len(self.wheels)} wheels ({self.bytes / 2**20:.0f} MB) and {NOTE} to {self.directory} for "
                f"{self.target}.\nOn the offline machine: pip install --no-index --find-links {self.directory} "
                f"{PROJECT}")


def source_checkout() -> Path | None:
    """The checkout this code runs from (a folder with ``pyproject.toml`` and ``setup.py`` above ``studio/``)."""
    top = Path(__file__).resolve().parent.parent
    return top if (top / "pyproject.toml").is_file() and (top / "setup.py").is_file() else None


def _pip(args: list[str], what: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-6:]
        raise EngineError(f"{what} failed (pip exited with {result.returncode}): " + " / ".join(tail))


def _can_build_here() -> bool:
    """The wheel can be built in this environment, without an isolated build environment (no download): setuptools
    ≥ 70.1 (which builds wheels itself), or ≥ 64 with the ``wheel`` package."""
    try:
        import setuptools
    except ImportError:
        return False
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
    if version >= (70, 1):
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return version >= (64,)


#: What building the wheel reads from a checkout (``setup.py``'s app files included); nothing else is copied.
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "requirements.txt", "requirements-test.txt",
                "engine", "ui", "studio", "app.py", "pages", "assets/favicon.svg", ".streamlit/config.toml")


def build_wheel(source: Path, directory: Path) -> Path:
    """Build the Studio's wheel from a clean copy of the checkout ``source`` (setuptools would otherwise leave
    ``build/`` in the checkout and reuse stale files from it) into ``directory``; return its path."""
    import shutil
    import tempfile

    for old in directory.glob("privacy_parameter_studio-*.whl"):
        old.unlink()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "secrets.toml")
    with tempfile.TemporaryDirectory(prefix="studio-build-") as tmp:
        copy = Path(tmp) / "src"
        for name in BUILD_INPUTS:
            origin = source / name
            if origin.is_dir():
                shutil.copytree(origin, copy / name, ignore=ignore)
            elif origin.is_file():
                (copy / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, copy / name)
            else:
                raise InvalidParameterError(f"{source} is not a complete Studio checkout: {name} is missing")
        args = ["wheel", "--no-deps", "--quiet", "--wheel-dir", str(directory)]
        if _can_build_here():
            args.append("--no-build-isolation")
        _pip([*args, str(copy)], "building the Studio's wheel")
    built = sorted(directory.glob("privacy_parameter_studio-*.whl"))
    if not built:
        raise EngineError(f"building the Studio's wheel from {source} wrote no wheel")
    return built[-1]


def bundle(directory: str | Path, *, extras: tuple[str, ...] = (), python_version: str | None = None,
           platform: str | None = None, source: str | Path | None = None) -> BundleReport:
    """Write the offline wheelhouse into ``directory`` (see the module docstring).

    Raises
    ------
    InvalidParameterError
        ``directory`` is a file, or ``source`` is not a checkout.
    EngineError
        pip could not build or download something (its last lines are in the message).
    """
    folder = Path(directory).expanduser().resolve()
    if folder.exists() and not folder.is_dir():
        raise InvalidParameterError(f"{folder} is a file; name a folder for the bundle")
    folder.mkdir(parents=True, exist_ok=True)
    checkout = Path(source).expanduser().resolve() if source is not None else source_checkout()
    if checkout is not None and not (checkout / "pyproject.toml").is_file():
        raise InvalidParameterError(f"{checkout} is not the Studio's source checkout (no pyproject.toml there)")
    target_args: list[str] = []
    if python_version or platform:
        target_args = ["--only-binary=:all:"]
        if python_version:
            target_args += ["--python-version", python_version]
        if platform:
            target_args += ["--platform", platform]
    wanted = PROJECT + (f"[{','.join(extras)}]" if extras else "")
    if checkout is not None:
        wheel = build_wheel(checkout, folder)
        requirement = f"{wanted} @ {wheel.as_uri()}"
    else:
        requirement = f"{wanted}=={__version__}"
    _pip(["download", "--quiet", "--dest", str(folder), "--find-links", str(folder), *target_args, requirement],
         "downloading the pinned dependencies")
    wheels = tuple(sorted(p.name for p in folder.glob("*.whl")))
    sdists = sorted(p.name for p in folder.iterdir() if p.suffix in (".gz", ".zip") and p.name != NOTE)
    if sdists:
        raise EngineError(f"some dependencies have no wheel for the target platform ({', '.join(sdists)}): the offline "
                          "machine would need a compiler; choose a platform they publish wheels for")
    target = (f"Python {python_version or _platform.python_version()} on "
              f"{platform or (_platform.system() + ' ' + _platform.machine())}")
    size = sum((folder / w).stat().st_size for w in wheels)
    (folder / NOTE).write_text(_note(wheels, target, size, extras), encoding="utf-8")
    return BundleReport(directory=folder, wheels=wheels, bytes=size, target=target)


def _note(wheels: tuple[str, ...], target: str, size: int, extras: tuple[str, ...]) -> str:
    wanted = PROJECT + (f"[{','.join(extras)}]" if extras else "")
    return f"""Privacy Parameter Studio {__version__} — offline installation bundle

This folder holds the Studio and every dependency it needs ({len(wheels)} wheels, {size / 2**20:.0f} MB), for
{target}. Nothing else is downloaded when you install it.

On the machine without internet (Python with venv), from the folder that holds this one:

    python3 -m venv studio-env
    studio-env/bin/pip install --no-index --find-links {Path('.') / 'THIS-FOLDER'} "{wanted}"
    studio-env/bin/studio --help
    studio-env/bin/studio privatize --config decision-record.json --input YOUR_DATA.csv --output private.csv
    studio-env/bin/studio app            # the app, on this machine only: http://localhost:8501

(replace THIS-FOLDER with this folder's path). The app makes no request outside the machine. Releases draw their
noise from the operating system unless a seed is given (a seeded release is a simulation — not private).

Wheels:
""" + "".join(f"  {w}\n" for w in wheels)
