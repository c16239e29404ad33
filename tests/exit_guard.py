"""A pytest run ends within a deadline of its last test, whatever threads a test left behind.

Python waits at exit for every non-daemon thread. A test that starts one, fails before the
thread finishes (a ``join(timeout)`` that timed out, an assertion) and leaves it blocked on an
event or a future that nobody will ever set keeps pytest from exiting after the summary is
printed: CI waits for ever (issue 25 item 11).

After the run (``pytest_unconfigure``), a daemon watchdog thread starts and waits for the
interpreter's exit to begin: the main thread is in ``threading._shutdown`` (joining an
executor's workers or the non-daemon threads) or has stopped. On a clean exit the interpreter
ends and takes the watchdog with it. If the interpreter is still waiting for a thread
``CURIOSITY_TEST_EXIT_GRACE_S`` seconds later (default 30), the watchdog prints one line naming
the threads still running and ends the process with the run's exit status, or 1 when the run
itself passed (a leaked thread is a defect of the suite). A program that calls
``pytest.main()`` and carries on is never stopped: its main thread is still running. Decision
321.

``tests/conftest.py`` installs these hooks; a subprocess run can load this module with
``-p exit_guard``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path

import pytest

GRACE_ENV = "CURIOSITY_TEST_EXIT_GRACE_S"
DEFAULT_GRACE_S = 30.0
#: the run's exit status, recorded when the session finishes
_status: list[int] = []


def grace_s() -> float:
    """The seconds the interpreter gets to finish its threads after the run."""
    raw = os.environ.get(GRACE_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_GRACE_S
    except ValueError:
        return DEFAULT_GRACE_S
    return value if 0 < value <= 600 else DEFAULT_GRACE_S


def stuck_threads() -> list[threading.Thread]:
    """Non-daemon threads other than the main one that are still alive."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def exiting(main: threading.Thread) -> bool:
    """Has the interpreter's exit begun? The main thread has stopped, or runs nothing but
    ``threading._shutdown`` (which joins executor workers, then every non-daemon thread)."""
    if not main.is_alive() or main.ident is None:
        return True
    frame = sys._current_frames().get(main.ident)  # documented in sys, despite the underscore
    if frame is None:
        return True
    while frame.f_back is not None:
        frame = frame.f_back
    code = frame.f_code
    return code.co_name == "_shutdown" and Path(code.co_filename) == Path(threading.__file__)


def _watch(deadline_s: float, status: int) -> None:
    main = threading.main_thread()
    while not exiting(main):
        time.sleep(0.2)
    time.sleep(deadline_s)
    names = ", ".join(sorted(t.name for t in stuck_threads())) or "none named"
    code = status if status != 0 else 1
    line = (
        f"pytest: {deadline_s:g} s after the run, still waiting for non-daemon thread(s) "
        f"{names}; exiting with status {code}\n"
    )
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    try:
        os.write(2, line.encode("utf-8", "replace"))
    finally:
        os._exit(code)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _status[:] = [int(exitstatus)]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    status = _status[0] if _status else 1
    threading.Thread(
        target=_watch, args=(grace_s(), status), name="exit-guard", daemon=True
    ).start()
