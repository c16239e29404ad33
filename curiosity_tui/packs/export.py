"""A rater's own copy of a pack, to rate on their own machine (decision 210).

``export_for_rater`` writes ``OUT/`` with the pack's manifest and items (byte for byte, so
their hashes still hold), the rater's own ratings file if there is one, and ``export.json``
naming the pack, its items hash and the rater. Never another rater's file, the pack's log,
the key, locks or drafts. The copy is built in a hidden folder beside ``OUT`` and renamed
into place, so an interrupted export leaves no half copy under the name.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from curiosity_tui.atomic import atomic_write_bytes, fsync_dir
from curiosity_tui.clock import utc_now_milli
from curiosity_tui.errors import StorageError, os_reason
from curiosity_tui.packs.pack import (
    EXPORT_FILE,
    ITEMS_FILE,
    MANIFEST_FILE,
    RATINGS_DIR,
    ExportMarker,
    Pack,
    PackError,
    presentation_order,
)
from curiosity_tui.packs.rating import ratings_path, read_rater_file, validate_rater_name
from curiosity_tui.provenance import current as current_provenance

__all__ = ["ExportResult", "export_for_rater"]


@dataclass(frozen=True)
class ExportResult:
    out: Path
    pack_id: str
    rater: str
    items: int
    records: int  # the rater's own records carried over


def _check_out(pack: Pack, out: Path) -> None:
    if out.exists() or out.is_symlink():
        raise PackError(f"{out}: already exists; export writes a new folder (choose another)")
    src = pack.path.resolve()
    dest = out.resolve()
    if dest == src or src in dest.parents:
        raise PackError(f"{out}: inside the pack {pack.path}; export it somewhere else")
    if dest.parent.exists() and not dest.parent.is_dir():
        raise PackError(f"{out}: {dest.parent} is a file, not a folder")


def _write_copy(pack: Pack, tmp: Path, rater: str, own: Path) -> None:
    for name in (MANIFEST_FILE, ITEMS_FILE):
        atomic_write_bytes(tmp / name, (pack.path / name).read_bytes())
    (tmp / RATINGS_DIR).mkdir()
    if own.exists():
        atomic_write_bytes(tmp / RATINGS_DIR / own.name, own.read_bytes())
    marker = ExportMarker(
        pack_id=pack.manifest.pack_id,
        items_sha256=pack.manifest.items_sha256,
        rater=rater,
        exported_at=utc_now_milli(),
        provenance=current_provenance(),
    )
    seen, seed = presentation_order(pack.manifest, rater)
    if seed is not None:
        marker = marker.model_copy(update={"order_seed": seed, "order": seen})
    atomic_write_bytes(tmp / EXPORT_FILE, (marker.model_dump_json(indent=2) + "\n").encode())


def export_for_rater(packdir: str | Path, rater: str, out: str | Path) -> ExportResult:
    """Write rater ``rater``'s copy of the pack at ``packdir`` to the new folder ``out``."""
    validate_rater_name(rater)
    pack = Pack.open(packdir)
    pack.refuse_export("pack export")
    out = Path(out)
    _check_out(pack, out)
    own = ratings_path(pack.path, rater)
    records = read_rater_file(own, rater, pack.manifest.pack_id)  # refuse a damaged file now
    try:  # its folder is made as other commands make theirs
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StorageError(f"{out}: cannot create {out.parent}: {os_reason(err)}") from err
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        _write_copy(pack, tmp, rater, own)
        os.rename(tmp, out)
        fsync_dir(out.parent)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StorageError(f"{out}: the export was not written: {os_reason(err)}") from err
    return ExportResult(
        out=out,
        pack_id=pack.manifest.pack_id,
        rater=rater,
        items=len(pack.order),
        records=len(records),
    )
