"""Replay == projection == snapshots; reopen and rebuild; node text stored verbatim."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ledger_builders import build, run_session

from curiosity_tui.errors import LedgerError, TransitionError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import FactAttached, event_of
from curiosity_tui.ledger.ledger import Ledger, node_hash, replay, state_hash
from curiosity_tui.ledger.models import RunMeta


def canon(x: Any) -> str:
    return jr.canonical(x)


def test_replay_equals_projection_equals_snapshots(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 6, clock=clock)
    result = replay(led.path, keep_snapshots=True)
    assert canon(result.state.nodes) == canon(led.raw_nodes())
    assert canon(result.state.sessions) == canon(led.raw_sessions())
    # every stored snapshot equals the fold at its seq
    stored = led._store.table_rows("snapshots") if led._store else []
    assert [r["seq"] for r in stored] == [r["seq"] for r in result.snapshot_rows()]
    assert len(stored) == 12  # session + decay snapshot for each of six sessions
    for session in range(1, 7):
        for stage in ("session", "decay"):
            seq = next(r["seq"] for r in stored if r["session"] == session and r["stage"] == stage)
            # fold the journal up to that seq independently
            partial = _fold_until(led.path, seq)
            assert canon(led.snapshot(session, stage)) == canon(partial)
            hashes = {nid: node_hash(n) for nid, n in partial.items()}
            ev = next(e for e in led.events() if e.seq == seq)
            assert ev.data["state_hash"] == state_hash(hashes)
    report = led.verify()
    assert report.ok, report.summary()
    assert (report.sessions, report.snapshots, report.nodes) == (6, 12, len(led.raw_nodes()))


def _fold_until(path: Path, seq: int) -> dict[str, Any]:
    from curiosity_tui.ledger.events import FoldState, fold_event

    st = FoldState()
    for ev in jr.scan(path / "journal.jsonl").events:
        if ev["seq"] > seq:
            break
        fold_event(st, ev)
    return st.nodes


def test_reopen_reads_the_projection_and_continues(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 3, clock=clock)
    before = canon(led.raw_nodes())
    led.close()
    again = Ledger.open(tmp_path / "l", write=True, clock=clock)
    assert again.recovered is None
    assert canon(again.raw_nodes()) == before
    run_session(again, 4, focus="q1")
    again.close()
    assert Ledger.open(tmp_path / "l").verify().ok


@pytest.mark.parametrize("damage", ["missing", "behind"])
def test_projection_rebuilt_from_the_journal(tmp_path: Path, clock: Any, damage: str) -> None:
    led = build(tmp_path / "l", 2, clock=clock)
    proj = tmp_path / "l" / "ledger.json"
    old = proj.read_bytes()
    led.close()
    led = Ledger.open(tmp_path / "l", write=True, clock=clock)
    run_session(led, 3, focus="q1")
    expected = canon(led.raw_nodes())
    led.close()
    if damage == "missing":
        proj.unlink()
    else:
        proj.write_bytes(old)  # the projection as it was before session 3
    ro = Ledger.open(tmp_path / "l")  # read-only: rebuilt in memory, nothing written
    assert "rebuilt" in (ro.recovered or "")
    assert canon(ro.raw_nodes()) == expected
    assert (proj.exists(), damage) in ((False, "missing"), (True, "behind"))
    rw = Ledger.open(tmp_path / "l", write=True)
    assert "rebuilt" in (rw.recovered or "")
    rw.close()
    assert Ledger.open(tmp_path / "l").recovered is None
    assert Ledger.open(tmp_path / "l").verify().ok


def test_markup_and_control_characters_stored_verbatim(tmp_path: Path, clock: Any) -> None:
    nasty = "[bold]Loud[/] [link=https://example.org]x[/link] \x1b[31mred\x1b[0m \x00\x07 tab\t [/]"
    led = Ledger.create(tmp_path / "l", RunMeta(name="l", seed=nasty, config="C-cur"), clock=clock)
    with led.batch(1) as b:
        q = b.create_node(nasty + " child", parent="q1", origin="new_question", actor="model")
        b.emit(FactAttached(text="[red]fact[/red]\r\n\x1b"), node=q, actor="model")
        b.snapshot("session")
    led.close()
    led = Ledger.open(tmp_path / "l")
    assert led.node("q1")["text"] == nasty
    assert led.node(q)["text"] == nasty + " child"
    assert led.node(q)["facts"][0]["text"] == "[red]fact[/red]\r\n\x1b"
    assert led.meta.seed == nasty
    # the journal line escapes control characters but decodes to the same text
    line = (tmp_path / "l" / "journal.jsonl").read_bytes().splitlines()[1]
    assert json.loads(line)["data"]["text"] == nasty
    assert nasty in led.rendering(2)
    assert led.verify().ok


def test_batch_is_all_or_nothing(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 1, clock=clock)
    journal = (tmp_path / "l" / "journal.jsonl").read_bytes()
    nodes = canon(led.raw_nodes())
    with pytest.raises(RuntimeError), led.batch(2) as b:
        b.create_node("never", parent=None, origin="new_question", actor="model")
        b.emit(FactAttached(text="never"), node="q1", actor="model")
        raise RuntimeError("the session failed")
    assert (tmp_path / "l" / "journal.jsonl").read_bytes() == journal
    assert canon(led.raw_nodes()) == nodes
    # a later batch reuses the ids the aborted batch would have taken
    with led.batch(2) as b:
        assert b.create_node("real", parent=None, origin="new_question", actor="model") == "q3"


def test_emit_rejects_bad_input_without_changing_anything(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 1, clock=clock)
    with led.batch(2) as b:
        for kind, node, actor, data in [
            ("bogus", "q1", "model", {}),
            ("fact_attached", "q99", "model", {"text": "x"}),
            ("fact_attached", "q1", "someone", {"text": "x"}),
            ("fact_attached", "q1", "model", {"txt": "x"}),
            ("decay_applied", None, "system", {"nodes": ["q1", "q99"]}),
            ("session_committed", None, "system", {}),
        ]:
            with pytest.raises(TransitionError):
                b.emit(event_of(kind, data), node=node, actor=actor)
        assert b.events == []
        assert b.node("q1")["status"] == "open"  # the failed decay changed nothing
    with pytest.raises(LedgerError, match="read-only"):
        Ledger.open(tmp_path / "l").batch(3)
