"""A run's identity (name, seed, configuration, contract, options, creation time) as the
hash-chained journal fixed it: the data of its first line, ``ledger_created``.

The projection's head copies this into ``run`` for fast opens, but the head's hash is
unkeyed: anyone can edit ``run.config`` and recompute it. Every open therefore checks the
head's copy against the journal's first line (one line read, its hash checked against the
genesis); a head that disagrees is treated as damaged, so readers take the identity from
the journal's replay, and the analyses that sign a result (``verdict``, ``report``,
``prereg verify``) refuse the run in one line (issue 25, item 2; decision 401). Only the
``endpoint`` key may differ: ``endpoint_probed`` events update it after creation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curiosity_tui.errors import CorruptLedgerError
from curiosity_tui.ledger.journal import GENESIS, JOURNAL_FILE, decode_line

#: keys of the run metadata that later events may change (everything else is fixed at creation):
#: the latest endpoint probe, and the server changes between sessions (issue 23.2)
MUTABLE_KEYS = frozenset({"endpoint", "server_changes"})


def created_data(directory: Path) -> dict[str, Any]:
    """The ``ledger_created`` data of the journal in ``directory``, its line's hash checked.
    Raises CorruptLedgerError (one line) when the first line is missing or fails."""
    jpath = Path(directory) / JOURNAL_FILE
    try:
        with jpath.open("rb") as fh:
            first = fh.readline()
    except OSError as err:
        raise CorruptLedgerError(f"{jpath}: unreadable ({err.strerror})", path=str(jpath)) from None
    if not first.endswith(b"\n"):
        raise CorruptLedgerError(
            f"{jpath}: seq 1: no complete ledger_created line", path=str(jpath), seq=1
        )
    ev, _ = decode_line(first[:-1], GENESIS, 1, jpath)
    data = ev.get("data")
    if ev.get("kind") != "ledger_created" or not isinstance(data, dict):
        raise CorruptLedgerError(
            f"{jpath}: seq 1 is {ev.get('kind')!r}, not ledger_created", path=str(jpath), seq=1
        )
    return data


def identity_mismatch(run: dict[str, Any] | None, created: dict[str, Any]) -> str | None:
    """How a head's ``run`` differs from the journal's ``ledger_created`` data (the first
    differing key, both values), or None when they agree on every fixed key."""
    if run is None:
        return "run: missing (the journal's ledger_created has the run's metadata)"
    for key in sorted(set(run) | set(created)):
        if key in MUTABLE_KEYS:
            continue
        if run.get(key) != created.get(key):
            return (
                f"run.{key} is {_short(run.get(key))}, the journal's ledger_created says "
                f"{_short(created.get(key))}"
            )
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def head_identity_problem(directory: Path) -> str | None:
    """For readers that do not open the ledger (``prereg verify``): how the head's ``run``
    differs from the journal's ``ledger_created``, in one line naming the file; None when it
    agrees or there is no readable head (a damaged head is ``verify``'s to report)."""
    from curiosity_tui.ledger.store import read_head_quiet

    head = read_head_quiet(Path(directory))
    if head is None:
        return None
    try:
        mismatch = identity_mismatch(head.run, created_data(directory))
    except CorruptLedgerError as err:
        return str(err)
    return None if mismatch is None else f"{Path(directory) / 'ledger.json'}: {mismatch}"
