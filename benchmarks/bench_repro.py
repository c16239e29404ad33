"""Benchmark: what issue 23 adds to every chat call's client CPU.

Per call: the run's sampling (``call_sampling``: one table lookup and one sha256 for the
seed), the request digest (``request_digest``: canonical JSON of the body and its sha256) and
the reply kept for a resume (``ReplyCache.keep``: one JSON line appended to the ledger's
``reply-cache.jsonl``). The body is a judge-before request with its strict per-call schema and a
4.5 KB prompt; the record a 4 KB candidate. Prints min and median microseconds a call over
several repeats and the load average (the machine is shared: read them against the 1.6-1.8 ms
of client CPU a structured call costs, decision 270); exits 0 (figures, not assertions).

    PYTHONPATH=. python benchmarks/bench_repro.py
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.ledger.sampling_record import SamplingTable
from curiosity_tui.modelio.json_reply import schema_response_format
from curiosity_tui.modelio.reply_cache import ReplyCache, request_digest
from curiosity_tui.modelio.sampling import call_sampling, draw_scope, sampling_scope
from curiosity_tui.protocol.call_specs import judge_before_spec

CALLS = 2000
REPEATS = 7


def _per_call_us(fn: Callable[[], object]) -> tuple[float, float]:
    """(min, median) microseconds a call over REPEATS rounds of CALLS calls."""
    rounds = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        rounds.append((time.perf_counter() - t0) / CALLS * 1e6)
    return min(rounds), statistics.median(rounds)


def main() -> None:
    spec = judge_before_spec()
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "s" * 1500},
            {"role": "user", "content": "u" * 3000},
        ],
        "response_format": schema_response_format(spec.model, spec.json_schema("strict")),
        "max_tokens": 500,
        "temperature": 0.0,
        "top_p": 1.0,
        "seed": 123456789,
    }
    record = CallRecord(
        kind="candidate",
        model="m",
        session=1,
        request_text="x" * 3000,
        response_text="y" * 1200,
        request_sha256="a" * 64,
    )
    table = SamplingTable(seed=7).resolved()
    with tempfile.TemporaryDirectory() as tmp:
        cache = ReplyCache([], path=Path(tmp) / "reply-cache.jsonl")
        with sampling_scope(table, "C+cur-r0"), draw_scope("candidate-2"):
            figures = {
                "call_sampling (values + seed)": _per_call_us(
                    lambda: call_sampling("candidate", 3)
                ),
                "request_digest (5 KB body)": _per_call_us(lambda: request_digest(body)),
                "ReplyCache.keep (4 KB record)": _per_call_us(lambda: cache.keep(1, [record])),
            }
    for name, (low, mid) in figures.items():
        print(f"{name:<32} min {low:7.1f} µs   median {mid:7.1f} µs")
    total = sum(low for low, _ in figures.values()), sum(mid for _, mid in figures.values())
    print(f"{'all three':<32} min {total[0]:7.1f} µs   median {total[1]:7.1f} µs")
    print(f"load average {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
