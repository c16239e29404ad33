"""``run --relay FILE --scripted`` serves every model entry offline (issue 28, item 7): it
needed a real endpoint and key; now each model key gets the research bank in its own voice."""

from __future__ import annotations

from pathlib import Path

import pytest

from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta

RELAY = """\
sessions = ["model:big", "model:small", "model:big"]

[models.big]
base_url = "http://127.0.0.1:9/v1"
model = "some-large-model"
api_key_env = "CURIOSITY_TEST_NO_SUCH_KEY"

[models.small]
base_url = "http://127.0.0.1:9/v1"
model = "some-small-model"
"""


def test_a_relay_with_model_entries_runs_offline_under_scripted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CURIOSITY_TEST_NO_SUCH_KEY", raising=False)
    relay = tmp_path / "relay.toml"
    relay.write_text(RELAY)
    path = tmp_path / "run"
    Ledger.create(path, RunMeta(name="run", seed="Did the press matter?", config="C-cur")).close()
    args = ["run", str(path), "--sessions", "3", "--relay", str(relay), "--curator", "none"]
    assert main(args) == 2  # without --scripted: a real endpoint and its key are needed
    assert "CURIOSITY_TEST_NO_SUCH_KEY is not set" in capsys.readouterr().err
    assert main([*args, "--scripted"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SCRIPTED RELAY")
    taken = [ln.split("taken by ")[1] for ln in out.splitlines() if "taken by" in ln]
    assert taken == ["model:scripted-big", "model:scripted-small", "model:scripted-big"]
    with Ledger.open(path) as led:
        recs = led.session_records()
    assert [r.status for r in recs] == ["committed"] * 3
    names = [r.mind.name for r in recs if r.mind]
    assert names == ["scripted-big", "scripted-small", "scripted-big"]  # recorded as scripted
    assert led.verify().ok


def test_a_relay_without_a_curator_is_not_headed_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: the run monitor's header said "curator human:curator" for a relay that has
    no curator. The request carries the ledger's curator kind; the header names it."""
    import curiosity_tui.cli.run_cmds as run_cmds
    from curiosity_tui.screens.monitor import curator_label

    relay = tmp_path / "relay.toml"
    relay.write_text(RELAY.replace('"model:small", "model:big"', '"human:ann", "model:small"'))
    path = tmp_path / "run"
    meta = RunMeta(name="run", seed="Did the press matter?", config="C-cur", curator="none")
    Ledger.create(path, meta).close()
    seen = []
    monkeypatch.setattr(run_cmds, "host_run", lambda req, curator: seen.append(req) or 0)
    args = ["run", str(path), "--sessions", "3", "--relay", str(relay), "--scripted"]
    assert main(args) == 0
    assert len(seen) == 1 and curator_label(seen[0]) == "no curator"
    seen[0].curator_kind = "human"
    assert curator_label(seen[0]) == f"curator human:{seen[0].curator}"
