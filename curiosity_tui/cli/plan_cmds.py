"""``plan power PLAN.toml [--pilot DIR | --sd METRIC=VALUE ...]``: the design analysis of a
plan before its runs (issue 24, item 3; analysis/power.py, decision 426)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from curiosity_tui.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plan", help="a plan's design analysis before the runs")
    psub = p.add_subparsers(dest="plan_command", metavar="COMMAND", required=True)
    pw = psub.add_parser(
        "power",
        help="minimum detectable difference per clause, and runs per arm for a difference",
        description="By simulation: per-run values resampled from a pilot's runs (--pilot) or "
        "normal with a stated SD (--sd), each simulated experiment read by the interval rule "
        "at the plan's alpha and runs per arm.",
    )
    pw.add_argument("plan", type=Path, metavar="PLAN.toml")
    pw.add_argument("--pilot", type=Path, help="a pilot's run dir (ledgers or *.run.json)")
    pw.add_argument("--sd", action="append", default=[], metavar="METRIC=VALUE")
    pw.add_argument(
        "--difference", action="append", default=[], metavar="METRIC=VALUE",
        help="a difference to detect: power at the plan's runs and the runs per arm needed",
    )  # fmt: skip
    pw.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    pw.add_argument("--sims", type=int, default=1000, help="simulated experiments (1000)")
    pw.add_argument("--boot", type=int, default=200, help="bootstrap draws per experiment")
    pw.add_argument("--seed", type=int, default=20240601)
    pw.add_argument("--out", type=Path, help="also write the analysis as JSON here")
    pw.add_argument("--json", action="store_true")
    pw.set_defaults(handler=_power)


def _pairs(values: list[str], flag: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for v in values:
        name, sep, num = v.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(num)
        except ValueError:
            raise InputError(f"{flag} {v!r}: give METRIC=VALUE (a number)") from None
    return out


def _power(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.plan import load_plan
    from curiosity_tui.analysis.power import design_analysis, format_design
    from curiosity_tui.analysis.rundata import load_runs

    sds = _pairs(args.sd, "--sd")
    diffs = _pairs(args.difference, "--difference")
    if not 0.0 < args.power < 1.0 or args.sims < 10 or args.boot < 10:
        raise InputError("--power must be in (0, 1); --sims and --boot at least 10")
    plan, _ = load_plan(args.plan)
    pilot = load_runs([args.pilot]) if args.pilot else None
    da = design_analysis(
        plan, pilot=pilot, sds=sds, differences=diffs, power=args.power, sims=args.sims,
        n_boot=args.boot, seed=args.seed,
    )  # fmt: skip
    text = json.dumps(da.model_dump(mode="json"), indent=1)
    if args.out:
        try:
            args.out.write_text(text + "\n", encoding="utf-8")
        except OSError as err:
            raise InputError(f"{args.out}: cannot write: {err.strerror}") from err
    print(text if args.json else format_design(da))
    return 0
