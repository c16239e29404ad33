"""Downgrade decisions (S3, pilot-02): pending proposals with the requirement, its node, its
check history and evidence, and the proposer's grounds; approve or reject in a modal form that
will not submit without grounds. Decided ones are listed with who, when and why.

Standalone (from the workspace or browser) the ledger is read-only except for the moment a
decision is written (a thread worker takes the writer lock, commits one batch and releases
it). Inside a human-curated run the curator screen passes the run's own open ledger.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Header, Static

from curiosity_tui.contract import downgrades as dg
from curiosity_tui.errors import CuriosityError, InputError
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import clean, short
from curiosity_tui.widgets.status import EVIDENCE_STYLE, REQ_STYLE


def human_actor(app: object) -> str:
    """``human:<name>``: the app's curator name, else $CURIOSITY_CURATOR, $USER, 'curator'."""
    name = (
        getattr(app, "curator_name", None)
        or os.environ.get("CURIOSITY_CURATOR")
        or os.environ.get("USER")
        or "curator"
    )
    name = "".join(str(name).split()) or "curator"
    return f"human:{name}"


def proposal_detail(p: dg.PendingDowngrade) -> Text:
    t = Text(end="")
    t.append(f"{p.id}  {p.action} {p.requirement} of {p.node}  ", style="bold")
    style = {"pending": "yellow", "approved": "green", "rejected": "red"}.get(p.status, "")
    t.append(p.status + "\n", style=style)
    t.append("node: ", style="dim")
    t.append(clean(p.node_text) + "\n")
    t.append("requirement: ", style="dim")
    t.append(clean(p.requirement_text))
    t.append(f"  [{p.requirement_status}]\n", style=REQ_STYLE.get(p.requirement_status, ""))
    if p.new_text:
        t.append("weaker text proposed: ", style="dim")
        t.append(clean(p.new_text) + "\n")
    t.append(f"proposed by {clean(p.proposed_by)} in session {p.session}; grounds:\n", style="dim")
    t.append("    " + clean(p.grounds).replace("\n", "\n    ") + "\n")
    if p.decision:
        d = p.decision
        t.append(
            f"\n{d['decision']} by {clean(d['by'])} in session {d['session']} at {clean(d.get('ts', ''))}:\n",
            style="bold",
        )
        t.append("    " + clean(d["grounds"]).replace("\n", "\n    ") + "\n")
    t.append(f"\nCheck history of {p.requirement} ({len(p.checks)})\n", style="bold underline")
    if not p.checks:
        t.append("    never checked\n", style="dim")
    for c in p.checks:
        t.append(f"    s{c['session']} claimed {c['claimed']} → ")
        t.append(c["result"], style=REQ_STYLE.get(c["result"], ""))
        t.append(f" by {clean(c.get('actor', ''))}\n", style="dim")
        t.append("        " + clean(c["evidence_text"]).replace("\n", "\n        ") + "\n")
    t.append(f"\nEvidence records ({len(p.evidence)})\n", style="bold underline")
    if not p.evidence:
        t.append("    none\n", style="dim")
    for e in p.evidence:
        t.append(f"    {e['id']} s{e['session']} ")
        t.append(e["status"], style=EVIDENCE_STYLE.get(e["status"], ""))
        t.append("\n        " + clean(e["passage"]).replace("\n", "\n        ") + "\n")
    return t


class DowngradesScreen(AppScreen):
    HELP_TITLE = "Downgrades"
    HELP = (
        "Proposals to waive or weaken one requirement. Only a human curator decides; each "
        "decision needs grounds of at least a sentence and is journalled with your name."
    )
    DEFAULT_CSS = """
    DowngradesScreen #dg-lists { width: 50%; }
    DowngradesScreen #dg-pending { height: 1fr; }
    DowngradesScreen #dg-decided { height: 1fr; }
    DowngradesScreen #dg-detail { width: 1fr; padding: 0 1; border-left: solid $panel; }
    """
    BINDINGS = [
        # Priority: the form must be up before the app reads the keys typed after these.
        Binding("a", "decide('approve')", "Approve…", id="downgrades.approve", priority=True),
        Binding("x", "decide('reject')", "Reject…", id="downgrades.reject", priority=True),
        Binding("r", "reload", "Reload", id="downgrades.reload"),
        Binding("escape", "back", "Back", id="downgrades.back"),
    ]

    def __init__(self, path: Path, *, ledger: Ledger | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.live = ledger  # the run's writable ledger, when inside a curated run
        self.items: list[dg.PendingDowngrade] = []
        self.pending: list[dg.PendingDowngrade] = []
        self.decided: list[dg.PendingDowngrade] = []
        #: the proposal decided last on this screen: its details stay in the pane
        self.last_decided: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="dg-status", classes="hint")
        with Horizontal():
            with Vertical(id="dg-lists"):
                yield Static("Pending", classes="pane-title")
                pending: DataTable[str | Text] = DataTable(id="dg-pending", cursor_type="row")
                for col in ("id", "node", "req", "action", "proposed by", "s"):
                    pending.add_column(col)
                yield pending
                yield Static("Decided", classes="pane-title")
                decided: DataTable[str | Text] = DataTable(id="dg-decided", cursor_type="row")
                for col in ("id", "node", "req", "decision", "by", "s", "grounds"):
                    decided.add_column(col)
                yield decided
            with VerticalScroll(id="dg-detail"):
                yield Static("", id="dg-detail-body")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"downgrades · {self.path.name}"
        self.query_one("#dg-pending", DataTable).focus()
        self.reload()

    @work(thread=True, exclusive=True, group="dg-load")
    def reload(self) -> None:
        try:
            if self.live is not None:
                items = dg.list_downgrades(self.live)
                contract = self.live.meta.contract
            else:
                with Ledger.open(self.path) as led:
                    items = dg.list_downgrades(led)
                    contract = led.meta.contract
        except CuriosityError as err:
            self.app.call_from_thread(self.notify, str(err), severity="error")
            return
        self.app.call_from_thread(self._show, items, contract)

    def _show(self, items: list[dg.PendingDowngrade], contract: str) -> None:
        self.items = items
        self.pending = [p for p in items if p.status == "pending"]
        self.decided = [p for p in items if p.status != "pending"]
        pt = self.query_one("#dg-pending", DataTable)
        pt.clear()
        for p in self.pending:
            pt.add_row(
                Text(p.id, style="bold"),
                Text(p.node),
                Text(p.requirement),
                Text(p.action),
                Text(short(p.proposed_by, 18)),
                Text(str(p.session)),
                key=p.id,
            )
        dt = self.query_one("#dg-decided", DataTable)
        dt.clear()
        for p in self.decided:
            d: Mapping[str, Any] = p.decision or {}
            dt.add_row(
                Text(p.id, style="bold"),
                Text(p.node),
                Text(p.requirement),
                Text(
                    str(d.get("decision", p.status)),
                    style="green" if p.status == "approved" else "red",
                ),
                Text(short(d.get("by", ""), 18)),
                Text(str(d.get("session", ""))),
                Text(short(d.get("grounds", ""), 40)),
                key=p.id,
            )
        note = _contract_note(contract)
        self.query_one("#dg-status", Static).update(
            Text(
                f"{len(self.pending)} pending, {len(self.decided)} decided · you decide as "
                f"{human_actor(self.app)}{note}"
            )
        )
        self._show_detail()

    def _current(self) -> dg.PendingDowngrade | None:
        focused = self.focused
        if isinstance(focused, DataTable) and focused.id == "dg-decided":
            rows = self.decided
        else:
            focused = self.query_one("#dg-pending", DataTable)
            rows = self.pending
        if not rows:
            return None
        i = focused.cursor_row
        return rows[i] if 0 <= i < len(rows) else None

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def on_descendant_focus(self) -> None:
        self._show_detail()  # Tab between the lists shows the row under the cursor there

    def _show_detail(self) -> None:
        p = self._current()
        body = self.query_one("#dg-detail-body", Static)
        done = next((d for d in self.decided if d.id == self.last_decided), None)
        t = Text(end="")
        if p is None and done is None:
            t.append("No downgrade proposals." if not self.items else "", style="dim")
        if p is not None:
            t.append_text(proposal_detail(p))
        if done is not None and done is not p:
            t.append("\n" if p is not None else "")
            t.append("Just decided\n", style="bold reverse")
            t.append_text(proposal_detail(done))
        body.update(t)

    @on(DataTable.RowSelected, "#dg-pending")
    async def _selected(self, event: DataTable.RowSelected) -> None:
        await self.action_decide("approve")

    async def action_decide(self, decision: str) -> None:
        p = self._current()
        if p is None or p.status != "pending":
            self.notify("Select a pending proposal.", severity="warning")
            return

        def done(result: tuple[str, str] | None) -> None:
            if result is not None:
                self._write(p.id, result[0], result[1])

        await self.nav.ask_decision(p, decision, done)

    @work(thread=True, exclusive=True, group="dg-write")
    def _write(self, proposal: str, decision: str, grounds: str) -> None:
        actor = human_actor(self.app)
        try:
            if self.live is not None:
                dg.decide(self.live, proposal, decision, grounds=grounds, actor=actor)  # type: ignore[arg-type]
            else:
                with Ledger.open(self.path, write=True) as led:
                    dg.decide(led, proposal, decision, grounds=grounds, actor=actor)  # type: ignore[arg-type]
        except CuriosityError as err:
            self.app.call_from_thread(self.notify, str(err), severity="error", title="Not recorded")
            return
        self.last_decided = proposal
        self.app.call_from_thread(
            self.notify,
            f"{proposal} {'approved' if decision == 'approve' else 'rejected'} by {actor}",
            title="Downgrade decided",
        )
        self.app.call_from_thread(self.reload)

    def action_reload(self) -> None:
        self.reload()

    def action_back(self) -> None:
        self.dismiss()


def _contract_note(contract: str) -> str:
    """What the run's closure switch means for the downgrades listed (empty under pilot-02)."""
    from curiosity_tui.contract_switches import switches_of

    try:
        closure = switches_of(contract).closure
    except InputError:
        return ""
    if closure == "binding+downgrade":
        return ""
    if closure == "unconditional":
        return f"  (this run's contract is {contract}: downgrades are recorded, closures never wait for them)"
    return f"  (this run's contract is {contract}: binding with no downgrade route)"
