"""The relay tables in the analysis screen's report-tables view, and as plain rows (for CSV),
on the committed example relay ledger."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import DataTable

from curiosity_tui.analysis.relay_tables import format_relay_tables, relay_rows, transition_rows
from curiosity_tui.analysis.report import build_report
from curiosity_tui.analysis.rundata import load_runs
from curiosity_tui.app import AnalysisApp

EXAMPLE = Path(__file__).resolve().parents[1] / "ledgers" / "example-relay-C+cur"


def _copy(tmp: Path) -> Path:
    runs = tmp / "runs"
    shutil.copytree(EXAMPLE, runs / EXAMPLE.name, ignore=shutil.ignore_patterns("writer.lock"))
    return runs


async def test_report_tables_view_shows_the_relay(tmp_path: Path) -> None:
    runs = _copy(tmp_path)
    (run,) = load_runs([runs])
    expected = relay_rows(run)
    app = AnalysisApp(runs)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        table = app.screen.query_one("#table-relay-0", DataTable)
        assert table.row_count == len(expected) == 5
        first = [str(c) for c in table.get_row_at(1)]
        assert first[1] == expected[1].mind and first[2] == "other model"
        kinds = app.screen.query_one("#table-relay-transitions", DataTable)
        assert [str(kinds.get_row_at(i)[0]) for i in range(kinds.row_count)][:2] == [
            "same model",
            "other model",
        ]


def test_rows_are_plain_data_and_the_report_includes_them(tmp_path: Path) -> None:
    runs = _copy(tmp_path)
    (run,) = load_runs([runs])
    rows = relay_rows(run)
    assert [r.mind.split("@")[0] for r in rows] == [
        "model:scripted-a",
        "model:scripted-b",
        "model:scripted-a",
        "model:scripted-b",
        "model:scripted-a",
    ]
    assert set(rows[0].model_dump()) >= {"run", "session", "mind", "focus", "drift", "survival"}
    other = next(t for t in transition_rows([run]) if t.transition == "other_model")
    assert other.runs == 1 and other.handovers == 4 and other.drift_low is None
    assert "## example-relay-C+cur" in format_relay_tables([run])
    assert "### example-relay-C+cur" in build_report(runs)
