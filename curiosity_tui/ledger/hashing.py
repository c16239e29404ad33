"""Node and state hashes (S1): the canonical hash of a node, the state hash over all nodes,
the per-node hash index a snapshot digests, and the snapshot deltas. Pure functions over dicts."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from curiosity_tui.ledger import journal as jr


def node_hash(node: dict[str, Any]) -> str:
    return hashlib.sha256(jr.canonical(node).encode("utf-8")).hexdigest()


def state_hash(hashes: dict[str, str]) -> str:
    """sha256 over ``"<id>:<node hash>\n"`` for every node in id order (q1, q2, …)."""
    return HashIndex(hashes).digest()


def _num(node_id: str) -> int:
    return int(node_id[1:])


class HashIndex:
    """Per-node hashes kept as their ``state_hash`` lines, in id order, so a snapshot's state
    hash is one join + one sha256 instead of a sort and a hash update per node."""

    __slots__ = ("_lines", "_max", "_ordered")

    def __init__(self, hashes: dict[str, str] | None = None) -> None:
        self._lines: dict[str, str] = {}
        self._max = 0
        self._ordered = True
        for nid in sorted(hashes or {}, key=_num):
            self.set(nid, (hashes or {})[nid])

    def set(self, nid: str, digest: str) -> None:
        if nid not in self._lines:
            n = _num(nid)
            if n < self._max:
                self._ordered = False
            self._max = max(self._max, n)
        self._lines[nid] = f"{nid}:{digest}\n"

    def copy(self) -> HashIndex:
        other = HashIndex()
        other._lines = dict(self._lines)
        other._max = self._max
        other._ordered = self._ordered
        return other

    def digest(self) -> str:
        self.digest_order()
        return hashlib.sha256("".join(self._lines.values()).encode("utf-8")).hexdigest()

    def as_dict(self) -> dict[str, str]:
        return {k: v[len(k) + 1 : -1] for k, v in self._lines.items()}

    def text(self) -> str:
        """The lines the state hash is taken over (stored in the projection's meta)."""
        self.digest_order()
        return "".join(self._lines.values())

    def digest_order(self) -> None:
        if not self._ordered:
            self._lines = {k: self._lines[k] for k in sorted(self._lines, key=_num)}
            self._ordered = True

    @classmethod
    def from_text(cls, text: str) -> HashIndex:
        index = cls()
        for line in text.splitlines():
            nid, _, digest = line.partition(":")
            index.set(nid, digest)
        return index

    def keys(self) -> frozenset[str]:
        return frozenset(self._lines)


class NodeEncoder:
    """Canonical JSON of nodes for a long in-place fold (replay): a node's facts are
    append-only, so the encoded facts of each node are kept and only new ones encoded. The
    output is byte-identical to ``journal.canonical(node)``."""

    def __init__(self) -> None:
        self._facts: dict[str, tuple[list[Any], int, list[str]]] = {}

    def encode(self, node: dict[str, Any]) -> str:
        enc = jr.canonical
        facts = node["facts"]
        hit = self._facts.get(node["id"])
        if hit is not None and hit[0] is facts and len(facts) >= hit[1]:
            parts = hit[2]
            if len(facts) > hit[1]:  # one encode call for all new facts, brackets dropped
                parts.append(enc(facts[hit[1] :])[1:-1])
        else:
            parts = [enc(facts)[1:-1]] if facts else []
        self._facts[node["id"]] = (facts, len(facts), parts)
        # sorted keys: everything before "facts", the facts, everything after
        before = enc({k: v for k, v in node.items() if k < "facts"})[1:-1]
        after = enc({k: v for k, v in node.items() if k > "facts"})[1:-1]
        fields = [f for f in (before, '"facts":[' + ",".join(parts) + "]", after) if f]
        return "{" + ",".join(fields) + "}"


def snapshot_texts(
    nodes: dict[str, dict[str, Any]], dirty: set[str], index: HashIndex, encoder: NodeEncoder
) -> dict[str, str]:
    """Hash the nodes changed since the last snapshot into ``index``; return their canonical
    JSON (parsed only if a caller needs the dicts)."""
    changed: dict[str, str] = {}
    for nid in sorted(dirty, key=_num):
        text = encoder.encode(nodes[nid])
        index.set(nid, hashlib.sha256(text.encode("utf-8")).hexdigest())
        changed[nid] = text
    return changed


def snapshot_delta(
    nodes: dict[str, dict[str, Any]], dirty: set[str], index: HashIndex
) -> dict[str, dict[str, Any]]:
    """Hash the nodes changed since the last snapshot into ``index`` and return independent
    copies of them (canonical JSON once per node: it gives the hash and, parsed, the copy)."""
    changed: dict[str, dict[str, Any]] = {}
    for nid in sorted(dirty, key=_num):
        text = jr.canonical(nodes[nid])
        index.set(nid, hashlib.sha256(text.encode("utf-8")).hexdigest())
        changed[nid] = json.loads(text)
    return changed
