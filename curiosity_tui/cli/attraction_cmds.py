"""``curiosity-tui attraction RUN_DIR``: each run's regions, its longest sustained stretch and the
attracting region's representative question (analysis/attraction.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser(
        "attraction",
        help="attraction per run: regions, the sustained stretch, its representative question",
    )
    a.add_argument("run_dir", type=Path, metavar="RUN_DIR_OR_LEDGER")
    a.add_argument(
        "--plan",
        type=Path,
        default=None,
        metavar="PLAN.toml",
        help="use the plan's [attraction] parameters (default: the registry's)",
    )
    a.add_argument("--json", action="store_true", help="one JSON object per run")
    a.set_defaults(handler=_attraction)


def _row(run: Any, a: Any) -> dict[str, Any]:
    stretch = a.stretch if a is not None else None
    return {
        "config": run.config,
        "run": run.run_id,
        "defined": a is not None,
        "regions": len(a.regions) if a is not None else None,
        "sustained_sessions": a.sustained_sessions if a is not None else None,
        "stretch_sessions": stretch.sessions if stretch else [],
        "excess_share": stretch.mean_excess if stretch else None,
        "representative": a.representative if a is not None else None,
        "embedder": a.embedder if a is not None else None,
        "parameters": a.params.describe() if a is not None else None,
    }


def _attraction(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.attraction import DEFAULT_PARAMS, attraction
    from curiosity_tui.analysis.plan import load_plan
    from curiosity_tui.analysis.rundata import load_runs
    from curiosity_tui.textsafe import terminal_safe

    params = DEFAULT_PARAMS
    if args.plan is not None:
        plan, _ = load_plan(args.plan)
        params = plan.attraction or DEFAULT_PARAMS
    rows = [_row(r, attraction(r, params)) for r in load_runs([args.run_dir])]
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(f"attraction ({params.describe()})")
    for row in rows:
        head = f"{row['config']:<12} {row['run']:<24}"
        if not row["defined"]:
            print(f"{head} undefined (no stored questions, or no sessions after the early ones)")
        elif not row["stretch_sessions"]:
            print(f"{head} none ({row['regions']} regions)")
        else:
            print(
                f"{head} {row['sustained_sessions']} sessions {row['stretch_sessions']}, "
                f"excess {row['excess_share']:.3f}, toward: {terminal_safe(row['representative'])}"
            )
    return 0
