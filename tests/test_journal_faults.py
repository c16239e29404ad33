"""Bad journals: truncated line, altered byte, seq gap, unknown kind, unknown node. Each is an
error naming the seq — from open (read-only and for writing) and from verify — and nothing
is written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ledger_builders import build

from curiosity_tui.errors import CorruptLedgerError, StorageError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.events import FactAttached
from curiosity_tui.ledger.ledger import Ledger, verify

Damage = Callable[[list[bytes]], list[bytes]]


def _rechain(lines: list[bytes], start: int) -> list[bytes]:
    """Recompute prev/hash from line ``start`` on, so only the semantic fault remains."""
    out = lines[:start]
    prev = json.loads(out[-1])["hash"] if out else jr.GENESIS
    for raw in lines[start:]:
        ev = json.loads(raw)
        ev.pop("hash")
        ev["prev"] = prev
        line, prev = jr.encode_event(ev)
        out.append(line.rstrip(b"\n"))
    return out


def _index_of(lines: list[bytes], kind: str, nth: int = 0) -> int:
    hits = [i for i, raw in enumerate(lines) if json.loads(raw)["kind"] == kind]
    return hits[nth]


def truncate_middle(lines: list[bytes]) -> tuple[list[bytes], int]:
    i = len(lines) // 2
    lines[i] = lines[i][: len(lines[i]) // 2]
    return lines, i + 1


def flip_byte(lines: list[bytes]) -> tuple[list[bytes], int]:
    i = _index_of(lines, "fact_attached", 1)
    raw = bytearray(lines[i])
    pos = raw.index(b"fact from session") + 5
    raw[pos] = ord("F")
    lines[i] = bytes(raw)
    return lines, i + 1


def delete_line(lines: list[bytes]) -> tuple[list[bytes], int]:
    i = _index_of(lines, "question_resurfaced", 0)
    del lines[i]
    return lines, i + 1  # the seq that is now missing


def unknown_kind(lines: list[bytes]) -> tuple[list[bytes], int]:
    i = _index_of(lines, "fact_attached", 1)
    ev = json.loads(lines[i])
    ev["kind"] = "bogus"
    lines[i] = json.dumps(ev).encode()
    return _rechain(lines, i), i + 1


def unknown_node(lines: list[bytes]) -> tuple[list[bytes], int]:
    i = _index_of(lines, "fact_attached", 1)
    ev = json.loads(lines[i])
    ev["node"] = "q99"
    lines[i] = json.dumps(ev).encode()
    return _rechain(lines, i), i + 1


def bogus_last_batch(lines: list[bytes]) -> tuple[list[bytes], int]:
    """A well-formed, correctly chained batch of kind "bogus" appended after the last commit:
    the projection is behind, the rebuild folds it and must stop at its seq."""
    last = json.loads(lines[-1])
    seq = last["seq"] + 1
    body = {
        "seq": seq,
        "ts": "2026-01-01T00:00:00Z",
        "session": 9,
        "kind": "bogus",
        "node": None,
        "actor": "system",
        "data": {},
        "prev": last["hash"],
    }
    line, digest = jr.encode_event(body)
    marker = dict(body, seq=seq + 1, kind="batch_committed", data={"label": ""}, prev=digest)
    line2, _ = jr.encode_event(marker)
    return [*lines, line.rstrip(b"\n"), line2.rstrip(b"\n")], seq


FAULTS = {
    "truncated line": truncate_middle,
    "hash mismatch": flip_byte,
    "seq gap": delete_line,
    "unknown kind": unknown_kind,
    "unknown node": unknown_node,
    "bogus last batch": bogus_last_batch,
}


@pytest.fixture
def damaged(tmp_path: Path, clock: Any, request: pytest.FixtureRequest) -> tuple[Path, int, str]:
    led = build(tmp_path / "l", 4, clock=clock)
    led.close()
    jpath = tmp_path / "l" / "journal.jsonl"
    lines = jpath.read_bytes().split(b"\n")[:-1]
    new, bad_seq = FAULTS[request.param](lines)
    jpath.write_bytes(b"\n".join(new) + b"\n")
    return tmp_path / "l", bad_seq, request.param


@pytest.mark.parametrize("damaged", list(FAULTS), indirect=True)
def test_fault_named_by_seq_and_nothing_written(
    damaged: tuple[Path, int, str], file_bytes: Callable[[Path], dict[str, bytes]]
) -> None:
    path, bad_seq, fault = damaged
    before = file_bytes(path)
    for write in (False, True):
        if not write and fault == "hash mismatch":
            # a reader checks the chain after the projection's checkpoint only: an altered
            # byte before it (same length) is verify's to find, and the writer's
            with Ledger.open(path) as led:
                assert led.recovered is None
            continue
        with pytest.raises(CorruptLedgerError) as info:
            Ledger.open(path, write=write)
        assert info.value.seq == bad_seq, str(info.value)
        assert f"seq {bad_seq}" in str(info.value)
        assert "journal.jsonl" in str(info.value)
        assert file_bytes(path) == before
    report = verify(path)
    assert not report.ok
    assert report.first_bad_seq == bad_seq
    assert f"seq {bad_seq}" in report.summary()
    assert file_bytes(path) == before
    # the lock was released by the failed open: a good writer could take it now
    from curiosity_tui.ledger.store import WriterLock

    lock = WriterLock(path)
    lock.acquire()
    lock.release()


def test_trailing_batch_without_marker_is_cut_off(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 2, clock=clock)
    nodes = jr.canonical(led.raw_nodes())
    led.close()
    jpath = tmp_path / "l" / "journal.jsonl"
    good = jpath.read_bytes()
    last = json.loads(good.splitlines()[-1])
    body = {
        "seq": last["seq"] + 1,
        "ts": "t",
        "session": 3,
        "kind": "fact_attached",
        "node": "q1",
        "actor": "model",
        "data": {"text": "uncommitted", "source": None},
        "prev": last["hash"],
    }
    line, _ = jr.encode_event(body)
    jpath.write_bytes(good + line + b'{"seq":')  # a whole line and a fragment, no marker
    ro = Ledger.open(tmp_path / "l")
    assert ro.recovered == f"ignoring 2 uncommitted line(s) after seq {last['seq']}"
    assert jr.canonical(ro.raw_nodes()) == nodes
    assert verify(tmp_path / "l").ok
    assert jpath.read_bytes() != good  # a reader never writes
    rw = Ledger.open(tmp_path / "l", write=True)
    assert rw.recovered == f"cut off 2 line(s) of an interrupted batch after seq {last['seq']}"
    rw.close()
    assert jpath.read_bytes() == good


def test_projection_from_another_journal_is_read_around_then_rebuilt(
    tmp_path: Path, clock: Any
) -> None:
    a = build(tmp_path / "a", 2, clock=clock)
    expected = jr.canonical(a.raw_nodes())
    b = build(tmp_path / "b", 2, clock=lambda: "2030-01-01T00:00:00Z")
    a.close()
    b.close()
    (tmp_path / "a" / "ledger.json").write_bytes((tmp_path / "b" / "ledger.json").read_bytes())
    ro = Ledger.open(tmp_path / "a")  # says so and reads the journal instead
    assert "does not match the journal" in (ro.recovered or ""), ro.recovered
    assert jr.canonical(ro.raw_nodes()) == expected
    assert not verify(tmp_path / "a").ok
    rw = Ledger.open(tmp_path / "a", write=True)  # rebuilds before it commits anything
    assert "projection rebuilt" in (rw.recovered or ""), rw.recovered
    rw.close()
    assert verify(tmp_path / "a").ok


@pytest.mark.parametrize("garbage", [b"{not json", b"[]", b"\x00" * 64, b"\xff\xfe\x81x", b"{}"])
def test_garbage_projection_is_one_line_and_rebuilt(
    tmp_path: Path, clock: Any, garbage: bytes
) -> None:
    build(tmp_path / "a", 1, clock=clock).close()
    (tmp_path / "a" / "ledger.json").write_bytes(garbage)
    ro = Ledger.open(tmp_path / "a")
    assert "projection damaged" in (ro.recovered or "") and "ledger.json" in (ro.recovered or "")
    assert "\n" not in (ro.recovered or "")
    report = verify(tmp_path / "a")
    assert not report.ok and "\n" not in report.summary()
    Ledger.open(tmp_path / "a", write=True).close()
    assert verify(tmp_path / "a").ok


def test_failed_write_leaves_no_prefix(
    tmp_path: Path, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails part-way (disk full) is cut back, so the next batch appends cleanly."""
    import os as _os

    led = build(tmp_path / "l", 1, clock=clock)
    jpath = tmp_path / "l" / "journal.jsonl"
    good = jpath.read_bytes()
    real_write = _os.write
    calls = {"n": 0}

    def flaky(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jr.os, "write", flaky)
    # one line saying the batch did not reach the journal (the OSError is its cause)
    with (
        pytest.raises(StorageError, match="session 2 was not committed") as info,
        led.batch(2) as b,
    ):
        b.emit(FactAttached(text="lost"), node="q1", actor="model")
    assert isinstance(info.value.__cause__, OSError)
    monkeypatch.setattr(jr.os, "write", real_write)
    assert jpath.read_bytes() == good
    with led.batch(2) as b:
        b.emit(FactAttached(text="kept"), node="q1", actor="model")
    led.close()
    assert verify(tmp_path / "l").ok
    assert Ledger.open(tmp_path / "l").node("q1")["facts"][-1]["text"] == "kept"
