"""The model curator's actions are untrusted input: each is checked before it moves state
(issue 25, items 9 and 10; decision 407).

- its reason must be a sentence: letters, at least three words, no JSON debris
  (``"s1"``, ``"}, { "``, ``"None"``, ``"100, "`` were stored as reasons);
- it never archives or merges the seed question, nor a closed node (a closed node turned
  archived dropped out of the report's closed-nodes count);
- a merge names its target (``into``), else it is refused as such (not "unknown node ''");
- one reply archives at most :data:`MAX_ARCHIVE_SHARE` of the open questions (at least
  one): the rest are not applied, and the reply is flagged as a mass archive (one injected
  reply archived 4 of 5 open questions).

Every action not applied leaves a note (a ``curator-note`` in the next session's record).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from curiosity_tui.errors import TransitionError
from curiosity_tui.ledger import curation
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.node_record import NodeRecord

ACTOR = "model-curator"
#: the share of open questions one curator reply may archive
MAX_ARCHIVE_SHARE = 1 / 3
_WORD = re.compile(r"[^\W\d_]{2,}")
_DEBRIS = re.compile(r"[{}\[\]\"]|^\s*(none|null|n/?a)\s*\.?\s*$", re.IGNORECASE)


def reason_problem(reason: str) -> str | None:
    """Why ``reason`` is not a sentence a reviewer can read, or None."""
    text = reason.strip()
    if _DEBRIS.search(text) or len(_WORD.findall(text)) < 3:
        return f"its reason {text[:40]!r} is not a sentence"
    return None


def _node_problem(nodes: dict[str, NodeRecord], nid: str, action: str) -> str | None:
    node = nodes.get(nid)
    if node is None:
        return None  # curation names an unknown node itself
    if action == "prioritise":
        return None
    if node.get("parent") is None and node.get("created") == 0:  # made with the ledger
        return "it is the seed question"
    if node.get("status") == "closed":
        return "it is closed (a closed node keeps its status)"
    return None


def archive_limit(nodes: dict[str, NodeRecord]) -> int:
    open_now = sum(1 for n in nodes.values() if n.get("status") == "open")
    return max(1, math.floor(open_now * MAX_ARCHIVE_SHARE))


def apply_curator_actions(led: Ledger, actions: Sequence[Any], last_open: Any) -> list[str]:
    """Apply the checked actions in order; return the notes for those not applied.
    ``last_open(led, nid)``: whether ``nid`` is the only open node (decision 190)."""
    notes: list[str] = []
    nodes = led.raw_nodes()
    limit, archived = archive_limit(nodes), 0
    wanted = sum(1 for a in actions if a.action == "archive")
    if wanted > limit:
        notes.append(
            f"curator mass archive flagged: one reply asked to archive {wanted} nodes; at "
            f"most {limit} (a third of the open questions) are applied"
        )
    for a in actions:
        nid = a.node.strip().lower()
        skip = reason_problem(a.reason)
        if skip is None and a.action != "prioritise" and last_open(led, nid):
            skip = "it is the last open question: the next session would have nothing to focus on"
        skip = skip or _node_problem(led.raw_nodes(), nid, a.action)
        if skip is None and a.action == "merge" and not (a.into or "").strip():
            skip = "it names no node to merge into"
        if skip is None and a.action == "archive" and archived >= limit:
            skip = f"over the limit of {limit} archive(s) in one reply"
        if skip is not None:
            notes.append(f"curator {a.action} {a.node} not applied: {skip}")
            continue
        try:
            if a.action == "prioritise":
                curation.set_priority(led, nid, a.priority or 1, a.reason, ACTOR)
            elif a.action == "merge":
                curation.merge(led, nid, (a.into or "").strip().lower(), a.reason, ACTOR)
            else:
                curation.archive(led, nid, a.reason, ACTOR)
                archived += 1
        except TransitionError as err:
            notes.append(f"curator {a.action} {a.node}: {err}")
    return notes
