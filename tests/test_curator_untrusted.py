"""The model curator's reply is untrusted input (issue 25, items 9 and 10): reasons must be
sentences, the seed question and closed nodes are never archived, a merge names its target,
and a mass archive is limited and flagged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_model_curator_guard import _curate, _ledger

from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.ledger.events import StatusChanged

REASON = "It repeats an earlier question about the pamphlets."


def _with_children(tmp_path: Path, n: int = 5) -> Path:
    path = _ledger(tmp_path)
    with Ledger.open(path, write=True) as led, led.batch(1) as b:
        for k in range(n):
            b.create_node(f"Child question {k} about pamphlets?", parent="q1",
                          origin="new_question", actor="model")  # fmt: skip
        b.emit(StatusChanged(to="closed", reason="answered"), node="q2", actor="model")
        b.snapshot("session")
    return path


def _act(action: str, node: str, reason: str = REASON, into: str | None = None) -> dict[str, Any]:
    return {"action": action, "node": node, "priority": None, "into": into, "reason": reason}


def _status(path: Path) -> dict[str, str]:
    with Ledger.open(path) as led:
        return {i: n["status"] for i, n in led.raw_nodes().items()}


def test_reasons_that_are_not_sentences_are_refused(tmp_path: Path) -> None:
    path = _with_children(tmp_path)
    bad = ["s1", "}, { ", "None", "100, "]
    acts = [_act("prioritise", f"q{k + 3}", reason=r) for k, r in enumerate(bad)]
    notes = _curate(path, [*acts, _act("archive", "q6", reason=" ")])
    assert sum("is not a sentence" in n for n in notes) == 5, notes
    with Ledger.open(path) as led:
        assert all(n.get("curator_priority") is None for n in led.raw_nodes().values())
    assert all(s == "open" for i, s in _status(path).items() if i != "q2")


def test_the_seed_and_closed_nodes_are_never_archived(tmp_path: Path) -> None:
    path = _with_children(tmp_path)
    notes = _curate(path, [_act("archive", "q1"), _act("archive", "q2"), _act("merge", "q3")])
    assert any("q1 not applied: it is the seed question" in n for n in notes), notes
    assert any("q2 not applied: it is closed" in n for n in notes), notes
    assert any("q3 not applied: it names no node to merge into" in n for n in notes), notes
    assert not any("unknown node ''" in n for n in notes)
    status = _status(path)
    assert status["q1"] == "open" and status["q2"] == "closed" and status["q3"] == "open"


def test_a_mass_archive_is_limited_and_flagged(tmp_path: Path) -> None:
    path = _with_children(tmp_path)  # open: q1 (seed), q3..q6
    notes = _curate(path, [_act("archive", f"q{k}") for k in (3, 4, 5, 6)])
    assert any("mass archive flagged" in n and "4 nodes" in n for n in notes), notes
    status = _status(path)
    archived = [i for i, s in status.items() if s == "archived"]
    assert len(archived) == 1, status  # a third of 5 open questions, at least one
    assert sum("over the limit" in n for n in notes) == 3
    assert verify(path).ok
