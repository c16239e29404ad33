"""The closure audit (S10) of one ledger: each finding expands into its journal trail (seq by
seq, the finding's own seqs marked ▶) and, for retired requirements, the later session inputs
that did or did not still carry it. The pane below shows the highlighted finding's sentence
in full (wrapped) or, for a journal line, the whole event; Enter on a journal line puts it
there, ``o`` opens the finding's node in the browser."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Header, Static, Tree
from textual.widgets.tree import TreeNode

from curiosity_tui.errors import CuriosityError
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import clean, short

KIND_TITLE = {
    "unverified_satisfied": "(a) satisfied without verified evidence",
    "retired_after_unverified": "(b) retired after an unverified mark",
    "closed_over_unmet": "(c) closed while a requirement stood not satisfied",
    "closed_without_verified_evidence": "(d) closed with facts but no verified evidence",
    "verified_not_supporting": "(e) verified but not supporting (judged no or partly)",
    "verified_support_unjudged": "(f) verified, support not judged",
}
#: shown in the counts only when a ledger has support findings or runs evidence=supported,
#: so the audit of a ledger from before the judgements reads as it did (decision 520)
SUPPORT_KINDS = {"verified_not_supporting", "verified_support_unjudged"}
RC_KINDS = {"return_condition_set", "return_condition_revised", "node_closed", "closure_blocked"}


@dataclass(frozen=True)
class EventLeaf:
    """A journal line of a finding's trail: Enter shows ``event`` whole."""

    finding: Any
    event: dict[str, Any]


def wrap_lines(text: str, width: int, indent: str = "  ") -> list[str]:
    """``text`` on one line, wrapped to ``width`` columns (at least 30), each line indented."""
    return textwrap.wrap(
        clean(text, oneline=True),
        width=max(30, width),
        initial_indent=indent,
        subsequent_indent=indent,
    ) or [indent]


def event_text(ev: dict[str, Any]) -> Text:
    """The whole event: seq, session, kind, node, actor and its data as indented JSON."""
    t = Text(end="")
    t.append(f"seq {ev['seq']}  s{ev['session']}  ", style="dim")
    t.append(ev["kind"], style="bold")
    t.append(f"  node {clean(ev.get('node') or '-', oneline=True)}", style="bold")
    t.append(f"  by {clean(ev['actor'], oneline=True)}\n", style="cyan")
    t.append(clean(json.dumps(ev["data"], ensure_ascii=False, sort_keys=True, indent=2)))
    return t


def trail(finding: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The node's events that bear on the finding, up to its last seq (and its own seqs)."""
    last = max(finding.seqs)
    out = []
    for ev in events:
        if ev["node"] != finding.node:
            continue
        d = ev["data"]
        if ev["seq"] in finding.seqs:
            out.append(ev)
            continue
        if ev["seq"] > last:
            continue
        req = finding.requirement
        if req is None:
            if ev["kind"] in RC_KINDS | {
                "fact_attached",
                "evidence_added",
                "evidence_verified",
                "dependency_checked",
            }:
                out.append(ev)
        elif (
            d.get("requirement") == req
            or ev["kind"] in RC_KINDS
            or (ev["kind"] == "evidence_verified")
        ):
            out.append(ev)
    return out


def event_line(ev: dict[str, Any], mark: bool, width: int = 90) -> Text:
    """One journal line of a trail, its data cut to ``width`` columns (the pane's room)."""
    t = Text(no_wrap=True, end="")
    t.append("▶ " if mark else "  ", style="bold red")
    t.append(f"seq {ev['seq']:>5} s{ev['session']:<2} ", style="dim")
    t.append(ev["kind"], style="bold" if mark else "")
    t.append(f" {clean(ev['actor'], oneline=True)} ", style="cyan")
    room = max(30, width - t.cell_len)
    t.append(short(json.dumps(ev["data"], ensure_ascii=False, sort_keys=True), room), style="dim")
    return t


class AuditScreen(AppScreen):
    HELP_TITLE = "Closure audit"
    HELP = (
        "Findings of the closure audit (S10) — the same as `curiosity-tui audit LEDGER`. "
        "Expand a finding to read its journal trail; Enter on a journal line shows the whole "
        "event below; o opens the node in the browser."
    )
    DEFAULT_CSS = """
    AuditScreen Tree { height: 1fr; }
    AuditScreen #audit-pane { height: auto; max-height: 40%; border-top: solid $accent;
        padding: 0 1; }
    """
    BINDINGS = [
        Binding("o", "jump", "Open node", id="audit.jump"),
        Binding("e", "expand_all", "Expand all", id="audit.expand_all"),
        Binding("r", "reload", "Reload", show=False, id="audit.reload"),
        Binding("escape", "back", "Back", id="audit.back"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.report: Any = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("auditing…", style="dim"), id="audit-status", classes="hint")
        tree: Tree[Any] = Tree(Text("findings"), id="audit-tree")
        tree.show_root = False
        tree.guide_depth = 3
        yield tree
        with VerticalScroll(id="audit-pane"):
            yield Static(Text("", style="dim"), id="audit-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"audit · {self.path.name}"
        self.query_one(Tree).focus()
        self.reload()

    @work(thread=True, exclusive=True, group="audit")
    def reload(self) -> None:
        from curiosity_tui.contract.audit import audit
        from curiosity_tui.ledger.ledger import Ledger
        from curiosity_tui.ledger.view import LedgerView

        try:
            with Ledger.open(self.path) as led:
                report = audit(led)
            view = LedgerView(self.path)
            try:
                index = view.events_index()
            finally:
                view.close()
        except CuriosityError as err:
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._show, report, index)

    def _failed(self, message: str) -> None:
        self.query_one("#audit-status", Static).update(Text(message, style="red"))

    def _show(self, report: Any, index: dict[str, list[dict[str, Any]]]) -> None:
        self.report = report
        counts = report.counts()
        status = Text(f"{len(report.findings)} finding(s) · contract {report.contract}")
        supported = "evidence=supported" in report.contract
        for kind, title in KIND_TITLE.items():
            if kind in SUPPORT_KINDS and not (supported or counts.get(kind)):
                continue
            status.append(
                f"\n  {title}: {counts.get(kind, 0)}", style="bold" if counts.get(kind) else "dim"
            )
        self.query_one("#audit-status", Static).update(status)
        tree = self.query_one(Tree)
        tree.clear()
        tree.root.expand()
        if not report.findings:
            tree.root.add_leaf(Text("No findings.", style="green"))
            return
        for f in report.findings:
            label = Text(no_wrap=True, end="")
            label.append(f"{f.kind.split('_')[0]:<10} ", style="bold red")
            if getattr(f, "breach", False):  # the run's contract forbids it (decision 231)
                label.append("BREACH ", style="bold reverse red")
            label.append(f"{f.node}{'/' + f.requirement if f.requirement else ''} ", style="bold")
            label.append(f"seq {', '.join(str(s) for s in f.seqs)} ", style="cyan")
            label.append(short(f.detail, max(60, self.size.width - label.cell_len - 10)))
            node: TreeNode[Any] = tree.root.add(label, data=f)
            node.add_leaf(Text(KIND_TITLE.get(f.kind, f.kind), style="italic"), data=f)
            for line in wrap_lines(f.detail, self.size.width - 10):
                node.add_leaf(Text(line), data=f)
            for ev in trail(f, index.get(f.node, [])):
                ev_line = event_line(ev, ev["seq"] in f.seqs, width=self.size.width - 12)
                node.add_leaf(ev_line, data=EventLeaf(f, ev))
            if f.kind == "retired_after_unverified":
                carried = ", ".join(f"s{s}" for s in f.carried_in) or "none"
                absent = ", ".join(f"s{s}" for s in f.absent_in) or "none"
                node.add_leaf(
                    Text(f"  later inputs still carrying it: {carried}", style="yellow"), data=f
                )
                node.add_leaf(Text(f"  later inputs without it: {absent}", style="yellow"), data=f)
        tree.move_cursor_to_line(0)

    def _current(self) -> Any:
        node = self.query_one(Tree).cursor_node
        data = None if node is None else node.data
        return data.finding if isinstance(data, EventLeaf) else data

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        data = event.node.data
        pane = self.query_one("#audit-detail", Static)
        if isinstance(data, EventLeaf):
            pane.update(Text("Enter: the whole event", style="dim italic"))
        elif data is not None:
            t = Text(f"{data.node}{'/' + data.requirement if data.requirement else ''}  ")
            t.append(KIND_TITLE.get(data.kind, data.kind) + "\n", style="italic")
            t.append(clean(data.detail))
            pane.update(t)

    def action_jump(self) -> None:
        f = self._current()
        if f is None:
            return
        # the browser right below (when it shows this ledger) goes there; else a new one opens
        self.nav.show_node(self.path, f.node, closing=self)

    def action_expand_all(self) -> None:
        for child in self.query_one(Tree).root.children:
            child.expand()

    def action_reload(self) -> None:
        self.reload()

    def action_back(self) -> None:
        self.dismiss()

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[Any]) -> None:
        if event.node.parent is not None and event.node.parent.is_root:
            return  # Enter on a finding toggles its trail
        if isinstance(event.node.data, EventLeaf):
            self.query_one("#audit-detail", Static).update(event_text(event.node.data.event))
            return
        self.action_jump()
