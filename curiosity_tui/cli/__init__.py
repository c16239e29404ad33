"""The ``curiosity-tui`` command line.

Each sub-command group lives in its own module under ``curiosity_tui.cli`` and
exposes ``register(subparsers)``; this module only wires them together and turns
:class:`~curiosity_tui.errors.CuriosityError` into one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from curiosity_tui.cli import (
    adjudication_cmds,
    analysis_cmds,
    app_cmds,
    attraction_cmds,
    compare_cmds,
    contract_cmds,
    endpoint_cmds,
    keys_cmds,
    ledger_cmds,
    pack_cmds,
    pilot_cmds,
    plan_cmds,
    provenance_cmds,
    relay_cmds,
    run_cmds,
    study_cmds,
    support_cmds,
)
from curiosity_tui.errors import EXIT_CODES, CuriosityError, StorageError, describe_os_error

#: Command modules, in the order their commands appear in ``--help``. None imports numpy,
#: scikit-learn, openai or textual at module level (they load inside the handlers;
#: tests/test_startup_imports.py), so importing them all here keeps start-up light.
COMMAND_MODULES = (
    app_cmds,
    study_cmds,
    ledger_cmds,
    run_cmds,
    relay_cmds,  # --relay on run and demo: after run_cmds
    endpoint_cmds,
    pilot_cmds,
    plan_cmds,
    contract_cmds,
    support_cmds,
    pack_cmds,  # also `ratings export` / `ratings import` (cli/ratings_cmds.py)
    adjudication_cmds,
    analysis_cmds,
    attraction_cmds,
    compare_cmds,
    keys_cmds,
    provenance_cmds,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curiosity-tui",
        description="Run and audit multi-session LLM investigations over a question ledger.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def _command_names(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # `curiosity-tui [WORKSPACE]` opens the app: no sub-command, or a path.
    known = _command_names(parser)
    if not args_list or (args_list[0] not in known and not args_list[0].startswith("-")):
        args_list = ["open", *args_list]
    args = parser.parse_args(args_list)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except CuriosityError as err:
        print(f"curiosity-tui: error: {_one_line(str(err))}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("curiosity-tui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as err:  # disk full, read-only folder, permission: name the file
        print(f"curiosity-tui: error: {_one_line(describe_os_error(err))}", file=sys.stderr)
        return StorageError.exit_code
    except Exception as err:  # a bug; still one line (CURIOSITY_TRACEBACK=1 shows it)
        if os.environ.get("CURIOSITY_TRACEBACK"):
            raise
        print(
            f"curiosity-tui: internal error: {type(err).__name__}: {_one_line(str(err))} "
            "(a bug: set CURIOSITY_TRACEBACK=1 to see where, and please report it)",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


#: exit code of an unexpected exception (see ``EXIT_CODES``)
INTERNAL_ERROR = 70
assert INTERNAL_ERROR in EXIT_CODES


def _one_line(text: str, width: int = 1000) -> str:
    """An error message as one line: newlines folded, control characters escaped. A message
    longer than ``width`` keeps its start (what and where) and its end (what to do), with
    ``…`` between: long paths never cost the advice at the end."""
    flat = " ".join(text.split())
    flat = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in flat)
    if len(flat) <= width:
        return flat
    tail = (width - 1) // 3
    return flat[: width - 1 - tail] + "…" + flat[len(flat) - tail :]
