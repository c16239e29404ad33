"""Where the projection's head stands against the journal: behind, damaged, or ahead.

The journal is fsynced before the head is replaced, so no crash leaves a head that records
more committed events than the journal holds. A head *ahead* of the journal (its checkpoint
seq past the journal's last commit marker) therefore proves that committed events are missing
from the journal (it was cut, emptied or replaced): the projection may be their only copy.
Rebuilding from the journal would destroy them, so every open refuses, in one line, before
anything is written (issue 25, item 1; decision 400). Behind or damaged heads are rebuilt.
"""

from __future__ import annotations

import json
from pathlib import Path

from curiosity_tui.errors import CorruptLedgerError
from curiosity_tui.ledger.store import PROJECTION_DIR, PROJECTION_FILE, Head


def claimed_seq(directory: Path, head: Head | None) -> int | None:
    """The last seq the head records: from the checked head, else read leniently from a head
    whose hash or fields fail (a damaged head still says how far it got). None: no claim."""
    if head is not None:
        return head.last_seq
    try:
        data = json.loads((directory / PROJECTION_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    seq = data.get("last_seq") if isinstance(data, dict) else None
    return seq if type(seq) is int else None


def _projection_holds_rows(directory: Path) -> bool:
    try:
        return any(p.stat().st_size > 0 for p in (directory / PROJECTION_DIR).iterdir())
    except OSError:
        return False


def refuse_if_ahead(directory: Path, journal: Path, head: Head | None, last_seq: int) -> None:
    """Raise CorruptLedgerError (one line, nothing changed) when the projection records
    committed events the journal no longer holds."""
    claim = claimed_seq(directory, head)
    if claim is not None and claim > last_seq:
        what = f"the projection ({PROJECTION_FILE}) is at seq {claim}"
    elif last_seq == 0 and _projection_holds_rows(directory):
        what = f"the projection ({PROJECTION_DIR}/) holds rows"
    else:
        return
    raise CorruptLedgerError(
        f"{journal}: {what}, ahead of the journal, whose committed events end at seq "
        f"{last_seq}: committed events are missing from the journal; nothing was changed "
        f"(restore the journal from a copy, or move {PROJECTION_FILE} and {PROJECTION_DIR}/ "
        "aside to rebuild from the journal as it stands)",
        path=str(journal),
        seq=last_seq,
    )
