"""Where the palette's Screenshot goes and what it says (issue 28, item 10): the current
folder, or ``$CURIOSITY_SCREENSHOTS``; the full path on success, the exact reason otherwise."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["SCREENSHOTS_ENV", "save_screenshot", "screenshot_folder"]

SCREENSHOTS_ENV = "CURIOSITY_SCREENSHOTS"


def screenshot_folder(given: str | None = None) -> Path:
    """``given``, else ``$CURIOSITY_SCREENSHOTS``, else the current folder (absolute)."""
    raw = given or os.environ.get(SCREENSHOTS_ENV) or os.getcwd()
    return Path(raw).expanduser().absolute()


def _file_name(title: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S.%f")[:-3]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", title).strip("-") or "curiosity-tui"
    return f"{safe}-{stamp}.svg"


def save_screenshot(
    app: Any, *, filename: str | None = None, folder: str | None = None
) -> tuple[str | None, str]:
    """Write ``app``'s screen as SVG; (the path or None, the one-line notice)."""
    where = screenshot_folder(folder)
    target = where / (filename or _file_name(str(app.title or "")))
    if not where.is_dir():
        why = "it is not a folder" if where.exists() else "no such folder"
        return None, f"Screenshot not saved: {where}: {why} (set {SCREENSHOTS_ENV} to another)"
    try:
        target.write_text(app.export_screenshot(), encoding="utf-8")
    except OSError as err:
        return None, f"Screenshot not saved: {target}: {err.strerror or err}"
    return str(target), f"Saved screenshot to {target}"
