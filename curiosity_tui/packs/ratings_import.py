"""Bringing a rater's file back from an exported copy: ``ratings import PACK FILE``
(decisions 210, 211).

The file is read with the same reader the coordinator's commands use
(:func:`~curiosity_tui.packs.rating.read_rater_file`: every record names the rater and the
pack, no (item, revision) twice) and then checked against the pack: each new record was
rated on these items (its ``items_sha256``), names an item of the pack, answers per the
scheme with verbatim quotes, and numbers its revisions in order; no record copies another
rater's (:func:`~curiosity_tui.packs.rating.refuse_copied_records`). A rater who already
has a file in the pack is refused unless ``replace`` is given *and* the pack's file is the
start of the incoming one, so nothing stored is lost. The import is logged in the pack log.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from curiosity_tui.atomic import atomic_write_bytes
from curiosity_tui.errors import StorageError, os_reason
from curiosity_tui.packs.pack import Pack, presentation_order, sha256_bytes
from curiosity_tui.packs.rater_gate import refuse_unexpected_raters
from curiosity_tui.packs.rating import (
    RatingError,
    RatingRecord,
    rater_file_lock,
    ratings_path,
    read_rater_file,
    refuse_copied_records,
    validate_answers,
    validate_rater_name,
)
from curiosity_tui.packs.unblind import PackLog, all_ratings

__all__ = ["ImportResult", "import_ratings"]


@dataclass(frozen=True)
class ImportResult:
    rater: str
    path: Path  # the rater's file in the pack
    records: int
    new_records: int
    replaced: bool


def _check_second_file(
    dest: Path, existing: list[RatingRecord], incoming: list[RatingRecord], replace: bool
) -> None:
    """A rater has one file: refuse a second one, unless ``replace`` and it extends the
    pack's file record for record (the rater took their own ratings home and added more)."""
    if not existing:
        return
    if not replace:
        raise RatingError(
            f"{dest}: the pack already has {len(existing)} record(s) of rater "
            f"{existing[0].rater!r}; a second file for the same rater is refused "
            "(--replace takes a file that continues the pack's one)"
        )
    for n, (have, new) in enumerate(zip(existing, incoming, strict=False), start=1):
        if have != new:
            raise RatingError(
                f"{dest}: record {n} differs from the incoming file's record {n}: the "
                "incoming file does not continue the pack's one; nothing replaced"
            )
    if len(incoming) <= len(existing):
        raise RatingError(
            f"{dest}: the incoming file adds nothing to the pack's {len(existing)} record(s)"
        )


def _check_new_records(pack: Pack, src: Path, records: list[RatingRecord], start: int) -> None:
    """Records ``start`` onwards were rated on an exported copy: the same items, the pack's
    scheme, revisions numbered in order."""
    want = pack.manifest.items_sha256
    revisions: Counter[str] = Counter(r.item for r in records[:start])
    for n, rec in enumerate(records[start:], start=start + 1):
        where = f"{src}: record {n} (item {rec.item})"
        if rec.items_sha256 is None:
            raise RatingError(f"{where}: carries no items hash, so it was not rated on a copy")
        if rec.items_sha256 != want:
            raise RatingError(
                f"{where}: rated on other items (items sha256 {rec.items_sha256[:12]}…, "
                f"the pack's is {want[:12]}…)"
            )
        if rec.item not in pack.items:
            raise RatingError(f"{where}: no such item in pack {pack.manifest.pack_id}")
        if rec.revision != revisions[rec.item]:
            raise RatingError(
                f"{where}: revision {rec.revision} where {revisions[rec.item]} comes next"
            )
        revisions[rec.item] += 1
        _check_order(pack, where, rec)
        if rec.missing is not None:  # a missing rating, as documented
            _check_missing(src, n, rec)
            continue
        try:
            validate_answers(pack.scheme, pack.items[rec.item], rec.answers)
        except RatingError as err:
            raise RatingError(f"{src}: record {n}: {err}") from err


def _check_order(pack: Pack, where: str, rec: RatingRecord) -> None:
    """A record's recorded order is the one the pack gives its rater (decision 427)."""
    order, seed = presentation_order(pack.manifest, rec.rater)
    if rec.order_seed is not None and rec.order_seed != seed:
        raise RatingError(f"{where}: order seed {rec.order_seed} is not this rater's ({seed})")
    if rec.position is not None and rec.position != order.index(rec.item) + 1:
        raise RatingError(
            f"{where}: position {rec.position}, but the item is number "
            f"{order.index(rec.item) + 1} in this rater's order"
        )


def _check_missing(src: Path, n: int, rec: RatingRecord) -> None:
    """A missing rating says why there is none and answers nothing (``RatingRecord.missing``)."""
    if rec.missing is None or not rec.missing.strip():
        raise RatingError(f"{src}: record {n} (item {rec.item}): missing gives no reason")
    if rec.answers:
        raise RatingError(
            f"{src}: record {n} (item {rec.item}): a missing rating carries answers "
            "(missing means answers is empty)"
        )


def _refuse_copies(pack: Pack, rater: str, src: Path, records: list[RatingRecord]) -> None:
    others = {r: recs for r, recs in all_ratings(pack).items() if r != rater}
    files = {r: (ratings_path(pack.path, r), recs) for r, recs in others.items()}
    files[rater] = (src, records)
    refuse_copied_records(files)


def _interrupted(pack: Pack, dest: Path) -> bool:
    """Whether the pack's file is what an import began to put there (``ratings_import_begun``,
    logged before the rename, with the sha256) and no ``ratings_imported`` entry follows: an
    import killed between its rename and its log entry."""
    digest = sha256_bytes(dest.read_bytes())
    entries = PackLog(pack.path).entries()
    begun = {e.data.get("sha256") for e in entries if e.kind == "ratings_import_begun"}
    done = {e.data.get("sha256") for e in entries if e.kind == "ratings_imported"}
    return digest in begun and digest not in done


def import_ratings(
    packdir: str | Path,
    src: str | Path,
    *,
    rater: str | None = None,
    replace: bool = False,
    by: str = "human:unknown",
) -> ImportResult:
    """Store the ratings file ``src`` as its rater's file in the pack at ``packdir``.
    ``rater`` defaults to the file's name without ``.jsonl`` (as in a pack's ratings/)."""
    pack = Pack.open(packdir)
    pack.refuse_export("ratings import")
    src = Path(src)
    if not src.is_file():
        raise RatingError(f"no such ratings file: {src}")
    name = validate_rater_name(rater if rater is not None else src.name.removesuffix(".jsonl"))
    incoming = read_rater_file(src, name, pack.manifest.pack_id)
    if not incoming:
        raise RatingError(f"{src}: no rating records to import")
    dest = ratings_path(pack.path, name)
    with rater_file_lock(dest):
        existing = read_rater_file(dest, name, pack.manifest.pack_id)
        if existing == incoming:  # the same file again: nothing new, nothing written
            if existing and _interrupted(pack, dest):
                # an import killed between its rename and its log entry: log it (decision 408)
                data = {"rater": name, "records": len(incoming), "new_records": 0,
                        "sha256": sha256_bytes(dest.read_bytes()), "replaced": False,
                        "completed_interrupted": True}  # fmt: skip
                PackLog(pack.path).append("ratings_imported", by, data)
            return ImportResult(name, dest, len(incoming), 0, False)
        _check_second_file(dest, existing, incoming, replace)
        _check_new_records(pack, src, incoming, len(existing))
        refuse_unexpected_raters(pack, {name: (src, incoming)}, PackLog(pack.path).entries())
        _refuse_copies(pack, name, src, incoming)
        body = "".join(r.model_dump_json(exclude_none=True) + "\n" for r in incoming).encode()
        # the intent first: a kill after the rename can then be completed (decision 408)
        PackLog(pack.path).append(
            "ratings_import_begun", by, {"rater": name, "sha256": sha256_bytes(body)}
        )
        try:
            atomic_write_bytes(dest, body)
        except OSError as err:
            raise StorageError(f"{dest}: ratings not imported: {os_reason(err)}") from err
    data = {
        "rater": name,
        "records": len(incoming),
        "new_records": len(incoming) - len(existing),
        "sha256": sha256_bytes(body),
        "replaced": bool(existing),
    }
    PackLog(pack.path).append("ratings_imported", by, data)
    return ImportResult(name, dest, len(incoming), len(incoming) - len(existing), bool(existing))
