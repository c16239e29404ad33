"""Build a blind pack from runs (ledgers): three uniform unnamed sections per item.

Per run (S8): section 1 is the first shown session's delivered text; section 2 is the
input of the later shown session re-rendered from the store snapshot before it — each open
node's question and its last five facts in the S2 queue order, with every field name, id,
status, pulse, queue position, return condition and preserved count left out; section 3 is
the later session's delivered text, with field labels stripped. The two sessions are the
pack's session pick (:mod:`curiosity_tui.packs.session_pick`): the first and the last by
default, so a 3-session run shows sessions 1 and 3 and a 5-session run 1 and 5. The no-store arms (A, B) get an empty section
2, so every item has the same layout. Items are shuffled under opaque ids; the key (item →
run, configuration) goes to a separate file whose sha256 is recorded in the manifest.

Blind by construction (:mod:`curiosity_tui.packs.uniform`): sections 1 and 3 of every arm
are laid out the same way (questions, facts, notes; the protocol arm's answer and status
prose become notes), and node ids anywhere in an item are rewritten to the item's own
random labels, which section 2 shows beside each question.

Under ``pilot-02`` the builder adds control items (plain repetition, repetition with added
unsupported detail, a genuine resolution), flagged only in the key. They are built from
runs kept out of the pack when given (``control_materials``); otherwise from pack items,
with their sections rebuilt so that no control section repeats any item's section
(:mod:`curiosity_tui.packs.controls`).
"""

from __future__ import annotations

import json
import random
import re
import secrets
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from curiosity_tui.atomic import atomic_write_bytes
from curiosity_tui.clock import utc_now_milli
from curiosity_tui.errors import InputError
from curiosity_tui.packs.controls import Staged, add_controls
from curiosity_tui.packs.pack import (
    ITEMS_FILE,
    MANIFEST_FILE,
    ItemRef,
    KeyEntry,
    PackError,
    PackItem,
    PackKey,
    PackManifest,
    default_key_path,
    items_bytes,
    sha256_bytes,
)
from curiosity_tui.packs.rating import validate_rater_name
from curiosity_tui.packs.schemes import Scheme, scheme_sha256
from curiosity_tui.packs.session_pick import DEFAULT_PICK, SessionPick
from curiosity_tui.packs.uniform import relabel, uniform_text
from curiosity_tui.provenance import current as current_provenance

if TYPE_CHECKING:
    from curiosity_tui.ledger.node_record import NodeRecord

__all__ = [
    "CONFIGS",
    "NO_STORE_CONFIGS",
    "BuildResult",
    "RunMaterial",
    "build_pack",
    "collect_ledgers",
    "material_from_ledger",
    "neutral_input",
    "strip_labels",
]

CONFIGS = ("A", "B", "B-armed+cur", "B-armed-cur", "C+cur", "C-cur")
NO_STORE_CONFIGS = frozenset({"A", "B"})
RENDER_FACTS = 5

# Field and section labels a rendering or a structured deliverable may carry. A line that
# starts with one of these followed by ':' loses the label; a line that is only the label
# is dropped. Matching is case-insensitive and tolerates bullets, '#', '*' and '[n]'.
FIELD_LABELS = (
    "question ledger",
    "question",
    "questions",
    "status",
    "node status",
    "pulse",
    "parent",
    "id",
    "node",
    "facts",
    "fact",
    "return condition",
    "required facts",
    "required fact",
    "required actions",
    "required action",
    "closure test",
    "preserved candidates",
    "preserved",
    "living questions",
    "living question",
    "open layer",
    "new questions",
    "new question",
    "focus",
    "forced focus",
    "queue",
    "queue position",
    "decision",
    "answer",
    "actions",
    "actions on existing nodes",
    "dependency checks",
    "dependency check",
    "checks",
    "evidence",
    "tension",
    "delta",
    "curator priority",
)
_LABEL_RE = re.compile(
    r"^(?P<lead>\s*(?:[-•#>]+\s*|\*\s+|\[\d+\]\s*|\d+[.)]\s*)*)(?:\*\*|__)?"
    r"(?P<label>"
    + "|".join(re.escape(x) for x in sorted(FIELD_LABELS, key=len, reverse=True))
    + r")"
    r"(?:\s*\([^)]*\))?(?:\*\*|__)?\s*:(?:\*\*|__)?\s*",
    re.IGNORECASE,
)
_MARK_RE = re.compile(
    r"\s*\[(?:checked s\d+: (?:satisfied|not satisfied)|unchecked|waived)\]", re.IGNORECASE
)
_TAG_RE = re.compile(r"</?\s*(?:PRESERVE|ANSWER|OPEN[_ ]LAYER)\s*/?>", re.IGNORECASE)
_ID_PIPE_RE = re.compile(r"^\s*(?:\[\d+\]\s*)?q\d+\s*\|.*$")
_HEADER_RE = re.compile(r"^\s*QUESTION LEDGER\b", re.IGNORECASE)
# The protocol deliverable's return-condition lines: "? required fact", "= closure test".
_RC_LINE_RE = re.compile(r"^\s*[?=]\s")
_REQ_ID_RE = re.compile(r"^(?P<lead>\s*[-*•]\s*)r\d+\s*:\s*")
_SESSION_TAG_RE = re.compile(r"^(?P<lead>\s*[-*•]\s*)\(s\d+\)\s*")


def strip_labels(text: str) -> str:
    """Remove field names, return conditions and their marks, queue labels and protocol tags.

    Lines of the protocol deliverable that carry a return condition (``? required fact``,
    ``= closure test``) are dropped whole: they exist only in the protocol arm."""
    out: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if _ID_PIPE_RE.match(line) or _HEADER_RE.match(line) or _RC_LINE_RE.match(line):
            continue  # rendering headers: "[1] q3 | status: open | pulse: 2 | ..."
        line = _TAG_RE.sub("", line)
        line = _MARK_RE.sub("", line)
        m = _LABEL_RE.match(line)
        if m:
            rest = line[m.end() :]
            if not rest.strip() or re.fullmatch(r"[\s\d.,()/-]*", rest):
                continue  # a bare label, or a count ("preserved candidates: 2")
            line = m.group("lead") + rest
        line = _REQ_ID_RE.sub(lambda mm: mm.group("lead"), line)
        line = _SESSION_TAG_RE.sub(lambda mm: mm.group("lead"), line)
        out.append(line.rstrip())
    # collapse runs of blank lines left behind
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n")


def neutral_input(nodes: Mapping[str, NodeRecord], session: int) -> str:
    """The store as session ``session`` received it, without any label.

    Open nodes in the S2 queue order (``curiosity_tui.ledger.queue.queue``); for each, its
    question (``- ``, as questions are marked in delivered text) and up to the last five
    facts (indented ``* ``, as facts are marked), after the node's id in parentheses, which
    the builder rewrites to the item's opaque label. Nothing else: no status, pulse, parent,
    queue position, return condition, check mark or preserved count."""
    from curiosity_tui.ledger.queue import queue

    blocks: list[str] = []
    for node in queue(list(nodes.values()), session):
        label = f"({node['id']}) " if node.get("id") else ""  # relabelled per item at build
        lines = [f"- {label}{_one_block(str(node['text']))}"]
        for fact in list(node.get("facts") or [])[-RENDER_FACTS:]:
            lines.append(f"    * {_one_block(str(fact['text']), '      ')}")
        blocks.append("\n".join(lines))
    return strip_labels("\n\n".join(blocks))


def _one_block(text: str, indent: str = "  ") -> str:
    return text.strip().replace("\r\n", "\n").replace("\n", "\n" + indent)


@dataclass
class RunMaterial:
    """What one run contributes to a pack (read from a ledger, or built in tests)."""

    run: str
    ledger: str
    config: str
    first_output: str
    later_input: str  # already neutral; "" for the no-store arms
    later_output: str
    sources: list[tuple[str, str]] = field(default_factory=list)  # (title, text)
    scripted: bool = False  # the run's metadata says its replies came from the scripted server
    sessions: tuple[int, int] = (1, 5)  # the two sessions the item shows
    #: ``C+cur(human)`` for a human-curated run (decision 560): unblinding keeps it apart
    group: str | None = None


class _LedgerLike(Protocol):  # pragma: no cover - typing aid
    path: Path


def material_from_ledger(path: str | Path, *, sessions: SessionPick = DEFAULT_PICK) -> RunMaterial:
    """Read one ledger (read-only) and take the two sessions ``sessions`` names (by default
    the first and the planned last, decision 440)."""
    from curiosity_tui.ledger import Ledger

    p = Path(path)
    led = Ledger.open(p)
    try:
        meta = led.meta
        if meta.config not in CONFIGS:
            raise PackError(f"{p}: unknown configuration {meta.config!r}")
        first, later = _resolve_pick(p, sessions, meta.options, led.last_session)
        recs = {}
        for n in (first, later):
            rec = led.session_record(n)
            if rec is None or rec.status != "committed":
                raise PackError(
                    f"{p}: session {n} is missing or did not commit; cannot build its item "
                    f"(sessions {sessions.spec()})"
                )
            recs[n] = rec
        if meta.config in NO_STORE_CONFIGS:
            later_input = ""
        else:
            later_input = neutral_input(led.snapshot(later - 1), later)
        sources: list[tuple[str, str]] = []
        for src in led.sources():
            try:
                sources.append((src.title, led.source_text(src.id)))
            except (OSError, InputError):
                continue
        return RunMaterial(
            run=meta.name or p.name,
            ledger=str(p.resolve()),
            config=meta.config,
            first_output=strip_labels(recs[first].output_text),
            later_input=later_input,
            later_output=strip_labels(recs[later].output_text),
            sources=sources,
            scripted=bool(meta.options.get("scripted")),
            sessions=(first, later),
            group=human_group(meta.config) if meta.curator == "human" else None,
        )
    finally:
        led.close()


def human_group(config: str) -> str:
    """A human-curated run's name in a pack's key and unblinded tables (decision 560)."""
    return f"{config}(human)"


def _resolve_pick(
    path: Path, pick: SessionPick, options: Mapping[str, Any], last_recorded: int
) -> tuple[int, int]:
    """The pick's session numbers for this run: ``last`` is the planned last session (a
    pilot records ``planned_sessions``), else the last recorded one."""
    planned = options.get("planned_sessions")
    length = planned if isinstance(planned, int) and planned > 0 else last_recorded
    try:
        return pick.resolve(length)
    except ValueError as err:
        raise PackError(f"{path}: {err}; cannot build its item") from None


def collect_ledgers(paths: Sequence[str | Path]) -> list[Path]:
    """Expand RUN_DIR arguments (directories of ledgers) and ledger paths, in order."""
    from curiosity_tui.ledger import iter_ledgers

    out: list[Path] = []
    for p in paths:
        found = list(iter_ledgers(p))
        if not found:
            raise PackError(f"{p}: neither a ledger nor a directory containing ledgers")
        out.extend(found)
    seen: set[Path] = set()
    uniq = []
    for p in out:
        rp = p.resolve()
        if rp in seen:
            raise PackError(f"{p}: the same ledger is named twice")
        seen.add(rp)
        uniq.append(p)
    return uniq


# --------------------------------------------------------------------------- build


@dataclass
class BuildResult:
    packdir: Path
    key_path: Path
    manifest: PackManifest
    n_runs: int
    n_controls: int
    configs: dict[str, int]
    notes: list[str]


def _new_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        cand = f"i{rng.getrandbits(32):08x}"
        if cand not in taken:
            taken.add(cand)
            return cand


def build_pack(
    materials: Sequence[RunMaterial],
    scheme: Scheme,
    out: str | Path,
    *,
    seed: int | None = None,
    key_out: str | Path | None = None,
    expected_raters: Sequence[str] = (),
    min_raters: int = 2,
    controls_per_kind: int = 1,
    control_materials: Sequence[RunMaterial] = (),
    sessions_spec: str | None = None,
    order: str = "fixed",
) -> BuildResult:
    """Write a pack to ``out`` (must not exist or be empty) and its key beside it.
    ``control_materials``: runs kept out of the pack, used only as the controls' bases;
    ``sessions_spec``: the session pick the materials were read with (for the manifest)."""
    packdir = Path(out)
    key_path = _check_destination(packdir, materials, expected_raters, key_out)
    if seed is None:
        seed = secrets.randbits(31)
    rng = random.Random(seed)
    taken: set[str] = set()
    notes: list[str] = []
    staged = _stage_runs(materials, rng, taken)
    held_out = _stage_runs(control_materials, rng, set())
    n_controls = add_controls(
        staged,
        [m.sources for m in materials],
        scheme,
        rng,
        lambda: _new_id(rng, taken),
        controls_per_kind,
        notes,
        held_out=list(zip(held_out, [m.sources for m in control_materials], strict=True)),
    )
    rng.shuffle(staged)
    key_bytes, ib, manifest = _seal(staged, scheme, seed, key_path, expected_raters, min_raters)
    manifest.scripted = any(m.scripted for m in materials)
    manifest.sessions = sessions_spec
    manifest.order = "per-rater" if order == "per-rater" else "fixed"
    _write_or_undo(packdir, key_path, key_bytes, ib, manifest, n_controls)
    configs: dict[str, int] = {}
    for m in materials:  # a human-curated run counts under its own name (decision 560)
        configs[m.group or m.config] = configs.get(m.group or m.config, 0) + 1
    return BuildResult(
        packdir=packdir,
        key_path=key_path,
        manifest=manifest,
        n_runs=len(materials),
        n_controls=n_controls,
        configs=configs,
        notes=notes,
    )


def _check_destination(
    packdir: Path,
    materials: Sequence[object],  # runs, or a support-audit pack's pairs
    expected_raters: Sequence[str],
    key_out: str | Path | None,
) -> Path:
    """Refuse a non-empty pack directory, no runs, bad rater names and a key inside the pack
    or over an existing one; return the key's path."""
    if packdir.exists() and any(packdir.iterdir()):
        raise PackError(f"{packdir} exists and is not empty; choose a new pack directory")
    if not materials:
        raise PackError("no runs given; a pack needs at least one run")
    for r in expected_raters:
        validate_rater_name(r)
    key_path = Path(key_out) if key_out else default_key_path(packdir)
    if key_path.resolve().is_relative_to(packdir.resolve()):
        raise PackError(
            f"the key {key_path} would be inside the pack; raters open the pack, so the key "
            "must live outside it"
        )
    if key_path.exists():
        raise PackError(f"{key_path} already exists; refusing to overwrite a key")
    for where, what in ((packdir, "the pack"), (key_path, "its key")):
        host = _enclosing_pack(where)
        if host is not None:
            raise PackError(
                f"{what} {where} would be inside the pack {host}, whose raters open that "
                "folder; choose a place outside it"
            )
    return key_path


def _enclosing_pack(path: Path) -> Path | None:
    """The nearest folder above ``path`` that holds a pack (its manifest and items)."""
    for parent in path.resolve().parents:
        if (parent / MANIFEST_FILE).is_file() and (parent / ITEMS_FILE).is_file():
            return parent
    return None


def _write_or_undo(
    packdir: Path,
    key_path: Path,
    key_bytes: bytes,
    ib: bytes,
    manifest: PackManifest,
    n_controls: int,
) -> None:
    """Write the pack; if any write fails (a full disk), remove what this build wrote, so
    the same command can run again (a half-written folder refused the retry)."""
    existed = packdir.exists()
    try:
        _write_pack(packdir, key_path, key_bytes, ib, manifest, n_controls)
    except BaseException:
        key_path.unlink(missing_ok=True)
        if existed:  # it was empty (checked): empty it again
            for child in packdir.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        else:
            shutil.rmtree(packdir, ignore_errors=True)
        raise


def _stage_runs(
    materials: Sequence[RunMaterial], rng: random.Random, taken: set[str]
) -> list[Staged]:
    """One item per run, its three sections (section 2 empty for the no-store arms)."""
    staged: list[Staged] = []
    for mat in materials:
        if mat.config not in CONFIGS:
            raise PackError(f"{mat.ledger}: unknown configuration {mat.config!r}")
        sections = relabel(
            [
                uniform_text(mat.first_output),
                "" if mat.config in NO_STORE_CONFIGS else mat.later_input,
                uniform_text(mat.later_output),
            ],
            rng,
        )
        iid = _new_id(rng, taken)
        staged.append(
            (
                PackItem(id=iid, sections=sections),
                KeyEntry(
                    item=iid,
                    run=mat.run,
                    ledger=mat.ledger,
                    config=mat.config,
                    sessions=list(mat.sessions),
                    group=mat.group,
                ),
            )
        )
    return staged


def _seal(
    staged: list[Staged],
    scheme: Scheme,
    seed: int,
    key_path: Path,
    expected_raters: Sequence[str],
    min_raters: int,
) -> tuple[bytes, bytes, PackManifest]:
    """The key's bytes, the items' bytes and the manifest that records both hashes."""
    items = [it for it, _ in staged]
    pack_id = f"p{secrets.token_hex(6)}"
    key = PackKey(
        pack_id=pack_id,
        scheme_id=scheme.id,
        seed=seed,
        items={ent.item: ent for _, ent in staged},
    )
    key_bytes = (json.dumps(key.model_dump(mode="json"), indent=2, sort_keys=True) + "\n").encode()
    ib = items_bytes(items)
    manifest = PackManifest(
        pack_id=pack_id,
        created_at=utc_now_milli(),
        scheme=scheme,
        scheme_sha256=scheme_sha256(scheme),
        items=[ItemRef(id=it.id, cluster=it.id) for it in items],
        items_sha256=sha256_bytes(ib),
        key_sha256=sha256_bytes(key_bytes),
        key_name=key_path.name,
        expected_raters=list(expected_raters),
        min_raters=min_raters,
        provenance=current_provenance(),
    )
    return key_bytes, ib, manifest


def _write_pack(
    packdir: Path,
    key_path: Path,
    key_bytes: bytes,
    ib: bytes,
    manifest: PackManifest,
    n_controls: int,
) -> None:
    """Key first (key holder only), then items and manifest, then the log's first entry."""
    packdir.mkdir(parents=True, exist_ok=True)
    (packdir / "ratings").mkdir(exist_ok=True)
    atomic_write_bytes(key_path, key_bytes, mode=0o600)  # key holder only
    atomic_write_bytes(packdir / ITEMS_FILE, ib)
    atomic_write_bytes(
        packdir / MANIFEST_FILE,
        (
            json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
        ).encode(),
    )
    from curiosity_tui.packs.unblind import PackLog

    PackLog(packdir).append(
        "pack_built",
        "system",
        {
            "items": len(manifest.items),
            "controls": n_controls,
            "scheme": manifest.scheme.id,
            "scheme_sha256": manifest.scheme_sha256,
            "items_sha256": manifest.items_sha256,
            "key_sha256": manifest.key_sha256,
        },
    )
