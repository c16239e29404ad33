"""CLI: ``pilot run`` (a plan's runs, or one shard of them, over worker processes) and
``pilot status`` (a sharded pilot's progress)."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Literal

from curiosity_tui.errors import InputError


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


RUNS_PER_WORKER = 36
"""A worker process costs about 3.5 s of CPU to start (importing openai, numpy and
scikit-learn): the CPU of some 40 scripted runs of 5 sessions (decision 262). Without
``--workers`` a pilot gets a worker for every this many runs, up to one per core."""


def default_workers(runs: int, cores: int) -> int:
    """``pilot run``'s worker count without ``--workers``: one per core, but no more than one
    per ``RUNS_PER_WORKER`` runs (so a pilot of 18 runs runs in this process)."""
    return max(1, min(cores, runs // RUNS_PER_WORKER))


def register(sub: argparse._SubParsersAction) -> None:
    from curiosity_tui.cli.contract_cmds import CONTRACT_HELP, contract_option
    from curiosity_tui.cli.run_cmds import call_flags, endpoint_flags

    pl = sub.add_parser("pilot", help="pilot runs from a plan")
    psub = pl.add_subparsers(dest="pilot_command", metavar="SUBCOMMAND")
    pl.set_defaults(handler=lambda a: (pl.print_help(), 2)[1])
    pr = psub.add_parser("run", help="run every configuration × run of PLAN.toml concurrently")
    pr.add_argument("plan", type=Path)
    pr.add_argument("--out", type=Path, required=True)
    pr.add_argument("--concurrency", type=int, default=4, help="runs at once, over all workers")
    pr.add_argument(
        "--workers",
        type=int,
        default=None,
        help=f"worker processes (default: one per core, here {_cores()}, but at most one per "
        f"{RUNS_PER_WORKER} runs); 1 runs in this process",
    )
    pr.add_argument(
        "--shard",
        default="1/1",
        metavar="I/N",
        help="run only share I of N of the plan's runs (for a job array across machines)",
    )
    pr.add_argument(
        "--unregistered", action="store_true", help="run without a before-runs lock (recorded)"
    )
    pr.add_argument(
        "--contract",
        type=contract_option,
        default=None,
        help="run every plan run under this contract instead of the plan's; " + CONTRACT_HELP,
    )
    pr.add_argument(
        "--replay-from",
        type=Path,
        default=None,
        metavar="DIR",
        help="re-run the plan answering every call from the ledgers of an earlier run of it in "
        "DIR (its journals' replies, matched by exact request): no request reaches any model "
        "(docs/model-io.md: what is compared)",
    )
    pr.add_argument(
        "--curator-name",
        default=None,
        help="who curates the plan's human-curated arms (default: $CURIOSITY_CURATOR or $USER)",
    )
    endpoint_flags(pr)
    call_flags(pr)
    pr.set_defaults(handler=_pilot_run)

    ps = psub.add_parser("status", help="progress of a (sharded) pilot from its --out dir(s)")
    ps.add_argument("out", type=Path, nargs="+", metavar="OUT")
    ps.add_argument("--json", action="store_true", help="machine-readable output")
    ps.set_defaults(handler=_pilot_status)


def _specs(args: argparse.Namespace) -> tuple[Any, str, list[Any]]:
    """The plan, its text and every run of it (before sharding)."""
    from curiosity_tui.analysis.prereg import load_plan, lock_metadata, require_lock
    from curiosity_tui.cli.run_cmds import pilot_options
    from curiosity_tui.protocol.tension_options import with_tension
    from curiosity_tui.runs.runner import plan_runs

    plan, text = load_plan(args.plan)
    entry = None if args.unregistered else require_lock(args.out, plan_text=text)
    options = pilot_options(lock_metadata(entry), args, plan.sessions, plan.sampling)
    if plan.support_judge:  # the model judge of support the runs admit (decision 520)
        options["support_judge"] = plan.support_judge
    if plan.arms:
        return plan, text, _arm_specs(plan, args, options)
    specs = plan_runs(
        seed=plan.seed_question,
        configurations=list(plan.configurations),
        runs=plan.runs,
        contract=args.contract or plan.contract_list()[0],
        contracts=None if args.contract else plan.contract_list(),
        epsilon=plan.epsilon,
        model=plan.model,
        session_budget=plan.budgets.session_completion_tokens,
        curator_budget=plan.budgets.curator_completion_tokens
        or plan.budgets.session_completion_tokens,
        unregistered=args.unregistered,
        options=with_tension(options, plan.tension_for(None)),
    )
    return plan, text, specs


def _arm_specs(plan: Any, args: argparse.Namespace, options: dict[str, Any]) -> list[Any]:
    """Every run of a plan with arms (decision 241): per entry of ``configurations``, its
    configuration with the arm's contract, open layer, queue and seed; run names and the
    ``arm`` option carry the arm's name (its group in metrics and the verdict)."""
    from curiosity_tui.protocol.tension_options import with_tension
    from curiosity_tui.runs.runner import RunSpec, plan_runs

    specs: list[Any] = []
    for entry in plan.configurations:
        arm = plan.arm(entry)
        for spec in plan_runs(
            seed=arm.seed_question or plan.seed_question,
            configurations=[arm.config],
            runs=plan.runs,
            contract=args.contract or arm.contract or plan.contract_list()[0],
            epsilon=plan.epsilon,
            model=plan.model,
            open_layer=arm.open_layer or "compulsory",
            no_reselect=bool(arm.no_reselect),
            curator=arm.curator or "model",
            session_budget=plan.budgets.session_completion_tokens,
            curator_budget=plan.budgets.curator_completion_tokens
            or plan.budgets.session_completion_tokens,
            unregistered=args.unregistered,
            options=with_tension({**options, "arm": entry}, plan.tension_for(entry)),
        ):
            name = entry + spec.name[len(arm.config) :]
            specs.append(RunSpec(name, spec.meta.model_copy(update={"name": name})))
    return specs


def _pilot_run(args: argparse.Namespace) -> int:
    from curiosity_tui.runs.shards import new_manifest, parse_shard, shard_of, write_manifest

    shard = parse_shard(args.shard)
    from curiosity_tui.bounds import MAX_CONCURRENCY, MAX_WORKERS, check_count

    if args.workers is not None:  # each worker is a process: bounded (docs/errors.md)
        check_count(args.workers, flag="--workers", low=1, high=MAX_WORKERS)
    check_count(args.concurrency, flag="--concurrency", low=1, high=MAX_CONCURRENCY)
    plan, text, all_specs = _specs(args)
    if getattr(args, "model_file", None) is None and plan.model_file:
        args.model_file = Path(plan.model_file)  # hashed into the endpoint record
    specs = shard_of(all_specs, shard)
    if not specs:
        print(f"shard {shard.label}: no runs (the plan has {len(all_specs)})")
        return 0
    from curiosity_tui.cli.pilot_human import attended, check_curator, host_attended, unattended

    people = attended(specs)  # a human curator: hosted in the app after the unattended runs
    curator = check_curator(plan, people, args) if people else ""
    if people and args.replay_from is not None:
        raise InputError("--replay-from replays model calls: not a plan with a human-curated arm")
    machine = unattended(specs)
    workers = default_workers(len(machine), _cores()) if args.workers is None else args.workers
    manifest = new_manifest(
        hashlib.sha256(text.encode("utf-8")).hexdigest(),
        shard,
        len(all_specs),
        plan.sessions,
        [s.name for s in specs],
        workers,
    )

    def start() -> None:  # after the endpoint probe: a run that cannot work leaves nothing
        args.out.mkdir(parents=True, exist_ok=True)
        write_manifest(args.out, manifest)

    if args.replay_from is not None:
        results = _replay(args, plan, specs, start)
    else:
        results = _execute(args, plan, machine, workers, start)
        if people:  # the unattended runs' record stands before the app opens for a person
            _finish_manifest(args.out, manifest, results, plan.sessions)
            results += host_attended(args, plan, people, curator)
    _finish_manifest(args.out, manifest, results, plan.sessions)
    failed = [(r.ledger, r.failed[0]) for r in results if r.failed]
    for name, (t, reason) in failed:
        print(f"{name}: stopped at session {t}: {reason}", file=sys.stderr)
    where = f"{args.out}" + ("" if shard.count == 1 else f" (shard {shard.label})")
    complete = sum(1 for r in results if not r.failed and r.sessions_done >= plan.sessions)
    print(f"{complete} of {len(specs)} runs complete in {where}")
    if complete < len(specs) and not failed:
        print(f"the rest wait for a curator: pilot run {args.plan} --out {args.out} resumes them")
    return 0 if complete == len(specs) else 1


def _finish_manifest(out: Path, manifest: Any, results: list[Any], sessions: int) -> None:
    from curiosity_tui.clock import utc_now_seconds
    from curiosity_tui.runs.shards import ManifestRun, write_manifest

    by_name = {r.ledger: r for r in results}
    runs = []
    for run in manifest.runs:
        r = by_name.get(run.name)
        if r is None:
            runs.append(run)
            continue
        failure = f"session {r.failed[0][0]}: {r.failed[0][1]}" if r.failed else None
        state: Literal["pending", "done", "failed"] = (
            "failed" if r.failed else ("done" if r.sessions_done >= sessions else "pending")
        )
        runs.append(
            ManifestRun(name=run.name, state=state, sessions_done=r.sessions_done, failure=failure)
        )
    write_manifest(
        out, manifest.model_copy(update={"runs": runs, "finished_at": utc_now_seconds()})
    )


def _execute(
    args: argparse.Namespace, plan: Any, specs: list[Any], workers: int, start: Any
) -> list[Any]:
    """Probe the endpoint, call ``start()``, then run the specs in this process (workers == 1)
    or over worker processes."""
    import contextlib

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from curiosity_tui.cli.run_cmds import _closing, _embedder, call_overrides, model_client, probed
    from curiosity_tui.runs.runner import run_pilot
    from curiosity_tui.runs.workers import ClientSpec, run_pilot_workers

    with (
        # a relay's models have their own clients (cli/relay_cmds.py)
        contextlib.nullcontext(None) if plan.relay else model_client(args, plan.model) as client,
        Progress(
            TextColumn("{task.description:<18}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
        ) as bar,
    ):
        tasks = {s.name: bar.add_task(s.name, total=plan.sessions, status="") for s in specs}

        def on(p: Any) -> None:
            tid = tasks.get(p.ledger)
            if tid is None:
                return
            if p.phase == "committed":
                bar.update(tid, completed=p.session, status=f"{p.tokens} tok")
            elif p.phase == "failed":
                bar.update(tid, status=f"failed s{p.session}")
            elif p.phase == "curator":
                bar.update(tid, status="curator")

        if plan.relay is not None:  # each session to the relay's model, not to --base-url
            from curiosity_tui.cli.relay_cmds import pilot_relay

            return pilot_relay(args, plan, specs, start, on)
        assert client is not None  # only a relay plan runs without a client of its own
        overrides = call_overrides(args)
        caps = asyncio.run(_closing(client, probed(client, args)))  # before any run starts
        start()
        embedder = _embedder(args, client, caps)
        if workers > 1 and len(specs) > 1:  # workers build their own clients (ClientSpec)
            cs = ClientSpec.of(
                client,
                endpoint_embeddings=embedder is not None,
                endpoint=caps,
                overrides=overrides,
                reply_cache=not args.no_cache,
            )
            return run_pilot_workers(
                specs,
                args.out,
                cs,
                sessions=plan.sessions,
                workers=workers,
                concurrency=args.concurrency,
                progress=on,
            )
        return list(
            asyncio.run(
                _closing(
                    client,
                    run_pilot(
                        specs,
                        args.out,
                        client,
                        sessions=plan.sessions,
                        concurrency=args.concurrency,
                        embedder=embedder,
                        progress=on,
                        overrides=overrides,
                        endpoint=caps,
                        cache=not args.no_cache,
                    ),
                )
            )
        )


def _replay(args: argparse.Namespace, plan: Any, specs: list[Any], start: Any) -> list[Any]:
    """``--replay-from DIR``: every run answered from its ledger in DIR, in this process, by a
    client that has no server (a request with no recorded reply fails the call instead)."""
    from curiosity_tui.cli.run_cmds import _closing, call_overrides
    from curiosity_tui.modelio.client import ModelClient
    from curiosity_tui.runs.runner import run_pilot

    src: Path = args.replay_from
    if not src.is_dir():
        raise InputError(f"--replay-from {src}: no such directory")
    if plan.relay is not None or getattr(args, "embedding_model", None):
        raise InputError(
            "--replay-from replays chat calls with the offline embedder: not with a relay or "
            "--embedding-model"
        )
    missing = [s.name for s in specs if not (src / s.name / "journal.jsonl").is_file()]
    if missing:
        raise InputError(f"--replay-from {src}: no ledger for run {missing[0]}")
    if args.out.resolve() == src.resolve():
        raise InputError("--replay-from: write the replay to another --out than DIR")
    start()
    client = ModelClient(base_url="http://replay.invalid/v1", api_key="replay", model=plan.model)
    results = asyncio.run(
        _closing(
            client,
            run_pilot(
                specs,
                args.out,
                client,
                sessions=plan.sessions,
                concurrency=args.concurrency,
                overrides=call_overrides(args),
                replay_from=src,
            ),
        )
    )
    print(f"replayed from {src}: no request was sent")
    return list(results)


def _pilot_status(args: argparse.Namespace) -> int:
    from curiosity_tui.runs.shards import format_status, pilot_status

    for out in args.out:
        if not out.is_dir():
            raise InputError(f"{out}: no such directory")
    st = pilot_status(args.out)
    print(json.dumps(st.model_dump(), indent=1) if args.json else format_status(st))
    return 0
