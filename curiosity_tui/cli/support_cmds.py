"""CLI: ``support list LEDGER`` and ``support judge LEDGER --req R --verdict V --grounds TEXT
--by NAME`` — a person's support judgement of a verified passage, scriptable (decision 520)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from curiosity_tui.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "support",
        help="support judgements: does a verified passage establish its requirement?",
    )
    ssub = s.add_subparsers(dest="support_command", metavar="SUBCOMMAND")
    sl = ssub.add_parser("list", help="verified evidence with its judgements")
    sl.add_argument("ledger", type=Path)
    sl.add_argument("--unjudged", action="store_true", help="only records nobody has judged")
    sl.add_argument("--json", action="store_true")
    sl.set_defaults(handler=_list)
    sj = ssub.add_parser(
        "judge", help="record a person's judgement: yes / no / partly, with grounds"
    )
    sj.add_argument("ledger", type=Path)
    sj.add_argument("--req", required=True, help="the requirement id (r1, r2, ...)")
    sj.add_argument("--node", help="its node (needed when several nodes have that id)")
    sj.add_argument(
        "--evidence", help="the evidence id (default: the latest verified one you have not judged)"
    )
    sj.add_argument("--verdict", required=True, choices=["yes", "no", "partly"])
    sj.add_argument("--grounds", required=True, help="at least a sentence")
    sj.add_argument("--by", required=True, help="your name (judge human:<name>)")
    sj.set_defaults(handler=_judge)
    s.set_defaults(handler=lambda a: (s.print_help(), 2)[1])


def _human(name: str) -> str:
    name = name.strip().removeprefix("human:")
    if not name or any(c.isspace() for c in name):
        raise InputError(f"judge name {name!r} must be one non-empty word")
    return f"human:{name}"


def _list(args: argparse.Namespace) -> int:
    from curiosity_tui.contract.support import verified_items
    from curiosity_tui.ledger import Ledger
    from curiosity_tui.textsafe import terminal_safe

    with Ledger.open(args.ledger) as led:
        items = verified_items(led.raw_nodes())
        contract = led.meta.contract
    if args.unjudged:
        items = [i for i in items if not i.judgements]
    if args.json:
        print(json.dumps({"contract": contract, "items": [i.as_json() for i in items]}, indent=2))
        return 0
    print(f"{len(items)} verified passage(s) (contract {contract})")
    for i in items:
        print(f"{i.node}/{i.requirement} {i.evidence_id} [{i.requirement_status}] (s{i.session})")
        print(f"    requirement: {terminal_safe(i.requirement_text)}")
        print(f"    passage: {terminal_safe(i.passage)}")
        for j in i.judgements:
            print(f"    {j['verdict']} by {j['by']}: {terminal_safe(j['grounds'])}")
    return 0


def _judge(args: argparse.Namespace) -> int:
    from curiosity_tui.contract.support import judge, pick_evidence, verified_items
    from curiosity_tui.ledger import Ledger

    by = _human(args.by)
    with Ledger.open(args.ledger, write=True) as led:
        nodes = led.raw_nodes()
        node = args.node
        if node is None:
            found = sorted({i.node for i in verified_items(nodes) if i.requirement == args.req})
            if len(found) != 1:
                raise InputError(
                    f"{args.ledger}: {args.req} has verified evidence on "
                    f"{', '.join(found) or 'no node'}; name one with --node"
                )
            node = found[0]
        evidence = args.evidence or pick_evidence(nodes, node, args.req, by)
        ev = judge(led, node, evidence, args.verdict, grounds=args.grounds, by=by)
    admitted = "admitted" if ev.admitted else "recorded, not admitted by the run's contract"
    print(
        f"{node}/{ev.requirement} {evidence}: {ev.verdict} by {by} ({admitted}); {ev.requirement} is {ev.result}"
    )
    return 0
