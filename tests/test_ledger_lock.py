"""One writer per ledger: a second writer fails fast naming the holder; the first is unaffected.
Readers never need the lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ledger_builders import build

from curiosity_tui.errors import LedgerLockedError
from curiosity_tui.ledger.ledger import Ledger

HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from curiosity_tui.ledger.ledger import Ledger
    from ledger_builders import run_session

    led = Ledger.open(Path(sys.argv[1]), write=True)
    print("holding", flush=True)
    sys.stdin.readline()  # wait until the parent has tried to take the lock
    t = led.last_session + 1
    run_session(led, t, focus="q1")
    led.close()
    print("committed", t, flush=True)
    """
)


def test_second_writer_fails_fast_naming_the_holder(
    tmp_path: Path, clock: Any, subprocess_env: dict[str, str]
) -> None:
    path = tmp_path / "l"
    build(path, 1, clock=clock).close()
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    env = dict(subprocess_env)
    env["PYTHONPATH"] = str(Path(__file__).parent) + os.pathsep + env["PYTHONPATH"]
    proc = subprocess.Popen(
        [sys.executable, str(script), str(path)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "holding"
        with pytest.raises(LedgerLockedError) as info:
            Ledger.open(path, write=True)
        msg = str(info.value)
        assert f"pid {proc.pid}" in msg and str(path) in msg
        # the CLI's exit code for a locked ledger
        assert info.value.exit_code != 0
        # a reader is not blocked
        assert Ledger.open(path).last_session == 1
        proc.stdin.write("go\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert "committed 2" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    led = Ledger.open(path, write=True)  # released on close
    assert led.last_session == 2
    assert led.verify().ok
    led.close()


def test_lock_within_one_process(tmp_path: Path, clock: Any) -> None:
    led = build(tmp_path / "l", 1, clock=clock)
    with pytest.raises(LedgerLockedError, match="locked for writing by pid"):
        Ledger.open(tmp_path / "l", write=True)
    led.close()
    Ledger.open(tmp_path / "l", write=True).close()


def test_a_lock_taken_in_this_process_names_the_thread(tmp_path: Path, clock: Any) -> None:
    import threading

    path = tmp_path / "l"
    build(path, 1, clock=clock).close()
    held = threading.Event()
    done = threading.Event()

    def writer() -> None:
        with Ledger.open(path, write=True):
            held.set()
            done.wait(10)

    t = threading.Thread(target=writer, name="run-worker", daemon=True)
    t.start()
    try:
        assert held.wait(10)
        with pytest.raises(LedgerLockedError, match=r"by pid \d+ .*thread run-worker\)"):
            Ledger.open(path, write=True)
    finally:
        done.set()
        t.join(30)
    assert not t.is_alive()
    Ledger.open(path, write=True).close()


def test_an_empty_lock_file_in_transition_is_waited_for(tmp_path: Path, clock: Any) -> None:
    """A writer between its flock and writing its name leaves the file empty for an instant: a
    second writer waits for it to settle instead of refusing at once with no name; once the
    first lets go, the second gets the lock."""
    import fcntl
    import threading

    path = tmp_path / "l"
    build(path, 1, clock=clock).close()
    fd = os.open(path / "writer.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # held, name not written: the transition window
    os.ftruncate(fd, 0)
    timer = threading.Timer(0.05, lambda: (fcntl.flock(fd, fcntl.LOCK_UN), os.close(fd)))
    timer.daemon = True
    timer.start()
    try:
        led = Ledger.open(path, write=True)
    finally:
        timer.join(30)
    assert led.last_session == 1
    led.close()
