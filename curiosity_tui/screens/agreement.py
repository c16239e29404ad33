"""The agreement screen: per question and rater group (human, model, human-model cross
pairs), raw agreement, Fleiss' κ and Krippendorff's α with run-bootstrap intervals, category
counts per rater, and Cohen's κ with a confusion matrix per rater pair. Every table row
starts with its group. Undefined coefficients show as "undefined" with their reason.

Self-contained: ``AgreementScreen(packdir, n_boot=..., seed=...)``. The computation (the
bootstrap may take a second) runs in a thread worker; the screen shows "computing…" until
it is posted back.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Static

from curiosity_tui.errors import CuriosityError
from curiosity_tui.packs.agreement import Estimate, QuestionAgreement
from curiosity_tui.packs.pack_agreement import PackAgreement, pack_agreement
from curiosity_tui.widgets.footer import Footer

__all__ = ["AgreementScreen"]


def _cell(est: Estimate) -> tuple[str, str, str]:
    if est.value is None:
        return ("undefined", "—", est.undefined_reason or "")
    iv = est.interval
    if iv is None or iv.low is None or iv.high is None:
        ci = "—"
    else:
        ci = f"[{iv.low:.3f}, {iv.high:.3f}]"
        if iv.n_undefined:
            ci += f" ({iv.n_undefined} undefined samples)"
    note = f"{est.n_items} items" + (f", {est.n_dropped} dropped" if est.n_dropped else "")
    return (f"{est.value:.3f}", ci, note)


class AgreementScreen(Screen[None]):
    HELP_TITLE = "Agreement (coordinator)"
    DEFAULT_CSS = """
    AgreementScreen { layout: vertical; }
    #agreement-status { height: auto; padding: 0 1; background: $primary-background; }
    #agreement-body { height: 1fr; padding: 0 1; }
    .agreement-title { text-style: bold; margin-top: 1; color: $accent; }
    .agreement-note { color: $text-muted; }
    AgreementScreen DataTable { height: auto; max-height: 20; margin-bottom: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "recompute", "Recompute", id="agreement.recompute"),
        Binding("escape", "close", "Back", id="agreement.close"),
    ]

    def __init__(
        self, packdir: str | Path, *, n_boot: int = 10_000, seed: int = 0, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.packdir = Path(packdir)
        self.n_boot = n_boot
        self.seed = seed
        self.report: PackAgreement | None = None

    def compose(self) -> ComposeResult:
        yield Static("computing agreement…", id="agreement-status")
        yield VerticalScroll(id="agreement-body")
        yield Footer()

    def on_mount(self) -> None:
        self.action_recompute()

    def action_recompute(self) -> None:
        self.query_one("#agreement-status", Static).update("computing agreement…")
        self._compute()

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.exit()

    @work(thread=True, exclusive=True)
    def _compute(self) -> None:
        try:
            rep = pack_agreement(self.packdir, n_boot=self.n_boot, seed=self.seed)
        except CuriosityError as err:
            self.app.call_from_thread(self._show_error, str(err))
            return
        self.app.call_from_thread(self._show, rep)

    def _show_error(self, msg: str) -> None:
        self.query_one("#agreement-status", Static).update(f"error: {msg}")

    def _show(self, rep: PackAgreement) -> None:
        self.report = rep
        self.query_one("#agreement-status", Static).update(
            f"pack {rep.pack_id} · scheme {rep.scheme} · {rep.n_items} items · raters: "
            + ("; ".join(f"{g}: {', '.join(rs)}" for g, rs in rep.groups.items()) or "(none yet)")
            + f" · 95% percentile intervals, "
            f"{rep.n_boot} bootstrap samples resampling runs, seed {rep.seed}"
        )
        body = self.query_one("#agreement-body", VerticalScroll)
        body.remove_children()
        widgets: list[Widget] = []
        for qa in rep.questions:
            widgets += _question_widgets(qa)
        body.mount_all(widgets)


def _question_widgets(qa: QuestionAgreement) -> list[Widget]:
    """One question of one group: title, notes, the summary, counts and confusion tables."""
    g = qa.group
    widgets: list[Widget] = [
        Static(
            f"{qa.question} · {g} raters — {qa.n_items} items, {qa.n_clusters} runs with "
            "≥ 2 ratings",
            classes="agreement-title",
            markup=False,
        )
    ]
    for note in qa.notes:
        widgets.append(Static(f"note: {note}", classes="agreement-note", markup=False))
    summary: DataTable[str] = DataTable(id=f"summary-{g}-{qa.question}", cursor_type="row")
    summary.add_columns("group", "statistic", "value", "95% interval", "n / reason")
    for label, est in (
        ("raw agreement", qa.raw_agreement),
        ("Fleiss' κ", qa.fleiss_kappa),
        ("Krippendorff's α (nominal)", qa.krippendorff_alpha),
    ):
        summary.add_row(g, label, *_cell(est))
    for pair in qa.pairs:
        names = f"{pair.rater_a} × {pair.rater_b}"
        summary.add_row(pair.group, f"Cohen's κ {names}", *_cell(pair.cohen_kappa))
        summary.add_row(pair.group, f"raw agreement {names}", *_cell(pair.raw_agreement))
    widgets.append(summary)
    if g != "human-model":  # cross rows' raters are counted in their own groups
        counts: DataTable[str] = DataTable(id=f"counts-{g}-{qa.question}", cursor_type="row")
        counts.add_columns("group", "rater", *qa.categories)
        for r in qa.raters:
            counts.add_row(g, r, *(str(qa.category_counts[r][c]) for c in qa.categories))
        widgets.append(Static("category counts per rater", classes="agreement-note"))
        widgets.append(counts)
    widgets += _confusions(qa)
    return widgets


def _confusions(qa: QuestionAgreement) -> list[Widget]:
    widgets: list[Widget] = []
    for pair in qa.pairs:
        widgets.append(
            Static(
                f"[{pair.group}] confusion {pair.rater_a} (rows) × {pair.rater_b} (columns)",
                classes="agreement-note",
                markup=False,
            )
        )
        conf: DataTable[str] = DataTable(cursor_type="row")
        conf.add_columns("", *qa.categories)
        for cat, row in zip(qa.categories, pair.confusion, strict=True):
            conf.add_row(cat, *(str(v) for v in row))
        widgets.append(conf)
    return widgets
