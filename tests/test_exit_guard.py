"""A pytest run exits after its last test even when a failed test left a thread blocked for ever
(issue 25 item 11; the guard is tests/exit_guard.py, decision 321).

Each case runs a tiny test file in a child pytest whose only plugin of ours is the guard, with a
short grace, and asserts on how and when the child ends.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
GRACE_S = 3
#: the issue's bound: the process ends within 60 s of its last test (plus start-up on a loaded
#: machine)
BOUND_S = 60 + 30

STUCK = """
import threading
from concurrent.futures import ThreadPoolExecutor

def _stuck(passing, how):
    never = threading.Event()
    if how == "thread":
        t = threading.Thread(target=never.wait, name="stuck-on-event")  # not a daemon
        t.start()
        t.join(0.2)  # times out: the thread is still waiting
    else:  # an executor's worker (as a Textual thread worker runs): joined at exit
        ThreadPoolExecutor(1, thread_name_prefix="stuck-in-executor").submit(never.wait)
    if not passing:
        threading.Event().wait()  # pytest-timeout (signal method) fails the test here

def test_stuck():
    _stuck(passing={passing}, how={how!r})
"""


def _child(
    tmp_path: Path, *, passing: bool, guard: bool, timeout: float, how: str = "thread"
) -> tuple[int, str, float]:
    test = tmp_path / "test_stuck.py"
    test.write_text(STUCK.format(passing=passing, how=how), encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    argv += ["--rootdir", str(tmp_path), "-o", "timeout_method=signal", "--timeout", "2"]
    if guard:
        argv += ["-p", "exit_guard"]
    env = {"PYTHONPATH": str(TESTS), "CURIOSITY_TEST_EXIT_GRACE_S": str(GRACE_S)}
    env["PATH"] = "/usr/bin:/bin"
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [*argv, str(test)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate(timeout=30)
        return -1, out, time.monotonic() - t0
    return proc.returncode, out, time.monotonic() - t0


@pytest.mark.parametrize(
    ("how", "name"), [("thread", "stuck-on-event"), ("executor", "stuck-in-executor_0")]
)
def test_a_test_failed_by_timeout_with_a_thread_stuck_still_lets_pytest_exit(
    tmp_path: Path, how: str, name: str
) -> None:
    code, out, took = _child(tmp_path, passing=False, guard=True, timeout=BOUND_S + 30, how=how)
    assert code == 1, out
    assert took < BOUND_S, f"took {took:.0f} s"
    assert "1 failed" in out and "Timeout" in out
    assert f"still waiting for non-daemon thread(s) {name}; exiting with status 1" in out


def test_a_passing_run_that_leaks_a_stuck_thread_exits_failing(tmp_path: Path) -> None:
    code, out, took = _child(tmp_path, passing=True, guard=True, timeout=BOUND_S + 30)
    assert "1 passed" in out
    assert code == 1 and "stuck-on-event" in out, out
    assert took < BOUND_S, f"took {took:.0f} s"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["thread", "executor"])
def test_without_the_guard_the_same_run_never_exits(tmp_path: Path, how: str) -> None:
    """The cases above are real hangs: without the guard the child is still running well
    after the guard would have ended it."""
    code, out, _ = _child(tmp_path, passing=False, guard=False, timeout=GRACE_S + 20, how=how)
    assert code == -1, out  # killed by us, not exited
    assert "1 failed" in out


def test_the_project_conftest_installs_the_guard(pytestconfig: pytest.Config) -> None:
    """This very run has the guard's hooks registered (through tests/conftest.py)."""
    hook = pytestconfig.pluginmanager.hook
    for name in ("pytest_unconfigure", "pytest_sessionfinish"):
        impls = getattr(hook, name).get_hookimpls()
        assert any(
            i.function.__module__ == "exit_guard" and i.function.__name__ == name for i in impls
        ), name
