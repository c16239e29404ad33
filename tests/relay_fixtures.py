"""Relay test helpers: two scripted "models" on two ports, a relay plan over them, and a
stand-in for a person's session (tests only: the app's human-session screen commits the real
one, through the relay-human domain function).

The stand-in commits one batch as a person would: a deliverable text, one new sub-question of
the focus and one fact, the record naming ``Mind(kind="human")``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from curiosity_tui.clock import utc_now_micro
from curiosity_tui.ledger import Ledger, Mind, RunMeta, SessionRecord
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.offline.research import ResearchResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.protocol.apply import apply_facts, finish, new_questions, session_batch
from curiosity_tui.protocol.context import Budget, SessionContext, SessionSettings
from curiosity_tui.protocol.schemas import FactItem, NewQuestion
from curiosity_tui.runs.relay import ModelMind, RelayPlan
from curiosity_tui.runs.relay_runner import RelayMinds

SEED = "Did the printing press cause the Reformation?"


def relay_meta(name: str, config: str = "C+cur") -> RunMeta:
    return RunMeta(
        name=name,
        seed=SEED,
        config=config,
        contract="pilot-02",
        curator="model",
        model="model-a",
        options={"scripted": True},
    )


@contextlib.contextmanager
def two_servers() -> Iterator[tuple[ScriptedServer, ScriptedServer]]:
    """Two scripted models that draw differently for the same run and call (voices a, b)."""
    with (
        ScriptedServer(responder=ResearchResponder(voice="a")) as a,
        ScriptedServer(responder=ResearchResponder(voice="b")) as b,
    ):
        yield a, b


def plan_over(a: ScriptedServer, b: ScriptedServer, sessions: list[str]) -> RelayPlan:
    models = {
        "A": ModelMind(base_url=a.base_url, model="model-a"),
        "B": ModelMind(base_url=b.base_url, model="model-b"),
    }
    used = {s.split(":", 1)[1] for s in sessions if s.startswith("model:")}
    return RelayPlan(sessions=sessions, models={k: v for k, v in models.items() if k in used})


def clients_for(plan: RelayPlan) -> dict[str, ModelClient]:
    return {
        key: ModelClient(
            base_url=spec.base_url, api_key="scripted", model=spec.model, retry_backoff_s=0.05
        )
        for key, spec in plan.models.items()
    }


async def stand_in_human(led: Ledger, t: int, name: str) -> bool:
    """A person's session t, committed as one batch (tests only)."""
    st = SessionSettings.from_meta(led.meta)
    nodes = led.raw_nodes()
    focus = next((i for i, n in sorted(nodes.items()) if n["status"] == "open"), "q1")
    rec = SessionRecord(
        session=t,
        config=st.config.name,
        contract=st.contract.name,
        epsilon=st.epsilon,
        started=utc_now_micro(),
        focus=focus,
        mind=Mind(kind="human", name=name),
        output_text=f"{name}'s notes on {focus}",
    )
    ctx = SessionContext(led, None, t, st, rec, Budget(st.session_budget))  # type: ignore[arg-type]
    with session_batch(ctx, focus) as b:
        q = NewQuestion(
            text=f"What did pamphlet sales in 1520 look like ({name}, {t})?", parent=focus
        )
        rec.questions = new_questions(b, ctx, [q], origin="new_question", default_parent=focus)
        apply_facts(
            b, ctx, [FactItem(node=focus, text=f"{name} read the catalogue", source_id=None)]
        )
        finish(b, ctx, decay=True)
    return True


async def stopping_human(led: Ledger, t: int, name: str) -> bool:
    return False


def minds(
    plan: RelayPlan, hook: object = None, clients: dict[str, ModelClient] | None = None
) -> RelayMinds:
    return RelayMinds(plan=plan, clients=clients or clients_for(plan), human_hook=hook)  # type: ignore[arg-type]


def new_ledger(tmp: Path, name: str, config: str = "C+cur") -> Ledger:
    return Ledger.create(tmp / name, relay_meta(name, config))
