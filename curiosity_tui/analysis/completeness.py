"""Runs that did not finish: which runs committed fewer sessions than planned, per configuration.

Metrics count committed sessions only (a failed attempt applies nothing), and a run that
committed none enters no aggregate (:meth:`RunData.counted`). This module says which runs
those are, so the metrics tables, the verdict and the report can list them instead of
averaging over them silently.

The planned number of sessions, first found wins:

1. the caller's figure (the verdict passes the locked plan's ``sessions``);
2. the run's own record (``pilot run`` writes ``RunMeta.options.planned_sessions``);
3. the longest run of the set (``metrics`` over runs that recorded nothing), labelled so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from curiosity_tui.analysis.rundata import RunData

#: a failure reason is cut to this length in listings (the ledger keeps it whole)
REASON_CHARS = 100

PlannedSource = Literal["plan", "run metadata", "longest run"]


class ShortRun(BaseModel):
    """One run with fewer committed sessions than planned."""

    run_id: str
    config: str
    committed: int
    planned: int
    planned_source: PlannedSource
    failed_at: int | None = Field(description="The session whose failure stopped the run, if any.")
    reason: str | None = None

    @property
    def empty(self) -> bool:
        return self.committed == 0

    def brief(self) -> str:
        """``1 of 5; session 2 failed: <reason>; not counted``."""
        parts = [f"{self.committed} of {self.planned}"]
        if self.planned_source == "longest run":
            parts[0] += " (planned not recorded: the longest run's count)"
        if self.failed_at is not None:
            reason = self.reason or "no reason recorded"
            if len(reason) > REASON_CHARS:
                reason = reason[: REASON_CHARS - 1].rstrip() + "…"
            parts.append(f"session {self.failed_at} failed: {reason}")
        if self.empty:
            parts.append("not counted")
        return "; ".join(parts)

    def describe(self) -> str:
        return f"{self.run_id} ({self.brief()})"


class Completeness(BaseModel):
    """The short runs of a set, by configuration."""

    short: list[ShortRun] = Field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.short

    def of(self, config: str) -> list[ShortRun]:
        return [s for s in self.short if s.config == config]

    def lines(self) -> list[str]:
        """One line per configuration with short runs: ``C+cur: C+cur-r1 committed 0 of 3 …``."""
        configs = list(dict.fromkeys(s.config for s in self.short))
        return [f"{c}: " + "; ".join(s.describe() for s in self.of(c)) for c in configs]


def _stopped_by(run: RunData, committed: int) -> tuple[int | None, str | None]:
    """The failure after the last committed session (the one that stopped the run)."""
    later = [f for f in run.failed if f.session > committed]
    if not later:
        return None, None
    last = max(later, key=lambda f: f.session)
    return last.session, last.reason or None


def completeness(
    runs: Sequence[RunData], planned: int | None = None, *, split: bool = False
) -> Completeness:
    """Which of ``runs`` committed fewer sessions than planned (see the module docstring);
    with ``split``, each short run is named by its ``config@contract`` cell."""
    logged = [r for r in runs if r.has_session_log()]
    longest = max((len(r.committed_sessions()) for r in logged), default=0)
    short: list[ShortRun] = []
    for r in sorted(logged, key=lambda r: (r.cell(split), r.run_id)):
        source: PlannedSource
        if planned is not None:
            want, source = planned, "plan"
        elif r.planned_sessions is not None:
            want, source = r.planned_sessions, "run metadata"
        else:
            want, source = longest, "longest run"
        want = max(want, 1)  # a run was started for at least one session
        done = len(r.committed_sessions())
        if done >= want:
            continue
        failed_at, reason = _stopped_by(r, done)
        short.append(
            ShortRun(
                run_id=r.run_id,
                config=r.cell(split),
                committed=done,
                planned=want,
                planned_source=source,
                failed_at=failed_at,
                reason=reason,
            )
        )
    return Completeness(short=short)
