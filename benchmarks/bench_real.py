"""Real-server benchmark (issue 11): seconds per session and tokens per second, per configuration,
on llama.cpp's llama-server. Prints figures; asserts nothing.

Start the servers first (they stay up until Ctrl-C):

    scripts/real-server-tests.sh --serve      # prints the chat URL, e.g. http://127.0.0.1:PORT/v1

then, in another shell, with this package importable:

    PYTHONPATH=. python benchmarks/bench_real.py --base-url http://127.0.0.1:PORT/v1 \
        [--model gemma] [--sessions 2] [--configs A,B,C-cur] [--contract pilot-02]

or summarise what a tier run recorded (no server needed):

    python benchmarks/bench_real.py --from-results ~/.cache/curiosity-tui/runs/STAMP/results.jsonl

Each configuration gets a fresh ledger (``ledger new`` then ``run --sessions N``, as a user runs
it). Seconds per session are the session records' started→finished; tokens per second is the
completion tokens of all calls over the summed call latencies (calls of one session may overlap,
so on a one-slot server it is the server's generation rate, on a parallel one a lower bound).
A run that fails still reports the sessions it committed and the failure's first line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "real_server"))
from real_figures import LedgerFigures, ledger_figures  # noqa: E402

ALL = ["A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
SEED = (
    "Why did printed pamphlets spread the Reformation faster in some German cities than in others?"
)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "curiosity_tui", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )


def bench_one(
    workdir: Path, config: str, contract: str, sessions: int, base_url: str, model: str
) -> tuple[LedgerFigures, float, str]:
    ledger = workdir / f"{config}-{contract}"
    made = _cli(
        "ledger",
        "new",
        str(ledger),
        "--seed",
        SEED,
        "--config",
        config,
        "--contract",
        contract,
        cwd=workdir,
    )
    if made.returncode != 0:
        raise SystemExit(f"bench_real: ledger new failed: {made.stderr.strip()}")
    t0 = time.perf_counter()
    ran = _cli(
        "run",
        str(ledger),
        "--sessions",
        str(sessions),
        "--base-url",
        base_url,
        "--model",
        model,
        cwd=workdir,
    )
    wall = time.perf_counter() - t0
    last = (ran.stderr.strip() or ran.stdout.strip()).splitlines()
    note = "" if ran.returncode == 0 else f"exit {ran.returncode}: {last[-1] if last else ''}"
    return ledger_figures(ledger), wall, note


def _row(name: str, fig: LedgerFigures, wall: float | None, note: str, planned: int | None) -> str:
    secs = fig.session_seconds
    mean = f"{statistics.mean(secs):7.1f}" if secs else "      -"
    tps = f"{fig.tokens_per_second:6.1f}" if fig.tokens_per_second else "     -"
    plan = f"{fig.sessions_committed}/{planned}" if planned else f"{fig.sessions_committed}"
    walls = f"{wall:7.1f}" if wall is not None else "      -"
    repairs = sum(fig.repairs_by_kind.values())
    fallbacks = sum(fig.fallbacks_by_kind.values())
    return f"{name:40s} {plan:>5s} {mean} {walls} {tps} {fig.completion_tokens:7d} {repairs:3d} {fallbacks:3d}  {note}"


HEADER = f"{'run':40s} {'sess':>5s} {'s/sess':>7s} {'wall s':>7s} {'tok/s':>6s} {'tokens':>7s} rep fbk  note"


def from_results(path: Path) -> None:
    print(f"bench_real: figures recorded by the tier in {path}")
    print(HEADER)
    for line in path.read_text(encoding="utf-8").splitlines():
        entry: dict[str, Any] = json.loads(line)
        if "figures" not in entry:  # not a ledger's run (the model rater: items, missing)
            rest = ", ".join(f"{k} {v}" for k, v in entry.items() if k != "test")
            print(f"{str(entry.get('test', '?'))[:40]:40s} {rest}")
            continue
        fig = LedgerFigures.model_validate(entry["figures"])
        note = "" if entry.get("returncode", 0) == 0 else f"exit {entry['returncode']}"
        if fig.failures:
            note += f" {fig.failures[0][:70]}"
        print(_row(entry["test"][:40], fig, None, note, None))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="the llama-server chat endpoint, …/v1")
    parser.add_argument("--model", default="gemma")
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--configs", default=",".join(ALL))
    parser.add_argument("--contract", default="pilot-02", choices=["pilot-01", "pilot-02"])
    parser.add_argument("--from-results", type=Path, help="summarise a tier run's results.jsonl")
    args = parser.parse_args()
    if args.from_results:
        from_results(args.from_results)
        return 0
    if not args.base_url:
        parser.error("--base-url (or --from-results) is required")
    print(
        f"bench_real: {args.sessions} session(s) per configuration, {args.contract}, {args.base_url}"
    )
    print(HEADER)
    with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
        for config in args.configs.split(","):
            fig, wall, note = bench_one(
                Path(tmp), config, args.contract, args.sessions, args.base_url, args.model
            )
            print(_row(config, fig, wall, note, args.sessions), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
