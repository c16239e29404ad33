"""The workspace at a glance: ledgers under ``WORKSPACE/ledgers`` and packs under ``WORKSPACE/packs``.

Domain code for the app's first screen (and anything else that wants the same summary); it
never imports textual. Everything here only reads: a ledger is opened read-only, and whether a
run is writing to it is found by *trying* a shared lock on its ``writer.lock`` (never creating
the file, never holding the lock).

A workspace is a directory holding ``ledgers/`` and/or ``packs/``; a directory that directly
holds ledger or pack directories also serves (so ``curiosity-tui ledgers`` works), and so does
a single ledger directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from curiosity_tui.errors import CuriosityError, InputError

JOURNAL_FILE = "journal.jsonl"
LOCK_FILE = "writer.lock"
MANIFEST_FILE = "manifest.json"

SortKey = Literal["name", "sessions", "open", "findings", "modified"]
SORT_KEYS: tuple[SortKey, ...] = ("name", "sessions", "open", "findings", "modified")


@dataclass
class LedgerSummary:
    """One ledger's state at a glance."""

    name: str
    path: Path
    config: str = "?"
    contract: str = "?"
    contract_label: str = ""  # a preset's name, or a combination's short form
    curator: str = "?"
    seed: str = ""
    sessions: int = 0
    failed: int = 0
    nodes: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # status -> count
    pending_downgrades: int = 0
    running: bool = False
    holder: str = ""  # who holds writer.lock, as the lock file says
    findings: int | None = None  # closure-audit findings; None = not computed yet
    error: str | None = None  # the ledger could not be read: one line why
    modified: float = 0.0
    endpoint: str = ""  # the latest endpoint probe, one line ("" = none recorded)
    scripted: bool = False  # its replies came from the scripted server (decision 442)

    @property
    def open(self) -> int:
        return self.counts.get("open", 0)

    @property
    def closed(self) -> int:
        return self.counts.get("closed", 0)

    @property
    def dormant(self) -> int:
        return self.counts.get("dormant", 0)

    def matches(self, needle: str) -> bool:
        """Case-insensitive filter over name, config, contract, curator and seed text."""
        if not needle:
            return True
        hay = " ".join(
            (
                self.name,
                self.config,
                self.contract,
                self.curator,
                self.seed,
                self.error or "",
                "scripted" if self.scripted else "",
            )
        ).casefold()
        if "running" in needle.casefold().split() and self.running:
            return True
        return all(part in hay for part in needle.casefold().split())


@dataclass
class PackSummary:
    """One blind pack at a glance (never reads the key)."""

    name: str
    path: Path
    pack_id: str = ""
    scheme: str = ""
    items: int = 0
    raters: list[str] = field(default_factory=list)  # raters with a ratings file
    expected_raters: list[str] = field(default_factory=list)
    error: str | None = None
    modified: float = 0.0
    scripted: bool = False  # built from scripted runs: practice (decision 442)

    def matches(self, needle: str) -> bool:
        if not needle:
            return True
        hay = " ".join((self.name, self.pack_id, self.scheme, " ".join(self.raters))).casefold()
        return all(part in hay for part in needle.casefold().split())


@dataclass
class Workspace:
    root: Path
    ledgers: list[LedgerSummary]
    packs: list[PackSummary]


def is_ledger(path: Path) -> bool:
    return (path / JOURNAL_FILE).is_file()


def is_pack(path: Path) -> bool:
    return (path / MANIFEST_FILE).is_file() and (path / "items.jsonl").is_file()


def default_workspace(given: str | Path | None = None, cwd: Path | None = None) -> Path:
    """The directory given, or the current one when it holds ``ledgers/`` or ``packs/``."""
    if given is not None and str(given) != "":
        return Path(given).expanduser()
    here = cwd or Path.cwd()
    return here


def ledger_dirs(root: Path) -> list[Path]:
    """Ledger directories of a workspace: ``root/ledgers/*``, ``root/*``, a study's
    ``root/runs/*`` and ``root/runs/*/*``, or ``root`` itself."""
    root = Path(root)
    if is_ledger(root):
        return [root]
    out: list[Path] = []
    for base in (root / "ledgers", root, *_study_runs(root)):
        if not base.is_dir():
            continue
        with contextlib.suppress(OSError):
            out.extend(p for p in sorted(base.iterdir()) if p.is_dir() and is_ledger(p))
    seen: set[Path] = set()
    unique = []
    for p in out:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            unique.append(p)
    return unique


def _study_runs(root: Path) -> list[Path]:
    """A study folder's run folders (decision 445): ``runs/`` and each ``runs/<pilot>/``."""
    runs = root / "runs"
    if not runs.is_dir():
        return []
    with contextlib.suppress(OSError):
        return [runs, *(p for p in sorted(runs.iterdir()) if p.is_dir() and not is_ledger(p))]
    return [runs]


def pack_dirs(root: Path) -> list[Path]:
    root = Path(root)
    if is_pack(root):
        return [root]
    out: list[Path] = []
    for base in (root / "packs", root):
        if not base.is_dir():
            continue
        with contextlib.suppress(OSError):
            out.extend(p for p in sorted(base.iterdir()) if p.is_dir() and is_pack(p))
    return out


def lock_state(ledger_dir: Path) -> tuple[bool, str]:
    """(held, holder): try a shared, non-blocking flock on ``writer.lock`` and release it at once.

    The lock file is never created here; a missing file means no writer has ever run.
    """
    path = Path(ledger_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False, ""
    except OSError:
        return False, ""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                holder = ""
                with contextlib.suppress(OSError):
                    holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
                return True, holder
            return False, ""
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False, ""
    finally:
        os.close(fd)


def summarize_ledger(path: Path) -> LedgerSummary:
    """Open a ledger read-only and summarise it; never raises for a bad ledger (sets ``error``)."""
    from curiosity_tui.ledger.ledger import Ledger

    path = Path(path)
    s = LedgerSummary(name=path.name, path=path)
    with contextlib.suppress(OSError):
        s.modified = (path / JOURNAL_FILE).stat().st_mtime
    s.running, s.holder = lock_state(path)
    try:
        with Ledger.open(path) as led:
            meta = led.meta
            s.config, s.contract, s.curator, s.seed = (
                meta.config,
                meta.contract,
                meta.curator,
                meta.seed,
            )
            s.contract_label = contract_label(meta.contract)
            nodes = led.raw_nodes()
            s.nodes = len(nodes)
            counts: dict[str, int] = {}
            pending = 0
            for n in nodes.values():
                counts[n["status"]] = counts.get(n["status"], 0) + 1
                pending += sum(1 for d in n.get("downgrades", ()) if d.get("status") == "pending")
            s.counts = counts
            s.pending_downgrades = pending
            s.sessions = led.last_session
            s.failed = len(led.failed_sessions())
            s.endpoint = meta.endpoint.summary() if meta.endpoint is not None else ""
            s.scripted = bool(meta.options.get("scripted"))
    except CuriosityError as err:
        s.error = str(err).splitlines()[0] if str(err) else type(err).__name__
    except (OSError, ValueError) as err:
        s.error = f"{type(err).__name__}: {err}".splitlines()[0]
    return s


def contract_label(contract: str) -> str:
    """A preset's name, or a combination's short form (``verified-binding``)."""
    from curiosity_tui.contract_switches import contract_slug

    try:
        return contract_slug(contract) if contract else contract
    except InputError:
        return contract


def audit_findings(path: Path) -> int | None:
    """Number of closure-audit findings (S10), or None if the audit cannot run on this ledger."""
    try:
        from curiosity_tui.contract.audit import audit_path
    except ImportError:  # pragma: no cover - the audit module is part of the package
        return None
    try:
        return len(audit_path(path).findings)
    except (CuriosityError, OSError, ValueError, KeyError):
        return None


def summarize_pack(path: Path) -> PackSummary:
    """Read a pack's manifest (not its items, never its key) and list who has rated."""
    path = Path(path)
    p = PackSummary(name=path.name, path=path)
    with contextlib.suppress(OSError):
        p.modified = (path / MANIFEST_FILE).stat().st_mtime
    try:
        manifest = json.loads((path / MANIFEST_FILE).read_text(encoding="utf-8"))
        p.pack_id = str(manifest.get("pack_id", ""))
        scheme = manifest.get("scheme") or {}
        p.scheme = str(scheme.get("id") or scheme.get("name") or "")
        p.items = len(manifest.get("items") or [])
        p.expected_raters = [str(r) for r in manifest.get("expected_raters") or []]
        p.scripted = manifest.get("scripted") is True
    except (OSError, ValueError, AttributeError) as err:
        p.error = f"manifest unreadable: {err}".splitlines()[0]
    ratings = path / "ratings"
    if ratings.is_dir():
        p.raters = sorted(f.stem for f in ratings.glob("*.jsonl"))
    return p


def scan(root: str | Path) -> Workspace:
    """Summaries of every ledger and pack in the workspace (audit counts left as None)."""
    r = Path(root)
    return Workspace(
        root=r,
        ledgers=[summarize_ledger(p) for p in ledger_dirs(r)],
        packs=[summarize_pack(p) for p in pack_dirs(r)],
    )


def workspace_json(ws: Workspace) -> str:
    """The workspace as JSON, for :func:`workspace_from_json` in another process."""
    return json.dumps(
        {
            "root": str(ws.root),
            "ledgers": [{**vars(s), "path": str(s.path)} for s in ws.ledgers],
            "packs": [{**vars(p), "path": str(p.path)} for p in ws.packs],
        }
    )  # ASCII: a lone surrogate (an undecodable file name) travels as its escape


def _checked(cls: type, row: Any) -> Any:
    """``cls(**row)`` when ``row`` has exactly ``cls``'s fields, each of its declared type."""
    types = _FIELD_TYPES[cls]
    if type(row) is not dict or row.keys() != types.keys():
        raise ValueError(f"a {cls.__name__} row has other fields")
    for name, ok in types.items():
        if not ok(row[name]):
            raise ValueError(f"{cls.__name__}.{name}: {row[name]!r} is not of its type")
    return cls(**{**row, "path": Path(row["path"])})


def _is(t: type) -> Any:
    return lambda v: type(v) is t


def _opt(t: type) -> Any:
    return lambda v: v is None or type(v) is t


def _number(v: Any) -> bool:
    return type(v) in (int, float)


def _counts(v: Any) -> bool:
    return type(v) is dict and all(type(k) is str and type(n) is int for k, n in v.items())


def _names(v: Any) -> bool:
    return type(v) is list and all(type(x) is str for x in v)


_FIELD_TYPES: dict[type, dict[str, Any]] = {
    LedgerSummary: {
        **dict.fromkeys(
            ("name", "path", "config", "contract", "contract_label", "curator", "seed"), _is(str)
        ),
        **dict.fromkeys(("sessions", "failed", "nodes", "pending_downgrades"), _is(int)),
        "counts": _counts,
        "running": _is(bool),
        "holder": _is(str),
        "findings": _opt(int),
        "error": _opt(str),
        "modified": _number,
        "endpoint": _is(str),
        "scripted": _is(bool),
    },
    PackSummary: {
        **dict.fromkeys(("name", "path", "pack_id", "scheme"), _is(str)),
        "items": _is(int),
        "raters": _names,
        "expected_raters": _names,
        "error": _opt(str),
        "modified": _number,
        "scripted": _is(bool),
    },
}


def workspace_from_json(text: bytes | str) -> Workspace:
    """The workspace :func:`workspace_json` wrote; ValueError for anything else."""
    data = json.loads(text)
    if type(data) is not dict or data.keys() != {"root", "ledgers", "packs"}:
        raise ValueError("not a workspace scan")
    if type(data["root"]) is not str or not all(
        type(data[k]) is list for k in ("ledgers", "packs")
    ):
        raise ValueError("not a workspace scan")
    return Workspace(
        root=Path(data["root"]),
        ledgers=[_checked(LedgerSummary, r) for r in data["ledgers"]],
        packs=[_checked(PackSummary, r) for r in data["packs"]],
    )


def sort_ledgers(
    items: list[LedgerSummary], key: SortKey, *, reverse: bool = False
) -> list[LedgerSummary]:
    """Stable sort; numeric keys sort largest first unless ``reverse``."""
    if key == "name":
        return sorted(items, key=lambda s: s.name.casefold(), reverse=reverse)
    fn: Callable[[LedgerSummary], float]
    if key == "sessions":
        fn = lambda s: s.sessions  # noqa: E731
    elif key == "open":
        fn = lambda s: s.open  # noqa: E731
    elif key == "findings":
        fn = lambda s: -1 if s.findings is None else s.findings  # noqa: E731
    else:
        fn = lambda s: s.modified  # noqa: E731
    return sorted(items, key=lambda s: (-fn(s), s.name.casefold()), reverse=reverse)
