"""Durable file writes, shared by every store (ledger projection, sources, packs, ratings,
the pre-registration chain and the pack log). The bottom floor: imports nothing from the package.

- :func:`atomic_write_bytes`: temp file in the same directory + fsync + rename + fsync of the
  directory, so a crash leaves either the old or the new file, never a torn one, and the
  rename itself survives a power cut.
- :func:`append_line_durable`: one ``write`` of a whole line with ``O_APPEND`` + fsync (the
  hash-chained logs). The ledger journal has its own batch append (``ledger/journal.py``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644, sync: bool = True) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new file.

    ``sync=False`` leaves out both fsyncs: the file is still whole after a killed process
    (the rename is atomic), not after a power cut — for scratch files written per keystroke.
    A failure (disk full, read-only folder) removes the temp file and raises an ``OSError``
    whose ``filename`` is ``path``, so the one-line error names the file."""
    path = Path(path)
    try:
        _atomic_write(path, data, mode, sync)
    except OSError as err:
        if err.filename is None:
            raise OSError(err.errno, err.strerror, str(path)) from err
        raise


def _atomic_write(path: Path, data: bytes, mode: int, sync: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if sync:
        fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """fsync a directory so a rename or a new file in it is durable."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def append_line_durable(path: Path, line: bytes) -> None:
    """Append one whole line with a single ``O_APPEND`` write, then fsync. A failed write is
    cut back off (so no torn line is left for the next append) and raises naming ``path``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.fstat(fd).st_size
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise OSError(err.errno, err.strerror, str(path)) from err
    finally:
        os.close(fd)
