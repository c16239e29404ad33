"""What produced a file (issue 23.3): one provenance block, written into every artifact.

The block names the tool and its version, the git commit and whether the checkout had changes
(when the package runs from a git checkout), Python, the versions of the packages that shape
results (textual, openai, pydantic, numpy, scikit-learn) and the platform. It is computed once
a process (:func:`current`; git is asked once, with a short timeout) and written into ledger
run metadata (and a session record when it differs), prereg lock entries, pack manifests and
rater copies, rating records, reports and CSV sidecars (docs/csv.md). ``curiosity-tui
provenance PATH`` reads it back (``cli/provenance_cmds.py``).
"""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "KEY_PACKAGES",
    "Provenance",
    "checkout_state",
    "current",
    "current_dict",
    "if_changed",
    "sidecar_path",
]

TOOL = "curiosity-tui"
KEY_PACKAGES = ("textual", "openai", "pydantic", "numpy", "scikit-learn")
SIDECAR_SUFFIX = ".provenance.json"
_GIT_TIMEOUT_S = 5.0


class Provenance(BaseModel):
    """What produced an artifact. ``git_commit`` / ``git_dirty`` are null when the package does
    not run from a git checkout (an installed wheel: ``version`` then says which)."""

    model_config = ConfigDict(extra="forbid")

    tool: str = TOOL
    version: str
    git_commit: str | None = None
    git_dirty: bool | None = Field(
        default=None,
        description="The checkout had changes to tracked files, or new files in the package, "
        "when the block was made (so the commit alone does not say what ran).",
    )
    python: str
    packages: dict[str, str] = Field(default_factory=dict)
    platform: str

    def summary(self) -> str:
        """One line: ``curiosity-tui 0.1.0 · git 1a2b3c4d5e6f (dirty) · Python 3.11.7 · …``."""
        parts = [f"{self.tool} {self.version}"]
        if self.git_commit:
            parts.append(f"git {self.git_commit[:12]}" + (" (dirty)" if self.git_dirty else ""))
        parts.append(f"Python {self.python}")
        parts += [f"{name} {ver}" for name, ver in self.packages.items()]
        parts.append(self.platform)
        return " · ".join(parts)

    def lines(self) -> list[str]:
        """The block as ``key: value`` lines (``provenance PATH`` prints these)."""
        commit = self.git_commit or "not a git checkout"
        if self.git_commit:
            commit += " (dirty: uncommitted changes)" if self.git_dirty else " (clean)"
        out = [f"tool: {self.tool} {self.version}", f"git: {commit}", f"python: {self.python}"]
        out += [f"{name}: {ver}" for name, ver in self.packages.items()]
        out.append(f"platform: {self.platform}")
        return out


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def checkout_state(root: Path, package: str = "curiosity_tui") -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout at ``root``; (None, None) when it is not one.
    Dirty: a tracked file differs from the commit, or the package folder has a new file."""
    if not (root / ".git").exists():
        return None, None
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return None, None
    tracked = _git(root, "status", "--porcelain", "--untracked-files=no")
    new_in_package = _git(root, "status", "--porcelain", "--", package)
    if tracked is None or new_in_package is None:
        return commit.strip(), None
    return commit.strip(), bool(tracked.strip() or new_in_package.strip())


@functools.cache
def current() -> Provenance:
    """This process's block (computed once)."""
    root = Path(__file__).resolve().parent.parent
    commit, dirty = checkout_state(root)
    return Provenance(
        version=_version(TOOL),
        git_commit=commit,
        git_dirty=dirty,
        python=platform.python_version(),
        packages={name: _version(name) for name in KEY_PACKAGES},
        platform=f"{platform.system()} {platform.release()} {platform.machine()} "
        f"({sys.implementation.name})",
    )


def if_changed(known: Provenance | None) -> Provenance | None:
    """This process's block when it differs from ``known`` (what created the ledger; None for
    a ledger from before provenance was recorded), else None: what a session record keeps."""
    now = current()
    return None if known == now else now


def current_dict() -> dict[str, Any]:
    """:func:`current` as JSON-ready data (what artifacts store)."""
    return current().model_dump(mode="json")


def sidecar_path(path: Path) -> Path:
    """``report.csv`` -> ``report.csv.provenance.json``."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


class Sidecar(BaseModel):
    """``FILE.provenance.json`` beside a CSV (docs/csv.md): what wrote FILE, and the sha256 of
    the bytes it wrote (so a sidecar left beside a later, different file is seen as stale)."""

    model_config = ConfigDict(extra="forbid")

    format: str = "curiosity-tui-provenance/1"
    file: str
    sha256: str
    provenance: Provenance


def sidecar_bytes(path: Path, data: bytes) -> bytes:
    """The sidecar of ``path`` holding ``data``, as written."""
    card = Sidecar(file=path.name, sha256=hashlib.sha256(data).hexdigest(), provenance=current())
    return (card.model_dump_json(indent=2) + "\n").encode("utf-8")


MARKDOWN_MARK = "<!-- curiosity-tui provenance: "


def markdown_footer() -> str:
    """The last lines of a Markdown report: who produced it, for a reader and for ``provenance
    PATH`` (one HTML comment holding the block's JSON, invisible when rendered)."""
    block = current()
    return (
        f"---\n\nProduced by {block.summary()}.\n\n{MARKDOWN_MARK}{block.model_dump_json()} -->\n"
    )
