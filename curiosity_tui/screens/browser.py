"""The ledger browser: the node tree by parent, a node's full detail, and the session slider.

The ledger is opened read-only in a thread worker; the tree is built lazily (only expanded
levels, in chunks); the journal index for the detail pane's "Journal" section is built in a
second worker after the tree is on screen. ``[`` and ``]`` slide through the snapshots (the
ledger as it stood after each session); what changed at that point is tagged NEW / CHG.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Header, Static

from curiosity_tui.errors import CuriosityError
from curiosity_tui.gcpause import gc_paused
from curiosity_tui.ledger.view import LedgerView, State, node_num
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import clean, short
from curiosity_tui.widgets.node_detail import NodeDetail, render_detail
from curiosity_tui.widgets.node_tree import TREE_FILTERS, LedgerTree, filter_matches
from curiosity_tui.widgets.session_bar import SessionBar

_UNSET = object()


class BrowserScreen(AppScreen):
    HELP_TITLE = "Ledger browser"
    HELP = (
        "The node tree by parent (status glyph and word, pulse p, queue rank #, curator "
        "priority ★) and the selected node's full record. [ and ] show the ledger as it stood "
        "after each session; NEW/CHG mark what changed at that point."
    )
    DEFAULT_CSS = """
    BrowserScreen #panes { height: 1fr; }
    BrowserScreen LedgerTree { width: 45%; min-width: 40; border-right: solid $panel; }
    BrowserScreen NodeDetail { width: 1fr; }
    BrowserScreen #browser-status { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("left_square_bracket", "slide(-1)", "Earlier", id="browser.prev_session"),
        Binding("right_square_bracket", "slide(1)", "Later", id="browser.next_session"),
        Binding(
            "left_curly_bracket",
            "slide_to(0)",
            "First session",
            show=False,
            id="browser.first_session",
        ),
        Binding("right_curly_bracket", "slide_to(-1)", "Now", show=False, id="browser.now"),
        Binding("slash", "search", "Search", id="browser.search"),
        Binding("n", "next_match(1)", "Next match", show=False, id="browser.next_match"),
        Binding("N", "next_match(-1)", "Previous match", show=False, id="browser.prev_match"),
        Binding("c", "next_changed(1)", "Next change", id="browser.next_changed"),
        Binding("C", "next_changed(-1)", "Previous change", show=False, id="browser.prev_changed"),
        Binding("v", "rendering", "Session input", id="browser.rendering"),
        Binding("f", "cycle_filter(1)", "Filter tree", id="browser.filter"),
        Binding("F", "cycle_filter(-1)", "Previous filter", show=False, id="browser.prev_filter"),
        Binding("tab", "switch_pane", "Tree/detail", show=False, id="browser.switch"),
        Binding("A", "audit", "Audit", id="browser.audit"),
        Binding("d", "downgrades", "Downgrades", id="browser.downgrades"),
        Binding("E", "support", "Support judgements", id="browser.support", show=False),
        Binding("r", "reload", "Reload", show=False, id="browser.reload"),
        Binding("escape", "back", "Back", id="browser.back"),
    ]

    def __init__(self, path: Path, node: str | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.view: LedgerView | None = None
        self.index = 0
        self.state: State | None = None
        self.pending_node = node
        self.matches: list[str] = []
        self.match_at = -1
        self._detail_for: object = _UNSET

    def compose(self) -> ComposeResult:
        yield Header()
        yield SessionBar(Text("loading…", style="dim"), id="session-bar")
        with Horizontal(id="panes"):
            yield LedgerTree(id="tree")
            yield NodeDetail(id="detail")
        yield Static("", id="browser-status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"ledger {self.path.name}"
        self.query_one(LedgerTree).loading = True
        self.load()

    def on_unmount(self) -> None:
        if self.view is not None:
            self.view.close()

    # -- loading ------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="load")
    def load(self, index: int | None = None) -> None:
        try:
            with gc_paused():  # the node table is a few hundred thousand acyclic objects
                view = LedgerView(self.path)
                idx = len(view.positions) - 1 if index is None else index
                state = view.state(min(idx, len(view.positions) - 1))
        except CuriosityError as err:
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._loaded, view, state, min(idx, len(view.positions) - 1))
        # the journal index for the detail pane's Journal section, once the tree is painted
        self.app.call_from_thread(self.call_after_refresh, self._index_events, view)

    @work(thread=True, exclusive=True, group="events")
    def _index_events(self, view: LedgerView) -> None:
        try:
            with gc_paused():
                view.events_index()
        except CuriosityError as err:  # the tree stays; the Journal section says "loading"
            self.app.call_from_thread(
                self.notify, f"journal events not shown: {err}", severity="warning"
            )
            return
        self.app.call_from_thread(self._events_ready, view)

    def _failed(self, message: str) -> None:
        self.query_one(LedgerTree).loading = False
        self.query_one(NodeDetail).clear_node(f"Cannot open {self.path}: {message}")
        self.notify(message, severity="error", title="Cannot open ledger")

    def _loaded(self, view: LedgerView, state: State, index: int) -> None:
        old = self.view
        self.view = view
        if old is not None and old is not view:
            old.close()
        meta = view.meta
        self.sub_title = (
            f"{meta.config} · {meta.contract} · curator {meta.curator} · "
            f"{view.last_session} session(s)"
        )
        # a scripted run is labelled here and in its metadata, never inside its texts
        if meta.options.get("scripted"):
            self.sub_title += " · scripted replies, no model"
        elif meta.model:  # a real model's run says which model wrote it
            self.sub_title += f" · model {meta.model}"
        if meta.endpoint is not None:  # what the endpoint probe found (format, ctx, embeddings)
            self.sub_title += f" · {meta.endpoint.summary()}"
        for change in meta.server_changes:  # "the server changed between s2 and s3: …"
            self.sub_title += f" · {clean(change.summary(), oneline=True)}"
        tree = self.query_one(LedgerTree)
        tree.loading = False
        cursor = self.pending_node or tree.current_id
        self.pending_node = None
        self._apply(state, index, cursor)
        tree.focus()

    def _events_ready(self, view: LedgerView) -> None:
        if view is self.view and self.is_attached:  # not replaced by a reload, not closed
            self._show_detail(self.query_one(LedgerTree).current_id)

    def _apply(self, state: State, index: int, cursor: str | None) -> None:
        assert self.view is not None
        self.state = state
        self.index = index
        new = sum(1 for v in state.changed.values() if v == "new")
        self.query_one(SessionBar).show(
            self.view.positions, index, self.view.last_session, new, len(state.changed) - new
        )
        tree = self.query_one(LedgerTree)
        tree.show_state(state, cursor)
        self._show_detail(tree.current_id)
        self._status()

    def _status(self, extra: str = "") -> None:
        if self.state is None:
            return
        counts: dict[str, int] = {}
        for n in self.state.nodes.values():
            counts[n["status"]] = counts.get(n["status"], 0) + 1
        parts = [f"{len(self.state.nodes)} nodes"] + [f"{v} {k}" for k, v in sorted(counts.items())]
        pos = self.view.positions[self.index] if self.view is not None else None
        mind = self.view.mind(pos.session) if self.view and pos and pos.session else None
        if mind:  # a relay: the mind that took the session shown
            parts.append(f"s{pos.session} by {mind}")  # type: ignore[union-attr]
        text = " · ".join(parts)
        which = self.query_one(LedgerTree).node_filter
        if which:
            shown = len(filter_matches(self.state, which))
            text += f"  ·  filter {which}: {shown} node(s) (f: next, F: previous)"
        if extra:
            text += "  ·  " + extra
        self.query_one("#browser-status", Static).update(Text(text))

    # -- detail ---------------------------------------------------------------------
    @on(LedgerTree.NodeFocused)
    def _focused(self, event: LedgerTree.NodeFocused) -> None:
        # The cursor repaints first; the detail follows after that refresh, and a burst of key
        # presses (key repeat) coalesces into one detail update for where the cursor stops.
        first = self._detail_for is _UNSET
        self._detail_for = event.node_id
        if first:
            self.call_after_refresh(self._flush_detail)

    def _flush_detail(self) -> None:
        nid, self._detail_for = self._detail_for, _UNSET
        if nid is not _UNSET:
            self._show_detail(nid)  # type: ignore[arg-type]

    def _show_detail(self, nid: str | None) -> None:
        detail = self.query_one(NodeDetail)
        if self.state is None or self.view is None or nid is None or nid not in self.state.nodes:
            detail.clear_node()
            return
        events = self.view.node_events(nid) if self.view.events_ready() else None
        if events is not None and self.state.position.session is not None:
            last = self._last_seq_at_position()
            events = [e for e in events if e["seq"] <= last]
        detail.show(render_detail(self.state, nid, events, self.state.before.get(nid)))
        detail.scroll_home(animate=False)

    def _last_seq_at_position(self) -> int:
        assert self.view is not None and self.state is not None
        pos = self.state.position
        last = 0
        for session, _stage, seq in self.view.snapshot_index:
            if session == pos.session:
                last = max(last, seq)
        return last or 10**12

    # -- actions ----------------------------------------------------------------------
    def action_slide(self, step: int) -> None:
        if self.view is None:
            return
        self.action_slide_to(max(0, min(len(self.view.positions) - 1, self.index + step)))

    def action_slide_to(self, index: int) -> None:
        if self.view is None:
            return
        if index < 0:
            index = len(self.view.positions) + index
        if index == self.index and self.state is not None:
            return
        cursor = self.query_one(LedgerTree).current_id
        try:
            state = self.view.state(index)
        except CuriosityError as err:
            self.notify(str(err), severity="error")
            return
        self._apply(state, index, cursor)

    def action_search(self) -> None:
        if self.state is None:
            return

        def done(result: tuple[str, list[str]] | None) -> None:
            if not result:  # closed without a pick: no stale "N match(es)" line
                self.matches, self.match_at = [], -1
                self._status()
                return
            nid, matches = result
            self.matches = matches
            self.match_at = matches.index(nid) if nid in matches else 0
            self._goto(nid)
            self._status(f"{len(matches)} match(es); n / N for next / previous")

        self.nav.ask_search(self.state.nodes, done)

    def _goto(self, nid: str) -> None:
        tree = self.query_one(LedgerTree)
        if not tree.reveal(nid):
            self.notify(f"{nid} is not in the ledger at this point", severity="warning")
            return
        tree.focus()
        self._show_detail(nid)

    def action_next_match(self, step: int) -> None:
        if not self.matches:
            self.notify("No search yet: press / to search by text or id.")
            return
        self.match_at = (self.match_at + step) % len(self.matches)
        self._goto(self.matches[self.match_at])
        self._status(f"match {self.match_at + 1} of {len(self.matches)}")

    def action_next_changed(self, step: int) -> None:
        if self.state is None:
            return
        changed = sorted(self.state.changed, key=node_num)
        if not changed:
            self.notify("Nothing changed at this point.")
            return
        cur = self.query_one(LedgerTree).current_id
        num = node_num(cur) if cur else (0 if step > 0 else 10**12)
        if step > 0:
            after = [c for c in changed if node_num(c) > num]
            target = after[0] if after else changed[0]
        else:
            before = [c for c in changed if node_num(c) < num]
            target = before[-1] if before else changed[-1]
        self._goto(target)
        self._status(f"{self.state.changed[target]}: {short(self.state.nodes[target]['text'], 60)}")

    def action_cycle_filter(self, step: int) -> None:
        """Show only the nodes of one status, or those new or changed at this point."""
        if self.state is None:
            return
        tree = self.query_one(LedgerTree)
        at = TREE_FILTERS.index(tree.node_filter) if tree.node_filter in TREE_FILTERS else 0
        tree.node_filter = TREE_FILTERS[(at + step) % len(TREE_FILTERS)]
        tree.show_state(self.state, tree.current_id)
        self._show_detail(tree.current_id)
        self._status()

    def action_rendering(self) -> None:
        if self.view is None:
            return
        pos = self.state.position if self.state else None
        session = (
            pos.session if pos is not None and pos.session is not None else self.view.last_session
        )
        self.nav.open_rendering(self.view, max(1, session))

    def action_switch_pane(self) -> None:
        tree = self.query_one(LedgerTree)
        if tree.has_focus:
            self.query_one(NodeDetail).focus()
        else:
            tree.focus()

    def action_audit(self) -> None:
        self.nav.open_audit(self.path)

    def action_downgrades(self) -> None:
        self.nav.open_downgrades(self.path)

    async def action_support(self) -> None:
        """Judge this ledger's verified passages for support (decision 520), e.g. between two
        `run` invocations of a run without a curator."""
        await self.nav.open_support(self.path)

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.dismiss()

    def goto_node(self, nid: str) -> None:
        """Show ``nid`` now (used by the audit screen's jump)."""
        if self.state is None:
            self.pending_node = nid
        else:
            self._goto(nid)
