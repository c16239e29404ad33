"""CLI: ``sources add|list``, ``downgrades [list]|propose|decide``, ``audit``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from curiosity_tui.errors import InputError

CONTRACT_HELP = (
    "pilot-01, pilot-02 (default) or a combination of switches, e.g. "
    "evidence=verified,closure=binding (evidence=asserted|verified|supported, "
    "closure=unconditional|binding|binding+downgrade)"
)


def contract_option(text: str) -> str:
    """argparse type for ``--contract``: the stored (canonical) name, or a usage error."""
    from curiosity_tui.contract_switches import canonical_name

    try:
        return canonical_name(text)
    except InputError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "sources", help="evidence sources of a ledger (content-addressed text artifacts)"
    )
    ssub = s.add_subparsers(dest="sources_command", metavar="SUBCOMMAND")
    sa = ssub.add_parser(
        "add", help="store text files as sources (sha256-addressed; a repeat is stored once)"
    )
    sa.add_argument("ledger", type=Path)
    sa.add_argument("files", type=Path, nargs="+")
    sa.add_argument("--title", help="title (default: the file name); only with one file")
    sa.add_argument("--locator", help="where it came from (URL, citation); default: the file path")
    sa.add_argument("--actor", default="system", help="who adds it: system or human:<name>")
    sa.set_defaults(handler=_sources_add)
    sl = ssub.add_parser("list", help="list a ledger's sources")
    sl.add_argument("ledger", type=Path)
    sl.add_argument("--json", action="store_true")
    sl.set_defaults(handler=_sources_list)
    s.set_defaults(handler=lambda a: (s.print_help(), 2)[1])

    d = sub.add_parser(
        "downgrades",
        help="downgrade proposals: `downgrades LEDGER [--json] [--all]`, `downgrades propose ...`, "
        "`downgrades decide LEDGER ID approve|reject --grounds TEXT --curator NAME`",
        add_help=False,
    )
    # -h before anything else is not part of REMAINDER for argparse: take it here
    d.add_argument("-h", "--help", action="store_true", dest="downgrades_help")
    d.add_argument("rest", nargs=argparse.REMAINDER)
    d.set_defaults(handler=_downgrades)

    a = sub.add_parser("audit", help="closure audit (S10); exit 1 when there are findings")
    a.add_argument("ledger", type=Path, help="a ledger, or a folder of ledgers (a pilot's runs)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(handler=_audit)


def _ledgers_below(root: Path) -> list[Path]:
    """The ledgers one or two levels below ``root`` (``runs/<ledger>``, ``runs/<pilot>/<ledger>``;
    a study folder: its ``runs/``), in path order."""
    from curiosity_tui.analysis.study import runs_of

    base = runs_of(root)
    found = {
        j.parent for pattern in ("*/journal.jsonl", "*/*/journal.jsonl") for j in base.glob(pattern)
    }
    return sorted(found)


def _audit_folder(args: argparse.Namespace, ledgers: list[Path]) -> int:
    """``audit runs/``: every ledger of a folder (a pilot's runs, a study's runs), one line
    each, then the findings; exit 1 when any ledger has one."""
    from curiosity_tui.contract.audit import audit
    from curiosity_tui.ledger import Ledger

    if not ledgers:
        raise InputError(f"{args.ledger}: neither a ledger nor a folder holding ledgers")
    reports = []
    for path in ledgers:
        with Ledger.open(path) as led:
            reports.append((path, audit(led)))
    if args.json:
        data = [
            {
                "ledger": str(path),
                "contract": rep.contract,
                "findings": [f.model_dump(mode="json") for f in rep.findings],
            }
            for path, rep in reports
        ]
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 1 if any(rep.findings for _, rep in reports) else 0
    total = sum(len(rep.findings) for _, rep in reports)
    print(f"closure audit of {len(reports)} ledger(s) in {args.ledger}: {total} finding(s)")
    for path, rep in reports:
        print(f"{path} (contract {rep.contract}): {len(rep.findings)} finding(s)")
        for f in rep.findings:
            req = f"/{f.requirement}" if f.requirement else ""
            tag = " [BREACH of the contract]" if f.breach else ""
            print(f"- {f.kind}{tag}: {f.node}{req} at seq {', '.join(map(str, f.seqs))}")
    return 1 if total else 0


def _downgrades_parser() -> argparse.ArgumentParser:
    d = argparse.ArgumentParser(prog="curiosity-tui downgrades")
    dsub = d.add_subparsers(dest="downgrades_command", metavar="SUBCOMMAND")
    dl = dsub.add_parser("list", help="list proposals (pending unless --all)")
    dl.add_argument("ledger", type=Path)
    dl.add_argument("--json", action="store_true")
    dl.add_argument("--all", action="store_true", help="include decided proposals")
    dl.set_defaults(handler=_downgrades_list)
    dp = dsub.add_parser(
        "propose", help="propose to waive or weaken one requirement (a curator's proposal)"
    )
    dp.add_argument("ledger", type=Path)
    dp.add_argument("node")
    dp.add_argument("requirement")
    dp.add_argument("action", choices=["waive", "weaken"])
    dp.add_argument("--grounds", required=True)
    dp.add_argument("--new-text", help="the weaker requirement (weaken only)")
    dp.add_argument("--curator", required=True, help="your name (actor human:<name>)")
    dp.set_defaults(handler=_downgrades_propose)
    dd = dsub.add_parser(
        "decide", help="approve or reject a proposal, with grounds (human curators only)"
    )
    dd.add_argument("ledger", type=Path)
    dd.add_argument("id")
    dd.add_argument("decision", choices=["approve", "reject"])
    dd.add_argument("--grounds", required=True)
    dd.add_argument("--curator", required=True, help="your name (actor human:<name>)")
    dd.add_argument(
        "--allow-self-approval",
        action="store_true",
        help="approve a proposal you made yourself (refused by default; recorded in the event)",
    )
    dd.set_defaults(handler=_downgrades_decide)
    return d


def _downgrades(args: argparse.Namespace) -> int:
    rest = list(args.rest)
    if getattr(args, "downgrades_help", False):
        _downgrades_parser().print_help()
        return 0
    if not rest or rest[0] in ("-h", "--help"):
        _downgrades_parser().print_help()
        return 0 if rest else 2
    if rest[0] not in ("list", "propose", "decide"):
        rest = ["list", *rest]
    inner = _downgrades_parser().parse_args(rest)
    return int(inner.handler(inner))


def _human(name: str) -> str:
    name = name.strip()
    if name.startswith("human:"):
        name = name[6:]
    if not name or any(c.isspace() for c in name):
        raise InputError(f"curator name {name!r} must be one non-empty word")
    return f"human:{name}"


def _sources_add(args: argparse.Namespace) -> int:
    from curiosity_tui.contract.sources import add_source
    from curiosity_tui.ledger import Ledger
    from curiosity_tui.textsafe import terminal_safe

    if args.title and len(args.files) > 1:
        raise InputError("--title applies to one file; add files one at a time to title each")
    with Ledger.open(args.ledger, write=True) as led:
        for f in args.files:
            res = add_source(led, f, title=args.title, locator=args.locator, actor=args.actor)
            state = "added" if res.added else "already stored"
            print(f"{res.source_id[:12]}  {state}  {terminal_safe(res.title)}")
    return 0


def _sources_list(args: argparse.Namespace) -> int:
    from curiosity_tui.ledger import Ledger
    from curiosity_tui.textsafe import terminal_safe

    with Ledger.open(args.ledger) as led:
        srcs = led.sources()
    if args.json:
        print(
            json.dumps(
                {"sources": [s.model_dump(mode="json") for s in srcs]}, indent=2, ensure_ascii=False
            )
        )
        return 0
    if not srcs:
        print("no sources")
    for s in srcs:
        # titles and locators come from files and flags: escape sequences shown, never run
        print(f"{s.id[:12]}  {s.size:>9} B  {terminal_safe(s.title)}  ({terminal_safe(s.locator)})")
    return 0


def _downgrades_list(args: argparse.Namespace) -> int:
    from curiosity_tui.contract.downgrades import list_downgrades
    from curiosity_tui.ledger import Ledger

    with Ledger.open(args.ledger) as led:
        items = list_downgrades(led, pending_only=not args.all)
    if args.json:
        print(
            json.dumps({"downgrades": [i.as_json() for i in items]}, indent=2, ensure_ascii=False)
        )
        return 0
    if not items:
        print("no pending downgrades" if not args.all else "no downgrades")
    for i in items:
        new = f" -> {i.new_text!r}" if i.new_text else ""
        print(
            f"{i.id}  {i.status:<8} {i.node}/{i.requirement} {i.action}{new}  by {i.proposed_by} (s{i.session})"
        )
        print(f"      requirement: {i.requirement_text}")
        print(f"      grounds: {i.grounds}")
        if i.decision:
            print(
                f"      decided: {i.decision['decision']} by {i.decision['by']}: {i.decision['grounds']}"
            )
    return 0


def _downgrades_propose(args: argparse.Namespace) -> int:
    from curiosity_tui.contract.downgrades import propose
    from curiosity_tui.ledger import Ledger

    with Ledger.open(args.ledger, write=True) as led:
        pid = propose(
            led,
            args.node,
            args.requirement,
            args.action,
            grounds=args.grounds,
            actor=_human(args.curator),
            new_text=args.new_text,
        )
    print(f"{pid} proposed")
    return 0


def _downgrades_decide(args: argparse.Namespace) -> int:
    from curiosity_tui.contract.downgrades import decide
    from curiosity_tui.ledger import Ledger

    with Ledger.open(args.ledger, write=True) as led:
        decide(
            led,
            args.id,
            args.decision,
            grounds=args.grounds,
            actor=_human(args.curator),
            allow_self_approval=args.allow_self_approval,
        )
    print(f"{args.id} {args.decision}d")
    return 0


def _audit(args: argparse.Namespace) -> int:
    from curiosity_tui.contract.audit import audit
    from curiosity_tui.ledger import Ledger
    from curiosity_tui.workspace_scan import is_ledger

    if Path(args.ledger).is_dir() and not is_ledger(Path(args.ledger)):
        return _audit_folder(args, _ledgers_below(Path(args.ledger)))
    with Ledger.open(args.ledger) as led:
        report = audit(led)
    if args.json:
        print(
            json.dumps(
                {"findings": [f.model_dump(mode="json") for f in report.findings]},
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print(
            f"closure audit of {args.ledger} (contract {report.contract}): {len(report.findings)} finding(s)"
        )
        for f in report.findings:
            req = f"/{f.requirement}" if f.requirement else ""
            seqs = ", ".join(str(s) for s in f.seqs)
            sess = ", ".join(str(s) for s in f.sessions)
            tag = " [BREACH of the contract]" if f.breach else ""
            print(f"- {f.kind}{tag}: {f.node}{req} at seq {seqs} (session {sess})")
            print(f"    {f.detail}")
    return 1 if report.findings else 0
