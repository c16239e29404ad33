"""The offline relay: two scripted "models" on two loopback ports take turns on one ledger.

Both serve the research bank (:class:`~curiosity_tui.offline.research.ResearchResponder`)
with their own voice, so for the same run, session and call they draw different sub-questions,
facts and return conditions: model A and model B read the same store and leave different marks
on it. ``demo --relay`` and the example ledger ``example-relay-*`` run it. No person takes a
session here (nobody need be at the keyboard); a relay with a person runs in the app.
"""

from __future__ import annotations

from pathlib import Path

from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import RunMeta
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.runs.relay import ModelMind, RelayPlan
from curiosity_tui.runs.relay_runner import RelayMinds, run_relay
from curiosity_tui.runs.runner import ProgressFn, RunResult

#: the scripted models: (key, model name, voice)
SCRIPTED_MODELS = (("A", "scripted-a", "alpha"), ("B", "scripted-b", "beta"))


def alternating(sessions: int) -> list[str]:
    """``model:A``, ``model:B``, ``model:A``, ... for ``sessions`` sessions."""
    return [f"model:{SCRIPTED_MODELS[i % 2][0]}" for i in range(sessions)]


async def run_scripted_relay(
    path: Path, meta: RunMeta, sessions: int, *, progress: ProgressFn | None = None
) -> RunResult:
    """Create (or resume) the ledger at ``path`` and relay it A -> B -> A ... offline."""
    with (
        ScriptedServer(responder=ResearchResponder(voice=SCRIPTED_MODELS[0][2])) as sa,
        ScriptedServer(responder=ResearchResponder(voice=SCRIPTED_MODELS[1][2])) as sb,
    ):
        urls = {"A": sa.base_url, "B": sb.base_url}
        plan = RelayPlan(
            sessions=alternating(sessions),
            models={
                key: ModelMind(base_url=urls[key], model=name, endpoint_name=name)
                for key, name, _ in SCRIPTED_MODELS
            },
        )
        clients = {
            key: ModelClient(
                base_url=spec.base_url, api_key="scripted", model=spec.model, retry_backoff_s=0.05
            )
            for key, spec in plan.models.items()
        }
        led = Ledger.create(path, meta, exist_ok=True)
        try:
            return await run_relay(
                led, RelayMinds(plan=plan, clients=clients), sessions=sessions, progress=progress
            )
        finally:
            led.close()
            for c in clients.values():
                await c.aclose()
