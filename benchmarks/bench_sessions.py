"""Sessions benchmark (issue 3): how close a protocol session gets to its critical path, and how
well many runs overlap.

Run: ``PYTHONPATH=. python benchmarks/bench_sessions.py [--latency-ms 100] [--repeats 3]``

The scripted model server (``ScriptedServer(latency_ms=L, responder=DemoResponder())``: the
real ``openai`` client over HTTP on 127.0.0.1) adds a fixed latency L to every call.

1. *A C session vs its critical path.* A C session (contract pilot-02, offline TF-IDF
   embedder, so no embeddings call) has the dependency chain
   candidates ∥ judge-before ∥ checkers → judge-after → deliverable, i.e. 3 calls; its bound
   is 3 × L. Five sessions of a C-cur ledger are timed (``run_session``, commit included) after
   a warm-up session on the same client (the openai/httpx client is built once per client and
   event loop; that one-off cost is printed separately); best of ``--repeats`` ledgers for each
   session number. Target: every session ≤ 1.2.
2. *Pilot overlap.* ``plan_runs`` of the six configurations × 3 runs (18 runs × 5 sessions)
   at concurrency 18, run as ``pilot run`` runs it without ``--workers``
   (``default_workers``: one process for 18 runs; decision 262), with the scripted server in a
   process of its own (a model server is never in the pilot's process), divided by the wall
   time of one C run alone against the same server (C+cur: the longest chain, 5 sessions plus
   4 model-curator calls). Best and median of ``--repeats``, alternated. Target: ≤ 1.3. Also
   printed, without a target: the pilot over one worker per core, and the figure this section
   printed before decision 262 (one interpreter holding the scripted server's threads too).

3. *Pilot over worker processes* (issue 14.5). ``run_pilot_workers`` over 6 configurations ×
   ``--worker-runs`` (default 18: 108 runs × 5 sessions) with ``--workers`` (default 2), all
   runs at once. Its bound is the larger of one run's wall time and the pilot's total CPU
   (this process, where the scripted server runs, plus the workers) ÷ the cores used.
   Target: wall ≤ 1.3 × bound.
4. *Client CPU per call.* The scripted server in another process, ``--calls`` structured
   judge-after calls through ``ModelClient`` at concurrency 1 and 18; this process's CPU per
   call (client + openai + httpx + asyncio). Target: ≤ 2.5 ms.

The machine these figures come from is shared: min and median of ``--repeats`` are printed,
with the load average, and the targets are ratios.

A run that overlaps perfectly is bounded by latency; what the runs of one interpreter cannot
overlap is its CPU. The script therefore also prints the pilot's process CPU at L = 0 (server
in another process), and with ``--diagnose`` (automatic when a target is missed) a cProfile of
that pilot: this package's functions by cumulative time.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from curiosity_tui.cli.pilot_cmds import _cores, default_workers  # noqa: E402
from curiosity_tui.ledger import Ledger  # noqa: E402
from curiosity_tui.ledger.models import RunMeta  # noqa: E402
from curiosity_tui.modelio.client import ModelClient  # noqa: E402
from curiosity_tui.offline.demo import DemoResponder  # noqa: E402
from curiosity_tui.offline.scripted_server import ScriptedServer  # noqa: E402
from curiosity_tui.protocol.configs import CONFIG_NAMES  # noqa: E402
from curiosity_tui.protocol.session import run_session  # noqa: E402
from curiosity_tui.runs.runner import plan_runs, run_ledger, run_pilot  # noqa: E402
from curiosity_tui.runs.workers import ClientSpec, run_pilot_workers  # noqa: E402

SEED = "Did the printing press cause the Reformation?"
CRITICAL_CALLS = 3  # candidates ∥ judge-before ∥ checkers → judge-after → deliverable
TARGET_SESSION = 1.2
TARGET_PILOT = 1.3
TARGET_CALL_CPU_MS = 2.5
FIRST_STAGE = ("candidate", "judge-before", "checker")


def _client(srv: ScriptedServer | Remote) -> ModelClient:
    return ModelClient(
        base_url=srv.base_url, api_key="sk-test", model="scripted", retry_backoff_s=0.01
    )


SessionTiming = tuple[int, float, list[tuple[str, float]]]


async def c_sessions(
    srv: ScriptedServer, root: Path, sessions: int = 5, repeats: int = 1
) -> tuple[float, list[SessionTiming]]:
    """Time each session of fresh C-cur (pilot-02) ledgers, after a warm-up session on the same
    client; ``repeats`` ledgers, keeping for each session number its fastest repeat. Returns the
    warm-up session's wall time and, per session, (t, wall, call latencies)."""
    client = _client(srv)

    def meta(name: str) -> RunMeta:
        return RunMeta(name=name, seed=SEED, config="C-cur", contract="pilot-02", curator="none")

    best: dict[int, SessionTiming] = {}
    try:
        with Ledger.create(root / "warm-up", meta("warm-up")) as warm:
            t0 = time.perf_counter()
            await run_session(warm, client, 1)
            warm_wall = time.perf_counter() - t0
        for k in range(repeats):
            with Ledger.create(root / f"c-session-{k}", meta(f"c-session-{k}")) as led:
                prev = None
                for t in range(1, sessions + 1):
                    t0 = time.perf_counter()
                    rec = await run_session(led, client, t, previous_focus=prev)
                    wall = time.perf_counter() - t0
                    prev = rec.focus
                    if t not in best or wall < best[t][1]:
                        best[t] = (t, wall, [(c.kind, c.latency_s) for c in rec.calls])
    finally:
        await client.aclose()
    return warm_wall, [best[t] for t in sorted(best)]


async def one_run(
    srv: ScriptedServer | Remote, root: Path, name: str, config: str = "C+cur"
) -> float:
    client = _client(srv)
    spec = plan_runs(seed=SEED, configurations=[config], runs=1)[0]
    led = Ledger.create(root / name, spec.meta.model_copy(update={"name": name}))
    try:
        t0 = time.perf_counter()
        res = await run_ledger(led, client, sessions=5)
        wall = time.perf_counter() - t0
    finally:
        led.close()
        await client.aclose()
    if res.failed:
        raise SystemExit(f"{name}: session {res.failed[0][0]} failed: {res.failed[0][1]}")
    return wall


async def pilot(srv: ScriptedServer | Remote, out: Path, runs: int, concurrency: int) -> float:
    client = _client(srv)
    specs = plan_runs(seed=SEED, configurations=list(CONFIG_NAMES), runs=runs)
    try:
        t0 = time.perf_counter()
        results = await run_pilot(specs, out, client, sessions=5, concurrency=concurrency)
        wall = time.perf_counter() - t0
    finally:
        await client.aclose()
    failed = [(r.ledger, r.failed) for r in results if r.failed]
    if failed:
        raise SystemExit(f"pilot runs failed: {failed}")
    return wall


class Remote:
    """A model server in another process (what a pilot talks to: never its own process);
    ``requests`` is the count it served, known once it has stopped."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.requests = -1


@contextmanager
def remote_server(latency_ms: int) -> Iterator[Remote]:
    """The scripted server (``DemoResponder``, latency L) in a process of its own."""
    ctx = mp.get_context("spawn")
    q, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_serve, args=(q, stop, latency_ms))
    proc.start()
    srv = Remote(q.get(timeout=120))
    try:
        yield srv
    finally:
        stop.set()
        srv.requests = q.get(timeout=60)
        proc.join()


def pilot_cpu_at_zero_latency(root: Path, runs: int, conc: int, repeats: int) -> tuple[float, int]:
    """Best process CPU seconds of the pilot in one interpreter at L = 0, the model server in
    another process (so this is the pilot's own CPU: client, sessions, ledger), and the
    requests per pilot."""
    cpus: list[float] = []
    with remote_server(0) as srv:
        asyncio.run(one_run(srv, root, "cpu-warm-up", "C-cur"))
        for k in range(repeats):
            c0 = time.process_time()
            asyncio.run(pilot(srv, root / f"cpu-{k}", runs, conc))
            cpus.append(time.process_time() - c0)
    warm = _requests_of(root / "cpu-warm-up")
    return min(cpus), (srv.requests - warm) // repeats


def _requests_of(path: Path) -> int:
    """Model requests one ledger's sessions recorded (repairs included)."""
    with Ledger.open(path) as led:
        return sum(
            1 + len(c.earlier)
            for rec in led.session_records()
            for c in rec.calls
            if c.kind != "curator-note"
        )


def profile_pilot(root: Path, runs: int, conc: int, top: int = 15) -> None:
    """--diagnose: the functions of this package with the most cumulative time in one pilot at
    L = 0 (cProfile; server in another process)."""
    import cProfile
    import io
    import pstats

    with remote_server(0) as srv:
        asyncio.run(one_run(srv, root, "prof-warm-up", "C-cur"))
        prof = cProfile.Profile()
        prof.enable()
        asyncio.run(pilot(srv, root / "prof", runs, conc))
        prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats("curiosity_tui", top)
    print(
        "   diagnosis: cProfile of the pilot at L = 0, this package's functions by cumulative time"
    )
    for line in buf.getvalue().splitlines():
        if "curiosity_tui" in line or line.strip().startswith("ncalls"):
            print("   " + line.replace(str(ROOT) + "/", ""))


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def worker_pilot(
    srv: ScriptedServer | Remote, out: Path, runs: int, workers: int, conc: int | None = None
) -> tuple[float, float, int]:
    """Wall, total CPU (this process + the workers) and run count of a pilot over workers."""
    specs = plan_runs(seed=SEED, configurations=list(CONFIG_NAMES), runs=runs)
    cs = ClientSpec(
        model="scripted", base_url=srv.base_url, api_key="sk-test", retry_backoff_s=0.01
    )
    c0, k0, t0 = time.process_time(), _children_cpu(), time.perf_counter()
    results = run_pilot_workers(
        specs, out, cs, sessions=5, workers=workers, concurrency=conc or len(specs)
    )
    wall = time.perf_counter() - t0
    cpu = (time.process_time() - c0) + (_children_cpu() - k0)
    failed = [(r.ledger, r.failed) for r in results if r.failed]
    if failed:
        raise SystemExit(f"pilot runs failed: {failed[:3]}")
    return wall, cpu, len(specs)


def _serve(q: Any, stop: Any, latency_ms: int) -> None:
    with ScriptedServer(latency_ms=latency_ms, responder=DemoResponder()) as srv:
        q.put(srv.base_url)
        stop.wait()
        q.put(len(srv.requests))


async def _calls(base_url: str, n: int, conc: int) -> float:
    """This process's CPU seconds for ``n`` structured calls at concurrency ``conc``."""
    from curiosity_tui.protocol.schemas import JudgeAfterResponse

    client = ModelClient(base_url=base_url, api_key="sk-test", model="scripted")
    messages = [{"role": "user", "content": "F1: a\nF2: b\nD1: c\n" + "evidence " * 300}]
    sem = asyncio.Semaphore(conc)

    async def one() -> None:
        async with sem:
            await client.structured(
                kind="judge-after",
                session=3,
                messages=messages,
                schema=JudgeAfterResponse,
                max_tokens=200,
                internal=True,
            )

    try:
        await one()  # builds the openai/httpx client
        c0 = time.process_time()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.process_time() - c0
    finally:
        await client.aclose()


async def _bare_calls(base_url: str, n: int) -> float:
    """Reference: CPU seconds of ``n`` plain ``openai`` chat calls (no ModelClient), one at a time."""
    import openai

    from curiosity_tui.modelio.json_reply import schema_response_format
    from curiosity_tui.protocol.schemas import JudgeAfterResponse

    oa = openai.AsyncOpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    messages = [{"role": "user", "content": "F1: a\nF2: b\nD1: c\n" + "evidence " * 300}]
    extra = {"response_format": schema_response_format(JudgeAfterResponse)}
    headers = {"X-Curiosity-Call": "judge-after", "X-Curiosity-Session": "3"}

    async def one() -> None:
        await oa.chat.completions.create(
            model="scripted",
            messages=messages,  # type: ignore[arg-type]
            max_tokens=200,
            extra_body=extra,
            extra_headers=headers,
        )

    try:
        await one()
        c0 = time.process_time()
        for _ in range(n):
            await one()
        return time.process_time() - c0
    finally:
        await oa.close()


def client_cpu_per_call(n: int, repeats: int) -> dict[int, list[float]]:
    """ms of CPU per call in the client, server in another process; per concurrency."""
    with remote_server(0) as srv:
        out = {
            conc: sorted(
                1000 * asyncio.run(_calls(srv.base_url, n, conc)) / n for _ in range(repeats)
            )
            for conc in (1, 18)
        }
        out[0] = sorted(
            1000 * asyncio.run(_bare_calls(srv.base_url, n)) / n for _ in range(repeats)
        )
        return out


def _as_cli(srv: Remote, out: Path, runs: int, conc: int, workers: int) -> float:
    """Wall seconds of the pilot run as ``pilot run`` runs it with ``workers`` (1: in this
    process; more: over worker processes, their start included)."""
    if workers == 1:
        return asyncio.run(pilot(srv, out, runs, conc))
    return worker_pilot(srv, out, runs, workers, conc)[0]


def _all(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def pilot_section(args: argparse.Namespace, root: Path) -> float:
    """Section 2; returns the ratio the target applies to."""
    n_runs = len(CONFIG_NAMES) * args.runs
    conc = args.concurrency or n_runs
    cores = _cores()
    workers = default_workers(n_runs, cores)
    alones: list[float] = []
    pilots: list[float] = []
    spread: list[float] = []
    with remote_server(args.latency_ms) as srv:
        asyncio.run(one_run(srv, root, "r-warm-up", "C-cur"))
        for k in range(args.repeats):  # alternated, so that load from elsewhere hits all alike
            alones.append(asyncio.run(one_run(srv, root, f"r-alone-{k}")))
            pilots.append(_as_cli(srv, root / f"r-pilot-{k}", args.runs, conc, workers))
            if cores > 1 and workers != cores:
                spread.append(_as_cli(srv, root / f"r-spread-{k}", args.runs, conc, cores))
    in_alones: list[float] = []
    in_pilots: list[float] = []
    with ScriptedServer(latency_ms=args.latency_ms, responder=DemoResponder()) as isrv:
        asyncio.run(one_run(isrv, root, "i-warm-up", "C-cur"))
        for k in range(args.repeats):
            in_alones.append(asyncio.run(one_run(isrv, root, f"i-alone-{k}")))
            in_pilots.append(asyncio.run(pilot(isrv, root / f"i-pilot-{k}", args.runs, conc)))
    alone, wall = min(alones), min(pilots)
    ratio = wall / alone
    where = "in one process" if workers == 1 else f"over {workers} worker processes"
    print(
        f"2. pilot: {n_runs} runs x 5 sessions at concurrency {conc}, L = {args.latency_ms} ms, as "
        f"`pilot run` runs it without --workers ({where}: {n_runs} runs on {cores} cores), the "
        f"model server in its own process (load average {os.getloadavg()[0]:.1f})"
    )
    print(f"   pilot wall s: {_min_med(pilots)} (all: {_all(pilots)})")
    print(f"   one C+cur run alone s: {_min_med(alones)} (all: {_all(alones)})")
    print(
        f"   ratio best pilot / best alone {ratio:.3f}, median / median "
        f"{statistics.median(pilots) / statistics.median(alones):.3f}  target <= {TARGET_PILOT}: "
        f"{'met' if ratio <= TARGET_PILOT else 'MISSED'}"
    )
    print("   for comparison (no target):")
    if spread:
        print(
            f"   - over {cores} worker processes (one per core; their start included): wall s "
            f"{_min_med(spread)}; ratio {min(spread) / alone:.3f}"
        )
    print(
        f"   - one interpreter holding the scripted server's threads too (how this section "
        f"measured before decision 262): pilot s {_min_med(in_pilots)}, alone s "
        f"{_min_med(in_alones)}; ratio {min(in_pilots) / min(in_alones):.3f}"
    )
    return ratio


def _min_med(values: list[float]) -> str:
    return f"min {min(values):.3f}, median {statistics.median(values):.3f}"


def workers_section(args: argparse.Namespace, root: Path) -> bool:
    """Sections 3 and 4; True when a target is missed."""
    with ScriptedServer(latency_ms=args.latency_ms, responder=DemoResponder()) as srv:
        alones = [asyncio.run(one_run(srv, root, f"w-alone-{k}")) for k in range(args.repeats)]
        figures = [
            worker_pilot(srv, root / f"w-pilot-{k}", args.worker_runs, args.workers)
            for k in range(args.repeats)
        ]
    ones: list[tuple[float, float, int]] = []
    if args.compare_one_worker:
        with ScriptedServer(latency_ms=args.latency_ms, responder=DemoResponder()) as srv:
            ones = [
                worker_pilot(srv, root / f"w1-pilot-{k}", args.worker_runs, 1)
                for k in range(args.repeats)
            ]
    alone = min(alones)
    walls = [w for w, _, _ in figures]
    best_wall, best_cpu, n = min(figures)
    bound = max(alone, best_cpu / args.workers)
    ratio = best_wall / bound
    print(
        f"3. pilot over {args.workers} worker processes: {n} runs x 5 sessions, all at once, "
        f"L = {args.latency_ms} ms (load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores)"
    )
    print(f"   pilot wall s: {_min_med(walls)}; one C+cur run alone s: {_min_med(alones)}")
    if ones:
        print(
            f"   the same pilot in one worker process: wall s {_min_med([w for w, _, _ in ones])}"
            f" (CPU {min(ones)[1]:.2f} s); {args.workers} workers / one: "
            f"{best_wall / min(ones)[0]:.2f}"
        )
    print(
        f"   total CPU of the fastest pilot {best_cpu:.2f} s / {args.workers} = "
        f"{best_cpu / args.workers:.2f} s; bound = max({alone:.2f}, "
        f"{best_cpu / args.workers:.2f}) = {bound:.2f} s"
    )
    print(
        f"   ratio wall / bound {ratio:.3f}  target <= {TARGET_PILOT}: "
        f"{'met' if ratio <= TARGET_PILOT else 'MISSED'}"
    )
    per_call = client_cpu_per_call(args.calls, args.repeats)
    bare = per_call.pop(0)
    worst = 0.0
    for conc, ms in per_call.items():
        worst = max(worst, min(ms))
        print(
            f"4. client CPU per structured call, concurrency {conc:>2}, {args.calls} calls, "
            f"server in another process: {_min_med(ms)} ms"
        )
    print(
        f"   reference, plain openai chat.completions.create, one at a time: {_min_med(bare)} ms "
        f"(ModelClient / plain: {worst / min(bare):.2f})"
    )
    print(
        f"   target <= {TARGET_CALL_CPU_MS} ms: {'met' if worst <= TARGET_CALL_CPU_MS else 'MISSED'}"
    )
    return ratio > TARGET_PILOT or worst > TARGET_CALL_CPU_MS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency-ms", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3, help="runs per configuration in the pilot")
    ap.add_argument("--concurrency", type=int, default=None, help="default: all runs at once")
    ap.add_argument(
        "--repeats", type=int, default=3, help="repeats of the pilot figures (best kept)"
    )
    ap.add_argument("--diagnose", action="store_true", help="always run the CPU diagnosis")
    ap.add_argument("--workers", type=int, default=2, help="worker processes for section 3")
    ap.add_argument("--worker-runs", type=int, default=18, help="runs per configuration, 3.")
    ap.add_argument("--calls", type=int, default=300, help="client calls timed in section 4")
    ap.add_argument("--no-workers", action="store_true", help="run sections 1 and 2 only")
    ap.add_argument(
        "--compare-one-worker", action="store_true", help="3.: also run the pilot in one worker"
    )
    ap.add_argument("--only-workers", action="store_true", help="run sections 3 and 4 only")
    args = ap.parse_args(argv)
    if args.only_workers:
        with tempfile.TemporaryDirectory() as tmp:
            return 1 if workers_section(args, Path(tmp)) else 0
    lat = args.latency_ms / 1000.0
    n_runs = len(CONFIG_NAMES) * args.runs
    conc = args.concurrency or n_runs
    bound = CRITICAL_CALLS * lat

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with ScriptedServer(latency_ms=args.latency_ms, responder=DemoResponder()) as srv:
            warm_wall, sessions = asyncio.run(c_sessions(srv, root / "s", repeats=args.repeats))
            ratios = [wall / bound for _, wall, _ in sessions]
            print(f"scripted server latency L = {args.latency_ms} ms; offline TF-IDF embedder")
            print(
                f"1. C session (C-cur, pilot-02, best of {args.repeats}) wall / critical path "
                f"({CRITICAL_CALLS} calls x L = {bound:.3f} s):"
            )
            for (t, wall, calls), ratio in zip(sessions, ratios, strict=True):
                n_check = sum(1 for k, _ in calls if k == "checker")
                first = max((s for k, s in calls if k in FIRST_STAGE), default=0.0)
                rest = sum(s for k, s in calls if k in ("judge-after", "deliverable"))
                print(
                    f"   session {t}: {wall:.3f} s  ratio {ratio:.3f}  ({len(calls)} calls, "
                    f"{n_check} checker; first stage {first:.3f} s, judge-after + deliverable "
                    f"{rest:.3f} s, outside calls {wall - first - rest:.3f} s)"
                )
            worst = max(ratios)
            print(
                f"   median {statistics.median(ratios):.3f}, worst {worst:.3f}  target <= "
                f"{TARGET_SESSION}: {'met' if worst <= TARGET_SESSION else 'MISSED'}"
            )
            print(
                f"   (the warm-up session, which builds the openai/httpx client, took "
                f"{warm_wall:.3f} s = {warm_wall / bound:.3f} x bound)"
            )

        missed = worst > TARGET_SESSION
        ratio = pilot_section(args, root)
        missed = missed or ratio > TARGET_PILOT
        n_runs = len(CONFIG_NAMES) * args.runs
        conc = args.concurrency or n_runs
        cpu, n_req = pilot_cpu_at_zero_latency(root / "cpu", args.runs, conc, args.repeats)
        print(
            f"   CPU: the same pilot in one interpreter at L = 0 (server in another process) takes "
            f"{cpu:.3f} s of process CPU for {n_req} requests = "
            f"{1000 * cpu / max(n_req, 1):.2f} ms per request (client, sessions, ledger)"
        )
        if missed or args.diagnose:
            profile_pilot(root / "prof", args.runs, conc)
        if not args.no_workers:
            missed = workers_section(args, root) or missed
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
