"""Human curation inside a plan (issue 28 item 4, decision 560): an arm may say
``curator = "human"`` (and who may curate it); ``prereg lock`` takes it; ``pilot run
--scripted`` runs the model arms first, then hosts the human arm's run in the app's run
monitor (driven here by Pilot keys through the CLI); the pack's key and ``unblind`` name the
human-curated arm ``C+cur(human)`` beside the model-curated ``C+cur``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_host import piloted, until_done, wait_for

import curiosity_tui.cli.run_cmds as run_cmds
from curiosity_tui.analysis.plan import PlanError, parse_plan
from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, verify

PLAN = """\
name = "hcur"
model = "scripted-demo"
runs = 1
sessions = 2
seed_question = "Did the printing press cause the Reformation?"
epsilon = 0.15
configurations = ["Hcur", "C+cur"]
metrics = ["max_depth"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["Hcur", "C+cur"]]
metrics = ["max_depth"]

[arms.Hcur]
config = "C+cur"
curator = "human"
curators = ["ann", "ben"]
"""


def test_the_plan_takes_a_human_curated_arm_and_refuses_what_cannot_be() -> None:
    plan = parse_plan(PLAN)
    assert plan.arm("Hcur").curator == "human" and plan.arm("Hcur").curators == ["ann", "ben"]
    assert plan.arm("C+cur").curator is None
    bad = {
        'config = "C+cur"\ncurator = "human"': (
            'config = "C-cur"\ncurator = "human"',
            "configuration C-cur has no curator",
        ),
        'curator = "human"\ncurators': ('curator = "model"\ncurators', "curator is not"),
        '["ann", "ben"]': ('["ann smith"]', "is not a curator name"),
    }
    for old, (new, why) in bad.items():
        with pytest.raises(PlanError, match=why) as err:
            parse_plan(PLAN.replace(old, new), source="plan.toml")
        assert "arms.Hcur" in str(err.value) and "plan.toml:" in str(err.value)


def _curate_by_continuing(seen: list[int]) -> Any:
    async def script(app: Any, pilot: Any, req: Any) -> None:
        from curiosity_tui.screens.curator import CuratorScreen

        with Ledger.open(req.ledger.parent / "C+cur-r0") as led:  # the model arm ran first
            seen.append(led.last_session)
        await wait_for(pilot, lambda: isinstance(app.screen, CuratorScreen), "curator after s1")
        await pilot.press("ctrl+n")
        await until_done(app, pilot, req)

    return script


def test_pilot_run_hosts_the_human_arm_in_the_app_after_the_model_arm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs", "--dry-run"]) == 0
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs"]) == 0
    out = tmp_path / "runs"
    run = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--workers", "1"]
    capsys.readouterr()
    assert main([*run, "--curator-name", "eve"]) == 2  # not on the arm's list: nothing runs
    err = capsys.readouterr().err
    assert "arms.Hcur.curators" in err and "'eve' may not curate" in err
    assert not out.exists()

    seen: list[int] = []
    monkeypatch.setattr(run_cmds, "host_run", piloted(_curate_by_continuing(seen)))
    assert main([*run, "--curator-name", "ann"]) == 0
    text = capsys.readouterr().out
    assert "human-curated: Hcur (1 run); the app hosts each run for curator ann" in text
    assert "2 of 2 runs complete" in text
    assert seen == [2]  # the model arm had finished before the app opened
    human = out / "Hcur-r0"
    assert verify(human).ok
    with Ledger.open(human) as led:
        assert led.meta.curator == "human" and led.meta.options["arm"] == "Hcur"
        assert led.last_session == 2
        assert (1, "curator") in [(s, st) for s, st, _ in led.snapshot_index()]
    with Ledger.open(out / "C+cur-r0") as led:
        assert led.meta.curator == "model"
    manifest = json.loads((out / ".pilot" / "shard-1-of-1.json").read_text())
    assert {r["name"]: r["state"] for r in manifest["runs"]} == {
        "Hcur-r0": "done",
        "C+cur-r0": "done",
    }

    # the pack keeps the two curators' runs apart by name, through unblinding
    pack, key = tmp_path / "pack", tmp_path / "pack.key.json"
    assert main(["pack", "build", str(out), "--out", str(pack), "--key-out", str(key),
                 "--scheme", "pilot-02", "--seed", "3", "--controls", "0",
                 "--leak-permutations", "20"]) == 0  # fmt: skip
    assert "runs per configuration: C+cur 1, C+cur(human) 1" in capsys.readouterr().out
    groups = {e["run"]: e.get("group") for e in json.loads(key.read_text())["items"].values()}
    assert groups == {"Hcur-r0": "C+cur(human)", "C+cur-r0": None}
    capsys.readouterr()  # the leak check also asks whether raters could tell the curators apart
    assert main(["pack", "leakcheck", str(pack), "--key", str(key), "--permutations", "20",
                 "--json"]) == 0  # fmt: skip
    tasks = {t["task"]: t for t in json.loads(capsys.readouterr().out)["tasks"]}
    assert tasks["human-curator"]["classes"] == {"human": 1, "model": 1}
    capsys.readouterr()
    assert main(["unblind", str(pack), "--key", str(key), "--force", "--by", "ann"]) == 0
    text = capsys.readouterr().out
    assert "C+cur(human)" in text and "\n  human  C+cur          " in text


def test_a_curator_who_quits_leaves_the_run_for_the_next_pilot_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from curiosity_tui.screens.curator import CuratorScreen

    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "runs"
    run = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--workers", "1",
           "--unregistered", "--curator-name", "ben"]  # fmt: skip

    async def quit_at_the_curator(app: Any, pilot: Any, req: Any) -> None:
        await wait_for(pilot, lambda: isinstance(app.screen, CuratorScreen), "curator after s1")
        await pilot.press("ctrl+q")

    monkeypatch.setattr(run_cmds, "host_run", piloted(quit_at_the_curator))
    assert main(run) == 1
    text = capsys.readouterr().out
    assert "1 of 2 runs complete" in text and "the rest wait for a curator" in text
    with Ledger.open(out / "Hcur-r0") as led:
        assert led.last_session == 1
    manifest = json.loads((out / ".pilot" / "shard-1-of-1.json").read_text())
    assert {r["name"]: r["state"] for r in manifest["runs"]}["Hcur-r0"] == "pending"

    seen: list[int] = []
    monkeypatch.setattr(run_cmds, "host_run", piloted(_curate_by_continuing(seen)))
    assert main(run) == 0  # resumed: the model arm is complete and not run again
    assert "2 of 2 runs complete" in capsys.readouterr().out
    with Ledger.open(out / "Hcur-r0") as led:
        assert led.last_session == 2 and verify(out / "Hcur-r0").ok
