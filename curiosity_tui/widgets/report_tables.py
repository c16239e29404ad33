"""The analysis screen's "Report tables" view: the report's §8 ledger table, the P2 and P3
tables, tokens and truncation, the pooled ``regen_dup_share`` and Pearson r — for whatever
configurations are present. :func:`report_tables` returns the widgets to mount."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable, Static

from curiosity_tui.analysis.formatting import fmt
from curiosity_tui.widgets.literal import lit, num

if TYPE_CHECKING:
    from curiosity_tui.analysis.tables import MetricsDoc

__all__ = ["report_tables", "row_table"]

P2_TABLES = (
    (
        "P2: same store, with curator (self-ask + store | protocol arm)",
        ("B-armed+cur", "C+cur"),
        "table-p2-with",
    ),
    (
        "P2: same store, without curator (self-ask + store | protocol arm)",
        ("B-armed-cur", "C-cur"),
        "table-p2-without",
    ),
)
P3_ARMS = (
    ("self-ask + store: with → without", "B-armed+cur", "B-armed-cur"),
    ("protocol arm: with → without", "C+cur", "C-cur"),
)


def row_table(table_id: str | None = None, *, fit: bool = True) -> DataTable[Any]:
    """A row-cursor table; ``fit``: as tall as its rows (set inline: the app's stylesheet gives
    every DataTable ``height: 1fr``, and app CSS outranks a screen's DEFAULT_CSS)."""
    t: DataTable[Any] = DataTable(id=table_id, cursor_type="row", zebra_stripes=True)
    if fit:
        t.styles.height = "auto"
        t.styles.max_height = 40
    return t


class _Sections:
    """Titled tables of figures from one metrics document."""

    def __init__(self, doc: MetricsDoc, contract: str = "", index: int = 0) -> None:
        self.doc = doc
        self.widgets: list[Widget] = []
        #: with ``config@contract`` cells: the contract these tables are about ("" = none)
        self.contract = contract
        self.index = index

    def at(self, config: str) -> str:
        """The column for a configuration: itself, or its cell under :attr:`contract`."""
        return f"{config}@{self.contract}" if self.contract else config

    def tid(self, table_id: str) -> str:
        return table_id if self.index == 0 else f"{table_id}-{self.index}"

    def title(self, text: str) -> str:
        return f"{text} — contract {self.contract}" if self.contract else text

    def cell(self, metric: str, config: str) -> Text:
        agg = self.doc.metrics.get(metric, {}).get(config)
        return num("—" if agg is None or agg.value is None else fmt(agg.value))

    def section(
        self, title: str, table_id: str, cols: Sequence[str], rows: Iterable[list[Text]]
    ) -> None:
        self.widgets.append(Static(Text(title), classes="an-title"))
        t = row_table(table_id)
        t.add_column("")
        for c in cols:
            t.add_column(lit(c, "bold"))
        for r in rows:
            t.add_row(*r)
        self.widgets.append(t)

    def metric_rows(self, spec: Sequence[tuple[str, str]], cols: Sequence[str]) -> list[list[Text]]:
        return [
            [Text(label.strip() if not label.startswith("  ") else "  " + label.strip())]
            + [self.cell(metric, c) for c in cols]
            for label, metric in spec
            if metric in self.doc.metrics
        ]


def report_tables(doc: MetricsDoc) -> list[Widget]:
    """Every report table the configurations of ``doc`` allow, in the report's order."""
    contracts = list(dict.fromkeys(c.partition("@")[2] for c in doc.configs))
    out: list[Widget] = []
    for i, k in enumerate(contracts):  # with config@contract cells: §8, P2, P3 per contract
        per = _Sections(doc, k, i)
        _ledger_table(per)
        _p2_tables(per)
        _p3_table(per)
        out += per.widgets
    s = _Sections(doc)
    _token_and_pooled_tables(s)
    return out + s.widgets


def _ledger_table(s: _Sections) -> None:
    from curiosity_tui.analysis import tables as T

    cols = [s.at(c) for c in T.LEDGER_COLUMNS if s.at(c) in s.doc.configs]
    if not cols:
        return
    rows = s.metric_rows(T.LEDGER_ROWS, cols)
    pres = []
    for c in cols:
        d = s.doc.decisions.get(c)
        pres.append(num("—" if d is None or d.decisions == 0 else f"{d.preserve}/{d.decisions}"))
    rows.append([Text("PRESERVE decisions / all decisions"), *pres])
    s.section(
        s.title("The ledger (§8): final snapshots, mean over runs"),
        s.tid("table-ledger"),
        cols,
        rows,
    )


def _p2_tables(s: _Sections) -> None:
    from curiosity_tui.analysis import tables as T

    for title, pair, tid in P2_TABLES:
        cells = (s.at(pair[0]), s.at(pair[1]))
        if all(c in s.doc.configs for c in cells):
            s.section(s.title(title), s.tid(tid), cells, s.metric_rows(T.P2_ROWS, cells))


def _p3_table(s: _Sections) -> None:
    from curiosity_tui.analysis import tables as T

    arms = [
        (label, s.at(w), s.at(wo))
        for label, w, wo in P3_ARMS
        if s.at(w) in s.doc.configs and s.at(wo) in s.doc.configs
    ]
    if not arms:
        return
    rows = [
        [Text(label)]
        + [num(f"{s.cell(metric, w).plain} → {s.cell(metric, wo).plain}") for _, w, wo in arms]
        for label, metric in T.P3_ROWS
        if metric in s.doc.metrics
    ]
    s.section(s.title("P3: curator removal"), s.tid("table-p3"), [a[0] for a in arms], rows)


def _token_and_pooled_tables(s: _Sections) -> None:
    from curiosity_tui.analysis import tables as T

    doc = s.doc
    s.section(
        "Tokens and truncation (completion tokens; curator calls excluded)",
        "table-tokens",
        doc.configs,
        s.metric_rows(T.TOKEN_ROWS, doc.configs),
    )
    if any(p.questions for p in doc.regen_dup_share_pooled.values()):
        s.section(
            "regen_dup_share, pooled over questions (per-run-then-mean is in Metrics)",
            "table-regen-pooled",
            ["duplicates / questions", "share", "embedder"],
            (
                [
                    lit(c, "bold"),
                    num(f"{p.duplicates}/{p.questions}"),
                    num("—" if p.share is None else f"{p.share:.4f}"),
                    lit(p.embedder, "cyan"),
                ]
                for c, p in doc.regen_dup_share_pooled.items()
            ),
        )
    s.section(
        "Pearson r, dependency checks vs voluntary actions (sessions 2.., pooled)",
        "table-pearson",
        ["r", "sessions", "runs", "note"],
        (
            [
                lit(c, "bold"),
                num("—" if k.r is None else f"{k.r:+.4f}"),
                num(str(k.n_sessions)),
                num(str(k.n_runs)),
                lit(k.note, "dim"),
            ]
            for c, k in ((c, doc.checks_vs_actions[c]) for c in doc.configs)
        ),
    )
