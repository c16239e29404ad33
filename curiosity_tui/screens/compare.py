"""The comparison screen: two ledgers side by side, session by session (issue 26, item 6).

Each side is the browser's own tree (:class:`~curiosity_tui.widgets.node_tree.LedgerTree`)
over the browser's read model, showing the ledger after the session on the bar with its
NEW / CHG marks, and below it what that session did (focus, decision, facts and checks
added, closures and blocked closures). The paired metrics (every registry metric on both
runs, B − A) fill the table at the bottom; ``m`` hides it.

Loading runs in a thread worker: the alignment first (both trees paint), then the metrics
(the registry's similarity metrics take a second). Open from the workspace (mark a ledger
with space, press ``=`` on another) or ``curiosity-tui compare A B --app``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Header, Static

from curiosity_tui.analysis.compare import Comparison, SideSession, align, position_of
from curiosity_tui.analysis.compare_metrics import PairedMetric
from curiosity_tui.errors import CuriosityError
from curiosity_tui.gcpause import gc_paused
from curiosity_tui.ledger.view import LedgerView
from curiosity_tui.practice_banner import banner, replies_of
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.compare_view import compare_bar, metric_cells, side_summary, side_title
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.node_tree import LedgerTree
from curiosity_tui.widgets.report_tables import row_table

__all__ = ["CompareScreen"]

SIDES = ("a", "b")
#: NEW / CHG nodes whose path a session step expands (a big session expands no more)
REVEAL_LIMIT = 40
#: the metrics table's columns and widths: fixed, so the table never re-lays itself out when
#: its rows arrive from the worker (the longest registry name is 36 characters)
METRIC_COLUMNS = (("metric", 36), ("A", 9), ("B", 9), ("B − A", 8), ("favours", 7))


class CompareScreen(AppScreen):
    HELP_TITLE = "Compare two runs"
    HELP = (
        "Two runs side by side, session by session: each tree shows its ledger after the "
        "session on the bar, NEW/CHG marking what changed in it; below each tree, the "
        "session's focus, decision, facts and checks added, closures and blocked closures. "
        "[ and ] step through the sessions, tab moves between the two trees and the paired "
        "metrics (each run's own value, B − A, and the side the metric's direction favours); "
        "m hides or shows the metrics; o opens the node under the cursor in the browser."
    )
    DEFAULT_CSS = """
    CompareScreen #compare-bar { height: 1; padding: 0 1; background: $boost; }
    CompareScreen #compare-practice { height: auto; padding: 0 1; display: none; }
    CompareScreen #compare-panes { height: 1fr; }
    CompareScreen .compare-side { width: 1fr; }
    CompareScreen #side-a { border-right: solid $panel; }
    CompareScreen .side-title { height: 1; padding: 0 1; background: $panel; }
    CompareScreen LedgerTree { height: 1fr; }
    CompareScreen .side-summary { height: 10; padding: 0 1; border-top: solid $primary-darken-2;
        text-wrap: nowrap; text-overflow: ellipsis; }
    CompareScreen #compare-metrics { border-top: solid $primary-darken-2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left_square_bracket", "step(-1)", "Earlier session", id="compare.prev_session"),
        Binding("right_square_bracket", "step(1)", "Later session", id="compare.next_session"),
        Binding(
            "left_curly_bracket", "step_to(0)", "First session", show=False, id="compare.first"
        ),
        Binding("right_curly_bracket", "step_to(-1)", "Now", show=False, id="compare.last"),
        Binding("tab", "switch_pane", "Next pane", id="compare.switch"),
        Binding("m", "toggle_metrics", "Metrics", id="compare.metrics"),
        Binding("o", "open_node", "Open node", id="compare.open"),
        Binding("r", "reload", "Reload", show=False, id="compare.reload"),
        Binding("escape", "back", "Back", id="compare.back"),
    ]

    def __init__(self, path_a: Path, path_b: Path) -> None:
        super().__init__()
        self.paths = (Path(path_a), Path(path_b))
        self.views: tuple[LedgerView, LedgerView] | None = None
        self.comparison: Comparison | None = None
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="compare-practice")
        yield Static(Text("loading both ledgers…", style="dim"), id="compare-bar")
        with Horizontal(id="compare-panes"):
            for side, path in zip(SIDES, self.paths, strict=True):
                with Vertical(id=f"side-{side}", classes="compare-side"):
                    yield Static(Text(path.name), id=f"title-{side}", classes="side-title")
                    yield LedgerTree(id=f"tree-{side}")
                    yield Static("", id=f"summary-{side}", classes="side-summary")
        table = row_table("compare-metrics", fit=False)
        table.styles.height = "35%"  # inline: the app's sheet gives every DataTable 1fr
        for label, width in METRIC_COLUMNS:
            table.add_column(label, key=label, width=width)
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"compare {self.paths[0].name} · {self.paths[1].name}"
        for side in SIDES:
            self.query_one(f"#tree-{side}", LedgerTree).loading = True
        self.load()

    def on_unmount(self) -> None:
        self._close_views()

    def _close_views(self) -> None:
        if self.views is not None:
            for v in self.views:
                v.close()
            self.views = None

    # -- loading ------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="compare")
    def load(self) -> None:
        opened: list[LedgerView] = []
        try:
            with gc_paused():
                for p in self.paths:
                    opened.append(LedgerView(p))
                comp = align(opened[0], opened[1])
        except CuriosityError as err:
            for v in opened:
                v.close()
            self.app.call_from_thread(self._failed, str(err))
            return
        self.app.call_from_thread(self._aligned, (opened[0], opened[1]), comp)
        try:
            from curiosity_tui.analysis.compare_metrics import paired_metrics

            metrics = paired_metrics(*self.paths)
        except CuriosityError as err:
            self.app.call_from_thread(self.notify, f"metrics not shown: {err}", severity="warning")
            return
        self.app.call_from_thread(self._metrics, metrics)

    def _failed(self, message: str) -> None:
        for side in SIDES:
            self.query_one(f"#tree-{side}", LedgerTree).loading = False
        self.query_one("#compare-bar", Static).update(Text(f"cannot compare: {message}"))
        self.notify(message, severity="error", title="Cannot compare")

    def _aligned(self, views: tuple[LedgerView, LedgerView], comp: Comparison) -> None:
        if not self.is_attached:
            for v in views:
                v.close()
            return
        self._close_views()
        self.views, self.comparison = views, comp
        self.sub_title = " vs ".join(
            f"{s.config} · {s.contract} · curator {s.curator}" for s in (comp.a, comp.b)
        )
        label = banner(replies_of("scripted" if r.scripted else "model" for r in (comp.a, comp.b)))
        if label:  # practice never looks like results (decision 442)
            practice = self.query_one("#compare-practice", Static)
            practice.update(Text(label, style="bold reverse red"))
            practice.display = True
        for tag, side, run in (("A", "a", comp.a), ("B", "b", comp.b)):
            self.query_one(f"#title-{side}", Static).update(side_title(tag, run))
            self.query_one(f"#tree-{side}", LedgerTree).loading = False
        self.index = min(self.index, max(0, len(comp.sessions) - 1))
        self._show()
        self.query_one("#tree-a", LedgerTree).focus()

    def _metrics(self, metrics: list[PairedMetric]) -> None:
        if self.comparison is not None:
            self.comparison.metrics = metrics
        table = self.query_one("#compare-metrics", DataTable)
        table.clear()
        for m in metrics:
            table.add_row(
                *metric_cells(m.name, m.a, m.b, m.difference, m.higher_is_better), key=m.name
            )

    # -- showing a session ------------------------------------------------------------
    def _show(self) -> None:
        comp, views = self.comparison, self.views
        if comp is None or views is None:
            return
        if not comp.sessions:
            self.query_one("#compare-bar", Static).update(
                Text("neither run has a session yet", style="dim")
            )
            return
        aligned = comp.sessions[self.index]
        self.query_one("#compare-bar", Static).update(compare_bar(comp, self.index))
        for side, view, s in zip(SIDES, views, (aligned.a, aligned.b), strict=True):
            self._show_side(side, view, s)

    def _show_side(self, side: str, view: LedgerView, s: SideSession) -> None:
        tree = self.query_one(f"#tree-{side}", LedgerTree)
        idx = _position_at_or_before(view, s.session)
        if idx is not None:
            try:
                state = view.state(idx)
            except CuriosityError as err:
                self.notify(str(err), severity="error")
            else:
                cursor = tree.current_id
                tree.show_state(state, cursor)
                # what the session changed is in view: the path to each NEW / CHG node is
                # expanded (the first REVEAL_LIMIT), then the cursor goes back where it was
                for nid in [m.node for m in s.marks][:REVEAL_LIMIT]:
                    tree.reveal(nid)
                back = cursor if cursor in state.nodes else next(iter(state.roots()), None)
                if back is not None:
                    tree.reveal(back)
        summary = side_summary(s)
        shown = view.positions[idx].session if idx is not None else None
        if shown != s.session:  # an absent or failed session: the tree keeps an earlier state
            where = f"as it stood after s{shown}" if shown is not None else "empty: no snapshot yet"
            summary.append(f"\ntree: {where}", style="dim")
        self.query_one(f"#summary-{side}", Static).update(summary)

    # -- actions ------------------------------------------------------------------------
    def action_step(self, step: int) -> None:
        if self.comparison is None or not self.comparison.sessions:
            return
        self.action_step_to(max(0, min(len(self.comparison.sessions) - 1, self.index + step)))

    def action_step_to(self, index: int) -> None:
        if self.comparison is None or not self.comparison.sessions:
            return
        if index < 0:
            index = len(self.comparison.sessions) + index
        if index != self.index:
            self.index = index
            self._show()

    def _panes(self) -> list[LedgerTree | DataTable[Text]]:
        panes: list[LedgerTree | DataTable[Text]] = [
            self.query_one("#tree-a", LedgerTree),
            self.query_one("#tree-b", LedgerTree),
        ]
        table = self.query_one("#compare-metrics", DataTable)
        if table.display:
            panes.append(table)
        return panes

    def action_switch_pane(self) -> None:
        panes = self._panes()
        at = next((i for i, p in enumerate(panes) if p.has_focus), -1)
        panes[(at + 1) % len(panes)].focus()

    def action_toggle_metrics(self) -> None:
        table = self.query_one("#compare-metrics", DataTable)
        table.display = not table.display
        if not table.display and table.has_focus:
            self.query_one("#tree-a", LedgerTree).focus()

    def action_open_node(self) -> None:
        for side, path in zip(SIDES, self.paths, strict=True):
            tree = self.query_one(f"#tree-{side}", LedgerTree)
            if tree.has_focus:
                self.nav.open_ledger(path, tree.current_id)
                return
        self.notify("Move to a tree first (tab), then o opens its node in the browser.")

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.nav.close_screen(self)


def _position_at_or_before(view: LedgerView, session: int) -> int | None:
    """The slider index after ``session``, else after the latest session before it (a run
    that ended earlier, or a failed session, keeps its last state); None: nothing yet."""
    exact = position_of(view, session)
    if exact is not None:
        return exact
    best = None
    for i, pos in enumerate(view.positions):
        if pos.session is not None and pos.session < session:
            best = i
    return best
