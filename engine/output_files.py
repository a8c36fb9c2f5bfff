"""Every file and folder the Studio's commands write goes through this module: checked before any work, written
atomically, never through a link, never over an input, never over an existing output unless asked.

:func:`check_output_path` runs BEFORE any work and refuses, each with one message naming the flag, the path and the
fix:

* an output that is one of the command's inputs (compared by device and inode, so hard links, symbolic links and
  other spellings of the same file are recognised, and by resolved path for a file not created yet);
* an output that is a symbolic link, even a dangling one (nothing is ever written through a link);
* an output that exists already, unless ``overwrite`` (the commands' ``--overwrite`` flag);
* a folder where a file is expected (or, for a folder output, a file or a folder the Studio did not write);
* a parent folder that does not exist or cannot be written, or a name longer than the folder allows.

:func:`write_bytes`, :func:`write_text`, :func:`write_parquet` and :func:`write_with` then write the content into a new temporary file
next to the output (created with ``O_EXCL | O_NOFOLLOW``: never an existing file, never through a link), flush and
``fsync`` it, and only then give it the output's name with one ``rename`` (atomic on a POSIX filesystem), and
``fsync`` the folder. A process killed at any moment (SIGKILL, power loss) therefore leaves either the previous
file or no file under the output's name — never a truncated one. The rename replaces the directory entry, not the
file it named: an output that is one of several hard links to a file is replaced by the new file and the other
names keep the old content. Without ``overwrite`` the new file is published with ``link`` (which fails if the name
appeared meanwhile), so a file created while the command ran is not replaced either.

A killed write can leave its temporary file (or, for a Dask release, its staging folder) behind as a hidden
sibling, ``.NAME.partial-<host>-<pid>-<random>``. :func:`clean_leftovers` removes those of processes of this
machine that are no longer running at the next run for the same output, and names the others (another machine's,
or a run still going) so the user can remove them.

:func:`written_outputs` lists what this process has written completely, so an interruption afterwards (Ctrl-C) can
say what is complete instead of claiming nothing was written.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shutil
import socket
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

from engine.errors import InvalidParameterError

__all__ = [
    "CHUNK_BYTES",
    "PARQUET_ROWS",
    "PARTIAL_MARK",
    "check_output_path",
    "clean_leftovers",
    "forget_written",
    "fsync_folder",
    "partial_name",
    "record_written",
    "same_file",
    "write_bytes",
    "write_parquet",
    "write_text",
    "write_with",
    "written_outputs",
]

#: Bytes written per ``write`` call (between two calls of the test hook).
CHUNK_BYTES = 1 << 20
#: What marks a temporary sibling of an output: ``.NAME.partial-<host>-<pid>-<random>``.
PARTIAL_MARK = ".partial-"
#: Characters of the output's name kept in its temporary sibling's name (file names are at most 255 bytes).
_NAME_KEPT = 120

#: Test-only hook, None in normal use: called after every chunk written into the temporary file with (temporary
#: path, bytes written so far), and once before the rename for :func:`write_with`. Tests set it in a subprocess to
#: stop a write half-way deterministically and then kill the process.
_after_chunk: Callable[[str, int], None] | None = None

#: Outputs this process has written completely (for the Ctrl-C message of ``python -m engine``).
_WRITTEN: list[str] = []


# ------------------------------------------------------------------------------------------------------ checks
def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when both paths exist and are the same file (same device and inode: hard and symbolic links too).

    >>> same_file(__file__, __file__)
    True
    """
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _inside(path: Path, folder: Path) -> bool:
    """True when ``path`` (resolved) is ``folder`` (resolved) or lies under it."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, ValueError):
        return False


def _shown(path: str | os.PathLike) -> str:
    """A path for a message: quoted, and shortened when absurdly long."""
    text = str(path)
    return repr(text if len(text) <= 200 else text[:120] + "…" + text[-40:])


def check_output_path(output: str | os.PathLike, *, flag: str = "--output",
                      inputs: Iterable[tuple[str, str | os.PathLike | None]] = (), overwrite: bool = False,
                      folder: bool = False) -> Path:
    """Refuse an output that cannot or must not be written, before any work (see the module's docstring).

    Parameters
    ----------
    output : path
        The file (or, with ``folder=True``, the folder) the command will write.
    flag : str
        The option that named it, for the messages.
    inputs : iterable of (flag, path or None)
        The command's input files and folders; the output may be none of them, and a folder output may not
        contain any of them.
    overwrite : bool
        Allow replacing an existing output (the ``--overwrite`` flag). For a folder, the caller also checks that it
        is a release the Studio wrote (:func:`engine.scale.atomic_output.check_output_directory`).
    folder : bool
        The output is a folder (the Dask release), not a file.

    Returns
    -------
    pathlib.Path
        The output path. Nothing is created.

    Raises
    ------
    InvalidParameterError
        With the flag, the path and the fix.
    """
    path = Path(output)
    if not str(output):
        raise InvalidParameterError(f"{flag} is empty — give the name of the {'folder' if folder else 'file'} to write")
    parent = _parent(path)
    try:
        name_max = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    size = len(path.name.encode("utf-8", "surrogateescape"))
    if size > name_max:
        raise InvalidParameterError(
            f"{flag}: the name {_shown(path.name)} is too long ({size} bytes; the folder allows {name_max}) — choose "
            "a shorter name"
        )
    for in_flag, in_path in inputs:
        if in_path is None:
            continue
        resolved = _resolved(in_path)
        if same_file(path, in_path) or (resolved is not None and resolved == _resolved(path)):
            raise InvalidParameterError(
                f"{flag} {_shown(path)} is the same {'folder' if folder else 'file'} as {in_flag} {_shown(in_path)} "
                "(the input would be overwritten) — write to a new "
                f"{'folder' if folder else 'file'}"
            )
        if folder and Path(in_path).exists() and _inside(Path(in_path), path):
            raise InvalidParameterError(
                f"{flag} {_shown(path)} holds {in_flag} {_shown(in_path)} (the input would be replaced) — write "
                "the release to a new folder"
            )
    if os.path.islink(path):
        target = os.readlink(path)
        raise InvalidParameterError(
            f"{flag} {_shown(path)} is a symbolic link (to {_shown(target)}{'' if path.exists() else ', which does not exist'}) "
            "— nothing is written through a link; give a real path or a new name"
        )
    if path.exists():
        if folder and not path.is_dir():
            raise InvalidParameterError(f"{flag} {_shown(path)} is a file — give a name for a new folder")
        if not folder and path.is_dir():
            raise InvalidParameterError(f"{flag} {_shown(path)} is a folder — give a file name inside it")
        if not overwrite:
            what = "folder" if folder else "file"
            raise InvalidParameterError(
                f"{flag} {_shown(path)} exists already — add --overwrite to replace it, or choose a new {what} name"
            )
    if not parent.is_dir():
        raise InvalidParameterError(
            f"{flag}: the folder {_shown(parent)} does not exist — create it or choose another"
        )
    try:
        probe = _create_exclusive(parent, ".write-test-")
        os.close(probe[1])
        os.unlink(probe[0])
    except OSError as exc:
        raise InvalidParameterError(
            f"{flag} {_shown(path)} cannot be written ({exc.strerror or exc}) — choose a writable location"
        ) from None
    return path


def _resolved(path: str | os.PathLike) -> Path | None:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _parent(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


# ------------------------------------------------------------------------------------------- temporary siblings
def _host_tag() -> str:
    """Six hex digits naming this machine (a process id means something only on its own machine)."""
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


def partial_name(output: Path) -> str:
    """Name of a new hidden temporary sibling of ``output``: ``.NAME.partial-<host>-<pid>-<random>``."""
    return f".{output.name[:_NAME_KEPT]}{PARTIAL_MARK}{_host_tag()}-{os.getpid()}-{secrets.token_hex(4)}"


def _create_exclusive(folder: Path, prefix: str) -> tuple[str, int]:
    """A new file in ``folder`` (never an existing one, never through a link); its path and open descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = os.path.join(folder, prefix + secrets.token_hex(6))
        try:
            return name, os.open(name, flags, 0o666)  # the umask applies, as for any file the user creates
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process: running
    return True


def clean_leftovers(output: str | os.PathLike) -> list[str]:
    """Remove the temporary siblings of ``output`` that killed runs of this machine left; describe the rest.

    Returns one note per leftover found: "removed …" for those whose process (on this machine) is gone, and "…
    was left …" naming the path for the others (a process still running, or another machine's), so the user can
    remove them. A replaced release folder parked by a run killed half-way through replacing it is put back under
    the output's name when nothing else took that name (:func:`engine.scale.atomic_output.commit`).
    """
    path = Path(output)
    parent = _parent(path)
    stem = f".{path.name[:_NAME_KEPT]}"
    notes: list[str] = []
    try:
        entries = sorted(parent.iterdir())
    except OSError:
        return notes
    host = _host_tag()
    for entry in entries:
        name = entry.name
        if not name.startswith(stem):
            continue
        rest = name[len(stem):]
        kind = next((k for k in (PARTIAL_MARK, ".replaced-") if rest.startswith(k)), None)
        if kind is None:
            continue
        tag, _, tail = rest[len(kind):].partition("-")
        pid_text = tail.partition("-")[0]
        ours = tag == host and pid_text.isdigit() and int(pid_text) != os.getpid() and not _running(int(pid_text))
        if not ours:
            notes.append(
                f"{_shown(entry)} was left by another run of this output (still running, or on another machine) — "
                "remove it once no run is writing there"
            )
            continue
        if kind == ".replaced-" and not os.path.lexists(path):
            with contextlib.suppress(OSError):
                os.rename(entry, path)
                notes.append(f"put back the previous {_shown(path)}, which an interrupted run had moved aside")
                continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError as exc:
            notes.append(f"{_shown(entry)} was left by an interrupted run and could not be removed "
                         f"({exc.strerror or exc}) — remove it")
            continue
        notes.append(f"removed {_shown(entry)}, left by an interrupted run")
    return notes


# ---------------------------------------------------------------------------------------------------- writing
def fsync_folder(folder: str | os.PathLike) -> None:
    """``fsync`` a folder so a rename in it survives a power loss (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_with(output: str | os.PathLike, writer: Callable[[BinaryIO], None], *, flag: str = "--output",
               overwrite: bool = False) -> Path:
    """Write a file atomically: ``writer`` fills a temporary sibling, which then takes the output's name.

    Parameters
    ----------
    output : path
        Checked already with :func:`check_output_path` (this function does not repeat the input checks).
    writer : callable
        Called once with the temporary file, open for binary writing.
    flag : str
        For the messages.
    overwrite : bool
        Replace an existing file of that name; without it a file that appeared while the command ran is refused
        (nothing is replaced).

    Raises
    ------
    InvalidParameterError
        The file cannot be written (message with the reason), or it appeared meanwhile without ``overwrite``.
    """

    def produce(handle: BinaryIO, written: Callable[[int], None]) -> None:
        writer(handle)
        written(handle.tell())

    return _write_atomic(Path(output), produce, flag=flag, overwrite=overwrite)


def write_bytes(output: str | os.PathLike, data: bytes, *, flag: str = "--output", overwrite: bool = False) -> Path:
    """Write ``data`` atomically to ``output`` (as :func:`write_with`), in chunks of :data:`CHUNK_BYTES`."""
    view = memoryview(data)

    def produce(handle: BinaryIO, written: Callable[[int], None]) -> None:
        for start in range(0, len(view), CHUNK_BYTES):
            chunk = view[start:start + CHUNK_BYTES]
            handle.write(chunk)
            written(start + len(chunk))

    return _write_atomic(Path(output), produce, flag=flag, overwrite=overwrite)


def write_text(output: str | os.PathLike, text: str, *, flag: str = "--output", overwrite: bool = False) -> Path:
    """Write UTF-8 ``text`` atomically to ``output`` (as :func:`write_with`)."""
    return write_bytes(output, text.encode("utf-8"), flag=flag, overwrite=overwrite)


#: Rows per row group of :func:`write_parquet` (pyarrow's default row group).
PARQUET_ROWS = 1 << 20


def write_parquet(output: str | os.PathLike, frame: Any, *, flag: str = "--output", overwrite: bool = False,
                  rows: int = PARQUET_ROWS) -> Path:
    """Write the pandas ``frame`` atomically to ``output`` as Parquet (as :func:`write_with`): the values and row
    groups of ``frame.to_parquet(path, index=False)``, converted and written a row group of ``rows`` rows at a time,
    so that one row group's copy is in memory instead of the whole table's (issue 33 §3). No dictionary encoding
    (released values are noise: they never repeat)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def produce(handle: BinaryIO, written: Callable[[int], None]) -> None:
        writer = None
        for start in range(0, max(len(frame), 1), rows):
            table = pa.Table.from_pandas(frame.iloc[start:start + rows], preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(handle, table.schema, use_dictionary=False)
            writer.write_table(table)
            del table
        assert writer is not None
        writer.close()
        written(handle.tell())

    return _write_atomic(Path(output), produce, flag=flag, overwrite=overwrite)


def _write_atomic(path: Path, produce: Callable[[BinaryIO, Callable[[int], None]], None], *, flag: str,
                  overwrite: bool) -> Path:
    parent = _parent(path)

    def cannot(exc: OSError) -> InvalidParameterError:
        return InvalidParameterError(
            f"cannot write {flag} {_shown(path)}: {exc.strerror or exc} — choose a writable location"
        )

    try:
        temp, fd = _create_exclusive(parent, partial_name(path) + "-")
    except OSError as exc:
        raise cannot(exc) from None

    def written(n: int) -> None:
        if _after_chunk is not None:
            handle.flush()
            _after_chunk(temp, n)

    try:
        with os.fdopen(fd, "wb") as handle:
            _keep_mode(path, handle.fileno())
            produce(handle, written)
            handle.flush()
            os.fsync(handle.fileno())
        _publish(temp, path, flag=flag, overwrite=overwrite)
    except BaseException as exc:  # Ctrl-C too: the temporary file goes, the output is untouched
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise cannot(exc) from None
        raise
    fsync_folder(parent)
    record_written(path)
    return path


def _keep_mode(path: Path, fd: int) -> None:
    """Give the new file the permissions of the file it replaces (a release kept private with ``chmod 600`` must not
    come back readable by others); a new output gets the usual ones (0666 less the umask)."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    import stat

    if stat.S_ISREG(info.st_mode):
        os.fchmod(fd, stat.S_IMODE(info.st_mode))


def _publish(temp: str, path: Path, *, flag: str, overwrite: bool) -> None:
    """Give the finished temporary file the output's name (replacing only with ``overwrite``)."""
    appeared = InvalidParameterError(
        f"{flag} {_shown(path)} appeared while the command ran — nothing was replaced; add --overwrite or choose "
        "a new name"
    )
    if os.path.islink(path):
        raise InvalidParameterError(
            f"{flag} {_shown(path)} became a symbolic link while the command ran — nothing was written through it"
        )
    if overwrite:
        if path.is_dir():
            raise InvalidParameterError(
                f"{flag} {_shown(path)} became a folder while the command ran — nothing was written"
            )
        os.replace(temp, path)  # replaces the name only: other hard links to the old file keep its content
        return
    try:
        os.link(temp, path)  # fails if the name exists: never replaces a file that appeared meanwhile
    except FileExistsError:
        raise appeared from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOSYS):
            raise
        if os.path.lexists(path):  # a filesystem without hard links: check, then rename
            raise appeared from None
        os.rename(temp, path)
        return
    os.unlink(temp)


# ---------------------------------------------------------------------------------------- what was written
def record_written(path: str | os.PathLike) -> None:
    """Note that ``path`` was written completely by this process."""
    _WRITTEN.append(str(path))


def written_outputs() -> tuple[str, ...]:
    """Every output this process has written completely, in order."""
    return tuple(_WRITTEN)


def forget_written() -> None:
    """Start a new command with an empty list (``python -m engine`` calls it; tests run several commands)."""
    _WRITTEN.clear()
