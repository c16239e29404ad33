"""A full disk while a writer rebuilds the projection leaves no partial generation behind
and names the file; the same command succeeds once there is space (issue 25, item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_storage_faults import disk_full, new_ledger, one_error_line, run


def test_full_disk_during_a_rebuild_leaks_no_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = new_ledger(tmp_path / "r1")
    assert run(path, 2) == 0
    old_head = (path / "ledger.json").read_bytes()
    assert run(path, 3) == 0
    (path / "ledger.json").write_bytes(old_head)  # behind: the next writer rebuilds
    rows = path / "projection"
    before = sorted(p.name for p in rows.iterdir())
    capsys.readouterr()
    for _ in range(3):  # every retry on the full disk
        with disk_full(monkeypatch, lambda p: "/projection/" in p):
            assert run(path, 4) == 5
        line = one_error_line(capsys)
        assert "/projection/" in line and ".jsonl" in line, line
        assert sorted(p.name for p in rows.iterdir()) == before
    assert run(path, 4) == 0
    assert (path / "ledger.json").read_bytes() != old_head
