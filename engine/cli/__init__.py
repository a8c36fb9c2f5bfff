"""``python -m engine``: the data holder's command line.

Each subcommand lives in its own module of this package and exposes ``register(subparsers)``, which adds its
parser and sets ``func`` (``args -> int``). Errors the engine raises on purpose (:class:`EngineError`) are printed
as one line on stderr with exit code 2; anything else is a bug and keeps its traceback.

Start-up: :func:`main` imports only the module of the subcommand on the command line; the others appear in
``--help`` through their one-line summaries (:data:`SUMMARIES`, checked against each module's own ``help`` by a
test), so ``python -m engine --help`` imports neither numpy, pandas, scipy nor scikit-learn.
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
COMMANDS: tuple[str, ...] = (
    "feasibility", "policy", "privatize", "evaluate", "sweep", "recommend", "blob-experiment", "counts",
)

#: One-line summary of every subcommand, as its module registers it (``help=``), for the top-level ``--help``.
SUMMARIES: dict[str, str] = {
    "feasibility": "Theorem 1: which target distances B are ruled out for γ-accurate targeting",
    "policy": "per-record privacy loss of record values under a per-record sum mechanism",
    "privatize": "release a privatized copy of a table's feature columns, with its guarantee",
    "evaluate": "re-run a decision record's analysis: program, decision agreement, attacks",
    "sweep": "program effectiveness vs. protection over a grid of (B, ε, δ)",
    "recommend": "the most protective (B, ε) that meets the program's target on your data",
    "blob-experiment": "JL + Laplace release: k-means accuracy on two Gaussian blobs (the paper's Table 1)",
    "counts": "release a region × period count table subject to public totals / last period / sub-count ≤ count",
}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump) and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        from engine.cli._common import one_line

        self.exit(2, one_line(f"{self.prog}: error: {message} (see --help)") + "\n")


def _register(sub, name: str) -> None:
    importlib.import_module(f"engine.cli.{name.replace('-', '_')}").register(sub)


def build_parser(command: str | None = None, prog: str = "python -m engine") -> argparse.ArgumentParser:
    """The command-line parser.

    Parameters
    ----------
    command : str, optional
        None (default): every subcommand fully registered (imports all their modules). A name from
        :data:`COMMANDS`: that subcommand fully registered, the others as summaries only. ``""``: summaries only
        (enough for ``--help``, ``--version`` and error messages).
    prog : str
        The command's name in help and error messages (``studio`` when the installed ``studio`` command runs it).
    """
    parser = _Parser(
        prog=prog,
        description="Privacy Parameter Studio engine: feasibility, private releases, sweeps and policies.",
        epilog="Every command prints JSON on stdout; progress and errors go to stderr.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        if command is None or name == command:
            _register(sub, name)
        else:
            sub.add_parser(name, help=SUMMARIES[name])
    return parser


def _command_in(argv: Sequence[str]) -> str:
    """The subcommand named on the command line ('' if none): the first argument that is not an option."""
    for token in argv:
        if not token.startswith("-"):
            return token if token in COMMANDS else ""
    return ""


def main(argv: Sequence[str] | None = None, prog: str = "python -m engine") -> int:
    from engine.cli._common import one_line
    from engine.output_files import forget_written, written_outputs

    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_in(args_list), prog)
    args = parser.parse_args(args_list)
    forget_written()
    try:
        return int(args.func(args) or 0)
    except EngineError as exc:
        print(one_line(f"error: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C outside a cancellable step (or a second Ctrl-C): one line, no traceback
        print(one_line(interrupted_message(written_outputs())), file=sys.stderr)
        return 130


def interrupted_message(written: Sequence[str]) -> str:
    """The Ctrl-C line: what was complete before the interruption (every output is written atomically, so an
    output is either complete or absent).

    >>> interrupted_message([])
    'error: interrupted (Ctrl-C); no output was written'
    >>> interrupted_message(["out"])
    "error: interrupted (Ctrl-C) after 'out' was written completely; nothing else was written"
    """
    if not written:
        return "error: interrupted (Ctrl-C); no output was written"
    names = ", ".join(repr(w) for w in written)
    verb = "was" if len(written) == 1 else "were"
    return f"error: interrupted (Ctrl-C) after {names} {verb} written completely; nothing else was written"
