"""``study init DIR``: a study is a folder the tool understands (issue 28, item 1; decision
445) — ``plan.toml`` (with its ``[pack]``), ``runs/``, ``packs/``, ``keys/``, ``report/``;
``prereg.jsonl`` appears beside the plan at the first lock. The workspace finds the runs
under ``runs/*/`` and the packs under ``packs/``."""

from __future__ import annotations

import argparse
from pathlib import Path

from curiosity_tui.errors import InputError

FOLDERS = ("runs", "packs", "keys", "report")

PLAN_TEMPLATE = """\
# The study's plan (docs/plan.md lists every key). Edit it, then check and lock it before
# any run:
#
#   curiosity-tui prereg lock {d}/plan.toml --stage before-runs --dry-run   # every check
#   curiosity-tui prereg lock {d}/plan.toml --stage before-runs
#   curiosity-tui pilot run {d}/plan.toml --out {d}/runs/{name} --scripted   # practice first
#   curiosity-tui pack build {d}/runs/{name} --scheme pilot-02 --out {d}/packs/{name} \\
#       --key-out {d}/keys/{name}.key.json
#   curiosity-tui verdict {d}/runs/{name}
#   curiosity-tui report {d}/runs/{name} --out {d}/report
#   curiosity-tui open {d}                                                   # the workspace

name = "{name}"
model = "gpt-4o-mini"
runs = 3
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
epsilon = 0.15
contract = "pilot-02"
configurations = ["C+cur", "B-armed+cur"]
metrics = ["max_depth", "nodes_worked_voluntary", "persistence_pulse3"]

[budgets]
session_completion_tokens = 4000

[rule]
kind = "any_metric_beats_in_all"
pairs = [["C+cur", "B-armed+cur"]]
metrics = ["max_depth"]
text = "C+cur builds deeper than B-armed+cur in every pair"

[pack]
sessions = "1,last"   # the first and the last session of each run
scheme = "pilot-02"
"""


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("study", help="a study folder: plan, runs, packs, keys, report")
    ssub = s.add_subparsers(dest="study_command", metavar="ACTION")
    i = ssub.add_parser("init", help="lay out a new study folder with a plan to edit")
    i.add_argument("dir", type=Path, metavar="DIR")
    i.add_argument("--name", default=None, help="the plan's name (default: the folder's name)")
    i.set_defaults(handler=_init)
    s.set_defaults(handler=lambda a: (s.print_help(), 2)[1])


def _init(args: argparse.Namespace) -> int:
    from curiosity_tui.analysis.plan import PLAN_NAME_RE

    root: Path = args.dir
    name = args.name or root.resolve().name
    if not PLAN_NAME_RE.fullmatch(name) or ".." in name:
        raise InputError(
            f"{root}: {name!r} cannot name a plan (letters, digits, . _ + -); give --name"
        )
    plan = root / "plan.toml"
    if plan.exists():
        raise InputError(f"{plan}: already exists; a study folder is laid out once")
    if root.exists() and not root.is_dir():
        raise InputError(f"{root}: is a file, not a folder")
    for sub in FOLDERS:
        (root / sub).mkdir(parents=True, exist_ok=True)
    plan.write_text(PLAN_TEMPLATE.format(d=root, name=name), encoding="utf-8")
    print(f"study {name} laid out in {root}: plan.toml, " + ", ".join(f"{x}/" for x in FOLDERS))
    print(
        f"next: edit {plan}, then: curiosity-tui prereg lock {plan} --stage before-runs --dry-run"
    )
    return 0
