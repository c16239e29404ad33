"""CLI: ``run`` (one ledger), ``demo`` (offline, scripted), and the model client both they and
``pilot run`` (:mod:`curiosity_tui.cli.pilot_cmds`) use."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curiosity_tui.cli.contract_cmds import CONTRACT_HELP, contract_option
from curiosity_tui.errors import InputError
from curiosity_tui.protocol.stop_advice import resume_advice

SEED = "Did the printing press cause the Reformation?"


def endpoint_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model endpoint (any OpenAI-compatible server)")
    g.add_argument("--base-url", help="endpoint base URL (default: $OPENAI_BASE_URL)")
    g.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY); never written anywhere")
    g.add_argument("--model", help="chat model name (default: the run's recorded model)")
    g.add_argument("--embedding-model", help="use the endpoint's embeddings for medoid/similarity")
    g.add_argument(
        "--embedding-base-url",
        help="where /v1/embeddings is served, if not at --base-url (e.g. a second llama-server)",
    )
    g.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per call (default 600, CPU-sized)"
    )
    _capability_flags(g)
    g.add_argument(
        "--scripted",
        action="store_true",
        help="use the built-in scripted model server on 127.0.0.1 (offline; replies are drawn "
        "per run from a research bank; the run's metadata records scripted)",
    )
    g.add_argument(
        "--max-rpm", type=float, help="at most this many requests a minute (all runs together)"
    )
    g.add_argument("--max-tpm", type=float, help="at most this many tokens a minute (estimated)")


def _capability_flags(g: argparse._ArgumentGroup) -> None:
    """Flags for what the endpoint probe finds or cannot find (modelio/endpoint.py)."""
    g.add_argument(
        "--response-format",
        choices=["auto", "json_schema", "json_object", "prompt"],
        default="auto",
        help="structured replies: auto (probe: json_schema, else json_object, else prompt) "
        "or one fixed format",
    )
    g.add_argument(
        "--context-window", type=int, help="the server's context in tokens, if it does not say"
    )
    g.add_argument(
        "--model-file",
        type=Path,
        default=None,
        help="the model file the server runs (e.g. the GGUF): its sha256 goes into the "
        "endpoint record, and a different file between sessions is recorded as a server change",
    )
    g.add_argument(
        "--embedding-fallback",
        choices=["none", "offline"],
        default="none",
        help="with --embedding-model and no embeddings endpoint: refuse (none, default) or "
        "use the offline embedder, named on every similarity figure (offline)",
    )
    g.add_argument(
        "--retry-timeouts",
        choices=["auto", "always", "never"],
        default="auto",
        help="re-send a timed-out request: auto = unless the server serves one request at a time",
    )
    g.add_argument("--max-retries", type=int, default=3, help="retries per call (default 3)")
    g.add_argument(
        "--max-reply-kb", type=int, default=64, help="cap on one model reply, KB (default 64)"
    )
    g.add_argument(
        "--max-field-kb", type=int, default=16, help="cap on one reply field, KB (default 16)"
    )


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """ModelClient keyword arguments from the capability flags (checked: one line if bad)."""
    for flag in ("max_retries", "max_reply_kb", "max_field_kb", "context_window"):
        value = getattr(args, flag, None)
        if value is not None and value < (0 if flag == "max_retries" else 1):
            raise InputError(f"--{flag.replace('_', '-')} must be positive, got {value}")
    return {
        "response_format": getattr(args, "response_format", "auto"),
        "retry_timeouts": getattr(args, "retry_timeouts", "auto"),
        "max_retries": getattr(args, "max_retries", 3),
        "max_reply_bytes": getattr(args, "max_reply_kb", 64) * 1024,
        "max_field_chars": getattr(args, "max_field_kb", 16) * 1024,
    }


def endpoint_options(args: argparse.Namespace) -> Any:
    from curiosity_tui.modelio.endpoint import EndpointOptions

    return EndpointOptions(
        response_format=getattr(args, "response_format", "auto"),
        embedding_model=getattr(args, "embedding_model", None),
        embedding_fallback=getattr(args, "embedding_fallback", "none"),
        context_window=getattr(args, "context_window", None),
        model_file=getattr(args, "model_file", None),
    )


CAP_KINDS = {
    "candidate": "candidate_cap",
    "judge": "judge_cap",
    "checker": "checker_cap",
    "deliverable": "deliverable_cap",
    "curator": "curator_budget",
}
"""``--cap KIND=N``: the call kinds whose completion-token cap can be set (docs/decisions/151)."""


def call_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("per-call limits and schemas")
    g.add_argument(
        "--cap",
        action="append",
        default=[],
        metavar="KIND=N",
        help="completion-token cap of one call kind: candidate (260), judge (500), checker (350), "
        "deliverable (default: what is left of the session budget; also A's answer and B's "
        "self-ask), curator (the curator budget); repeat for several",
    )
    g.add_argument(
        "--sampling",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a sampling value over the plan's [sampling] table (or the ledger's): seed=7, "
        "temperature=0.5, candidate.top_p=0.9, judge.temperature=server-default, "
        'checker.stop=["END"]; repeat for several (docs/model-io.md)',
    )
    g.add_argument(
        "--no-cache",
        action="store_true",
        help="a resumed session asks the model again for every call, instead of reusing the "
        "replies its killed or failed attempt already got (docs/model-io.md)",
    )
    g.add_argument(
        "--schema-dialect",
        choices=["strict", "full"],
        default=None,
        help="per-call JSON schemas: strict (hosted APIs' subset, default) or full (item counts, "
        "lengths, tuples: llama.cpp's grammars follow them)",
    )


def call_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """SessionSettings fields from --cap / --schema-dialect (and --context-window if present)."""
    out: dict[str, Any] = {}
    for item in getattr(args, "cap", None) or []:
        kind, sep, value = item.partition("=")
        field = CAP_KINDS.get(kind.strip())
        if not sep or field is None:
            raise InputError(f"--cap {item!r}: use KIND=N with KIND one of {', '.join(CAP_KINDS)}")
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(f"--cap {item!r}: N must be a whole number of tokens, at least 1")
        out[field] = n
    out["schema_dialect"] = getattr(args, "schema_dialect", None)
    out["context_window"] = getattr(args, "context_window", None)
    return {k: v for k, v in out.items() if v is not None}


def sampling_table(args: argparse.Namespace, base: Any) -> Any:
    """``base`` (a plan's or a ledger's SamplingTable; None: the protocol's) with the
    ``--sampling`` flags applied, resolved per group. One line naming the flag if bad."""
    import tomllib

    from pydantic import ValidationError

    from curiosity_tui.ledger.sampling_record import SERVER_DEFAULT, SamplingTable

    table = base if base is not None else SamplingTable()
    for item in getattr(args, "sampling", None) or []:
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        try:
            value = SERVER_DEFAULT if raw == SERVER_DEFAULT else tomllib.loads(f"v = {raw}")["v"]
            if not sep or not key:
                raise ValueError("use KEY=VALUE")
            table = table.with_override(key, value)
        except (tomllib.TOMLDecodeError, ValueError, ValidationError) as err:
            why = err.errors()[0]["msg"] if isinstance(err, ValidationError) else str(err)
            raise InputError(f"--sampling {item!r}: {why}") from None
    return table.resolved()


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("run", help="run sessions on one ledger until --sessions are committed")
    r.add_argument("ledger", type=Path)
    r.add_argument("--sessions", type=int, required=True, help="total sessions the run should have")
    r.add_argument(
        "--curator", choices=["model", "human", "none"], help="must match the ledger's curator kind"
    )
    r.add_argument(
        "--curator-name",
        default=None,
        help="human curator's name (default: $CURIOSITY_CURATOR or $USER)",
    )
    endpoint_flags(r)
    call_flags(r)
    r.set_defaults(handler=_run)

    d = sub.add_parser("demo", help="a short scripted run, offline, so you can see sessions happen")
    d.add_argument("--out", type=Path, default=Path("demo-ledgers"))
    d.add_argument("--sessions", type=int, default=5)
    d.add_argument("--config", default="C+cur")
    d.add_argument("--contract", type=contract_option, default="pilot-02", help=CONTRACT_HELP)
    d.set_defaults(handler=_demo)


def _rate_limits(args: argparse.Namespace) -> None:
    """``--max-rpm`` / ``--max-tpm``: one limiter for every client of this process."""
    from curiosity_tui.modelio import ratelimit

    rpm, tpm = getattr(args, "max_rpm", None), getattr(args, "max_tpm", None)
    for flag, value in (("--max-rpm", rpm), ("--max-tpm", tpm)):
        if value is not None and not value > 0:
            raise InputError(f"{flag} {value:g}: must be a positive number")
    ratelimit.configure(ratelimit.RateLimiter(rpm, tpm) if rpm or tpm else None)


@contextlib.contextmanager
def model_client(args: argparse.Namespace, default_model: str | None) -> Iterator[Any]:
    """A ModelClient for the flags; with --scripted, backed by the built-in scripted server."""
    from curiosity_tui.modelio.client import ModelClient

    _rate_limits(args)

    if getattr(args, "scripted", False):
        from curiosity_tui.offline.research import ResearchResponder
        from curiosity_tui.offline.scripted_server import ScriptedServer

        with ScriptedServer(responder=ResearchResponder()) as srv:
            opts = client_options(args) if hasattr(args, "response_format") else {}
            yield ModelClient(
                base_url=srv.base_url,
                api_key="scripted",
                model="scripted-demo",
                retry_backoff_s=0.05,
                **opts,
            )
        return
    model = args.model or default_model
    if not model:
        raise InputError("no model: pass --model (or create the ledger with a model)")
    yield ModelClient(
        base_url=args.base_url,
        api_key=args.api_key,
        model=model,
        embedding_model=args.embedding_model,
        embedding_base_url=getattr(args, "embedding_base_url", None),
        timeout_s=args.timeout,
        **client_options(args),
    )


def _embedder(args: argparse.Namespace, client: Any, caps: Any = None) -> Any:
    """The endpoint embedder for --embedding-model; the offline one, named as a fallback,
    where the probe found no embeddings and --embedding-fallback offline allows it."""
    model = getattr(args, "embedding_model", None)
    if not model or getattr(args, "scripted", False):
        return None
    if caps is not None and caps.embeddings != "served":
        from curiosity_tui.modelio.embedders import OfflineFallbackEmbedder

        return OfflineFallbackEmbedder(model)
    from curiosity_tui.modelio.embedders import EndpointEmbedder

    return EndpointEmbedder(client, model)


async def probed(client: Any, args: argparse.Namespace) -> Any:
    """Probe the endpoint before any session (EndpointUnusable: one line, nothing run)."""
    from curiosity_tui.modelio.endpoint import prepare_endpoint

    caps = await prepare_endpoint(client, endpoint_options(args))
    if getattr(args, "scripted", False):  # a new loopback port every time: one stable name
        caps = caps.model_copy(update={"base_url": "scripted"})
    print(f"endpoint: {caps.summary()}")  # stdout: stderr is for the one error line
    return caps


def curator_name(args: argparse.Namespace) -> str:
    name = (
        args.curator_name
        or os.environ.get("CURIOSITY_CURATOR")
        or os.environ.get("USER")
        or "curator"
    )
    name = name.strip()
    if not name or any(c.isspace() for c in name):
        raise InputError(f"curator name {name!r} must be one word")
    return name


async def _closing(client: Any, work: Any) -> Any:
    """Await ``work``, then close the client's connections inside the same event loop."""
    try:
        return await work
    finally:
        await client.aclose()


def session_figures(p: Any) -> str:
    """ "3 calls, 120 tokens, 2.4s; 7.9s into the run": the session's own time first."""
    own = f"{p.session_s:.1f}s" if p.session_s is not None else "time not measured"
    return f"{p.calls} calls, {p.tokens} tokens, {own}; {p.elapsed_s:.1f}s into the run"


def _print_progress(p: Any) -> None:
    if p.phase == "committed":
        print(f"{p.ledger}: session {p.session} committed ({session_figures(p)})")
    elif p.phase == "failed":
        print(f"{p.ledger}: session {p.session} FAILED: {p.detail}", file=sys.stderr)
    elif p.phase == "curator":
        print(f"{p.ledger}: curator after session {p.session}")


def run_curated(ledger: Path | str, *, sessions: int, curator: str, args: Any) -> int:
    """``curiosity-tui run LEDGER --curator human``: the app hosts the run and its curator.

    Returns 0 when the run reached ``sessions``, 1 when it stopped early (failed or quit)."""
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.screens.monitor import RunRequest

    path = Path(ledger)
    with Ledger.open(path) as probe:
        model = probe.meta.model
    with model_client(args, model) as client:  # before the app opens: refuse in one line
        caps = asyncio.run(_closing(client, probed(client, args)))
    req = RunRequest(
        ledger=path,
        sessions=sessions,
        curator=curator,
        client_factory=lambda: model_client(args, model),
        embedder_factory=lambda client: _embedder(args, client, caps),
        endpoint=caps,
        overrides=call_overrides(args),
    )
    return host_run(req, curator)


def host_run(req: Any, curator: str) -> int:
    """Run ``req`` (a RunRequest) in the app, then say in one line how far it got: 0 when it
    reached its sessions, 1 when it stopped early (failed or quit; resumable)."""
    from curiosity_tui.app import make_app
    from curiosity_tui.ledger.ledger import Ledger

    path = Path(req.ledger)
    app = make_app(path.parent, run=req, curator_name=curator)
    app.run()
    if req.error:
        print(f"curiosity-tui: run failed: {req.error}")
        return 1
    res = req.result
    if res is None or res.failed or res.sessions_done < req.sessions:
        with Ledger.open(path) as led:
            done = led.last_session
        reason = res.failed[0][1] if res is not None and res.failed else None
        print(
            f"{path}: stopped with {done} of {req.sessions} session(s) committed; "
            f"{resume_advice(reason)}"
        )
        return 1
    print(f"{path}: {res.sessions_done} session(s) committed")
    return 0


def _run(args: argparse.Namespace) -> int:
    from curiosity_tui.bounds import MAX_SESSIONS, check_call_numbers, check_count
    from curiosity_tui.ledger import Ledger

    check_count(args.sessions, flag="--sessions", low=1, high=MAX_SESSIONS)
    check_call_numbers(args)  # --timeout, --context-window, --max-retries (docs/errors.md)
    with Ledger.open(args.ledger) as probe:
        meta = probe.meta
    if args.curator and args.curator != meta.curator:
        raise InputError(
            f"{args.ledger} was created with curator {meta.curator!r}, not {args.curator!r}"
        )
    if meta.curator == "human":
        # the app hosts the human curator
        return run_curated(
            args.ledger, sessions=args.sessions, curator=curator_name(args), args=args
        )
    from curiosity_tui.protocol.session import SessionSettings
    from curiosity_tui.runs.runner import endpoint_overrides, run_ledger

    overrides = call_overrides(args)
    if getattr(args, "sampling", None):  # over the ledger's table, recorded on every call
        from curiosity_tui.modelio.sampling import table_of_options

        overrides["sampling"] = sampling_table(args, table_of_options(meta.options))
    with model_client(args, meta.model) as client, Ledger.open(args.ledger, write=True) as led:
        if led.recovered:
            print(f"{args.ledger}: {led.recovered}", file=sys.stderr)

        async def work() -> Any:
            caps = await probed(client, args)
            return await run_ledger(
                led,
                client,
                sessions=args.sessions,
                embedder=_embedder(args, client, caps),
                progress=_print_progress,
                settings=SessionSettings.from_meta(
                    led.meta, **{**endpoint_overrides(caps, led.meta), **overrides}
                ),
                endpoint=caps,
                cache=not args.no_cache,
            )

        result = asyncio.run(_closing(client, work()))
    return report_outcome(args.ledger, result)


def report_outcome(path: Path, result: Any) -> int:
    """The last line of a run (``run``, ``run --relay``) and its exit code."""
    if result.failed:
        t, reason = result.failed[0]
        print(
            f"stopped at session {t}: {reason}; {resume_advice(reason)}",
            file=sys.stderr,
        )
        return 1
    print(f"{path}: {result.sessions_done} session(s) committed")
    return 0


def pilot_options(
    options: dict[str, Any], args: argparse.Namespace, sessions: int, sampling: Any = None
) -> dict[str, Any]:
    """A pilot run's RunMeta.options: the lock, the sessions planned per run, its sampling
    (the plan's ``[sampling]`` with ``--sampling``, resolved), and ``scripted`` when the replies
    come from the built-in scripted server (analysis and packs read both)."""
    out = dict(options)
    out["planned_sessions"] = sessions
    out["sampling"] = sampling_table(args, sampling).model_dump(mode="json")
    if getattr(args, "scripted", False):
        out["scripted"] = True
    return out


def _demo(args: argparse.Namespace) -> int:
    from curiosity_tui.ledger import Ledger, RunMeta
    from curiosity_tui.protocol.configs import get_configuration
    from curiosity_tui.runs.runner import run_ledger

    cfg = get_configuration(args.config)
    from curiosity_tui.contract_switches import contract_slug

    path = args.out / f"demo-{cfg.name}-{contract_slug(args.contract)}"
    print("SCRIPTED DEMO: every reply below comes from the built-in scripted server, not a model.")
    args.scripted = True
    meta = RunMeta(
        name=path.name,
        seed=SEED,
        config=cfg.name,
        contract=args.contract,
        curator="model" if cfg.curator else "none",
        model="scripted-demo",
        options={"scripted": True},
    )
    with model_client(args, "scripted-demo") as client:
        led = Ledger.create(path, meta, exist_ok=True)
        try:
            result = asyncio.run(
                run_ledger(led, client, sessions=args.sessions, progress=_print_progress)
            )
        finally:
            led.close()
    print(
        f"\n{path}: {result.sessions_done} scripted session(s). Browse it: curiosity-tui {args.out}"
    )
    print(f"or: curiosity-tui ledger show {path}   |   curiosity-tui audit {path}")
    return 1 if result.failed else 0
