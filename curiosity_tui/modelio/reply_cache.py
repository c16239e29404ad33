"""Replies reused instead of asked again (issue 23.5): on resume, and for a whole replay.

Every chat call records ``request_sha256``: the sha256 of its request body as canonical JSON
(sorted keys, no spaces, UTF-8) — model, messages, response format, token cap, sampling. Two
requests with the same digest are the same request.

* **Resume.** While a session runs, each reply that was accepted is appended to
  ``LEDGER/reply-cache.jsonl`` (flushed, not fsynced: a killed process loses nothing the
  kernel already has; a power cut can lose the last lines, and those calls are simply asked
  again). When the session commits, the file is removed. A run resumed after a failure or a
  kill reads the lines of the session it resumes, and a call whose request digest matches one
  is answered from it, without a request: its record is the original's, with ``cached: true``
  and ``cached_from`` (the original's digest, start and end). ``--no-cache`` turns it off.
* **Replay** (``pilot run --replay-from DIR``): every recorded call of the run's ledger in
  DIR answers the request it was the reply to; a request with no recorded reply fails the
  call (code ``replay_miss``) without reaching any server.

The cache of the run in progress is a context variable, as the run's sampling is: a pilot's
runs share one client.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from curiosity_tui.clock import utc_now_micro
from curiosity_tui.errors import InputError
from curiosity_tui.ledger.endpoint_record import EndpointCapabilities
from curiosity_tui.ledger.models import CachedFrom, CallRecord

__all__ = [
    "CACHE_FILE",
    "CURRENT_CACHE",
    "REPLAY_MISS",
    "ReplyCache",
    "answer_current",
    "cached_record",
    "keep_accepted",
    "request_digest",
]

CACHE_FILE = "reply-cache.jsonl"

CURRENT_CACHE: ContextVar[ReplyCache | None] = ContextVar("curiosity_reply_cache", default=None)


def request_digest(body: dict[str, Any]) -> str:
    """sha256 of a request body as canonical JSON."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ReplyCache:
    """Recorded replies by request digest (each used once, in recorded order), and where to
    write new ones (``path``; None: nowhere). ``strict``: a miss fails the call (replay)."""

    def __init__(
        self, records: list[CallRecord], *, path: Path | None = None, strict: bool = False
    ) -> None:
        self._by_digest: dict[str, list[CallRecord]] = {}
        for rec in records:
            if rec.request_sha256:
                self._by_digest.setdefault(rec.request_sha256, []).append(rec)
        self.path = path
        self.strict = strict
        self.hits = 0
        self._file: BinaryIO | None = None  # open from the first reply kept to close()
        #: a replay: the original run's endpoint record (recorded again, so the journals match)
        self.endpoint: EndpointCapabilities | None = None

    @classmethod
    def for_session(cls, ledger_dir: Path, session: int) -> ReplyCache:
        """The replies a killed or failed attempt at ``session`` left in the ledger's cache
        file (none when there is no file), writing this attempt's replies to it."""
        path = ledger_dir / CACHE_FILE
        records: list[CallRecord] = []
        if path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                    if entry.get("session") == session:
                        records.append(CallRecord.model_validate(entry["record"]))
                except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
                    continue  # a torn last line (killed mid-write): that call is asked again
            if not records:
                path.unlink(missing_ok=True)  # another session's leftovers
        return cls(records, path=path)

    @classmethod
    def for_replay(cls, ledger_dir: Path) -> ReplyCache:
        """Every recorded call of the ledger at ``ledger_dir`` (one line if it is not one)."""
        from curiosity_tui.ledger import Ledger

        if not (ledger_dir / "journal.jsonl").is_file():
            raise InputError(f"--replay-from: {ledger_dir} is not a ledger (no journal.jsonl)")
        with Ledger.open(ledger_dir) as led:
            records = [c for rec in led.session_records() for c in rec.calls]
            endpoint = led.meta.endpoint
        usable = [c for c in records if c.request_sha256 and (c.response_text or not c.error)]
        if records and not usable:
            raise InputError(
                f"--replay-from: {ledger_dir} records no request digests (written before "
                "replay existed); it cannot be replayed"
            )
        cache = cls(usable, strict=True)
        cache.endpoint = endpoint
        return cache

    def take(self, digest: str) -> CallRecord | None:
        """The next recorded reply to this request, or None."""
        queue = self._by_digest.get(digest)
        if not queue:
            return None
        self.hits += 1
        return queue.pop(0)

    def keep(self, session: int, records: list[CallRecord]) -> None:
        """Write the records of an accepted call (a repaired one: its rejected attempt too),
        for a later resume of this session. A reply that was rejected for good is never
        kept: a resume asks again. A cache that cannot be written (disk full) stops writing:
        a resume then asks again for what it lacks, nothing else changes."""
        if self.path is None or not records:
            return
        lines = "".join(
            f'{{"session": {int(session)}, "record": {r.model_dump_json()}}}\n' for r in records
        )
        try:
            if self._file is None:  # one open per session attempt, not one per call
                self._file = self.path.open("ab")
            self._file.write(lines.encode("utf-8", "surrogatepass"))
            self._file.flush()  # in the kernel's hands: a killed process loses nothing
        except OSError:
            self.close()
            self.path = None

    def close(self) -> None:
        """Close the file replies are written to (the runner does, whatever the session's end)."""
        if self._file is not None:
            file, self._file = self._file, None
            with contextlib.suppress(OSError):
                file.close()

    def answer(self, common: dict[str, Any], *, repair: bool) -> CallRecord | None:
        """The record of a call (``common``: its fields, with ``request_sha256``) answered from
        the cache (``cached``); in a strict cache with no such reply, the call's record for
        its failure (not ``cached``: the caller fails the call, REPLAY_MISS); else None."""
        original = self.take(common["request_sha256"])
        if original is not None:
            return cached_record(original, repair=repair)
        if not self.strict:
            return None
        return CallRecord(**common, ended_at=utc_now_micro())

    def session_done(self) -> None:
        """The session committed: its replies are in the journal; the file goes."""
        self.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def answer_current(common: dict[str, Any], *, repair: bool) -> CallRecord | None:
    """:meth:`ReplyCache.answer` of the run in progress's cache; None without one."""
    cache = CURRENT_CACHE.get()
    return cache.answer(common, repair=repair) if cache is not None else None


def keep_accepted(session: int, records: list[CallRecord]) -> None:
    """Keep an accepted call's records (not those answered from the cache) in the cache of the
    run in progress, if it has one."""
    cache = CURRENT_CACHE.get()
    if cache is not None and records:
        cache.keep(session, [r for r in records if not r.cached])


REPLAY_MISS = (
    "the replayed run has no recorded reply to this exact request (the replay diverged from "
    "the original run here)"
)


def cached_record(original: CallRecord, *, repair: bool) -> CallRecord:
    """The record of a call answered from ``original``: its reply and figures, marked cached,
    with the original's digest and times; this call's own times."""
    now = utc_now_micro()
    return original.model_copy(
        update={
            "cached": True,
            "cached_from": CachedFrom(
                request_sha256=original.request_sha256 or "",
                started_at=original.started_at,
                ended_at=original.ended_at,
            ),
            "started_at": now,
            "ended_at": now,
            "latency_s": 0.0,
            "retries": 0,
            "waited_s": 0.0,
            "repair": repair,
            "earlier": [],
        }
    )
