"""Support judgements between sessions (decision 520): every verified passage with its
requirement and the judgements it has; ``y`` opens the form (yes / no / partly, grounds).

Standalone the ledger is read-only except for the moment a judgement is written (a thread
worker takes the writer lock, commits one batch and releases it); inside a human-curated run
the curator screen passes the run's own open ledger.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Header, Static

from curiosity_tui.contract import support as sp
from curiosity_tui.contract.downgrades import is_human
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import clean, short
from curiosity_tui.widgets.status import REQ_STYLE

VERDICT_STYLE = {"yes": "green", "no": "red", "partly": "yellow"}


def judge_name(app: object) -> str:
    """``human:<name>``: the app's curator name, else $CURIOSITY_CURATOR, $USER, 'curator'."""
    name = (
        getattr(app, "curator_name", None)
        or os.environ.get("CURIOSITY_CURATOR")
        or os.environ.get("USER")
        or "curator"
    )
    name = "".join(str(name).split()).removeprefix("human:") or "curator"
    return f"human:{name}"


def item_detail(i: sp.SupportItem) -> Text:
    t = Text(end="")
    t.append(f"{i.evidence_id}  {i.node}/{i.requirement}  ", style="bold")
    t.append(f"[{i.requirement_status}]\n", style=REQ_STYLE.get(i.requirement_status, ""))
    t.append("question: ", style="dim")
    t.append(clean(i.node_text) + "\n")
    t.append("requirement: ", style="dim")
    t.append(clean(i.requirement_text) + "\n")
    t.append(f"passage (verified, s{i.session}):\n", style="dim")
    t.append("    " + clean(i.passage).replace("\n", "\n    ") + "\n")
    t.append(f"\nJudgements ({len(i.judgements)})\n", style="bold underline")
    if not i.judgements:
        t.append("    support not judged\n", style="dim")
    for j in i.judgements:
        t.append(f"    {j['verdict']}", style=VERDICT_STYLE.get(j["verdict"], ""))
        kind = "person" if is_human(j["by"]) else "model"
        admitted = "" if j.get("admitted") else ", not admitted"
        t.append(f" by {clean(j['by'])} ({kind}{admitted}), s{j['session']}:\n", style="dim")
        t.append("        " + clean(j["grounds"]) + "\n")
    return t


class SupportScreen(AppScreen):
    HELP_TITLE = "Support judgements"
    HELP = (
        "Verified passages and whether they establish their requirement. `y` judges the "
        "highlighted one: supports, does not, or partly, with grounds of at least a sentence, "
        "journalled with your name. Under evidence=supported only a yes satisfies."
    )
    DEFAULT_CSS = """
    SupportScreen #sp-table { width: 50%; height: 1fr; }
    SupportScreen #sp-detail { width: 1fr; padding: 0 1; border-left: solid $panel; }
    """
    BINDINGS = [
        # Priority: the form must be up before the app reads the keys typed after it.
        Binding("y", "judge", "Judge support…", id="support.judge", priority=True),
        Binding("r", "reload", "Reload", id="support.reload"),
        Binding("escape", "back", "Back", id="support.back"),
    ]

    def __init__(self, path: Path, *, ledger: Ledger | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.live = ledger  # the run's writable ledger, when inside a curated run
        self.items: list[sp.SupportItem] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="sp-status", classes="hint")
        with Horizontal():
            table: DataTable[str | Text] = DataTable(id="sp-table", cursor_type="row")
            for col in ("evidence", "node", "req", "status", "judged", "passage"):
                table.add_column(col)
            yield table
            with VerticalScroll(id="sp-detail"):
                yield Static("", id="sp-detail-body")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"support · {self.path.name}"
        self.query_one(DataTable).focus()
        if self.live is not None:  # the run's ledger is in memory: listed before the next key
            self._show(sp.verified_items(self.live.raw_nodes()), self.live.meta.contract)
        else:
            self.reload()

    @work(thread=True, exclusive=True, group="sp-load")
    def reload(self) -> None:
        try:
            if self.live is not None:
                items, contract = sp.verified_items(self.live.raw_nodes()), self.live.meta.contract
            else:
                with Ledger.open(self.path) as led:
                    items, contract = sp.verified_items(led.raw_nodes()), led.meta.contract
        except CuriosityError as err:
            self.app.call_from_thread(self.notify, str(err), severity="error")
            return
        self.app.call_from_thread(self._show, items, contract)

    def _show(self, items: list[sp.SupportItem], contract: str) -> None:
        self.items = items
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        for i in items:
            verdicts = ", ".join(j["verdict"] for j in i.judgements) or "—"
            table.add_row(
                Text(i.evidence_id, style="bold"),
                Text(i.node),
                Text(i.requirement),
                Text(i.requirement_status, style=REQ_STYLE.get(i.requirement_status, "")),
                Text(verdicts),
                Text(short(i.passage, 40)),
                key=f"{i.node}/{i.evidence_id}",
            )
        if items:
            table.move_cursor(row=min(max(row, 0), len(items) - 1))
        unjudged = sum(1 for i in items if not i.judgements)
        self.query_one("#sp-status", Static).update(
            Text(
                f"{len(items)} verified passage(s), {unjudged} not judged · contract "
                f"{contract} · you judge as {judge_name(self.app)}"
            )
        )
        self._show_detail()

    def _current(self) -> sp.SupportItem | None:
        i = self.query_one(DataTable).cursor_row
        return self.items[i] if 0 <= i < len(self.items) else None

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        item = self._current()
        body = self.query_one("#sp-detail-body", Static)
        if item is None:
            body.update(Text("No verified passages to judge.", style="dim"))
        else:
            body.update(item_detail(item))

    @on(DataTable.RowSelected)
    async def _selected(self, event: DataTable.RowSelected) -> None:
        await self.action_judge()

    async def action_judge(self) -> None:
        item = self._current()
        if item is None:
            self.notify("No verified passage to judge.", severity="warning")
            return

        def done(result: tuple[str, str] | None) -> None:
            if result is not None:
                self._write(item, result[0], result[1])

        await self.nav.ask_support(item, done)

    @work(thread=True, exclusive=True, group="sp-write")
    def _write(self, item: sp.SupportItem, verdict: str, grounds: str) -> None:
        by = judge_name(self.app)
        try:
            if self.live is not None:
                ev = sp.judge(
                    self.live, item.node, item.evidence_id, verdict, grounds=grounds, by=by
                )
            else:
                with Ledger.open(self.path, write=True) as led:
                    ev = sp.judge(led, item.node, item.evidence_id, verdict, grounds=grounds, by=by)
        except CuriosityError as err:
            self.app.call_from_thread(self.notify, str(err), severity="error", title="Not recorded")
            return
        self.app.call_from_thread(
            self.notify,
            f"{item.node}/{item.evidence_id}: {verdict} by {by}; {ev.requirement} is {ev.result}",
            title="Support judged",
        )
        self.app.call_from_thread(self.reload)

    def action_reload(self) -> None:
        self.reload()

    def action_back(self) -> None:
        self.dismiss()
