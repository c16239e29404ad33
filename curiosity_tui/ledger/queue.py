"""Pulse, decayed priority, the queue and decay (S1).

- pulse = len(resurfaced); creating a node is not a resurfacing.
- decayed priority at session t = sum over s in resurfaced of exp(-(t - s) / tau), tau = 3.
- the automatic queue orders *open* nodes by decayed priority (desc); ties: later ``created``
  first, then lower id. A set ``curator_priority`` (1 = first) orders before all others.
- decay after session t: an open node whose last touch (latest of created and resurfaced)
  is 3 or more sessions back becomes dormant. No floor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from curiosity_tui.ledger.node_record import NodeRecord, last_touch

TAU = 3.0
DORMANCY_AFTER = 3


def decayed_priority(node: NodeRecord, t: int, tau: float = TAU) -> float:
    return sum(math.exp(-(t - s) / tau) for s in node["resurfaced"])


def _num(node_id: str) -> int:
    return int(node_id[1:]) if node_id[1:].isdigit() else 0


def queue_key(node: NodeRecord, t: int, *, use_curator: bool = True) -> tuple[Any, ...]:
    cp = node.get("curator_priority") if use_curator else None
    return (
        0 if cp is not None else 1,
        cp if cp is not None else 0,
        -decayed_priority(node, t),
        -node["created"],
        _num(node["id"]),
    )


def queue(nodes: Iterable[NodeRecord], t: int, *, use_curator: bool = True) -> list[NodeRecord]:
    """Open nodes in queue order for session ``t``."""
    live = [n for n in nodes if n["status"] == "open"]
    return sorted(live, key=lambda n: queue_key(n, t, use_curator=use_curator))


def select_focus(
    nodes: Iterable[NodeRecord],
    t: int,
    *,
    use_curator: bool = True,
    previous_focus: str | None = None,
    no_reselect: bool = False,
) -> str | None:
    """The forced focus for session ``t``: the head of the queue; with ``no_reselect`` the
    previous session's focus is skipped when any other open node exists."""
    order = queue(nodes, t, use_curator=use_curator)
    if not order:
        return None
    if no_reselect and previous_focus is not None:
        for n in order:
            if n["id"] != previous_focus:
                return str(n["id"])
    return str(order[0]["id"])


def decay_candidates(nodes: Iterable[NodeRecord], t: int) -> list[str]:
    """Ids of open nodes that decay to dormant after session ``t``."""
    out = [n["id"] for n in nodes if n["status"] == "open" and t - last_touch(n) >= DORMANCY_AFTER]
    return sorted(out, key=_num)
