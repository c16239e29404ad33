"""Taking back a curator action between sessions (decision 444).

Every curator action (priority, merge, archive, revive) is a journal event; :func:`revert`
appends a ``curator_reverted`` event naming it, with actor and reason, that restores the
fields the action changed (the status before a merge, archive or revive; the priority before
a priority). The journal stays append-only: the action's own event stays where it is.

An action is taken back only while the node still shows what it did (a later action on the
same field is taken back first), and only once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger import journal as jr
from curiosity_tui.ledger.curation import check_curator
from curiosity_tui.ledger.events import CuratorReverted
from curiosity_tui.ledger.journal import JOURNAL_FILE
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.node_record import NodeRecord

__all__ = ["CuratorAction", "curator_actions", "revert"]

Action = Literal["priority", "merge", "archive", "revive"]


class CuratorAction(BaseModel):
    """One curator action in the journal, and whether it was taken back."""

    seq: int
    session: int
    action: Action
    node: str
    actor: str
    reason: str
    #: the priority set, or the merge target (None for archive and revive)
    value: int | str | None = None
    reverted_by: int | None = None

    def describe(self) -> str:
        what = {
            "priority": f"priority {self.value if self.value is not None else 'cleared'}",
            "merge": f"merged into {self.value}",
            "archive": "archived",
            "revive": "revived",
        }[self.action]
        return f"seq {self.seq}: {self.node} {what} by {self.actor} ({self.reason})"


def _is_curator(actor: str) -> bool:
    return actor == "model-curator" or actor.startswith("human:")


def _action_of(ev: dict[str, Any]) -> CuratorAction | None:
    kind, data, actor = ev["kind"], ev["data"], ev.get("actor", "")
    if not _is_curator(actor) or ev.get("node") is None:
        return None
    base = {"seq": ev["seq"], "session": ev["session"], "node": ev["node"], "actor": actor}
    reason = str(data.get("reason", ""))
    if kind == "curator_priority_set":
        return CuratorAction(**base, action="priority", reason=reason, value=data["priority"])
    if kind == "nodes_merged":
        return CuratorAction(**base, action="merge", reason=reason, value=data["into"])
    if kind == "status_changed" and data.get("to") in ("archived", "open"):
        action: Action = "archive" if data["to"] == "archived" else "revive"
        return CuratorAction(**base, action=action, reason=reason)
    return None


def curator_actions(led: Ledger) -> list[CuratorAction]:
    """Every curator action of the committed journal, in journal order."""
    out: dict[int, CuratorAction] = {}
    for ev in jr.JournalStream(led.path / JOURNAL_FILE):
        if ev["seq"] > led.last_seq:
            break
        if ev["kind"] == "curator_reverted" and ev["data"]["reverts"] in out:
            out[ev["data"]["reverts"]].reverted_by = ev["seq"]
            continue
        act = _action_of(ev)
        if act is not None:
            out[act.seq] = act
    return list(out.values())


def _before(led: Ledger, seq: int, node: str) -> NodeRecord:
    """The node as it stood just before journal seq ``seq``."""
    from curiosity_tui.ledger.replay import replay

    nodes = replay(led.path, check_snapshots=False, until_seq=seq - 1).state.nodes
    if node not in nodes:  # pragma: no cover - a curator action names an existing node
        raise TransitionError(f"{node} did not exist before seq {seq}")
    return nodes[node]


def _still_shows(act: CuratorAction, now: NodeRecord) -> bool:
    if act.action == "priority":
        return bool(now.get("curator_priority") == act.value)
    if act.action == "merge":
        return bool(now["status"] == "merged" and now.get("merged_into") == act.value)
    return bool(now["status"] == ("archived" if act.action == "archive" else "open"))


def revert(led: Ledger, seq: int, reason: str, actor: str) -> CuratorAction:
    """Take back the curator action at journal ``seq``; returns it. TransitionError names
    why not (not a curator action, already taken back, changed since)."""
    check_curator(actor, reason)
    act = next((a for a in curator_actions(led) if a.seq == seq), None)
    if act is None:
        raise TransitionError(
            f"seq {seq} is not a curator action (priority, merge, archive or revive)"
        )
    if act.reverted_by is not None:
        raise TransitionError(f"seq {seq} was already taken back at seq {act.reverted_by}")
    now = led.raw_nodes()[act.node]
    if not _still_shows(act, now):
        raise TransitionError(
            f"{act.node} changed since seq {seq} (now {now['status']}, priority "
            f"{now.get('curator_priority')}); take back the later action first"
        )
    before = _before(led, seq, act.node)
    event = CuratorReverted(
        reverts=seq,
        action=act.action,
        reason=reason.strip(),
        status=None if act.action == "priority" else before["status"],
        restores_priority=act.action == "priority",
        curator_priority=before.get("curator_priority") if act.action == "priority" else None,
    )
    with led.batch(led.last_session, marker="batch_committed", label="curator") as b:
        b.emit(event, node=act.node, actor=actor)
    return act
