"""Pearson r between dependency checks and voluntary actions over sessions."""

from __future__ import annotations

import pytest

from curiosity_tui.analysis.correlation import checks_vs_actions
from curiosity_tui.analysis.rundata import RunCounts, RunData, RunSession


def _run(rid: str, pairs: list[tuple[int, int]]) -> RunData:
    return RunData(
        config="C+cur",
        run_id=rid,
        sessions=[
            RunSession(session=i + 1, counts=RunCounts(dependency_checks=c, voluntary_actions=a))
            for i, (c, a) in enumerate(pairs)
        ],
    )


def test_hand_computed_r_over_sessions_two_on() -> None:
    # session 1 (9, 0) excluded; remaining (1,1), (2,3), (3,2), (0,0): r = 0.8
    runs = [_run("r0", [(9, 0), (1, 1), (2, 3)]), _run("r1", [(9, 0), (3, 2), (0, 0)])]
    c = checks_vs_actions(runs)
    assert c.n_sessions == 4 and c.n_runs == 2
    assert c.r == pytest.approx(0.8)


def test_undefined_cases_say_why() -> None:
    c = checks_vs_actions([_run("r0", [(0, 0), (1, 1)])])
    assert c.r is None and "at least 3" in c.note
    c = checks_vs_actions([_run("r0", [(0, 0), (1, 1), (1, 2), (1, 3)])], first_session=2)
    assert c.r is None and "does not vary" in c.note
