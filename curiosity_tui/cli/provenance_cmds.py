"""CLI: ``provenance PATH`` — what produced a ledger, pack, rater's copy, prereg chain, ratings
file, report or CSV (issue 23.3; ``provenance_sources.py`` reads it)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from curiosity_tui.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "provenance",
        help="what produced a file: tool version, git commit (dirty?), packages, platform",
    )
    p.add_argument("path", type=Path, metavar="PATH")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_provenance)


def _provenance(args: argparse.Namespace) -> int:
    from curiosity_tui.provenance_sources import find_provenance
    from curiosity_tui.widgets.literal import clean

    found = find_provenance(args.path)
    if not found:
        raise InputError(
            f"{args.path}: no provenance recorded (written before curiosity-tui kept it, or "
            "not one of its artifacts)"
        )
    if args.json:
        blocks = [
            {"where": f.where, "note": f.note, "provenance": f.provenance.model_dump(mode="json")}
            for f in found
        ]
        print(json.dumps({"path": str(args.path), "blocks": blocks}, indent=1))
        return 0
    for f in found:
        print(f"{clean(args.path, oneline=True)}: {f.where}" + (f" — {f.note}" if f.note else ""))
        for line in f.provenance.lines():
            print(f"  {clean(line, oneline=True)}")
    return 0
