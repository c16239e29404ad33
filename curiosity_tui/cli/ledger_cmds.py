"""CLI commands: ledger_cmds (filled in by the issue that owns it)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # noqa: ARG001
    return None
