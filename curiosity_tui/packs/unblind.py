"""Completeness, the pack's append-only log, and unblinding.

The log (``PACKDIR/log.jsonl``) is hash-chained like the ledger journal: each entry has
``seq``, ``ts``, ``kind``, ``actor``, ``data``, ``prev`` and ``hash`` (sha256 over the
previous hash and the entry's canonical JSON). ``unblind`` writes its ``key_opened`` entry
— with the sha256 and record count of every ratings file at that moment, whether the
expected ratings were complete, and whether it was forced — *before* it reads the key,
so "ratings complete → key opened" can be checked later against the ratings files.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from curiosity_tui.atomic import append_line_durable
from curiosity_tui.clock import utc_now_milli
from curiosity_tui.errors import InputError
from curiosity_tui.packs.adjudication import (
    AdjudicationRecord,
    adjudication_path,
    current_adjudications,
    read_adjudications,
)
from curiosity_tui.packs.pack import (
    LOG_FILE,
    Pack,
    PackError,
    PackKey,
    default_key_path,
    sha256_bytes,
)
from curiosity_tui.packs.rater_gate import added_raters, refuse_unexpected_raters
from curiosity_tui.packs.rater_groups import groups_of
from curiosity_tui.packs.rating import (
    RatingError,
    rated_items,
    rater_group,
    ratings_path,
    read_rater_file,
    refuse_copied_records,
    validate_rater_name,
)
from curiosity_tui.packs.schemes import Question
from curiosity_tui.packs.unblind_seal import (
    Seal,
    changes_since,
    check_log,
    file_stamp,
    read_seals,
    write_seal,
)
from curiosity_tui.textfiles import utf8_lines

__all__ = [
    "Completeness",
    "LogEntry",
    "PackLog",
    "UnblindRefused",
    "UnblindReport",
    "completeness",
    "keyed_tables",
    "read_key",
    "unblind",
]

GENESIS = "0" * 64


class UnblindRefused(InputError):
    exit_code = 4


class LogEntry(BaseModel):
    seq: int
    ts: str
    kind: str
    actor: str
    data: dict[str, Any]
    prev: str
    hash: str


def _entry_hash(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((body["prev"] + canonical).encode("utf-8")).hexdigest()


class PackLog:
    """Append-only, hash-chained log of what happened to a pack."""

    def __init__(self, packdir: Path) -> None:
        self.path = Path(packdir) / LOG_FILE

    def entries(self) -> list[LogEntry]:
        if not self.path.exists():
            return []
        out: list[LogEntry] = []
        prev = GENESIS
        for lineno, line in utf8_lines(self.path, PackError):
            if not line.strip():
                continue
            try:
                ent = LogEntry.model_validate_json(line)
            except ValidationError as err:
                raise PackError(f"{self.path}:{lineno}: damaged log entry") from err
            body = ent.model_dump()
            digest = body.pop("hash")
            if ent.prev != prev or _entry_hash(body) != digest or ent.seq != len(out) + 1:
                raise PackError(
                    f"{self.path}:{lineno}: log chain broken at seq {ent.seq} "
                    "(an entry was changed, removed or reordered)"
                )
            out.append(ent)
            prev = digest
        return out

    def append(
        self, kind: str, actor: str, data: dict[str, Any], *, ts: str | None = None
    ) -> LogEntry:
        existing = self.entries()
        body = {
            "seq": len(existing) + 1,
            "ts": ts or utc_now_milli(),
            "kind": kind,
            "actor": actor,
            "data": data,
            "prev": existing[-1].hash if existing else GENESIS,
        }
        body["hash"] = _entry_hash(body)
        line = json.dumps(body, sort_keys=True, ensure_ascii=False) + "\n"
        append_line_durable(self.path, line.encode("utf-8"))
        return LogEntry.model_validate(body)


# --------------------------------------------------------------------------- completeness


class Completeness(BaseModel):
    raters: list[str]
    expected_raters: list[str]
    min_raters: int
    n_items: int
    rated: dict[str, int] = Field(description="rater → items with at least one rating")
    missing: dict[str, list[str]] = Field(description="rater → items not yet rated")
    complete: bool
    reason: str
    files: dict[str, dict[str, Any]] = Field(
        description="rater → {sha256, records} of the ratings file when checked"
    )


def all_ratings(pack: Pack) -> dict[str, list[Any]]:
    """Every rater's records (coordinator's view; the rating app never calls this). A file
    whose records name another rater, repeat a record, or copy another rater's records is
    refused with the file and line (rating.py)."""
    out: dict[str, list[Any]] = {}
    rdir = pack.ratings_dir
    if not rdir.is_dir():
        return out
    files: dict[str, tuple[Path, list[Any]]] = {}
    for f in sorted(rdir.glob("*.jsonl")):
        name = f.stem
        try:
            validate_rater_name(name)
        except InputError:
            continue
        out[name] = read_rater_file(f, name, pack.manifest.pack_id)
        files[name] = (f, out[name])
    refuse_unexpected_raters(pack, files, _log_entries_if_needed(pack, files))
    refuse_copied_records(files)
    return out


def _log_entries_if_needed(pack: Pack, files: dict[str, Any]) -> list[LogEntry]:
    """The pack log, read only when a file's rater is not an expected one."""
    expected = set(pack.manifest.expected_raters)
    if not expected or all(r in expected for r in files):
        return []
    return PackLog(pack.path).entries()


def completeness(pack: Pack) -> Completeness:
    records = all_ratings(pack)
    order = pack.order
    expected = list(pack.manifest.expected_raters)
    if expected:  # a rater added on the record (pack add-rater) is expected too
        expected += sorted(added_raters(PackLog(pack.path).entries()) - set(expected))
    raters = sorted(set(records) | set(expected))
    rated: dict[str, int] = {}
    missing: dict[str, list[str]] = {}
    files: dict[str, dict[str, Any]] = {}
    for r in raters:
        have = set(rated_items(records.get(r, [])))  # a missing rating is not a rating
        rated[r] = sum(1 for i in order if i in have)
        missing[r] = [i for i in order if i not in have]
        path = pack.ratings_dir / f"{r}.jsonl"
        files[r] = {
            "sha256": sha256_bytes(path.read_bytes()) if path.exists() else None,
            "records": len(records.get(r, [])),
        }
    pool = expected or raters
    full = [r for r in pool if not missing.get(r)]
    if expected:
        incomplete = [r for r in expected if missing.get(r)]
        ok = not incomplete
        reason = (
            "every expected rater has rated every item"
            if ok
            else "expected raters still missing items: "
            + ", ".join(f"{r} ({len(missing[r])} of {len(order)})" for r in incomplete)
        )
    else:
        ok = len(full) >= pack.manifest.min_raters and all(not missing[r] for r in raters)
        if ok:
            reason = f"{len(full)} raters have rated every item"
        elif len(raters) < pack.manifest.min_raters:
            reason = (
                f"{len(raters)} rater(s) so far; the pack expects at least "
                f"{pack.manifest.min_raters} raters to rate every item"
            )
        else:
            reason = "raters still missing items: " + ", ".join(
                f"{r} ({len(missing[r])} of {len(order)})" for r in raters if missing[r]
            )
    return Completeness(
        raters=raters,
        expected_raters=expected,
        min_raters=pack.manifest.min_raters,
        n_items=len(order),
        rated=rated,
        missing=missing,
        complete=ok,
        reason=reason,
        files=files,
    )


# --------------------------------------------------------------------------- key


def read_key(pack: Pack, key_path: Path | None = None) -> PackKey:
    """Open the key (key holder only) and check it is the one the pack was built with."""
    if key_path:
        path = Path(key_path)
    else:
        path = default_key_path(pack.path)
        named = pack.path.resolve().parent / pack.manifest.key_name
        if not path.exists() and named.exists():
            path = named  # built with --key-out NAME beside the pack
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise PackError(f"cannot read the key {path}: {err.strerror or err}") from err
    digest = sha256_bytes(raw)
    if digest != pack.manifest.key_sha256:
        raise PackError(
            f"{path}: sha256 {digest[:12]}… does not match the key recorded in the pack "
            f"({pack.manifest.key_sha256[:12]}…)"
        )
    try:
        key = PackKey.model_validate_json(raw)
    except ValidationError as err:
        raise PackError(f"{path}: invalid key file") from err
    if key.pack_id != pack.manifest.pack_id:
        raise PackError(f"{path}: key is for pack {key.pack_id}, not {pack.manifest.pack_id}")
    return key


# --------------------------------------------------------------------------- unblinding


class ConfigTable(BaseModel):
    group: str = Field(default="human", description="whose ratings: human or model raters")
    question: str
    categories: list[str]
    by_rating: dict[str, dict[str, int]] = Field(
        description="configuration → category → number of ratings (per item, every rating counts)"
    )
    by_run: dict[str, dict[str, int]] = Field(
        description="configuration → category (or 'split') → runs; a run's raters agreeing "
        "give it that category, disagreeing raters make it 'split'"
    )
    runs: dict[str, int]


class ControlResult(BaseModel):
    item: str
    kind: str
    base_item: str | None
    expected: dict[str, str]
    ratings: dict[str, dict[str, str]] = Field(description="rater → question → category")


class ItemRow(BaseModel):
    item: str
    kind: str
    run: str
    config: str
    control: str | None
    categories: dict[str, dict[str, str]] = Field(description="rater → question → category")


class AdjudicatedRow(BaseModel):
    """One adjudication in force, beside the raw categories it settled (never mixed in)."""

    item: str
    question: str
    kind: str
    run: str
    config: str
    raw: dict[str, str] = Field(description="rater → raw category (latest revision)")
    adjudicated: str
    grounds: str
    adjudicator: str
    ts: str
    seq: int
    replaces: int | None


class UnblindReport(BaseModel):
    pack_id: str
    forced: bool
    by: str
    ts: str
    completeness: Completeness
    tables: list[ConfigTable]
    items: list[ItemRow]
    controls: list[ControlResult]
    log_seq: int
    changes_since_opened: list[str] = Field(
        default_factory=list,
        description="ratings and adjudication files changed since the key was last opened",
    )
    rater_groups: dict[str, str] = Field(
        default_factory=dict, description="rater → human or model; tables are per group"
    )
    #: "scripted" when the pack was built from scripted runs (practice, decision 442)
    replies: str = "model"
    adjudicated: list[AdjudicatedRow] = Field(
        default_factory=list,
        description="the coordinator's adjudications (adjudication.jsonl), labelled as such; "
        "every table above counts raw ratings only",
    )
    adjudicated_tables: list[ConfigTable] = Field(
        default_factory=list,
        description="the adjudicated set, runs per configuration: split runs take the "
        "adjudicated category where there is one (by_rating is left empty)",
    )


def _open_key(
    pack: Pack, log: PackLog, comp: Completeness, seals: list[Seal], *, by: str, force: bool
) -> tuple[LogEntry, list[str]]:
    """Log ``key_opened`` (what the ratings were, what changed since the last opening) and
    seal it outside the log (decision 403); the entry and the changes."""
    ts = utc_now_milli()
    adjudication = file_stamp(adjudication_path(pack.path))
    changes = changes_since(seals, comp.files, adjudication)
    entry = log.append(
        "key_opened",
        by,
        {
            "forced": bool(force and not comp.complete),
            "complete": comp.complete,
            "reason": comp.reason,
            "files": comp.files,
            "rated": comp.rated,
            "missing": {r: m for r, m in comp.missing.items() if m},
            "key_sha256": pack.manifest.key_sha256,
            "adjudication": adjudication,
            "changes_since_opened": changes,
        },
        ts=ts,
    )
    seal = Seal(
        log_seq=entry.seq,
        log_hash=entry.hash,
        ts=ts,
        by=by,
        files=comp.files,
        adjudication=adjudication,
    )
    write_seal(pack, seal)
    return entry, changes


def unblind(
    packdir: str | Path, *, by: str, force: bool = False, key_path: Path | None = None
) -> UnblindReport:
    pack = Pack.open(packdir)
    log = PackLog(pack.path)
    seals = read_seals(pack)
    check_log(pack, log.entries(), seals)  # a log cut after unblinding is refused (403)
    comp = completeness(pack)
    # a damaged adjudication file is refused before anything is logged or the key is read
    in_force = current_adjudications(read_adjudications(pack))
    if not comp.complete and not force:
        log.append(
            "unblind_refused",
            by,
            {"reason": comp.reason, "files": comp.files, "rated": comp.rated},
        )
        raise UnblindRefused(
            f"ratings are incomplete ({comp.reason}); the key stays closed. "
            "Use --force to open it anyway (this is recorded in the pack log)."
        )
    entry, changes = _open_key(pack, log, comp, seals, by=by, force=force)
    ts = entry.ts
    try:
        key = read_key(pack, key_path)
    except PackError as err:
        log.append("key_rejected", by, {"error": str(err)})
        raise
    kt = keyed_tables(pack, key, in_force)
    return UnblindReport(
        pack_id=pack.manifest.pack_id,
        forced=bool(force and not comp.complete),
        by=by,
        ts=ts,
        completeness=comp,
        tables=kt.tables,
        items=kt.items,
        controls=kt.controls,
        log_seq=entry.seq,
        changes_since_opened=changes,
        rater_groups=kt.rater_groups,
        adjudicated=kt.adjudicated,
        adjudicated_tables=kt.adjudicated_tables,
        replies="scripted" if pack.manifest.scripted else "model",
    )


class KeyedTables(BaseModel):
    """What the key makes of the ratings: per-arm tables per rater group, the adjudicated
    set, every item's categories and the control items' outcomes (:func:`keyed_tables`)."""

    tables: list[ConfigTable]
    adjudicated_tables: list[ConfigTable]
    items: list[ItemRow]
    controls: list[ControlResult]
    rater_groups: dict[str, str]
    adjudicated: list[AdjudicatedRow]


def keyed_tables(
    pack: Pack,
    key: PackKey,
    in_force: dict[tuple[str, str], AdjudicationRecord] | None = None,
) -> KeyedTables:
    """The unblinded tables from the ratings and ``key``, writing nothing: ``unblind`` calls
    it after logging the opening, and ``report --pack`` once the pack's log says the key was
    opened (decision 561)."""
    if in_force is None:
        in_force = current_adjudications(read_adjudications(pack))
    latest = _latest_categories(pack)
    raters = sorted({r for by_rater in latest.values() for r in by_rater})
    groups = groups_of(raters) or {"human": []}
    tables = [
        _config_table(q, key, _only(latest, set(rs)), pack.order, group)
        for group, rs in groups.items()
        for q in pack.scheme.questions
    ]
    adjudicated_tables = [
        _config_table(q, key, latest, pack.order, "all", in_force) for q in pack.scheme.questions
    ]
    items = [
        ItemRow(
            item=i,
            kind=key.items[i].kind,
            run=key.items[i].run,
            config=key.items[i].arm(),
            control=key.items[i].control,
            categories=latest.get(i, {}),
        )
        for i in pack.order
    ]
    expected_by_kind: dict[str, dict[str, str]] = {c.kind: c.expected for c in pack.scheme.controls}
    controls = [
        ControlResult(
            item=i,
            kind=key.items[i].control or "",
            base_item=key.items[i].base_item,
            expected=expected_by_kind.get(key.items[i].control or "", {}),
            ratings=latest.get(i, {}),
        )
        for i in pack.order
        if key.items[i].kind == "control"
    ]
    return KeyedTables(
        tables=tables,
        adjudicated_tables=adjudicated_tables if in_force else [],
        items=items,
        controls=controls,
        rater_groups={r: rater_group(r) for r in raters},
        adjudicated=[_adjudicated_row(r, key, latest) for r in in_force.values()],
    )


def _adjudicated_row(
    rec: AdjudicationRecord, key: PackKey, latest: dict[str, dict[str, dict[str, str]]]
) -> AdjudicatedRow:
    ent = key.items[rec.item]
    raw = {r: a[rec.question] for r, a in latest.get(rec.item, {}).items() if rec.question in a}
    return AdjudicatedRow(
        item=rec.item,
        question=rec.question,
        kind=ent.kind,
        run=ent.run,
        config=ent.arm(),
        raw=raw,
        adjudicated=rec.category,
        grounds=rec.grounds,
        adjudicator=rec.adjudicator,
        ts=rec.ts,
        seq=rec.seq,
        replaces=rec.replaces,
    )


def _only(
    latest: dict[str, dict[str, dict[str, str]]], raters: set[str]
) -> dict[str, dict[str, dict[str, str]]]:
    """``latest`` restricted to one group's raters."""
    return {i: {r: a for r, a in by.items() if r in raters} for i, by in latest.items()}


def _latest_categories(pack: Pack) -> dict[str, dict[str, dict[str, str]]]:
    """item → rater → question → category, from each rater's latest revision."""
    latest: dict[str, dict[str, dict[str, str]]] = {}
    known = {q.id: q.category_ids for q in pack.scheme.questions}
    for rater, recs in all_ratings(pack).items():
        for item, rec in rated_items(recs).items():
            for qid, a in rec.answers.items():
                if a.category not in known.get(qid, ()):
                    _unknown_answer(pack, rater, item, qid, a.category, known)
            latest.setdefault(item, {})[rater] = {q: a.category for q, a in rec.answers.items()}
    return latest


def _unknown_answer(
    pack: Pack, rater: str, item: str, qid: str, category: str, known: dict[str, list[str]]
) -> None:
    """Refuse a rating whose question or category the pack's scheme does not have."""
    where = f"{ratings_path(pack.path, rater)}: item {item}"
    if qid not in known:
        raise RatingError(
            f"{where}: question {qid!r} is not in scheme {pack.scheme.id!r} "
            f"(its questions: {', '.join(known)})"
        )
    raise RatingError(
        f"{where}, {qid}: unknown category {category!r} (scheme {pack.scheme.id!r} has "
        f"{', '.join(known[qid])})"
    )


def _config_table(
    q: Question,
    key: PackKey,
    latest: dict[str, dict[str, dict[str, str]]],
    order: list[str],
    group: str = "human",
    adjudicated: dict[tuple[str, str], AdjudicationRecord] | None = None,
) -> ConfigTable:
    """One question's categories per configuration, counted per rating and per run. With
    ``adjudicated`` (the adjudicated set): an item whose raters split counts as its
    adjudicated category, and ``by_rating`` is left empty (it would not be ratings)."""
    real = [i for i in order if key.items[i].kind == "run"]
    configs = sorted({key.items[i].arm() for i in real})
    by_rating = {c: dict.fromkeys(q.category_ids, 0) for c in configs}
    by_run = {c: {**dict.fromkeys(q.category_ids, 0), "split": 0} for c in configs}
    runs: Counter[str] = Counter()
    # group items by run (one item per run in packs built here, but do not assume it)
    run_cats: dict[tuple[str, str], list[str]] = {}
    for i in real:
        ent = key.items[i]
        cats = [r[q.id] for r in latest.get(i, {}).values() if q.id in r]
        settled = (adjudicated or {}).get((i, q.id))
        if adjudicated is not None and settled is not None and len(set(cats)) > 1:
            cats = [settled.category]
        for c in cats:
            by_rating[ent.arm()][c] += 1
        run_cats.setdefault((ent.arm(), ent.run), []).extend(cats)
    for (config, _run), cats in run_cats.items():
        runs[config] += 1
        if not cats:
            continue
        if len(set(cats)) == 1:
            by_run[config][cats[0]] += 1
        else:
            by_run[config]["split"] += 1
    return ConfigTable(
        group=group,
        question=q.id,
        categories=q.category_ids,
        by_rating=by_rating if adjudicated is None else {},
        by_run=by_run,
        runs=dict(runs),
    )
