"""What goes into the wheel besides the packages ``engine``, ``ui`` and ``studio`` (pyproject.toml declares the rest).

* **The dependencies**, read from the requirement files, which stay the one source of truth for the pins
  (``scripts/studio.sh`` installs from them, the package declares them): ``requirements.txt`` is the plain install
  except its section from the line ``# [scale]`` on, which is the ``scale`` extra (Dask); ``requirements-test.txt``
  (without its ``-r`` line) plus the scale section is the ``test`` extra.
* **The app's files** — ``app.py``, the pages (``pages/studio/*.py``), the tab icon (``assets/favicon.svg``) and the
  Streamlit settings (``.streamlit/config.toml``) — live at the top of the checkout, where ``streamlit run app.py``
  expects them. The build copies them into the package ``studio`` as ``studio/app/…``, keeping their layout (the
  pages' paths are relative to ``app.py``, and Streamlit reads ``.streamlit/config.toml`` beside the script it runs),
  so the installed app runs from any directory (``studio.paths.app_dir``).
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: The app's files, relative to the checkout (globs), copied to ``studio/app/`` with the same relative paths.
APP_FILES = ("app.py", "pages/studio/*.py", "assets/favicon.svg", ".streamlit/config.toml")
SCALE_MARKER = "# [scale]"


def _requirements(text: str) -> list[str]:
    """The requirements in a requirement file's text, in order: no comments, blank lines or ``-r`` includes."""
    lines = (line.split(" #", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith(("#", "-"))]


def requirement_lines(name: str) -> list[str]:
    return _requirements((ROOT / name).read_text(encoding="utf-8"))


def split_runtime() -> tuple[list[str], list[str]]:
    """requirements.txt's (plain install, scale extra): the lines before and after the ``# [scale]`` line."""
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    if SCALE_MARKER not in text:
        raise SystemExit(f"requirements.txt has no '{SCALE_MARKER}' line: the scale extra cannot be told apart")
    base, scale = text.split(SCALE_MARKER, 1)
    return _requirements(base), _requirements(scale.split("\n", 1)[1] if "\n" in scale else "")


class BuildWithApp(build_py):
    """``build_py`` that also copies the app's files into ``studio/app/``."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "studio" / "app"
        for pattern in APP_FILES:
            sources = sorted(ROOT.glob(pattern))
            if not sources:
                raise SystemExit(f"the app file {pattern!r} is missing from the checkout")
            for source in sources:
                destination = target / source.relative_to(ROOT)
                self.mkpath(str(destination.parent))
                self.copy_file(str(source), str(destination))


base, scale = split_runtime()
setup(
    install_requires=base,
    extras_require={"scale": scale, "test": [*requirement_lines("requirements-test.txt"), *scale]},
    cmdclass={"build_py": BuildWithApp},
)
