"""Lock-time checks (decision 441): a plan that cannot produce the pack or a metric it names
is refused by ``prereg lock`` (``--warn-only`` locks it with a warning), and
``prereg lock --dry-run`` prints the plan and every check, writing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.analysis.plan import parse_plan
from curiosity_tui.analysis.plan_checks import plan_checks
from curiosity_tui.cli import main

BASE = """\
name = "study"
configurations = ["C+cur", "B-armed+cur"]
runs = 2
sessions = {sessions}
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = {metrics}

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["max_depth"]
{pack}
"""


def _plan(
    tmp_path: Path,
    *,
    sessions: int = 3,
    metrics: str = '["max_depth"]',
    pack: str = '[pack]\nsessions = "1,last"\nscheme = "pilot-02"',
) -> Path:
    p = tmp_path / "plan.toml"
    p.write_text(BASE.format(sessions=sessions, metrics=metrics, pack=pack))
    return p


def _lock(plan: Path, *extra: str) -> int:
    return main(["prereg", "lock", str(plan), "--stage", "before-runs", *extra])


def test_a_pack_past_the_plans_sessions_is_refused_at_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(tmp_path, pack='[pack]\nsessions = "1,5"')
    assert _lock(plan) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(plan) in err and "pack.sessions" in err
    assert "session 5 is past the run's 3 session(s)" in err and "--warn-only" in err
    assert not (tmp_path / "prereg.jsonl").exists()


def test_the_default_pick_locks_a_three_session_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _lock(_plan(tmp_path)) == 0
    assert "locked" in capsys.readouterr().out
    assert (tmp_path / "prereg.jsonl").read_text().count("\n") == 1


def test_a_metric_the_runs_cannot_produce_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(tmp_path, sessions=1, metrics='["max_depth", "voluntary_progression"]', pack="")
    assert _lock(plan) == 2
    err = capsys.readouterr().err
    assert "metric voluntary_progression: needs 2 session(s)" in err
    assert "the plan runs 1" in err


def test_warn_only_locks_with_a_warning_per_failed_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(
        tmp_path,
        sessions=2,
        metrics='["max_depth", "attraction_sustained_sessions"]',
        pack='[pack]\nsessions = "1,3"',
    )
    assert _lock(plan, "--warn-only") == 0
    out = capsys.readouterr().out
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2
    assert "pack.sessions" in warnings[0] and "attraction_sustained_sessions" in warnings[1]
    assert (tmp_path / "prereg.jsonl").exists()


def test_dry_run_prints_every_check_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(tmp_path, metrics='["max_depth", "regen_mean"]')
    assert _lock(plan, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "dry run: nothing written" in out and "would append seq 1" in out
    for name in ("stage", "chain", "runs", "amendment", "pack.sessions", "pack.scheme"):
        assert f"ok    {name}:" in out
    assert "ok    metric regen_mean: needs 2 session(s)" in out
    assert "each item shows sessions 1 and 3 of 3" in out
    assert "2 arm(s): C+cur, B-armed+cur" in out and "2 run(s) per arm × 3 session(s)" in out
    assert out.rstrip().endswith("result: would lock")
    assert not (tmp_path / "prereg.jsonl").exists()


def test_dry_run_names_each_failure_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(tmp_path, pack='[pack]\nsessions = "2,last"\nscheme = "no-such.json"')
    assert _lock(plan, "--warn-only") == 0  # a first lock; then an amendment, no reason
    capsys.readouterr()
    plan.write_text(plan.read_text().replace("sessions = 3", "sessions = 2"))
    assert _lock(plan, "--dry-run") == 1
    out = capsys.readouterr().out
    assert "FAIL  amendment:" in out and "needs --reason" in out
    assert "ok    pack.sessions: 2,last" not in out and "FAIL  pack.sessions:" in out
    assert "FAIL  pack.scheme:" in out
    assert "result: would be refused (3 check(s) failed)" in out
    assert (tmp_path / "prereg.jsonl").read_text().count("\n") == 1


def test_a_scheme_missing_at_lock_is_refused(tmp_path: Path) -> None:
    plan = parse_plan(
        BASE.format(sessions=3, metrics='["max_depth"]', pack='[pack]\nscheme = "x.json"')
    )
    checks = {c.name: c for c in plan_checks(plan, base=tmp_path)}
    assert not checks["pack.scheme"].ok and "x.json" in checks["pack.scheme"].detail
    assert checks["pack.sessions"].ok


def test_a_bad_pack_pick_is_a_plan_error_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = _plan(tmp_path, pack='[pack]\nsessions = "3,1"')
    assert _lock(plan, "--dry-run") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{plan}:" in err and "pack.sessions" in err and "must come after the first" in err


def test_each_session_need_names_real_metrics() -> None:
    """The session-needs table names metrics the registry has (a rename fails here)."""
    from curiosity_tui.analysis.plan_checks import sessions_needed
    from curiosity_tui.analysis.registry import default_registry

    plan = parse_plan(BASE.format(sessions=3, metrics='["max_depth"]', pack=""))
    needs = {m.name: sessions_needed(m.name, plan) for m in default_registry()}
    with_needs = {k for k, v in needs.items() if v is not None}
    assert {"voluntary_progression", "voluntary_progression_raw", "regen_mean"} <= with_needs
    assert {"relay_drift_total", "attraction_sustained_sessions"} <= with_needs
    assert needs["attraction_excess_share"] is not None
    assert needs["attraction_excess_share"][0] == 4 and needs["max_depth"] is None


def test_the_dry_run_lists_the_family_check() -> None:
    """``lock`` refuses two comparisons without a family (issue 24); the checks list it."""
    two = "\n".join(
        f'[[comparisons]]\nname = "c{i}"\nmetrics = ["max_depth"]\n[comparisons.rule]\n'
        'kind = "any_metric_beats_in_all"\npairs = [["C+cur", "B-armed+cur"]]\n'
        'metrics = ["max_depth"]\n'
        for i in (1, 2)
    )
    plan = parse_plan(BASE.format(sessions=3, metrics='["max_depth"]', pack="") + two)
    fam = {c.name: c for c in plan_checks(plan)}["family"]
    assert not fam.ok and "no family" in fam.detail
