"""A writer refuses to append to a journal that changed under it (round 3: with writer.lock
removed under a running writer, a second process opened the ledger, and both appended batches
with the same seqs to one journal). Nothing is written, and the ledger stays verifiable."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.events import StatusChanged
from curiosity_tui.ledger.journal import JournalMovedError


def test_a_journal_grown_by_another_writer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "L"
    Ledger.create(path, RunMeta(name="L", seed="Why?", config="C-cur")).close()
    first = Ledger.open(path, write=True)
    try:
        (path / "writer.lock").unlink()  # an operator's rm under a running writer
        # the lock file is new, so the second writer gets in
        with (
            Ledger.open(path, write=True) as second,
            second.batch(0, marker="batch_committed") as b,
        ):
            b.emit(StatusChanged(to="archived", reason="second writer"), node="q1", actor="human:b")
        size = (path / "journal.jsonl").stat().st_size
        moved = pytest.raises(JournalMovedError, match="another process wrote to it")
        with moved, first.batch(0, marker="batch_committed") as b:
            b.emit(StatusChanged(to="dormant", reason="first writer"), node="q1", actor="human:a")
        assert (path / "journal.jsonl").stat().st_size == size  # nothing appended
    finally:
        first.close()
    assert verify(path).ok
    with Ledger.open(path) as led:
        assert led.node("q1")["status"] == "archived"
