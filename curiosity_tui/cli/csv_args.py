"""``--csv [FILE|-]`` for the commands that export CSV (``metrics``, ``agreement``,
``unblind``, ``ratings export``): the flag and the one way its output is written."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from curiosity_tui.csvfile import Cell

__all__ = ["add_csv_arg", "csv_out"]


def add_csv_arg(p: argparse.ArgumentParser, rows: str, flag: str = "--csv") -> None:
    """``--csv [FILE|-]``: CSV (docs/csv.md) instead of the text; ``-`` or no file is
    standard output. Put it after the positional arguments (``--csv PACK`` reads PACK as
    the file)."""
    p.add_argument(
        flag,
        nargs="?",
        const="-",
        default=None,
        metavar="FILE|-",
        help=f"write CSV instead of text: {rows} (columns: docs/csv.md; default stdout)",
    )


def csv_out(dest: str, header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
    """Write the CSV; a file (not ``-``) gets one line on stdout saying what was written."""
    from curiosity_tui.csvfile import write_csv

    n = write_csv(dest, header, rows)
    if dest != "-":
        print(f"wrote {dest}: {n} rows, {len(header)} columns")
