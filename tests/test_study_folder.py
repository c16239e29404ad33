"""A study is a folder the tool understands (issue 28, item 1; decision 445): `study init`
lays it out; the plan locks and runs into `runs/<name>/`; the pilot finds the study's chain;
`audit`, `metrics`, `verdict`, `report` take the study folder (or `runs/`); the workspace
opened on the study folder lists its ledgers (it said "0 ledger(s)") and packs; a second
`before-runs` lock after the runs is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui import workspace_scan
from curiosity_tui.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("study") / "s1"
    assert main(["study", "init", str(root)]) == 0
    plan = root / "plan.toml"
    text = plan.read_text().replace("runs = 3", "runs = 1").replace("sessions = 5", "sessions = 3")
    plan.write_text(text)
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs"]) == 0
    out = root / "runs" / "p1"
    assert main(["pilot", "run", str(plan), "--out", str(out), "--scripted", "--workers", "1"]) == 0
    assert main(["pack", "build", str(out), "--out", str(root / "packs" / "p1"),
                 "--key-out", str(root / "keys" / "p1.key.json"), "--scheme", "pilot-02",
                 "--seed", "1", "--leak-permutations", "20"]) == 0  # fmt: skip
    return root


def test_init_lays_out_the_folder_and_refuses_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "new-study"
    rc, out, _ = _run(capsys, "study", "init", str(root))
    assert rc == 0 and "study new-study laid out" in out
    assert {p.name for p in root.iterdir()} == {"plan.toml", "runs", "packs", "keys", "report"}
    rc, out, _ = _run(capsys, "prereg", "lock", str(root / "plan.toml"), "--stage",
                      "before-runs", "--dry-run")  # fmt: skip
    assert rc == 0 and out.rstrip().endswith("result: would lock")
    rc, _, err = _run(capsys, "study", "init", str(root))
    assert rc == 2 and "already exists" in err and len(err.strip().splitlines()) == 1


def test_commands_take_the_study_folder(study: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "verdict", str(study))
    assert rc == 0 and "Verdict over SCRIPTED replies" in out
    rc, out, _ = _run(capsys, "verdict", str(study / "runs" / "p1"))  # the chain two levels up
    assert rc == 0 and "locked rule: seq 1, stage before-runs" in out
    rc, out, _ = _run(capsys, "metrics", str(study), "--json")
    assert rc == 0 and len(json.loads(out)["run_replies"]) == 2
    rc, out, _ = _run(capsys, "audit", str(study / "runs"))
    assert rc in (0, 1) and out.startswith(f"closure audit of 2 ledger(s) in {study / 'runs'}")
    rc, out, _ = _run(capsys, "report", str(study), "--out", str(study / "report"))
    assert rc == 0 and (study / "report" / "report.md").is_file()
    # the plan's [pack] picked sessions 1 and 3 of these 3-session runs
    key = json.loads((study / "keys" / "p1.key.json").read_text())
    assert {tuple(e["sessions"]) for e in key["items"].values() if e["kind"] == "run"} == {(1, 3)}


def test_a_second_before_runs_lock_after_the_runs_is_refused(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = _run(capsys, "prereg", "lock", str(study / "plan.toml"), "--stage",
                      "before-runs", "--reason", "again", "--dry-run")  # fmt: skip
    assert rc == 1 and "FAIL  runs:" in out


def test_the_workspace_on_the_study_folder_lists_its_runs_and_packs(study: Path) -> None:
    ws = workspace_scan.scan(study)
    assert len(ws.ledgers) == 2 and {s.config for s in ws.ledgers} == {"C+cur", "B-armed+cur"}
    assert [p.name for p in ws.packs] == ["p1"]
    assert all(s.scripted for s in ws.ledgers) and ws.packs[0].scripted
