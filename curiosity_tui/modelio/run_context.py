"""Which run a model call belongs to: a context variable the runner sets around a run.

The client sends it as the ``X-Curiosity-Run`` header beside ``X-Curiosity-Call`` and
``X-Curiosity-Session``, so a server that serves many runs at once (a pilot shares one client)
can tell them apart. The built-in scripted server seeds its replies from it (run + session +
call kind), which is what makes runs of one configuration differ offline.

A context variable rather than a client argument: concurrent runs are asyncio tasks, each with
its own copy of the context, so one shared client sends each task's own run name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

RUN_HEADER = "X-Curiosity-Run"

CURRENT_RUN: ContextVar[str | None] = ContextVar("curiosity_current_run", default=None)


@contextlib.contextmanager
def run_scope(name: str) -> Iterator[None]:
    """Calls made inside belong to run ``name`` (restored on exit)."""
    token = CURRENT_RUN.set(name)
    try:
        yield
    finally:
        CURRENT_RUN.reset(token)


def run_headers() -> dict[str, str]:
    """The run header for the current context; empty outside a run."""
    name = CURRENT_RUN.get()
    return {RUN_HEADER: name} if name else {}
