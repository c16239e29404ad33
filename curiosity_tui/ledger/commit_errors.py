"""What a failed commit means, in one line: did the batch reach the journal or not?

A batch's commit is two writes: the journal append (the commit point: one write + fsync) and
then the projection (``ledger.json``). An ``OSError`` (disk full, read-only folder, ...) in
the first leaves the ledger exactly as it was; in the second the batch *is* committed and the
projection is merely behind, to be rebuilt from the journal by the next writer. The ledger
tells the two apart by whether it advanced to the batch's last seq (it does so right after
the journal fsync, before it touches the projection).
"""

from __future__ import annotations

from pathlib import Path

from curiosity_tui.errors import CommittedButBehindError, StorageError, os_reason


def batch_name(session: int, marker: str, label: str) -> str:
    if marker == "session_committed":
        return f"session {session}"
    return f"the {label or 'change'} batch"


def commit_failure(
    err: OSError, *, ledger: Path, what: str, session: int, seq: int, reached: bool
) -> StorageError:
    """The one-line error for an OSError raised while committing ``what``."""
    reason = os_reason(err)
    if reached:
        return CommittedButBehindError(
            f"{what} is committed to {ledger / 'journal.jsonl'} (seq {seq}), but "
            f"the projection {err.filename or ledger / 'projection'} could not be written: {reason}; the projection is "
            "behind and is rebuilt from the journal on the next write",
            session=session,
            seq=seq,
        )
    return StorageError(
        f"{what} was not committed: cannot append to {ledger / 'journal.jsonl'}: {reason}; "
        "nothing stored was lost, and running the same command again resumes"
    )
