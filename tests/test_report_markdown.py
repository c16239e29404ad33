"""`report`: real Markdown tables in the pilot report's §4/§8 layouts, cells escaped, and SVG
figures (plots extra) that hold the expected series; without matplotlib the report says how
to get them."""

from __future__ import annotations

import csv
import io
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from curiosity_tui.analysis.aggregate import fmt
from curiosity_tui.analysis.markdown import md_cell, md_table
from curiosity_tui.analysis.report import build_report
from curiosity_tui.analysis.rundata import RunSession, write_run_file
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_rundata import structural_run

SVG = "{http://www.w3.org/2000/svg}"
DEPTHS = {"B-armed+cur": (2, 3, 2), "C+cur": (3, 4, 2), "B-armed-cur": (2, 2, 2), "C-cur": (1, 2)}
DELTAS = (-0.3, -0.18, -0.12, 0.02, -0.45)


def cells(line: str) -> list[str]:
    """A pipe-table row split on unescaped pipes."""
    assert line.startswith("| ") and line.endswith(" |"), line
    return [c.strip() for c in re.split(r"(?<!\\)\|", line[1:-1])]


def table_after(md: str, heading: str) -> list[list[str]]:
    """The first pipe table after ``heading``: header then rows (delimiter row left out)."""
    rest = md.split(heading + "\n", 1)[1].splitlines()
    start = next(i for i, ln in enumerate(rest) if ln.startswith("|"))
    out = []
    for ln in rest[start:]:
        if not ln.startswith("|"):
            break
        if not ln.startswith("|---"):
            out.append(cells(ln))
    return out


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    d = tmp_path / "runs"
    d.mkdir()
    for cfg, depths in DEPTHS.items():
        for i, depth in enumerate(depths):
            r = structural_run(cfg, f"{cfg}-r{i}", depth=depth, worked=depth)
            if cfg.startswith("C"):
                r.sessions = [
                    RunSession(session=s, delta=d, epsilon=0.15,
                               decision="PRESERVE" if d < -0.15 else "ANSWER")
                    for s, d in enumerate(DELTAS, start=1)
                ]  # fmt: skip
            write_run_file(r, d / f"{cfg}-r{i}.run.json")
    return d


def test_cells_cannot_break_a_table() -> None:
    model_text = "a | b\nsecond line <script>x</script> *bold* `code` [link](u) ### h"
    row = md_table(["col", "other"], [[model_text, "live_nodes"]])
    assert len(row) == 3 and all(len(cells(r)) == 2 for r in (row[0], row[2]))
    assert "\\|" in row[2] and "<script>" not in row[2] and "&lt;script&gt;" in row[2]
    assert "\n" not in row[2] and "\\*bold\\*" in row[2] and "\\`code\\`" in row[2]
    assert md_cell("live_nodes") == "live_nodes" and md_cell("_x_") == "\\_x\\_"
    with pytest.raises(ValueError, match="3 cells"):
        md_table(["a", "b"], [[1, 2, 3]])


def test_report_tables_are_markdown_in_the_report_layout(
    runs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = build_report(runs_dir)
    assert "```\n|" not in md  # no table inside a code block
    ledger = table_after(md, "## The ledger (§8)")
    assert ledger[0] == ["", "self-ask + store, curator (B-armed+cur)",
                         "protocol, curator (C+cur)", "self-ask + store, no curator (B-armed-cur)",
                         "protocol, no curator (C-cur)"]  # fmt: skip
    rows = {r[0]: r[1:] for r in ledger[1:]}
    assert rows["maximum depth"] == ["2.33", "3.00", "2.00", "1.50"]
    assert rows["PRESERVE decisions / all decisions"] == ["—", "9/15", "—", "6/10"]
    p3 = table_after(md, "### P3: curator removal")
    assert p3[0][1:] == ["self-ask + store: with → without", "protocol arm: with → without"]
    sweep = table_after(md, "### ε sweep")
    assert sweep[0] == ["ε", "0.05", "0.10", "0.15", "0.20", "0.25", "0.30", "0.40"]
    assert sweep[1] == ["preservation rate", "0.80", "0.80", "0.60", "0.40", "0.40", "0.20", "0.20"]
    # the report's table and the CSV export come from the same rows
    assert main(["metrics", str(runs_dir), "--csv"]) == 0
    data = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    for col, cfg in zip(ledger[0][1:], DEPTHS, strict=True):
        vals = [float(r["value"]) for r in data if (r["metric"], r["config"]) == ("max_depth", cfg)]
        assert fmt(sum(vals) / len(vals)) == rows["maximum depth"][ledger[0].index(col) - 1]
    spread = table_after(md, "### max_depth")
    assert spread[2] == ["protocol, curator (C+cur)", "3", "3.00", spread[2][3], "3.00, 4.00, 2.00"]
    assert re.fullmatch(r"\\\[\d\.\d\d, \d\.\d\d\\\]", spread[2][3])  # an interval of the mean
    assert spread[4][0] == "protocol, no curator (C-cur)" and spread[4][4] == "1.00, 2.00"


def test_one_run_has_no_interval_in_table_or_figure(tmp_path: Path) -> None:
    from curiosity_tui.analysis.aggregate import MetricAggregate, RunValue
    from curiosity_tui.analysis.figures import per_run_svg
    from curiosity_tui.analysis.report_tables import spread, spread_md

    one = MetricAggregate(metric="m", config="A", value=2.0, n=1, n_missing=1,
                          per_run=[RunValue(run_id="a", value=2.0), RunValue(run_id="b", value=None)])  # fmt: skip
    two = MetricAggregate(metric="m", config="B", value=1.5, n=2, n_missing=0,
                          per_run=[RunValue(run_id="c", value=1.0), RunValue(run_id="d", value=2.0)])  # fmt: skip
    spreads = [spread(one), spread(two)]
    assert spreads[0].ci_low is None and spreads[0].values == [2.0]
    assert spreads[1].ci_low is not None and 1.0 <= spreads[1].ci_low <= spreads[1].ci_high <= 2.0  # type: ignore[operator]
    rows = [cells(x) for x in spread_md(spreads)[2:]]
    assert rows[0][1:4] == ["1", "2.00", "no interval (fewer than two runs)"]
    root = ET.parse(per_run_svg("m", spreads, tmp_path / "m.svg")).getroot()
    ids = {g.get("id") for g in root.iter(f"{SVG}g")}
    assert {"runs-A", "mean-A", "runs-B", "mean-B", "interval-B"} <= ids
    assert "interval-A" not in ids


def test_report_figures_hold_the_series(runs_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    assert main(["report", str(runs_dir), "--out", str(out)]) == 0
    md = (out / "report.md").read_text(encoding="utf-8")
    refs = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert "report-sweep.svg" in refs and "report-per-run-max_depth.svg" in refs
    assert all((out / r).is_file() for r in refs)
    assert "pip install" not in md
    sweep = ET.parse(out / "report-sweep.svg").getroot()
    groups = {g.get("id"): g for g in sweep.iter(f"{SVG}g")}
    for cfg in ("C+cur", "C-cur"):
        assert len(list(groups[f"sweep-{cfg}"].iter(f"{SVG}use"))) == 7  # one marker per ε
    assert "sweep-B-armed+cur" not in groups  # no Δ recorded there
    assert "recorded-0.15" in groups
    per_run = ET.parse(out / "report-per-run-max_depth.svg").getroot()
    groups = {g.get("id"): g for g in per_run.iter(f"{SVG}g")}
    for cfg, depths in DEPTHS.items():
        assert len(list(groups[f"runs-{cfg}"].iter(f"{SVG}use"))) == len(depths)
        assert len(list(groups[f"mean-{cfg}"].iter(f"{SVG}use"))) == 1
        assert f"interval-{cfg}" in groups  # every configuration here has >= 2 runs
    first = (out / "report-sweep.svg").read_bytes()
    assert main(["report", str(runs_dir), "--out", str(out / "again.md")]) == 0
    assert (out / "again-sweep.svg").read_bytes() == first  # deterministic SVG


def test_without_matplotlib_the_report_says_how(
    runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = tmp_path / "r.md"
    assert main(["report", str(runs_dir), "--out", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    assert "pip install 'curiosity-tui[plots]'" in md and "![" not in md
    assert not list(tmp_path.glob("*.svg"))
    assert table_after(md, "### ε sweep")[0][0] == "ε"  # the tables are all still there
