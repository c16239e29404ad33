"""The rendering a fresh session receives (S2): golden text, marks, what is never rendered,
byte-determinism, the five-fact cap and the focus node's six facts."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.ledger.events import (
    CandidatePreserved,
    CuratorPrioritySet,
    DependencyChecked,
    DowngradeDecided,
    DowngradeProposed,
    FactAttached,
    ReturnConditionSet,
    StatusChanged,
)
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta, SessionRecord
from curiosity_tui.ledger.render import (
    FOCUS_FACTS,
    RENDER_FACTS,
    focus_facts,
    mark,
    render_session_input,
)
from curiosity_tui.ledger.transitions import resurface

GOLDEN = Path(__file__).parent / "golden" / "render_session_4.txt"


def _rc(reqs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "required_facts": reqs,
        "required_actions": ["Compare German and French output", "List the\nprinters"],
        "closure_test": "A regional comparison supports or refutes the link",
    }


def build_golden_ledger(path: Path, clock: Any) -> Ledger:
    """Three sessions through the ledger API; the rendering for session 4 is the golden text."""
    led = Ledger.create(
        path,
        RunMeta(
            name="golden", seed="Did the printing press cause the Reformation?", config="C-cur"
        ),
        clock=clock,
    )
    with led.batch(1) as b:
        resurface(b, "q1", "forced_focus", "system")
        for i in range(1, 8):
            b.emit(FactAttached(text=f"Fact {i} about presses"), node="q1", actor="model")
        b.emit(
            ReturnConditionSet.model_validate(
                _rc(
                    [
                        {"id": "r1", "text": "Press output by 1520", "status": "unchecked"},
                        {"id": "r2", "text": "Urban literacy rates", "status": "unchecked"},
                        {"id": "r3", "text": "Pamphlet survival rates", "status": "unchecked"},
                        {"id": "r4", "text": "Censorship records", "status": "unchecked"},
                    ]
                )
            ),
            node="q1",
            actor="model",
        )
        b.create_node(
            "How many presses were there in 1500?",
            parent="q1",
            origin="new_question",
            actor="model",
        )
        b.create_node(
            "Was Luther [bold]read[/] or heard?", parent="q1", origin="new_question", actor="model"
        )
        b.snapshot("session")
        b.record_session(SessionRecord(session=1))
    with led.batch(2) as b:
        resurface(b, "q1", "forced_focus", "system")
        b.emit(
            DependencyChecked(
                requirement="r1",
                claimed="satisfied",
                evidence_text="SECRET-EVIDENCE: Eisenstein 1979 p. 303",
                result="satisfied",
            ),
            node="q1",
            actor="model",
        )
        b.emit(
            DependencyChecked(
                requirement="r2",
                claimed="not_satisfied",
                evidence_text="SECRET-EVIDENCE-2",
                result="not_satisfied",
            ),
            node="q1",
            actor="model",
        )
        b.emit(CandidatePreserved(text="SECRET-CANDIDATE one", delta=0.3), node="q1", actor="model")
        b.emit(
            FactAttached(text="Luther's [link=https://x.org]tracts[/link] sold"),
            node="q3",
            actor="model",
        )
        b.snapshot("session")
        b.record_session(SessionRecord(session=2))
    with led.batch(3) as b:
        resurface(b, "q3", "voluntary", "model")
        b.emit(CandidatePreserved(text="SECRET-CANDIDATE two", delta=0.2), node="q1", actor="model")
        b.emit(
            DowngradeProposed(
                id="d1",
                requirement="r4",
                action="waive",
                grounds="lost archives",
                proposed_by="model",
                session=3,
            ),
            node="q1",
            actor="model",
        )
        b.emit(
            DowngradeDecided(proposal="d1", decision="approve", grounds="ok"),
            node="q1",
            actor="human:ann",
        )
        b.emit(StatusChanged(to="archived", reason="off topic"), node="q2", actor="human:ann")
        b.create_node("Multi-line\nquestion text", parent=None, origin="curator", actor="human:ann")
        b.emit(CuratorPrioritySet(priority=1, reason="look first"), node="q4", actor="human:ann")
        b.snapshot("session")
        b.record_session(SessionRecord(session=3))
    return led


@pytest.fixture
def golden_ledger(tmp_path: Path, clock: Any) -> Ledger:
    return build_golden_ledger(tmp_path / "golden", clock)


def test_rendering_matches_golden_file(golden_ledger: Ledger) -> None:
    text = golden_ledger.rendering(4)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_bytes(text.encode("utf-8"))
    assert text.encode("utf-8") == GOLDEN.read_bytes()


def test_golden_content(golden_ledger: Ledger) -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    assert "[checked s2: satisfied]" in text
    assert "[checked s2: not satisfied]" in text
    assert "r3: Pamphlet survival rates [unchecked]" in text
    assert "preserved candidates: 2" in text
    assert "SECRET" not in text  # no evidence text, no preserved candidate content
    assert "Fact 1 " not in text and "Fact 2 " not in text  # only the last five facts
    assert all(f"Fact {i} about presses" in text for i in range(3, 8))
    assert "facts (last 5 of 7)" in text
    assert "] q2 |" not in text  # archived: not in the queue
    assert "Was Luther [bold]read[/] or heard?" in text  # markup verbatim
    assert text.index("] q4 |") < text.index("] q1 |")  # curator priority first


def test_rendering_is_byte_deterministic(golden_ledger: Ledger, tmp_path: Path, clock: Any) -> None:
    nodes = golden_ledger.raw_nodes()
    first = render_session_input(nodes, 4)
    items = list(nodes.items())
    for seed in range(5):
        random.Random(seed).shuffle(items)
        assert render_session_input(dict(items), 4) == first
        assert render_session_input([v for _, v in items], 4) == first
    # a second ledger built the same way (different clock values) renders the same bytes
    other = build_golden_ledger(tmp_path / "again", lambda: "2030-01-01T00:00:00Z")
    assert other.rendering(4) == first
    # and reopening from disk changes nothing
    golden_ledger.close()
    assert Ledger.open(golden_ledger.path).rendering(4) == first


def test_marks_exact() -> None:
    assert mark({"status": "satisfied", "checked": 3}) == "[checked s3: satisfied]"
    assert mark({"status": "not_satisfied", "checked": 12}) == "[checked s12: not satisfied]"
    assert mark({"status": "unchecked", "checked": None}) == "[unchecked]"


def test_focus_facts_six_and_render_five() -> None:
    assert (RENDER_FACTS, FOCUS_FACTS) == (5, 6)
    n = {"facts": [{"text": f"f{i}", "session": 1} for i in range(1, 9)]}
    assert focus_facts(n) == ["f3", "f4", "f5", "f6", "f7", "f8"]
    assert focus_facts({"facts": [{"text": "only", "session": 1}]}) == ["only"]


def test_saved_rendering_is_what_the_session_received(golden_ledger: Ledger) -> None:
    # state_before(4) is the current state: the rendering is computed; state_before(2) comes
    # from the snapshot after session 1
    before2 = golden_ledger.state_before(2)
    assert [f["text"] for f in before2["q1"]["facts"]][-1] == "Fact 7 about presses"
    assert before2["q1"]["checks"] == []
    text2 = golden_ledger.rendering(2)
    assert "[unchecked]" in text2 and "[checked" not in text2
