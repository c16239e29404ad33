"""The append-only event journal (``journal.jsonl``): hash chain, batches, crash residue.

Line format: the canonical JSON of the event *without* its hash (sorted keys, compact,
UTF-8), with ``,"hash":"<sha256>"`` spliced in before the closing brace. The hash is
sha256(prev_hash + body). Verifying the chain therefore never re-serialises an event.

A batch (a session, or any other unit of change) is written with one ``write`` + ``fsync``
and ends with a commit marker (``session_committed`` / ``batch_committed``). Lines after the
last marker are the residue of a crash mid-write: they are cut off on a writer's open,
reported, and never applied. Anything else that is inconsistent is an error naming the
file and seq; nothing is silently repaired.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import json.encoder as _json_encoder
import os
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate, compress, count, repeat
from operator import getitem, itemgetter, methodcaller
from pathlib import Path
from typing import Any

from curiosity_tui.errors import CorruptLedgerError
from curiosity_tui.ledger import fastjson
from curiosity_tui.ledger.events import COMMIT_MARKERS

GENESIS = "0" * 64
JOURNAL_FILE = "journal.jsonl"
_HASH_SUFFIX_LEN = len(',"hash":""}') + 64


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)

# The C encoder json.JSONEncoder.encode builds afresh on every call, built once here without
# the circular-reference markers (what is encoded comes from JSON or pydantic dumps: trees,
# never cycles); byte-identical output at about half the cost for a small dict (decision 215).
_MAKE_C_ENCODER = getattr(_json_encoder, "c_make_encoder", None)
_C_ENCODE = (
    _MAKE_C_ENCODER(
        None, _CANONICAL.default, _json_encoder.encode_basestring, None, ":", ",", True, False, True
    )
    if _MAKE_C_ENCODER is not None
    else None
)


def canonical(obj: Any) -> str:
    """Sorted keys, compact separators, UTF-8 text (same as json.dumps with those options)."""
    if _C_ENCODE is None or isinstance(obj, str):
        return _CANONICAL.encode(obj)
    return "".join(_C_ENCODE(obj, 0))


def encode_event(body: dict[str, Any]) -> tuple[bytes, str]:
    """Return (line bytes incl. newline, hash) for an event dict without ``hash``."""
    text = canonical(body)
    digest = hashlib.sha256((body["prev"] + text).encode("utf-8")).hexdigest()
    line = text[:-1] + ',"hash":"' + digest + '"}\n'
    return line.encode("utf-8"), digest


@dataclass
class JournalScan:
    events: list[dict[str, Any]]  # committed events, in order
    committed_bytes: int  # file offset just after the last commit marker
    residue_lines: int  # lines after the last marker (crash residue)
    last_hash: str
    last_seq: int


def _decode_line(raw: bytes, prev: str, expect_seq: int, path: Path) -> tuple[dict[str, Any], str]:
    where = f"{path}: seq {expect_seq}"
    if len(raw) <= _HASH_SUFFIX_LEN or not raw.endswith(b'"}'):
        raise CorruptLedgerError(
            f"{where}: truncated or malformed line", path=str(path), seq=expect_seq
        )
    body = raw[:-_HASH_SUFFIX_LEN] + b"}"
    suffix = raw[-_HASH_SUFFIX_LEN:]
    if not suffix.startswith(b',"hash":"'):
        raise CorruptLedgerError(
            f"{where}: line has no hash field at its end", path=str(path), seq=expect_seq
        )
    stored = suffix[9:73].decode("ascii", "replace")
    try:
        ev = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise CorruptLedgerError(
            f"{where}: line is not valid JSON", path=str(path), seq=expect_seq
        ) from None
    if not isinstance(ev, dict) or ev.get("seq") != expect_seq:
        got = ev.get("seq") if isinstance(ev, dict) else None
        raise CorruptLedgerError(
            f"{path}: seq gap or disorder: expected seq {expect_seq}, found {got!r}",
            path=str(path),
            seq=expect_seq,
        )
    if ev.get("prev") != prev:
        raise CorruptLedgerError(
            f"{where}: prev hash does not chain to seq {expect_seq - 1}",
            path=str(path),
            seq=expect_seq,
        )
    digest = hashlib.sha256(prev.encode("utf-8") + body).hexdigest()
    if digest != stored or ev.get("hash") != stored:
        raise CorruptLedgerError(
            f"{where}: hash mismatch (event altered)", path=str(path), seq=expect_seq
        )
    return ev, digest


def decode_line(raw: bytes, prev: str, expect_seq: int, path: Path) -> tuple[dict[str, Any], str]:
    """One journal line (without its newline) checked against ``prev`` and ``expect_seq``:
    (event, its hash). Raises CorruptLedgerError naming the file and seq."""
    return _decode_line(raw, prev, expect_seq, path)


def scan(path: Path, *, start_seq: int = 1, prev: str = GENESIS, offset: int = 0) -> JournalScan:
    """Read and chain-check the journal (from ``offset`` if given). Returns committed events.

    Crash residue — complete, valid lines after the last commit marker plus at most one
    unterminated final fragment — is counted, not returned. Any complete line that fails
    (bad JSON, seq gap, hash mismatch) raises CorruptLedgerError naming the file and seq:
    a crash can only leave a prefix of one write, never a damaged complete line.
    """
    data = path.read_bytes()[offset:] if path.exists() else b""
    lines = data.split(b"\n")
    fragment = lines.pop()  # b"" when the file ends with a newline
    parsed = _parse_all(lines)
    if parsed is None:  # some line is not JSON: the careful path names its seq
        return _scan_lines(data, path, start_seq, prev, offset)
    events: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    committed_prev = prev
    committed_bytes = offset
    pos = 0
    seq = start_seq
    sha = hashlib.sha256
    for raw, ev in zip(lines, parsed, strict=True):
        if (
            type(ev) is not dict
            or ev.get("seq") != seq
            or ev.get("prev") != prev
            or len(raw) <= _HASH_SUFFIX_LEN
            or raw[-_HASH_SUFFIX_LEN:-66] != b',"hash":"'
        ):
            _decode_line(raw, prev, seq, path)  # raises with the precise reason
            raise CorruptLedgerError(f"{path}: seq {seq}: malformed event", path=str(path), seq=seq)
        digest = sha(prev.encode("ascii") + raw[:-_HASH_SUFFIX_LEN] + b"}").hexdigest()
        if digest != ev.get("hash"):
            _decode_line(raw, prev, seq, path)
            raise CorruptLedgerError(
                f"{path}: seq {seq}: hash mismatch (event altered)", path=str(path), seq=seq
            )
        prev = digest
        pending.append(ev)
        seq += 1
        pos += len(raw) + 1
        if ev["kind"] in COMMIT_MARKERS:
            events.extend(pending)
            pending = []
            committed_bytes = offset + pos
            committed_prev = prev
    residue_lines = len(pending) + (1 if fragment else 0)
    return JournalScan(
        events=events,
        committed_bytes=committed_bytes,
        residue_lines=residue_lines,
        last_hash=committed_prev,
        last_seq=start_seq - 1 + len(events),
    )


class JournalStream:
    """Committed events one batch at a time, chain-checked, without holding the journal:
    the file is read in blocks of about ``block`` bytes, each parsed with one json.loads.
    After iterating, ``committed_bytes``, ``residue_lines``, ``last_hash`` and ``last_seq``
    describe the journal as :func:`scan` does. Lines after the last commit marker (crash
    residue) are counted, never yielded."""

    def __init__(
        self,
        path: Path,
        *,
        start_seq: int = 1,
        prev: str = GENESIS,
        offset: int = 0,
        block: int = 1 << 18,
    ) -> None:
        self.path = path
        self.start_seq, self.prev, self.offset, self.block = start_seq, prev, offset, block
        self.committed_bytes = offset
        self.residue_lines = 0
        self.last_hash = prev
        self.last_seq = start_seq - 1
        self.events = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for batch in self.batches():
            yield from batch

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        """The committed batches, each a list of events ending with its commit marker; a
        batch is yielded once all its lines are chain-checked."""
        if not self.path.exists():
            return
        seq, prev, pos = self.start_seq, self.prev, self.offset
        pending: list[dict[str, Any]] = []
        carry = b""
        markers = COMMIT_MARKERS
        size = self.block
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            while True:
                chunk = fh.read(size)
                data = carry + chunk
                if not chunk:
                    break
                cut = data.rfind(b"\n") + 1
                carry = data[cut:]
                if not cut:  # a line longer than a block: read twice as much next (not n^2)
                    size *= 2
                    continue
                size = self.block
                lines = data[:cut].split(b"\n")
                lines.pop()
                parsed = _parse_all(lines)
                if parsed is None:  # the careful path names the bad line's seq
                    scan(self.path, start_seq=self.start_seq, prev=self.prev, offset=self.offset)
                    raise CorruptLedgerError(f"{self.path}: malformed line", path=str(self.path))
                good = _block_checked(lines, parsed, seq, prev)
                if good is None:  # line by line: the batches before a bad line, then its error
                    for raw, ev in zip(lines, parsed, strict=True):
                        prev = self._check(raw, ev, seq, prev)
                        pending.append(ev)
                        seq += 1
                        pos += len(raw) + 1
                        if ev["kind"] in markers:
                            self.committed_bytes, self.last_hash = pos, prev
                            self.last_seq = seq - 1
                            self.events += len(pending)
                            yield pending
                            pending = []
                    continue
                digests, ends, marks = good
                start = 0
                for i in marks:
                    batch = pending + parsed[start : i + 1] if pending else parsed[start : i + 1]
                    pending, start = [], i + 1
                    self.committed_bytes, self.last_hash = pos + ends[i] + i + 1, digests[i]
                    self.last_seq = seq + i
                    self.events += len(batch)
                    yield batch
                pending.extend(parsed[start:])
                pos += ends[-1] + len(lines)
                seq += len(lines)
                prev = digests[-1]
        self.residue_lines = len(pending) + (1 if carry else 0)

    def _check(self, raw: bytes, ev: Any, seq: int, prev: str) -> str:
        if (
            type(ev) is not dict
            or ev.get("seq") != seq
            or ev.get("prev") != prev
            or len(raw) <= _HASH_SUFFIX_LEN
            or raw[-_HASH_SUFFIX_LEN:-66] != b',"hash":"'
        ):
            _decode_line(raw, prev, seq, self.path)  # raises with the precise reason
            raise CorruptLedgerError(
                f"{self.path}: seq {seq}: malformed event", path=str(self.path), seq=seq
            )
        digest = hashlib.sha256(prev.encode("ascii") + raw[:-_HASH_SUFFIX_LEN] + b"}").hexdigest()
        if digest != ev.get("hash"):
            _decode_line(raw, prev, seq, self.path)
            raise CorruptLedgerError(
                f"{self.path}: seq {seq}: hash mismatch (event altered)",
                path=str(self.path),
                seq=seq,
            )
        return digest


_BODY, _HASH_KEY = slice(None, -_HASH_SUFFIX_LEN), slice(-_HASH_SUFFIX_LEN, -66)
_GET_PREV, _GET_HASH = itemgetter("prev"), itemgetter("hash")
_GET_SEQ, _GET_KIND = itemgetter("seq"), itemgetter("kind")
_HEX = methodcaller("hexdigest")


def _block_checked(
    lines: list[bytes], parsed: list[Any], seq: int, prev: str
) -> tuple[list[str], list[int], list[int]] | None:
    """The checks of ``JournalStream._check`` on a whole block of good lines at once, each a
    pass in C (decision 250): every line a dict whose ``seq`` follows, whose ``prev`` is the
    previous line's hash (``prev`` for the first), with the hash suffix, hashing to its
    ``hash``. Each line is hashed with its own ``prev``; since every ``prev`` is then checked
    to be the hash just computed for the line before, this is the chain, line by line.
    Returns (hashes, end offset of each line not counting newlines, indices of the commit
    markers), or None when some line fails (then the lines are checked one by one)."""
    if not lines:
        return None
    try:
        if set(map(type, parsed)) != {dict} or min(map(len, lines)) <= _HASH_SUFFIX_LEN:
            return None
        if set(map(getitem, lines, repeat(_HASH_KEY))) != {b',"hash":"'}:
            return None
        prevs = list(map(_GET_PREV, parsed))
        if prevs[0] != prev or list(map(_GET_SEQ, parsed)) != list(range(seq, seq + len(lines))):
            return None
        bodies = map(getitem, lines, repeat(_BODY))
        text = map(b"".join, zip(map(str.encode, prevs), bodies, repeat(b"}")))  # type: ignore[arg-type]
        digests = list(map(_HEX, map(hashlib.sha256, text)))
        if list(map(_GET_HASH, parsed)) != digests or prevs[1:] != digests[:-1]:
            return None
        marks = list(compress(count(), map(COMMIT_MARKERS.__contains__, map(_GET_KIND, parsed))))
    except (KeyError, TypeError, UnicodeEncodeError):
        return None
    return digests, list(accumulate(map(len, lines))), marks


def _parse_all(lines: list[bytes]) -> list[Any] | None:
    """Parse every line with one json.loads call (much cheaper than one call per line)."""
    if not lines:
        return []
    try:
        out = fastjson.loads(b"[" + b",".join(lines) + b"]")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return out if isinstance(out, list) and len(out) == len(lines) else None


def _scan_lines(data: bytes, path: Path, start_seq: int, prev: str, offset: int) -> JournalScan:
    """Line-by-line scan: slower, used to name the first bad line precisely."""
    events: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    committed_prev = prev
    committed_bytes = offset
    pos = 0
    seq = start_seq
    residue_lines = 0
    n = len(data)
    while pos < n:
        end = data.find(b"\n", pos)
        if end == -1:
            residue_lines += 1  # unterminated fragment: the tail of an interrupted write
            break
        ev, prev = _decode_line(data[pos:end], prev, seq, path)
        pending.append(ev)
        seq += 1
        pos = end + 1
        if ev["kind"] in COMMIT_MARKERS:
            events.extend(pending)
            pending = []
            committed_bytes = offset + pos
            committed_prev = prev
    residue_lines += len(pending)
    return JournalScan(
        events=events,
        committed_bytes=committed_bytes,
        residue_lines=residue_lines,
        last_hash=committed_prev,
        last_seq=start_seq - 1 + len(events),
    )


def chain_tail(
    path: Path, *, start_seq: int = 1, prev_hash: str = GENESIS, offset: int = 0
) -> tuple[int, str, int, int]:
    """Check the hash chain from ``offset`` (the whole journal by default) without parsing
    JSON; return (last committed seq, its hash, byte offset just after it, residue lines
    after it). With a checkpoint (see :func:`checkpoint_holds`) only the tail is read.

    One sha256 per line plus a few byte comparisons (the top-level ``prev``/``seq``/``kind``
    are found from the end of the line, where sorted keys put them after ``data``, so nothing
    inside ``data`` can be mistaken for them). Any line that fails is handed to :func:`scan`,
    which raises naming the file and seq.
    """
    if not path.exists():
        return 0, GENESIS, 0, 0
    with path.open("rb") as fh:
        fh.seek(offset)
        data = fh.read()
    lines = data.split(b"\n")
    fragment = lines.pop()
    sha = hashlib.sha256
    prev = prev_hash.encode("ascii")
    seq = start_seq
    pos = offset
    last: tuple[int, str, int] = (start_seq - 1, prev_hash, offset)
    pending = 0
    for raw in lines:
        digest = b""
        p = raw.rfind(b',"prev":"')
        ok = (
            p > 0
            and len(raw) > _HASH_SUFFIX_LEN
            and raw[-_HASH_SUFFIX_LEN:-66] == b',"hash":"'
            and raw[p + 9 : p + 73] == prev
            and raw[p + 73 : p + 81] == b'","seq":'
        )
        if ok:
            q = raw.find(b",", p + 81)
            ok = raw[p + 81 : q] == str(seq).encode("ascii")
        if ok:
            digest = sha(prev + raw[:-_HASH_SUFFIX_LEN] + b"}").hexdigest().encode("ascii")
            ok = digest == raw[-66:-2]
        if not ok:
            scan(path, start_seq=start_seq, prev=prev_hash, offset=offset)  # raises precisely
            raise CorruptLedgerError(f"{path}: seq {seq}: malformed event", path=str(path), seq=seq)
        prev = digest
        pos += len(raw) + 1
        k = raw.rfind(b',"kind":"') + 9
        if raw.startswith(b'session_committed"', k) or raw.startswith(b'batch_committed"', k):
            last = (seq, digest.decode("ascii"), pos)
            pending = 0
        else:
            pending += 1
        seq += 1
    return (*last, pending + (1 if fragment else 0))


def checkpoint_holds(path: Path, seq: int, digest: str, offset: int) -> bool:
    """Whether the journal's line ending at byte ``offset`` is the commit marker ``seq`` with
    hash ``digest``, and hashes to it. The projection records this checkpoint (head hash,
    seq, byte offset), so an open checks the chain only after it; ``verify`` checks it all."""
    if seq == 0:
        return offset == 0 and digest == GENESIS
    try:
        size = path.stat().st_size
    except OSError:
        return False
    if offset < 2 or offset > size:
        return False
    window = 1 << 16
    with path.open("rb") as fh:
        while True:
            start = max(0, offset - window)
            fh.seek(start)
            buf = fh.read(offset - start)
            if not buf.endswith(b"\n"):
                return False
            cut = buf.rfind(b"\n", 0, len(buf) - 1)
            if cut != -1 or start == 0:
                break
            window *= 4
    raw = buf[cut + 1 : -1]
    p = raw.rfind(b',"prev":"')
    if p <= 0 or len(raw) <= _HASH_SUFFIX_LEN or raw[-66:-2] != digest.encode("ascii"):
        return False
    if not raw.startswith(b"%s," % str(seq).encode("ascii"), p + 81):
        return False
    k = raw.rfind(b',"kind":"') + 9
    if not (raw.startswith(b'session_committed"', k) or raw.startswith(b'batch_committed"', k)):
        return False
    body = raw[:-_HASH_SUFFIX_LEN] + b"}"
    return hashlib.sha256(raw[p + 9 : p + 73] + body).hexdigest() == digest


def append_batch(path: Path, lines: list[bytes], expect_size: int | None = None) -> int:
    """Append a whole batch with one write and an fsync (the commit point). Returns the
    journal's size after it (the offset a checkpoint records). With ``expect_size`` (where
    this writer's last batch ended), a journal of another size is refused before anything is
    written: someone else appended to it (or cut it) under this writer's lock."""
    blob = b"".join(lines)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.fstat(fd).st_size
        if expect_size is not None and start != expect_size:
            raise JournalMovedError(
                f"{path}: the journal is {start} bytes, but this writer's last batch ended at "
                f"{expect_size}: another process wrote to it (was writer.lock removed?); "
                "nothing was written, reopen the ledger"
            )
        try:
            view = memoryview(blob)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
            end = start + len(blob)
        except BaseException:
            # a failed write (disk full, interrupt) must not leave a prefix for the next
            # batch to be appended to: that would turn crash residue into a damaged line
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
                os.fsync(fd)
            raise
    finally:
        os.close(fd)
    return end


class JournalMovedError(CorruptLedgerError):
    """The journal changed under a writer that holds the lock: a second writer, or a cut."""


def truncate_to(path: Path, length: int) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, length)
        os.fsync(fd)
    finally:
        os.close(fd)
