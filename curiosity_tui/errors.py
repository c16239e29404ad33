"""Errors that reach the user as one clear line (the CLI prints them without a traceback)."""

from __future__ import annotations


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
