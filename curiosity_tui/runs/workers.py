"""A pilot over worker processes: runs are independent ledgers, so a pilot of many runs can
use every core. Each worker gets a round-robin share of the runs, builds its own client and
event loop, and sends its progress reports and results to the parent over one queue.

Workers are started with ``spawn`` (never ``fork``: the parent may hold threads — a progress
display, the scripted server — and an event loop). The API key reaches a worker through the
process pipe, never a file or the command line.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing as mp
import queue as queue_mod
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from curiosity_tui.errors import InputError
from curiosity_tui.modelio import ratelimit
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.runs.runner import ProgressFn, RunResult, RunSpec, run_pilot
from curiosity_tui.runs.shards import Shard, shard_of

__all__ = ["ClientSpec", "run_pilot_workers", "worker_share"]

_POLL_S = 0.2


@dataclass(frozen=True)
class ClientSpec:
    """What a worker needs to build its own :class:`ModelClient`."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    embedding_model: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 3
    retry_backoff_s: float = 1.0
    endpoint_embeddings: bool = False
    max_rpm: float | None = None  # this worker's share (run_pilot_workers divides)
    max_tpm: float | None = None
    # what the parent's endpoint probe found (recorded in every run, applied to the client)
    # and the per-call settings (--cap, --schema-dialect, ...): the same as in one process
    endpoint: Any = None
    overrides: tuple[tuple[str, Any], ...] = ()
    reply_cache: bool = True  # --no-cache turns it off (modelio/reply_cache.py)

    @classmethod
    def of(
        cls,
        client: ModelClient,
        *,
        endpoint_embeddings: bool = False,
        endpoint: Any = None,
        overrides: dict[str, Any] | None = None,
        reply_cache: bool = True,
    ) -> ClientSpec:
        limiter = ratelimit.current()
        return cls(
            reply_cache=reply_cache,
            endpoint=endpoint,
            overrides=tuple(sorted((overrides or {}).items())),
            max_rpm=limiter.rpm if limiter else None,
            max_tpm=limiter.tpm if limiter else None,
            model=client.model,
            base_url=client.base_url,
            api_key=getattr(client, "_key", None),
            embedding_model=client.embedding_model,
            timeout_s=client.timeout_s,
            max_retries=client.max_retries,
            retry_backoff_s=client.retry_backoff_s,
            endpoint_embeddings=endpoint_embeddings,
        )

    def build(self) -> ModelClient:
        """The client; sets this process's rate limiter to the spec's share first."""
        limits = (self.max_rpm, self.max_tpm)
        ratelimit.configure(ratelimit.RateLimiter(*limits) if any(limits) else None)
        client = ModelClient(
            base_url=self.base_url,
            api_key=self.api_key,
            model=self.model,
            embedding_model=self.embedding_model,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            retry_backoff_s=self.retry_backoff_s,
        )
        if self.endpoint is not None:
            from curiosity_tui.modelio.endpoint import apply_capabilities

            apply_capabilities(client, self.endpoint)
        return client


async def _worker_pilot(
    specs: list[RunSpec], out: Path, cs: ClientSpec, sessions: int, concurrency: int, q: Any
) -> list[RunResult]:
    client = cs.build()
    embedder = None
    if cs.endpoint_embeddings and cs.embedding_model:
        from curiosity_tui.modelio.embedders import EndpointEmbedder

        embedder = EndpointEmbedder(client, cs.embedding_model)
    try:
        return await run_pilot(
            specs,
            out,
            client,
            sessions=sessions,
            concurrency=concurrency,
            embedder=embedder,
            progress=lambda p: q.put(("progress", p)),
            overrides=dict(cs.overrides),
            endpoint=cs.endpoint,
            cache=cs.reply_cache,
        )
    finally:
        await client.aclose()


def _worker_main(
    index: int,
    specs: list[RunSpec],
    out: Path,
    cs: ClientSpec,
    sessions: int,
    concurrency: int,
    q: Any,
) -> None:
    """A worker process: run its share, then put ``("result", index, results)``."""
    try:
        results = asyncio.run(_worker_pilot(specs, out, cs, sessions, concurrency, q))
    except BaseException as err:  # reported to the parent, which names the worker
        q.put(("error", index, f"{type(err).__name__}: {err}"))
        return
    q.put(("result", index, results))


def worker_share(client: ClientSpec, workers: int) -> ClientSpec:
    """Each worker gets an equal share of the rate limits (see modelio/ratelimit.py)."""
    return replace(
        client,
        max_rpm=client.max_rpm / workers if client.max_rpm else None,
        max_tpm=client.max_tpm / workers if client.max_tpm else None,
    )


def _lost(specs: list[RunSpec], why: str) -> list[RunResult]:
    return [RunResult(ledger=s.name, sessions_done=0, failed=[(0, why)]) for s in specs]


def run_pilot_workers(
    specs: list[RunSpec],
    out: Path,
    client: ClientSpec,
    *,
    sessions: int,
    workers: int,
    concurrency: int = 4,
    progress: ProgressFn | None = None,
) -> list[RunResult]:
    """Run ``specs`` over ``workers`` processes, ``ceil(concurrency / workers)`` runs at a time
    in each; progress reports reach ``progress`` in this process. Results in ``specs`` order.
    A worker that dies leaves its runs failed with the reason (the ledgers keep what was
    committed; running the pilot again resumes them)."""
    if workers < 1:
        raise InputError("--workers must be at least 1")
    if concurrency < 1:
        raise InputError("--concurrency must be at least 1")
    out.mkdir(parents=True, exist_ok=True)
    workers = max(1, min(workers, len(specs)))
    shares = [shard_of(specs, Shard(index=w + 1, count=workers)) for w in range(workers)]
    per_worker = max(1, math.ceil(concurrency / workers))
    client = worker_share(client, workers)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [
        ctx.Process(
            target=_worker_main,
            args=(w, share, out, client, sessions, per_worker, q),
            name=f"pilot-worker-{w + 1}",
        )
        for w, share in enumerate(shares)
    ]
    for p in procs:
        p.start()
    try:
        by_worker = _gather(procs, shares, q, progress)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join()
    by_name = {r.ledger: r for rs in by_worker.values() for r in rs}
    return [by_name.get(s.name) or _lost([s], "no result from its worker")[0] for s in specs]


def _gather(
    procs: list[Any], shares: list[list[RunSpec]], q: Any, progress: ProgressFn | None
) -> dict[int, list[RunResult]]:
    """Drain the queue until every worker has reported (or died without reporting)."""
    got: dict[int, list[RunResult]] = {}
    while len(got) < len(procs):
        try:
            msg = q.get(timeout=_POLL_S)
        except queue_mod.Empty:
            for w, p in enumerate(procs):
                if w not in got and not p.is_alive() and q.empty():
                    got[w] = _lost(shares[w], f"worker {w + 1} exited (code {p.exitcode})")
            continue
        if msg[0] == "progress":
            if progress is not None:
                progress(msg[1])
        elif msg[0] == "result":
            got[msg[1]] = msg[2]
        else:
            got[msg[1]] = _lost(shares[msg[1]], f"worker {msg[1] + 1} failed: {msg[2]}")
    return got
