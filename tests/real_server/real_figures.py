"""Figures of one ledger read from its journal: sessions, seconds, tokens, repairs, fallbacks.

Reads ``journal.jsonl`` as plain JSON lines (the on-disk format a user sees), so the real-server
tier and ``benchmarks/bench_real.py`` report the same numbers without depending on the
package's internal readers.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


def journal_events(ledger: Path) -> list[dict[str, Any]]:
    """Every event of LEDGER's journal, in order."""
    lines = (ledger / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def session_records(ledger: Path) -> list[dict[str, Any]]:
    """The ``session_recorded`` payloads, one per committed session."""
    return [e["data"] for e in journal_events(ledger) if e["kind"] == "session_recorded"]


def _seconds(record: dict[str, Any]) -> float:
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    started = datetime.strptime(record["started"], fmt)
    finished = datetime.strptime(record["finished"], fmt)
    return (finished - started).total_seconds()


class LedgerFigures(BaseModel):
    """What the tier records per run: the note's figures for issue 11."""

    config: str
    contract: str
    sessions_committed: int
    sessions_failed: int
    session_seconds: list[float] = Field(default_factory=list)
    completion_tokens: int = 0
    generation_seconds: float = 0.0
    calls_by_kind: dict[str, int] = Field(default_factory=dict)
    repairs_by_kind: dict[str, int] = Field(default_factory=dict)
    cuts_by_kind: dict[str, int] = Field(default_factory=dict)  # finish_reason "length"
    fallbacks_by_kind: dict[str, int] = Field(default_factory=dict)
    retries_by_kind: dict[str, int] = Field(default_factory=dict)
    failures: list[str] = Field(default_factory=list)
    decisions: list[str | None] = Field(default_factory=list)
    deltas: list[float | None] = Field(default_factory=list)
    dependency_checks: list[int | None] = Field(default_factory=list)
    embedders: list[str | None] = Field(default_factory=list)

    @property
    def tokens_per_second(self) -> float | None:
        if self.generation_seconds <= 0:
            return None
        return self.completion_tokens / self.generation_seconds


def _count_calls(figures: LedgerFigures, calls: list[dict[str, Any]]) -> None:
    kinds, repairs, fallbacks, retries, cuts = Counter(), Counter(), Counter(), Counter(), Counter()
    for call in calls:
        kind = str(call.get("kind"))
        kinds[kind] += 1
        repairs[kind] += bool(call.get("repair"))
        cuts[kind] += call.get("finish_reason") == "length"
        fallbacks[kind] += call.get("response_format") == "json_object"
        retries[kind] += int(call.get("retries") or 0)
        figures.completion_tokens += int(call.get("completion_tokens") or 0)
        figures.generation_seconds += float(call.get("latency_s") or 0.0)
    for target, counter in (
        (figures.calls_by_kind, kinds),
        (figures.repairs_by_kind, repairs),
        (figures.cuts_by_kind, cuts),
        (figures.fallbacks_by_kind, fallbacks),
        (figures.retries_by_kind, retries),
    ):
        for kind, n in counter.items():
            target[kind] = target.get(kind, 0) + n


def ledger_figures(ledger: Path) -> LedgerFigures:
    """The figures of LEDGER (committed sessions and recorded failures)."""
    events = journal_events(ledger)
    created = next(e["data"] for e in events if e["kind"] == "ledger_created")
    records = [e["data"] for e in events if e["kind"] == "session_recorded"]
    failed = [e["data"] for e in events if e["kind"] == "session_failed"]
    figures = LedgerFigures(
        config=created["config"],
        contract=created["contract"],
        sessions_committed=sum(e["kind"] == "session_committed" for e in events),
        sessions_failed=len(failed),
        failures=[str(f.get("reason"))[:400] for f in failed],
    )
    for record in records:
        figures.session_seconds.append(_seconds(record))
        figures.decisions.append(record.get("decision"))
        figures.deltas.append(record.get("delta"))
        figures.dependency_checks.append((record.get("counts") or {}).get("dependency_checks"))
        figures.embedders.append(record.get("embedder"))
        _count_calls(figures, record.get("calls") or [])
    for fail in failed:  # calls a failed attempt made still count for tokens and repairs
        _count_calls(figures, (fail.get("record") or {}).get("calls") or [])
    return figures
