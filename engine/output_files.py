"""Checks on a command's output file, made BEFORE any work: writable, and never one of the command's inputs.

An unwritable output path used to be discovered only after a whole sweep had run; an output given as a hard link
(or another path) to the input silently overwrote the input. :func:`check_output_path` refuses both up front,
comparing files by device and inode (``os.stat``), so symbolic links, hard links and relative paths are all
recognised.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from engine.errors import InvalidParameterError

__all__ = ["check_output_path", "same_file"]


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when both paths exist and are the same file (same device and inode: hard and symbolic links too).

    >>> same_file(__file__, __file__)
    True
    """
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_output_path(output: str | os.PathLike, *, flag: str = "--output",
                      inputs: Iterable[tuple[str, str | os.PathLike | None]] = ()) -> Path:
    """Refuse an output file that cannot be written or that is one of ``inputs`` ((flag, path) pairs).

    Writability is tested by creating (and removing) a temporary file in the output's folder, and, when the
    output exists, by opening it for appending (nothing is written); the file itself is not created.

    Raises
    ------
    InvalidParameterError
        With the flag, the path and the fix.
    """
    path = Path(output)
    for in_flag, in_path in inputs:
        if in_path is None:
            continue
        if same_file(path, in_path) or Path(in_path).resolve() == path.resolve():
            raise InvalidParameterError(
                f"{flag} {str(path)!r} is the same file as {in_flag} {str(in_path)!r} (the input would be "
                f"overwritten) — write to a new file"
            )
    if path.exists() and path.is_dir():
        raise InvalidParameterError(f"{flag} {str(path)!r} is a folder — give a file name inside it")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidParameterError(f"{flag}: the folder {str(folder)!r} does not exist — create it or choose another")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-", delete=True):
            pass
        if path.exists():
            with open(path, "ab"):
                pass
    except OSError as exc:
        raise InvalidParameterError(
            f"{flag} {str(path)!r} cannot be written ({exc.strerror or exc}) — choose a writable location"
        ) from None
    return path
