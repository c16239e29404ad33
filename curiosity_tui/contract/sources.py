"""Evidence sources (S4): text artifacts stored under ``sources/`` by sha256, with title and locator."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curiosity_tui.atomic import atomic_write_bytes
from curiosity_tui.errors import (
    CommittedButBehindError,
    InputError,
    TransitionError,
)
from curiosity_tui.ledger.events import SourceAdded
from curiosity_tui.ledger.ledger import SOURCES_DIR, Ledger, valid_actor

MAX_SOURCE_BYTES = 20 * 1024 * 1024


@dataclass
class AddResult:
    source_id: str
    title: str
    added: bool  # False when the same content was already stored


def read_text_artifact(path: Path) -> str:
    """Read a source file; refuse what is not usable text, naming the file and the problem.

    A symbolic link is refused (opened with ``O_NOFOLLOW``, so it cannot be swapped in
    between a check and the read): ``sources add`` stores what the user named, never what a
    link happens to point at (``/etc/passwd``). FIFOs and devices are refused too."""
    data = _read_regular_file(path)
    if not data:
        raise InputError(f"{path}: file is empty")
    if b"\x00" in data:
        nul = data.index(b"\x00")
        raise InputError(f"{path}: looks binary (NUL byte at offset {nul}); sources must be text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text (bad byte at offset {err.start})") from None
    if not text.strip():
        raise InputError(f"{path}: file holds only whitespace")
    return text


def _read_regular_file(path: Path) -> bytes:
    if path.is_symlink():
        target = os.readlink(path)
        raise InputError(
            f"{path}: is a symbolic link (to {target}); sources are added from regular files "
            "only: pass the real file's path"
        )
    if not path.exists():
        raise InputError(f"{path}: no such file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise InputError(f"{path}: is a symbolic link; sources are regular files") from None
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path}: not a regular file (a directory?); sources are text files")
        if st.st_size > MAX_SOURCE_BYTES:
            raise InputError(f"{path}: {st.st_size} bytes is over the 20 MB limit for a source")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(MAX_SOURCE_BYTES + 1)
    finally:
        os.close(fd)


def read_stored_source(ledger_path: Path, src: dict[str, Any]) -> str:
    """A stored source's text, checked against its sha256 (the id). A missing, unreadable or
    altered file raises TransitionError: a match against it would verify nothing."""
    path: Path = Path(ledger_path) / src["path"]
    try:
        data = path.read_bytes()
    except OSError as err:
        raise TransitionError(
            f"cited source {src['id'][:12]}: its file {src['path']} cannot be read ({err.strerror})"
        ) from None
    if hashlib.sha256(data).hexdigest() != src["id"]:
        raise TransitionError(
            f"cited source {src['id'][:12]}: its file {src['path']} no longer matches its sha256"
        )
    return data.decode("utf-8")


def add_source(
    led: Ledger,
    path: str | Path,
    *,
    title: str | None = None,
    locator: str | None = None,
    actor: str = "system",
) -> AddResult:
    if not valid_actor(actor):
        raise InputError(f"invalid actor {actor!r}: use system or human:<name>")
    p = Path(path)
    text = read_text_artifact(p)
    blob = text.encode("utf-8")
    digest = hashlib.sha256(blob).hexdigest()
    name = title or p.stem
    stored = next((s for s in led.sources() if s.id == digest), None)
    if stored is not None:  # same content: stored once, under its first title
        return AddResult(digest, stored.title, added=False)
    rel = f"{SOURCES_DIR}/{digest}.txt"
    target = led.path / rel
    existed = target.exists()
    atomic_write_bytes(target, blob)
    try:
        _record_source(led, p, digest, name, locator, actor, rel, len(blob))
    except BaseException as err:
        if not existed and not isinstance(err, CommittedButBehindError):
            target.unlink(missing_ok=True)  # not in the journal: leave nothing behind
        raise
    return AddResult(digest, name, added=True)


def _record_source(
    led: Ledger,
    p: Path,
    digest: str,
    name: str,
    locator: str | None,
    actor: str,
    rel: str,
    size: int,
) -> None:
    with led.batch(led.last_session, marker="batch_committed", label="sources") as b:
        added = SourceAdded(
            id=digest,
            title=name,
            locator=locator or str(p.resolve()),
            size=size,
            added_by=actor,
            added_at=led.clock(),
            path=rel,
        )
        b.emit(added, actor=actor)
