"""RunData.from_ledger over a real (tiny) ledger, and the run-file round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.analysis.registry import get
from curiosity_tui.analysis.rundata import RunData, load_runs, read_run_file, write_run_file
from curiosity_tui.errors import InputError
from curiosity_tui.offline.synthetic_rundata import structural_run


def test_from_ledger_reads_meta_and_snapshot(tmp_path: Path) -> None:
    ledger_mod = pytest.importorskip("curiosity_tui.ledger")
    meta = ledger_mod.RunMeta(name="C-cur-r0", seed="Did the press cause it?", config="C-cur")
    led = ledger_mod.Ledger.create(tmp_path / "C-cur-r0", meta)
    led.close()
    runs = load_runs([tmp_path])
    assert len(runs) == 1
    run = runs[0]
    assert run.config == "C-cur" and run.run_id == "C-cur-r0"
    assert list(run.nodes) == ["q1"]
    assert get("live_nodes")(run) == 1.0
    assert get("max_depth")(run) == 1.0
    assert get("nodes_worked")(run) == 0.0  # creation is not a resurfacing


def test_run_file_round_trip_and_bad_file(tmp_path: Path) -> None:
    r = structural_run("C+cur", "r0", depth=2, worked=3)
    write_run_file(r, tmp_path / "r0.run.json")
    back = read_run_file(tmp_path / "r0.run.json")
    assert back.nodes == r.nodes and back.config == "C+cur"
    (tmp_path / "bad.run.json").write_text('{"config": "C+cur"}')
    with pytest.raises(InputError, match="bad.run.json: not a run file: run_id"):
        load_runs([tmp_path])
    assert isinstance(back, RunData)
