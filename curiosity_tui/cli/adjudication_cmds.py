"""``curiosity-tui adjudicate PACK --coordinator NAME`` (the adjudication screen) and
``curiosity-tui adjudication list PACK [--json | --csv]``: where raters disagree, and what the
coordinator recorded — still blind (the key is never read). Domain work lives in
``curiosity_tui.packs.disagreement``; the app is imported only inside ``adjudicate``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from curiosity_tui.cli.csv_args import add_csv_arg, csv_out


def register(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser(
        "adjudicate",
        help="adjudicate where raters disagree, in the app (coordinator; before unblinding)",
    )
    a.add_argument("packdir", type=Path, metavar="PACKDIR")
    a.add_argument("--coordinator", required=True, metavar="NAME", help="recorded as human:NAME")
    a.set_defaults(handler=_adjudicate)

    adj = sub.add_parser("adjudication", help="list a pack's disagreements and adjudications")
    asub = adj.add_subparsers(dest="adjudication_command", metavar="ADJUDICATION_COMMAND")
    adj.set_defaults(handler=lambda args: (adj.print_help(), 2)[1])
    lst = asub.add_parser("list", help="disagreements, each with the adjudication in force")
    lst.add_argument("packdir", type=Path, metavar="PACKDIR")
    lst.add_argument("--json", action="store_true")
    add_csv_arg(lst, "one row per disagreement: raw categories, the adjudicated one in force")
    lst.set_defaults(handler=_list)


def _adjudicate(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.adjudication import adjudicator_actor
    from curiosity_tui.packs.disagreement import adjudication_state

    who = adjudicator_actor(args.coordinator)
    adjudication_state(args.packdir)  # a bad pack or file: one line before the app starts
    from curiosity_tui.app.standalone import AdjudicationApp

    AdjudicationApp(args.packdir, who).run()
    return 0


def _list(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.disagreement import adjudication_state, format_state

    state = adjudication_state(args.packdir)
    if args.csv is not None:
        from curiosity_tui.packs.pack_csv import ADJUDICATION_COLUMNS, adjudication_rows

        csv_out(args.csv, ADJUDICATION_COLUMNS, adjudication_rows(state))
    elif args.json:
        print(json.dumps(state.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print(format_state(state))
    return 0


__all__ = ["register"]
