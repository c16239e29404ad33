"""No cyclic garbage collection while a large, acyclic structure is built (decision 275).

Parsing a 10,000-node ledger makes a few hundred thousand dicts and lists at once. Each 700
allocations start a young collection and every so often a full one, which walks every object
the process holds (the app's widgets, the parsed nodes so far): in a running app that
tripled the time to read the node table. The objects made here hold no cycles (JSON rows),
so nothing is lost by not looking for cycles while they are made; reference counting frees
them as before. Collection resumes when the outermost block ends (threads share one
counter, so a block ending in one thread never re-enables collection inside another's).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
