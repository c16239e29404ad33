"""The human curator between sessions of a running run (``curiosity-tui run LEDGER --curator
human``): the queue in priority order with decayed priority and pulse; set priority, merge
(pick the target), archive, revive — each with a reason, each its own journal batch with actor
``human:<name>``; decide pending downgrades; judge verified passages for support (decision
520); ``c`` continues with the next session.

The screen works on the run's own writable :class:`Ledger` (the runner is paused, waiting for
"continue"); every write happens in a thread worker, one at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Header, Static

from curiosity_tui.contract.support import verified_items
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger import curation
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.node_record import NodeRecord, last_touch, pulse
from curiosity_tui.ledger.queue import decayed_priority, queue
from curiosity_tui.ledger.view import Position, State, build_children, node_num
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import short
from curiosity_tui.widgets.node_detail import NodeDetail, render_detail
from curiosity_tui.widgets.status import STATUS_STYLE, glyph

STATUS_ORDER = {"open": 0, "dormant": 1, "archived": 2, "closed": 3, "merged": 4}


def curator_rows(nodes: dict[str, NodeRecord], t: int, *, merged: bool = False) -> list[NodeRecord]:
    """Open nodes in queue order (curator priority first), then dormant, archived, closed
    (and merged, with ``merged``: they stay reachable, decision 444)."""
    order = queue(nodes.values(), t)
    hidden = ("open",) if merged else ("open", "merged")
    rest = sorted(
        (n for n in nodes.values() if n["status"] not in hidden),
        key=lambda n: (STATUS_ORDER.get(n["status"], 9), node_num(n["id"])),
    )
    return [*order, *rest]


class CuratorScreen(AppScreen):
    HELP_TITLE = "Curator between sessions"
    HELP = (
        "The queue the next session will be forced from. Every action needs a reason and is "
        "journalled with your name and can be taken back (a new journal event, with a "
        "reason); the status line names the key that continues the run."
    )
    DEFAULT_CSS = """
    CuratorScreen #cur-panes { height: 1fr; }
    CuratorScreen #cur-queue { width: 55%; }
    CuratorScreen NodeDetail { width: 1fr; border-left: solid $panel; }
    """
    BINDINGS = [
        # Priority: the form must be up before the app reads the keys typed after these.
        Binding("p", "priority", "Priority…", id="curator.priority", priority=True),
        Binding("M", "merge", "Merge…", id="curator.merge", priority=True),
        Binding("X", "archive", "Archive…", id="curator.archive", priority=True),
        Binding("u", "revive", "Revive…", id="curator.revive", priority=True),
        Binding("z", "revert", "Take back…", id="curator.revert", priority=True),
        Binding("w", "toggle_merged", "Show merged", id="curator.show_merged"),
        Binding("d", "downgrades", "Downgrades", id="curator.downgrades"),
        # not in the footer (it keeps "continue" in view): the status line names it when
        # there is a verified passage to judge
        Binding(
            "E", "support", "Support judgements", id="curator.support", priority=True, show=False
        ),
        Binding("b", "browse", "Browse", id="curator.browse"),
        Binding("ctrl+n", "continue_run", "Continue run", id="curator.continue"),
        Binding("escape", "back", "Back", id="curator.back"),
    ]

    def __init__(
        self, ledger: Ledger, after: int, actor: str, on_continue: Callable[[], None]
    ) -> None:
        super().__init__()
        self.ledger = ledger
        self.after = after
        self.actor = actor
        self.on_continue = on_continue
        self.rows: list[NodeRecord] = []
        self.done = False
        self.actions_taken: list[str] = []
        self.show_merged = False

    @property
    def t(self) -> int:
        return self.after + 1

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="cur-status", classes="hint")
        with Horizontal(id="cur-panes"):
            table: DataTable[str | Text] = DataTable(
                id="cur-queue", cursor_type="row", zebra_stripes=True
            )
            for col in ("#", "id", "status", "★", "priority", "pulse", "last", "question"):
                table.add_column(col, key=col)
            yield table
            yield NodeDetail(id="cur-detail")
        yield Footer()

    def on_mount(self) -> None:
        if not self.is_attached:  # the app is exiting as this screen mounts: its widgets
            return  # may already be going, and nothing is left to show (issue 25)
        self.title = f"curator · {self.ledger.path.name} · after session {self.after}"
        self.query_one(DataTable).focus()
        self.refresh_queue()

    def on_screen_resume(self) -> None:
        if self.is_attached:  # not while the app exits (a resume can come as screens go)
            self.refresh_queue()

    # -- display ----------------------------------------------------------------------
    def refresh_queue(self, keep: str | None = None) -> None:
        nodes = self.ledger.raw_nodes()
        keep = keep or self.current_id()
        self.rows = curator_rows(nodes, self.t, merged=self.show_merged)
        table = self.query_one(DataTable)
        table.clear()
        ranks = {n["id"]: i for i, n in enumerate(queue(nodes.values(), self.t), start=1)}
        for n in self.rows:
            nid = n["id"]
            nstatus = n["status"]
            cp = n.get("curator_priority")
            table.add_row(
                Text(str(ranks.get(nid, "")), justify="right", style="bold cyan"),
                Text(nid, style="bold"),
                Text(f"{glyph(nstatus)} {nstatus}", style=STATUS_STYLE.get(nstatus, "")),
                Text("" if cp is None else str(cp), style="bold magenta"),
                Text(f"{decayed_priority(n, self.t):.3f}", justify="right"),
                Text(str(pulse(n)), justify="right"),
                Text(f"s{last_touch(n)}", justify="right", style="dim"),
                Text(short(n["text"], 60)),
                key=nid,
            )
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))
        pending = sum(
            1 for n in nodes.values() for d in n.get("downgrades", ()) if d["status"] == "pending"
        )
        status = Text(end="")
        status.append(f"Between session {self.after} and {self.t}", style="bold")
        status.append(f" · curating as {self.actor} · {len(ranks)} open in the queue")
        if pending:
            key = self.key_for("curator.downgrades")
            status.append(f" · {pending} downgrade(s) pending ({key})", style="bold yellow")
        unjudged = sum(1 for i in verified_items(nodes) if not i.judgements)
        if unjudged:
            key = self.key_for("curator.support")
            status.append(f" · {unjudged} passage(s) to judge for support ({key})", style="yellow")
        if self.actions_taken:
            status.append(f"\nthis break: {'; '.join(self.actions_taken[-4:])}", style="dim")
        status.append(self._keys_line(), style="dim")
        self.query_one("#cur-status", Static).update(status)
        self._show_detail()

    def _keys_line(self) -> str:
        """The status line's keys, named from the bindings in force (a keymap may move them)."""
        shown = "merged nodes shown" if self.show_merged else "merged nodes hidden"
        return (
            f"\n{self.key_for('curator.continue')} continues with session {self.t} · "
            f"{self.key_for('curator.revert')} takes an action back · "
            f"{self.key_for('curator.show_merged')}: {shown}"
        )

    def key_for(self, binding_id: str) -> str:
        """The key bound to ``binding_id`` on this screen now (after any keymap)."""
        for active in self.active_bindings.values():
            if active.binding.id == binding_id:
                return self.app.get_key_display(active.binding)
        return "?"  # pragma: no cover - every id named here is bound above

    def current_id(self) -> str | None:
        table = self.query_one(DataTable)
        if not self.rows:
            return None
        i = table.cursor_row
        return self.rows[i]["id"] if 0 <= i < len(self.rows) else None

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        nid = self.current_id()
        detail = self.query_one(NodeDetail)
        if nid is None:
            detail.clear_node("The ledger has no nodes.")
            return
        nodes = self.ledger.raw_nodes()
        ranks = {n["id"]: i for i, n in enumerate(queue(nodes.values(), self.t), start=1)}
        state = State(Position(None), nodes, build_children(nodes), {}, ranks, self.t, {})
        detail.show(render_detail(state, nid, [], None, journal=False))

    # -- actions ----------------------------------------------------------------------
    async def _form(self, title: str, kind: str, nid: str, **kw: Any) -> None:
        def done(form: Any) -> None:  # an ActionForm (the reason dialog's result) or None
            if form is not None:
                self._apply(kind, nid, form.reason, form.priority, form.target)

        await self.nav.ask_reason(title, done, **kw)

    def _need(self) -> tuple[str, NodeRecord] | None:
        nid = self.current_id()
        if nid is None:
            return None
        return nid, self.ledger.raw_nodes()[nid]

    async def action_priority(self) -> None:
        got = self._need()
        if got:
            nid, n = got
            await self._form(
                f"Set the curator priority of {nid}",
                "priority",
                nid,
                priority=True,
                priority_default=n.get("curator_priority") or 1,
            )

    async def action_merge(self) -> None:
        got = self._need()
        if got:
            nid, _n = got
            targets = [
                (m["id"], m["text"])
                for m in sorted(self.ledger.raw_nodes().values(), key=lambda m: node_num(m["id"]))
                if m["id"] != nid and m["status"] not in ("merged", "archived")
            ]
            await self._form(f"Merge {nid} into another node", "merge", nid, targets=targets)

    async def action_archive(self) -> None:
        got = self._need()
        if got:
            await self._form(f"Archive {got[0]}", "archive", got[0])

    async def action_revive(self) -> None:
        got = self._need()
        if got:
            nid, n = got
            if n["status"] not in ("dormant", "archived"):
                self.notify(f"{nid} is {n['status']}; only dormant or archived nodes revive.")
                return
            await self._form(f"Revive {nid}", "revive", nid)

    async def action_revert(self) -> None:
        from curiosity_tui.ledger.curation_revert import curator_actions

        open_actions = [a for a in curator_actions(self.ledger) if a.reverted_by is None]
        if not open_actions:
            self.notify("No curator action to take back.")
            return
        targets = [(str(a.seq), a.describe().split(": ", 1)[1]) for a in reversed(open_actions)]
        await self._form(
            "Take back a curator action", "revert", "", targets=targets, target_label="Take back"
        )

    def action_toggle_merged(self) -> None:
        self.show_merged = not self.show_merged
        self.refresh_queue()

    @work(thread=True, exclusive=True, group="curate")
    def _apply(
        self, kind: str, nid: str, reason: str, priority: int | None, target: str | None
    ) -> None:
        led = self.ledger
        try:
            if kind == "priority":
                curation.set_priority(led, nid, priority, reason, self.actor)
                what = f"{nid} priority {'cleared' if priority is None else priority}"
            elif kind == "merge":
                assert target is not None
                curation.merge(led, nid, target, reason, self.actor)
                what = f"{nid} merged into {target}"
            elif kind == "archive":
                curation.archive(led, nid, reason, self.actor)
                what = f"{nid} archived"
            elif kind == "revert":
                from curiosity_tui.ledger.curation_revert import revert

                assert target is not None
                act = revert(led, int(target), reason, self.actor)
                nid = act.node
                what = f"took back seq {act.seq} ({act.node} {act.action})"
            else:
                curation.revive(led, nid, reason, self.actor)
                what = f"{nid} revived"
        except CuriosityError as err:
            self.app.call_from_thread(self.notify, str(err), severity="error", title="Not done")
            return
        self.actions_taken.append(what)
        self.app.call_from_thread(self.notify, f"{what} (seq {led.last_seq})", title="Journalled")
        self.app.call_from_thread(self._refresh_if_here, nid)

    def _refresh_if_here(self, keep: str | None) -> None:
        """After a write in the worker: the queue again, unless the screen has left or the app
        is exiting meanwhile (its widgets may be gone; checked in the app's thread)."""
        if self.is_mounted and self.is_attached:
            self.refresh_queue(keep)

    def action_downgrades(self) -> None:
        self.nav.open_downgrades(self.ledger.path, ledger=self.ledger)

    async def action_support(self) -> None:
        await self.nav.open_support(self.ledger.path, ledger=self.ledger)

    def action_browse(self) -> None:
        self.nav.open_ledger(self.ledger.path, node=self.current_id())

    def action_back(self) -> None:
        go_on = self.key_for("curator.continue")
        self.notify(f"The run waits for you: {go_on} continues it, q quits (every action is kept).")

    def action_continue_run(self) -> None:
        if self.done:
            return
        busy = [
            w for w in self.app.workers if w.node is self and w.group == "curate" and w.is_running
        ]
        if busy:
            self.notify("An action is still being written; continue in a moment.")
            return
        self.done = True
        self.dismiss()
        self.on_continue()
