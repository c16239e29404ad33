"""``curiosity-tui compare A B``: two ledgers side by side (issue 26, item 6; decision 540).

Text by default, ``--json`` for the :class:`~curiosity_tui.analysis.compare.Comparison`
model, ``--app`` for the comparison screen. Everything heavy is imported in the handler.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="two runs side by side, session by session, with their metrics paired",
        description=(
            "Align two ledgers (two arms, two contracts, a relay and a single-mind run, a "
            "human-curated and a model-curated run) session by session: each session's focus "
            "and decision, the nodes new (NEW) or changed (CHG) after it, facts and checks "
            "added, closures and blocked closures; then every registry metric on both runs "
            "with the difference B − A."
        ),
    )
    p.add_argument("a", type=Path, metavar="A", help="a ledger directory")
    p.add_argument("b", type=Path, metavar="B", help="a ledger directory")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--json", action="store_true", help="the comparison as JSON")
    how.add_argument(
        "--app", action="store_true", help="open the comparison screen in the terminal app"
    )
    p.add_argument(
        "--trees", action="store_true", help="list every NEW / CHG node of each session (text)"
    )
    p.add_argument(
        "--no-metrics", action="store_true", help="leave the paired metrics out (faster)"
    )
    p.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.compare import compare_paths

    if args.app:
        from curiosity_tui.analysis.compare import opened_views
        from curiosity_tui.app.standalone import CompareApp

        with opened_views(args.a, args.b):  # a path that is no ledger fails before the app
            pass
        CompareApp(args.a, args.b).run()
        return 0
    comp = compare_paths(args.a, args.b, metrics=not args.no_metrics)
    if args.json:
        print(comp.model_dump_json(indent=1))
    else:
        from curiosity_tui.analysis.compare_text import format_comparison

        print(format_comparison(comp, trees=args.trees))
    return 0
