"""Chronology that binds (issue 12, item 1), over real ledgers made by `pilot run`:

- every run records the chain head it was created under, in its journal;
- re-locking at before-runs after the runs is refused, with the reason;
- an amendment after the mechanical results is reported apart, never as the verdict;
- a replaced chain yields no verdict (exit non-zero naming the runs and the missing hash);
- `prereg verify` checks all of it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from curiosity_tui.analysis.chronology import chronology_problems, governing_lock
from curiosity_tui.analysis.prereg import ChainError, lock, read_chain
from curiosity_tui.analysis.runstamps import RecordedLock, RunStamp, parse_ts, scan_stamps
from curiosity_tui.cli import main

PLAN = """\
name = "chronology"
configurations = ["B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
runs = 1
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "nodes_worked_voluntary"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = ["max_depth", "nodes_worked"]
"""
# after seeing the results: turn the comparison round, on any metric that favours it
AMENDED = PLAN.replace(
    'pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]\nmetrics = ["max_depth", '
    '"nodes_worked"]',
    'pairs = [["B-armed+cur", "C+cur"], ["B-armed-cur", "C-cur"]]\n'
    'metrics = ["max_depth", "nodes_worked", "nodes_worked_voluntary"]',
)


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plan locked before-runs, then four scripted runs made under it (made once)."""
    root = tmp_path_factory.mktemp("chrono")
    (root / "plan.toml").write_text(PLAN)
    out = root / "runs"
    assert main(["prereg", "lock", str(root / "plan.toml"), "--stage", "before-runs",
                 "--chain", str(out / "prereg.jsonl")]) == 0  # fmt: skip
    run = ["pilot", "run", str(root / "plan.toml"), "--out", str(out), "--scripted"]
    assert main([*run, "--concurrency", "4"]) == 0
    return root


def _copy(pilot: Path, tmp_path: Path) -> Path:
    shutil.copytree(pilot, tmp_path / "p")
    return tmp_path / "p"


def _lock(root: Path, text: str, stage: str, reason: str = "") -> list[str]:
    plan = root / "next.toml"
    plan.write_text(text)
    chain = root / "runs" / "prereg.jsonl"
    return ["prereg", "lock", str(plan), "--stage", stage, "--chain", str(chain),
            "--reason", reason]  # fmt: skip


def test_every_run_records_the_chain_head_in_its_journal(pilot: Path) -> None:
    (head,) = read_chain(pilot / "runs" / "prereg.jsonl")
    stamps = scan_stamps(pilot / "runs")
    assert len(stamps) == 4
    for s in stamps:
        assert s.lock == RecordedLock(hash=head.hash, seq=1, stage="before-runs")
        created, locked = parse_ts(s.created_at), parse_ts(head.ts)
        assert created is not None and locked is not None and created >= locked
        first = json.loads((Path(s.origin) / "journal.jsonl").read_text().splitlines()[0])
        assert first["kind"] == "ledger_created"
        assert first["data"]["options"]["prereg"]["hash"] == head.hash


def test_relocking_before_runs_after_the_runs_is_refused(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(pilot, tmp_path)
    before = (root / "runs" / "prereg.jsonl").read_bytes()
    assert main(_lock(root, AMENDED, "before-runs", "looked again")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "stage 'before-runs' refused: 4 run(s) exist already" in err
    assert (root / "runs" / "prereg.jsonl").read_bytes() == before  # nothing appended
    assert main(["verdict", str(root / "runs"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["verdict"]["outcome"] == "not_met" and rep["amendments"] == []


def test_a_stage_the_runs_were_created_under_is_refused_too(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    run = tmp_path / "r0.run.json"
    meta = {"created_at": "2026-01-02T00:00:00Z",
            "options": {"prereg": {"hash": "a" * 64, "seq": 2, "stage": "after-shakeout"}}}  # fmt: skip
    run.write_text(json.dumps({"config": "C+cur", "run_id": "r0", "meta": meta}))
    with pytest.raises(ChainError, match="run r0 was already created under a lock at stage "):
        lock(plan, "after-shakeout", reason="x")
    assert not (tmp_path / "prereg.jsonl").exists()


def test_an_amendment_is_reported_as_one_never_as_the_verdict(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(pilot, tmp_path)
    reason = "nodes_worked_voluntary favours self-ask; compare that way round"
    assert main(_lock(root, AMENDED, "after-mechanical-results", reason)) == 0
    capsys.readouterr()
    assert main(["verdict", str(root / "runs"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["verdict"]["outcome"] == "not_met"  # the rule in force when the runs began
    assert rep["verdict"]["lock"]["seq"] == 1 and rep["verdict"]["lock"]["stage"] == "before-runs"
    assert rep["governing_basis"] == "recorded"
    (a,) = rep["amendments"]
    assert (a["seq"], a["stage"], a["reason"]) == (2, "after-mechanical-results", reason)
    # the amendment is evaluated on its own (its outcome depends on the scripted data, which
    # vary per run since the research-bank responder); it is listed apart, never the headline
    assert a["rule_changed"] and a["verdict"]["outcome"] in ("met", "not_met")
    assert a["verdict"]["lock"]["seq"] == 2
    assert main(["verdict", str(root / "runs")]) == 0
    text = capsys.readouterr().out
    assert text.startswith("SCRIPTED PRACTICE")  # scripted runs: the label first (442)
    head = "Verdict over SCRIPTED replies: NOT MET   (locked rule: seq 1, stage before-runs"
    assert text.splitlines()[2].startswith(head)
    assert "Amendment seq 2 at stage after-mechanical-results" in text
    assert "not the verdict" in text and f"reason: {reason}" in text
    assert text.index("Amendment seq 2") > text.index("Verdict over SCRIPTED replies: NOT MET")
    assert main(["prereg", "verify", str(root / "runs")]) == 0
    assert "ok, 2 entries; 4 run(s) agree with it" in capsys.readouterr().out


def test_a_replaced_chain_gives_no_verdict(
    pilot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy(pilot, tmp_path)
    runs = root / "runs"
    (old,) = read_chain(runs / "prereg.jsonl")
    (runs / "prereg.jsonl").unlink()
    # locking before-runs now is refused (runs exist): the forger locks elsewhere, moves it in
    assert main(_lock(root, AMENDED, "before-runs")) == 2
    capsys.readouterr()
    aside = tmp_path / "aside"
    aside.mkdir()
    (aside / "plan.toml").write_text(AMENDED)
    new = lock(aside / "plan.toml", "before-runs")
    shutil.move(aside / "prereg.jsonl", runs / "prereg.jsonl")
    assert main(["verdict", str(runs)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1
    assert f"4 run(s) were created under lock {old.hash[:12]}" in cap.err
    assert all(s.run_id in cap.err for s in scan_stamps(runs))
    assert new.hash[:12] not in cap.err
    assert main(["prereg", "verify", str(runs)]) == 1
    out = capsys.readouterr().out
    assert "BROKEN" in out and f"record lock {old.hash[:12]}…, which is not in the chain" in out


def test_verify_finds_a_before_runs_lock_made_after_the_runs(tmp_path: Path) -> None:
    """A chain written by older code (or with the scan pointed elsewhere) is still caught."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    first = lock(plan, "before-runs", ts="2026-01-01T00:00:00Z")
    stamp = RunStamp(
        run_id="C+cur-r0",
        created_at="2026-01-01T00:05:00.000001Z",
        lock=RecordedLock(hash=first.hash, seq=1, stage="before-runs"),
    )
    plan.write_text(AMENDED)
    (tmp_path / "empty").mkdir()
    lock(plan, "before-runs", reason="late", ts="2026-01-01T00:17:00Z", runs_dir=tmp_path / "empty")
    entries = read_chain(tmp_path / "prereg.jsonl")
    problems = chronology_problems(entries, [stamp])
    assert any(
        p.startswith(
            "seq 2 is locked at stage before-runs at 2026-01-01T00:17:00Z, after run C+cur-r0"
        )
        for p in problems
    )
    gov = governing_lock(entries, [stamp])
    assert gov.lock.seq == 1 and [e.seq for e in gov.amendments] == [2]


def test_runs_that_recorded_nothing_are_placed_by_time(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    lock(plan, "before-runs", ts="2026-01-01T00:00:00Z")
    plan.write_text(AMENDED)
    lock(plan, "after-shakeout", reason="proxy fixed", ts="2026-01-02T00:00:00Z")
    lock(plan, "after-key", reason="late", ts="2026-01-09T00:00:00Z")
    entries = read_chain(tmp_path / "prereg.jsonl")
    old = RunStamp(run_id="old", created_at="2026-01-03T10:00:00.5Z")
    gov = governing_lock(entries, [old])
    assert gov.lock.seq == 2 and gov.basis == "by time"
    assert [e.seq for e in gov.amendments] == [3]
    assert any("no run recorded the lock" in n for n in gov.notes)
    undated = governing_lock(entries, [RunStamp(run_id="x")])
    assert undated.lock.seq == 1 and undated.basis == "first lock"


def test_a_stage_with_a_trailing_newline_is_not_a_stage(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    with pytest.raises(ChainError, match=re.escape(f"unknown stage {'before-runs' + chr(10)!r}")):
        lock(plan, "before-runs\n")
