"""Reading line-oriented UTF-8 files (JSONL logs, chains, ratings) so that a damaged byte is
one error naming the file, the line and the column, never a ``UnicodeDecodeError``. The
bottom floor: imports nothing from the package but ``errors``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from curiosity_tui.errors import CuriosityError


def utf8_lines(
    path: Path, error: Callable[[str], CuriosityError], *, data: bytes | None = None
) -> Iterator[tuple[int, str]]:
    """(line number, text) for every line of ``path`` (or of ``data``, its bytes already read),
    split on ``\\n`` only (a JSON string may hold U+2028). A line that is not UTF-8 raises
    ``error("PATH:LINE: not UTF-8 text …")``."""
    blob = Path(path).read_bytes() if data is None else data
    for lineno, raw in enumerate(blob.split(b"\n"), start=1):
        try:
            yield lineno, raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(
                f"{path}:{lineno}: not UTF-8 text (bad byte 0x{raw[err.start]:02x} at column "
                f"{err.start + 1})"
            ) from None
