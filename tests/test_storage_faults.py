"""Disk full and read-only folders: one line saying what happened to the change, exit 5,
nothing stored lost, no temp file left behind, and the same command resumes afterwards.

ENOSPC is injected into ``os.write`` for one file (the journal, or the projection's temp
file), which is where a full disk fails; one test also fills a real 96 KB tmpfs mid-run (made
and removed by the test; where it cannot mount, a quota emulated on ``os.write``). A read-only folder is a read-only bind mount when the test can make one (root, mount
available), else a folder without write permission (non-root), else EROFS injected into
``os.open``/``os.mkdir`` for that folder; every mount is made and removed by the test.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.ledger.journal import scan

SEED = "Did the printing press cause the Reformation?"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("curiosity-tui: error: "), err
    return lines[0]


def new_ledger(path: Path, config: str = "B-armed-cur") -> Path:
    Ledger.create(path, RunMeta(name=path.name, seed=SEED, config=config)).close()
    return path


def run(path: Path, sessions: int) -> int:
    return main(["run", str(path), "--sessions", str(sessions), "--scripted"])


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


@contextlib.contextmanager
def disk_full(monkeypatch: pytest.MonkeyPatch, hit: Callable[[str], bool]) -> Iterator[None]:
    """Every ``os.write`` / ``os.pwrite`` to a file whose path satisfies ``hit`` fails with
    ENOSPC (the journal appends with ``write``, the projection's row files with ``pwrite``)."""
    real, real_p = os.write, os.pwrite

    def write(fd: int, data: bytes) -> int:  # type: ignore[override]
        if hit(_fd_path(fd)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    def pwrite(fd: int, data: bytes, offset: int) -> int:  # type: ignore[override]
        if hit(_fd_path(fd)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_p(fd, data, offset)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "pwrite", pwrite)
    try:
        yield
    finally:
        monkeypatch.setattr(os, "write", real)
        monkeypatch.setattr(os, "pwrite", real_p)


def journal_hit(p: str) -> bool:
    return p.endswith("/journal.jsonl")


def projection_hit(p: str) -> bool:
    """The projection's files: ``projection/*`` (format 2) or ``ledger.json`` (format 1)."""
    name = p.rsplit("/", 1)[-1]
    return "/projection/" in p or name.startswith(".ledger.json.") or name == "ledger.json"


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------- disk full


def test_disk_full_at_the_journal_commits_nothing_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], file_bytes
) -> None:
    led = new_ledger(tmp_path / "run")
    assert run(led, 1) == 0
    before = file_bytes(led)
    capsys.readouterr()
    with disk_full(monkeypatch, journal_hit):
        rc = run(led, 2)
    assert rc == 5
    line = one_error_line(capsys)
    assert f"session 2 was not committed: cannot append to {led / 'journal.jsonl'}" in line
    assert "No space left on device" in line and "nothing stored was lost" in line
    assert file_bytes(led) == before  # nothing half-written, nothing lost
    assert temp_files(led) == []
    assert run(led, 2) == 0  # space again: the same command resumes
    assert verify(led).ok
    assert (led / "journal.jsonl").read_bytes().startswith(before["journal.jsonl"])


def test_disk_full_at_the_projection_reports_the_session_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    led = new_ledger(tmp_path / "run")
    assert run(led, 1) == 0
    journal_before = (led / "journal.jsonl").read_bytes()
    capsys.readouterr()
    with disk_full(monkeypatch, projection_hit):
        rc = run(led, 3)
    assert rc == 5
    line = one_error_line(capsys)
    assert f"session 2 is committed to {led / 'journal.jsonl'}" in line
    assert "could not be written: No space left on device" in line
    assert "rebuilt from the journal on the next write" in line
    assert temp_files(led) == []  # the atomic write's temp file is gone
    events = scan(led / "journal.jsonl").events
    assert [e["session"] for e in events if e["kind"] == "session_committed"] == [1, 2]
    assert (led / "journal.jsonl").read_bytes().startswith(journal_before)
    # a reader still opens it (the journal is the source of truth); the next writer rebuilds
    assert main(["ledger", "show", str(led)]) == 0
    capsys.readouterr()
    assert run(led, 3) == 0
    assert "projection rebuilt from the journal" in capsys.readouterr().err
    assert verify(led).ok
    with Ledger.open(led) as opened:
        assert opened.last_session == 3


def test_disk_full_while_adding_a_source_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], file_bytes
) -> None:
    led = new_ledger(tmp_path / "run")
    src = tmp_path / "pamphlet.txt"
    src.write_text("Printing in the Empire, 1517-1520: Wittenberg presses.\n")
    before = file_bytes(led)
    with disk_full(monkeypatch, journal_hit):
        assert main(["sources", "add", str(led), str(src)]) == 5
    assert "the sources batch was not committed" in one_error_line(capsys)
    assert file_bytes(led) == before  # the copied source file was removed again
    with disk_full(monkeypatch, lambda p: "/sources/" in p):
        assert main(["sources", "add", str(led), str(src)]) == 5
    line = one_error_line(capsys)
    assert str(led / "sources") in line and "No space left on device" in line
    assert file_bytes(led) == before and temp_files(led) == []
    assert main(["sources", "add", str(led), str(src)]) == 0
    assert verify(led).ok


# --------------------------------------------------------------------------- read-only folder


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextlib.contextmanager
def read_only(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Make ``folder`` read-only for the duration; yields how it was done."""
    if os.geteuid() == 0 and shutil.which("mount") and _mount("--bind", str(folder), str(folder)):
        try:
            if _mount("-o", "remount,bind,ro", str(folder)):
                yield "read-only bind mount"
                return
        finally:
            subprocess.run(["umount", str(folder)], check=True, capture_output=True)
    if os.geteuid() != 0:
        dirs = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
        for d in dirs:
            d.chmod(0o555)
        try:
            yield "folder without write permission"
        finally:
            for d in dirs:
                d.chmod(0o755)
        return
    yield from _inject_erofs(folder, monkeypatch)


def _inject_erofs(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    real_open, real_mkdir = os.open, os.mkdir
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    inside = str(folder) + os.sep

    def guard(path: object) -> None:
        if os.path.abspath(os.fspath(path)).startswith(inside):  # type: ignore[arg-type]
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))  # type: ignore[arg-type]

    def fake_open(path, flags, *a, **kw):  # type: ignore[no-untyped-def]
        if flags & writing:
            guard(path)
        return real_open(path, flags, *a, **kw)

    def fake_mkdir(path, *a, **kw):  # type: ignore[no-untyped-def]
        guard(path)
        return real_mkdir(path, *a, **kw)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)
    try:
        yield "EROFS injected"
    finally:
        monkeypatch.setattr(os, "open", real_open)
        monkeypatch.setattr(os, "mkdir", real_mkdir)


def test_read_only_folder_refuses_writers_in_one_line_and_readers_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], file_bytes
) -> None:
    folder = tmp_path / "ro"
    led = new_ledger(folder / "run")
    assert run(led, 1) == 0
    src = folder / "pamphlet.txt"
    src.write_text("Printing in the Empire, 1517-1520.\n")
    before = file_bytes(folder)
    capsys.readouterr()
    with read_only(folder, monkeypatch) as how:
        assert run(led, 2) == 5, how
        line = one_error_line(capsys)
        assert str(led) in line and ("Read-only" in line or "Permission denied" in line), line
        assert main(["ledger", "new", str(folder / "second"), "--seed", SEED]) == 5
        line = one_error_line(capsys)
        assert str(folder / "second") in line, line
        assert main(["sources", "add", str(led), str(src)]) == 5
        assert str(led) in one_error_line(capsys)
        # readers need no write access
        assert main(["ledger", "show", str(led)]) == 0
        assert main(["verify", str(led)]) == 0
        assert main(["ledger", "render", str(led)]) == 0
        capsys.readouterr()
    after = file_bytes(folder)
    assert after == before  # nothing changed, nothing lost
    assert run(led, 2) == 0  # writable again: resumes
    assert verify(led).ok


# --------------------------------------------------------------------------- a disk that fills up


class SmallDisk:
    """A folder on a small disk: a real tmpfs of ``size`` bytes when the test can mount one,
    else a quota emulated on ``os.write`` (ENOSPC once the folder would exceed ``size``).
    ``grow()`` makes room (tmpfs remounted larger, or the quota lifted)."""

    def __init__(self, folder: Path, size: int, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder, self.size, self.mp = folder, size, monkeypatch
        folder.mkdir()
        self.mounted = (
            os.geteuid() == 0
            and shutil.which("mount") is not None
            and _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
        )
        if not self.mounted:
            self._emulate()

    def _emulate(self) -> None:
        real, inside = os.write, str(self.folder) + os.sep

        def used() -> int:
            return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())

        def write(fd: int, data: bytes) -> int:  # type: ignore[override]
            if _fd_path(fd).startswith(inside) and used() + len(data) > self.size:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd, data)

        self.mp.setattr(os, "write", write)

    def grow(self) -> None:
        if self.mounted:
            assert _mount("-o", "remount,size=16m", str(self.folder))
        else:
            self.size = 1 << 30

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.folder)], check=True, capture_output=True)


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SmallDisk]:
    disk = SmallDisk(tmp_path / "disk", 96 * 1024, monkeypatch)
    try:
        yield disk
    finally:
        disk.close()


def test_a_disk_that_fills_up_mid_run(
    small_disk: SmallDisk, capsys: pytest.CaptureFixture[str]
) -> None:
    led = small_disk.folder / "run"
    assert main(["ledger", "new", str(led), "--seed", SEED, "--config", "B-armed-cur"]) == 0
    capsys.readouterr()
    assert run(led, 60) == 5  # the disk fills up long before 60 sessions
    line = one_error_line(capsys)
    assert "No space left on device" in line
    assert "was not committed" in line or "is committed to" in line
    assert temp_files(led) == []
    journal_then = (led / "journal.jsonl").read_bytes()
    committed = [
        e["session"] for e in scan(led / "journal.jsonl").events if e["kind"] == "session_committed"
    ]
    assert committed == list(range(1, len(committed) + 1)) and committed
    if "is committed to" in line:  # the session named in the line is in the journal
        assert f"session {committed[-1]} is committed" in line
    small_disk.grow()
    capsys.readouterr()
    assert run(led, committed[-1] + 2) == 0  # room again: the same command resumes
    assert verify(led).ok
    assert (led / "journal.jsonl").read_bytes().startswith(journal_then)


def test_a_rating_on_a_read_only_or_full_pack_is_one_error_and_the_file_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curiosity_tui.errors import StorageError
    from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
    from curiosity_tui.packs.build import build_pack
    from curiosity_tui.packs.rating import RatingSession
    from curiosity_tui.packs.schemes import load_scheme

    folder = tmp_path / "packs"
    pack = folder / "pack"
    build_pack(hand_made_materials(n_per_config=1), load_scheme("pilot-01"), pack, seed=1)
    s = RatingSession(pack, "alice")
    answers = {
        "q1": {"category": "built", "grounds": "g"},
        "q2": {"category": "some", "grounds": "g"},
    }
    s.save(s.order[0], answers)
    kept = s.path.read_bytes()
    with (
        disk_full(monkeypatch, lambda p: "/ratings/" in p),
        pytest.raises(
            StorageError, match=r"alice\.jsonl: the rating of item .* was not saved: No space"
        ),
    ):
        s.save(s.order[1], answers)
    assert s.path.read_bytes() == kept and temp_files(pack) == []
    with read_only(folder, monkeypatch), pytest.raises(StorageError, match="was not saved"):
        RatingSession(pack, "alice").save(s.order[1], answers)
    assert s.path.read_bytes() == kept
    RatingSession(pack, "alice").save(s.order[1], answers)  # writable again
    assert len(RatingSession(pack, "alice").latest()) == 2
