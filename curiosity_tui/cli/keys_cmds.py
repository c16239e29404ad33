"""``curiosity-tui keys [--markdown]``: every key of every screen (docs/keys.md is its output)."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "keys",
        help="list every key of every screen (one meaning per key)",
        description="Print the keys of every screen; --markdown prints docs/keys.md.",
    )
    p.add_argument("--markdown", action="store_true", help="the Markdown of docs/keys.md")
    p.set_defaults(handler=handle_keys)


def handle_keys(args: argparse.Namespace) -> int:
    from curiosity_tui.app.keys import all_rows, conflicts, markdown

    if args.markdown:
        sys.stdout.write(markdown())
    else:
        for r in all_rows():
            if r.description:
                print(f"{r.screen:32} {r.key:22} {r.description:28} {r.id}")
    clash = conflicts()
    for key, meanings in sorted(clash.items()):
        print(f"curiosity-tui: key {key!r} has two meanings: {sorted(meanings)}", file=sys.stderr)
    return 1 if clash else 0
