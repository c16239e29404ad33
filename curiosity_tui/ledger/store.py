"""All TinyDB access: the projection file ``ledger.json`` and the one-writer lock.

TinyDB is not safe across threads or processes, so:
- writes go through :class:`ProjectionStore`, which holds a thread lock while it touches
  the database, and a process holds a ledger for writing only while it owns the
  ``writer.lock`` file lock (fcntl.flock, held for the writer's lifetime);
- the storage buffers every TinyDB write in memory and :meth:`ProjectionStore.flush`
  replaces the file atomically (temp file + fsync + rename), so a reader never sees a
  half-written projection.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.storages import Storage
from tinydb.table import Document

from curiosity_tui.atomic import atomic_write_bytes
from curiosity_tui.clock import utc_now_seconds
from curiosity_tui.errors import CorruptLedgerError, LedgerLockedError, StorageError, os_reason

PROJECTION_FILE = "ledger.json"
LOCK_FILE = "writer.lock"
TABLES = ("meta", "nodes", "sessions", "failed", "snapshots", "sources")


class BufferedAtomicStorage(Storage):
    """TinyDB storage: reads the file once, keeps the data in memory, writes it on flush()."""

    def __init__(self, path: str, create: bool = False) -> None:
        self.path = Path(path)
        self._data: dict[str, Any] | None = None
        self.dirty = False
        # serialisation cache: table -> doc id -> (the document object, its JSON text).
        # A document is re-serialised when it is a new object or was marked changed in place.
        self._ser: dict[str, dict[str, tuple[Any, bytes]]] = {}
        self._marked: dict[str, set[str]] = {}
        if not self.path.exists() and not create:
            raise FileNotFoundError(path)

    def read(self) -> dict[str, Any] | None:
        if self._data is None:
            if self.path.exists() and self.path.stat().st_size > 0:
                try:
                    self._data = json.loads(self.path.read_bytes())
                except json.JSONDecodeError as err:
                    raise CorruptLedgerError(
                        f"{self.path}: projection is not valid JSON (line {err.lineno})",
                        path=str(self.path),
                    ) from None
            else:
                self._data = {}
        return self._data

    def write(self, data: dict[str, Any]) -> None:
        self._data = data
        self.dirty = True

    def mark(self, table: str, doc_ids: list[str]) -> None:
        """Record documents changed in place (same object, new content) since the last flush."""
        self._marked.setdefault(table, set()).update(doc_ids)

    def _serialise(self, data: dict[str, Any]) -> bytes:
        """The whole database as JSON bytes, re-encoding only documents that changed: a commit
        that touches 20 nodes of 10,000 costs 20 encodes and one join, not a full json.dumps.
        (TinyDB document ids are decimal strings and table names plain words, so they are
        written without escaping.)"""
        dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
        parts = []
        new_ser: dict[str, dict[str, tuple[Any, bytes]]] = {}
        for tname, table in data.items():
            old_get = self._ser.get(tname, {}).get
            marked = self._marked.get(tname, ())
            cache: dict[str, tuple[Any, bytes]] = {}
            for did, doc in table.items():
                hit = old_get(did)
                if hit is None or hit[0] is not doc or did in marked:
                    hit = (doc, b'"%s":%s' % (did.encode("utf-8"), dumps(doc).encode("utf-8")))
                cache[did] = hit
            new_ser[tname] = cache
            parts.append(
                b'"%s":{%s}' % (tname.encode("utf-8"), b",".join(h[1] for h in cache.values()))
            )
        self._ser = new_ser
        self._marked = {}
        return b"{" + b",".join(parts) + b"}"

    def flush(self) -> None:
        if not self.dirty or self._data is None:
            return
        blob = self._serialise(self._data)
        atomic_write_bytes(self.path, blob)
        self.dirty = False

    def discard(self) -> None:
        """Forget buffered changes (the next read reloads the file)."""
        self._data = None
        self.dirty = False
        self._ser = {}
        self._marked = {}

    def close(self) -> None:
        return None


class WriterLock:
    """An exclusive, cross-process lock on a ledger directory, naming its holder."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:  # a read-only folder, no permission: one line, nothing changed
            raise StorageError(
                f"cannot open ledger {self.path.parent} for writing: {self.path}: {os_reason(err)}"
            ) from err
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with contextlib.suppress(OSError):
                holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            who = holder or "another process"
            raise LedgerLockedError(
                f"ledger {self.path.parent} is locked for writing by {who}"
            ) from None
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": utc_now_seconds(),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {info['pid']} on {info['host']} since {info['since']}".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


class ProjectionStore:
    """The projection in TinyDB. One instance per open ledger; thread-safe."""

    def __init__(self, directory: Path, *, create: bool = False) -> None:
        self.path = directory / PROJECTION_FILE
        self._lock = threading.RLock()
        self._storage_ref: BufferedAtomicStorage | None = None

        def factory(path: str) -> BufferedAtomicStorage:
            st = BufferedAtomicStorage(path, create=create)
            self._storage_ref = st
            return st

        self.db = TinyDB(str(self.path), storage=factory)  # type: ignore[arg-type]

    @property
    def storage(self) -> BufferedAtomicStorage:
        assert self._storage_ref is not None
        return self._storage_ref

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    # -- reads ---------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        with self._lock:
            docs = self.db.table("meta").all()
            return dict(docs[0]) if docs else {}

    def table_rows(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(d) for d in self.db.table(name).all()]

    # -- writes (buffered until flush) -----------------------------------------
    def replace_meta(self, meta: dict[str, Any]) -> None:
        with self._lock:
            t = self.db.table("meta")
            t.truncate()
            t.insert(meta)

    def put_nodes(self, changed: dict[str, dict[str, Any]]) -> None:
        """Insert new nodes and replace changed ones (doc_id = the node's number)."""
        if not changed:
            return
        with self._lock:
            t = self.db.table("nodes")
            known = set((self.storage.read() or {}).get("nodes", {}).keys())
            upd = [int(nid[1:]) for nid in changed if nid[1:] in known]
            new = sorted((nid for nid in changed if nid[1:] not in known), key=lambda x: int(x[1:]))
            if upd:

                def replace(doc: Any) -> None:
                    fresh = changed[doc["id"]]
                    doc.clear()
                    doc.update(fresh)

                t.update(replace, doc_ids=upd)
                self.storage.mark("nodes", [str(i) for i in upd])
            if new:
                t.insert_multiple(Document(changed[nid], doc_id=int(nid[1:])) for nid in new)

    def insert_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            with self._lock:
                self.db.table(name).insert_multiple(rows)

    def rewrite(self, tables: dict[str, list[dict[str, Any]]]) -> None:
        """Replace the whole projection (used when rebuilding from the journal)."""
        with self._lock:
            self.db.drop_tables()
            for name, rows in tables.items():
                if name == "nodes":
                    self.db.table("nodes").insert_multiple(
                        Document(r, doc_id=int(r["id"][1:])) for r in rows
                    )
                else:
                    self.db.table(name).insert_multiple(rows)

    def flush(self) -> None:
        with self._lock:
            self.storage.flush()

    def discard(self) -> None:
        with self._lock:
            self.storage.discard()
            self.db.clear_cache()

    def close(self) -> None:
        with self._lock:
            self.db.close()
