"""The fast replay (decisions 250, 251) gives exactly what the definitional path gives: on
varied journals (every node-changing kind, odd strings, a float, non-canonical lines, events
after the last snapshot), on corrupt ones (bit flips, a broken chain, a seq gap, bad data, an
unknown node, a snapshot that does not match) with the same one-line message naming the file
and seq, at every block size of the stream, and when a kind's declared fields are wrong.

The definitional path: chain checked line by line, every event's data validated by pydantic,
every changed node encoded whole at each snapshot; and, independently, a fold whose state hash
is recomputed from every node at every snapshot."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from ledger_builders import build

from curiosity_tui.errors import CorruptLedgerError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import (
    FOLD_FIELDS,
    CandidatePreserved,
    CuratorPrioritySet,
    DowngradeDecided,
    DowngradeProposed,
    EvidenceAdded,
    EvidenceVerified,
    FactAttached,
    FoldState,
    NodeAnswered,
    NodeClosed,
    NodesMerged,
    QuestionResurfaced,
    SessionStarted,
    StatusChanged,
    fold_event,
    validate_data,
)
from curiosity_tui.ledger.hashing import node_hash, state_hash
from curiosity_tui.ledger.journal import JOURNAL_FILE
from curiosity_tui.ledger.models import MatchCheck, SessionRecord
from curiosity_tui.ledger.replay import replay, touched, verify

RP = sys.modules["curiosity_tui.ledger.replay"]
ODD = 'é "quoted" \\ back\nnew\ttab \x01 \x7f \u2028 😀'
LEDGERS = Path(__file__).resolve().parent.parent / "ledgers"


def _varied(path: Path, clock: Any) -> Path:
    """Every node-changing kind, strings json must escape, a float repr and json differ on
    elsewhere (1e16), and a batch after the last snapshot."""
    led = build(path, 6, clock=clock)
    t = led.last_session + 1
    with led.batch(t) as b:
        b.emit(SessionStarted(focus="q1"))
        b.emit(FactAttached(text=ODD, source="src-1"), node="q1", actor="model")
        b.emit(
            EvidenceAdded(id="e1", requirement="r1", session=t, passage=ODD),
            node="q1",
            actor="model",
        )
        match = MatchCheck(offset=3, method="exact", checked_by="system", checked_at="now")
        b.emit(EvidenceVerified(evidence_id="e1", match=match), node="q1")
        b.emit(
            DowngradeProposed(
                id="d1",
                requirement="r2",
                action="weaken",
                new_text="weaker",
                grounds="g",
                proposed_by="model",
                session=t,
            ),
            node="q1",
            actor="model",
        )
        b.emit(QuestionResurfaced(how="voluntary"), node="q2", actor="model")
        b.emit(CuratorPrioritySet(priority=2, reason="r"), node="q2", actor="human:ann")
        b.emit(StatusChanged(to="archived", reason="x"), node="q3")
        b.emit(NodesMerged(into="q2", reason="dup"), node="q4")
        b.emit(CandidatePreserved(text="c", delta=1e16), node="q2", actor="model")
        b.snapshot("session")
        b.emit(DowngradeDecided(proposal="d1", decision="approve", grounds="ok"), node="q1")
        b.emit(NodeAnswered(answer="a", delta=0.5), node="q2", actor="model")
        b.emit(NodeClosed(reason="done"), node="q2")
        b.snapshot("curator")
        b.record_session(SessionRecord(session=t))
    with led.batch(t, marker="batch_committed", label="after") as b:
        b.emit(FactAttached(text="after the last snapshot"), node="q5", actor="model")
    led.close()
    return path


def _outcome(run: Any) -> tuple[Any, ...]:
    try:
        r = run()
    except CorruptLedgerError as err:
        return ("error", str(err), err.seq)
    st = r.state
    return (
        "ok",
        r.events,
        r.snapshots,
        jr.canonical(st.nodes),
        jr.canonical({str(k): v for k, v in st.sessions.items()}),
        jr.canonical(st.failed),
        jr.canonical(st.sources),
        jr.canonical(st.meta),
        (st.node_counter, st.evidence_counter, st.downgrade_counter, st.last_session),
        r.hashes.as_dict(),
        r.hashes.digest(),
        r.snapshot_lines,
        sorted(r.dirty_since_snapshot),
        (r.residue_lines, r.last_hash, r.committed_bytes),
    )


def _definitional(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, ...]:
    """Replay as before decisions 250/251: line-by-line chain checks, pydantic for every
    event, whole-node encodes at each snapshot."""
    with monkeypatch.context() as m:
        m.setattr(jr, "_block_checked", lambda *a: None)
        m.setattr(RP, "_PLAN", {k: (None, *v[1:]) for k, v in RP._PLAN.items()})
        return _outcome(
            lambda: RP._replay(
                path,
                True,
                kw.get("keep_snapshots", False),
                kw.get("until_seq"),
                by_field=False,
            )
        )


def _from_scratch(path: Path) -> list[str]:
    """The state hash of every snapshot, from every node's hash (the definition)."""
    st = FoldState()
    got = []
    for ev in jr.scan(path / JOURNAL_FILE).events:
        validate_data(ev["kind"], ev["data"], seq=ev["seq"], dump=False)
        fold_event(st, ev)
        if ev["kind"] == "snapshot_written":
            digest = state_hash({nid: node_hash(n) for nid, n in st.nodes.items()})
            assert digest == ev["data"]["state_hash"], ev["seq"]
            got.append(digest)
    return got


def _rechain(path: Path, edit: Any) -> None:
    """Rewrite the journal: ``edit(i, event)`` returns the event's body text (or None to
    drop the line); every line is re-hashed over its own ``prev`` so the chain stays intact
    (unless the edit changed a ``prev``)."""
    jpath = path / JOURNAL_FILE
    prev = jr.GENESIS
    out = []
    for i, raw in enumerate(jpath.read_bytes().split(b"\n")[:-1]):
        ev = json.loads(raw)
        ev.pop("hash")
        ev["prev"] = prev
        body = edit(i, ev)
        if body is None:
            continue
        digest = hashlib.sha256((ev["prev"] + body).encode("utf-8")).hexdigest()
        out.append(body[:-1] + ',"hash":"' + digest + '"}\n')
        prev = digest
    jpath.write_text("".join(out), encoding="utf-8")


@pytest.fixture
def varied(tmp_path: Path, clock: Any) -> Path:
    return _varied(tmp_path / "varied", clock)


@pytest.mark.parametrize("keep", [False, True])
def test_fast_replay_equals_the_definitional_path(
    varied: Path, monkeypatch: pytest.MonkeyPatch, keep: bool
) -> None:
    fast = _outcome(lambda: replay(varied, keep_snapshots=keep))
    assert fast[0] == "ok"
    assert fast == _definitional(varied, monkeypatch, keep_snapshots=keep)
    assert fast[2] == len(_from_scratch(varied)) > 10
    assert fast[12] == ["q5"]  # changed after the last snapshot: hashed whole
    assert fast[9]["q5"] == node_hash(json.loads(fast[3])["q5"])
    assert verify(varied).ok


def test_stopping_at_a_seq_equals_the_definitional_path(
    varied: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    last = replay(varied).events
    for until in (1, 2, 7, last // 2, last - 3, last):
        fast = _outcome(lambda u=until: replay(varied, keep_snapshots=True, until_seq=u))
        assert fast == _definitional(varied, monkeypatch, keep_snapshots=True, until_seq=until)


def test_non_canonical_lines_replay_the_same(varied: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _outcome(lambda: replay(varied, keep_snapshots=True))
    _rechain(  # spaces, unsorted keys, ASCII escapes: the chain is over the bytes as written
        varied,
        lambda i, ev: json.dumps(ev, sort_keys=i % 2 == 0) if i % 3 == 0 else jr.canonical(ev),
    )
    after = _outcome(lambda: replay(varied, keep_snapshots=True))
    assert after == _definitional(varied, monkeypatch, keep_snapshots=True)
    assert after[0] == "ok" and after[3] == before[3] and after[11] == before[11]


def _seq_of(path: Path, kind: str, nth: int = 0) -> int:
    seqs = [ev["seq"] for ev in jr.scan(path / JOURNAL_FILE).events if ev["kind"] == kind]
    return seqs[nth]


def _set(kind: str, nth: int, change: Any) -> Any:
    state = {"n": -1}

    def edit(i: int, ev: dict[str, Any]) -> str:
        if ev["kind"] == kind:
            state["n"] += 1
            if state["n"] == nth:
                change(ev)
        return jr.canonical(ev)

    return edit


CORRUPTIONS: dict[str, tuple[Any, str, str]] = {
    # name: (edit, kind of the event it hits, what the message says)
    "snapshot mismatch": (
        _set("snapshot_written", 5, lambda ev: ev["data"].update(state_hash="ab" * 32)),
        "snapshot_written",
        "snapshot state hash does not match the fold",
    ),
    "bad data": (
        _set("fact_attached", 3, lambda ev: ev["data"].update(text=7)),
        "fact_attached",
        "fact_attached data invalid at 'text'",
    ),
    "unknown node": (
        _set("fact_attached", 4, lambda ev: ev.update(node="q999")),
        "fact_attached",
        "unknown node 'q999'",
    ),
    "prev does not chain": (  # a line hashed over another prev than its predecessor's hash
        _set("question_resurfaced", 2, lambda ev: ev.update(prev="1" * 64)),
        "question_resurfaced",
        "prev hash does not chain",
    ),
    "unknown kind": (
        _set("node_answered", 0, lambda ev: ev.update(kind="node_pondered")),
        "node_answered",
        "unknown event kind 'node_pondered'",
    ),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruptions_are_reported_as_before(
    varied: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    edit, kind, words = CORRUPTIONS[name]
    nth = {"snapshot mismatch": 5, "bad data": 3, "unknown node": 4, "unknown kind": 0}.get(name, 2)
    seq = _seq_of(varied, kind, nth)
    _rechain(varied, edit)
    fast = _outcome(lambda: replay(varied))
    assert fast == _definitional(varied, monkeypatch)
    assert fast[0] == "error" and fast[2] == seq and words in fast[1]
    assert "\n" not in fast[1]
    if name != "bad data":  # (data errors name the seq and field, not the file)
        assert fast[1].startswith(f"{varied / JOURNAL_FILE}: ") and f"seq {seq}" in fast[1]
    report = verify(varied)
    assert not report.ok and report.first_bad_seq == seq


def test_a_seq_gap_is_reported_as_before(varied: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _rechain(varied, lambda i, ev: None if i == 40 else jr.canonical(ev))
    fast = _outcome(lambda: replay(varied))
    assert fast == _definitional(varied, monkeypatch)
    assert fast[0] == "error" and fast[2] == 41 and "seq gap or disorder" in fast[1]
    assert fast[1].startswith(str(varied / JOURNAL_FILE))


def test_bit_flips_are_reported_as_before(varied: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jpath = varied / JOURNAL_FILE
    good = jpath.read_bytes()
    rng = random.Random(250)
    errors = 0
    for _ in range(60):
        data = bytearray(good)
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        jpath.write_bytes(bytes(data))
        fast = _outcome(lambda: replay(varied, keep_snapshots=True))
        assert fast == _definitional(varied, monkeypatch, keep_snapshots=True), at
        errors += fast[0] == "error"
    assert errors > 50  # a flip after the last commit marker is residue, not an error


@pytest.mark.parametrize("block", [64, 700, 4096, 1 << 18])
def test_every_block_size_streams_the_same_batches(varied: Path, block: int) -> None:
    jpath = varied / JOURNAL_FILE
    expected = jr.scan(jpath)
    stream = jr.JournalStream(jpath, block=block)
    batches = list(stream.batches())
    assert [ev for b in batches for ev in b] == expected.events
    assert all(b[-1]["kind"] in ("session_committed", "batch_committed") for b in batches)
    assert (stream.committed_bytes, stream.last_hash, stream.last_seq) == (
        expected.committed_bytes,
        expected.last_hash,
        expected.last_seq,
    )


def test_residue_after_the_last_marker_is_counted_not_folded(
    varied: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    jpath = varied / JOURNAL_FILE
    lines = jpath.read_bytes().split(b"\n")[:-1]
    jpath.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][:30])  # an interrupted batch
    fast = _outcome(lambda: replay(varied))
    assert fast == _definitional(varied, monkeypatch)
    assert fast[0] == "ok" and fast[13][0] == 2


def test_wrongly_declared_fields_fall_back_to_the_definitional_path(
    varied: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _outcome(lambda: replay(varied, keep_snapshots=True))
    calls: list[bool] = []
    real = RP._replay

    def spy(*args: Any, by_field: bool) -> Any:
        calls.append(by_field)
        return real(*args, by_field=by_field)

    monkeypatch.setattr(RP, "_replay", spy)
    monkeypatch.setattr(RP, "_PLAN", {k: (*v[:5], frozenset()) for k, v in RP._PLAN.items()})
    assert _outcome(lambda: replay(varied, keep_snapshots=True)) == expected
    assert calls == [True, False]


def test_each_fold_changes_only_its_declared_fields(varied: Path) -> None:
    st = FoldState()
    seen = set()
    for ev in jr.scan(varied / JOURNAL_FILE).events:
        ids = [i for i in touched(ev["kind"], ev["node"], ev["data"]) if i in st.nodes]
        before = {i: copy.deepcopy(st.nodes[i]) for i in ids}
        fold_event(st, ev)
        for i, old in before.items():
            changed = {k for k in st.nodes[i] if st.nodes[i][k] != old.get(k)} | (
                old.keys() - st.nodes[i].keys()
            )
            assert changed <= FOLD_FIELDS[ev["kind"]], (ev["kind"], changed)
            seen.add(ev["kind"])
    assert len(seen) >= 12


@pytest.mark.parametrize("name", sorted(p.parent.name for p in LEDGERS.glob("*/journal.jsonl"))[:4])
def test_shipped_ledgers_replay_the_same(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = LEDGERS / name
    fast = _outcome(lambda: replay(path, keep_snapshots=True))
    assert fast[0] == "ok"
    assert fast == _definitional(path, monkeypatch, keep_snapshots=True)
