"""Queue-driven status transitions inside a batch (S1): resurfacing (with revival) and decay.

The session protocol calls these so that the rules live in one place:

- :func:`resurface` — a node worked this session (forced focus or voluntary action). A
  dormant node is revived first: ``status_changed`` to ``open`` with the reason
  "revived by resurfacing", then ``question_resurfaced``.
- :func:`apply_decay` — after a session: every open node whose last touch is 3 or more
  sessions back becomes dormant, in one ``decay_applied`` event (none when nothing decays).
"""

from __future__ import annotations

from typing import Literal

from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger.events import DecayApplied, QuestionResurfaced, StatusChanged
from curiosity_tui.ledger.ledger import Batch
from curiosity_tui.ledger.node_record import NOT_LIVE
from curiosity_tui.ledger.queue import decay_candidates

REVIVED_REASON = "revived by resurfacing"

ResurfaceHow = Literal["forced_focus", "voluntary"]


def resurface(batch: Batch, node: str, how: ResurfaceHow, actor: str) -> bool:
    """Record that ``node`` was worked in the batch's session. Returns True if it was revived.

    Closed, archived and merged nodes cannot be resurfaced (TransitionError)."""
    n = batch.node(node)
    if n["status"] in NOT_LIVE:
        raise TransitionError(f"{node} is {n['status']} and cannot be resurfaced")
    revived: bool = n["status"] == "dormant"
    if revived:
        batch.emit(StatusChanged(to="open", reason=REVIVED_REASON), node=node, actor=actor)
    batch.emit(QuestionResurfaced(how=how), node=node, actor=actor)
    return revived


def apply_decay(batch: Batch, session: int | None = None) -> list[str]:
    """Emit ``decay_applied`` for the open nodes that decay after ``session`` (default: the
    batch's session). Returns their ids (ascending); emits nothing when the list is empty."""
    t = batch.session if session is None else session
    dormant = decay_candidates(batch.raw_nodes().values(), t)
    if dormant:
        batch.emit(DecayApplied(nodes=dormant))
    return dormant
