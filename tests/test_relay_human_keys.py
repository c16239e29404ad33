"""Issue 15's pilot test: a 4-session C run relayed model A -> human -> model B -> model A against
two scripted servers, the person's session driven by key presses in the app's human-session
screen (opened by the run monitor itself, no stand-in): answer fields, a check with a verified
passage from a source, a new question, PRESERVE with a reason. The ledger verifies, each record
names its mind, and the audit and metrics work on it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from human_fixtures import PASSAGE, SEED, SOURCE
from test_app_human_session import KEYS

from curiosity_tui.analysis.rundata import load_runs
from curiosity_tui.app import make_app
from curiosity_tui.cli import main
from curiosity_tui.contract.audit import audit_path
from curiosity_tui.contract.sources import add_source
from curiosity_tui.ledger import Ledger, RunMeta, verify
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.relay import ModelMind, RelayPlan
from curiosity_tui.screens.human_session import HumanSessionScreen
from curiosity_tui.screens.monitor import RunRequest


def _ledger(tmp: Path) -> Path:
    path = tmp / "ws" / "relay-keys"
    path.parent.mkdir(parents=True)
    led = Ledger.create(path, RunMeta(name="relay-keys", seed=SEED, config="C-cur"))
    src = tmp / "guild-registers.txt"
    src.write_text(SOURCE, encoding="utf-8")
    add_source(led, src, title="Guild registers", actor="human:alice")
    led.close()
    return path


async def test_a_relay_with_a_person_at_the_keys(tmp_path: Path, capsys: Any) -> None:
    path = _ledger(tmp_path)
    with (
        ScriptedServer(responder=DemoResponder()) as a,
        ScriptedServer(responder=DemoResponder()) as b,
    ):
        plan = RelayPlan(
            sessions=["model:A", "human:alice", "model:B", "model:A"],
            models={
                "A": ModelMind(base_url=a.base_url, model="model-a"),
                "B": ModelMind(base_url=b.base_url, model="model-b"),
            },
        )

        @contextlib.contextmanager
        def clients() -> Iterator[dict[str, Any]]:
            yield {
                k: ModelClient(
                    base_url=m.base_url, api_key="sk-test", model=m.model, retry_backoff_s=0.01
                )
                for k, m in plan.models.items()
            }

        req = RunRequest(
            ledger=path,
            sessions=4,
            curator="alice",
            client_factory=lambda: contextlib.nullcontext(None),
            relay=plan,
            relay_clients_factory=clients,
        )
        app = make_app(path.parent, run=req, curator_name="alice")
        async with app.run_test(size=(150, 45)) as pilot:
            for _ in range(2400):
                if isinstance(app.screen, HumanSessionScreen) or req.error:
                    break
                await pilot.pause(0.05)
            assert isinstance(app.screen, HumanSessionScreen), req.error
            await pilot.pause()
            await pilot.press(*KEYS)
            for _ in range(2400):
                if req.result is not None or req.error:
                    break
                await pilot.pause(0.05)
    assert req.error is None and req.result is not None, req.error
    assert req.result.sessions_done == 4 and not req.result.failed
    assert verify(path).ok
    with Ledger.open(path) as led:
        recs = led.session_records()
        minds = [(r.mind.kind, r.mind.name) for r in recs if r.mind]
        endpoints = {r.mind.endpoint for r in recs if r.mind and r.mind.kind == "model"}
        human = recs[1]
        focus = led.raw_nodes()[human.focus or ""]
    assert minds == [
        ("model", "model-a"),
        ("human", "alice"),
        ("model", "model-b"),
        ("model", "model-a"),
    ]
    assert len(endpoints) == 2
    assert human.decision == "PRESERVE" and human.delta is None
    assert (
        focus["evidence"][-1]["status"] == "verified"
        and focus["evidence"][-1]["passage"] == PASSAGE
    )
    assert "Who kept the guild registers?" in human.questions
    report = audit_path(path)
    assert report.findings == [], report.findings  # pilot-02: nothing closed over unmet
    run = load_runs([path])[0]
    assert [s.session for s in run.committed_sessions()] == [1, 2, 3, 4]
    assert main(["metrics", str(path)]) == 0
    out = capsys.readouterr().out
    assert "relay_survival_share" in out and "relay_drift_step_mean" in out


async def test_the_browser_names_the_mind_of_the_session_shown() -> None:
    from textual.widgets import Static

    from curiosity_tui.screens.browser import BrowserScreen

    ledger = Path(__file__).resolve().parents[1] / "ledgers" / "example-relay-C+cur"
    app = make_app(ledger.parent, ledger=ledger)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("left_square_bracket")  # from "now" to the last session, s5
        await pilot.pause()
        status = str(app.screen.query_one("#browser-status", Static).render())
    assert "s5 by model scripted-a" in status
