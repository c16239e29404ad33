"""Synthetic runs with chosen structural figures, for tests, examples and benchmarks.

:func:`structural_run` builds a :class:`RunData` whose final snapshot has exactly the
requested ``max_depth``, ``nodes_worked`` (split voluntary / forced-only), live and
closed node counts. :func:`random_run` draws a plausible five-session run for timing.
Nothing here is used by a real analysis.
"""

from __future__ import annotations

import numpy as np

from curiosity_tui.analysis.rundata import RunData, RunNode
from curiosity_tui.ledger.models import CallRecord, SessionCounts, SessionRecord


def structural_run(
    config: str,
    run_id: str,
    *,
    depth: int,
    worked: int,
    voluntary: int | None = None,
    live: int | None = None,
    closed: int = 0,
    closed_with_facts: int = 0,
) -> RunData:
    """A run whose metrics are: max_depth = depth, nodes_worked = worked (the first
    ``voluntary`` of them voluntarily), closed_nodes = closed, live_nodes = live."""
    if depth < 1:
        raise ValueError("depth counts the root: at least 1")
    live_n = live if live is not None else max(depth, worked) - closed
    total = max(depth, worked, live_n + closed)
    if live_n + closed != total:
        raise ValueError("live + closed must cover the nodes the depth and worked figures need")
    vol = worked if voluntary is None else voluntary
    nodes: dict[str, RunNode] = {}
    for i in range(1, total + 1):
        nid = f"q{i}"
        parent = _parent(i, depth)
        is_worked = i <= worked
        status = "closed" if i > total - closed else "open"
        facts = [{"text": f"fact {i}", "session": 1}] if status == "closed" else []
        if status == "closed" and i > total - closed + closed_with_facts:
            facts = []
        nodes[nid] = RunNode(
            id=nid,
            text=f"question {i}",
            parent=parent,
            status=status,
            created=1,
            resurfaced=[2] if is_worked else [],
            voluntary=[2] if is_worked and i <= vol else [],
            facts=facts,
        )
    return RunData(config=config, run_id=run_id, nodes=nodes)


def _parent(i: int, depth: int) -> str | None:
    if i <= depth:  # the chain q1 > q2 > … > q<depth>
        return None if i == 1 else f"q{i - 1}"
    # beside the chain: a child of the root (depth 2), or a root when depth is 1
    return "q1" if depth >= 2 else None


def random_run(
    rng: np.random.Generator,
    config: str,
    run_id: str,
    *,
    sessions: int = 5,
    questions_per_session: int = 3,
) -> RunData:
    """A random but well-formed run: a growing tree, touches, decisions, calls."""
    nodes: dict[str, RunNode] = {"q1": RunNode(id="q1", text="seed", created=0)}
    recs: list[SessionRecord] = []
    for s in range(1, sessions + 1):
        ids = list(nodes)
        raised: list[str] = []
        for _ in range(int(rng.integers(1, questions_per_session + 1))):
            nid = f"q{len(nodes) + 1}"
            parent = ids[int(rng.integers(0, len(ids)))]
            nodes[nid] = RunNode(id=nid, text=f"question {nid}", parent=parent, created=s)
            raised.append(nodes[nid].text)
        focus = ids[int(rng.integers(0, len(ids)))]
        nodes[focus].resurfaced.append(s)
        vol = int(rng.integers(0, 4))
        for _ in range(vol):
            nid = ids[int(rng.integers(0, len(ids)))]
            n = nodes[nid]
            if s not in n.resurfaced:
                n.resurfaced.append(s)
            if s not in n.voluntary:
                n.voluntary.append(s)
        if rng.random() < 0.3:
            nodes[ids[-1]].facts.append({"text": "a fact", "session": s})
        if rng.random() < 0.1:
            nodes[ids[-1]].status = "closed"
        delta = float(rng.normal(-0.2, 0.1))
        recs.append(
            SessionRecord(
                session=s,
                focus=focus,
                decision="PRESERVE" if delta < -0.15 else "ANSWER",
                delta=delta,
                epsilon=0.15,
                counts=SessionCounts(
                    voluntary_actions=vol, dependency_checks=int(rng.integers(0, 3))
                ),
                questions=raised,
                calls=[
                    CallRecord(kind="candidate", internal=True, completion_tokens=250),
                    CallRecord(kind="final", internal=False, completion_tokens=1100),
                ],
            )
        )
    return RunData(config=config, run_id=run_id, nodes=nodes, sessions=recs, epsilon=0.15)
