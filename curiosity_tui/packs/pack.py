"""The blind pack on disk: what a rater opens, and what only the key holder opens.

Layout (decision 060)::

    PACKDIR/
      manifest.json      format, pack id, embedded scheme, item order, sha256 of items and key
      items.jsonl        one item a line: {"id": ..., "sections": [s1, s2, s3]}
      ratings/NAME.jsonl one file per rater, append-only records (rating.py)
      log.jsonl          the pack's own append-only, hash-chained log (unblind.py)
      export.json        only in a rater's exported copy (export.py): for whom, of which pack
      adjudication.jsonl the coordinator's adjudications, apart from the ratings (adjudication.py)
    PACKDIR/../PACKNAME.key.json   the key: item -> run, configuration (default place)

Nothing in this module reads the key; :func:`read_key` lives in ``unblind.py``.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from curiosity_tui.atomic import atomic_write_bytes
from curiosity_tui.errors import InputError
from curiosity_tui.packs.schemes import Scheme, scheme_sha256
from curiosity_tui.provenance import Provenance
from curiosity_tui.textfiles import utf8_lines

__all__ = [
    "EXPORT_FILE",
    "ExportMarker",
    "ADJUDICATION_FILE",
    "ITEMS_FILE",
    "KeyEntry",
    "LOG_FILE",
    "MANIFEST_FILE",
    "PACK_FORMAT",
    "Pack",
    "PackError",
    "PackItem",
    "PackKey",
    "PackManifest",
    "RATINGS_DIR",
    "atomic_write_bytes",
    "check_manifest",
    "default_key_path",
    "sha256_bytes",
]

PACK_FORMAT = "curiosity-tui-pack/1"
KEY_FORMAT = "curiosity-tui-pack-key/1"
MANIFEST_FILE = "manifest.json"
ITEMS_FILE = "items.jsonl"
RATINGS_DIR = "ratings"
LOG_FILE = "log.jsonl"
EXPORT_FILE = "export.json"
EXPORT_FORMAT = "curiosity-tui-pack-export/1"
ADJUDICATION_FILE = "adjudication.jsonl"


class PackError(InputError):
    """A pack directory is missing, malformed or inconsistent."""


class PackItem(BaseModel):
    id: str
    sections: list[str] = Field(min_length=3, max_length=3)


class ItemRef(BaseModel):
    id: str
    cluster: str = Field(
        description="opaque resampling unit for the bootstrap; one run = one cluster"
    )


class PackManifest(BaseModel):
    format: Literal["curiosity-tui-pack/1"] = "curiosity-tui-pack/1"
    pack_id: str
    created_at: str
    scheme: Scheme
    scheme_sha256: str
    items: list[ItemRef]
    items_sha256: str
    key_sha256: str
    key_name: str = Field(description="file name of the key (not opened by raters)")
    expected_raters: list[str] = Field(default_factory=list)
    min_raters: int = 2
    scripted: bool = Field(
        default=False,
        description="built from runs whose replies came from the built-in scripted server, "
        "not a model (practice material); the items themselves do not say so",
    )
    sessions: str | None = Field(
        default=None,
        description="the two sessions each item shows, e.g. '1,last' (decision 440); "
        "None in packs built before the pick was recorded",
    )
    order: Literal["fixed", "per-rater"] = Field(
        default="fixed",
        description="presentation order: every rater the manifest's order, or each rater the "
        "items shuffled by a seed from the pack id and the rater's name (decision 427)",
    )
    provenance: Provenance | None = Field(
        default=None, description="what built the pack (issue 23.3); null before it was kept"
    )


class ExportMarker(BaseModel):
    """``export.json`` in a rater's copy of a pack (decision 210): the copy is for one rater
    to rate anywhere; commands for the whole pack refuse it."""

    format: Literal["curiosity-tui-pack-export/1"] = "curiosity-tui-pack-export/1"
    pack_id: str
    items_sha256: str
    rater: str
    exported_at: str
    #: the rater's presentation order and its seed (decision 427; None: one fixed order)
    order_seed: str | None = None
    order: list[str] | None = None
    provenance: Provenance | None = Field(
        default=None, description="what made the copy (issue 23.3); null before it was kept"
    )


class KeyEntry(BaseModel):
    item: str
    kind: Literal["run", "control"] = "run"
    run: str
    ledger: str
    config: str
    control: str | None = None
    base_item: str | None = None
    #: the two sessions the item shows (decision 440); None in keys written before
    sessions: list[int] | None = None
    #: the arm's name in unblinded tables when it is not the configuration's: ``C+cur(human)``
    #: for a human-curated run (decision 560); None in keys written before, and for the rest
    group: str | None = None
    #: a support-audit item's pair: ``<node>/<evidence id>`` (decision 520); left out of the
    #: key while None, so the keys of every other pack are as they were
    evidence: str | None = None

    def arm(self) -> str:
        """What unblinded tables name this item's run by: human- and model-curated runs of
        one configuration apart (``C+cur(human)`` beside ``C+cur``)."""
        return self.group or self.config

    @model_serializer(mode="wrap")
    def _omit_no_evidence(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("evidence", 0) is None:
            del out["evidence"]
        return out


class PackKey(BaseModel):
    format: Literal["curiosity-tui-pack-key/1"] = "curiosity-tui-pack-key/1"
    pack_id: str
    scheme_id: str
    seed: int
    items: dict[str, KeyEntry]


def order_seed(pack_id: str, rater: str) -> str:
    """The seed of a rater's presentation order: from the pack id and the rater's name, so
    the same rater gets the same order again, on any copy of the pack (decision 427)."""
    return hashlib.sha256(f"curiosity-tui order\0{pack_id}\0{rater}".encode()).hexdigest()[:16]


def presentation_order(manifest: PackManifest, rater: str) -> tuple[list[str], str | None]:
    """(the items in the order ``rater`` sees them, the order's seed or None when fixed)."""
    items = [ref.id for ref in manifest.items]
    if manifest.order != "per-rater":
        return items, None
    seed = order_seed(manifest.pack_id, rater)
    random.Random(int(seed, 16)).shuffle(items)
    return items, seed


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def default_key_path(packdir: Path) -> Path:
    """The key's default place: beside the pack directory, never inside it."""
    packdir = Path(packdir).resolve()
    return packdir.parent / f"{packdir.name}.key.json"


def items_bytes(items: list[PackItem]) -> bytes:
    return b"".join(
        (json.dumps(it.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) + "\n").encode(
            "utf-8"
        )
        for it in items
    )


def _built_record(packdir: Path) -> dict[str, object] | None:
    """The ``pack_built`` entry's data (the log's first line), read without the log's own
    chain check (``unblind`` does that): what the builder recorded the hashes to be."""
    log = packdir / LOG_FILE
    try:
        with log.open(encoding="utf-8", errors="replace") as fh:
            first = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    if not isinstance(first, dict) or first.get("kind") != "pack_built":
        return None
    data = first.get("data")
    return data if isinstance(data, dict) else None


def _stored_scheme_sha256(mpath: Path, manifest: PackManifest) -> str:
    """The hash of the scheme as the manifest stores it (not as today's model would dump it:
    a field added to the scheme model since the build must not make an old pack look edited)."""
    try:
        raw = json.loads(mpath.read_text(encoding="utf-8")).get("scheme")
    except (OSError, ValueError, AttributeError):
        raw = None
    if not isinstance(raw, dict):
        return scheme_sha256(manifest.scheme)
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def check_manifest(packdir: Path, manifest: PackManifest) -> None:
    """Refuse a manifest whose embedded scheme is not the one it names by hash, or whose
    hashes differ from those the builder logged: an edited instruction, a swapped scheme or
    a manifest rewritten after the build. Called on every :meth:`Pack.open`."""
    mpath = Path(packdir) / MANIFEST_FILE
    actual = _stored_scheme_sha256(mpath, manifest)
    if actual != manifest.scheme_sha256:
        raise PackError(
            f"{mpath}: the embedded scheme {manifest.scheme.id!r} does not match its "
            f"scheme_sha256 (recorded {manifest.scheme_sha256[:12]}…, found {actual[:12]}…): "
            "the rating instructions were changed after the pack was built"
        )
    built = _built_record(Path(packdir))
    if built is None:
        return
    for field in ("scheme_sha256", "items_sha256", "key_sha256"):
        logged = built.get(field)
        if isinstance(logged, str) and logged != getattr(manifest, field):
            raise PackError(
                f"{mpath}: {field} differs from the one logged when the pack was built "
                f"({Path(packdir) / LOG_FILE}:1): the manifest was rewritten after the build"
            )


class Pack:
    """A pack as a rater's tools see it: manifest and items. Never touches the key."""

    def __init__(
        self,
        path: Path,
        manifest: PackManifest,
        items: dict[str, PackItem],
        export: ExportMarker | None = None,
    ) -> None:
        self.path = path
        self.manifest = manifest
        self.items = items
        self.export = export

    def refuse_export(self, command: str) -> None:
        """One line when this is a rater's exported copy: ``command`` needs the pack itself."""
        if self.export is not None:
            raise PackError(
                f"{self.path}: this is rater {self.export.rater!r}'s exported copy of pack "
                f"{self.export.pack_id} ({EXPORT_FILE}); {command} works on the pack it came "
                "from (bring the ratings back with `ratings import`)"
            )

    @property
    def scheme(self) -> Scheme:
        return self.manifest.scheme

    @property
    def order(self) -> list[str]:
        return [ref.id for ref in self.manifest.items]

    @property
    def clusters(self) -> dict[str, str]:
        return {ref.id: ref.cluster for ref in self.manifest.items}

    @property
    def ratings_dir(self) -> Path:
        return self.path / RATINGS_DIR

    def item(self, item_id: str) -> PackItem:
        try:
            return self.items[item_id]
        except KeyError:
            raise PackError(f"{self.path}: no item {item_id!r} in this pack") from None

    @classmethod
    def open(cls, path: str | Path) -> Pack:
        p = Path(path)
        mpath = p / MANIFEST_FILE
        ipath = p / ITEMS_FILE
        if not p.is_dir():
            raise PackError(f"no such pack directory: {p}")
        if not mpath.is_file() or not ipath.is_file():
            raise PackError(f"not a pack (no {MANIFEST_FILE} or {ITEMS_FILE}): {p}")
        try:
            manifest = PackManifest.model_validate_json(mpath.read_bytes())
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(x) for x in first["loc"])
            raise PackError(f"{mpath}: invalid manifest at {loc}: {first['msg']}") from err
        check_manifest(p, manifest)
        raw = ipath.read_bytes()
        if sha256_bytes(raw) != manifest.items_sha256:
            raise PackError(
                f"{ipath}: contents do not match the sha256 recorded in {MANIFEST_FILE}; "
                "the items were changed after the pack was built"
            )
        items: dict[str, PackItem] = {}
        for lineno, line in utf8_lines(ipath, PackError, data=raw):
            if not line.strip():
                continue
            try:
                it = PackItem.model_validate_json(line)
            except ValidationError as err:
                raise PackError(
                    f"{ipath}:{lineno}: invalid item: {err.errors()[0]['msg']}"
                ) from err
            items[it.id] = it
        missing = [ref.id for ref in manifest.items if ref.id not in items]
        if missing:
            raise PackError(f"{ipath}: items listed in the manifest are missing: {missing[:5]}")
        return cls(p, manifest, items, _read_export_marker(p, manifest))


def _read_export_marker(packdir: Path, manifest: PackManifest) -> ExportMarker | None:
    """The export marker, if this is a rater's copy; refused when damaged or when it names
    another pack or other items than the manifest does."""
    path = packdir / EXPORT_FILE
    if not path.exists():
        return None
    try:
        marker = ExportMarker.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as err:
        raise PackError(f"{path}: damaged export marker") from err
    if marker.pack_id != manifest.pack_id or marker.items_sha256 != manifest.items_sha256:
        raise PackError(
            f"{path}: the export marker does not match the manifest (pack {marker.pack_id} vs "
            f"{manifest.pack_id}, or other items): the copy was mixed with another pack"
        )
    return marker
