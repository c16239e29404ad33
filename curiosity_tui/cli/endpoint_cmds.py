"""CLI: ``endpoint check`` — probe a model endpoint the way ``run`` does before session 1."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from curiosity_tui.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    from curiosity_tui.cli.run_cmds import endpoint_flags

    ep = sub.add_parser("endpoint", help="model endpoint capabilities")
    esub = ep.add_subparsers(dest="endpoint_command", metavar="SUBCOMMAND")
    c = esub.add_parser(
        "check",
        help="probe response formats, context window and embeddings; say what a run would use",
    )
    c.add_argument("--json", action="store_true", help="print the capability record as JSON")
    endpoint_flags(c)
    c.set_defaults(handler=_check)
    ep.set_defaults(handler=lambda a: (ep.print_help(), 2)[1])


def _lines(caps: Any) -> list[str]:
    out = [
        f"endpoint   {caps.base_url or 'OpenAI'}  model {caps.model}"
        + ("" if caps.model_listed is not False else " (not in /v1/models)"),
        f"server     {caps.server or 'unknown (no /props)'}"
        + (f", {caps.slots} slot(s)" if caps.slots else ""),
    ]
    for t in caps.trials:
        detail = f"  {t.detail}" if t.detail else ""
        out.append(f"format     {t.format:<11} {t.outcome}{detail}")
    out.append(f"uses       response format {caps.response_format or 'none'}")
    if caps.schema_dialect:
        why = next(
            (t.detail.split(": ", 1)[1] for t in caps.trials if t.detail.startswith("dialect ")),
            "the response format carries no schema",
        )
        out.append(f"schemas    {caps.schema_dialect} dialect: {why} (override: --schema-dialect)")
    window = (
        f"{caps.context_window} tokens ({caps.context_source})"
        if caps.context_window
        else ("unknown (pass --context-window)")
    )
    out.append(f"context    {window}")
    if caps.embedding_model:
        detail = f" ({caps.embeddings_detail})" if caps.embeddings_detail else ""
        out.append(f"embeddings {caps.embedding_model}: {caps.embeddings}{detail}")
        if caps.embedder:
            out.append(f"similarity {caps.embedder}")
    return out


def _check(args: argparse.Namespace) -> int:
    from curiosity_tui.cli.run_cmds import _closing, endpoint_options, model_client
    from curiosity_tui.modelio.endpoint import probe_endpoint, problems

    if not args.model and not args.scripted:
        raise InputError("endpoint check needs --model")
    with model_client(args, args.model) as client:
        caps = asyncio.run(_closing(client, probe_endpoint(client, endpoint_options(args))))
    found = problems(caps)
    if args.json:
        print(json.dumps({**caps.model_dump(mode="json"), "problems": found}, indent=2))
    else:
        for line in _lines(caps):
            print(line)
        for p in found:
            print(f"problem    {p}")
        print("a run would work" if not found else "a run would stop before session 1")
    return 1 if found else 0
