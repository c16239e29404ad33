"""What a run recorded about its own registration, read cheaply: its stamp.

Every run records, in its journal's ``ledger_created`` data, when it was created
(``created_at``) and the head of the prereg chain it was created under
(``options.prereg``: ``hash``, ``seq``, ``stage``, ``plan_sha256``; see
:func:`curiosity_tui.analysis.lockchain.lock_metadata`). Ledgers and run files written before
this was recorded stay readable: their stamp simply has no lock.

:func:`scan_stamps` reads only the first journal line of each ledger (or the ``meta`` of a
``*.run.json``) found where :func:`curiosity_tui.analysis.rundata.load_runs` would look, so
``prereg lock`` can ask "do runs already exist here?" without loading them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from curiosity_tui.analysis.rundata import RUN_FILE_SUFFIX, RunData

JOURNAL = "journal.jsonl"


class RecordedLock(BaseModel):
    """The chain head a run recorded at creation."""

    hash: str
    seq: int | None = None
    stage: str | None = None


class RunStamp(BaseModel):
    run_id: str
    origin: str = ""
    created_at: str = ""
    unregistered: bool = False
    lock: RecordedLock | None = None


def parse_ts(ts: str) -> datetime | None:
    """An ISO-8601 UTC timestamp as stored (``...Z``), or None if empty or unreadable."""
    if not ts:
        return None
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _recorded(meta: dict[str, Any]) -> RecordedLock | None:
    options = meta.get("options")
    prereg = options.get("prereg") if isinstance(options, dict) else None
    if not isinstance(prereg, dict) or not isinstance(prereg.get("hash"), str):
        return None
    seq, stage = prereg.get("seq"), prereg.get("stage")
    return RecordedLock(
        hash=prereg["hash"],
        seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
        stage=stage if isinstance(stage, str) else None,
    )


def stamp_from_meta(meta: dict[str, Any], *, run_id: str, origin: str = "") -> RunStamp:
    created = meta.get("created_at")
    return RunStamp(
        run_id=run_id,
        origin=origin,
        created_at=created if isinstance(created, str) else "",
        unregistered=bool(meta.get("unregistered", False)),
        lock=_recorded(meta),
    )


def stamp_of(run: RunData) -> RunStamp:
    return stamp_from_meta(run.meta, run_id=run.run_id, origin=run.origin)


def _ledger_stamp(ledger_dir: Path) -> RunStamp | None:
    """From the journal's first line, its hash checked (the one reader of a run's identity,
    ``ledger/identity.py``; decision 401); None when it fails."""
    from curiosity_tui.errors import CorruptLedgerError
    from curiosity_tui.ledger.identity import created_data

    try:
        data = created_data(ledger_dir)
    except CorruptLedgerError:
        return None
    name = data.get("name")
    run_id = name if isinstance(name, str) and name else ledger_dir.name
    return stamp_from_meta(data, run_id=run_id, origin=str(ledger_dir))


def _file_stamp(path: Path) -> RunStamp | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    meta, rid = doc.get("meta"), doc.get("run_id")
    return stamp_from_meta(
        meta if isinstance(meta, dict) else {},
        run_id=rid if isinstance(rid, str) else path.name,
        origin=str(path),
    )


def scan_stamps(directory: Path) -> list[RunStamp]:
    """The stamps of every ledger and run file in ``directory`` (two levels down), by path.
    Unreadable files are skipped: this answers "which runs exist", not "are they sound"."""
    from curiosity_tui.analysis.study import runs_of

    d = runs_of(Path(directory))  # a study folder: its runs/<pilot>/<ledger> (decision 445)
    if not d.is_dir():
        return []
    found: set[Path] = set()
    if (d / JOURNAL).is_file():
        found.add(d)
    for pattern in (f"*{RUN_FILE_SUFFIX}", f"*/*{RUN_FILE_SUFFIX}"):
        found.update(p for p in d.glob(pattern) if p.is_file())
    for pattern in (f"*/{JOURNAL}", f"*/*/{JOURNAL}"):
        found.update(j.parent for j in d.glob(pattern))
    stamps: list[RunStamp] = []
    for p in sorted(found):
        s = _file_stamp(p) if p.is_file() else _ledger_stamp(p)
        if s is not None:
            stamps.append(s)
    return stamps


def earliest(stamps: list[RunStamp]) -> tuple[RunStamp, datetime] | None:
    """The run created first (among those with a readable ``created_at``)."""
    dated = [(s, t) for s in stamps if (t := parse_ts(s.created_at)) is not None]
    return min(dated, key=lambda st: st[1]) if dated else None
