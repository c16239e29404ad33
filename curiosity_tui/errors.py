"""Errors that reach the user as one clear line (the CLI prints them without a traceback)."""

from __future__ import annotations

import errno


class CuriosityError(Exception):
    """Base class: a problem the user can act on. ``str(err)`` is the one-line message."""

    exit_code = 2


class LedgerError(CuriosityError):
    """A ledger could not be opened or is inconsistent."""


class NotALedgerError(LedgerError):
    pass


class LedgerLockedError(LedgerError):
    exit_code = 3


class CorruptLedgerError(LedgerError):
    """The journal or projection is inconsistent; names the file and seq."""

    def __init__(self, message: str, *, path: str | None = None, seq: int | None = None):
        super().__init__(message)
        self.path = path
        self.seq = seq


class TransitionError(CuriosityError):
    """A requested change to the ledger is not allowed (unknown node, bad state, contract rule)."""


class InputError(CuriosityError):
    """Bad user input (file, flag, plan, rating)."""


class StorageError(CuriosityError):
    """A file could not be written or read (disk full, read-only folder, permission denied).

    The message names the file and what became of the change (committed or not)."""

    exit_code = 5


class CommittedButBehindError(StorageError):
    """A batch reached the journal (it is committed) but the projection could not be written.

    The projection is then behind the journal; the next writer rebuilds it from the journal."""

    def __init__(self, message: str, *, session: int, seq: int) -> None:
        super().__init__(message)
        self.session = session
        self.seq = seq


#: The exit codes every command uses (docs/errors.md). Tests check commands stay inside this set.
EXIT_CODES: dict[int, str] = {
    0: "done",
    1: "done, with a negative result (verify failed, audit findings, a run stopped early)",
    2: "bad input or usage: a file, flag, plan, rating or ledger that cannot be used",
    3: "the ledger is locked for writing by another process",
    4: "unblinding refused (ratings incomplete)",
    5: "storage: a file could not be written or read (disk full, read-only, permission)",
    70: "internal error (a bug: please report it with the command that caused it)",
    130: "interrupted",
}

_OS_HINTS = {
    errno.ENOSPC: "free some space and run the same command again",
    errno.EDQUOT: "free some space and run the same command again",
    errno.EROFS: "writing needs a writable folder; nothing was changed",
    errno.EACCES: "check the permissions of the file and its folder; nothing was changed",
    errno.EPERM: "nothing was changed",
}


def os_reason(err: OSError) -> str:
    """Why an OSError happened, with a hint: "No space left on device (free some space ...)"."""
    reason = err.strerror or str(err) or type(err).__name__
    hint = _OS_HINTS.get(err.errno or 0, "")
    return f"{reason} ({hint})" if hint and hint != reason.lower() else reason


def describe_os_error(err: OSError, doing: str = "") -> str:
    """One line for an OSError: what was being done, the file, the reason and a hint."""
    where = "" if err.filename is None else str(err.filename)
    if err.filename2 is not None:
        where = f"{where} -> {err.filename2}"
    head = ": ".join(p for p in (doing, where) if p) or "a file operation failed"
    return f"{head}: {os_reason(err)}"
