"""A read-only view of one ledger for browsing: the tree by parent, the ledger at any session,
what changed in a session, search, priorities, and each node's own journal events.

Domain code (no textual): the browser screen calls it from workers and renders what it returns.
All node data are the projection's plain dicts (do not mutate them).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.ledger import JOURNAL_FILE, Ledger
from curiosity_tui.ledger.node_record import NodeRecord, pulse
from curiosity_tui.ledger.queue import decayed_priority, queue

NodeMap = dict[str, NodeRecord]


def node_num(node_id: str) -> int:
    return int(node_id[1:]) if node_id[1:].isdigit() else 0


@dataclass(frozen=True)
class Position:
    """A point on the session slider: the ledger after ``session`` (None = as it stands now)."""

    session: int | None
    stage: str = ""

    def label(self, last_session: int) -> str:
        if self.session is None:
            return f"now (after session {last_session}, with any later curator actions)"
        return f"after session {self.session}" + (f" ({self.stage})" if self.stage else "")


@dataclass
class State:
    """The ledger at one position: nodes, the tree index, queue ranks and what changed."""

    position: Position
    nodes: NodeMap
    children: dict[str | None, list[str]]
    changed: dict[str, str]  # node id -> "new" | "changed" (vs the previous position)
    ranks: dict[str, int]  # open node id -> 1-based queue rank for the next session
    t: int  # the session the queue ranks are for (next session)
    before: NodeMap  # the nodes at the previous position (what ``changed`` compares against)

    def priority(self, node_id: str) -> float:
        return decayed_priority(self.nodes[node_id], self.t)

    def roots(self) -> list[str]:
        return self.children.get(None, [])

    def path_to(self, node_id: str) -> list[str]:
        """Ids from the root down to ``node_id`` (inclusive)."""
        out: list[str] = []
        cur: str | None = node_id
        seen: set[str] = set()
        while cur is not None and cur in self.nodes and cur not in seen:
            seen.add(cur)
            out.append(cur)
            cur = self.nodes[cur].get("parent")
        return list(reversed(out))


def build_children(nodes: NodeMap) -> dict[str | None, list[str]]:
    """Parent id -> child ids (by number); nodes with an unknown parent count as roots."""
    kids: dict[str | None, list[str]] = {}
    for nid in sorted(nodes, key=node_num):
        parent = nodes[nid].get("parent")
        if parent is not None and parent not in nodes:
            parent = None
        kids.setdefault(parent, []).append(nid)
    return kids


def diff(before: NodeMap, after: NodeMap) -> dict[str, str]:
    out: dict[str, str] = {}
    if before is after:
        return out
    for nid, n in after.items():
        old = before.get(nid)
        if old is None:
            out[nid] = "new"
        elif old != n:
            out[nid] = "changed"
    return out


def _mentions(ev: dict[str, Any]) -> list[str]:
    ids = [ev["node"]] if ev.get("node") else []
    d = ev.get("data") or {}
    if ev["kind"] == "nodes_merged" and d.get("into"):
        ids.append(d["into"])
    elif ev["kind"] == "decay_applied":
        ids.extend(d.get("nodes", []))
    return ids


class LedgerView:
    """Opens a ledger read-only and answers the browser's questions about it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.ledger = Ledger.open(self.path)
        self.meta = self.ledger.meta
        self.last_session = self.ledger.last_session
        self._lock = threading.Lock()
        self._events: dict[str, list[dict[str, Any]]] | None = None
        self._states: dict[Position, State] = {}
        #: (session, stage, seq) of every snapshot in seq order (the ledger does not change)
        self.snapshot_index = self.ledger.snapshot_index()
        self.positions = self._positions()

    def close(self) -> None:
        self.ledger.close()

    # -- positions ------------------------------------------------------------------
    def _positions(self) -> list[Position]:
        seen: dict[int, str] = {}
        for session, stage, _seq in self.snapshot_index:
            seen[session] = stage  # the last stage of each session
        out = [Position(s, seen[s]) for s in sorted(seen)]
        out.append(Position(None))
        return out

    def nodes_at(self, pos: Position) -> NodeMap:
        if pos.session is None:
            return self.ledger.raw_nodes()
        return self.ledger.snapshot(pos.session)

    def state(self, index: int) -> State:
        """The ledger at ``positions[index]`` with what changed since the position before."""
        pos = self.positions[index]
        with self._lock:
            cached = self._states.get(pos)
        if cached is not None:
            return cached
        nodes = self.nodes_at(pos)
        if self._now_as_last_snapshot(index):
            before = nodes  # nothing changed since: the same nodes, nothing to read or compare
        elif index == 0:
            first = pos.session if pos.session is not None else self.last_session + 1
            before = self.ledger.state_before(first) if first >= 1 else {}
        else:
            before = self.nodes_at(self.positions[index - 1])
        t = (pos.session if pos.session is not None else self.last_session) + 1
        ranks = {n["id"]: i for i, n in enumerate(queue(nodes.values(), t), start=1)}
        st = State(pos, nodes, build_children(nodes), diff(before, nodes), ranks, t, before)
        with self._lock:
            self._states[pos] = st
        return st

    def _now_as_last_snapshot(self, index: int) -> bool:
        """True when ``positions[index]`` is "now", the position before it is the ledger's
        last snapshot, and no node changed after that snapshot: the two are the same state,
        so the snapshot need not be read (decision 277)."""
        if index == 0 or index != len(self.positions) - 1 or not self.snapshot_index:
            return False
        # positions[index - 1] is the highest session; its state is its last snapshot, which
        # must be the last one written for "no node changed since" to speak of it
        last_written = self.snapshot_index[-1][0]
        return (
            self.positions[index - 1].session == last_written
            and not self.ledger.dirty_since_snapshot
        )

    # -- search -----------------------------------------------------------------------
    @staticmethod
    def search(nodes: NodeMap, query: str, limit: int = 200) -> list[tuple[str, str]]:
        """(node id, where) pairs: an exact id first, then node text, then fact text matches."""
        q = query.strip()
        if not q:
            return []
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        ident = q if q[:1] in ("q", "Q") else f"q{q}"
        ident = ident.lower()
        if ident in nodes:
            out.append((ident, "id"))
            seen.add(ident)
        needle = q.casefold()
        for nid in sorted(nodes, key=node_num):
            if nid in seen:
                continue
            if needle in nodes[nid]["text"].casefold():
                out.append((nid, "text"))
                seen.add(nid)
                if len(out) >= limit:
                    return out
        for nid in sorted(nodes, key=node_num):
            if nid in seen:
                continue
            if any(needle in f["text"].casefold() for f in nodes[nid]["facts"]):
                out.append((nid, "fact"))
                seen.add(nid)
                if len(out) >= limit:
                    break
        return out

    # -- journal ----------------------------------------------------------------------
    def events_index(self) -> dict[str, list[dict[str, Any]]]:
        """Node id -> the committed journal events that name it (scanned once, then cached)."""
        with self._lock:
            if self._events is not None:
                return self._events
        index: dict[str, list[dict[str, Any]]] = {}
        for ev in jr.scan(self.path / JOURNAL_FILE).events:
            for nid in _mentions(ev):
                index.setdefault(nid, []).append(ev)
        with self._lock:
            self._events = index
        return index

    def events_ready(self) -> bool:
        return self._events is not None

    def node_events(self, node_id: str) -> list[dict[str, Any]]:
        return self.events_index().get(node_id, [])

    def rendering(self, session: int) -> str:
        return self.ledger.rendering(session)

    def mind(self, session: int) -> str | None:
        """Who took ``session`` (a relay's record names its mind), in words; None if unnamed."""
        rec = self.ledger.raw_sessions().get(session) or {}
        m = rec.get("mind")
        if not isinstance(m, dict):
            return None
        if m.get("kind") == "human":
            return f"human:{m.get('name', '?')}"
        where = f" @ {m['endpoint']}" if m.get("endpoint") else ""
        return f"model {m.get('name', '?')}{where}"

    def session_numbers(self) -> list[int]:
        """Sessions whose input is viewable: every recorded one, plus the next session."""
        recorded = [r.session for r in self.ledger.session_records()]
        return sorted({*recorded, self.last_session + 1})


__all__ = ["LedgerView", "Position", "State", "build_children", "diff", "node_num", "pulse"]
