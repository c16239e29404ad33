"""What changed in one node between two positions of the ledger, in words.

The browser's CHG mark lists these lines ("requirement r1 removed", "check s3 r2 added",
"status open → dormant") instead of field names, so a requirement that silently leaves a
return condition is seen. Pure data: the projection's node dicts in, sentences out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from curiosity_tui.ledger.node_record import NodeRecord, RequirementEntry, requirements

__all__ = ["node_changes", "removed_requirements"]

Node = NodeRecord


def _reqs(n: Node) -> dict[str, RequirementEntry]:
    return {r["id"]: r for r in requirements(n)}


def removed_requirements(before: Node | None, after: Node) -> list[RequirementEntry]:
    """The required facts of ``before``'s return condition that ``after`` no longer has."""
    if before is None:
        return []
    now = _reqs(after)
    return [r for rid, r in _reqs(before).items() if rid not in now]


def _requirement_lines(before: Node, after: Node) -> Iterable[str]:
    old, new = _reqs(before), _reqs(after)
    for rid in old:
        if rid not in new:
            yield f"requirement {rid} removed"
    for rid, r in new.items():
        if rid not in old:
            yield f"requirement {rid} added"
        elif old[rid].get("status") != r.get("status"):
            yield f"requirement {rid} {old[rid].get('status')} → {r.get('status')}"
        elif old[rid].get("text") != r.get("text"):
            yield f"requirement {rid} reworded"
    rc_old, rc_new = before.get("return_condition"), after.get("return_condition")
    if rc_old is None and rc_new is not None:
        yield f"return condition set (revision {rc_new.get('revision')})"
    elif rc_old is not None and rc_new is None:
        yield "return condition removed"
    elif rc_old and rc_new:
        if rc_old.get("revision") != rc_new.get("revision"):
            yield f"return condition revision {rc_old.get('revision')} → {rc_new.get('revision')}"
        if rc_old.get("closure_test") != rc_new.get("closure_test"):
            yield "closure test changed"
        gone = [
            a
            for a in rc_old.get("required_actions", [])
            if a not in rc_new.get("required_actions", [])
        ]
        added = [
            a
            for a in rc_new.get("required_actions", [])
            if a not in rc_old.get("required_actions", [])
        ]
        if gone:
            yield f"{len(gone)} required action(s) removed"
        if added:
            yield f"{len(added)} required action(s) added"


def _added(before: list[Any], after: list[Any]) -> list[Any]:
    return [x for x in after if x not in before]


def _list_lines(before: Node, after: Node) -> Iterable[str]:
    for c in _added(before.get("checks", []), after.get("checks", [])):
        yield f"check s{c.get('session')} {c.get('requirement')} added ({c.get('result')})"
    facts = _added(before.get("facts", []), after.get("facts", []))
    if facts:
        yield f"{len(facts)} fact(s) added"
    for e in _added(before.get("evidence", []), after.get("evidence", [])):
        yield f"evidence {e.get('id')} for {e.get('requirement')} ({e.get('status')})"
    pres = _added(before.get("preserved", []), after.get("preserved", []))
    if pres:
        yield f"{len(pres)} candidate(s) preserved"
    old_dg = {d.get("id"): d for d in before.get("downgrades", [])}
    for d in after.get("downgrades", []):
        was = old_dg.get(d.get("id"))
        if was is None:
            yield f"downgrade {d.get('id')} proposed ({d.get('action')} {d.get('requirement')})"
        elif was.get("status") != d.get("status"):
            yield f"downgrade {d.get('id')} {was.get('status')} → {d.get('status')}"
    res = _added(before.get("resurfaced", []), after.get("resurfaced", []))
    if res:
        yield "resurfaced at " + ", ".join(f"s{s}" for s in res)


def node_changes(before: Node | None, after: Node) -> list[str]:
    """One line per change from ``before`` to ``after`` (``before`` None: the node is new)."""
    if before is None:
        return ["new node"]
    out: list[str] = []
    if before.get("status") != after.get("status"):
        out.append(f"status {before.get('status')} → {after.get('status')}")
    if before.get("text") != after.get("text"):
        out.append("question text changed")
    out += _requirement_lines(before, after)
    out += _list_lines(before, after)
    if before.get("curator_priority") != after.get("curator_priority"):
        out.append(
            f"curator priority {before.get('curator_priority')} → {after.get('curator_priority')}"
        )
    if before.get("merged_into") != after.get("merged_into"):
        out.append(f"merged into {after.get('merged_into')}")
    known = {
        "status", "text", "return_condition", "checks", "facts", "evidence", "preserved",
        "downgrades", "resurfaced", "curator_priority", "merged_into",
        "requirement_counter", "voluntary",
    }  # fmt: skip
    other = sorted(
        k for k in set(before) | set(after) if k not in known and before.get(k) != after.get(k)
    )
    out += [f"{k} changed" for k in other]
    return out
