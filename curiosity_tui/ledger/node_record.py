"""A node as the fold holds it, and the quantities derived from it, each defined once (S1, S6).

The fold (:mod:`curiosity_tui.ledger.events`) keeps every node as a plain dict; every reader
(render, queue, metrics, audit, screens) takes it as a mapping. What is derived from a node is
defined here and nowhere else:

- live: the status is not one of :data:`NOT_LIVE` (S6);
- pulse = ``len(resurfaced)``; creating a node is not a resurfacing;
- last touch = the latest of ``created`` and the sessions in ``resurfaced``.

Pydantic records that carry a node (``rundata.RunNode``) call these on ``vars(record)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: A node as readers take it: the fold's dict, or the fields of a record holding one.
NodeLike = Mapping[str, Any]

#: Statuses that make a node not live (S6: live = status not in this set).
NOT_LIVE: frozenset[str] = frozenset({"closed", "archived", "merged"})


def is_live(node: NodeLike) -> bool:
    return node["status"] not in NOT_LIVE


def pulse(node: NodeLike) -> int:
    return len(node["resurfaced"])


def last_touch(node: NodeLike) -> int:
    res = node["resurfaced"]
    created: int = node["created"]
    return max(created, res[-1]) if res else created


__all__ = ["NOT_LIVE", "NodeLike", "is_live", "last_touch", "pulse"]
