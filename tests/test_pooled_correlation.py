"""Pooled correlation (issue 12, item 6): `metrics --pool C+cur,C-cur` gives the report's
"r = +0.4358 over 24 sessions" within the protocol arm (§4, P2).

The report publishes the figure, not its 24 sessions. The fixture below is constructed to
agree with every published number it touches: three runs each of C+cur and C-cur, sessions
2–5 (24 sessions); voluntary actions per session 1.42 (17/12) with a curator and 1.58
(19/12) without over sessions 2–5, and 1.13 (17/15) and 1.27 (19/15) over all five
(session 1 has none); r between dependency checks and voluntary actions = +0.4358.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.correlation import checks_vs_actions, pooled
from curiosity_tui.analysis.rundata import RunCounts, RunData, RunSession, write_run_file
from curiosity_tui.cli import main

# (dependency checks, voluntary actions) for sessions 2..5 of each run
SESSIONS: dict[str, list[list[tuple[int, int]]]] = {
    "C+cur": [
        [(0, 3), (2, 2), (1, 1), (2, 3)],
        [(1, 0), (0, 1), (0, 0), (2, 2)],
        [(1, 1), (1, 3), (0, 0), (2, 1)],
    ],
    "C-cur": [
        [(1, 1), (2, 3), (0, 2), (2, 3)],
        [(3, 3), (3, 1), (1, 1), (0, 0)],
        [(3, 2), (0, 1), (2, 1), (1, 1)],
    ],
}


def report_runs() -> list[RunData]:
    runs = []
    for cfg, per_run in SESSIONS.items():
        for i, pairs in enumerate(per_run):
            sessions = [RunSession(session=1, counts=RunCounts(dependency_checks=0))]
            sessions += [
                RunSession(session=t, counts=RunCounts(dependency_checks=c, voluntary_actions=a))
                for t, (c, a) in enumerate(pairs, start=2)
            ]
            runs.append(RunData(config=cfg, run_id=f"{cfg}/r{i}", sessions=sessions))
    return runs


def test_the_fixture_agrees_with_the_reports_other_figures() -> None:
    for cfg, per_session_2_5, per_session_1_5 in (("C+cur", 1.42, 1.13), ("C-cur", 1.58, 1.27)):
        acts = [s.counts.voluntary_actions for r in report_runs() if r.config == cfg
                for s in r.sessions]  # fmt: skip
        assert round(sum(acts) / 12, 2) == per_session_2_5
        assert round(sum(acts) / 15, 2) == per_session_1_5


def test_pooled_over_both_protocol_configurations_is_the_reports_r() -> None:
    c = pooled(report_runs(), ("C+cur", "C-cur"))
    assert c.n_sessions == 24 and c.n_runs == 6 and c.configs == ["C+cur", "C-cur"]
    assert c.r is not None and f"{c.r:+.4f}" == "+0.4358"
    # per configuration it is not the report's figure: pooling is what the report did
    per = {cfg: checks_vs_actions([r for r in report_runs() if r.config == cfg]).r
           for cfg in SESSIONS}  # fmt: skip
    assert all(v is not None and f"{v:+.4f}" != "+0.4358" for v in per.values())


def test_cli_metrics_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for r in report_runs():
        write_run_file(r, tmp_path / (r.run_id.replace("/", "_") + ".run.json"))
    assert main(["metrics", str(tmp_path), "--pool", "C+cur,C-cur"]) == 0
    out = capsys.readouterr().out
    assert "pooled C+cur + C-cur: r = +0.4358 over 24 sessions, 6 runs" in out
    assert main(["metrics", str(tmp_path), "--pool", "C+cur,C-cur", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = doc["checks_vs_actions_pooled"]["C+cur,C-cur"]
    assert got["n_sessions"] == 24 and round(got["r"], 4) == 0.4358
    assert main(["metrics", str(tmp_path), "--pool", "C+cur,C-kur"]) == 2
    err = capsys.readouterr().err
    assert "no runs of configuration 'C-kur' (present: C+cur, C-cur)" in err
    assert main(["metrics", str(tmp_path), "--pool", "C+cur"]) == 2
    assert "name two or more configurations" in capsys.readouterr().err
