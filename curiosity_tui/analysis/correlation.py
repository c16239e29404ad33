"""Pearson r between dependency checks and voluntary actions over sessions (S6, §4).

The report's figure (r = +0.4358 over 24 sessions, protocol arm) pools the sessions of
the given runs; the unit here is the session, so r describes association across
sessions, not across independent runs, and no interval is attached.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.rundata import RunData


class Correlation(BaseModel):
    x: str = "dependency_checks"
    y: str = "voluntary_actions"
    r: float | None
    n_sessions: int
    n_runs: int
    first_session: int
    note: str = ""


def checks_vs_actions(runs: Iterable[RunData], *, first_session: int = 2) -> Correlation:
    """r over every committed session numbered >= ``first_session`` of ``runs``."""
    xs: list[float] = []
    ys: list[float] = []
    n_runs = 0
    for run in runs:
        n_runs += 1
        for s in run.committed_sessions():
            if s.session >= first_session:
                xs.append(s.counts.dependency_checks)
                ys.append(s.counts.voluntary_actions)
    out = Correlation(r=None, n_sessions=len(xs), n_runs=n_runs, first_session=first_session)
    if len(xs) < 3:
        out.note = "r needs at least 3 sessions"
        return out
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    if x.std() == 0 or y.std() == 0:
        out.note = "r undefined: one of the two counts does not vary"
        return out
    out.r = float(np.corrcoef(x, y)[0, 1])
    return out
