"""The downgrade route can be practised, and is guarded (decision 443): the offline research
bank proposes downgrades in some sessions (the same ones for the same run), and a person may
not approve a downgrade they proposed unless ``--allow-self-approval``, which the decision
event records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.contract.downgrades import decide, list_downgrades
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger import Ledger, iter_ledgers

PLAN = """\
name = "dg-practice"
configurations = ["C+cur", "C-cur"]
runs = 2
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth"]
contract = "pilot-02"

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "C-cur"]]
metrics = ["max_depth"]
"""


def _pilot(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    plan = root / "plan.toml"
    plan.write_text(PLAN)
    out = root / "runs"
    args = ["pilot", "run", str(plan), "--out", str(out), "--scripted", "--unregistered"]
    assert main([*args, "--workers", "1"]) == 0
    return out


def _proposals(runs: Path) -> dict[str, list[tuple[str, str, str, str]]]:
    out = {}
    for path in iter_ledgers(runs):
        with Ledger.open(path) as led:
            out[path.name] = [(d.id, d.node, d.requirement, d.action) for d in list_downgrades(led)]
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _pilot(tmp_path_factory.mktemp("dg") / "a")


def test_a_scripted_pilot_has_model_proposals_the_same_per_run(runs: Path, tmp_path: Path) -> None:
    first = _proposals(runs)
    assert sum(len(v) for v in first.values()) >= 1, first
    with Ledger.open(next(p for p in iter_ledgers(runs) if first[p.name])) as led:
        assert {d.proposed_by for d in list_downgrades(led)} == {"model"}
    assert _proposals(_pilot(tmp_path / "b")) == first  # deterministic per run


def _pending(runs: Path) -> tuple[Path, str]:
    for path in iter_ledgers(runs):
        with Ledger.open(path) as led:
            for d in list_downgrades(led, pending_only=True):
                if d.requirement_status in ("unchecked", "not_satisfied"):
                    return path, d.id
    raise AssertionError("no pending proposal on a requirement in force")


def test_the_model_proposal_is_decided_by_a_person(runs: Path, tmp_path: Path) -> None:
    import shutil

    src, pid = _pending(runs)
    path = tmp_path / src.name
    shutil.copytree(src, path, ignore=shutil.ignore_patterns("writer.lock"))
    grounds = "The archive cannot settle this figure; close on what is established."
    with Ledger.open(path, write=True) as led:
        decide(led, pid, "approve", grounds=grounds, actor="human:bob")
    with Ledger.open(path) as led:
        done = next(d for d in list_downgrades(led) if d.id == pid)
    assert done.status == "approved" and done.decision is not None
    assert done.decision["by"] == "human:bob"


def test_self_approval_refused_then_allowed_and_recorded(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    src, _ = _pending(runs)
    path = tmp_path / src.name
    shutil.copytree(src, path, ignore=shutil.ignore_patterns("writer.lock"))
    with Ledger.open(path) as led:
        d = next(x for x in list_downgrades(led, pending_only=True))
    grounds = ["--grounds", "The archive cannot settle this figure; close on what is known."]
    assert main(["downgrades", "propose", str(path), d.node, d.requirement, "waive", *grounds,
                 "--curator", "ann"]) == 0  # fmt: skip
    pid = capsys.readouterr().out.split()[0]
    decide_args = ["downgrades", "decide", str(path), pid, "approve", *grounds]
    assert main([*decide_args, "--curator", "ann"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"downgrade {pid} was proposed by human:ann" in err and "--allow-self-approval" in err
    with Ledger.open(path) as led:  # nothing written
        assert next(x for x in list_downgrades(led) if x.id == pid).status == "pending"
    with Ledger.open(path, write=True) as led, pytest.raises(TransitionError):
        decide(led, pid, "approve", grounds=grounds[1], actor="human:ann")
    # rejecting one's own proposal is a withdrawal: allowed
    assert main(["downgrades", "decide", str(path), pid, "reject", *grounds, "--curator",
                 "ann"]) == 0  # fmt: skip
    assert main(["downgrades", "propose", str(path), d.node, d.requirement, "waive", *grounds,
                 "--curator", "ann"]) == 0  # fmt: skip
    again = capsys.readouterr().out.splitlines()[-1].split()[0]
    allowed = ["downgrades", "decide", str(path), again, "approve", *grounds, "--curator", "ann"]
    assert main([*allowed, "--allow-self-approval"]) == 0
    with Ledger.open(path) as led:
        listed = {x.id: x for x in list_downgrades(led)}
    assert listed[pid].status == "rejected" and listed[again].status == "approved"
    assert listed[again].decision is not None and listed[again].decision["self_approval"]
    assert not listed[pid].decision.get("self_approval")  # type: ignore[union-attr]
    events = [json.loads(line) for line in (path / "journal.jsonl").read_text().splitlines()]
    decided = [e for e in events if e["kind"] == "downgrade_decided"]
    assert decided[-1]["data"]["self_approval"] is True and decided[-1]["actor"] == "human:ann"
