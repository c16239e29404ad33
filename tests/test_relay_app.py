"""The app hosts a relay (``run --relay`` with a person's session): the run monitor runs each
session on its mind; the person's session goes to ``RunRequest.human_hook`` (here the tests'
stand-in; the app's human-session screen supplies the real one)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from relay_fixtures import clients_for, new_ledger, plan_over, stand_in_human, two_servers

from curiosity_tui.app import make_app
from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.screens.monitor import RunMonitorScreen, RunRequest


async def test_the_monitor_runs_a_relay_with_a_person(tmp_path: Path) -> None:
    with two_servers() as (a, b):
        plan = plan_over(a, b, ["model:A", "human:ana", "model:B"])
        new_ledger(tmp_path, "app-relay").close()

        @contextlib.contextmanager
        def clients() -> Iterator[dict[str, Any]]:
            yield clients_for(plan)

        req = RunRequest(
            ledger=tmp_path / "app-relay",
            sessions=3,
            curator="ana",
            client_factory=lambda: contextlib.nullcontext(None),
            relay=plan,
            relay_clients_factory=clients,
            human_hook=stand_in_human,
        )
        app = make_app(tmp_path, run=req, curator_name="ana")
        async with app.run_test(size=(140, 40)) as pilot:
            assert isinstance(app.screen, RunMonitorScreen)
            for _ in range(2400):
                if req.result is not None or req.error:
                    break
                await pilot.pause(0.05)
    assert req.error is None and req.result is not None, req.error
    assert req.result.sessions_done == 3 and not req.result.failed
    with Ledger.open(tmp_path / "app-relay") as led:
        minds = [(r.mind.kind, r.mind.name) for r in led.session_records() if r.mind]
    assert minds == [("model", "model-a"), ("human", "ana"), ("model", "model-b")]
    assert verify(tmp_path / "app-relay").ok
