"""Benchmark: a run's per-session history (``RunData.timeline``, read from the ledger's
snapshots) and the lifecycle metrics computed from it (open life, closure hazard, dormancy,
return latency: eight registry metrics that share two derived lists) on one synthetic
200-session C-cur ledger (about 300 questions, 30,000 question-session states).

Prints min CPU and wall time of several repeats and the load average (the machine is
shared: read CPU times and ratios, not absolute wall figures); exits 0 (figures, not
assertions).

    PYTHONPATH=. python benchmarks/bench_timeline.py [SESSIONS]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.rundata import load_runs
from curiosity_tui.analysis.timeline import ledger_timeline
from curiosity_tui.ledger import Ledger
from curiosity_tui.offline.synthetic_ledgers import make_run

LIFECYCLE = (
    "open_life_median",
    "closure_hazard",
    "dormant_share",
    "dormant_return_share",
    "return_within_k_share",
    "return_latency_median",
    "return_never_share",
)


def best(fn: Callable[[], object], repeats: int = 5) -> tuple[float, float]:
    """(min CPU seconds, min wall seconds) over ``repeats`` calls."""
    cpu, wall = [], []
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return min(cpu), min(wall)


def main() -> None:
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    reg = default_registry()
    with tempfile.TemporaryDirectory() as tmp:
        path = make_run(Path(tmp) / "long", "C-cur", sessions=sessions)
        led = Ledger.open(path, write=False)
        try:
            led.snapshot_index()
            led.raw_sessions()  # rows and records read once, as RunData.from_ledger has them
            cpu, wall = best(lambda: ledger_timeline(led))
        finally:
            led.close()
        print(f"timeline ({sessions} sessions): CPU {cpu:.3f} s, wall {wall:.3f} s")
        (run,) = load_runs([path])
        states = sum(len(v) for v in (run.timeline or {}).values())

        def metrics() -> None:
            fresh = run.model_copy()  # a run not seen before: nothing derived is kept yet
            for name in LIFECYCLE:
                reg.get(name)(fresh)

        cpu, wall = best(metrics)
        print(
            f"{len(LIFECYCLE)} lifecycle metrics ({len(run.nodes)} questions, {states} states): "
            f"CPU {cpu:.3f} s, wall {wall:.3f} s"
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
