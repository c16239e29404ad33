"""A fact's cited source is match-checked like requirement evidence where the contract asks
for verified evidence (pilot-02): the fact's text must occur in the source after whitespace
and quote normalisation (contract/evidence.py), else the fact is stored without the source
and the session's record says why (issue 25, item 10; decision 407). On a real model the fact
"None of the above" was stored and shown as ``[source example_source]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curiosity_tui.contract.evidence import match_passage
from curiosity_tui.contract.sources import read_stored_source
from curiosity_tui.contract_switches import switches_of
from curiosity_tui.errors import CuriosityError


def checked_source(
    ledger_path: Path,
    meta: dict[str, Any] | None,
    sources: dict[str, Any],
    source_id: str | None,
    text: str,
) -> tuple[str | None, str | None]:
    """(the source id to store, or None; why a cited source was dropped, or None)."""
    if source_id is None or source_id not in sources:
        return None, None
    contract = str((meta or {}).get("contract") or "pilot-02")
    try:
        verified = switches_of(contract).evidence != "asserted"
    except CuriosityError:
        verified = True
    if not verified:
        return source_id, None
    try:
        outcome = match_passage(text, read_stored_source(ledger_path, sources[source_id]))
    except CuriosityError as err:
        return None, f"fact source {source_id[:12]}: {err}; stored without the source"
    if not outcome.ok:
        return None, (
            f"fact source {source_id[:12]}: {outcome.reason}; the fact {text[:60]!r} is stored "
            "without the source"
        )
    return source_id, None
