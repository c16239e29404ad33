"""CLI: ``run LEDGER --relay RELAY.toml`` (each session to the mind the relay names) and
``demo --relay`` (an offline relay between two scripted models).

Every model of the relay is probed before anything runs (one line and nothing run if one
cannot serve). A relay that names a person's session, or a ledger with a human curator, runs in
the app (as ``run --curator human`` does): the app hosts the person's session.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curiosity_tui.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    """``--relay`` on ``run`` and ``demo`` (registered after :mod:`curiosity_tui.cli.run_cmds`,
    whose handlers run when ``--relay`` is absent)."""
    run, demo = sub.choices["run"], sub.choices["demo"]
    run.add_argument(
        "--relay",
        type=Path,
        metavar="RELAY.toml",
        help="which mind takes each session (model:KEY / human:NAME; docs/protocol.md, Relay); "
        "its models replace --base-url / --model",
    )
    demo.add_argument(
        "--relay",
        action="store_true",
        help="a relay between two scripted models (A -> B -> A ...), offline",
    )
    plain_run, plain_demo = run.get_default("handler"), demo.get_default("handler")
    run.set_defaults(handler=lambda a: run_relayed(a) if a.relay is not None else plain_run(a))
    demo.set_defaults(handler=lambda a: demo_relay(a) if a.relay else plain_demo(a))


@contextlib.contextmanager
def relay_clients(plan: Any, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """One ModelClient per relay model (its key from the named environment variable)."""
    from curiosity_tui.cli.run_cmds import _rate_limits, client_options
    from curiosity_tui.modelio.client import ModelClient

    _rate_limits(args)
    clients: dict[str, Any] = {}
    for key in plan.model_keys():
        spec = plan.models[key]
        if spec.api_key_env and spec.api_key() is None:
            raise InputError(f"relay model {key}: ${spec.api_key_env} is not set")
        clients[key] = ModelClient(
            base_url=spec.base_url,
            api_key=spec.api_key() or "none",
            model=spec.model,
            embedding_model=getattr(args, "embedding_model", None),
            embedding_base_url=getattr(args, "embedding_base_url", None),
            timeout_s=getattr(args, "timeout", 600.0),
            retry_backoff_s=0.05 if spec.endpoint_name else 1.0,
            **(client_options(args) if hasattr(args, "response_format") else {}),
        )
    yield clients


async def probe_all(plan: Any, clients: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Probe every model before session 1 (EndpointUnusable names the model: nothing runs)."""
    from curiosity_tui.cli.run_cmds import endpoint_options
    from curiosity_tui.modelio.endpoint import EndpointUnusable, prepare_endpoint

    caps: dict[str, Any] = {}
    for key, client in clients.items():
        try:
            found = await prepare_endpoint(client, endpoint_options(args))
        except EndpointUnusable as err:
            raise EndpointUnusable(f"relay model {key}: {err}") from None
        name = plan.models[key].endpoint_name
        if name:  # a scripted server's port changes every run: its stable name
            found = found.model_copy(update={"base_url": name})
        print(f"endpoint {key} ({client.model}): {found.summary()}")
        caps[key] = found
    return caps


async def _close_all(clients: dict[str, Any], work: Any) -> Any:
    try:
        return await work
    finally:
        for c in clients.values():
            await c.aclose()


def _print_relay_progress(p: Any) -> None:
    from curiosity_tui.cli.run_cmds import _print_progress

    if p.phase == "session":
        print(f"{p.ledger}: session {p.session} taken by {p.detail}")
    else:
        _print_progress(p)


def run_relayed(args: argparse.Namespace) -> int:
    """``run LEDGER --relay RELAY.toml``."""
    from curiosity_tui.bounds import MAX_SESSIONS, check_count
    from curiosity_tui.ledger import Ledger
    from curiosity_tui.runs.relay import check_relayable, load_relay

    check_count(args.sessions, flag="--sessions", low=1, high=MAX_SESSIONS)
    plan = load_relay(args.relay)
    with Ledger.open(args.ledger) as probe:
        meta, last = probe.meta, probe.last_session
    if args.curator and args.curator != meta.curator:
        raise InputError(
            f"{args.ledger} was created with curator {meta.curator!r}, not {args.curator!r}"
        )
    check_relayable(meta.config)
    plan.check_sessions(args.sessions)
    with scripted_relay_plan(plan, getattr(args, "scripted", False)) as served:
        if [t for t in served.humans(args.sessions) if t > last] or meta.curator == "human":
            return relay_in_app(args, served)
        result = asyncio.run(_relay_here(args, served))
    from curiosity_tui.cli.run_cmds import report_outcome

    return report_outcome(args.ledger, result)


@contextlib.contextmanager
def scripted_relay_plan(plan: Any, scripted: bool) -> Iterator[Any]:
    """``run --relay FILE --scripted``: every model entry served offline by the research bank,
    each in its own voice (its key), so model -> person -> model runs without a key. The
    plan as it is without ``--scripted``."""
    if not scripted:
        yield plan
        return
    from curiosity_tui.offline.research import ResearchResponder
    from curiosity_tui.offline.scripted_server import ScriptedServer
    from curiosity_tui.runs.relay import ModelMind

    print("SCRIPTED RELAY: every model entry is served by the built-in scripted server.")
    with contextlib.ExitStack() as stack:
        models = {}
        for key in plan.models:
            srv = stack.enter_context(ScriptedServer(responder=ResearchResponder(voice=key)))
            name = f"scripted-{key}"
            models[key] = ModelMind(base_url=srv.base_url, model=name, endpoint_name=name)
        yield plan.model_copy(update={"models": models})


async def _relay_here(args: argparse.Namespace, plan: Any) -> Any:
    from curiosity_tui.cli.run_cmds import _embedder, call_overrides
    from curiosity_tui.ledger import Ledger
    from curiosity_tui.runs.relay_runner import RelayMinds, run_relay

    with relay_clients(plan, args) as clients:

        async def work() -> Any:
            caps = await probe_all(plan, clients, args)
            first = plan.model_keys()[0]
            with Ledger.open(args.ledger, write=True) as led:
                return await run_relay(
                    led,
                    RelayMinds(plan=plan, clients=clients, endpoints=caps),
                    sessions=args.sessions,
                    embedder=_embedder(args, clients[first], caps[first]),
                    progress=_print_relay_progress,
                    overrides=call_overrides(args),
                )

        return await _close_all(clients, work())


def relay_in_app(args: argparse.Namespace, plan: Any) -> int:
    """The app hosts a relay with a person's session (or a human curator)."""
    from curiosity_tui.cli.run_cmds import _embedder, call_overrides, curator_name, host_run
    from curiosity_tui.ledger import Ledger
    from curiosity_tui.screens.monitor import RunRequest

    path = Path(args.ledger)
    with Ledger.open(path) as probe:
        curator_kind = probe.meta.curator
    with relay_clients(plan, args) as clients:  # before the app opens: refuse in one line
        caps = asyncio.run(_close_all(clients, probe_all(plan, clients, args)))
    first = plan.model_keys()[0] if plan.model_keys() else None
    req = RunRequest(
        ledger=path,
        sessions=args.sessions,
        curator=curator_name(args),
        client_factory=lambda: contextlib.nullcontext(None),
        embedder_factory=lambda clients: (
            _embedder(args, clients[first], caps[first]) if first else None
        ),
        overrides=call_overrides(args),
        relay=plan,
        relay_clients_factory=lambda: relay_clients(plan, args),
        relay_endpoints=caps,
        curator_kind=curator_kind,
    )
    return host_run(req, req.curator)


def demo_relay(args: argparse.Namespace) -> int:
    """``demo --relay``: the offline relay between two scripted models."""
    from curiosity_tui.bounds import MAX_SESSIONS, check_count
    from curiosity_tui.cli.run_cmds import SEED
    from curiosity_tui.ledger import RunMeta
    from curiosity_tui.offline.relay_demo import alternating, run_scripted_relay
    from curiosity_tui.protocol.configs import get_configuration
    from curiosity_tui.runs.relay import check_relayable

    check_count(args.sessions, flag="--sessions", low=1, high=MAX_SESSIONS)
    cfg = get_configuration(args.config)
    check_relayable(cfg.name)
    path = args.out / f"demo-relay-{cfg.name}-{args.contract}"
    print("SCRIPTED RELAY DEMO: two built-in scripted models take turns, not real models.")
    print("relay: " + " -> ".join(alternating(args.sessions)))
    meta = RunMeta(
        name=path.name,
        seed=SEED,
        config=cfg.name,
        contract=args.contract,
        curator="model" if cfg.curator else "none",
        model="scripted-a",
        options={"scripted": True},
    )
    result = asyncio.run(
        run_scripted_relay(path, meta, args.sessions, progress=_print_relay_progress)
    )
    print(f"\n{path}: {result.sessions_done} scripted session(s), each naming its mind.")
    print(f"relay table: curiosity-tui metrics {path}   |   audit: curiosity-tui audit {path}")
    return 1 if result.failed else 0


def pilot_relay(
    args: argparse.Namespace, plan: Any, specs: list[Any], start: Any, on: Any
) -> list[Any]:
    """``pilot run`` of a plan with a ``[relay]``: every run relayed, in this process (the
    relay's clients are shared by its runs, so there are no worker processes)."""
    from curiosity_tui.cli.run_cmds import _embedder, call_overrides
    from curiosity_tui.runs.relay_runner import RelayMinds, run_relay_pilot

    relay = plan.relay
    if (args.workers or 1) > 1:
        print("relay pilot: runs in this process (--workers ignored)")

    async def work(clients: dict[str, Any]) -> list[Any]:
        caps = await probe_all(relay, clients, args)
        start()
        first = relay.model_keys()[0]
        return await run_relay_pilot(
            specs,
            args.out,
            RelayMinds(plan=relay, clients=clients, endpoints=caps),
            sessions=plan.sessions,
            concurrency=args.concurrency,
            embedder=_embedder(args, clients[first], caps[first]),
            progress=on,
            overrides=call_overrides(args),
        )

    with relay_clients(relay, args) as clients:
        return list(asyncio.run(_close_all(clients, work(clients))))
