"""Drive an app-hosted run from the CLI in a test: ``host_run`` (cli/run_cmds.py) opens the app
with ``app.run()``; a test swaps it for :func:`piloted`, which opens the same app under
``run_test()`` and hands it to a script of Pilot key presses. What the CLI does before and
after the app (probing, the manifest, its last line) runs unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from textual.pilot import Pilot

from curiosity_tui.app import make_app

Script = Callable[[Any, Pilot[Any], Any], Awaitable[None]]


async def wait_for(
    pilot: Pilot[Any], cond: Callable[[], bool], what: str, limit: int = 2400
) -> None:
    for _ in range(limit):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never happened: {what}")


def piloted(script: Script, size: tuple[int, int] = (150, 45)) -> Callable[[Any, str], int]:
    """A stand-in for ``run_cmds.host_run(req, curator)`` that runs ``script(app, pilot, req)``
    in the app the CLI would open, then returns what ``host_run`` would."""

    def host(req: Any, curator: str) -> int:
        async def go() -> None:
            app = make_app(req.ledger.parent, run=req, curator_name=curator)
            async with app.run_test(size=size) as pilot:
                await script(app, pilot, req)

        asyncio.run(go())
        res = req.result
        return 0 if res is not None and not res.failed and res.sessions_done >= req.sessions else 1

    return host


async def until_done(app: Any, pilot: Pilot[Any], req: Any) -> None:
    """Wait until the hosted run has finished (or failed)."""
    from curiosity_tui.screens.monitor import RunMonitorScreen

    await wait_for(
        pilot,
        lambda: (
            req.error is not None
            or (isinstance(app.screen, RunMonitorScreen) and app.screen.finished)
        ),
        "the run finished",
    )
