"""Running sessions: one ledger for N sessions (with its curator between sessions), or a whole
pilot of many runs concurrently (each run's sessions stay in order).

The human curator is a hook: ``async hook(ledger, after_session) -> None`` that performs its
actions through :mod:`curiosity_tui.ledger.curation` / :mod:`curiosity_tui.contract.downgrades`
and returns when the curator says "continue". The app supplies one; the CLI's default skips.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from curiosity_tui.errors import InputError
from curiosity_tui.ledger import curation
from curiosity_tui.ledger.endpoint_record import EndpointCapabilities
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import CallRecord, RunMeta, SessionRecord
from curiosity_tui.ledger.render import render_session_input
from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.modelio.reply_cache import CURRENT_CACHE, ReplyCache
from curiosity_tui.modelio.run_context import CURRENT_RUN
from curiosity_tui.modelio.sampling import CURRENT_SAMPLING, RunSampling
from curiosity_tui.protocol import prompts
from curiosity_tui.protocol.call_specs import curator_spec
from curiosity_tui.protocol.configs import get_configuration
from curiosity_tui.protocol.curator_guard import apply_curator_actions
from curiosity_tui.protocol.schemas import CuratorResponse
from curiosity_tui.protocol.session import SessionFailure, SessionSettings, run_session
from curiosity_tui.protocol.support_judge import model_judge_support, wants_model_judge

CuratorHook = Callable[[Ledger, int], Awaitable[None]]
HumanSessionHook = Callable[[Ledger, int, str], Awaitable[bool]]
"""A person takes session t of a relay: ``await hook(ledger, t, name)`` returns True once the
person's session is committed (as one batch, actor ``human:<name>``), False when they stopped
(their draft is kept and the run stops, resumable)."""


@dataclass
class Progress:
    """A progress report for UIs (rich progress in the CLI, the run monitor in the app)."""

    ledger: str
    session: int
    phase: Literal["session", "committed", "failed", "curator", "done"]
    calls: int = 0
    tokens: int = 0
    elapsed_s: float = 0.0  # since the run (this command) started
    detail: str = ""
    #: the session's own time, from its start to its commit (phase "committed")
    session_s: float | None = None


ProgressFn = Callable[[Progress], None]


@dataclass
class RunResult:
    ledger: str
    sessions_done: int
    failed: list[tuple[int, str]] = field(default_factory=list)
    wall_s: float = 0.0


def _curator_snapshot_exists(led: Ledger, session: int) -> bool:
    return any(s == session and stage == "curator" for s, stage, _ in led.snapshot_index())


def _last_open(led: Ledger, node_id: str) -> bool:
    """Whether ``node_id`` is the only open node: archiving or merging it would leave the next
    session with no focus, so the model curator may not (decision 190)."""
    open_ids = [i for i, n in led.raw_nodes().items() if n["status"] == "open"]
    return open_ids == [node_id]


async def model_curate(
    led: Ledger,
    client: ModelClient,
    after: int,
    budget: int,
    settings: SessionSettings | None = None,
) -> tuple[list[CallRecord], list[str]]:
    """The model curator between sessions: prioritise, merge, archive, each with a reason."""
    st = settings or SessionSettings.from_meta(led.meta)
    nodes = led.raw_nodes()
    rendering = render_session_input(nodes, after + 1)
    messages = prompts.curator_messages(led.meta.seed, rendering)
    live = sorted(i for i, n in nodes.items() if n["status"] not in ("merged", "archived"))
    spec = curator_spec(sorted(nodes), live)
    try:
        reply, rec = await client.structured(
            kind="curator",
            session=after + 1,
            messages=messages,
            schema=spec.reply_model(st.schema_dialect),
            max_tokens=st.fit(budget, messages),
            internal=False,
            validator=spec.check,
            wire_schema=spec.json_schema(st.schema_dialect),
            dialect=st.schema_dialect,
        )
    except ModelCallError as err:
        return list(err.records), [f"curator call failed: {err.reason}"]
    assert isinstance(reply, CuratorResponse)
    notes = apply_curator_actions(led, reply.actions, _last_open)  # checked (decision 407)
    return [rec], notes


async def _curate(
    led: Ledger,
    client: ModelClient,
    after: int,
    st: SessionSettings,
    hook: CuratorHook | None,
) -> list[CallRecord]:
    """The curator between sessions ``after`` and ``after + 1`` (model, or a human's hook), then
    the after-curator snapshot. Returns the calls (and notes) to carry into the next record."""
    carried: list[CallRecord] = []
    if led.meta.curator == "model":
        calls, notes = await model_curate(led, client, after, st.curator_budget, st)
        carried.extend(calls)
        for n in notes:
            carried.append(CallRecord(kind="curator-note", internal=False, error=n))
    elif hook is not None:
        await hook(led, after)
    curation.finish_curation(led)
    return carried


async def _between(
    led: Ledger,
    client: ModelClient,
    after: int,
    st: SessionSettings,
    hook: CuratorHook | None,
    progress: ProgressFn | None,
    t0: float,
) -> list[CallRecord]:
    """Between sessions ``after`` and ``after + 1``: the plan's model judge of support, when
    it names one (decision 520), then the curator (once: not again after its snapshot)."""
    carried: list[CallRecord] = []
    if wants_model_judge(led):
        calls, notes = await model_judge_support(led, client, after, st)
        carried.extend(calls)
        carried.extend(CallRecord(kind="support-note", internal=False, error=n) for n in notes)
    meta = led.meta
    if (
        get_configuration(meta.config).curator
        and meta.curator != "none"
        and not _curator_snapshot_exists(led, after)
    ):
        if progress:
            progress(Progress(led.path.name, after, "curator", elapsed_s=time.perf_counter() - t0))
        carried.extend(await _curate(led, client, after, st, hook))
    return carried


def endpoint_overrides(endpoint: EndpointCapabilities | None, meta: RunMeta) -> dict[str, Any]:
    """SessionSettings fields the probe decides unless a flag or the run's options say: the
    context window it found (caps fit inside it) and the schema dialect the server accepts
    ("full" on llama.cpp's grammars, else "strict")."""
    if endpoint is None:
        return {}
    out: dict[str, Any] = {}
    if endpoint.context_window:
        out["context_window"] = endpoint.context_window
    if endpoint.schema_dialect and "schema_dialect" not in (meta.options or {}):
        out["schema_dialect"] = endpoint.schema_dialect
    return out


async def run_ledger(
    led: Ledger,
    client: ModelClient,
    *,
    sessions: int,
    embedder: Any = None,
    curator_hook: CuratorHook | None = None,
    progress: ProgressFn | None = None,
    settings: SessionSettings | None = None,
    endpoint: EndpointCapabilities | None = None,
    overrides: dict[str, Any] | None = None,
    cache: bool = True,
    replay: ReplyCache | None = None,
) -> RunResult:
    """Run sessions until ``sessions`` are committed (resuming after the last committed one).
    Stops at the first failed session (recorded), so a later call resumes from it.
    ``endpoint``: the probe's record, stored in the journal before the first session run
    here (unless the ledger's latest record says the same). ``cache``: a resumed session
    reuses the replies its killed or failed attempt got (modelio/reply_cache.py);
    ``replay``: every call answered from a recorded run, none sent."""
    if endpoint is not None and led.last_session < sessions:
        from curiosity_tui.modelio.endpoint import record_endpoint

        record_endpoint(led, endpoint)
    meta = led.meta
    # every call below carries the run's name (X-Curiosity-Run); a task's own context, so
    # concurrent runs sharing one client do not see each other's name
    CURRENT_RUN.set(meta.name or led.path.name)
    st = settings or SessionSettings.from_meta(
        meta, **{**endpoint_overrides(endpoint, meta), **(overrides or {})}
    )
    if st.sampling is not None:  # the run's sampling on every call (issue 23.1), likewise
        CURRENT_SAMPLING.set(RunSampling(st.sampling, meta.name or led.path.name))
    result = RunResult(ledger=led.path.name, sessions_done=led.last_session)
    t0 = time.perf_counter()
    records = led.session_records()
    prev_focus = records[-1].focus if records else None
    carried: list[CallRecord] = []
    replies: ReplyCache | None = None
    try:
        for t in range(led.last_session + 1, sessions + 1):
            replies = replay or (ReplyCache.for_session(led.path, t) if cache else None)
            CURRENT_CACHE.set(replies)
            if t >= 2:  # between sessions: the model judge of support, then the curator
                carried.extend(await _between(led, client, t - 1, st, curator_hook, progress, t0))
            if progress:
                progress(Progress(led.path.name, t, "session", elapsed_s=time.perf_counter() - t0))
            t_session = time.perf_counter()
            try:
                rec: SessionRecord = await run_session(
                    led,
                    client,
                    t,
                    settings=st,
                    embedder=embedder,
                    previous_focus=prev_focus,
                    carried_calls=carried,
                )
            except SessionFailure as err:
                result.failed.append((t, err.reason))
                if progress:
                    progress(
                        Progress(
                            led.path.name,
                            t,
                            "failed",
                            elapsed_s=time.perf_counter() - t0,
                            detail=err.reason,
                        )
                    )
                break
            carried = []
            if replies is not None and replay is None:
                replies.session_done()  # its replies are in the journal now
            prev_focus = rec.focus
            result.sessions_done = t
            if progress:
                progress(
                    Progress(
                        led.path.name,
                        t,
                        "committed",
                        calls=len(rec.calls),
                        tokens=sum(c.completion_tokens for c in rec.calls),
                        elapsed_s=time.perf_counter() - t0,
                        session_s=time.perf_counter() - t_session,
                    )
                )
    finally:
        if replies is not None:
            replies.close()  # the reply file of a session that did not commit
    result.wall_s = time.perf_counter() - t0
    if progress:
        progress(Progress(led.path.name, result.sessions_done, "done", elapsed_s=result.wall_s))
    return result


@dataclass
class RunSpec:
    name: str
    meta: RunMeta


def plan_runs(
    *,
    seed: str,
    configurations: list[str],
    runs: int,
    contract: str = "pilot-02",
    epsilon: float = 0.15,
    model: str | None = None,
    curator: Literal["model", "human", "none"] = "model",
    open_layer: Literal["compulsory", "optional"] = "compulsory",
    no_reselect: bool = False,
    session_budget: int = 4000,
    curator_budget: int = 4000,
    unregistered: bool = False,
    options: dict[str, Any] | None = None,
    contracts: list[str] | None = None,
) -> list[RunSpec]:
    """Every run of a plan: configurations × runs, or configurations × ``contracts`` × runs
    (run names then carry the contract's short form: ``C+cur-verified-binding-r0``)."""
    from curiosity_tui.contract_switches import contract_slug

    axis = contracts if contracts else [contract]
    specs = []
    for cname in configurations:
        cfg = get_configuration(cname)
        for kname in axis:
            tag = f"-{contract_slug(kname)}" if len(axis) > 1 else ""
            for r in range(runs):
                meta = RunMeta(
                    name=f"{cname}{tag}-r{r}",
                    seed=seed,
                    config=cname,
                    contract=kname,
                    curator=curator if cfg.curator else "none",
                    model=model,
                    epsilon=epsilon,
                    open_layer=open_layer,
                    no_reselect=no_reselect,
                    session_budget=session_budget,
                    curator_budget=curator_budget,
                    unregistered=unregistered,
                    options=options or {},
                )
                specs.append(RunSpec(meta.name, meta))
    return specs


async def run_pilot(
    specs: list[RunSpec],
    out: Path,
    client: ModelClient,
    *,
    sessions: int,
    concurrency: int = 4,
    embedder: Any = None,
    progress: ProgressFn | None = None,
    overrides: dict[str, Any] | None = None,
    endpoint: EndpointCapabilities | None = None,
    cache: bool = True,
    replay_from: Path | None = None,
) -> list[RunResult]:
    """Run many runs concurrently (at most ``concurrency`` at once); resumes existing ledgers.
    ``overrides`` are SessionSettings fields (caps, context window, dialect) for every run.
    ``replay_from``: a pilot's output folder; each run's calls are answered from its ledger
    there (``--replay-from``), none sent."""
    if concurrency < 1:
        raise InputError("--concurrency must be at least 1")
    out.mkdir(parents=True, exist_ok=True)
    sem = asyncio.Semaphore(concurrency)

    async def one(spec: RunSpec) -> RunResult:
        async with sem:
            path = out / spec.name
            replay = ReplyCache.for_replay(replay_from / spec.name) if replay_from else None
            led = Ledger.create(path, spec.meta, exist_ok=True)
            try:
                return await run_ledger(
                    led,
                    client,
                    sessions=sessions,
                    embedder=embedder,
                    progress=progress,
                    settings=SessionSettings.from_meta(
                        led.meta,
                        **{
                            **endpoint_overrides(replay.endpoint if replay else endpoint, led.meta),
                            **(overrides or {}),
                        },
                    ),
                    endpoint=replay.endpoint if replay is not None else endpoint,
                    cache=cache,
                    replay=replay,
                )
            finally:
                led.close()

    return list(await asyncio.gather(*(one(s) for s in specs)))
