"""A study folder (decision 445): ``plan.toml`` and ``runs/`` (with ``packs/``, ``keys/``,
``report/``; ``prereg.jsonl`` after the first lock), laid out by ``study init``. Commands
that take runs take the study folder (its ``runs/``), and a pilot's ``runs/<name>/`` finds
the study's chain two levels up."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKS_DIR", "PLAN_FILE", "RUNS_DIR", "is_study", "runs_of", "study_packs"]

PLAN_FILE = "plan.toml"
RUNS_DIR = "runs"
PACKS_DIR = "packs"


def is_study(path: Path) -> bool:
    """Whether ``path`` is a study folder: it holds ``plan.toml`` and ``runs/``."""
    return (path / PLAN_FILE).is_file() and (path / RUNS_DIR).is_dir()


def runs_of(path: Path) -> Path:
    """Where a command that takes runs looks: a study's ``runs/``, else ``path`` itself."""
    return path / RUNS_DIR if path.is_dir() and is_study(path) else path


def study_packs(path: Path) -> list[Path]:
    """A study's packs (``packs/*/`` holding a pack manifest), in name order; none when
    ``path`` is not a study folder (``report`` adds their rating sections, decision 561)."""
    from curiosity_tui.packs.pack import MANIFEST_FILE

    root = path / PACKS_DIR
    if not (path.is_dir() and is_study(path) and root.is_dir()):
        return []
    return sorted(p for p in root.iterdir() if (p / MANIFEST_FILE).is_file())
