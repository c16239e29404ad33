"""A derived value computed once per run, not once per metric (issue 26, item 1): the open
lives and the condition returns each feed three or four registry metrics, and every metric
recomputed them from the run's timeline.

:func:`per_run` keeps one value per (run, name) while the run lives (a weak reference: a run
dropped by its caller drops its entries), and recomputes it when the run's timeline, nodes or
sessions were replaced since (a test that sets ``run.timeline = None`` sees the new value).
Values are shared: callers must not mutate them.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from curiosity_tui.analysis.rundata import RunData

__all__ = ["per_run"]

T = TypeVar("T")

_lock = threading.Lock()
#: (id(run), name) -> (weak reference to the run, what the value was computed from, value)
_cache: dict[tuple[int, str], tuple[weakref.ref[RunData], tuple[int, ...], Any]] = {}


def _inputs(run: RunData) -> tuple[int, ...]:
    return (id(run.timeline), id(run.nodes), id(run.sessions), len(run.sessions))


def _drop(key: tuple[int, str]) -> None:
    with _lock:
        _cache.pop(key, None)


def per_run(run: RunData, name: str, compute: Callable[[RunData], T]) -> T:
    """``compute(run)``, computed once for ``run`` under ``name``."""
    key = (id(run), name)
    inputs = _inputs(run)
    with _lock:
        hit = _cache.get(key)
    if hit is not None and hit[0]() is run and hit[1] == inputs:
        return hit[2]  # type: ignore[no-any-return]
    value = compute(run)

    def gone(_ref: weakref.ref[RunData], key: tuple[int, str] = key) -> None:
        _drop(key)

    ref = weakref.ref(run, gone)
    with _lock:
        _cache[key] = (ref, inputs, value)
    return value
