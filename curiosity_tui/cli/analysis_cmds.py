"""CLI commands of the analysis layer: ``prereg lock|show|verify``, ``verdict``, ``sweep``,
``metrics``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from curiosity_tui.cli.csv_args import add_csv_arg, csv_out
from curiosity_tui.errors import InputError

if TYPE_CHECKING:
    from curiosity_tui.analysis.tables import MetricsDoc


def register(sub: argparse._SubParsersAction) -> None:
    """``prereg``, ``verdict``, ``sweep``, ``report``, ``metrics``, in that order."""
    _register_prereg(sub)
    _register_verdict_sweep_report(sub)
    _register_metrics(sub)


def _register_prereg(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prereg",
        help="lock a pilot plan into the pre-registration chain; show or verify the chain",
        description="Pre-registration (S7): an append-only, hash-chained prereg.jsonl.",
    )
    psub = p.add_subparsers(dest="prereg_command", metavar="ACTION")
    lk = psub.add_parser("lock", help="validate PLAN.toml and append it to the chain")
    lk.add_argument("plan", type=Path, metavar="PLAN.toml")
    lk.add_argument(
        "--stage",
        required=True,
        help="before-runs, after-shakeout, after-mechanical-results, after-rater-N, after-key",
    )
    lk.add_argument("--reason", default="", help="why (required for every amendment)")
    lk.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be locked and every check; write nothing (exit 1 if refused)",
    )
    lk.add_argument(
        "--warn-only",
        action="store_true",
        help="lock a plan that cannot produce the pack or a metric it names, with a warning "
        "for each (refused by default)",
    )
    lk.add_argument(
        "--design",
        type=Path,
        default=None,
        metavar="DESIGN.json",
        help="record the plan's design analysis (`plan power --out`) in the lock",
    )
    lk.add_argument(
        "--chain",
        type=Path,
        default=None,
        metavar="DIR/prereg.jsonl",
        help="the chain to append to (default: prereg.jsonl beside the plan)",
    )
    lk.set_defaults(handler=_prereg_lock)
    for name, fn, helptext in (
        ("show", _prereg_show, "print the chronology of locks"),
        (
            "verify",
            _prereg_verify,
            "check the hash chain and that the runs beside it agree with it; exit 1 naming "
            "the first problem",
        ),
    ):
        sp = psub.add_parser(name, help=helptext)
        sp.add_argument(
            "chain",
            type=Path,
            nargs="?",
            default=Path("."),
            metavar="CHAIN_OR_DIR",
            help="prereg.jsonl or the directory holding it (default: .)",
        )
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        if name == "verify":
            sp.add_argument(
                "--runs",
                type=Path,
                default=None,
                metavar="DIR",
                help="where the runs are (default: the chain's directory)",
            )
        if name == "show":
            sp.add_argument("--plan", type=int, metavar="SEQ", help="print that entry's plan text")
            sp.add_argument(
                "--diff", action="store_true", help="show what each amendment changed in the plan"
            )
        sp.set_defaults(handler=fn)
    p.set_defaults(handler=lambda a: (p.print_help(), 2)[1])


def _register_verdict_sweep_report(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser(
        "verdict",
        help="evaluate the locked decision rule on the locked metrics only",
        description="Mechanical verdict: latest lock's rule, its metric set only; every other "
        "metric is printed as exploratory and cannot change it.",
    )
    v.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    v.add_argument("--json", action="store_true")
    v.add_argument(
        "--allow-mixed",
        action="store_true",
        help="evaluate runs with scripted and model replies together (refused by default; the "
        "output names the scripted runs)",
    )
    v.set_defaults(handler=_verdict)

    s = sub.add_parser(
        "sweep",
        help="ε sweep: re-classify recorded Δ values (not a set of runs)",
    )
    s.add_argument("paths", type=Path, nargs="*", metavar="RUN_DIR_OR_LEDGER")
    s.add_argument(
        "--deltas", type=Path, help="a file of Δ values (JSON list, or one number a line)"
    )
    s.add_argument(
        "--epsilons",
        default=None,
        help="comma-separated thresholds (default 0.05,0.10,0.15,0.20,0.25,0.30,0.40)",
    )
    s.add_argument("--pooled", action="store_true", help="one table over all runs")
    s.add_argument("--json", action="store_true")
    s.set_defaults(handler=_sweep)

    rp = sub.add_parser(
        "report",
        help="write a Markdown report: verdict, chronology, tables, ε sweep, figures, audit "
        "counts, limits",
    )
    rp.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    rp.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE.md|DIR",
        help="the Markdown file, or a directory for DIR/report.md; SVG figures go beside it "
        "(with the plots extra: pip install 'curiosity-tui[plots]')",
    )
    rp.add_argument(
        "--pack",
        type=Path,
        action="append",
        default=[],
        metavar="PACK",
        help="add the rating study's section for this pack (GRRAS items and, once unblinded, "
        "the tables per arm); repeatable (default for a study folder: every pack in packs/)",
    )
    rp.add_argument(
        "--key",
        type=Path,
        action="append",
        default=[],
        metavar="KEY",
        help="a pack's key, read only after unblind opened it (default: beside the pack or "
        "in the study's keys/); repeatable",
    )
    rp.set_defaults(handler=_report)


def _register_metrics(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser(
        "metrics",
        help="per-configuration metric tables (per-run values and means)",
    )
    m.add_argument("paths", type=Path, nargs="*", metavar="RUN_DIR_OR_LEDGER")
    m.add_argument("--list", action="store_true", help="list the registry: names, definitions")
    m.add_argument(
        "--reference",
        type=Path,
        action="append",
        default=[],
        metavar="SET.json",
        help="a similarity reference set (repeatable): ceiling, control, near/far floors",
    )
    m.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="CFG,CFG",
        help="also give r (dependency checks vs voluntary actions) over these configurations' "
        "sessions pooled, e.g. --pool C+cur,C-cur (the report's 24-session figure); repeatable",
    )
    m.add_argument("--json", action="store_true")
    add_csv_arg(m, "one row per run × metric")
    add_csv_arg(
        m, "one row per comparison × metric, intervals as ci_low, ci_high", "--csv-differences"
    )
    add_csv_arg(
        m, "one row per run × question: open life, event flag, return latency", "--survival-csv"
    )
    m.add_argument(
        "--survival",
        action="store_true",
        help="also print open life per configuration: pooled Kaplan–Meier table, median with "
        "a bootstrap-by-run interval",
    )
    m.add_argument(
        "--return-within",
        type=_positive_int,
        default=None,
        metavar="K",
        help="k of return_within_k_share (default 2): a met condition counts as returned when "
        "its question is resurfaced within K sessions",
    )
    m.set_defaults(handler=_metrics)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


# ---------------------------------------------------------------------------- prereg


def _chain_arg(path: Path) -> Path:
    from curiosity_tui.analysis.prereg import CHAIN_FILE

    return path / CHAIN_FILE if path.is_dir() else path


def _prereg_lock(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.prereg import CHAIN_FILE, lock

    chain = args.chain if args.chain else args.plan.parent / CHAIN_FILE
    if chain.is_dir():
        chain = chain / CHAIN_FILE
    if args.dry_run:
        from curiosity_tui.analysis.lock_preview import format_preview, preview_lock

        preview = preview_lock(args.plan, args.stage, chain_path=chain, reason=args.reason)
        print(format_preview(preview))
        return 0 if preview.would_lock else 1
    entry = lock(
        args.plan,
        args.stage,
        chain_path=chain,
        reason=args.reason,
        warn_only=args.warn_only,
        design=args.design,
    )
    if args.warn_only:
        _print_plan_warnings(args.plan)
    print(
        f"locked {args.plan} as seq {entry.seq} at stage {entry.stage} in {chain}\n"
        f"  plan sha256 {entry.plan_sha256}\n  entry hash  {entry.hash}"
    )
    return 0


def _print_plan_warnings(plan_path: Path) -> None:
    """Under ``--warn-only``: one warning line per failed plan check (decision 441)."""
    from curiosity_tui.analysis.plan import load_plan
    from curiosity_tui.analysis.plan_checks import plan_checks

    plan, _ = load_plan(plan_path)
    for c in plan_checks(plan, base=plan_path.parent):
        if not c.ok:
            print(f"warning: {plan_path}: {c.name}: {c.detail} (locked under --warn-only)")


def _prereg_show(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.prereg import format_chronology, plan_diffs, read_chain

    chain = _chain_arg(args.chain)
    if not chain.is_file():
        raise InputError(f"{chain}: no such prereg chain")
    entries = read_chain(chain)
    if args.plan is not None:
        match = [e for e in entries if e.seq == args.plan]
        if not match:
            raise InputError(f"{chain}: no entry with seq {args.plan}")
        sys.stdout.write(match[0].plan_text)
        return 0
    if args.json:
        print(json.dumps([e.model_dump() for e in entries], indent=1))
    elif args.diff:
        print(plan_diffs(entries))
    else:
        print(f"{chain}")
        print(format_chronology(entries))
    return 0


def _prereg_verify(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.chronology import verify_chain_and_runs

    chain = _chain_arg(args.chain)
    if not chain.is_file():
        raise InputError(f"{chain}: no such prereg chain")
    rep = verify_chain_and_runs(chain, runs_dir=args.runs)
    if args.json:
        print(rep.model_dump_json(indent=1))
    elif rep.ok:
        print(f"{chain}: ok, {rep.entries} entries; {rep.runs_checked} run(s) agree with it")
    else:
        where = f"seq {rep.first_bad_seq}: " if rep.first_bad_seq is not None else ""
        print(f"{chain}: BROKEN: {where}{rep.problem}")
        for p in rep.chronology_problems:
            print(f"  chronology: {p}")
    if not args.json:
        for note in rep.run_notes:
            print(f"  note: {note}")
    return 0 if rep.ok else 1


# --------------------------------------------------------------------------- verdict


def _verdict(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.verdict import format_report, report_json, verdict_for_dir

    rep = verdict_for_dir(args.run_dir, allow_mixed=args.allow_mixed)
    print(report_json(rep) if args.json else format_report(rep))
    return 0


def _report(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.report import write_report
    from curiosity_tui.analysis.study import study_packs

    packs = args.pack or study_packs(args.run_dir)
    out = write_report(args.run_dir, args.out, packs=packs, keys=args.key)
    print(f"wrote {out}")
    for fig in sorted(out.parent.glob(f"{out.stem}-*.svg")):
        print(f"wrote {fig}")
    return 0


# ----------------------------------------------------------------------------- sweep


def _read_deltas(path: Path) -> list[float]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from err
    try:
        if text.lstrip().startswith("["):
            data = json.loads(text)
            return [float(x) for x in data]
        out: list[float] = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            s = line.split("#", 1)[0].strip()
            if not s:
                continue
            try:
                out.append(float(s))
            except ValueError:
                raise InputError(f"{path}:{lineno}: not a number: {s!r}") from None
        return out
    except (json.JSONDecodeError, TypeError, ValueError) as err:
        raise InputError(f"{path}: not a list of Δ values: {err}") from err


def _sweep(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.rundata import load_runs
    from curiosity_tui.analysis.sweep import DEFAULT_EPSILONS, format_sweep, sweep, sweep_runs

    eps: tuple[float, ...] = DEFAULT_EPSILONS
    if args.epsilons is not None:  # an empty list is refused, not taken as the default
        try:
            eps = tuple(float(x) for x in args.epsilons.split(",") if x.strip())
        except ValueError:
            raise InputError(f"--epsilons: not a comma-separated list: {args.epsilons!r}") from None
        from curiosity_tui.bounds import check_real

        for e in eps:  # nan, inf, -1 were accepted (docs/errors.md, Numbers)
            check_real(e, flag="--epsilons", low=0.0, high=1.0, low_open=True)
        if not eps:
            raise InputError(f"--epsilons {args.epsilons!r}: no value given")
    results = []
    if args.deltas:
        results.append(sweep(_read_deltas(args.deltas), eps, label=str(args.deltas)))
    if args.paths:
        results.extend(sweep_runs(load_runs(args.paths), eps, by_config=not args.pooled))
    if not args.deltas and not args.paths:
        raise InputError("sweep: give RUN_DIR_OR_LEDGER paths or --deltas FILE")
    if not results:
        raise InputError("sweep: no recorded Δ values in the given runs")
    if args.json:
        print(json.dumps([r.model_dump() for r in results], indent=1))
    else:
        from curiosity_tui.analysis.practice import banner, replies_of

        label = banner(replies_of(r.replies for r in results))
        print("\n\n".join([label] * bool(label) + [format_sweep(r) for r in results]))
    return 0


# --------------------------------------------------------------------------- metrics


def _metrics(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.correlation import parse_pool
    from curiosity_tui.analysis.registry import default_registry
    from curiosity_tui.analysis.return_latency import with_return_k
    from curiosity_tui.analysis.rundata import load_runs
    from curiosity_tui.analysis.similarity import load_reference_set
    from curiosity_tui.analysis.tables import build, format_tables, metrics_json

    reg = with_return_k(default_registry(), args.return_within)
    if args.survival and args.json:
        raise InputError("metrics: --survival prints a text table; --survival-csv gives the data")
    if args.list:
        if args.json:
            print(json.dumps([m.info().model_dump() for m in reg], indent=1))
        else:
            for m in reg:
                flags = [
                    f
                    for f, on in (("structural", m.structural), ("bookkeeping", m.bookkeeping))
                    if on
                ]
                print(
                    f"{m.name}  [{m.unit}; {', '.join(flags) or '-'}]\n    {m.definition}\n    denominator: {m.denominator}"
                )
        return 0
    if not args.paths:
        raise InputError("metrics: give RUN_DIR_OR_LEDGER paths (or --list)")
    runs = load_runs(args.paths)
    if not runs:
        raise InputError("metrics: no runs found (ledger dirs or *.run.json files)")
    refs = [(str(p), load_reference_set(p)) for p in args.reference]
    pools = [parse_pool(p) for p in args.pool]
    if args.survival_csv is not None:
        from curiosity_tui.analysis.survival_csv import SURVIVAL_COLUMNS, survival_rows

        if "-" in (args.csv, args.csv_differences) and args.survival_csv == "-":
            raise InputError("metrics: only one CSV export can go to stdout")
        csv_out(args.survival_csv, SURVIVAL_COLUMNS, survival_rows(runs))
        if args.csv is None and args.csv_differences is None:
            return 0
    if args.csv is not None or args.csv_differences is not None:
        _metrics_csv(args, build(runs, reg, refs, pools))
        return 0
    fn = metrics_json if args.json else format_tables
    print(fn(runs, reg, refs, pools))
    if not args.json:
        from curiosity_tui.analysis.relay_tables import format_relay_tables

        relay = format_relay_tables(runs)  # relayed runs only: '' for every other run
        if relay:
            print("\n" + relay)
    if args.survival and not args.json:
        from curiosity_tui.analysis.survival_config import format_survival, survival_by_config

        print("\n" + format_survival(survival_by_config(runs)))
    return 0


def _metrics_csv(args: argparse.Namespace, doc: MetricsDoc) -> None:
    from curiosity_tui.analysis.metrics_csv import (
        DIFFERENCE_COLUMNS,
        METRIC_COLUMNS,
        difference_rows,
        metric_rows,
    )

    if args.csv == "-" and args.csv_differences == "-":
        raise InputError("metrics: --csv and --csv-differences cannot both go to stdout")
    if args.csv is not None:
        csv_out(args.csv, METRIC_COLUMNS, metric_rows(doc))
    if args.csv_differences is not None:
        csv_out(args.csv_differences, DIFFERENCE_COLUMNS, difference_rows(doc))
