"""All projection access: the head file ``ledger.json``, the append-only row files under
``projection/`` and the one-writer lock (decision 175).

Layout (format 2):

- ``projection/<table>.<gen>.jsonl`` for each table (nodes, sessions, failed, snapshots,
  sources): one JSON row per line, appended and never rewritten. Each commit appends its
  rows as one *chunk* closed by a trailer line ``#<chain>``, where
  ``chain = sha256(previous chain + chunk bytes)``; the first chain is sha256 of the table
  name. Node rows are versions (``{"h": <node hash>, "n": <node>}``): the last one wins, and
  the file is compacted into a new generation when superseded versions outnumber live ones.
- ``ledger.json``: the small head, replaced by rename at the end of each commit: the journal
  checkpoint (last seq, its hash, the byte offset after it), the counters, and for each table
  its file, size, row count and last chain; ``head_hash`` covers all of it.

A commit therefore writes what it changed plus the head, whatever the number of sessions so
far. Nothing here is fsynced: the journal's fsync is the commit point, and a projection that
a crash or a power cut left behind or torn fails the checks below and is rebuilt from the
journal (decision 176). Readers only ever read up to the sizes the head records.

Writers are serialised twice: across processes by ``writer.lock`` (fcntl.flock, held for the
writer's lifetime), within a process by the store's thread lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from curiosity_tui.clock import utc_now_seconds
from curiosity_tui.errors import LedgerLockedError, StorageError, os_reason
from curiosity_tui.ledger import fastjson

PROJECTION_FILE = "ledger.json"
PROJECTION_DIR = "projection"
LOCK_FILE = "writer.lock"
FORMAT = 2
TABLES = ("nodes", "sessions", "failed", "snapshots", "sources")
#: superseded node versions allowed beyond the live ones before the node table is compacted
COMPACT_SLACK = 1000
_FILE_NAME = re.compile(r"[a-z]+\.[0-9]{1,9}\.jsonl")
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


class ProjectionDamaged(Exception):
    """The projection cannot be trusted; ``str(err)`` says what and where, in one line."""


class LegacyLayout(Exception):
    """``ledger.json`` is a format-1 (TinyDB) projection: read from the journal instead and
    converted on the next write. ``data`` holds the parsed file (for ``verify``)."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__("projection in the format-1 layout")
        self.data = data


class TableFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    size: int
    rows: int
    chain: str


class Head(BaseModel):
    """What ``ledger.json`` holds (format 2)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal[2]
    run: dict[str, Any] | None
    last_seq: int
    last_hash: str
    journal_offset: int
    node_counter: int
    evidence_counter: int
    downgrade_counter: int
    last_session: int
    dirty_since_snapshot: list[str]
    live_nodes: int
    files: dict[str, TableFile]
    head_hash: str = ""


def canonical_bytes(obj: Any) -> bytes:
    return _ENCODE(obj).encode("utf-8")


def node_line(node_text: str, digest: str) -> bytes:
    """A node row from the node's canonical JSON and its hash (no re-encoding)."""
    return b'{"h":"%s","n":%s}\n' % (digest.encode("ascii"), node_text.encode("utf-8"))


def row_line(row: dict[str, Any]) -> bytes:
    return canonical_bytes(row) + b"\n"


def _seed(table: str) -> str:
    return hashlib.sha256(table.encode("ascii")).hexdigest()


def _head_digest(fields: dict[str, Any]) -> str:
    body = canonical_bytes({k: v for k, v in fields.items() if k != "head_hash"})
    return hashlib.sha256(body).hexdigest()


def _write_new(path: Path) -> None:
    """Create ``path`` empty; an OSError names it."""
    try:
        path.write_bytes(b"")
    except OSError as err:
        raise OSError(err.errno, err.strerror, str(path)) from err


def read_head(directory: Path) -> Head | None:
    """The head, or None when there is no projection. Raises ProjectionDamaged (one line) for
    anything unreadable, LegacyLayout for a format-1 file."""
    path = directory / PROJECTION_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ProjectionDamaged(f"{path}: unreadable ({err.strerror})") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ProjectionDamaged(f"{path}: not valid JSON") from None
    if isinstance(data, dict) and data.get("format") != FORMAT and "meta" in data:
        raise LegacyLayout(data)
    if not isinstance(data, dict):
        raise ProjectionDamaged(f"{path}: not a projection head (a JSON {type(data).__name__})")
    try:
        head = Head.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ProjectionDamaged(f"{path}: bad head field {loc!r}: {first['msg']}") from None
    if head.head_hash != _head_digest(data):
        raise ProjectionDamaged(f"{path}: head hash does not match its content")
    if set(head.files) != set(TABLES):
        raise ProjectionDamaged(f"{path}: head names tables {sorted(head.files)}")
    for table, tf in head.files.items():  # never a path outside projection/
        if _FILE_NAME.fullmatch(tf.name) is None or not tf.name.startswith(f"{table}."):
            raise ProjectionDamaged(f"{path}: bad file name {tf.name!r} for table {table}")
        if tf.size < 0 or tf.rows < 0:
            raise ProjectionDamaged(f"{path}: negative size for table {table}")
    return head


def read_head_quiet(directory: Path) -> Head | None:
    """The head if it reads cleanly, else None (to tell a moving writer from damage)."""
    try:
        return read_head(directory)
    except (ProjectionDamaged, LegacyLayout):
        return None


def legacy_tables(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The tables of a format-1 (TinyDB) projection, for ``verify``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name in ("meta", *TABLES):
        table = data.get(name, {})
        out[name] = [dict(d) for d in table.values()] if isinstance(table, dict) else []
    return out


#: ledger directories this process holds the writer lock on -> the thread that took it
_HELD_HERE: dict[str, str] = {}
#: tries, 20 ms apart, while the lock file is empty (another writer is taking or releasing it)
_SETTLE_TRIES = 10


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
        holder = ""
        for attempt in range(_SETTLE_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                with contextlib.suppress(OSError):
                    holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
                if holder or attempt == _SETTLE_TRIES - 1:  # a settled holder: refuse now
                    os.close(fd)
                    raise LedgerLockedError(
                        f"ledger {self.path.parent} is locked for writing by {self._who(holder)}"
                    ) from None
                time.sleep(0.02)  # an empty file: a writer is between flock and its name
        self._hold(fd)

    def _who(self, holder: str) -> str:
        here = _HELD_HERE.get(str(self.path.parent))
        name = holder or ("this process" if here is not None else "another process")
        return name if here is None else f"{name} (this process, thread {here})"

    def _hold(self, fd: int) -> None:
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": utc_now_seconds(),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {info['pid']} on {info['host']} since {info['since']}".encode(), 0)
        self._fd = fd
        _HELD_HERE[str(self.path.parent)] = threading.current_thread().name

    def release(self) -> None:
        if self._fd is not None:
            _HELD_HERE.pop(str(self.path.parent), None)
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None


class ProjectionStore:
    """The projection of one ledger directory. One instance per open ledger; thread-safe.

    Reads check what they read (chains, sizes, row counts) and raise ProjectionDamaged;
    writes go through :meth:`commit` (append) and :meth:`rewrite` (a new generation)."""

    def __init__(self, directory: Path, head: Head | None = None) -> None:
        self.directory = directory
        self.path = directory / PROJECTION_FILE
        self.rows_dir = directory / PROJECTION_DIR
        self.head = head
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    # -- reads -----------------------------------------------------------------
    def table_bytes(self, table: str) -> list[bytes]:
        """The checked chunks of a table, as stored (row lines, trailers removed)."""
        assert self.head is not None
        tf = self.head.files[table]
        path = self.rows_dir / tf.name
        try:
            with path.open("rb") as fh:
                data = fh.read(tf.size)
        except OSError as err:
            raise ProjectionDamaged(f"{path}: unreadable ({err.strerror})") from None
        if len(data) != tf.size:
            raise ProjectionDamaged(f"{path}: shorter ({len(data)} bytes) than recorded")
        chain, pos, chunks = _seed(table), 0, []
        sha = hashlib.sha256
        while pos < len(data):  # rows start with "{": a line starting "#" is a trailer
            start = data.find(b"\n#", pos) + 1
            end = start + 66
            if start == 0 or data[end - 1 : end] != b"\n":
                raise ProjectionDamaged(f"{path}: chunk after byte {pos} has no trailer")
            chunk = data[pos:start]
            chain = sha(chain.encode("ascii") + chunk).hexdigest()
            if chain.encode("ascii") != data[start + 1 : end - 1]:
                raise ProjectionDamaged(f"{path}: chunk ending at byte {end} was altered")
            chunks.append(chunk)
            pos = end
        if pos != len(data) or chain != tf.chain:
            raise ProjectionDamaged(f"{path}: does not end with the chain the head records")
        return chunks

    def check_size(self, table: str) -> None:
        """The cheap check a reader makes on open: the table's file holds what the head says."""
        assert self.head is not None
        path = self.rows_dir / self.head.files[table].name
        try:
            size = path.stat().st_size
        except OSError as err:
            raise ProjectionDamaged(f"{path}: unreadable ({err.strerror})") from None
        if size < self.head.files[table].size:
            raise ProjectionDamaged(f"{path}: shorter ({size} bytes) than recorded")

    def table_rows(self, table: str) -> list[dict[str, Any]]:
        """The rows of a table, checked (a damaged file raises ProjectionDamaged)."""
        assert self.head is not None
        body = b"".join(self.table_bytes(table))
        try:
            rows = fastjson.loads(b"[" + body[:-1].replace(b"\n", b",") + b"]") if body else []
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ProjectionDamaged(
                f"{self.rows_dir / self.head.files[table].name}: bad row"
            ) from None
        if len(rows) != self.head.files[table].rows or not all(type(r) is dict for r in rows):
            raise ProjectionDamaged(
                f"{self.rows_dir / self.head.files[table].name}: holds {len(rows)} rows, "
                f"the head records {self.head.files[table].rows}"
            )
        return rows

    def check_chains(self, *, skip: tuple[str, ...] = ()) -> None:
        """Check every table's chain (what a writer does before it commits anything), but
        those in ``skip`` (already read and checked)."""
        for table in TABLES:
            if table not in skip:
                self.table_bytes(table)

    # -- writes ----------------------------------------------------------------
    def commit(
        self, fields: dict[str, Any], appends: dict[str, list[bytes]], live_nodes: int
    ) -> None:
        """Append each table's new rows as one chunk, then replace the head. ``fields`` are
        the head's non-file fields. Costs what the commit changed."""
        assert self.head is not None
        with self._lock:
            files = dict(self.head.files)
            for table, lines in appends.items():
                if lines:
                    files[table] = self._append(files[table], table, lines)
            self._write_head(fields, files, live_nodes)

    def _append(self, tf: TableFile, table: str, lines: list[bytes]) -> TableFile:
        chunk = b"".join(lines)
        chain = hashlib.sha256(tf.chain.encode("ascii") + chunk).hexdigest()
        blob = chunk + b"#" + chain.encode("ascii") + b"\n"
        path = self.rows_dir / tf.name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size != tf.size:  # residue of an interrupted commit
                os.ftruncate(fd, tf.size)
            view = memoryview(blob)
            offset = tf.size
            while view:
                n = os.pwrite(fd, view, offset)
                view, offset = view[n:], offset + n
        except BaseException as err:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, tf.size)
            if isinstance(err, OSError) and not err.filename:  # name the file (issue 25)
                raise OSError(err.errno, err.strerror, str(path)) from err
            raise
        finally:
            os.close(fd)
        return TableFile(
            name=tf.name, size=tf.size + len(blob), rows=tf.rows + len(lines), chain=chain
        )

    def rewrite(
        self, fields: dict[str, Any], tables: dict[str, list[bytes]], live_nodes: int
    ) -> None:
        """Write the given tables whole as a new generation, then replace the head, then remove
        the files it no longer names. Tables not given keep their files."""
        with self._lock:
            self.rows_dir.mkdir(exist_ok=True)
            gen = self._next_generation()
            files = dict(self.head.files) if self.head is not None else {}
            written: list[Path] = []
            try:
                for table in TABLES:
                    if table not in tables and table in files:
                        continue
                    lines = tables.get(table, [])
                    name = f"{table}.{gen}.jsonl"
                    empty = TableFile(name=name, size=0, rows=0, chain=_seed(table))
                    written.append(self.rows_dir / name)
                    _write_new(self.rows_dir / name)
                    files[table] = self._append(empty, table, lines) if lines else empty
                self._write_head(fields, files, live_nodes)
            except BaseException:  # a full disk: no partial generation is left behind
                for path in written:
                    with contextlib.suppress(OSError):
                        path.unlink()
                raise
            self.remove_strays()

    def _next_generation(self) -> int:
        gens = [0]
        with contextlib.suppress(OSError):
            for p in self.rows_dir.iterdir():
                parts = p.name.split(".")
                if len(parts) == 3 and parts[1].isdigit():
                    gens.append(int(parts[1]))
        return max(gens) + 1

    def remove_strays(self) -> None:
        """Remove row files the head does not name (older generations, interrupted writes)."""
        keep = {tf.name for tf in self.head.files.values()} if self.head is not None else set()
        with contextlib.suppress(OSError):
            for p in self.rows_dir.iterdir():
                if p.name not in keep and p.suffix in (".jsonl", ".tmp"):
                    with contextlib.suppress(OSError):
                        p.unlink()
        with contextlib.suppress(FileNotFoundError):
            (self.directory / f".{PROJECTION_FILE}.tmp").unlink()

    def _write_head(self, fields: dict[str, Any], files: dict[str, TableFile], live: int) -> None:
        data = dict(fields)
        data.update(
            format=FORMAT,
            live_nodes=live,
            files={t: f.model_dump() for t, f in files.items()},
        )
        data["head_hash"] = _head_digest(data)
        head = Head.model_validate(data)
        tmp = self.directory / f".{PROJECTION_FILE}.tmp"
        try:
            tmp.write_bytes(canonical_bytes(data))
            os.replace(tmp, self.path)  # not fsynced: see the module docstring
        except BaseException as err:
            with contextlib.suppress(OSError):
                tmp.unlink()
            if isinstance(err, OSError) and not err.filename:
                raise OSError(err.errno, err.strerror, str(tmp)) from err
            raise
        self.head = head

    def needs_compaction(self) -> bool:
        """Superseded node versions outnumber live nodes (plus slack): compact on this commit."""
        assert self.head is not None
        return self.head.files["nodes"].rows > 2 * self.head.live_nodes + COMPACT_SLACK

    def close(self) -> None:
        return None
