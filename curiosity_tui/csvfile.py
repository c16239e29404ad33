"""CSV exports for R and pandas: one writer, one rule for every cell (decision 205).

- numbers unrounded: a float is written as ``repr(value)`` (the shortest text that reads back
  to the same float), an int as itself, a bool as ``true`` / ``false``;
- missing (``None``, NaN) as the empty cell;
- text literally, quoted by the csv module where it holds a comma, quote or newline; a text
  cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
  ``'`` so a spreadsheet does not run it as a formula (decision 206). Numbers are never
  prefixed: ``-0.25`` stays a number.

UTF-8 without a byte-order mark, ``\\n`` line ends, a header row first. The column names of
every export are in docs/csv.md (tests/test_csv_exports.py checks the two agree).
"""

from __future__ import annotations

import csv
import io
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from curiosity_tui.atomic import atomic_write_bytes
from curiosity_tui.errors import InputError
from curiosity_tui.provenance import sidecar_bytes, sidecar_path

__all__ = ["Cell", "FORMULA_START", "cell_text", "csv_text", "write_csv"]

Cell = str | int | float | bool | None

#: first characters a spreadsheet may take for a formula (OWASP "CSV injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell_text(value: Cell) -> str:
    """One cell as text, by the rules above."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return repr(value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    """The whole file as text; a row whose length differs from the header's is a bug."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(list(header))
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"CSV row has {len(row)} cells, the header {len(header)}")
        w.writerow([cell_text(v) for v in row])
    return buf.getvalue()


def write_csv(dest: str | Path, header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> int:
    """Write to ``dest`` (``-`` for standard output, else a file, replaced atomically).
    An existing file is replaced only if its name ends in ``.csv``: a mistyped
    ``--csv RUN.run.json`` must not overwrite the data. Returns the number of data rows."""
    materialised = [list(r) for r in rows]
    text = csv_text(header, materialised)
    if str(dest) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return len(materialised)
    path = Path(dest)
    if path.is_dir():
        raise InputError(f"{path}: is a directory; --csv wants a file name or -")
    if path.exists() and path.suffix.lower() != ".csv":
        raise InputError(
            f"{path}: exists and is not a .csv file; not overwritten (remove it or pick a "
            "name ending in .csv)"
        )
    data = text.encode("utf-8")
    try:
        atomic_write_bytes(path, data)
        # what wrote it, beside it (docs/csv.md): a comment line would break CSV readers
        atomic_write_bytes(sidecar_path(path), sidecar_bytes(path, data))
    except OSError as err:
        raise InputError(f"{path}: cannot write CSV: {err.strerror or err}") from err
    return len(materialised)
