"""A C ledger after one model session against the scripted server, with one source whose text
answers the focus's requirement, for the human-session tests (built once, copied per test)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from curiosity_tui.contract.sources import add_source
from curiosity_tui.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.runner import run_ledger

SEED = "Did the printing press cause the Reformation?"
SOURCE = (
    "Guild registers give a count of literacy rates among urban artisans: in Wittenberg about "
    "one artisan in three could read by 1520.\n\n"
    "Paper was dear in the 1520s, and printers bought it by the ream from mills upriver.\n"
)
PASSAGE = (
    "Guild registers give a count of literacy rates among urban artisans: in Wittenberg about "
    "one artisan in three could read by 1520."
)


def build_after_model_session(path: Path, *, config: str = "C-cur") -> Path:
    """``path``: a ledger (pilot-02) whose session 1 a model took; a source added first."""
    led = Ledger.create(path, RunMeta(name="relay", seed=SEED, config=config, contract="pilot-02"))
    try:
        src = path.parent / "guild-registers.txt"
        src.write_text(SOURCE, encoding="utf-8")
        add_source(led, src, title="Guild registers", actor="human:alice")
        srv = ScriptedServer(responder=DemoResponder()).start()
        client = ModelClient(
            base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
        )

        async def go() -> None:
            try:
                result = await run_ledger(led, client, sessions=1)
                assert not result.failed, result.failed
            finally:
                await client.aclose()

        try:
            asyncio.run(go())
        finally:
            srv.stop()
    finally:
        led.close()
    return path


def copy_ledger(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("writer.lock"))
    return dst
