"""The per-session time is the session's own (issue 28, item 10): ``run`` prints each
committed session's seconds from its start to its commit, then the time into the run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta


def test_each_session_reports_its_own_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run"
    Ledger.create(path, RunMeta(name="run", seed="Did the press matter?", config="C-cur")).close()
    assert main(["run", str(path), "--sessions", "2", "--scripted", "--curator", "none"]) == 0
    out = capsys.readouterr().out
    lines = re.findall(r"session (\d) committed \((.*)\)", out)
    assert [n for n, _ in lines] == ["1", "2"], out
    own = [float(re.search(r"tokens, ([\d.]+)s;", figs).group(1)) for _, figs in lines]  # type: ignore[union-attr]
    into = [float(re.search(r"; ([\d.]+)s into the run", figs).group(1)) for _, figs in lines]  # type: ignore[union-attr]
    # session 2's own time lies within the span since session 1 committed (printed at 0.1 s)
    assert own[1] <= into[1] - into[0] + 0.1
    assert own[0] <= into[0] + 0.05 and into[1] >= into[0]
