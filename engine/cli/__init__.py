"""``python -m engine``: the data holder's command line.

Each subcommand lives in its own module of this package and exposes ``register(subparsers)``, which adds its
parser and sets ``func`` (``args -> int``). Errors the engine raises on purpose (:class:`EngineError`) are printed
as one line on stderr with exit code 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from engine import __version__
from engine.errors import EngineError

__all__ = ["COMMANDS", "build_parser", "main"]

#: Subcommand modules, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = ("feasibility", "policy", "privatize", "evaluate", "sweep", "blob-experiment")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m engine",
        description="Privacy Parameter Studio engine: feasibility, private releases, sweeps and policies.",
        epilog="Every command prints JSON on stdout; progress and errors go to stderr.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"engine.cli.{name.replace('-', '_')}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
