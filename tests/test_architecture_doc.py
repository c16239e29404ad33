"""docs/architecture.md names real files: every `path.py` / `dir/` it cites exists in the package."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "curiosity_tui"
DOC = ROOT / "docs" / "architecture.md"


def _cited_paths() -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    return set(re.findall(r"`([a-z_]+(?:/[a-z_]+)*\.(?:py|tcss))`", text))


def test_every_cited_file_exists() -> None:
    cited = _cited_paths()
    assert len(cited) > 30, "the page should name the package's files"
    missing = sorted(p for p in cited if not (PKG / p).exists() and not (ROOT / p).exists())
    assert missing == [], f"docs/architecture.md names files that do not exist: {missing}"


def test_every_package_folder_is_described() -> None:
    text = DOC.read_text(encoding="utf-8")
    folders = sorted(d.name for d in PKG.iterdir() if d.is_dir() and (d / "__init__.py").exists())
    undescribed = [f for f in folders if f"{f}/" not in text]
    assert undescribed == [], f"package folders missing from docs/architecture.md: {undescribed}"
