"""A writer's canonical node texts across its batches (issue 14: a commit costs what it
changes, decision 245).

A node's ``facts``, ``checks`` and ``preserved`` lists are append-only: once an item is
appended it is never changed, and copy-on-write (``batch._copy_node``) shares the items
between the committed node and a batch's copy. Their canonical JSON is therefore kept per
node and list, and a later encoding of the same node re-encodes only the items appended since,
plus the node's small fields. Without this, a commit re-encodes every changed node whole, and
the nodes a long investigation keeps coming back to grow with every session.

The cache never trusts itself: an entry is used only while every item it encoded is still
*the same object* at the same position (identity, not equality), so a list that was replaced,
shortened, reordered or rebuilt (an aborted batch, a reopened ledger) is encoded afresh. The
output is byte-identical to ``journal.canonical(node)`` (tests/test_node_text.py).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from curiosity_tui.ledger import journal as jr

#: the node lists whose items never change once appended (copy-on-write shares them too)
GROWING = ("checks", "facts", "preserved")  # sorted, as canonical JSON orders keys
#: lists shorter than this are encoded whole and not kept (memory goes to the big nodes)
MIN_KEPT = 8


class NodeTexts:
    """``text(node)`` == ``journal.canonical(node)``, re-encoding only appended list items."""

    __slots__ = ("_lists",)

    def __init__(self) -> None:
        # (node id, list key) -> (the items encoded, in order; their canonical JSON)
        self._lists: dict[tuple[str, str], tuple[list[Any], str]] = {}

    def text(self, node: Mapping[str, Any]) -> str:
        nid = node.get("id")
        grow = [k for k in GROWING if type(node.get(k)) is list and len(node[k]) >= MIN_KEPT]
        if not grow or type(nid) is not str:
            return jr.canonical(node)
        groups: list[dict[str, Any]] = [{} for _ in range(len(grow) + 1)]
        for k, v in node.items():  # the fields between growing lists, in key ranges
            at = 0
            while at < len(grow) and k >= grow[at]:
                at += 1
            if at == 0 or k != grow[at - 1]:
                groups[at][k] = v
        fields = [jr.canonical(groups[0])[1:-1]] if groups[0] else []
        for at, key in enumerate(grow):
            fields.append(f'"{key}":' + self._list_text(nid, key, node[key]))
            if groups[at + 1]:
                fields.append(jr.canonical(groups[at + 1])[1:-1])
        return "{" + ",".join(fields) + "}"

    def _list_text(self, nid: str, key: str, items: list[Any]) -> str:
        hit = self._lists.get((nid, key))
        text: str | None = None
        if hit is not None:
            old, old_text = hit
            n = len(old)
            if len(items) >= n and all(map(operator.is_, old, items)):
                if len(items) == n:
                    return old_text
                tail = jr.canonical(items[n:])[1:-1]
                text = old_text[:-1] + ("," if n else "") + tail + "]"
        if text is None:
            text = jr.canonical(items)
        self._lists[(nid, key)] = (list(items), text)
        return text
