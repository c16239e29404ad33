"""Issue 27's real-server matrix: configurations x schema dialects x repetitions, N sessions each,
on llama-server, every ledger verified; sessions committed, repairs and cuts per call kind.
Prints a table; asserts nothing (the tier's test_three_sessions_in_each_dialect asserts).

Start the servers first (they stay up until Ctrl-C):

    scripts/real-server-tests.sh --serve   # prints the chat and embeddings URLs

then, with this package importable (the tier's flags: server-default temperature and top_p,
decision 380; each run as a user runs it: ``ledger new``, ``run``, ``verify``):

    PYTHONPATH=. python benchmarks/bench_dialects.py --chat-url http://127.0.0.1:P1/v1 \
        --embed-url http://127.0.0.1:P2/v1 [--model smollm2] [--reps 3] [--sessions 3] \
        [--configs C-cur,C+cur,B-armed+cur] [--dialects strict,full] [--out DIR]

``--lane strict`` (or ``full``) runs one dialect only, so two chat servers can take one lane
each (``--first-rep 3`` to give a third server the last repetition); ``--from DIR`` tabulates what runs recorded in DIR/matrix.jsonl (no server needed).
A run that stops keeps the sessions it committed; its first failure is shown.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "real_server"))
from real_figures import LedgerFigures  # noqa: E402
from real_proxy import RecordingProxy  # noqa: E402
from real_runs import run_configuration  # noqa: E402

CONFIGS = ["C-cur", "C+cur", "B-armed+cur"]
DIALECTS = ["strict", "full"]
MATRIX = "matrix.jsonl"


def run_matrix(args: argparse.Namespace, out: Path) -> None:
    proxy = RecordingProxy(
        args.chat_url.removesuffix("/v1"), args.embed_url.removesuffix("/v1")
    ).start()
    try:
        for rep in range(args.first_rep, args.reps + 1):
            for config in args.configs.split(","):
                for dialect in args.dialects.split(","):
                    name = f"r{rep}-{config}-{dialect}"
                    run_dir = out / "tests" / name
                    run_dir.mkdir(parents=True, exist_ok=True)
                    t0 = time.perf_counter()
                    outcome = run_configuration(
                        run_dir,
                        config=config,
                        contract=args.contract,
                        sessions=args.sessions,
                        base_url=proxy.base_url,
                        model=args.model,
                        dialect=dialect,
                        # a seed per repetition: the per-call seeds derive from it, the run's
                        # name and the session, so without it repetitions ask with the same
                        # seeds (two runs then gave the same mend texts word for word)
                        extra=("--sampling", f"seed={rep}"),
                    )
                    entry = {
                        "rep": rep,
                        "config": config,
                        "dialect": dialect,
                        "planned": args.sessions,
                        "returncode": outcome.run.returncode,
                        "verify": outcome.verify.returncode,
                        "chain_intact": "hash chain intact" in outcome.verify.stdout,
                        "wall_s": round(time.perf_counter() - t0, 1),
                        "figures": outcome.figures.model_dump(),
                    }
                    with (out / MATRIX).open("a", encoding="utf-8") as f:
                        f.write(json.dumps(entry) + "\n")
                    print(_line(entry), flush=True)
    finally:
        proxy.stop()
        proxy.dump(out / "exchanges.jsonl")


def _kinds(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items()) if n) or "0"


def _line(entry: dict[str, Any]) -> str:
    fig = LedgerFigures.model_validate(entry["figures"])
    ok = "verified" if entry["verify"] == 0 and entry["chain_intact"] else "VERIFY FAILED"
    fail = f" | {fig.failures[0][:160]}" if fig.failures else ""
    return (
        f"r{entry['rep']} {entry['config']:12s} {entry['dialect']:6s} "
        f"{fig.sessions_committed}/{entry['planned']} {ok} {entry['wall_s']:7.1f}s "
        f"repairs: {_kinds(fig.repairs_by_kind)}; cuts: {_kinds(fig.cuts_by_kind)}{fail}"
    )


def tabulate(out: Path) -> None:
    entries = [json.loads(x) for x in (out / MATRIX).read_text(encoding="utf-8").splitlines()]
    print(f"bench_dialects: {len(entries)} run(s) recorded in {out / MATRIX}")
    for entry in entries:
        print(_line(entry))
    print(
        "\n| run | dialect | sessions committed | runs verified | repairs by kind | cuts by kind |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault((entry["config"], entry["dialect"]), []).append(entry)
    for (config, dialect), group in groups.items():
        repairs: Counter[str] = Counter()
        cuts: Counter[str] = Counter()
        done = planned = verified = 0
        for entry in group:
            fig = LedgerFigures.model_validate(entry["figures"])
            repairs.update(fig.repairs_by_kind)
            cuts.update(fig.cuts_by_kind)
            done += fig.sessions_committed
            planned += entry["planned"]
            verified += entry["verify"] == 0 and entry["chain_intact"]
        print(
            f"| {config} | {dialect} | {done}/{planned} | {verified}/{len(group)} "
            f"| {_kinds(dict(repairs))} | {_kinds(dict(cuts))} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chat-url", help="the chat llama-server, …/v1")
    parser.add_argument("--embed-url", help="the embeddings llama-server, …/v1")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--first-rep", type=int, default=1, help="start at this repetition")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--dialects", default=",".join(DIALECTS))
    parser.add_argument("--lane", choices=DIALECTS, help="one dialect only (same as --dialects X)")
    parser.add_argument("--contract", default="pilot-02", choices=["pilot-01", "pilot-02"])
    parser.add_argument("--out", type=Path, help="where ledgers and matrix.jsonl go")
    parser.add_argument("--from", dest="from_dir", type=Path, help="tabulate DIR/matrix.jsonl")
    args = parser.parse_args()
    if args.from_dir:
        tabulate(args.from_dir)
        return 0
    if not (args.chat_url and args.embed_url):
        parser.error("--chat-url and --embed-url (or --from) are required")
    if args.lane:
        args.dialects = args.lane
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-dialects-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"bench_dialects: ledgers and {MATRIX} in {out}", flush=True)
    run_matrix(args, out)
    tabulate(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
