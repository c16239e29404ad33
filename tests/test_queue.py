"""Pulse, decayed priority (τ = 3, hand-computed), queue ties, curator priority, dormancy and
revival (S1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.events import NodeClosed
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.ledger.node_record import last_touch, pulse
from curiosity_tui.ledger.queue import (
    decay_candidates,
    decayed_priority,
    queue,
    select_focus,
)
from curiosity_tui.ledger.transitions import REVIVED_REASON, apply_decay, resurface


def node(nid: str, created: int, resurfaced: list[int], **kw: Any) -> dict[str, Any]:
    n: dict[str, Any] = {
        "id": nid,
        "text": nid,
        "parent": None,
        "status": "open",
        "created": created,
        "resurfaced": resurfaced,
        "curator_priority": None,
    }
    n.update(kw)
    return n


def ids(nodes: list[Any]) -> list[str]:
    return [n["id"] for n in nodes]


def test_pulse_counts_resurfacings_not_creation() -> None:
    assert pulse(node("q1", 1, [])) == 0
    assert pulse(node("q1", 1, [2, 3, 5])) == 3


@pytest.mark.parametrize(
    ("t", "resurfaced", "expected"),
    [
        # e^-1 + e^-2/3 = 0.367879 + 0.513417
        (4, [1, 2], 0.8812965602),
        # e^-1/3
        (4, [3], 0.7165313106),
        # e^-5/3 + e^-4/3 = 0.188876 + 0.263597
        (6, [1, 2], 0.4524727410),
        # e^-2 + e^-5/3 + e^-4/3
        (7, [1, 2, 3], 0.5878080242),
        # worked in session t itself: e^0
        (5, [5], 1.0),
        # never resurfaced
        (5, [], 0.0),
    ],
)
def test_decayed_priority_hand_computed(t: int, resurfaced: list[int], expected: float) -> None:
    assert decayed_priority(node("q1", 0, resurfaced), t) == pytest.approx(expected, abs=1e-9)


def test_higher_pulse_can_rank_below_a_fresher_node() -> None:
    old = node("q1", 0, [1, 2, 3])  # pulse 3, priority at t=7: 0.587808
    fresh = node("q2", 0, [6])  # pulse 1, priority at t=7: 0.716531
    assert pulse(old) > pulse(fresh)
    assert ids(queue([old, fresh], 7)) == ["q2", "q1"]
    # at t=4 the same two nodes (as far as they existed) rank by recency too
    assert ids(queue([node("q1", 0, [1, 2]), node("q2", 0, [3])], 4)) == ["q1", "q2"]


def test_ties_later_created_first_then_lower_id() -> None:
    a = node("q1", 1, [])
    b = node("q2", 3, [])
    c = node("q3", 2, [])
    d = node("q10", 3, [])
    assert ids(queue([a, b, c, d], 5)) == ["q2", "q10", "q3", "q1"]
    # equal decayed priority from equal resurfacing histories: same rule
    e = node("q4", 1, [2])
    f = node("q5", 2, [2])
    assert ids(queue([e, f], 4)) == ["q5", "q4"]


def test_curator_priority_orders_first() -> None:
    hot = node("q1", 0, [4])
    p2 = node("q2", 0, [], curator_priority=2)
    p1 = node("q3", 0, [], curator_priority=1)
    assert ids(queue([hot, p2, p1], 5)) == ["q3", "q2", "q1"]
    assert ids(queue([hot, p2, p1], 5, use_curator=False)) == ["q1", "q2", "q3"]


def test_queue_holds_open_nodes_only() -> None:
    nodes = [
        node("q1", 0, [], status="dormant"),
        node("q2", 0, [], status="closed"),
        node("q3", 0, [], status="open"),
        node("q4", 0, [], status="merged"),
        node("q5", 0, [], status="archived"),
    ]
    assert ids(queue(nodes, 3)) == ["q3"]


def test_select_focus_no_reselect() -> None:
    nodes = [node("q1", 0, [3]), node("q2", 0, [])]
    assert select_focus(nodes, 4) == "q1"
    assert select_focus(nodes, 4, previous_focus="q1", no_reselect=True) == "q2"
    assert select_focus([nodes[0]], 4, previous_focus="q1", no_reselect=True) == "q1"
    assert select_focus([], 4) is None


def test_decay_after_three_sessions_without_a_touch() -> None:
    n = node("q1", 1, [])
    assert last_touch(n) == 1
    assert decay_candidates([n], 3) == []
    assert decay_candidates([n], 4) == ["q1"]  # 4 - 1 = 3
    touched = node("q2", 1, [2])
    assert decay_candidates([touched], 4) == []
    assert decay_candidates([touched], 5) == ["q2"]
    assert decay_candidates([node("q3", 0, [], status="closed")], 9) == []


def _ledger(tmp_path: Path, clock: Any) -> Ledger:
    return Ledger.create(
        tmp_path / "l", RunMeta(name="l", seed="seed?", config="C-cur"), clock=clock
    )


def _empty_session(led: Ledger, t: int) -> list[str]:
    with led.batch(t) as b:
        b.snapshot("session")
        dormant = apply_decay(b)
        b.snapshot("decay")
    return dormant


def test_dormancy_and_revival_through_the_ledger(tmp_path: Path, clock: Any) -> None:
    led = _ledger(tmp_path, clock)  # q1 created in session 0
    with led.batch(1) as b:
        q2 = b.create_node("child", parent="q1", origin="new_question", actor="model")
        resurface(b, "q1", "forced_focus", "system")
        b.snapshot("session")
        assert apply_decay(b) == []
    assert _empty_session(led, 2) == []
    assert _empty_session(led, 3) == []
    # q1 last touched in 1, q2 created in 1: both 3 sessions back after session 4
    assert _empty_session(led, 4) == ["q1", q2]
    assert led.node("q1")["status"] == "dormant"
    assert [n["id"] for n in led.nodes() if n["status"] == "open"] == []
    # facts never decay; status only
    with led.batch(5) as b:
        assert resurface(b, "q1", "voluntary", "model") is True
        assert resurface(b, "q1", "voluntary", "model") is False  # already open again
    q1 = led.node("q1")
    assert q1["status"] == "open"
    assert q1["resurfaced"] == [1, 5]
    assert q1["voluntary"] == [5]
    evs = [e for e in led.events("q1") if e.session == 5]
    assert [(e.kind, e.data.get("to"), e.data.get("reason")) for e in evs[:2]] == [
        ("status_changed", "open", REVIVED_REASON),
        ("question_resurfaced", None, None),
    ]
    assert led.verify().ok


def test_resurface_refuses_closed_nodes(tmp_path: Path, clock: Any) -> None:
    led = _ledger(tmp_path, clock)
    with led.batch(1) as b:
        b.emit(NodeClosed(reason="answered"), node="q1", actor="model")
        with pytest.raises(TransitionError, match="closed"):
            resurface(b, "q1", "voluntary", "model")
