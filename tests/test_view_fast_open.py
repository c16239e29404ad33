"""The browser's fast open gives exactly what the definitional path gives (decision 277).

``Ledger.snapshot_index`` reads each snapshot row's tail instead of parsing the rows, and
``LedgerView.state`` of "now" skips reading the last snapshot when no node changed since.
Both are compared here with the definitions (every row parsed; the previous position's
nodes read and diffed) on ledgers of varied shapes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from app_fixtures import build_big, build_example, fixed_clock
from ledger_builders import build

from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.ledger.curation import archive, finish_curation, set_priority
from curiosity_tui.ledger.events import FactAttached
from curiosity_tui.ledger.queue import queue
from curiosity_tui.ledger.snapshot_tail import parse_snapshot_tail
from curiosity_tui.ledger.store import PROJECTION_FILE
from curiosity_tui.ledger.view import LedgerView, State, build_children


def definitional_index(path: Path) -> list[tuple[int, str, int]]:
    with Ledger.open(path) as led:
        return [(r["session"], r["stage"], r["seq"]) for r in led._snapshot_rows()]


def definitional_state(view: LedgerView, index: int) -> State:
    """``LedgerView.state`` as it was before the fast path (no shortcut anywhere)."""
    pos = view.positions[index]
    nodes = view.nodes_at(pos)
    if index == 0:
        first = pos.session if pos.session is not None else view.last_session + 1
        before = view.ledger.state_before(first) if first >= 1 else {}
    else:
        before = view.nodes_at(view.positions[index - 1])
    t = (pos.session if pos.session is not None else view.last_session) + 1
    ranks = {n["id"]: i for i, n in enumerate(queue(nodes.values(), t), start=1)}
    changed: dict[str, str] = {}
    for nid, n in nodes.items():
        old = before.get(nid)
        if old is None:
            changed[nid] = "new"
        elif dict(old) != dict(n):
            changed[nid] = "changed"
    return State(pos, nodes, build_children(nodes), changed, ranks, t, before)


def same_state(a: State, b: State) -> None:
    assert a.position == b.position
    assert a.nodes == b.nodes
    assert a.children == b.children
    assert a.changed == b.changed
    assert a.ranks == b.ranks
    assert a.t == b.t
    assert a.before == b.before


def _curated_after_last_session(path: Path) -> None:
    build_example(path)
    with Ledger.open(path, write=True) as led:
        set_priority(led, "q2", 1, "look here first", "human:ana")


def _curated_and_finished(path: Path) -> None:
    _curated_after_last_session(path)
    with Ledger.open(path, write=True) as led:
        archive(led, "q4", "off topic", "human:ana")
        finish_curation(led)


def _fact_after_last_snapshot(path: Path) -> None:
    led = build(path, 4)
    with led, led.batch(4, marker="batch_committed", label="late") as b:
        b.emit(FactAttached(text="a late fact"), node="q1", actor="model")


def _earlier_session_snapshot_last(path: Path) -> None:
    """A snapshot of an earlier session written after a later one (never done by the app,
    allowed by the API): "now" must then not be taken for the last position's state."""
    led = build(path, 3)
    with led, led.batch(1, marker="batch_committed", label="late") as b:
        b.emit(FactAttached(text="a fact filed under session 1"), node="q1", actor="model")
        b.snapshot("curator")


def _created_only(path: Path) -> None:
    Ledger.create(path, RunMeta(name=path.name, seed="Why?"), clock=fixed_clock()).close()


def _no_projection(path: Path) -> None:
    build_example(path)
    (path / PROJECTION_FILE).unlink()


SHAPES: dict[str, Any] = {
    "example": build_example,
    "big, flat": lambda p: build_big(p, n=1200, fanout=1200),
    "curated after the last session": _curated_after_last_session,
    "curated and finished": _curated_and_finished,
    "fact after the last snapshot": _fact_after_last_snapshot,
    "earlier session's snapshot last": _earlier_session_snapshot_last,
    "created only": _created_only,
    "no projection": _no_projection,
    "sessions": lambda p: build(p, 7).close(),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fast_open_equals_the_definition(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "led"
    led = SHAPES[shape](path)
    if isinstance(led, Ledger):
        led.close()
    index = definitional_index(path)
    with Ledger.open(path) as fresh:
        assert fresh.snapshot_index() == index
    view = LedgerView(path)
    try:
        assert view.snapshot_index == index
        for i in reversed(range(len(view.positions))):  # "now" first, before any row is read
            same_state(view.state(i), definitional_state(view, i))
    finally:
        view.close()


def test_now_skips_the_snapshot_only_when_nothing_changed_since(tmp_path: Path) -> None:
    finished, pending = tmp_path / "finished", tmp_path / "pending"
    _curated_and_finished(finished)
    _curated_after_last_session(pending)
    for path, skipped in ((finished, True), (pending, False)):
        view = LedgerView(path)
        try:
            now = view.state(len(view.positions) - 1)
            assert (now.before is now.nodes) is skipped
            assert (view.ledger._snap_rows is None) is skipped  # the rows were never parsed
            if not skipped:
                assert now.changed == {"q2": "changed"}
        finally:
            view.close()


def test_snapshot_tail_reads_only_well_formed_rows(tmp_path: Path) -> None:
    good = (
        b'{"changed":{"q1":{"text":"a \\",\\"node_count\\":9 trap"}},"node_count":1,'
        b'"seq":7,"session":2,"stage":"session","state_hash":"ab"}'
    )
    assert parse_snapshot_tail(good) == (2, "session", 7)
    for bad in (
        b'{"node_count":1,"seq":7,"session":2,"stage":"s","state_hash":"ab"}',  # no changed
        b'{"changed":{},"node_count":1,"seq":"7","session":2,"stage":"s","state_hash":"ab"}',
        b'{"changed":{},"node_count":1,"seq":7,"session":true,"stage":"s","state_hash":"ab"}',
        b'{"changed":{},"node_count":1,"seq":7,"session":2,"stage":"s","state_hash":"ab","x":1}',
        b'{"changed":{},"node_count":1,"seq":7,"session":2,"stage":"s","state_hash":"ab"',
    ):
        assert parse_snapshot_tail(bad) is None


def test_a_damaged_snapshot_table_still_lists_the_sessions(tmp_path: Path) -> None:
    path = build_example(tmp_path / "led")
    index = definitional_index(path)
    snaps = next((path / "projection").glob("snapshots.*.jsonl"))
    data = bytearray(snaps.read_bytes())
    data[20] ^= 1  # same length, the chain no longer holds: read from the journal instead
    snaps.write_bytes(bytes(data))
    with Ledger.open(path) as led:
        assert led.snapshot_index() == index
    shutil.rmtree(path)
