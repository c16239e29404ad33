"""CLI commands for raters on their own machines: ``pack export`` and ``ratings import``
(both registered by ``pack_cmds``, under ``pack`` and ``ratings``). Domain work lives in
``curiosity_tui.packs.export`` and ``curiosity_tui.packs.ratings_import``."""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path


def register_export(psub: argparse._SubParsersAction) -> None:
    e = psub.add_parser(
        "export",
        help="a rater's own copy of a pack, to rate on their machine",
        description=(
            "Writes OUT with the pack's manifest and items, the rater's own ratings if any, and "
            "export.json; never another rater's file, the log or the key. Rate it with "
            "`rate OUT --rater NAME`, bring the file back with `ratings import`."
        ),
    )
    e.add_argument("packdir", type=Path, metavar="PACKDIR")
    e.add_argument("--rater", required=True, metavar="NAME")
    e.add_argument("--out", required=True, type=Path, metavar="DIR", help="a new folder")
    e.set_defaults(handler=_export)


def register_import(rsub: argparse._SubParsersAction) -> None:
    """``ratings import`` (the ``ratings`` group is made by ``pack_cmds``, beside ``export``)."""
    i = rsub.add_parser(
        "import",
        help="store a rater's file (from an exported copy) in the pack",
        description=(
            "Checks the pack id and items hash, that every record names the rater, and refuses "
            "duplicates and a second file for the same rater."
        ),
    )
    i.add_argument("packdir", type=Path, metavar="PACKDIR")
    i.add_argument("file", type=Path, metavar="FILE", help="the copy's ratings/NAME.jsonl")
    i.add_argument("--rater", default=None, metavar="NAME", help="default: FILE's name")
    i.add_argument(
        "--replace",
        action="store_true",
        help="take FILE although the rater has a file in the pack, if FILE continues it",
    )
    i.set_defaults(handler=_import)


def _export(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.export import export_for_rater

    res = export_for_rater(args.packdir, args.rater, args.out)
    own = f", with {res.records} of the rater's own record(s)" if res.records else ""
    print(f"exported pack {res.pack_id} for rater {res.rater} to {res.out}: {res.items} items{own}")
    print(f"rate it: curiosity-tui rate {res.out} --rater {res.rater}")
    print(f"bring it back: curiosity-tui ratings import PACK {res.out}/ratings/{res.rater}.jsonl")
    return 0


def _import(args: argparse.Namespace) -> int:
    from curiosity_tui.packs.ratings_import import import_ratings

    res = import_ratings(
        args.packdir,
        args.file,
        rater=args.rater,
        replace=args.replace,
        by=f"human:{getpass.getuser()}",
    )
    if res.new_records == 0 and not res.replaced:
        print(
            f"nothing new: {res.path} already holds these {res.records} record(s) of rater "
            f"{res.rater}; nothing written"
        )
        return 0
    how = "replaced the pack's file" if res.replaced else "new file"
    print(
        f"imported {res.records} record(s) of rater {res.rater} into {res.path} "
        f"({res.new_records} new; {how})"
    )
    return 0
