"""The analysis screen (issue 7 item 4): metric tables, report tables, verdict, ε sweep and
per-run chart, driven by keys (Pilot). Every expected figure is computed here through the
analysis API and compared with what the screen shows."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Select, Static

from curiosity_tui.analysis.aggregate import aggregate
from curiosity_tui.analysis.prereg import lock
from curiosity_tui.analysis.rundata import load_runs
from curiosity_tui.analysis.sweep import SweepResult, SweepRow, sweep_runs
from curiosity_tui.analysis.tables import order_configs
from curiosity_tui.analysis.verdict import verdict_for_dir
from curiosity_tui.app import AnalysisApp
from curiosity_tui.screens.analysis import AnalysisScreen
from curiosity_tui.widgets.charts import RunBars, epsilon_curve, hbar

ROOT = Path(__file__).resolve().parents[1]
LEDGERS = ROOT / "ledgers"
MARKUP_RULE = "C [bold red]beats[/] B [link=file:///etc]on depth[/link]"

PLAN = f"""\
name = "analysis-screen"
configurations = ["B-armed+cur", "C+cur"]
runs = 1
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "scripted-demo"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["max_depth"]
text = "{MARKUP_RULE}"
"""


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def screen_of(app: AnalysisApp) -> AnalysisScreen:
    screen = app.screen
    assert isinstance(screen, AnalysisScreen)
    assert screen.error is None, screen.error
    return screen


def cells(table: DataTable, row_key: str) -> list[str]:  # type: ignore[type-arg]
    return [str(c) for c in table.get_row(row_key)]


def static_text(screen: AnalysisScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def two_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir(exist_ok=True)  # a test may lock a plan into it before the runs exist
    for name in ("example-C+cur-pilot02", "example-B-armed+cur-pilot02"):
        shutil.copytree(LEDGERS / name, runs / name)
    return runs


@pytest.fixture(scope="module")
def expected() -> dict[str, object]:
    runs = load_runs([LEDGERS])
    table = aggregate(runs, ["max_depth", "nodes_worked"])
    return {
        "configs": order_configs(list(table)),
        "table": table,
        "sweeps": sweep_runs(runs),
    }


async def test_views_by_key_on_the_example_ledgers(expected: dict[str, object]) -> None:
    configs: list[str] = expected["configs"]  # type: ignore[assignment]
    table = expected["table"]  # type: ignore[assignment]
    sweeps: list[SweepResult] = expected["sweeps"]  # type: ignore[assignment]
    app = AnalysisApp(LEDGERS)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        assert screen.view == "metrics"

        # 1 metrics: configurations are the columns, cells are the domain's means and n
        metrics = screen.query_one("#metric-table", DataTable)
        assert [str(c.label) for c in metrics.columns.values()] == ["metric", *configs]
        for config in configs:
            agg = table[config]["max_depth"]
            assert screen.metric_cell("max_depth", config) == f"{agg.value:.2f} (n={agg.n})"
        # the highlighted metric's per-run values and differences are shown beneath
        assert screen.metric == "live_nodes"
        await pilot.press(*["down"] * 6)  # live_nodes … max_depth (registry order)
        assert screen.metric == "max_depth"
        detail = static_text(screen, "#metric-detail")
        for config in configs:
            for rv in table[config]["max_depth"].per_run:
                assert f"{rv.run_id} {rv.value:.2f}" in detail
        # the example ledgers hold pilot-01 episodes and pilot-02 runs: the groups are
        # config@contract cells, and the report's pairs are taken within each contract
        assert (
            "C-cur@pilot-02 − C+cur@pilot-02 (P3: curator removed, protocol arm; pilot-02)"
            in detail
        )
        assert "no interval: B-armed+cur@pilot-02 has n=1" in detail

        # 2 report tables: the §8 ledger table with its PRESERVE row
        await pilot.press("2")
        assert screen.view == "tables"
        ledger = screen.query_one("#table-ledger", DataTable)
        labels = [str(ledger.get_row_at(i)[0]) for i in range(ledger.row_count)]
        depth = [str(c) for c in ledger.get_row_at(labels.index("maximum depth"))]
        cols = [
            f"{c}@pilot-02"
            for c in ("B-armed+cur", "C+cur", "B-armed-cur", "C-cur")
            if f"{c}@pilot-02" in configs
        ]
        assert cols  # the pilot-02 tables come first
        assert depth[1:] == [f"{table[c]['max_depth'].value:.2f}" for c in cols]
        assert "PRESERVE decisions / all decisions" in labels

        # 3 verdict: no prereg chain beside the example ledgers
        await pilot.press("3")
        assert screen.view == "verdict"
        assert "no locked plan" in static_text(screen, "#verdict-headline")

        # 4 ε sweep: one row per ε, rate and count per configuration that recorded Δ
        await pilot.press("4")
        assert screen.view == "sweep"
        sweep_table = screen.query_one("#sweep-table", DataTable)
        assert sweep_table.row_count == len(sweeps[0].rows)
        for i, row in enumerate(sweeps[0].rows):
            shown = cells(sweep_table, f"{row.epsilon:.2f}")
            expect = [f"{row.epsilon:.2f}"]
            for s in sweeps:
                r = s.rows[i]
                expect += [f"{r.rate:.2f}", f"{r.preserved}/{r.n}"]
            assert shown == expect
        curves = [str(w.render()) for w in screen.query(".sweep-curve").results(Static)]
        assert len(curves) == len(sweeps)
        assert all("▲ rec" in c and "1.00 ┤" in c for c in curves)

        # 5 per-run chart of the metric chosen in the metrics view; n / p change it
        await pilot.press("5")
        assert screen.view == "chart"
        bars = screen.query_one("#chart-bars", RunBars)
        assert bars.chart_text.plain.startswith("max_depth")
        await pilot.press("n")
        assert screen.metric == "preserve_share"
        assert screen.query_one("#chart-metric", Select).value == "preserve_share"
        assert bars.chart_text.plain.startswith("preserve_share")
        await pilot.press("N")
        chart = bars.chart_text.plain
        assert chart.startswith("max_depth")
        for config in configs:
            for rv in table[config]["max_depth"].per_run:
                line = next(x for x in chart.splitlines() if x.strip().startswith(rv.run_id))
                assert line.rstrip().endswith(f"{rv.value:.2f}")
        # the metric table follows the chart's metric; Enter on a row charts that metric
        await pilot.press("1")
        assert screen.view == "metrics"
        await pilot.press("up", "enter")
        assert screen.view == "chart" and screen.metric == "closed_with_facts"
        assert bars.chart_text.plain.startswith("closed_with_facts")


async def test_verdict_with_a_locked_plan(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    entry = lock(plan, "before-runs", chain_path=tmp_path / "runs" / "prereg.jsonl")
    runs = two_runs(tmp_path)
    rep = verdict_for_dir(runs)
    word = {"met": "MET", "not_met": "NOT MET"}[rep.verdict.outcome]
    clause = rep.verdict.by_metric[0].clauses[0]

    app = AnalysisApp([runs])
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("3")
        assert screen.view == "verdict"
        head = static_text(screen, "#verdict-headline")
        assert f"Verdict over SCRIPTED replies: {word}" in head  # example ledgers: scripted
        assert f"seq 1, stage before-runs, {entry.hash[:12]}" in head
        body = " ".join(str(w.render()) for w in screen.query("#verdict-body Static").results())
        assert MARKUP_RULE in body  # the plan's prose, literally: no style, no link
        clauses = screen.query_one("#verdict-clauses", DataTable)
        row = [str(c) for c in clauses.get_row_at(0)]
        assert row[0] == "max_depth"
        assert row[2] == "higher"
        assert row[3:5] == ["C+cur", f"{clause.value_treatment:.2f}"]
        assert row[6:8] == ["B-armed+cur", f"{clause.value_control:.2f}"]
        assert row[8] == f"{clause.advantage:+.2f}"
        assert row[9] == clause.outcome.replace("_", " ")
        assert row[10] == "no interval"  # one run a side
        # the locked metric is never exploratory; the others are, with their values
        explo = screen.query_one("#verdict-exploratory", DataTable)
        keys = [k.value for k in explo.rows]
        assert "max_depth" not in keys and "nodes_worked" in keys
        nw = {r.metric: r for r in rep.exploratory}["nodes_worked"]
        shown = cells(explo, "nodes_worked")
        assert shown[1:3] == [f"{nw.by_config['B-armed+cur']:.2f}", f"{nw.by_config['C+cur']:.2f}"]
        assert shown[3] == f"{nw.differences[0].diff:+.2f} no interval"
        chron = screen.query_one("#verdict-chronology", DataTable)
        assert [str(c) for c in chron.get_row_at(0)][:3] == ["1", entry.ts, "before-runs"]


async def test_verdict_without_a_lock_says_so(tmp_path: Path) -> None:
    runs = two_runs(tmp_path)
    app = AnalysisApp([runs])
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("3")
        head = static_text(screen, "#verdict-headline")
        assert "Verdict: none" in head and "no locked plan" in head
        assert "prereg lock PLAN.toml --stage before-runs" in head
        assert not screen.query("#verdict-clauses")
        # the tables are there all the same
        await pilot.press("1")
        depth = aggregate(load_runs([runs]), ["max_depth"])["C+cur"]["max_depth"]
        assert screen.metric_cell("max_depth", "C+cur") == f"{depth.value:.2f} (n=1)"
        await pilot.press("4")  # the B arm records no Δ; C+cur does
        assert screen.query_one("#sweep-table", DataTable).row_count == 7


async def test_broken_chain_and_no_runs_are_reported(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    chain = tmp_path / "runs" / "prereg.jsonl"
    lock(plan, "before-runs", chain_path=chain)
    runs = two_runs(tmp_path)
    chain.write_text(chain.read_text().replace("before-runs", "after-key"))
    app = AnalysisApp([runs])
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = screen_of(app)
        await pilot.press("3")
        head = static_text(screen, "#verdict-headline")
        assert "the prereg chain cannot be used" in head and "seq 1" in head
    empty = tmp_path / "empty"
    empty.mkdir()
    app = AnalysisApp([empty])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnalysisScreen)
        assert screen.error is not None and "no runs found" in screen.error
        assert "no runs found" in static_text(screen, "#analysis-status")


async def test_pushed_on_the_main_app_and_back(tmp_path: Path) -> None:
    from curiosity_tui.app import make_app
    from curiosity_tui.screens.workspace import WorkspaceScreen

    runs = two_runs(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WorkspaceScreen)
        app.push_screen(AnalysisScreen([runs]))
        await settle(pilot)
        screen = screen_of(app)
        live = aggregate(load_runs([runs]), ["live_nodes"])["B-armed+cur"]["live_nodes"]
        assert screen.metric_cell("live_nodes", "B-armed+cur") == f"{live.value:.2f} (n=1)"
        await pilot.press("escape")
        assert isinstance(app.screen, WorkspaceScreen)


def test_charts_are_exact_block_drawings() -> None:
    assert hbar(1.0, 1.0, 4) == "████"
    assert hbar(0.5, 1.0, 3) == "█▌"  # 1.5 cells
    assert hbar(0.0, 1.0, 4) == ""
    assert hbar(2.0, 0.0, 4) == ""
    assert hbar(0.5, 1.0, 4, "░") == "░░"
    res = SweepResult(
        label="C+cur",
        n=4,
        recorded_epsilons=[0.15],
        rows=[
            SweepRow(epsilon=0.05, preserved=4, n=4, rate=1.0),
            SweepRow(epsilon=0.15, preserved=2, n=4, rate=0.5),
        ],
        caveat="",
    )
    lines = epsilon_curve(res, height=2).plain.splitlines()
    assert lines[0].startswith("C+cur — preservation rate vs ε (4 recorded Δ; recorded ε = 0.15)")
    assert lines[1] == "1.00 ┤  █████       "  # 1.0 fills both rows; 0.5 only the lower
    assert lines[2] == "0.50 ┤  █████  █████"
    assert lines[3] == "0.00 └" + "─" * 14
    assert "▲ rec" in lines[5] and lines[5].index("▲") > lines[4].index("0.05")


def test_importing_the_screen_loads_no_numpy(subprocess_env: dict[str, str]) -> None:
    code = (
        "import sys, curiosity_tui.screens.analysis\n"
        "heavy = [m for m in ('numpy', 'sklearn', 'openai') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=subprocess_env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("key", ["1", "4", "5"], ids=["metrics", "sweep", "chart"])
def test_snapshot_views(snap_compare, key: str, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(ROOT)  # a relative path in the title, the same on every checkout

    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)

    assert snap_compare(AnalysisApp(Path("ledgers")), terminal_size=(130, 40), run_before=run)
