"""Node and state hashes (S1): the canonical hash of a node, the state hash over all nodes,
the per-node hash index a snapshot digests, and the snapshot deltas. Pure functions over dicts."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.fieldtext import ALL_FIELDS, FieldTexts, encode_items
from curiosity_tui.ledger.node_record import NodeRecord


def node_hash(node: Mapping[str, Any]) -> str:
    return hashlib.sha256(jr.canonical(node).encode("utf-8")).hexdigest()


def state_hash(hashes: dict[str, str]) -> str:
    """sha256 over ``"<id>:<node hash>\n"`` for every node in id order (q1, q2, …)."""
    return HashIndex(hashes).digest()


def _num(node_id: str) -> int:
    return int(node_id[1:])


class HashIndex:
    """Per-node hashes kept as their ``state_hash`` lines, in id order, in one byte buffer:
    changing a node's hash overwrites its 64 hex digits in place and a new node (ids only
    grow) is appended, so a snapshot's state hash is a single sha256 over the buffer, with no
    sort, join or per-node work (decision 177)."""

    __slots__ = ("_buf", "_digest", "_max", "_ordered", "_pos")

    def __init__(self, hashes: dict[str, str] | None = None) -> None:
        self._buf = bytearray()
        self._pos: dict[str, int] = {}  # node id -> offset of its digest in _buf
        self._max = 0
        self._ordered = True
        self._digest: str | None = None  # of _buf, until the next set (decision 215)
        if hashes:
            self._fill(sorted(hashes.items(), key=lambda kv: _num(kv[0])))

    def _fill(self, pairs: list[tuple[str, str]]) -> None:
        lines = [f"{nid}:{digest}\n" for nid, digest in pairs]
        self._buf = bytearray("".join(lines).encode("utf-8"))
        pos: dict[str, int] = {}
        at = 0
        for (nid, _), line in zip(pairs, lines, strict=True):
            pos[nid] = at + len(nid) + 1
            at += len(line)
        self._pos = pos
        self._max = _num(pairs[-1][0]) if pairs else 0
        self._ordered = True
        self._digest = None

    def set(self, nid: str, digest: str) -> None:
        self._digest = None
        at = self._pos.get(nid)
        if at is not None:
            self._buf[at : at + 64] = digest.encode("ascii")
            return
        n = _num(nid)
        if n < self._max:
            self._ordered = False
        self._max = max(self._max, n)
        self._pos[nid] = len(self._buf) + len(nid) + 1
        self._buf += f"{nid}:{digest}\n".encode()

    def get(self, nid: str) -> str | None:
        at = self._pos.get(nid)
        return None if at is None else self._buf[at : at + 64].decode("ascii")

    def copy(self) -> HashIndex:
        other = HashIndex()
        other._buf = bytearray(self._buf)
        other._pos = dict(self._pos)
        other._max = self._max
        other._ordered = self._ordered
        other._digest = self._digest
        return other

    def digest(self) -> str:
        """The state hash; kept until the next ``set`` (a snapshot after an unchanged
        stage, e.g. a decay that touched nothing, costs nothing)."""
        if self._digest is None:
            self.digest_order()
            self._digest = hashlib.sha256(self._buf).hexdigest()
        return self._digest

    def as_dict(self) -> dict[str, str]:
        buf = self._buf
        return {nid: buf[at : at + 64].decode("ascii") for nid, at in self._pos.items()}

    def text(self) -> str:
        """The lines the state hash is taken over."""
        self.digest_order()
        return self._buf.decode("utf-8")

    def digest_order(self) -> None:
        if not self._ordered:
            self._fill(sorted(self.as_dict().items(), key=lambda kv: _num(kv[0])))

    @classmethod
    def from_text(cls, text: str) -> HashIndex:
        index = cls()
        for line in text.splitlines():
            nid, _, digest = line.partition(":")
            index.set(nid, digest)
        return index

    def keys(self) -> frozenset[str]:
        return frozenset(self._pos)


class NodeEncoder:
    """Canonical JSON of nodes for a long in-place fold (replay): a node's facts are
    append-only, so the encoded facts of each node are kept and only new ones encoded, and
    its other fields are re-encoded only when changed (``FieldTexts``). The output is
    byte-identical to ``journal.canonical(node)``."""

    def __init__(self) -> None:
        self._facts: dict[str, tuple[list[Any], int, list[str]]] = {}
        self._fields = FieldTexts()

    def encode(self, node: NodeRecord, stale: frozenset[str] | set[str] = ALL_FIELDS) -> str:
        """The node's canonical text; ``stale``: the fields that may have changed since this
        node was last encoded here (all, by default)."""
        nid = node["id"]
        around = self._fields.around_facts(nid, node, stale)
        if around is None or type(node["facts"]) is not list:
            return jr.canonical(node)
        facts = node["facts"]
        hit = self._facts.get(nid)
        if hit is not None and hit[0] is facts and len(facts) >= hit[1]:
            parts = hit[2]
            if len(facts) > hit[1]:  # only the new facts, brackets dropped
                parts.append(encode_items(facts[hit[1] :]))
        else:
            parts = [encode_items(facts)] if facts else []
        self._facts[nid] = (facts, len(facts), parts)
        before, after = around
        fields = [f for f in (before, '"facts":[' + ",".join(parts) + "]", after) if f]
        return "{" + ",".join(fields) + "}"


class NodeHasher:
    """Node hashes for a long in-place fold (replay, snapshots checked but not kept): a
    node's facts are append-only, so a sha256 of its canonical text up to the end of its
    facts is kept per node and only new facts are fed to it; a hash is a copy of that state
    plus the fields after ``facts``, whose texts ``FieldTexts`` keeps. Equal to
    ``node_hash(node)`` (decisions 215, 251)."""

    def __init__(self) -> None:
        self._state: dict[str, tuple[list[Any], int, str, Any]] = {}
        self._tails: dict[str, tuple[str, bytes]] = {}  # per node: its "after", the bytes
        self._fields = FieldTexts()

    def digest(self, node: NodeRecord, stale: frozenset[str] | set[str] = ALL_FIELDS) -> str:
        """The node's hash; ``stale``: the fields that may have changed since this node was
        last hashed here (all, by default)."""
        nid = node["id"]
        facts = node["facts"]
        around = self._fields.around_facts(nid, node, stale)
        if around is None or type(facts) is not list:
            return hashlib.sha256(jr.canonical(node).encode("utf-8")).hexdigest()
        before, after = around
        hit = self._state.get(nid)
        if hit is not None and hit[0] is facts and len(facts) >= hit[1] and hit[2] == before:
            h = hit[3]
            if len(facts) > hit[1]:
                sep = "," if hit[1] else ""
                h.update((sep + encode_items(facts[hit[1] :])).encode("utf-8"))
        else:
            head = "{" + (before + "," if before else "") + '"facts":['
            h = hashlib.sha256((head + encode_items(facts)).encode("utf-8"))
        self._state[nid] = (facts, len(facts), before, h)
        tail = self._tails.get(nid)
        if tail is None or tail[0] is not after:
            tail = (after, ("]" + ("," + after if after else "") + "}").encode("utf-8"))
            self._tails[nid] = tail
        out = h.copy()
        out.update(tail[1])
        digest: str = out.hexdigest()
        return digest


#: which fields of which dirty node may have changed since its last snapshot (replay)
Stale = dict[str, set[str]]


def snapshot_hashes(
    nodes: Mapping[str, NodeRecord],
    dirty: set[str],
    index: HashIndex,
    hasher: NodeHasher,
    stale: Stale | None = None,
) -> None:
    """Hash the nodes changed since the last snapshot into ``index`` (no texts kept)."""
    for nid in sorted(dirty, key=_num):
        index.set(
            nid,
            hasher.digest(nodes[nid], stale.pop(nid, _NONE) if stale is not None else ALL_FIELDS),
        )


def snapshot_texts(
    nodes: Mapping[str, NodeRecord],
    dirty: set[str],
    index: HashIndex,
    encoder: NodeEncoder,
    stale: Stale | None = None,
) -> dict[str, str]:
    """Hash the nodes changed since the last snapshot into ``index``; return their canonical
    JSON (parsed only if a caller needs the dicts)."""
    changed: dict[str, str] = {}
    for nid in sorted(dirty, key=_num):
        text = encoder.encode(
            nodes[nid], stale.pop(nid, _NONE) if stale is not None else ALL_FIELDS
        )
        index.set(nid, hashlib.sha256(text.encode("utf-8")).hexdigest())
        changed[nid] = text
    return changed


_NONE: frozenset[str] = frozenset()


def snapshot_delta(
    nodes: Mapping[str, NodeRecord],
    dirty: set[str],
    index: HashIndex,
    encode: Callable[[NodeRecord], str] = jr.canonical,
) -> dict[str, str]:
    """Hash the nodes changed since the last snapshot into ``index`` and return their
    canonical JSON (encoded once: it gives the hash, the projection's node row and the
    snapshot row; parse it for an independent copy). A writer passes its
    ``NodeTexts.text`` as ``encode`` (same bytes, appended items only)."""
    changed: dict[str, str] = {}
    for nid in sorted(dirty, key=_num):
        text = encode(nodes[nid])
        index.set(nid, hashlib.sha256(text.encode("utf-8")).hexdigest())
        changed[nid] = text
    return changed
