"""``metrics --survival-csv``: one row per run × question, its open life with the event flag
(for R's ``survival`` / Python's ``lifelines``) and its return condition's latency.

Column names are documented in docs/csv.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from curiosity_tui.analysis.open_life import open_lives
from curiosity_tui.analysis.return_latency import condition_returns
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.csvfile import Cell

__all__ = ["SURVIVAL_COLUMNS", "survival_rows"]

SURVIVAL_COLUMNS: tuple[str, ...] = (
    "config",
    "contract",
    "run",
    "node",
    "created",
    "time",
    "event",
    "ended",
    "went_dormant",
    "came_back",
    "condition_met",
    "returned",
    "return_latency",
    "return_event",
    "return_outcome",
)


def _rows(run: RunData) -> list[list[Cell]]:
    returns = {c.node: c for c in condition_returns(run) or []}
    rows: list[list[Cell]] = []
    for q in open_lives(run) or []:
        c = returns.get(q.node)
        rows.append(
            [
                run.config,
                run.contract,
                run.run_id,
                q.node,
                q.created,
                q.time,
                int(q.event),
                q.ended,
                q.went_dormant,
                q.came_back,
                None if c is None else c.met,
                None if c is None else c.returned,
                None if c is None else c.latency,
                None if c is None else int(c.event),
                None if c is None else c.outcome,
            ]
        )
    return rows


def survival_rows(runs: Sequence[RunData]) -> list[list[Cell]]:
    """Runs in the order given (run-id order from ``load_runs``), questions in id order. Runs
    without a per-session history (old run files) give no rows."""
    return [row for run in runs for row in _rows(run)]
