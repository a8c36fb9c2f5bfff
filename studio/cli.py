"""``studio``: the Studio's one command (the installed package's console script; ``python -m studio`` too).

::

    studio app [--port 8501] [--host 127.0.0.1] [--demo NAME] [--workshop] [--server.OPTION VALUE …]
    studio bundle DIR [--extras scale] [--python-version 3.12 --platform manylinux2014_x86_64]
    studio privatize …   studio sweep …   (every command of ``python -m engine``, same options)

``studio app`` starts the app (``ui.serve``: ``streamlit run app.py`` with the Studio's settings) on this machine
only; ``--workshop`` serves it to the local network behind the room's access links (:mod:`ui.room`). Further
``--section.option value`` arguments go to Streamlit as they are. The engine's commands run exactly as ``python -m
engine`` runs them (:func:`engine.cli.main`), so both spellings stay equivalent.

Like ``python -m engine``, ``studio --help`` imports neither numpy nor Streamlit: each command imports what it needs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine import __version__
from engine.cli import COMMANDS as ENGINE_COMMANDS
from engine.cli import SUMMARIES, _Parser

#: The Studio's own commands, before the engine's.
OWN_COMMANDS = {
    "app": "start the app in your browser (this machine only; --workshop: a workshop server for the room)",
    "bundle": "write a wheelhouse to install the Studio on a machine without internet (pip --no-index)",
}
DEFAULT_PORT = 8501


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="studio",
        description="Privacy Parameter Studio: choose defensible privacy parameters, then make the release.",
        epilog="The engine's commands print JSON on stdout; progress and errors go to stderr. `studio COMMAND "
               "--help` describes each.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    app = sub.add_parser("app", help=OWN_COMMANDS["app"], description=(
        "Start the Studio's app. It listens on this machine only unless --workshop or --host says otherwise; "
        "options of the form --section.option VALUE go to Streamlit (e.g. --server.maxUploadSize 100)."))
    app.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    app.add_argument("--host", default=None,
                     help="address to listen on (default 127.0.0.1: this machine only; with --workshop 0.0.0.0: "
                          "every network interface)")
    app.add_argument("--demo", default=None, metavar="NAME",
                     help="the built-in demo new sessions open on (default togo-demo; see the Data page's list)")
    app.add_argument("--workshop", action="store_true",
                     help="serve a workshop: listen on the local network and let in only people with the join "
                          "link (printed with a random access token) or the facilitator's link")

    bundle = sub.add_parser("bundle", help=OWN_COMMANDS["bundle"], description=(
        "Write DIR: the Studio's wheel, a wheel of every pinned dependency for the target platform and INSTALL.txt. "
        "On the offline machine: pip install --no-index --find-links DIR privacy-parameter-studio"))
    bundle.add_argument("directory", metavar="DIR", help="folder to write (created if missing)")
    bundle.add_argument("--extras", default="", help="extras to include too, e.g. 'scale' (Dask)")
    bundle.add_argument("--python-version", default=None,
                        help="the offline machine's Python, e.g. 3.12 (default: this one's)")
    bundle.add_argument("--platform", default=None,
                        help="the offline machine's wheel platform tag, e.g. manylinux2014_x86_64 (default: this one)")
    bundle.add_argument("--source", default=None,
                        help="the Studio's source checkout to build from (default: the one this command runs from; "
                             "an installed Studio without a checkout is fetched from the package index)")

    for name in ENGINE_COMMANDS:
        sub.add_parser(name, help=SUMMARIES[name], add_help=False)
    return parser


def _first_command(argv: Sequence[str]) -> str:
    for token in argv:
        if not token.startswith("-"):
            return token
    return ""


def _streamlit_options(extra: list[str]) -> list[str]:
    """Check that every further argument is a Streamlit option (``--section.option value``)."""
    for token in extra:
        if token.startswith("-") and ("." not in token or not token.startswith("--")):
            raise SystemExit(f"studio app: error: unknown option {token} (see --help)")
    return extra


def app_command(args: argparse.Namespace, extra: list[str]) -> int:
    import os

    from engine.errors import EngineError

    if args.demo is not None:
        from engine.data.demos import demo_names

        try:
            names = demo_names()
        except EngineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.demo not in names:
            print(f"error: unknown demo {args.demo!r}; available: {', '.join(names)}", file=sys.stderr)
            return 2
        from ui.state import DEMO_ENV

        os.environ[DEMO_ENV] = args.demo
    if not 0 < args.port < 65536:
        print(f"error: --port must be between 1 and 65535; got {args.port}", file=sys.stderr)
        return 2
    host = args.host or ("0.0.0.0" if args.workshop else "127.0.0.1")
    options = ["--server.port", str(args.port), "--server.address", host, *_streamlit_options(extra)]
    room = None
    if args.workshop:
        from ui.room import Room

        room = Room()
    elif host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {host} without --workshop: anyone who can reach this machine can use the app "
              "and see the data loaded in it", file=sys.stderr)
    from ui import serve

    serve.main(options, room=room)
    return 0


def bundle_command(args: argparse.Namespace) -> int:
    from engine.errors import EngineError
    from studio.bundle import bundle

    extras = tuple(e.strip() for e in args.extras.split(",") if e.strip())
    try:
        report = bundle(args.directory, extras=extras, python_version=args.python_version, platform=args.platform,
                        source=args.source)
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.describe())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _first_command(argv)
    if command in ENGINE_COMMANDS:
        from engine.native_threads import limit_native_threads

        limit_native_threads()  # before numpy loads, as `python -m engine` (engine.native_threads)
        from engine.cli import main as engine_main

        return engine_main(argv, prog="studio")
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "app":
        return app_command(args, extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return bundle_command(args)
