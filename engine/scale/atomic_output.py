"""Writing a partitioned Parquet dataset so that only a finished run ever appears under the output name.

Every partition is written (and fsync'ed) into a hidden staging directory next to the output,
``.<name>.partial-<host>-<pid>-<random>`` (:func:`engine.output_files.partial_name`); the sidecar JSON
(:data:`SIDECAR_NAME`) is written last, the staging directory is fsync'ed and renamed to the output name in one
``rename`` (atomic on a POSIX filesystem), and the parent directory is fsync'ed. A failed or interrupted run removes
its staging directory; a killed process (SIGKILL, power loss) can leave one behind, but never a directory under the
output name — and the next run for the same output removes it (:func:`engine.output_files.clean_leftovers`, called
by :func:`check_output_directory`), or names it when another machine's or a running process's. The sidecar's
leading underscore makes Parquet readers (pyarrow datasets, ``dask.dataframe.read_parquet``) skip it when they read
the output folder.

The output is checked like every output of the Studio (:func:`engine.output_files.check_output_path`): never a
symbolic link (not even a dangling one), never a folder holding an input, and never an existing folder — unless
``overwrite`` and the folder is a release the Studio wrote (it holds :data:`SIDECAR_NAME` and only partition files);
it is then replaced only once the new release is complete: the old folder is moved aside, the new one renamed into
place and the old one removed (a run killed between the two renames leaves the old release aside, and the next run
puts it back).

Workers write the partition files themselves, so with a remote cluster the output path must be on a filesystem
every worker and the driver share.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import InvalidParameterError
from engine.output_files import check_output_path, clean_leftovers, fsync_folder, partial_name, record_written

#: Name of the sidecar JSON (guarantee and run metadata) inside the output directory.
SIDECAR_NAME = "_release.json"

#: What marks a staging directory (hidden; removed on failure, or by the next run after a kill).
STAGING_MARK = ".partial-"

_PART = re.compile(r"part-\d{5,}\.parquet")


def partition_file_name(index: int) -> str:
    """``part-00007.parquet`` for partition 7 (zero-padded so that name order is row order).

    >>> partition_file_name(7)
    'part-00007.parquet'
    """
    return f"part-{index:05d}.parquet"


def is_release_folder(path: Path) -> bool:
    """True for a folder this module wrote: the sidecar plus partition files, nothing else (what ``overwrite``
    may replace)."""
    try:
        names = {p.name for p in path.iterdir()}
    except OSError:
        return False
    return SIDECAR_NAME in names and all(n == SIDECAR_NAME or _PART.fullmatch(n) for n in names)


def check_output_directory(output: str, *, overwrite: bool = False,
                           inputs: Iterable[tuple[str, str | None]] = ()) -> tuple[Path, list[str]]:
    """The output folder, checked before any work; and notes on leftovers of interrupted runs (removed or named).

    Refused: not a folder name, a ``.csv`` name, a symbolic link (even dangling), a folder holding one of
    ``inputs``, a missing parent folder, and an existing path — unless ``overwrite`` and it is a release folder
    the Studio wrote (:func:`is_release_folder`).
    """
    if not isinstance(output, str) or not output:
        raise InvalidParameterError(f"--output must name a new folder; got {output!r}")
    path = Path(output)
    if path.suffix.lower() == ".csv":
        raise InvalidParameterError(
            f"--engine dask writes a folder of Parquet files; --output must name a new folder, not a .csv file; got "
            f"{output!r}"
        )
    notes = clean_leftovers(path)  # first: it may put back a release an interrupted replacement moved aside
    check_output_path(path, inputs=inputs, overwrite=overwrite, folder=True)
    if path.exists() and not is_release_folder(path):
        raise InvalidParameterError(
            f"--output {output!r} is a folder the Studio did not write as a release (no {SIDECAR_NAME} beside only "
            "part-*.parquet files) — it is never replaced; choose a new folder name"
        )
    return path, notes


@contextlib.contextmanager
def staging_directory(output: Path) -> Iterator[Path]:
    """A fresh hidden sibling of ``output`` for the duration of the block; removed if the block fails."""
    parent = output.resolve().parent
    staging = parent / partial_name(output)
    try:
        staging.mkdir()
    except OSError as exc:
        raise InvalidParameterError(f"cannot create a folder next to --output {str(output)!r}: {exc.strerror or exc}") from None
    try:
        yield staging
    except BaseException:
        remove_staging(staging)
        raise


def remove_staging(staging: Path, *, attempts: int = 100, pause: float = 0.05) -> None:
    """Remove a staging folder, retrying while tasks still running on workers finish writing into it.

    A task that starts writing after the folder is gone fails to open its file (the folder is not recreated), so
    repeating ``rmtree`` until the folder has disappeared cannot leave a partial dataset behind.
    """
    for _ in range(attempts):
        shutil.rmtree(staging, ignore_errors=True)
        if not staging.exists():
            return
        time.sleep(pause)


def write_partition(values: np.ndarray, columns: tuple[str, ...], directory: str, index: int) -> str:
    """Write one partition's n × m values as Parquet (one float64 column per name) into ``directory``; fsync it.

    The bytes depend only on the values (no pandas index or timestamps in the metadata), so a seeded rerun gives
    identical files. Returns the file name.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    by_column = np.asfortranarray(values, dtype=np.float64)  # one copy; every column is then contiguous
    table = pa.Table.from_arrays([pa.array(by_column[:, j]) for j in range(by_column.shape[1])], names=list(columns))
    name = partition_file_name(index)
    with open(os.path.join(directory, name), "wb") as handle:
        # Noise neither compresses nor repeats: no compression and no dictionary (pyarrow tries a dictionary first
        # and gives it up on every page: 70 % of the write's CPU; issue 33 §2).
        pq.write_table(table, handle, compression="none", use_dictionary=False)
        handle.flush()
        os.fsync(handle.fileno())
    return name


def commit(staging: Path, output: Path, sidecar: dict[str, Any], *, overwrite: bool = False) -> None:
    """Write the sidecar into ``staging``, then make ``staging`` appear as ``output`` in one rename.

    With ``overwrite`` an existing release folder under ``output`` is replaced: moved aside (a hidden
    ``.NAME.replaced-…`` sibling), the new folder renamed into place, the old one removed.
    """
    target = staging / SIDECAR_NAME
    with open(target, "w", encoding="utf-8") as handle:
        json.dump(sidecar, handle, indent=2, allow_nan=False, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    fsync_folder(staging)
    parent = output.resolve().parent
    if output.is_symlink():
        raise InvalidParameterError(
            f"--output {str(output)!r} became a symbolic link while the release ran — nothing was replaced"
        )
    aside = None
    if output.exists():
        if not (overwrite and is_release_folder(output)):
            raise InvalidParameterError(
                f"--output {str(output)!r} appeared while the release ran — nothing was replaced; choose a new folder "
                "name"
            )
        os.chmod(staging, os.stat(output).st_mode & 0o7777)  # a release folder kept private stays private
        aside = parent / partial_name(output).replace(STAGING_MARK, ".replaced-", 1)
        os.rename(output, aside)
    os.rename(staging, output)
    fsync_folder(parent)
    record_written(output)
    if aside is not None:
        remove_staging(aside)


__all__ = [
    "SIDECAR_NAME",
    "check_output_directory",
    "commit",
    "is_release_folder",
    "partition_file_name",
    "remove_staging",
    "staging_directory",
    "write_partition",
]
