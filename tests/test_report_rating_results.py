"""The report's rating results (issue 28 item 8, decision 561), after the GRRAS items: the
pack scheme, adjudication counts while the key is closed (it is never opened by the report),
then — after ``unblind`` — the tables per arm with the raw and the adjudicated sets side by
side and labelled, the control items, and an SVG figure per question beside the Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest
from adjudication_fixtures import build_rated_pack

from curiosity_tui.analysis.figures import available
from curiosity_tui.analysis.rundata import RunData, RunNode, RunSession, write_run_file
from curiosity_tui.cli import main
from curiosity_tui.packs.disagreement import adjudicate, adjudication_state
from curiosity_tui.packs.unblind import PackLog


def _runs(run_dir: Path) -> None:
    run_dir.mkdir()
    for cfg, depth in (("C+cur", 3), ("B-armed+cur", 2)):
        nodes = {
            f"q{i}": RunNode(id=f"q{i}", parent=None if i == 1 else f"q{i - 1}")
            for i in range(1, depth + 1)
        }
        run = RunData(config=cfg, run_id=f"{cfg}-0", contract="pilot-02", nodes=nodes,
                      sessions=[RunSession(session=1)])  # fmt: skip
        write_run_file(run, run_dir / f"{cfg}-0.run.json")


def _results(text: str) -> str:
    return text.split("### Rating results", 1)[1].split("\n## ", 1)[0]


def test_the_report_holds_the_rating_results_raw_and_adjudicated_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    _runs(runs)
    pack = build_rated_pack(tmp_path)
    out = tmp_path / "report"
    argv = ["report", str(runs), "--out", str(out), "--pack", str(pack)]
    assert main(argv) == 0
    closed = _results((out / "report.md").read_text())
    assert "**Pack scheme.** Scheme `pilot-01`" in closed
    assert (
        "**Adjudication.** 3 disagreement(s) (item × question; q1: 2, q2: 1); 0 adjudicated"
        in closed
    )
    assert "The key is still closed" in closed and "| raw, human raters |" not in closed
    assert not any(e.kind == "key_opened" for e in PackLog(pack).entries())  # never opened

    first = adjudication_state(pack).disagreements[0]
    adjudicate(pack, first.item, first.question, "built", "the later output cites session 1",
               by="human:cora")  # fmt: skip
    assert main(["unblind", str(pack), "--by", "cora"]) == 0
    capsys.readouterr()
    assert main(argv) == 0
    assert f"wrote {out / 'report-rating-q1.svg'}" in capsys.readouterr().out or not available()
    opened = _results((out / "report.md").read_text())
    assert "1 adjudicated by the coordinator before unblinding, 2 left split" in opened
    assert "Unblinded with the key opened at pack log seq" in opened
    assert "| set | arm | built | fresh | split | runs |" in opened
    raw = [ln for ln in opened.splitlines() if ln.startswith("| raw, human raters |")]
    adj = [ln for ln in opened.splitlines() if ln.startswith("| adjudicated |")]
    assert len(raw) == len(adj) == 12  # six arms, two questions, both sets
    split_raw = sum(int(ln.split("|")[5]) for ln in raw[:6])
    split_adj = sum(int(ln.split("|")[5]) for ln in adj[:6])
    assert (split_raw, split_adj) == (2, 1)  # q1: the adjudicated split left the split column
    assert "**Control items.**" in opened
    if available():
        svg = (out / "report-rating-q1.svg").read_text()
        assert 'id="rating-adjudicated-' in svg and 'id="rating-raw-' in svg
        assert "![q1: runs per arm, raw and adjudicated](report-rating-q1.svg)" in opened


def test_a_study_reports_its_packs_and_finds_the_key_in_keys(tmp_path: Path) -> None:
    from curiosity_tui.analysis.study import study_packs
    from curiosity_tui.packs.pack import Pack
    from curiosity_tui.packs.rating_results import find_key

    root = tmp_path / "s"
    assert main(["study", "init", str(root)]) == 0
    pack = build_rated_pack(tmp_path)
    moved = root / "packs" / "p1"
    pack.rename(moved)
    (tmp_path / "pack.key.json").rename(root / "keys" / "pack.key.json")
    assert study_packs(root) == [moved] and study_packs(tmp_path) == []
    assert find_key(Pack.open(moved)) == moved.parent.parent / "keys" / "pack.key.json"
