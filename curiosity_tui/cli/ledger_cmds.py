"""CLI: ``ledger new``, ``ledger show``, ``ledger render`` and the top-level ``verify``.

Every failure the user can act on (unknown path, not a ledger, locked, corrupt, bad flag
value) is a CuriosityError: the dispatcher prints it as one line on stderr, no traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curiosity_tui.cli.contract_cmds import CONTRACT_HELP, contract_option
from curiosity_tui.errors import CorruptLedgerError, InputError, LedgerError
from curiosity_tui.textsafe import replace_unstorable, terminal_safe

if TYPE_CHECKING:  # the ledger stack loads in the handlers: `curiosity-tui open` starts
    # without it (pydantic and the event models; decision 285)
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.ledger.models import CuratorKind
    from curiosity_tui.ledger.node_record import NodeRecord

STAGES = ("session", "decay", "curator")


def register(sub: argparse._SubParsersAction) -> None:
    led = sub.add_parser("ledger", help="create, show and render question ledgers")
    lsub = led.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND")

    new = lsub.add_parser("new", help="create a ledger (one run) in a new directory")
    new.add_argument("path", type=Path, metavar="PATH")
    new.add_argument("--seed", required=True, help="the seed question")
    new.add_argument("--config", default="C+cur", help="configuration (default C+cur)")
    new.add_argument("--contract", type=contract_option, default="pilot-02", help=CONTRACT_HELP)
    new.add_argument(
        "--curator",
        choices=["model", "human", "none"],
        default=None,
        help="curator kind (default: model for a +cur configuration, none otherwise)",
    )
    tension_flags(new)
    new.set_defaults(handler=_new)

    show = lsub.add_parser("show", help="the projection, or the snapshot after session N")
    show.add_argument("path", type=Path, metavar="PATH")
    show.add_argument("--session", type=int, default=None, metavar="N")
    show.add_argument("--stage", choices=STAGES, default=None, help="which snapshot of session N")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(handler=_show)

    render = lsub.add_parser("render", help="the exact text a session receives (S2)")
    render.add_argument("path", type=Path, metavar="PATH")
    render.add_argument(
        "--session",
        type=int,
        default=None,
        metavar="N",
        help="the rendering session N received (default: the next session's)",
    )
    render.add_argument(
        "--raw",
        action="store_true",
        help="write the text byte for byte; by default control, zero-width and bidi "
        "characters are shown visibly (ESC as ␛, U+202E as ⟨U+202E⟩) so model text cannot "
        "drive the terminal",
    )
    render.set_defaults(handler=_render)
    led.set_defaults(handler=lambda a: (led.print_help(), 2)[1])

    ver = sub.add_parser(
        "verify", help="check a ledger's hash chain and that replay reproduces its projection"
    )
    ver.add_argument("path", type=Path, metavar="PATH")
    ver.set_defaults(handler=_verify)


# --------------------------------------------------------------------------- new


def tension_flags(p: argparse.ArgumentParser) -> None:
    """The run's tension setting (issue 26; docs/protocol.md "Tension settings")."""
    g = p.add_argument_group("tension setting (default: the pilot as run)")
    g.add_argument(
        "--tension",
        choices=["as-run", "pre-amendment", "four-component"],
        default="as-run",
        help="the measure Δ is computed by (default as-run)",
    )
    g.add_argument(
        "--tension-weights",
        metavar="D=..,H=..,F=..,U=..",
        help="four-component's weights, summing to 1 (default a quarter each)",
    )
    g.add_argument(
        "--cluster-similarity",
        type=float,
        default=None,
        metavar="COS",
        help="four-component: cosine at which two candidates are one cluster (default 0.8)",
    )
    g.add_argument(
        "--per-candidate",
        action="store_true",
        help="Δ per candidate beside the medoid's, with the fallback (decision 533)",
    )
    g.add_argument(
        "--service-sessions",
        metavar="LIST",
        help="sessions that are service sessions (e.g. 2,4-5): they answer, never PRESERVE",
    )


def tension_setting(args: argparse.Namespace) -> Any:
    """The TensionOptions the flags ask for; one line naming the flag otherwise."""
    from pydantic import ValidationError

    from curiosity_tui.protocol.tension_options import (
        TensionOptions,
        parse_sessions,
        parse_weights,
    )

    four = args.tension == "four-component"
    if not four and (args.tension_weights or args.cluster_similarity is not None):
        raise InputError("--tension-weights and --cluster-similarity need --tension four-component")
    values: dict[str, Any] = {"measure": args.tension, "per_candidate": args.per_candidate}
    if args.tension_weights:
        values["weights"] = parse_weights(args.tension_weights, flag="--tension-weights")
    if args.cluster_similarity is not None:
        values["cluster_similarity"] = args.cluster_similarity
    if args.service_sessions:
        values["service_sessions"] = parse_sessions(
            args.service_sessions, flag="--service-sessions"
        )
    try:
        return TensionOptions.model_validate(values)
    except ValidationError as err:
        msg = str(err.errors()[0]["msg"]).removeprefix("Value error, ")
        raise InputError(f"tension setting: {msg}") from None


def _resolve_config(name: str, requested: str | None) -> tuple[str, CuratorKind]:
    """(configuration name, curator kind), validated by protocol.configs (the canonical list):
    a ``+cur`` configuration defaults to a model curator and refuses ``none``; a configuration
    without a curator always gets ``none``."""
    from curiosity_tui.protocol.configs import get_configuration, resolve_curator

    config = get_configuration(name)
    kind = resolve_curator(config, requested or ("model" if config.curator else "none"))
    return config.name, kind


def _new(args: argparse.Namespace) -> int:
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.ledger.models import RunMeta

    config, curator = _resolve_config(args.config, args.curator)
    seed = args.seed.strip()
    if not seed:
        raise InputError("--seed must not be empty")
    path: Path = args.path
    for what, text in (("--seed", seed), ("the ledger's folder name", path.name)):
        if replace_unstorable(text)[1]:  # undecodable argv bytes arrive as lone surrogates
            raise InputError(f"{what} {text!r} is not valid UTF-8 text; nothing was created")
    from curiosity_tui.ledger.sampling_record import SamplingTable
    from curiosity_tui.protocol.tension_options import with_tension

    options = {"sampling": SamplingTable().resolved().model_dump(mode="json")}
    meta = RunMeta(
        name=path.name,
        seed=seed,
        config=config,
        contract=args.contract,
        curator=curator,
        options=with_tension(options, tension_setting(args)),
    )
    with Ledger.create(path, meta) as led:
        nodes = len(led.raw_nodes())
        print(
            f"created ledger {path} (config {config}, contract {args.contract}, "
            f"curator {curator}; {nodes} node{'s' if nodes != 1 else ''})"
        )
    return 0


# --------------------------------------------------------------------------- show


def _node_json(node: NodeRecord, t: int) -> dict[str, Any]:
    from curiosity_tui.ledger.node_record import pulse
    from curiosity_tui.ledger.queue import decayed_priority

    out: dict[str, Any] = dict(node)
    out["pulse"] = pulse(node)
    out["decayed_priority"] = round(decayed_priority(node, t), 6)
    return out


def _select(
    led: Ledger, session: int | None, stage: str | None
) -> tuple[dict[str, NodeRecord], int]:
    if session is None:
        if stage is not None:
            raise InputError("--stage needs --session N")
        return led.raw_nodes(), led.last_session
    if session < 0:
        raise InputError(f"--session must be 0 or more, got {session}")
    try:
        return led.snapshot(session, stage), session
    except LedgerError as err:
        sessions = sorted({s for s, _, _ in led.snapshot_index()})
        have = ", ".join(str(s) for s in sessions) or "none"
        raise InputError(f"{err} (sessions with snapshots: {have})") from None


def _show(args: argparse.Namespace) -> int:
    from curiosity_tui.ledger.ledger import Ledger
    from curiosity_tui.ledger.node_record import pulse
    from curiosity_tui.ledger.queue import decayed_priority, queue

    with Ledger.open(args.path) as led:
        nodes, session = _select(led, args.session, args.stage)
        meta = led.meta.model_dump(mode="json")  # read first: a failure is the only line
        if led.recovered:  # e.g. a damaged projection: what is shown is the journal's replay
            print(f"{args.path}: {led.recovered}", file=sys.stderr)
        t = session + 1
        ordered = sorted(nodes.values(), key=lambda n: int(n["id"][1:]))
        if args.json:
            doc = {
                "nodes": [_node_json(n, t) for n in ordered],
                "session": session,
                "stage": args.stage,
                "meta": meta,
            }
            json.dump(doc, sys.stdout, ensure_ascii=False, indent=1, sort_keys=False)
            sys.stdout.write("\n")
            return 0
        what = "projection" if args.session is None else f"snapshot after session {session}"
        if args.stage:
            what += f" ({args.stage})"
        print(
            f"{led.path.name}: {what}; config {meta['config']}, contract {meta['contract']}, "
            f"curator {meta['curator']}; {len(ordered)} node(s), last session {led.last_session}"
        )
        print(f"seed: {_one_line(meta['seed'])}")
        order = {n["id"]: i for i, n in enumerate(queue(ordered, t), start=1)}
        for n in ordered:
            pos = f"#{order[n['id']]}" if n["id"] in order else "-"
            cp = f" priority {n['curator_priority']}" if n.get("curator_priority") else ""
            parent = n["parent"] or "-"
            print(
                f"{n['id']:>5} {n['status']:<8} pulse {pulse(n):>2} "
                f"prio {decayed_priority(n, t):6.3f} queue {pos:>4}{cp} parent {parent:<5} "
                f"facts {len(n['facts'])} preserved {len(n['preserved'])}  {_one_line(n['text'])}"
            )
        return 0


def _one_line(text: str, width: int = 100) -> str:
    """Whitespace collapsed, control characters escaped, cut to ``width``."""
    flat = " ".join(text.split())
    flat = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in flat)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# --------------------------------------------------------------------------- render


def _render(args: argparse.Namespace) -> int:
    from curiosity_tui.ledger.ledger import Ledger

    with Ledger.open(args.path) as led:
        session = led.last_session + 1 if args.session is None else args.session
        if session < 1:
            raise InputError(f"--session must be 1 or more, got {session}")
        if session > led.last_session + 1:
            raise InputError(
                f"{led.path} has {led.last_session} committed session(s); "
                f"the next is {led.last_session + 1}, not {session}"
            )
        text = led.rendering(session)
    sys.stdout.write(text if args.raw else terminal_safe(text))
    return 0


# --------------------------------------------------------------------------- verify


def _verify(args: argparse.Namespace) -> int:
    from curiosity_tui.ledger.ledger import verify

    path: Path = args.path
    if not path.exists():
        raise LedgerError(f"no such ledger: {path}")
    try:
        report = verify(path)
    except CorruptLedgerError as err:  # projection unreadable and the like
        print(f"{path}: FAILED: {err}", file=sys.stderr)
        return 1
    if report.ok:
        print(f"{path}: {report.summary()}")
        return 0
    print(f"{path}: {report.summary()}", file=sys.stderr)
    return 1
