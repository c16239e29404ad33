"""The per-session history read in one pass (issue 26, item 1): ``ledger_timeline`` folds the
snapshots once and gives what reading each session's snapshot on its own gave; the open lives
and condition returns are computed once per run, and again when the run's timeline is
replaced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.analysis.open_life import open_lives
from curiosity_tui.analysis.return_latency import condition_returns
from curiosity_tui.analysis.rundata import load_runs
from curiosity_tui.analysis.signature import committed_sessions
from curiosity_tui.analysis.timeline import condition_met, ledger_timeline
from curiosity_tui.ledger import Ledger

LEDGERS = Path(__file__).resolve().parents[1] / "ledgers"


def _one_snapshot_per_session(led: Ledger) -> dict[str, list[dict[str, Any]]]:
    """The definition, read the slow way: each committed session's own snapshot (its last;
    the last session's last that is not the curator's)."""
    committed = committed_sessions(led)
    index = led.snapshot_index()
    out: dict[str, list[dict[str, Any]]] = {}
    for t in committed:
        stages = [st for s, st, _ in index if s == t]
        if not stages:
            continue
        if t == committed[-1] and any(st != "curator" for st in stages):
            stage = [st for st in stages if st != "curator"][-1]
        else:
            stage = None
        for nid, node in led.snapshot(t, stage).items():
            out.setdefault(nid, []).append(
                {"session": t, "status": node["status"], "met": condition_met(node)}
            )
    return out


@pytest.mark.parametrize(
    "name",
    ["example-C+cur-pilot02", "example-relay-C+cur", "evidence-pilot02", "episode-grabe-pilot01"],
)
def test_one_pass_equals_one_snapshot_per_session(name: str) -> None:
    led = Ledger.open(LEDGERS / name, write=False)
    try:
        folded = {k: [s.model_dump() for s in v] for k, v in ledger_timeline(led).items()}
        assert folded == _one_snapshot_per_session(led)
        assert folded  # the examples have questions
    finally:
        led.close()


def test_derived_lists_are_computed_once_per_run() -> None:
    (run,) = load_runs([LEDGERS / "example-C-cur-pilot02"])
    lives, returns = open_lives(run), condition_returns(run)
    assert lives and open_lives(run) is lives and condition_returns(run) is returns
    other = run.model_copy()  # another run object: its own entry
    assert open_lives(other) is not lives and open_lives(other) == lives
    run.timeline = None  # replaced: computed again
    assert open_lives(run) is None and condition_returns(run) is None
