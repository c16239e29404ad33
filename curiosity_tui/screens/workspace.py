"""The workspace screen: every study, ledger and pack with its state at a glance; Enter
opens one.

Scanning runs in a thread worker (the screen paints at once with "scanning…"); the closure
audit counts are filled in afterwards by a second worker, ledger by ledger, and each study's
verify and verdict cells by a third. A study is one row (decision 570); Enter on it lists only
its runs and packs in the tables below (esc shows everything again).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Header, Input, Static

from curiosity_tui import workspace_prescan, workspace_scan
from curiosity_tui.analysis import study_state
from curiosity_tui.errors import CuriosityError
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import short
from curiosity_tui.widgets.ordered import OrderedDataTable, drain
from curiosity_tui.widgets.study_row import STUDY_COLUMNS, study_detail, study_row

#: the key columns (pending downgrades, audit findings, state) come right after the name so a
#: narrow terminal (100 columns) cuts the descriptive ones at the right edge first
LEDGER_COLUMNS = (
    ("ledger", "name"),
    ("dg pend", "downgrades"),
    ("audit", "findings"),
    ("state", "state"),
    ("sess", "sessions"),
    ("open", "open"),
    ("closed", "closed"),
    ("dorm", "dormant"),
    ("arch+mrg", "other"),
    ("config", "config"),
    ("contract", "contract"),
    ("curator", "curator"),
)
REFRESH_S = 5.0
PACK_COLUMNS = (("pack", "name"), ("scheme", "scheme"), ("items", "items"), ("rated by", "raters"))


def shown_root(root: Path) -> str:
    """The workspace's path as the status line shows it: ``~/…`` under the home directory."""
    try:
        home = Path.home()
    except RuntimeError:  # no home directory can be determined
        return str(root)
    if home == Path(home.anchor):  # a home at the root would turn every path into ~/…
        return str(root)
    if root == home:
        return "~"
    if root.is_relative_to(home):
        return "~/" + root.relative_to(home).as_posix()
    return str(root)


def _name_cell(name: str, scripted: bool) -> Text:
    """The row's name; a scripted ledger or pack says so beside it (decision 442)."""
    if not scripted:
        return Text(short(name, 32), style="bold")
    return Text.assemble((short(name, 23), "bold"), (" scripted", "bold magenta"))


def ledger_row(s: workspace_scan.LedgerSummary, *, marked: bool = False) -> list[Text]:
    name = _name_cell(s.name, s.scripted)
    if marked:  # marked for comparison (space), compared with another by "="
        name = Text.assemble(("◆ ", "bold yellow"), name)
    state = Text("● running", style="bold green") if s.running else Text("idle", style="dim")
    if s.error:
        return [
            name,
            Text("error", style="bold red"),
            Text(""),
            state,
            Text(short(s.error, 60), style="red"),
            *[Text("") for _ in range(len(LEDGER_COLUMNS) - 5)],
        ]
    other = s.counts.get("archived", 0) + s.counts.get("merged", 0)
    findings = (
        Text("…", style="dim")
        if s.findings is None
        else Text(str(s.findings), style="bold red" if s.findings else "green")
    )
    pending = s.pending_downgrades
    return [
        name,
        Text(
            str(pending) if pending else "—",
            justify="right",
            style="bold yellow" if pending else "dim",
        ),
        findings,
        state,
        Text(str(s.sessions) + (f" (+{s.failed} failed)" if s.failed else ""), justify="right"),
        Text(str(s.open), justify="right", style="green"),
        Text(str(s.closed), justify="right", style="blue"),
        Text(str(s.dormant), justify="right", style="yellow"),
        Text(str(other) if other else "—", justify="right", style="" if other else "dim"),
        Text(short(s.config, 12)),
        Text(short(s.contract_label or s.contract, 16)),
        Text(short(s.curator, 8)),
    ]


def pack_row(p: workspace_scan.PackSummary) -> list[Text]:
    if p.error:
        return [
            Text(p.name, style="bold"),
            Text("error", style="red"),
            Text(short(p.error, 50)),
            Text(""),
        ]
    return [
        _name_cell(p.name, p.scripted),
        Text(short(p.scheme, 16)),
        Text(str(p.items), justify="right"),
        Text(short(", ".join(p.raters) or "nobody yet", 40)),
    ]


class WorkspaceScreen(AppScreen):
    HELP_TITLE = "Workspace"
    HELP = (
        "Every study, ledger (a run) and blind pack in the workspace. Enter on a study lists "
        "only its runs and packs (esc shows all); Enter opens a ledger in the browser, or a "
        "pack for rating. Findings are closure-audit findings (S10). Space marks a ledger; = "
        "compares it with the ledger under the cursor (or the two marked) side by side."
    )
    BINDINGS = [
        Binding("o", "open", "Open", id="workspace.open"),
        # priority: in a burst (Enter on a study, ↓, Enter) each Enter reads the row the keys
        # before it reached, and the focus it moves is there for the next key
        Binding("enter", "open", "Open", show=False, id="workspace.open_enter", priority=True),
        Binding("slash", "filter", "Filter", id="workspace.filter"),
        Binding("s", "sort", "Sort", id="workspace.sort"),
        Binding("S", "reverse", "Reverse sort", show=False, id="workspace.reverse"),
        Binding("A", "audit", "Audit", id="workspace.audit"),
        Binding("d", "downgrades", "Downgrades", id="workspace.downgrades"),
        Binding("m", "metrics", "Metrics", id="workspace.metrics"),
        Binding("space", "mark", "Mark", show=False, id="workspace.mark"),
        Binding(
            "equals_sign", "compare", "Compare", show=False, key_display="=", id="workspace.compare"
        ),
        Binding("g", "agreement", "Agreement", id="workspace.agreement"),
        Binding("J", "adjudication", "Adjudicate", show=False, id="workspace.adjudication"),
        Binding("r", "refresh", "Refresh", id="workspace.refresh"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="workspace.clear"),
    ]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = Path(root).resolve()
        self.data: workspace_scan.Workspace | None = None
        self.sort_key: workspace_scan.SortKey = "name"
        self.reverse = False
        self.needle = ""
        self._shown_ledgers: list[workspace_scan.LedgerSummary] = []
        self._shown_packs: list[workspace_scan.PackSummary] = []
        self.studies: list[study_state.StudyState] = []
        #: the study whose runs and packs alone are listed (Enter on its row; esc clears)
        self.study: study_state.StudyState | None = None
        #: verify and verdict cells of each study, kept while its runs and chain are unchanged
        self._checked: dict[tuple[object, ...], tuple[str, str]] = {}
        #: ledgers marked for comparison, in marking order (at most two are kept)
        self.marked: list[Path] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("scanning…", style="dim"), id="ws-status", classes="hint")
        yield Input(placeholder="filter ledgers and packs (words; 'running')", id="filter")
        yield Static("Studies", classes="pane-title study-part")
        studies: DataTable[str | Text] = OrderedDataTable(
            id="studies", cursor_type="row", zebra_stripes=True, classes="study-part"
        )
        for label, key in STUDY_COLUMNS:
            studies.add_column(label, key=key)
        studies.styles.height = "auto"
        studies.styles.max_height = 6
        yield studies
        yield Static("", id="study-detail", classes="hint study-part")
        yield Static("Ledgers", classes="pane-title")
        ledgers: DataTable[str | Text] = OrderedDataTable(
            id="ledgers", cursor_type="row", zebra_stripes=True
        )
        for label, key in LEDGER_COLUMNS:
            ledgers.add_column(label, key=key)
        yield ledgers
        yield Static("Packs", classes="pane-title")
        packs: DataTable[str | Text] = OrderedDataTable(
            id="packs", cursor_type="row", zebra_stripes=True
        )
        for label, key in PACK_COLUMNS:
            packs.add_column(label, key=key)
        packs.styles.height = "auto"
        packs.styles.max_height = 12
        yield packs
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"workspace {self.root.name or self.root}"
        for w in self.query(".study-part"):
            w.display = False
        self.query_one("#ledgers", DataTable).focus()
        self.scan()
        # runs started elsewhere show up (and finish) without a key press
        self.set_interval(REFRESH_S, self._tick)

    def _tick(self) -> None:
        if self.is_current and self.data is not None:
            self.scan()

    def on_screen_resume(self) -> None:
        if self.data is not None:
            self.scan()

    # -- workers --------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="scan")
    def scan(self) -> None:
        pre = workspace_prescan.take(self.root) if self.data is None else None
        data = (pre.result() if pre is not None else None) or workspace_scan.scan(self.root)
        # keep audit counts of ledgers whose journal has not changed since they were counted
        old = {(s.path, s.modified): s.findings for s in self.data.ledgers} if self.data else {}
        for s in data.ledgers:
            s.findings = old.get((s.path, s.modified))
        studies = [
            study_state.summarize_study(place, data.ledgers, data.packs)
            for place in study_state.find_studies(self.root)
        ]
        for st in studies:
            st.verify, st.verdict = self._checked.get(_study_key(st), (st.verify, st.verdict))
        self.app.call_from_thread(self._show, data, studies)
        todo_studies = [st for st in studies if _study_key(st) not in self._checked]
        if todo_studies:
            self.app.call_from_thread(self.call_after_refresh, self.check_studies, todo_studies)
        todo = [s.path for s in data.ledgers if s.findings is None and not s.error]
        if todo:
            # the audit pass starts after the rows are painted, so it never delays the first paint
            self.app.call_from_thread(self.call_after_refresh, self.count_findings, todo)

    @work(thread=True, exclusive=True, group="audit")
    def count_findings(self, paths: list[Path]) -> None:
        for path in paths:
            n = workspace_scan.audit_findings(path)
            self.app.call_from_thread(self._set_findings, path, n)

    @work(thread=True, exclusive=True, group="study")
    def check_studies(self, studies: list[study_state.StudyState]) -> None:
        """Each study's ``prereg verify`` and verdict (they replay its runs): after the paint."""
        for st in studies:
            cells = study_state.check_study(st)
            self._checked[_study_key(st)] = cells
            self.app.call_from_thread(self._set_study_cells, st.place, cells)

    # -- display --------------------------------------------------------------------
    def _show(self, data: workspace_scan.Workspace, studies: list[study_state.StudyState]) -> None:
        first = self.data is None
        self.data = data
        self.studies = studies
        if self.study is not None:  # the listed study, as scanned now
            self.study = next((s for s in studies if s.place == self.study.place), None)
        self._refill_studies()
        self._refill()
        if first and studies:
            self.query_one("#studies", DataTable).focus()

    def _set_study_cells(self, place: study_state.StudyPlace, cells: tuple[str, str]) -> None:
        for st in self.studies:
            if st.place == place:
                st.verify, st.verdict = cells
        self._refill_studies()

    def _refill_studies(self) -> None:
        """Rows updated in place (cell by cell, widening their columns) while the same studies
        are there; rebuilt only when the set of studies changes."""
        table = self.query_one("#studies", DataTable)
        keys = [str(st.place.folder) for st in self.studies]
        if [k.value for k in table.rows] != keys:
            table.clear()
            for st, key in zip(self.studies, keys, strict=True):
                table.add_row(*study_row(st), key=key)
        else:
            for st, key in zip(self.studies, keys, strict=True):
                for (_label, col), cell in zip(STUDY_COLUMNS, study_row(st), strict=True):
                    table.update_cell(key, col, cell, update_width=True)
            # the table measures updated cells when its queue next runs empty; a message to it
            # makes sure that happens now, not at the next key press (the cells were seen cut)
            table.call_later(table.refresh)
        for w in self.query(".study-part"):
            w.display = bool(self.studies)
        if self.studies:
            self._show_detail()

    def _show_detail(self) -> None:
        st = self.selected_study()
        if st is not None:
            self.query_one("#study-detail", Static).update(study_detail(st, self.root))

    @on(DataTable.RowHighlighted, "#studies")
    def _study_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _set_findings(self, path: Path, n: int | None) -> None:
        if self.data is None:
            return
        for s in self.data.ledgers:
            if s.path == path:
                s.findings = n
                table = self.query_one("#ledgers", DataTable)
                key = str(path)
                if key in table.rows:
                    table.update_cell(
                        key,
                        "findings",
                        Text("?", style="dim")
                        if n is None
                        else Text(str(n), style="bold red" if n else "green"),
                    )

    def _refill(self) -> None:
        if self.data is None:
            return
        table = self.query_one("#ledgers", DataTable)
        keep = self.selected_ledger()
        table.clear()
        items = [s for s in self.data.ledgers if s.matches(self.needle)]
        if self.study is not None:
            items = [s for s in items if self.study.owns(s.path)]
        items = workspace_scan.sort_ledgers(items, self.sort_key, reverse=self.reverse)
        self._shown_ledgers = items
        for s in items:
            table.add_row(*ledger_row(s, marked=s.path in self.marked), key=str(s.path))
        if keep is not None and str(keep.path) in table.rows:
            table.move_cursor(row=table.get_row_index(str(keep.path)))
        packs = self.query_one("#packs", DataTable)
        packs.clear()
        self._shown_packs = [
            p
            for p in self.data.packs
            if p.matches(self.needle) and (self.study is None or self.study.owns(p.path))
        ]
        for p in self._shown_packs:
            packs.add_row(*pack_row(p), key=str(p.path))
        running = sum(1 for s in self.data.ledgers if s.running)
        status = Text(end="")
        status.append(shown_root(self.root), style="bold")
        status.append(
            f"  ·  {len(self.data.ledgers)} ledger(s), {len(self.data.packs)} pack(s)"
            + (f", {running} running" if running else "")
            + f"  ·  sort: {self.sort_key}{' (reversed)' if self.reverse else ''}"
        )
        if self.study is not None:
            status.append(
                f"  ·  study {self.study.name}: {len(items)} run(s), "
                f"{len(self._shown_packs)} pack(s) (esc shows all)",
                style="bold yellow",
            )
        if self.needle:
            status.append(f"  ·  filter: {self.needle!r} ({len(items)} shown)", style="yellow")
        if not self.data.ledgers and not self.data.packs:
            status.append(
                "\nNo ledgers or packs here. A workspace holds ledgers/ and packs/; create a "
                "ledger with `curiosity-tui ledger new PATH --seed TEXT`.",
                style="yellow",
            )
        self.query_one("#ws-status", Static).update(status)

    # -- selection --------------------------------------------------------------------
    def selected_ledger(self) -> workspace_scan.LedgerSummary | None:
        table = self.query_one("#ledgers", DataTable)
        if not self._shown_ledgers or table.row_count == 0:
            return None
        row = table.cursor_row
        if 0 <= row < len(self._shown_ledgers):
            return self._shown_ledgers[row]
        return None

    def selected_study(self) -> study_state.StudyState | None:
        table = self.query_one("#studies", DataTable)
        row = table.cursor_row
        return self.studies[row] if 0 <= row < len(self.studies) else None

    def selected_pack(self) -> workspace_scan.PackSummary | None:
        table = self.query_one("#packs", DataTable)
        if not self._shown_packs:
            return None
        row = table.cursor_row
        return self._shown_packs[row] if 0 <= row < len(self._shown_packs) else None

    # -- actions ----------------------------------------------------------------------
    @on(DataTable.RowSelected)
    async def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()  # a click on a row
        await self.action_open()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open":  # Enter in the filter box is the box's own
            return isinstance(self.focused, DataTable)
        return True

    async def action_open(self) -> None:
        focused = self.focused
        await drain(focused)
        if isinstance(focused, DataTable) and focused.id == "studies":
            self.open_study(self.selected_study())
            return
        if isinstance(focused, DataTable) and focused.id == "packs":
            p = self.selected_pack()
            if p is not None:
                self.nav.open_pack(p.path)
            return
        s = self.selected_ledger()
        if s is None:
            return
        if s.error:
            self.notify(f"{s.name}: {s.error}", severity="error", title="Cannot open")
            return
        self.nav.open_ledger(s.path)

    def open_study(self, st: study_state.StudyState | None) -> None:
        """List only the study's runs and packs; the runs table takes the focus."""
        if st is None:
            return
        self.study = st
        self._refill()
        self.set_focus(self.query_one("#ledgers", DataTable))

    def _need_ledger(self) -> workspace_scan.LedgerSummary | None:
        s = self.selected_ledger()
        if s is None or s.error:
            self.notify("Select a readable ledger first.", severity="warning")
            return None
        return s

    def action_audit(self) -> None:
        s = self._need_ledger()
        if s is not None:
            self.nav.open_audit(s.path)

    def action_downgrades(self) -> None:
        s = self._need_ledger()
        if s is not None:
            self.nav.open_downgrades(s.path)

    def action_metrics(self) -> None:
        runs = self.root / "ledgers" if (self.root / "ledgers").is_dir() else self.root
        if self.study is not None:  # the listed study's runs
            runs = self.study.place.folder
        self.nav.open_analysis([runs])

    def action_mark(self) -> None:
        """Mark (or unmark) the ledger under the cursor for comparison; a third mark drops
        the oldest."""
        s = self._need_ledger()
        if s is None:
            return
        if s.path in self.marked:
            self.marked.remove(s.path)
        else:
            self.marked = [*self.marked, s.path][-2:]
        self._refill()

    def action_compare(self) -> None:
        """Two ledgers side by side: the two marked, else the marked one and the cursor's."""
        pair = list(self.marked)
        if len(pair) < 2:
            s = self._need_ledger()
            if s is None:
                return
            if s.path not in pair:
                pair.append(s.path)
        if len(pair) < 2:
            self.notify(
                "Mark a ledger with space, then press = on another (or mark two).",
                severity="warning",
            )
            return
        self.nav.open_compare(pair[0], pair[1])

    def action_agreement(self) -> None:
        """Coordinator view of a pack's agreement (never reachable from the rating screen)."""
        p = self.selected_pack()
        if p is None:
            self.notify("Select a pack first (tab to the packs table).", severity="warning")
            return
        self.nav.open_agreement(p.path)

    def action_adjudication(self) -> None:
        """Coordinator's adjudication of a pack, still blind (never reachable from rating)."""
        p = self.selected_pack()
        if p is None:
            self.notify("Select a pack first (tab to the packs table).", severity="warning")
            return
        try:
            self.nav.open_adjudication(p.path)
        except CuriosityError as err:
            self.notify(str(err), severity="error", title="Cannot adjudicate")

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("visible")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("visible")
        self.needle = ""
        listed, self.study = self.study, None
        self._refill()
        self.set_focus(self.query_one("#studies" if listed else "#ledgers", DataTable))

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.needle = event.value.strip()
        self._refill()

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#filter", Input).remove_class("visible")
        self.query_one("#ledgers", DataTable).focus()

    def action_sort(self) -> None:
        keys = workspace_scan.SORT_KEYS
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self._refill()
        self.notify(f"sorted by {self.sort_key}", timeout=1.5)

    def action_reverse(self) -> None:
        self.reverse = not self.reverse
        self._refill()

    def action_refresh(self) -> None:
        self.scan()


def _study_key(st: study_state.StudyState) -> tuple[object, ...]:
    """What a study's verify and verdict cells depend on: its chain and its runs' journals."""
    chain = st.place.chain
    stamp: float = 0.0
    if chain is not None:
        try:
            stamp = chain.stat().st_mtime
        except OSError:
            stamp = -1.0
    runs = []
    for p in st.runs:
        try:
            runs.append((str(p), (p / workspace_scan.JOURNAL_FILE).stat().st_mtime))
        except OSError:
            runs.append((str(p), -1.0))
    return (str(st.place.folder), stamp, tuple(sorted(runs)))
