"""`curiosity-tui metrics`: per-configuration tables and JSON by metric name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.rundata import write_run_file
from curiosity_tui.cli import main
from curiosity_tui.offline.synthetic_rundata import structural_run


def _write(tmp_path: Path) -> None:
    for cfg, depths in (("C+cur", [3, 3, 3]), ("B-armed+cur", [2, 2, 3]), ("C-cur", [2])):
        for i, d in enumerate(depths):
            write_run_file(
                structural_run(cfg, f"r{i}", depth=d, worked=d), tmp_path / f"{cfg}-r{i}.run.json"
            )


def test_metrics_json_by_metric_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path)
    assert main(["metrics", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["configs"] == ["B-armed+cur", "C+cur", "C-cur"]
    depth = doc["metrics"]["max_depth"]
    assert depth["B-armed+cur"]["value"] == pytest.approx(7 / 3)
    assert [r["value"] for r in depth["B-armed+cur"]["per_run"]] == [2.0, 2.0, 3.0]
    diffs = {(d["metric"], d["a"], d["b"]): d for d in doc["differences"]}
    d = diffs[("max_depth", "C+cur", "B-armed+cur")]
    assert d["diff"] == pytest.approx(3 - 7 / 3) and d["ci_low"] is not None
    d = diffs[("max_depth", "C-cur", "C+cur")]
    assert d["ci_low"] is None and "C-cur has n=1" in d["note"]


def test_metrics_text_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path)
    assert main(["metrics", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| max_depth | 2.33 (n=3) | 3.00 (n=3) | 2.00 (n=1) |" in out
    assert "### C+cur − B-armed+cur (P2: package, with curator)" in out
    assert "  max_depth                        +0.67  [" in out
    assert main(["metrics", "--list"]) == 0
    assert "a root counts 1" in capsys.readouterr().out
    assert main(["metrics", str(tmp_path / "nope")]) == 2


def test_report_shaped_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from curiosity_tui.analysis.rundata import RunSession

    for cfg, depth in (("B-armed+cur", 2), ("C+cur", 3), ("B-armed-cur", 2), ("C-cur", 1)):
        for i in range(2):
            r = structural_run(cfg, f"r{i}", depth=depth, worked=depth)
            if cfg.startswith("C"):
                r.sessions = [
                    RunSession(session=1, decision="PRESERVE", delta=-0.3),
                    RunSession(session=2, decision="ANSWER", delta=0.0),
                ]
            write_run_file(r, tmp_path / f"{cfg}-r{i}.run.json")
    assert main(["metrics", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "# The ledger (§8): final snapshots, mean over runs" in out
    assert "| maximum depth | 2.00 | 3.00 | 2.00 | 1.00 |" in out
    assert "| PRESERVE decisions / all decisions | — | 2/4 | — | 2/4 |" in out
    assert "# P2: same store, with curator (self-ask + store | protocol arm)" in out
    assert "| maximum depth reached | 2.00 | 3.00 |" in out
    assert "| distinct nodes worked | 2.00 → 2.00 | 3.00 → 1.00 |" in out
    assert out.index("## ledger") < out.index("## similarity") < out.index("## tokens")
