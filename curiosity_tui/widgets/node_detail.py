"""Everything about one node, shown literally: text, facts, the return condition with its
marks, every check with its evidence text and evidence status, evidence records, preserved
candidates in full, downgrade history, and the node's own journal events with their seqs."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.visual import visualize
from textual.widgets import Static

from curiosity_tui.ledger.changes import node_changes, removed_requirements
from curiosity_tui.ledger.node_record import (
    CheckEntry,
    DowngradeEntry,
    EvidenceEntry,
    FactEntry,
    NodeRecord,
    PreservedEntry,
    RequirementEntry,
    ReturnConditionEntry,
    pulse,
)
from curiosity_tui.ledger.render import mark
from curiosity_tui.ledger.view import State
from curiosity_tui.widgets.literal import clean
from curiosity_tui.widgets.status import (
    CHANGE_TAG,
    EVIDENCE_STYLE,
    REQ_STYLE,
    STATUS_STYLE,
    glyph,
)

INDENT = "    "


def _section(t: Text, title: str, count: int | None = None) -> None:
    t.append("\n")
    t.append(title, style="bold underline")
    if count is not None:
        t.append(f" ({count})", style="dim")
    t.append("\n")


def _block(t: Text, text: object, style: str = "", indent: str = INDENT) -> None:
    body = clean(text).replace("\n", "\n" + indent)
    t.append(indent)
    t.append(body, style=style)
    t.append("\n")


def render_detail(
    state: State,
    nid: str,
    events: list[dict[str, Any]] | None,
    before: NodeRecord | None = None,
    *,
    journal: bool = True,
) -> Text:
    """The detail text for node ``nid`` at ``state`` (``events`` None = journal still loading).

    The sections, in order: head, question, facts, return condition, checks, evidence
    records, preserved candidates, downgrades and (``journal``) the node's journal events."""
    n = state.nodes[nid]
    t = Text(end="")
    _head(t, state, nid, n, before)
    _section(t, "Question")
    _block(t, n["text"])
    _answer(t, nid, n, events)
    _facts(t, n["facts"])
    _return_condition(t, n.get("return_condition"), removed_requirements(before, n))
    evidence = {e["id"]: e for e in n.get("evidence", [])}
    _checks(t, n["checks"], evidence)
    _evidence_records(t, evidence)
    _preserved(t, n["preserved"])
    _downgrades(t, n.get("downgrades", []))
    if journal:
        _journal(t, events)
    return t


def _answer(t: Text, nid: str, n: NodeRecord, events: list[dict[str, Any]] | None) -> None:
    """The answer the node was given (its ``node_answered`` events; the last one first); a
    closed node's answer was only raw JSON in a journal line (issue 28)."""
    if events is None:
        if n["status"] == "closed":
            _section(t, "Answer")
            t.append(INDENT + "loading…\n", style="dim italic")
        return
    given = [e for e in events if e["kind"] == "node_answered" and e.get("node") == nid]
    if not given:
        return
    _section(t, "Answer", len(given) if len(given) > 1 else None)
    for e in reversed(given):
        t.append(INDENT)
        t.append(clean(str((e.get("data") or {}).get("answer", ""))).replace("\n", "\n" + INDENT))
        t.append(f"\n{INDENT}delivered in session {e['session']} (seq {e['seq']}) by ", style="dim")
        t.append(f"{clean(e['actor'], oneline=True)}\n", style="dim cyan")


def _none(t: Text, items: object) -> None:
    if not items:
        t.append(INDENT + "none\n", style="dim")


def _head(t: Text, state: State, nid: str, n: NodeRecord, before: NodeRecord | None) -> None:
    """What changed here, status, pulse, priorities and queue rank, then the node's history."""
    status = n["status"]
    change = state.changed.get(nid)
    if change:
        tag, style = CHANGE_TAG[change]
        t.append(f" {tag} ", style=style)
        what = "new at this point" if change == "new" else "changed at this point"
        t.append(f" {what}\n", style="bold")
        if change != "new":
            for line in node_changes(before, n):
                t.append(f"{INDENT}• {clean(line, oneline=True)}\n", style="yellow")
    t.append(f"{glyph(status)} ", style=STATUS_STYLE.get(status, ""))
    t.append(nid, style="bold")
    t.append(f"  {status}", style=STATUS_STYLE.get(status, ""))
    t.append(f"  pulse {pulse(n)}")
    t.append(f"  decayed priority {state.priority(nid):.3f} at s{state.t}")
    rank = state.ranks.get(nid)
    if rank is not None:
        t.append(f"  queue #{rank}", style="cyan")
    if n.get("curator_priority") is not None:
        t.append(f"  curator priority {n['curator_priority']}", style="magenta")
    t.append("\n")
    res = ", ".join(f"s{s}" for s in n["resurfaced"]) or "never"
    vol = ", ".join(f"s{s}" for s in n.get("voluntary", [])) or "none"
    kids = state.children.get(nid, [])
    t.append(
        f"created s{n['created']} · parent {n['parent'] or '—'} · children {len(kids)} · "
        f"resurfaced {res} (voluntary {vol})",
        style="dim",
    )
    if n.get("merged_into"):
        t.append(f" · merged into {n['merged_into']}", style="magenta")
    t.append("\n")


def _facts(t: Text, facts: list[FactEntry]) -> None:
    _section(t, "Facts", len(facts))
    _none(t, facts)
    for f in facts:
        t.append(f"{INDENT}s{f['session']}  ", style="dim")
        t.append(clean(f["text"]).replace("\n", "\n" + INDENT * 2))
        if f.get("source"):
            t.append(f"  [source {clean(f['source'], oneline=True)}]", style="dim")
        t.append("\n")


def _return_condition(
    t: Text, rc: ReturnConditionEntry | None, retired: list[RequirementEntry] | None = None
) -> None:
    """Required facts with their marks (those retired at this point struck through),
    required actions, the closure test."""
    _section(t, "Return condition")
    for r in retired or []:
        t.append(f"{INDENT}{r['id']}  ", style="strike dim")
        t.append(clean(r["text"], oneline=True), style="strike dim")
        t.append("  (retired at this point)\n", style="italic red")
    if not rc:
        t.append(INDENT + "none\n", style="dim")
        return
    t.append(f"{INDENT}set s{rc['session']}, revision {rc['revision']}\n", style="dim")
    for r in rc["required_facts"]:
        t.append(f"{INDENT}{r['id']}  ")
        t.append(mark(r), style=REQ_STYLE.get(r["status"], ""))
        t.append("  ")
        t.append(clean(r["text"]).replace("\n", "\n" + INDENT * 2))
        t.append("\n")
    if not rc["required_facts"]:
        t.append(INDENT + "required facts: none\n", style="dim")
    for a in rc["required_actions"]:
        t.append(f"{INDENT}action: ", style="dim")
        t.append(clean(a).replace("\n", "\n" + INDENT * 2) + "\n")
    t.append(f"{INDENT}closure test: ", style="dim")
    t.append(clean(rc["closure_test"] or "(none)").replace("\n", "\n" + INDENT * 2) + "\n")


def _checks(t: Text, checks: list[CheckEntry], evidence: dict[str, EvidenceEntry]) -> None:
    """Every check with its result, actor, evidence record status and evidence text."""
    _section(t, "Checks", len(checks))
    _none(t, checks)
    for c in checks:
        t.append(f"{INDENT}s{c['session']} {c['requirement']}  claimed {c['claimed']} → ")
        t.append(c["result"], style=REQ_STYLE.get(c["result"], ""))
        t.append(f"  by {clean(c.get('actor', ''), oneline=True)}", style="dim")
        ev = evidence.get(c.get("evidence_id") or "")
        if ev is not None:
            t.append(f"  evidence {ev['id']}: ")
            t.append(ev["status"], style=EVIDENCE_STYLE.get(ev["status"], ""))
        else:
            t.append("  evidence: none on record", style="red")
        t.append("\n")
        t.append(f"{INDENT * 2}evidence text: ", style="dim")
        t.append(clean(c["evidence_text"]).replace("\n", "\n" + INDENT * 2) + "\n")


def _evidence_records(t: Text, evidence: dict[str, EvidenceEntry]) -> None:
    _section(t, "Evidence records", len(evidence))
    _none(t, evidence)
    for e in evidence.values():
        t.append(f"{INDENT}{e['id']} {e['requirement']} s{e['session']}  ")
        t.append(e["status"], style=EVIDENCE_STYLE.get(e["status"], ""))
        t.append(f"  source {clean(e.get('source_id') or '—', oneline=True)[:16]}", style="dim")
        if m := e.get("match"):
            t.append(
                f"  match at offset {m['offset']} ({clean(m['method'], oneline=True)}) "
                f"by {clean(m['checked_by'], oneline=True)}",
                style="dim",
            )
        elif e.get("reason"):
            t.append(f"  not verified: {clean(e['reason'], oneline=True)}", style="yellow")
        t.append("\n")
        _block(t, e["passage"], indent=INDENT * 2)
        for j in e.get("support", ()):  # support judgements (decision 520), each its judge's
            t.append(f"{INDENT * 2}support: {j['verdict']}", style="bold")
            by = clean(j["by"], oneline=True)
            t.append(f" by {by}{'' if j.get('admitted') else ' (not admitted)'}: ", style="dim")
            t.append(clean(j["grounds"], oneline=True) + "\n")


def _preserved(t: Text, pres: list[PreservedEntry]) -> None:
    _section(t, "Preserved candidates", len(pres))
    _none(t, pres)
    for p in pres:
        delta = "—" if p.get("delta") is None else f"{p['delta']:+.3f}"
        t.append(
            f"{INDENT}s{p['session']}  Δ {delta}  ({p.get('reason', 'preserve')})\n", style="dim"
        )
        _block(t, p["text"], indent=INDENT * 2)


def _downgrades(t: Text, dgs: list[DowngradeEntry]) -> None:
    """Each proposal with its status, new text, grounds and the decision on it."""
    _section(t, "Downgrades", len(dgs))
    _none(t, dgs)
    for d in dgs:
        t.append(
            f"{INDENT}{d['id']} {d['action']} {d['requirement']}  proposed s{d['session']} by "
            f"{clean(d['proposed_by'], oneline=True)}  "
        )
        style = {"pending": "yellow", "approved": "green", "rejected": "red"}.get(d["status"], "")
        t.append(d["status"], style=style)
        t.append("\n")
        if d.get("new_text"):
            t.append(f"{INDENT * 2}new text: ", style="dim")
            t.append(clean(d["new_text"]) + "\n")
        t.append(f"{INDENT * 2}grounds: ", style="dim")
        t.append(clean(d["grounds"]).replace("\n", "\n" + INDENT * 2) + "\n")
        dec = d.get("decision")
        if dec:
            t.append(
                f"{INDENT * 2}{dec['decision']} by {clean(dec['by'], oneline=True)} s{dec['session']} "
                f"{clean(dec.get('ts', ''), oneline=True)}: ",
                style="dim",
            )
            t.append(clean(dec["grounds"]) + "\n")


def _journal(t: Text, events: list[dict[str, Any]] | None) -> None:
    """The node's own journal events with their seqs and whole data (``None``: loading)."""
    if events is None:
        _section(t, "Journal")
        t.append(INDENT + "loading…\n", style="dim italic")
        return
    _section(t, "Journal", len(events))
    for ev in events:
        data = ev.get("data") or {}
        whole = clean(json.dumps(data, ensure_ascii=False, sort_keys=True), oneline=True)
        t.append(f"{INDENT}seq {ev['seq']:>5} s{ev['session']:<2} ", style="dim")
        t.append(ev["kind"], style="bold")
        t.append(f" {clean(ev['actor'], oneline=True)}\n", style="cyan")
        t.append(f"{INDENT * 3}{whole}\n", style="dim")  # whole: the pane wraps it


class NodeDetail(VerticalScroll):
    """A scrollable pane showing :func:`render_detail` for one node."""

    DEFAULT_CSS = """
    NodeDetail { padding: 0 1; }
    NodeDetail > Static { width: 100%; }
    """

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("No node selected.", style="dim"), id="detail-body")

    def show(self, text: Text) -> None:
        """Show ``text``. When it wraps to as many lines as what it replaces (moving through
        similar nodes), only this pane repaints: no layout of the whole screen (decision 276)."""
        body = self.query_one("#detail-body", Static)
        size = body.content_size
        same = False
        if size.width and size.height:
            visual = visualize(body, text, markup=False)
            # what textual's layout computes (Widget.get_content_height passes styles so too)
            height = visual.get_height(body.styles, size.width)  # type: ignore[arg-type]
            same = height == size.height
        body.update(text, layout=not same)

    def clear_node(self, message: str = "No node selected.") -> None:
        self.show(Text(message, style="dim"))
