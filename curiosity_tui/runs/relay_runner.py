"""Running a relay: each session of one ledger goes to the mind the relay plan names.

A model's session runs through :func:`~curiosity_tui.protocol.session.run_session` with that
model's client and the settings its endpoint probe decided, and its record names the mind. A
person's session goes to the :data:`~curiosity_tui.runs.runner.HumanSessionHook` (the app's
human-session screen); when the person stops, the run stops there, resumable.

Between sessions the run's curator acts as in :func:`~curiosity_tui.runs.runner.run_ledger`.
The model curator uses the model that took the session just finished, or, after a person's
session, the model that takes the next one (decision 221). Curator calls made before a person's
session are carried to the next model session's record (a person's record is theirs alone).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from curiosity_tui.contract.support import model_judge_of
from curiosity_tui.ledger.endpoint_record import EndpointCapabilities
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import CallRecord, SessionRecord
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.modelio.run_context import CURRENT_RUN
from curiosity_tui.modelio.sampling import CURRENT_SAMPLING, RunSampling, table_of_options
from curiosity_tui.protocol.configs import get_configuration
from curiosity_tui.protocol.session import SessionFailure, SessionSettings, run_session
from curiosity_tui.protocol.support_judge import model_judge_support, wants_model_judge
from curiosity_tui.runs.relay import RelayError, RelayPlan, check_relayable
from curiosity_tui.runs.runner import (
    CuratorHook,
    HumanSessionHook,
    Progress,
    ProgressFn,
    RunResult,
    _curate,
    _curator_snapshot_exists,
    endpoint_overrides,
)


@dataclass
class RelayMinds:
    """The relay plan and what runs it: one client (and probe record) per model key, and the
    hook a person's session goes to."""

    plan: RelayPlan
    clients: dict[str, ModelClient]
    endpoints: dict[str, EndpointCapabilities] = field(default_factory=dict)
    human_hook: HumanSessionHook | None = None

    def settings(self, led: Ledger, overrides: dict[str, Any] | None) -> dict[str, SessionSettings]:
        meta = led.meta
        return {
            key: SessionSettings.from_meta(
                meta, **{**endpoint_overrides(self.endpoints.get(key), meta), **(overrides or {})}
            )
            for key in self.clients
        }

    def curator_key(self, t: int) -> str:
        """The model whose client curates between sessions ``t - 1`` and ``t``."""
        for s in (t - 1, t):
            kind, key = self.plan.item_for(s)
            if kind == "model":
                return key
        return self.plan.model_keys()[0]


def check_relay(led: Ledger, minds: RelayMinds, sessions: int) -> None:
    """Refuse, in one line and before anything runs, a relay this ledger cannot take."""
    check_relayable(led.meta.config)
    minds.plan.check_sessions(sessions)
    missing = [k for k in minds.plan.model_keys() if k not in minds.clients]
    if missing:
        raise RelayError(f"relay model {missing[0]!r} has no client")
    if led.meta.curator == "model" and not minds.plan.model_keys():
        raise RelayError("a relay of people alone cannot have a model curator")
    humans = [t for t in minds.plan.humans(sessions) if t > led.last_session]
    if humans and minds.human_hook is None:
        kind, name = minds.plan.item_for(humans[0])
        raise RelayError(
            f"session {humans[0]} is {kind}:{name}'s: a person's session runs in the app "
            "(curiosity-tui run LEDGER --relay PLAN opens it)"
        )


async def _human_session(led: Ledger, minds: RelayMinds, t: int, name: str) -> bool:
    assert minds.human_hook is not None  # check_relay refused a plan without one
    done = await minds.human_hook(led, t, name)
    if done and led.last_session < t:
        raise RelayError(f"human:{name}'s session {t} was reported done but nothing was committed")
    return done


async def _hand_over(
    led: Ledger,
    minds: RelayMinds,
    t: int,
    st: dict[str, SessionSettings],
    hook: CuratorHook | None,
    report: Callable[..., None],
) -> list[CallRecord]:
    """The plan's model judge of support (decision 521: the relay's client of the named
    model), then the curator between sessions ``t - 1`` and ``t`` unless it already acted."""
    meta = led.meta
    judged: list[CallRecord] = []
    if t >= 2 and minds.clients and wants_model_judge(led):
        named = model_judge_of(meta.model_dump(mode="json"))
        key = next((k for k, c in minds.clients.items() if f"model:{c.model}" == named), None)
        ck = key or minds.curator_key(t)  # none serves it: the note says so, nothing judged
        calls, notes = await model_judge_support(led, minds.clients[ck], t - 1, st[ck])
        judged = [
            *calls,
            *(CallRecord(kind="support-note", internal=False, error=n) for n in notes),
        ]
    if t < 2 or not get_configuration(meta.config).curator or meta.curator == "none":
        return judged
    if _curator_snapshot_exists(led, t - 1):
        return judged
    report(t - 1, "curator")
    ck = minds.curator_key(t)
    return judged + await _curate(led, minds.clients[ck], t - 1, st[ck], hook)


async def _model_session(
    led: Ledger,
    minds: RelayMinds,
    t: int,
    settings: SessionSettings,
    embedder: Any,
    prev_focus: str | None,
    carried: list[CallRecord],
) -> SessionRecord:
    """Session ``t`` on its model: the endpoint's probe record first, then the session."""
    _, key = minds.plan.item_for(t)
    caps = minds.endpoints.get(key)
    if caps is not None:
        from curiosity_tui.modelio.endpoint import record_endpoint

        record_endpoint(led, caps)  # the journal says which endpoint each session met
    return await run_session(
        led,
        minds.clients[key],
        t,
        settings=settings,
        embedder=embedder,
        previous_focus=prev_focus,
        carried_calls=carried,
        mind=minds.plan.mind_for(t),
    )


async def run_relay(
    led: Ledger,
    minds: RelayMinds,
    *,
    sessions: int,
    embedder: Any = None,
    curator_hook: CuratorHook | None = None,
    progress: ProgressFn | None = None,
    overrides: dict[str, Any] | None = None,
) -> RunResult:
    """Run the relay until ``sessions`` are committed (resuming after the last committed one).
    Stops at the first failed session, or where a person stops (both resumable)."""
    check_relay(led, minds, sessions)
    meta = led.meta
    CURRENT_RUN.set(meta.name or led.path.name)
    CURRENT_SAMPLING.set(RunSampling(table_of_options(meta.options), meta.name or led.path.name))
    st = minds.settings(led, overrides)
    result = RunResult(ledger=led.path.name, sessions_done=led.last_session)
    t0 = time.perf_counter()

    def report(t: int, phase: Any, **kw: Any) -> None:
        if progress:
            progress(Progress(led.path.name, t, phase, elapsed_s=time.perf_counter() - t0, **kw))

    records = led.session_records()
    prev_focus = records[-1].focus if records else None
    carried: list[CallRecord] = []
    for t in range(led.last_session + 1, sessions + 1):
        kind, key = minds.plan.item_for(t)
        carried.extend(await _hand_over(led, minds, t, st, curator_hook, report))
        mind = minds.plan.mind_for(t)
        report(t, "session", detail=f"{mind.kind}:{mind.name}")
        t_session = time.perf_counter()
        if kind == "human":
            if not await _human_session(led, minds, t, key):
                result.failed.append((t, f"human:{key} stopped; their draft is kept"))
                report(t, "failed", detail=result.failed[-1][1])
                break
            rec = led.session_record(t)
            prev_focus = rec.focus if rec is not None else prev_focus
            result.sessions_done = t
            report(t, "committed", session_s=time.perf_counter() - t_session)
            continue
        try:
            done = await _model_session(led, minds, t, st[key], embedder, prev_focus, carried)
        except SessionFailure as err:
            result.failed.append((t, err.reason))
            report(t, "failed", detail=err.reason)
            break
        carried = []
        prev_focus = done.focus
        result.sessions_done = t
        tokens = sum(c.completion_tokens for c in done.calls)
        report(
            t,
            "committed",
            calls=len(done.calls),
            tokens=tokens,
            session_s=time.perf_counter() - t_session,
        )
    result.wall_s = time.perf_counter() - t0
    report(result.sessions_done, "done")
    return result


async def run_relay_pilot(
    specs: list[Any],
    out: Any,
    minds: RelayMinds,
    *,
    sessions: int,
    concurrency: int = 4,
    embedder: Any = None,
    progress: ProgressFn | None = None,
    overrides: dict[str, Any] | None = None,
) -> list[RunResult]:
    """A pilot plan's runs, each relayed by ``minds`` (at most ``concurrency`` at once; the
    clients are shared, one per model). Resumes existing ledgers."""
    import asyncio
    from pathlib import Path

    if concurrency < 1:
        raise RelayError("--concurrency must be at least 1")
    Path(out).mkdir(parents=True, exist_ok=True)
    sem = asyncio.Semaphore(concurrency)

    async def one(spec: Any) -> RunResult:
        async with sem:
            led = Ledger.create(Path(out) / spec.name, spec.meta, exist_ok=True)
            try:
                return await run_relay(
                    led,
                    minds,
                    sessions=sessions,
                    embedder=embedder,
                    progress=progress,
                    overrides=overrides,
                )
            finally:
                led.close()

    return list(await asyncio.gather(*(one(s) for s in specs)))
