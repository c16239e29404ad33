"""Open life in the report and the analysis screen (issue 26, item 1): the report's Markdown
survival tables per configuration with the median and its interval, the SVG step plot (the
``plots`` extra), and the analysis screen's text step chart — on the hand-made runs of
tests/test_open_life.py, whose Kaplan–Meier figures are worked out there by hand."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_open_life import build_run
from textual.widgets import Static

from curiosity_tui.analysis.report import build_report, write_report
from curiosity_tui.analysis.survival import KMRow
from curiosity_tui.app import AnalysisApp
from curiosity_tui.widgets.survival_chart import survival_chart, survival_steps

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Two copies of the hand-made C+cur run and one C-cur run."""
    for name in ("run-a", "run-b"):
        build_run(tmp_path / "runs" / name)
    build_run(tmp_path / "runs" / "run-c", config="C-cur")
    return tmp_path / "runs"


def _section(md: str) -> str:
    start = md.index("## Open life of questions (Kaplan–Meier)")
    return md[start : md.index("\n## ", start + 5)]


def test_the_report_has_the_survival_tables(runs: Path) -> None:
    sec = _section(build_report(runs))
    # configuration, runs, questions, ended, censored, median, interval (by hand: 2 x 7 lives)
    assert "| C+cur | 2 | 14 | 8 | 6 | 4 | 4 – 4 |" in sec
    assert "| C-cur | 1 | 7 | 4 | 3 | 4 | no interval (one run) |" in sec
    assert "### Open life: C+cur" in sec and "### Open life: C-cur" in sec
    # t, at risk, events, censored, S(t), hazard: the pooled table of two identical runs
    plus = sec[sec.index("### Open life: C+cur") : sec.index("### Open life: C-cur")]
    assert "| 0 | 14 | 2 | 0 | 0.857 | 0.143 |" in plus
    assert "| 4 | 8 | 2 | 4 | 0.429 | 0.250 |" in plus
    assert "| 5 | 2 | 0 | 2 | 0.429 | 0.000 |" in plus
    assert "Met return conditions: 6; returned to: 4 (preserved 2, answered 2); never" in plus
    assert "![Open life" not in sec  # no figure without an output directory


def test_the_report_draws_the_step_plot(runs: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    md = write_report(runs, tmp_path / "out")
    svg = tmp_path / "out" / "report-survival.svg"
    assert "![Open life: Kaplan–Meier curves per configuration](report-survival.svg)" in (
        md.read_text(encoding="utf-8")
    )
    root = ET.parse(svg).getroot()  # parseable SVG
    assert root.tag == f"{SVG}svg"
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    assert {"survival-C+cur", "survival-C-cur", "censored-C+cur", "median-line"} <= ids
    again = tmp_path / "again"
    write_report(runs, again)
    assert (again / "report-survival.svg").read_bytes() == svg.read_bytes()  # deterministic


def test_steps_hold_between_table_times() -> None:
    rows = [
        KMRow(time=0, at_risk=4, events=1, censored=0, survival=0.75, hazard=0.25),
        KMRow(time=2, at_risk=3, events=1, censored=1, survival=0.5, hazard=1 / 3),
    ]
    assert survival_steps(rows) == [(0.75, 0), (0.75, 0), (0.5, 1)]
    assert survival_steps([]) == []


async def test_the_analysis_screen_shows_the_step_chart(runs: Path) -> None:
    app = AnalysisApp(runs)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        screen = app.screen
        assert str(screen.query_one("#survival", Static).render()).startswith("Open life")
        charts = [str(w.render()) for w in screen.query(".survival-chart").results(Static)]
        assert len(charts) == 2
        plus = charts[0]
        assert plus.startswith("C+cur") and "median open life: 4 sessions" in plus
        assert "95% bootstrap by run 4 – 4" in plus
        assert "S(t)  0.86  0.71  0.57  0.57  0.43  0.43" in plus
        lines = plus.splitlines()
        assert lines[2].startswith(" 1.0 ┤") and lines[6].startswith(" 0.5 ┤")
        assert "+" in plus and "└" in plus  # censored marks and the drops


def test_the_chart_reads_without_colour() -> None:
    from curiosity_tui.analysis.survival_config import ConfigSurvival

    c = ConfigSurvival(
        config="[bold]X[/bold]",
        runs=1,
        questions=2,
        events=1,
        median=None,
        ci_low=None,
        ci_high=None,
        table=[KMRow(time=1, at_risk=2, events=1, censored=1, survival=0.5, hazard=0.5)],
    )
    text = survival_chart(c)
    assert text.plain.startswith("[bold]X[/bold]")  # literal, never markup
    assert "median open life: not reached (no interval: one run)" in text.plain
    assert text.plain.rstrip().endswith("S(t)  1.00  0.50")
