"""Pearson r between dependency checks and voluntary actions over sessions (S6, §4).

The report's figure (r = +0.4358 over 24 sessions, protocol arm) pools the sessions of
the given runs; the unit here is the session, so r describes association across
sessions, not across independent runs, and no interval is attached. "Within the protocol
arm" is both C configurations (C+cur and C-cur, three runs each, sessions 2–5 = 24
sessions): :func:`pooled` over ``("C+cur", "C-cur")`` (``metrics --pool C+cur,C-cur``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel

from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.errors import InputError


class Correlation(BaseModel):
    #: the configurations whose sessions were pooled (empty: whatever runs were given)
    configs: list[str] = []
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


def parse_pool(spec: str) -> tuple[str, ...]:
    """``"C+cur,C-cur"`` -> ``("C+cur", "C-cur")``; at least two distinct names."""
    names = tuple(dict.fromkeys(x.strip() for x in spec.split(",") if x.strip()))
    if len(names) < 2:
        raise InputError(
            f"--pool {spec!r}: name two or more configurations, comma-separated "
            "(e.g. --pool C+cur,C-cur)"
        )
    return names


def pooled(
    runs: Iterable[RunData], configs: Sequence[str], *, first_session: int = 2
) -> Correlation:
    """r over the committed sessions >= ``first_session`` of every run of ``configs``.
    :class:`InputError` if one of them has no runs (a typo would otherwise pool less)."""
    runs = list(runs)
    present = sorted({r.config for r in runs})
    missing = [c for c in configs if c not in present]
    if missing:
        raise InputError(
            f"--pool: no runs of configuration {', '.join(map(repr, missing))} "
            f"(present: {', '.join(present) or 'none'})"
        )
    chosen = [r for r in runs if r.config in configs]
    out = checks_vs_actions(chosen, first_session=first_session)
    out.configs = list(configs)
    return out
