"""The append-only projection (decisions 175-177): a commit writes what it changed, old-layout
ledgers open and convert, the node table is compacted, and a damaged projection is never
trusted: readers say so and read the journal, the writer rebuilds before it commits."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from ledger_builders import build, run_session

from curiosity_tui.cli import main
from curiosity_tui.errors import CommittedButBehindError, CorruptLedgerError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger import store as st
from curiosity_tui.ledger.ledger import Ledger, replay, verify

REPO = Path(__file__).resolve().parents[1]


def _projection_files(path: Path) -> dict[str, bytes]:
    files = {"ledger.json": (path / "ledger.json").read_bytes()}
    for p in sorted((path / "projection").iterdir()):
        files[f"projection/{p.name}"] = p.read_bytes()
    return files


def test_old_layout_example_opens_verifies_and_converts(tmp_path: Path) -> None:
    src = REPO / "ledgers" / "example-C+cur-pilot02"
    assert "meta" in json.loads((src / "ledger.json").read_bytes())  # format 1 (TinyDB)
    path = tmp_path / "ex"
    shutil.copytree(src, path)
    expected = replay(path)
    ro = Ledger.open(path)
    assert ro.recovered is None
    assert jr.canonical(ro.raw_nodes()) == jr.canonical(expected.state.nodes)
    assert [r.session for r in ro.session_records()] == sorted(expected.state.sessions)
    assert ro.snapshot_index() and ro.rendering(1)
    report = verify(path)
    assert report.ok and "format-1" in report.summary(), report.summary()
    rw = Ledger.open(path, write=True)
    assert rw.recovered == "projection converted to the append-only layout"
    rw.close()
    assert json.loads((path / "ledger.json").read_bytes())["format"] == 2
    report = verify(path)
    assert report.ok and report.note == "", report.summary()
    again = Ledger.open(path)
    assert again.recovered is None
    assert jr.canonical(again.raw_nodes()) == jr.canonical(expected.state.nodes)
    assert [s for s, _, _ in again.snapshot_index()] == [s for s, _, _ in ro.snapshot_index()]


def test_a_commit_appends_and_never_rewrites(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 3, clock=clock)
    written = []
    for t in range(4, 34):
        before = _projection_files(led.path)
        run_session(led, t, focus="q1" if t % 2 else None)
        after = _projection_files(led.path)
        for name, data in before.items():
            if name != "ledger.json":  # every row file only grew: its old bytes are untouched
                assert after[name][: len(data)] == data, name
        written.append(
            sum(len(after[n]) - len(before.get(n, b"")) for n in after if n != "ledger.json")
        )
        written[-1] += len(after["ledger.json"])
    led.close()
    # the bytes one session writes do not grow with the sessions already committed: compare
    # sessions without a focus (a focused q1 gains a fact each time, and a changed node is
    # written whole, so those grow with q1 itself, not with the number of sessions)
    plain = written[::2]  # t = 4, 6, 8, ...
    assert max(plain[-4:]) <= 1.1 * min(plain[:4]) + 300, written
    assert len((tmp_path / "l" / "ledger.json").read_bytes()) < 4000
    assert verify(tmp_path / "l").ok


def test_node_table_is_compacted_into_a_new_generation(
    tmp_path: Path, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(st, "COMPACT_SLACK", 4)
    led = build(tmp_path / "l", 30, clock=clock)
    head = st.read_head(led.path)
    assert head is not None
    name = head.files["nodes"].name
    assert name != "nodes.1.jsonl"  # compacted at least once
    assert head.files["nodes"].rows <= 2 * head.live_nodes + 4
    assert sorted(p.name for p in (led.path / "projection").iterdir() if "nodes" in p.name) == [
        name
    ]
    led.close()
    assert verify(tmp_path / "l").ok
    assert jr.canonical(Ledger.open(tmp_path / "l").raw_nodes()) == jr.canonical(
        replay(tmp_path / "l").state.nodes
    )


def test_reader_reads_nodes_lazily_and_falls_back_to_the_journal(
    tmp_path: Path, clock: Any
) -> None:
    build(tmp_path / "l", 3, clock=clock).close()
    expected = jr.canonical(replay(tmp_path / "l").state.nodes)
    head = st.read_head(tmp_path / "l")
    assert head is not None
    nodes_file = tmp_path / "l" / "projection" / head.files["nodes"].name
    data = bytearray(nodes_file.read_bytes())
    data[40] ^= 0x01
    nodes_file.write_bytes(bytes(data))
    ro = Ledger.open(tmp_path / "l")
    assert ro.recovered is None  # nothing read yet: only the head and the tail were checked
    assert jr.canonical(ro.raw_nodes()) == expected
    assert "projection damaged" in (ro.recovered or "") and "altered" in (ro.recovered or "")
    rw = Ledger.open(tmp_path / "l", write=True)
    assert "projection rebuilt" in (rw.recovered or ""), rw.recovered
    rw.close()
    assert verify(tmp_path / "l").ok


def test_projection_behind_is_a_note_not_a_failure(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 2, clock=clock)
    old = _projection_files(led.path)
    run_session(led, 3, focus="q1")
    led.close()
    (tmp_path / "l" / "ledger.json").write_bytes(old["ledger.json"])  # head as after session 2
    report = verify(tmp_path / "l")
    assert report.ok and "behind" in report.summary() and "next write" in report.summary()
    ro = Ledger.open(tmp_path / "l")
    assert "behind" in (ro.recovered or "") and ro.last_session == 3


def _flip(path: Path, rng: random.Random) -> str:
    files = [path / "ledger.json", *sorted((path / "projection").iterdir())]
    files = [f for f in files if f.stat().st_size > 0]
    target = rng.choice(files)
    data = bytearray(target.read_bytes())
    bit = rng.randrange(len(data) * 8)
    data[bit // 8] ^= 1 << (bit % 8)
    target.write_bytes(bytes(data))
    return f"{target.name} bit {bit}"


def test_sixty_bit_flips_in_the_projection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 12's acceptance: 60 seeded bit flips in the projection files, each followed by
    show, verify and a writer: no traceback, the writer never accepts the damage (it rebuilds
    before committing), and afterwards verify passes. Every 10th writer is ``run --scripted``
    (the others open the ledger for writing and commit a session directly, for speed)."""
    pristine = tmp_path / "pristine"
    assert main(["ledger", "new", str(pristine), "--seed", "Did the printing press matter?"]) == 0
    assert main(["run", str(pristine), "--scripted", "--sessions", "2"]) == 0
    capsys.readouterr()
    rng = random.Random(20261201)
    for i in range(60):
        path = tmp_path / f"f{i}"
        shutil.copytree(pristine, path)
        what = _flip(path, rng)
        rc = main(["ledger", "show", str(path)])
        out, err = capsys.readouterr()
        assert rc == 0 and "Traceback" not in err, what
        assert len(err.strip().splitlines()) <= 1, (what, err)
        rc = main(["verify", str(path)])
        out, err = capsys.readouterr()
        assert rc == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, what
        if i % 10 == 0:
            rc = main(["run", str(path), "--scripted", "--sessions", "3"])
            out, err = capsys.readouterr()
            assert rc == 0 and "projection rebuilt" in err, (what, err)
        else:
            led = Ledger.open(path, write=True)
            assert "projection rebuilt" in (led.recovered or ""), (what, led.recovered)
            run_session(led, led.last_session + 1)
            led.close()
        report = verify(path)
        assert report.ok and report.note == "", (what, report.summary())


def test_projection_write_failure_keeps_the_committed_session(
    tmp_path: Path, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Disk full after the journal's fsync: the session stays committed, the writer says so
    and stops writing the projection, the next open rebuilds it; no temp file is left."""
    led = build(tmp_path / "l", 2, clock=clock)

    def full(*_: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(st.os, "pwrite", full)
    with pytest.raises(CommittedButBehindError, match="session 3 is committed"):
        run_session(led, 3, focus="q1")  # the writer says so in one line and the run stops
    monkeypatch.undo()
    assert led.last_session == 3 and "session 3 is committed" in (led.warning or "")
    run_session(led, 4)  # the same writer may go on: the projection stays behind
    led.close()
    leftovers = [p.name for p in (tmp_path / "l").rglob("*.tmp")]
    assert leftovers == []
    report = verify(tmp_path / "l")
    assert report.ok and "behind" in report.summary(), report.summary()
    rw = Ledger.open(tmp_path / "l", write=True)
    assert rw.last_session == 4 and "projection rebuilt" in (rw.recovered or "")
    rw.close()
    report = verify(tmp_path / "l")
    assert report.ok and report.note == "", report.summary()


def test_checkpoint_holds_only_for_the_exact_commit_line(tmp_path: Path, clock: Any) -> None:
    build(tmp_path / "l", 2, clock=clock).close()
    jpath = tmp_path / "l" / "journal.jsonl"
    head = st.read_head(tmp_path / "l")
    assert head is not None
    seq, digest, offset = head.last_seq, head.last_hash, head.journal_offset
    assert offset == jpath.stat().st_size
    assert jr.checkpoint_holds(jpath, seq, digest, offset)
    assert not jr.checkpoint_holds(jpath, seq - 1, digest, offset)
    assert not jr.checkpoint_holds(jpath, seq, jr.GENESIS, offset)
    assert not jr.checkpoint_holds(jpath, seq, digest, offset - 1)
    assert not jr.checkpoint_holds(jpath, seq, digest, offset + 10)
    # the tail after a checkpoint is chain-checked from there on
    tail = jr.chain_tail(jpath, start_seq=seq + 1, prev_hash=digest, offset=offset)
    assert tail == (seq, digest, offset, 0)
    earlier = json.loads(jpath.read_bytes().splitlines()[5])
    with pytest.raises(CorruptLedgerError, match="seq"):  # a wrong start does not link
        jr.chain_tail(jpath, start_seq=earlier["seq"], prev_hash=digest, offset=0)


def test_a_forged_head_never_names_a_file_outside_the_projection(
    tmp_path: Path, clock: Any
) -> None:
    build(tmp_path / "l", 1, clock=clock).close()
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"keep me\n")
    head = json.loads((tmp_path / "l" / "ledger.json").read_bytes())
    head["files"]["nodes"]["name"] = "../../outside.jsonl"
    body = {k: v for k, v in head.items() if k != "head_hash"}
    head["head_hash"] = st.hashlib.sha256(st.canonical_bytes(body)).hexdigest()
    (tmp_path / "l" / "ledger.json").write_bytes(st.canonical_bytes(head))
    with pytest.raises(st.ProjectionDamaged, match="bad file name"):
        st.read_head(tmp_path / "l")
    led = Ledger.open(tmp_path / "l", write=True)
    assert "projection rebuilt" in (led.recovered or "")
    run_session(led, 2)
    led.close()
    assert outside.read_bytes() == b"keep me\n"
    assert verify(tmp_path / "l").ok
