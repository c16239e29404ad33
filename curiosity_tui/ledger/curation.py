"""Curator actions between sessions (S5): prioritise, merge, archive, revive — each with a reason.

Each action is its own committed batch (so a curator quitting mid-way loses nothing);
:func:`finish_curation` writes the after-curator snapshot that the next session starts from.
Actors: ``model-curator`` or ``human:<name>``.
"""

from __future__ import annotations

from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.events import CuratorPrioritySet, NodesMerged, StatusChanged
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.node_record import NOT_LIVE, NodeRecord

CURATOR_ACTORS = ("model-curator",)


def check_curator(actor: str, reason: str) -> None:
    """TransitionError unless ``actor`` may curate and gives a reason."""
    if not (actor in CURATOR_ACTORS or (actor.startswith("human:") and actor[6:].strip())):
        raise TransitionError(
            f"curator actions need actor model-curator or human:<name>, not {actor!r}"
        )
    if not reason or not reason.strip():
        raise TransitionError("a curator action needs a reason")


def _node(led: Ledger, node_id: str) -> NodeRecord:
    nodes = led.raw_nodes()
    if node_id not in nodes:
        raise TransitionError(f"unknown node {node_id!r}")
    return nodes[node_id]


def set_priority(led: Ledger, node_id: str, priority: int | None, reason: str, actor: str) -> None:
    """Set (1 = first) or clear (None) a node's curator priority."""
    check_curator(actor, reason)
    n = _node(led, node_id)
    if priority is not None and priority < 1:
        raise TransitionError(f"priority must be 1 or more, got {priority}")
    if n["status"] in NOT_LIVE:
        raise TransitionError(f"{node_id} is {n['status']}; revive it before prioritising")
    with led.batch(led.last_session, marker="batch_committed", label="curator") as b:
        if n["status"] == "dormant":
            revived = StatusChanged(to="open", reason=f"revived to prioritise: {reason}")
            b.emit(revived, node=node_id, actor=actor)
        b.emit(CuratorPrioritySet(priority=priority, reason=reason), node=node_id, actor=actor)


def merge(led: Ledger, node_id: str, into: str, reason: str, actor: str) -> None:
    check_curator(actor, reason)
    n = _node(led, node_id)
    target = _node(led, into)
    if node_id == into:
        raise TransitionError("a node cannot be merged into itself")
    if n["status"] in ("merged", "archived"):
        raise TransitionError(f"{node_id} is already {n['status']}")
    if target["status"] in ("merged", "archived"):
        raise TransitionError(f"merge target {into} is {target['status']}")
    with led.batch(led.last_session, marker="batch_committed", label="curator") as b:
        b.emit(NodesMerged(into=into, reason=reason), node=node_id, actor=actor)


def archive(led: Ledger, node_id: str, reason: str, actor: str) -> None:
    check_curator(actor, reason)
    n = _node(led, node_id)
    if n["status"] in ("archived", "merged"):
        raise TransitionError(f"{node_id} is already {n['status']}")
    with led.batch(led.last_session, marker="batch_committed", label="curator") as b:
        b.emit(StatusChanged(to="archived", reason=reason), node=node_id, actor=actor)


def revive(led: Ledger, node_id: str, reason: str, actor: str) -> None:
    """Make a dormant or archived node open again (a closed or merged one stays as it is)."""
    check_curator(actor, reason)
    n = _node(led, node_id)
    if n["status"] not in ("dormant", "archived"):
        raise TransitionError(
            f"{node_id} is {n['status']}; only dormant or archived nodes can be revived"
        )
    with led.batch(led.last_session, marker="batch_committed", label="curator") as b:
        b.emit(StatusChanged(to="open", reason=reason), node=node_id, actor=actor)


def finish_curation(led: Ledger) -> None:
    """Write the after-curator snapshot of the last session (the state the next session sees)."""
    with led.batch(led.last_session, marker="batch_committed", label="curator") as b:
        b.snapshot("curator")
