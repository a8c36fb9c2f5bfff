"""Writing a partitioned Parquet dataset so that only a finished run ever appears under the output name.

Every partition is written (and fsync'ed) into a hidden staging directory next to the output,
``.<name>.partial-<random>``; the sidecar JSON (:data:`SIDECAR_NAME`) is written last, the staging directory is
fsync'ed and renamed to the output name in one ``rename`` (atomic on a POSIX filesystem), and the parent directory
is fsync'ed. A failed or interrupted run removes its staging directory; a killed process (SIGKILL, power loss) can
leave one behind, but never a directory under the output name. The sidecar's leading underscore makes Parquet
readers (pyarrow datasets, ``dask.dataframe.read_parquet``) skip it when they read the output folder.

Workers write the partition files themselves, so with a remote cluster the output path must be on a filesystem
every worker and the driver share.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import InvalidParameterError

#: Name of the sidecar JSON (guarantee and run metadata) inside the output directory.
SIDECAR_NAME = "_release.json"

#: Prefix of staging directories (hidden; removed on failure).
STAGING_PREFIX = "."
STAGING_MARK = ".partial-"


def partition_file_name(index: int) -> str:
    """``part-00007.parquet`` for partition 7 (zero-padded so that name order is row order).

    >>> partition_file_name(7)
    'part-00007.parquet'
    """
    return f"part-{index:05d}.parquet"


def check_output_directory(output: str) -> Path:
    """The output path, refused if it exists already or its parent folder does not."""
    if not isinstance(output, str) or not output:
        raise InvalidParameterError(f"--output must name a new folder; got {output!r}")
    path = Path(output)
    if path.suffix.lower() == ".csv":
        raise InvalidParameterError(
            f"--engine dask writes a folder of Parquet files; --output must name a new folder, not a .csv file; got "
            f"{output!r}"
        )
    if path.exists():
        raise InvalidParameterError(
            f"--output {output!r} exists already — choose a new folder name (a release never overwrites a previous one)"
        )
    if not path.resolve().parent.is_dir():
        raise InvalidParameterError(f"the folder that should hold --output {output!r} does not exist — create it first")
    return path


@contextlib.contextmanager
def staging_directory(output: Path) -> Iterator[Path]:
    """A fresh hidden sibling of ``output`` for the duration of the block; removed if the block fails."""
    parent = output.resolve().parent
    staging = parent / f"{STAGING_PREFIX}{output.name}{STAGING_MARK}{secrets.token_hex(6)}"
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
        pq.write_table(table, handle, compression="none")  # noise does not compress
        handle.flush()
        os.fsync(handle.fileno())
    return name


def _fsync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(staging: Path, output: Path, sidecar: dict[str, Any]) -> None:
    """Write the sidecar into ``staging``, then make ``staging`` appear as ``output`` in one rename."""
    target = staging / SIDECAR_NAME
    with open(target, "w", encoding="utf-8") as handle:
        json.dump(sidecar, handle, indent=2, allow_nan=False, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    _fsync_directory(staging)
    if output.exists():
        raise InvalidParameterError(
            f"--output {str(output)!r} appeared while the release ran — nothing was replaced; choose a new folder name"
        )
    os.rename(staging, output)
    _fsync_directory(output.resolve().parent)


__all__ = [
    "SIDECAR_NAME",
    "check_output_directory",
    "commit",
    "partition_file_name",
    "remove_staging",
    "staging_directory",
    "write_partition",
]
