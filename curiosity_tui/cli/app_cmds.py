"""``curiosity-tui open [WORKSPACE]`` (also ``curiosity-tui [WORKSPACE]``): the Textual app.

The app is imported inside the handler so that other commands never pay for Textual.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from curiosity_tui.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "open",
        help="open the app on a workspace (ledgers/ and packs/), a folder of ledgers, or one ledger",
        description=(
            "Open the terminal app. WORKSPACE defaults to the current directory. A ledger "
            "directory opens straight in the browser."
        ),
    )
    p.add_argument("workspace", nargs="?", default=None, metavar="WORKSPACE")
    p.add_argument("--theme", default=None, help="a Textual theme name (e.g. textual-dark, nord)")
    p.add_argument(
        "--keymap", default=None, metavar="TOML", help="remap keys by binding id ([keymap] table)"
    )
    p.add_argument(
        "--curator-name",
        default=None,
        metavar="NAME",
        help="who decides downgrades and curates (actor human:NAME; default $CURIOSITY_CURATOR, "
        "then $USER)",
    )
    p.set_defaults(handler=handle_open)


def open_curator_name(args: argparse.Namespace) -> str | None:
    """``--curator-name`` or ``$CURIOSITY_CURATOR``, checked to be one word; None: neither."""
    import os

    name = (
        args.curator_name if args.curator_name is not None else os.environ.get("CURIOSITY_CURATOR")
    )
    if name is None:
        return None
    name = name.strip().removeprefix("human:")
    if not name or any(c.isspace() for c in name):
        raise InputError(f"curator name {name!r} must be one non-empty word (--curator-name)")
    return name


def handle_open(args: argparse.Namespace) -> int:
    from curiosity_tui.workspace_scan import default_workspace, is_ledger

    root = default_workspace(args.workspace)
    if not root.exists():
        raise InputError(f"no such workspace: {root}")
    if not root.is_dir():
        raise InputError(f"not a directory: {root}")
    ledger: Path | None = None
    if is_ledger(root):
        ledger, root = root, root.parent
    curator = open_curator_name(args)
    from curiosity_tui import workspace_prescan

    if ledger is None:  # the first scan runs on another core while Textual loads (285)
        workspace_prescan.start(root)
    try:
        from curiosity_tui.app import load_keymap, make_app

        app = make_app(
            root,
            ledger=ledger,
            theme=args.theme,
            curator_name=curator,
            keymap=load_keymap(args.keymap) if args.keymap else None,
        )
        app.run()
    finally:
        if (unused := workspace_prescan.take(root)) is not None:
            unused.discard()
    return 0
