"""The exact text a fresh session receives (S2): a rendering of the store, not the store.

For each open node in queue order: id, status, pulse, parent, text; up to the last five
facts; for a node with a return condition, each required fact with its mark
(``[checked s<N>: satisfied]``, ``[checked s<N>: not satisfied]``, ``[unchecked]``; a waived
one reads ``[waived]``), the required actions, the closure test, and a *count* of preserved
candidates. Evidence text and preserved candidates' content are never rendered.

Deterministic: the same state gives the same bytes (no timestamps, no dict-order effects).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from curiosity_tui.ledger.node_record import NodeRecord, RequirementEntry, pulse
from curiosity_tui.ledger.queue import queue

RENDER_FACTS = 5
FOCUS_FACTS = 6


def mark(req: RequirementEntry) -> str:
    status = req["status"]
    if status == "satisfied":
        return f"[checked s{req['checked']}: satisfied]"
    if status == "not_satisfied":
        return f"[checked s{req['checked']}: not satisfied]"
    if status == "waived":
        return "[waived]"
    return "[unchecked]"


def _block(text: str, indent: str) -> str:
    """Multi-line text stays verbatim, continuation lines indented so structure holds."""
    return text.replace("\r\n", "\n").replace("\n", "\n" + indent)


def render_node(node: NodeRecord, index: int) -> list[str]:
    parent = node["parent"] or "-"
    lines = [
        f"[{index}] {node['id']} | status: {node['status']} | pulse: {pulse(node)} | parent: {parent}",
        f"    question: {_block(node['text'], '      ')}",
    ]
    facts = node["facts"][-RENDER_FACTS:]
    if facts:
        lines.append(f"    facts (last {len(facts)} of {len(node['facts'])}):")
        for f in facts:
            lines.append(f"      - (s{f['session']}) {_block(f['text'], '        ')}")
    rc = node.get("return_condition")
    if rc:
        lines.append("    return condition:")
        lines.append("      required facts:")
        for r in rc["required_facts"]:
            lines.append(f"        - {r['id']}: {_block(r['text'], '          ')} {mark(r)}")
        if not rc["required_facts"]:
            lines.append("        (none)")
        lines.append("      required actions:")
        for a in rc["required_actions"]:
            lines.append(f"        - {_block(a, '          ')}")
        if not rc["required_actions"]:
            lines.append("        (none)")
        lines.append(f"      closure test: {_block(rc['closure_test'] or '(none)', '        ')}")
        lines.append(f"      preserved candidates: {len(node['preserved'])}")
    return lines


def render_session_input(
    nodes: Mapping[str, NodeRecord] | Iterable[NodeRecord], session: int
) -> str:
    """The rendering given to session ``session`` (queue order computed for that session)."""
    values = list(nodes.values()) if isinstance(nodes, Mapping) else list(nodes)
    order = queue(values, session)
    out = [
        f"QUESTION LEDGER (input to session {session}; open questions in queue order: {len(order)})"
    ]
    for i, node in enumerate(order, start=1):
        out.append("")
        out.extend(render_node(node, i))
    return "\n".join(out) + "\n"


def focus_facts(node: NodeRecord) -> list[str]:
    """Up to six facts of the focus node (the most recent six), for candidates and judge-before."""
    return [f["text"] for f in node["facts"][-FOCUS_FACTS:]]
