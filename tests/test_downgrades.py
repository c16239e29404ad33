"""Downgrades (S3, pilot-02): anyone may propose, with grounds of at least a sentence; only a
human curator (``human:<name>``) decides, with grounds; decisions are final."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.cli import main as cli
from curiosity_tui.contract import downgrades as dg
from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.events import (
    DependencyChecked,
    DowngradeProposed,
    NodeClosed,
    ReturnConditionRevised,
    ReturnConditionSet,
)

R1 = "Records of Catholic reformist texts being effectively suppressed."
GROUNDS = "The control strengthens but is not strictly required."
DECISION = "Agreed: the main mechanism is established on its own."


@pytest.fixture
def led(tmp_path: Path) -> Iterator[Ledger]:
    led = Ledger.create(
        tmp_path / "l", RunMeta(name="l", seed="Did print cause the Reformation?", config="C-cur")
    )
    with led.batch(1, marker="batch_committed", label="setup") as b:
        b.emit(
            ReturnConditionSet(
                required_facts=[
                    {"id": "r1", "text": R1, "status": "unchecked", "checked": None},
                    {
                        "id": "r2",
                        "text": "A second requirement.",
                        "status": "satisfied",
                        "checked": 1,
                    },
                ]
            ),
            node="q1",
            actor="model",
        )
    yield led
    led.close()


def _r(led: Ledger, rid: str = "r1") -> dict[str, Any]:
    return next(
        r for r in led.raw_nodes()["q1"]["return_condition"]["required_facts"] if r["id"] == rid
    )


def _propose(led: Ledger, **kw: Any) -> str:
    args = {"grounds": GROUNDS, "actor": "model", "action": "waive"} | kw
    action = args.pop("action")
    return dg.propose(led, "q1", args.pop("requirement", "r1"), action, **args)


@pytest.mark.parametrize(
    "grounds", [None, "", "   ", "Unneeded.", "not needed here", "too short, ok"]
)
def test_proposal_without_grounds_or_with_less_than_a_sentence_is_refused(
    led: Ledger, grounds: str | None
) -> None:
    before = led.last_seq
    with pytest.raises(TransitionError, match="grounds"):
        _propose(led, grounds=grounds)
    assert led.last_seq == before and led.raw_nodes()["q1"]["downgrades"] == []


def test_grounds_threshold_is_four_words_and_twenty_characters() -> None:
    assert dg.check_grounds("  It is not needed now.  ") == "It is not needed now."
    with pytest.raises(TransitionError):
        dg.check_grounds("It is not needed")  # 4 words, 16 characters
    with pytest.raises(TransitionError):
        dg.check_grounds("Unnecessarily-restrictive requirement altogether")  # 3 words


def test_proposal_is_a_journal_event_with_actor_and_grounds(led: Ledger) -> None:
    pid = _propose(led, actor="model")
    assert pid == "d1"
    [ev] = [e for e in led.events() if e.kind == "downgrade_proposed"]
    assert ev.actor == "model" and ev.node == "q1"
    assert ev.data | {} == {
        "id": "d1",
        "requirement": "r1",
        "action": "waive",
        "new_text": None,
        "grounds": GROUNDS,
        "proposed_by": "model",
        "session": led.last_session,
        "status": "pending",
        "decision": None,
    }
    assert _r(led)["status"] == "unchecked"  # a proposal changes nothing by itself
    assert _propose(led, actor="model-curator", action="weaken", new_text="Some record.") == "d2"
    assert (
        _propose(led, actor="human:ana", action="weaken", new_text="Any record of suppression.")
        == "d3"
    )


def test_bad_proposals_are_refused(led: Ledger) -> None:
    with pytest.raises(TransitionError, match="already satisfied"):
        _propose(led, requirement="r2")
    with pytest.raises(TransitionError, match="no required fact 'r9'"):
        _propose(led, requirement="r9")
    with pytest.raises(TransitionError, match="new, weaker requirement text"):
        _propose(led, action="weaken", new_text="  ")
    with pytest.raises(TransitionError, match="waive or weaken"):
        _propose(led, action="drop")
    with pytest.raises(TransitionError, match="invalid actor"):
        _propose(led, actor="alice")


@pytest.mark.parametrize(
    "actor",
    [
        "model",
        "model-curator",
        "system",
        "alice",
        "human:",
        "human: ana",
        "human:ana smith",
        "human:model",
        "Human:ana",
    ],
)
def test_decision_by_anyone_but_a_human_curator_is_refused(led: Ledger, actor: str) -> None:
    pid = _propose(led)
    before = led.last_seq
    with pytest.raises(TransitionError, match="only a human curator"):
        dg.decide(led, pid, "approve", grounds=DECISION, actor=actor)
    assert led.last_seq == before
    assert led.raw_nodes()["q1"]["downgrades"][0]["status"] == "pending"
    assert _r(led)["status"] == "unchecked"


@pytest.mark.parametrize("grounds", ["", "Fine.", "ok by me"])
def test_decision_needs_grounds_of_a_sentence(led: Ledger, grounds: str) -> None:
    pid = _propose(led)
    with pytest.raises(TransitionError, match="decision grounds"):
        dg.decide(led, pid, "reject", grounds=grounds, actor="human:ana")
    assert led.raw_nodes()["q1"]["downgrades"][0]["status"] == "pending"


def test_approved_waive_waives_and_is_journalled(led: Ledger) -> None:
    pid = _propose(led)
    dg.decide(led, pid, "approve", grounds=DECISION, actor="human:ana")
    assert _r(led)["status"] == "waived"
    p = led.raw_nodes()["q1"]["downgrades"][0]
    assert p["status"] == "approved"
    assert {k: p["decision"][k] for k in ("decision", "by", "grounds")} == {
        "decision": "approve",
        "by": "human:ana",
        "grounds": DECISION,
    }
    [ev] = [e for e in led.events() if e.kind == "downgrade_decided"]
    assert ev.actor == "human:ana" and ev.data["proposal"] == pid and ev.data["grounds"] == DECISION
    assert verify(led.path).ok


def test_rejected_proposal_changes_nothing(led: Ledger) -> None:
    pid = _propose(led)
    dg.decide(led, pid, "reject", grounds=DECISION, actor="human:ana")
    assert _r(led)["status"] == "unchecked" and _r(led)["text"] == R1
    assert led.raw_nodes()["q1"]["downgrades"][0]["status"] == "rejected"


def test_weaken_replaces_the_text_and_resets_to_unchecked(led: Ledger) -> None:
    with led.batch(2, marker="batch_committed", label="check") as b:
        b.emit(
            DependencyChecked(
                requirement="r1",
                claimed="not_satisfied",
                evidence_text="none",
                result="not_satisfied",
            ),
            node="q1",
            actor="model",
        )
    assert (_r(led)["status"], _r(led)["checked"]) == ("not_satisfied", 2)
    pid = _propose(
        led, action="weaken", new_text="  Any record of a suppressed Catholic reform text.  "
    )
    assert (
        led.raw_nodes()["q1"]["downgrades"][0]["new_text"]
        == "Any record of a suppressed Catholic reform text."
    )
    dg.decide(led, pid, "approve", grounds=DECISION, actor="human:ana")
    r1 = _r(led)
    assert r1 == {
        "id": "r1",
        "text": "Any record of a suppressed Catholic reform text.",
        "status": "unchecked",
        "checked": None,
    }


def test_deciding_an_already_decided_proposal_is_refused_naming_who(led: Ledger) -> None:
    pid = _propose(led)
    dg.decide(led, pid, "reject", grounds=DECISION, actor="human:ana")
    before = led.last_seq
    with pytest.raises(TransitionError, match=r"d1 was already rejected by human:ana"):
        dg.decide(led, pid, "approve", grounds=DECISION, actor="human:ben")
    assert led.last_seq == before and _r(led)["status"] == "unchecked"
    with pytest.raises(TransitionError, match="unknown downgrade proposal 'd7'"):
        dg.decide(led, "d7", "approve", grounds=DECISION, actor="human:ben")


def test_approving_a_waive_of_a_retired_or_met_requirement_is_refused(led: Ledger) -> None:
    pid = _propose(led)
    pid2 = _propose(led, action="weaken", new_text="Any record of suppression.")
    # r1 gets verified-satisfied meanwhile (by the fold, as a verified check would)
    with led.batch(2, marker="batch_committed", label="check") as b:
        b.emit(
            DependencyChecked(
                requirement="r1", claimed="satisfied", evidence_text="x", result="satisfied"
            ),
            node="q1",
            actor="model",
        )
    with pytest.raises(TransitionError, match="already satisfied; it can only be rejected"):
        dg.decide(led, pid, "approve", grounds=DECISION, actor="human:ana")
    assert _r(led)["status"] == "satisfied"
    dg.decide(led, pid, "reject", grounds=DECISION, actor="human:ana")
    # the revision retires r1: approving now names the retirement
    with led.batch(2, marker="batch_committed", label="rev") as b:
        b.emit(
            ReturnConditionRevised(
                required_facts=[
                    {"id": "r3", "text": "New.", "status": "unchecked", "checked": None}
                ],
                retired=["r1", "r2"],
                added=["r3"],
            ),
            node="q1",
            actor="model",
        )
    with pytest.raises(TransitionError, match="retired at a revision"):
        dg.decide(led, pid2, "approve", grounds=DECISION, actor="human:ana")


def test_list_pending_and_all(led: Ledger) -> None:
    d1 = _propose(led)
    _propose(led, action="weaken", new_text="A weaker bar.", actor="human:ana")
    dg.decide(led, d1, "reject", grounds=DECISION, actor="human:ben")
    pending = dg.list_downgrades(led, pending_only=True)
    assert [(p.id, p.status, p.action, p.new_text, p.proposed_by) for p in pending] == [
        ("d2", "pending", "weaken", "A weaker bar.", "human:ana")
    ]
    everything = dg.list_downgrades(led)
    assert [p.id for p in everything] == ["d1", "d2"]
    assert everything[0].decision is not None and everything[0].decision["by"] == "human:ben"
    assert everything[0].requirement_text == R1


# ----------------------------------------------------------------------------- CLI


def test_cli_downgrades_list_and_decide(led: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    _propose(led)
    path = str(led.path)
    led.close()
    assert cli(["downgrades", path, "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["downgrades"]
    assert (
        item["id"],
        item["node"],
        item["requirement"],
        item["action"],
        item["status"],
        item["proposed_by"],
    ) == ("d1", "q1", "r1", "waive", "pending", "model")
    assert item["requirement_text"] == R1 and item["grounds"] == GROUNDS
    # one word of grounds: refused, exit 2, nothing decided
    assert (
        cli(
            ["downgrades", "decide", path, "d1", "approve", "--grounds", "fine", "--curator", "ana"]
        )
        == 2
    )
    assert "grounds" in capsys.readouterr().err
    # a curator named like the model: refused
    assert (
        cli(
            [
                "downgrades",
                "decide",
                path,
                "d1",
                "approve",
                "--grounds",
                DECISION,
                "--curator",
                "model",
            ]
        )
        == 2
    )
    assert "only a human curator" in capsys.readouterr().err
    assert (
        cli(
            [
                "downgrades",
                "decide",
                path,
                "d1",
                "approve",
                "--grounds",
                DECISION,
                "--curator",
                "ana",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.strip() == "d1 approved"
    assert cli(["downgrades", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["downgrades"] == []
    assert cli(["downgrades", "list", path, "--all", "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)["downgrades"]
    assert item["status"] == "approved" and item["decision"]["by"] == "human:ana"
    assert item["requirement_status"] == "waived"
    assert (
        cli(
            [
                "downgrades",
                "decide",
                path,
                "d1",
                "reject",
                "--grounds",
                DECISION,
                "--curator",
                "ben",
            ]
        )
        == 2
    )
    assert "already approved by human:ana" in capsys.readouterr().err
    assert verify(path).ok


def test_a_second_identical_pending_proposal_is_refused(led: Ledger) -> None:
    _propose(led)
    with pytest.raises(TransitionError, match="d1 already proposes to waive q1/r1"):
        _propose(led, actor="model-curator")
    # a different proposal for the same requirement is a new one
    assert _propose(led, action="weaken", new_text="Any record of suppression.") == "d2"


def test_no_proposal_on_a_closed_node(led: Ledger) -> None:
    with led.batch(2, marker="batch_committed", label="close") as b:
        b.emit(NodeClosed(reason="ANSWER", unmet=["r1"]), node="q1", actor="model")
    with pytest.raises(TransitionError, match="q1 is closed"):
        _propose(led)


def test_pilot01_run_has_no_downgrade_route(tmp_path: Path) -> None:
    """pilot-01 is the contract as run: nothing to propose, nothing to decide."""
    path = tmp_path / "p1"
    meta = RunMeta(
        name="p1", seed="Did print cause the Reformation?", config="C-cur", contract="pilot-01"
    )
    with Ledger.create(path, meta) as led:
        with led.batch(1, marker="batch_committed", label="setup") as b:
            b.emit(
                ReturnConditionSet(
                    required_facts=[
                        {"id": "r1", "text": R1, "status": "unchecked", "checked": None}
                    ]
                ),
                node="q1",
                actor="model",
            )
            # a proposal already in the journal (e.g. written by an older version)
            b.emit(
                DowngradeProposed(
                    id="d1",
                    requirement="r1",
                    action="waive",
                    grounds=GROUNDS,
                    proposed_by="model",
                    session=1,
                ),
                node="q1",
                actor="model",
            )
        before = led.last_seq
        with pytest.raises(TransitionError, match="pilot-01, which has no downgrade route"):
            _propose(led, actor="human:ana")
        with pytest.raises(TransitionError, match="no downgrade route"):
            dg.decide(led, "d1", "approve", grounds=DECISION, actor="human:ana")
        assert led.last_seq == before and _r(led)["status"] == "unchecked"


def test_no_model_reply_can_carry_a_decision() -> None:
    """The model may propose, never decide: no response schema a model fills (deliverable,
    curator, …) has a decision field or an approve/reject value."""
    from curiosity_tui.protocol.schemas import SCHEMAS, DowngradeProposal

    for name, schema in SCHEMAS.items():
        text = json.dumps(schema.model_json_schema())
        assert '"approve"' not in text and '"reject"' not in text, name
        assert '"decision"' not in text and '"decided' not in text, name
    assert set(DowngradeProposal.model_fields) == {
        "node",
        "fact_id",
        "proposal",
        "new_text",
        "grounds",
    }
