"""A person's session in a scripted relay, through the CLI and the app (issue 28 item 7):
``run --relay FILE --scripted`` with model -> person -> model serves both model entries
offline (each its own voice) and hosts the person's session in the app, where it is done with
Pilot key presses — pressed one by one, and the same keys sent as one burst."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_host import piloted, until_done, wait_for

import curiosity_tui.cli.run_cmds as run_cmds
from curiosity_tui.cli import main
from curiosity_tui.ledger import Ledger, RunMeta, verify
from tests.keyburst import burst, keys_of

RELAY = """\
sessions = ["model:big", "human:ann", "model:small"]

[models.big]
base_url = "http://127.0.0.1:9/v1"
model = "some-large-model"
api_key_env = "CURIOSITY_TEST_NO_SUCH_KEY"

[models.small]
base_url = "http://127.0.0.1:9/v1"
model = "some-small-model"
"""

#: the person's session 2: PRESERVE with a reason, no answer withheld, where the focus
#: stands, one living question; then commit
PERSON = keys_of(
    "down", "enter",  # decision: PRESERVE
    "one session cannot settle it", "tab",  # reason
    "tab",  # answer: none withheld
    "two sources disagree", "enter",  # where the focus stands
    "Which source is older?",  # a living question
    "ctrl+s",
)  # fmt: skip


def person_at_the_keys(one_burst: bool) -> Any:
    async def script(app: Any, pilot: Any, req: Any) -> None:
        from curiosity_tui.screens.human_session import HumanSessionScreen

        await wait_for(pilot, lambda: isinstance(app.screen, HumanSessionScreen), "session 2")
        await pilot.pause()
        if one_burst:
            await burst(pilot, PERSON, settle=40)
        else:
            await pilot.press(*PERSON)
        await until_done(app, pilot, req)

    return script


@pytest.mark.parametrize("one_burst", [False, True], ids=["pressed", "burst"])
def test_model_person_model_offline_with_the_persons_session_by_keys(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    one_burst: bool,
) -> None:
    monkeypatch.delenv("CURIOSITY_TEST_NO_SUCH_KEY", raising=False)
    relay = tmp_path / "relay.toml"
    relay.write_text(RELAY)
    path = tmp_path / "ws" / "run"
    path.parent.mkdir()
    seed = "Did the printing press cause the Reformation?"
    Ledger.create(path, RunMeta(name="run", seed=seed, config="C-cur", curator="none")).close()
    monkeypatch.setattr(run_cmds, "host_run", piloted(person_at_the_keys(one_burst)))
    argv = ["run", str(path), "--sessions", "3", "--relay", str(relay), "--scripted"]
    assert main([*argv, "--curator-name", "ann"]) == 0
    assert capsys.readouterr().out.startswith("SCRIPTED RELAY")
    assert verify(path).ok
    with Ledger.open(path) as led:
        recs = led.session_records()
    assert [(r.mind.kind, r.mind.name) for r in recs if r.mind] == [
        ("model", "scripted-big"),
        ("human", "ann"),
        ("model", "scripted-small"),
    ]
    assert [r.status for r in recs] == ["committed"] * 3
    person = recs[1]
    assert person.decision == "PRESERVE" and "Which source is older?" in person.questions
