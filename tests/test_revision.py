"""The return-condition revision rule as run (S3): unsatisfied carried, satisfied not,
proposals merged, no proposals → no revision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curiosity_tui.ledger.events import (
    DependencyChecked,
    ReturnConditionRevised,
    ReturnConditionSet,
)
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.ledger.revision import revise

CURRENT: dict[str, Any] = {
    "required_facts": [
        {"id": "r1", "text": "Output of presses by 1520", "status": "satisfied", "checked": 2},
        {"id": "r2", "text": "Literacy in towns", "status": "not_satisfied", "checked": 2},
        {"id": "r3", "text": "Pamphlet counts", "status": "unchecked", "checked": None},
        {"id": "r4", "text": "Censorship records", "status": "waived", "checked": None},
    ],
    "required_actions": ["compare regions"],
    "closure_test": "a comparison exists",
    "session": 1,
    "revision": 0,
}


def test_unsatisfied_carried_satisfied_not_proposals_merged() -> None:
    rev = revise(
        CURRENT,
        ["Sermon circulation", "  literacy IN   towns ", "Output of presses by 1520"],
        required_actions=None,
        closure_test=None,
        next_counter=4,
    )
    assert rev is not None
    assert rev.carried == ["r2", "r3"]
    assert rev.retired == ["r1", "r4"]
    # a restated carried requirement is not duplicated; a restated satisfied one comes back
    # as a new, unchecked requirement with a fresh id (ids are never reused)
    assert rev.added == ["r5", "r6"]
    facts = {r["id"]: (r["text"], r["status"]) for r in rev.required_facts}
    assert facts == {
        "r2": ("Literacy in towns", "not_satisfied"),
        "r3": ("Pamphlet counts", "unchecked"),
        "r5": ("Sermon circulation", "unchecked"),
        "r6": ("Output of presses by 1520", "unchecked"),
    }
    assert rev.required_actions == ["compare regions"]
    assert rev.closure_test == "a comparison exists"


def test_no_proposals_no_revision() -> None:
    for proposals in ([], ["", "   "]):
        assert (
            revise(CURRENT, proposals, required_actions=["x"], closure_test="y", next_counter=4)
            is None
        )


def test_new_actions_and_test_replace_old() -> None:
    rev = revise(CURRENT, ["New"], required_actions=["a2"], closure_test="t2", next_counter=4)
    assert rev is not None
    assert (rev.required_actions, rev.closure_test) == (["a2"], "t2")


def test_revision_through_the_ledger(tmp_path: Path, clock: Any) -> None:
    led = Ledger.create(tmp_path / "l", RunMeta(name="l", seed="s?", config="C-cur"), clock=clock)
    with led.batch(1) as b:
        b.emit(
            ReturnConditionSet(
                required_facts=[
                    {"id": "r1", "text": "A", "status": "unchecked"},
                    {"id": "r2", "text": "B", "status": "unchecked"},
                ],
                required_actions=[],
                closure_test="t",
            ),
            node="q1",
            actor="model",
        )
    with led.batch(2) as b:
        b.emit(
            DependencyChecked(
                requirement="r1", claimed="satisfied", evidence_text="E", result="satisfied"
            ),
            node="q1",
            actor="model",
        )
        n = b.node("q1")
        rev = revise(
            n["return_condition"],
            ["C"],
            required_actions=None,
            closure_test=None,
            next_counter=n["requirement_counter"],
        )
        assert rev is not None
        b.emit(
            ReturnConditionRevised(
                required_facts=rev.required_facts,
                required_actions=rev.required_actions,
                closure_test=rev.closure_test,
                carried=rev.carried,
                retired=rev.retired,
                added=rev.added,
            ),
            node="q1",
            actor="model",
        )
    rc = led.node("q1")["return_condition"]
    assert rc is not None
    assert [(r["id"], r["text"], r["status"]) for r in rc["required_facts"]] == [
        ("r2", "B", "unchecked"),
        ("r3", "C", "unchecked"),
    ]
    assert (rc["revision"], rc["session"]) == (1, 2)
    assert led.node("q1")["requirement_counter"] == 3
    assert led.verify().ok
