"""Pilot plans, the closed metric set, the hash-chained lock, require_lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curiosity_tui.analysis.prereg import (
    ChainError,
    NotRegisteredError,
    PlanError,
    lock,
    lock_metadata,
    parse_plan,
    plan_diffs,
    read_chain,
    require_lock,
    verify_chain,
)
from curiosity_tui.cli import main
from curiosity_tui.errors import InputError

PLAN = """\
name = "pilot-test"
configurations = ["B-armed+cur", "B-armed-cur", "C+cur", "C-cur"]
runs = 3
sessions = 5
seed_question = "Did the printing press cause the Reformation?"
model = "test-model"
epsilon = 0.15
metrics = ["max_depth", "nodes_worked", "live_nodes", "closed_nodes", "return_conditions_set", "preserve_share"]
aggregation = "mean"

[budgets]
session_completion_tokens = 4000
candidate_completion_tokens = 260

[rule]
kind = "any_metric_beats_in_all"
treatment = ["C+cur", "C-cur"]
control = ["B-armed+cur", "B-armed-cur"]
pairs = [["C+cur", "B-armed+cur"], ["C-cur", "B-armed-cur"]]
metrics = RULE_METRICS
margin = 0.0
ties = "not_met"
text = "C+cur beats B-armed+cur and C-cur retains that advantage over B-armed-cur"
"""


def plan_text(rule_metrics: str = '["max_depth"]', **replace: str) -> str:
    text = PLAN.replace("RULE_METRICS", rule_metrics)
    for old, new in replace.items():
        text = text.replace(old, new)
    return text


def write_plan(tmp_path: Path, text: str, name: str = "plan.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_valid_plan_parses() -> None:
    plan = parse_plan(plan_text('["max_depth", "nodes_worked"]'))
    assert plan.rule.metrics == ["max_depth", "nodes_worked"]
    assert plan.rule.pairs == [("C+cur", "B-armed+cur"), ("C-cur", "B-armed-cur")]
    assert plan.budgets.session_completion_tokens == 4000


@pytest.mark.parametrize(
    ("rule_metrics", "reason"),
    [
        (
            '"at least one structural metric beyond return-condition bookkeeping"',
            "is a description, not a list of metric names",
        ),
        ('["*"]', "names a category or pattern and leaves the set open"),
        ('["structural"]', "names a category or pattern"),
        ('["all"]', "names a category or pattern"),
        ('["max_depth", "structural metrics beyond bookkeeping"]', "not a metric name"),
        ('["max_dept"]', "unknown metric 'max_dept' \\(did you mean max_depth"),
        ('["persistence_pulse3"]', "not in the plan's admissible list"),
        ("[]", "is empty"),
        ('"max_depth"', 'must be a list of names: write metrics = \\["max_depth"\\]'),
        ('["max_depth", "max_depth"]', "twice"),
        ('["preserve_share"]', "has no direction"),
    ],
)
def test_open_or_bad_rule_metric_sets_are_refused(rule_metrics: str, reason: str) -> None:
    with pytest.raises(PlanError, match=reason) as info:
        parse_plan(plan_text(rule_metrics), source="plan.toml")
    msg = str(info.value)
    line = plan_text(rule_metrics).splitlines().index(f"metrics = {rule_metrics}") + 1
    assert msg.startswith(f"plan.toml:{line}: rule.metrics")


def test_missing_rule_metrics_is_refused() -> None:
    text = plan_text().replace('metrics = ["max_depth"]\n', "")
    with pytest.raises(PlanError, match="rule.metrics is missing: the metric set must be closed"):
        parse_plan(text)


def test_admissible_list_itself_must_be_closed() -> None:
    text = plan_text().replace(
        'metrics = ["max_depth", "nodes_worked", "live_nodes", "closed_nodes", '
        '"return_conditions_set", "preserve_share"]',
        'metrics = "all structural metrics"',
    )
    with pytest.raises(PlanError, match=r"^<plan>:8: metrics is a description.*A plan that leaves"):
        parse_plan(text)


def test_guards_check_flags_but_never_open_the_set() -> None:
    bad = plan_text('["max_depth", "return_conditions_set"]').replace(
        'ties = "not_met"', 'ties = "not_met"\nexclude_bookkeeping = true'
    )
    with pytest.raises(
        PlanError, match="'return_conditions_set', which is return-condition bookkeeping"
    ):
        parse_plan(bad)
    ok = plan_text('["max_depth"]').replace(
        'ties = "not_met"',
        'ties = "not_met"\nexclude_bookkeeping = true\nrequire_structural = true',
    )
    assert parse_plan(ok).rule.metrics == ["max_depth"]


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (
            'ties = "not_met"',
            'ties = "not_met"\nmetric_set = "open"',
            "rule.metric_set: unknown key",
        ),
        (
            'kind = "any_metric_beats_in_all"',
            'kind = "at_least_one"',
            "rule.kind 'at_least_one' is not one of",
        ),
        ('["C-cur", "B-armed-cur"]]', '["C-cur", "A"]]', "control must list the second element"),
        ('treatment = ["C+cur", "C-cur"]', 'treatment = ["C-cur"]', "treatment must list"),
        ("runs = 3", "runs = 0", "runs: Input should be greater than 0"),
        ("margin = 0.0", "margin = -1.0", "rule.margin"),
        ('ties = "not_met"', 'ties = "maybe"', "rule.ties"),
        ('aggregation = "mean"', 'aggregation = "pooled"', "aggregation"),
    ],
)
def test_other_plan_errors_name_key_and_line(old: str, new: str, reason: str) -> None:
    with pytest.raises(PlanError, match=reason) as info:
        parse_plan(plan_text(**{old: new}), source="p.toml")
    assert str(info.value).startswith("p.toml:")


def test_pairs_must_name_planned_configurations() -> None:
    text = plan_text(
        **{
            '["C-cur", "B-armed-cur"]]': '["C-cur", "A"]]',
            'control = ["B-armed+cur", "B-armed-cur"]\n': "",
        }
    )
    with pytest.raises(PlanError, match=r"^p.toml:\d+: rule.pairs names configuration 'A'"):
        parse_plan(text, source="p.toml")


def test_plan_errors_are_input_errors_and_bad_toml_is_reported() -> None:
    assert issubclass(PlanError, InputError)
    with pytest.raises(PlanError, match="not valid TOML"):
        parse_plan("name = ", source="p.toml")
    with pytest.raises(PlanError, match=r"\[rule\] is missing"):
        parse_plan(plan_text().split("[rule]")[0])


def test_lock_appends_a_hash_chain_and_amendments_need_reasons(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, plan_text())
    chain = tmp_path / "prereg.jsonl"
    e1 = lock(plan, "before-runs", ts="2026-01-01T00:00:00Z")
    assert chain.is_file()  # default: beside the plan
    assert e1.seq == 1 and e1.prev == "0" * 64 and e1.stage == "before-runs"
    assert e1.plan_text == plan.read_text()
    with pytest.raises(ChainError, match="already locked at 'before-runs'"):
        lock(plan, "before-runs", reason="again")
    plan.write_text(plan_text('["max_depth", "nodes_worked"]'))
    with pytest.raises(ChainError, match="amendment \\(seq 2\\) needs --reason"):
        lock(plan, "after-mechanical-results")
    e2 = lock(plan, "after-mechanical-results", reason="admit coverage")
    assert e2.prev == e1.hash and e2.seq == 2
    with pytest.raises(ChainError, match="would go back in time"):
        lock(plan, "after-shakeout", reason="late")
    e3 = lock(plan, "after-rater-1", reason="no change, recorded")
    e4 = lock(plan, "after-rater-2", reason="no change, recorded")
    e5 = lock(plan, "after-key", reason="done")
    diff = plan_diffs(read_chain(chain))
    assert diff.startswith("seq 1 (before-runs) → seq 2 (after-mechanical-results): admit coverage")
    assert '-metrics = ["max_depth"]' in diff and '+metrics = ["max_depth", "nodes_worked"]' in diff
    assert "seq 2 (after" in diff and "seq 3" not in diff.split("\n", 1)[1]
    assert [e.seq for e in read_chain(chain)] == [1, 2, 3, 4, 5]
    assert e3.stage == "after-rater-1" and e4.prev == e3.hash and e5.prev == e4.hash
    rep = verify_chain(chain)
    assert rep.ok and rep.entries == 5
    with pytest.raises(ChainError, match="unknown stage 'after-lunch'"):
        lock(plan, "after-lunch", reason="x")


def test_open_rule_is_refused_at_lock_and_nothing_is_written(tmp_path: Path) -> None:
    plan = write_plan(
        tmp_path,
        plan_text('"at least one structural metric beyond return-condition bookkeeping"'),
    )
    with pytest.raises(PlanError, match="leaves its metric set open cannot be locked"):
        lock(plan, "before-runs")
    assert not (tmp_path / "prereg.jsonl").exists()


def test_tampering_is_detected_with_the_seq(tmp_path: Path) -> None:
    plan = write_plan(tmp_path, plan_text())
    lock(plan, "before-runs")
    plan.write_text(plan_text('["max_depth", "nodes_worked"]'))
    lock(plan, "after-shakeout", reason="r")
    chain = tmp_path / "prereg.jsonl"
    lines = chain.read_text().splitlines()
    first = json.loads(lines[0])
    first["plan_text"] = first["plan_text"].replace('["max_depth"]', '["nodes_worked"]')
    chain.write_text(json.dumps(first) + "\n" + lines[1] + "\n")
    rep = verify_chain(chain)
    assert not rep.ok and rep.first_bad_seq == 1 and "hash does not match" in rep.problem
    with pytest.raises(ChainError, match="seq 1"):
        lock(plan, "after-key", reason="x")
    # deleting an entry breaks the chain too
    chain.write_text(lines[1] + "\n")
    rep = verify_chain(chain)
    assert not rep.ok and rep.first_bad_seq == 2 and "expected" in rep.problem


def test_require_lock(tmp_path: Path) -> None:
    run_dir = tmp_path / "pilot"
    run_dir.mkdir()
    with pytest.raises(NotRegisteredError, match="no prereg.jsonl here.*--unregistered"):
        require_lock(run_dir)
    plan = write_plan(run_dir, plan_text())
    lock(plan, "after-shakeout")
    with pytest.raises(NotRegisteredError, match="no lock at stage before-runs"):
        require_lock(run_dir)
    (run_dir / "prereg.jsonl").unlink()
    e1 = lock(plan, "before-runs")
    assert require_lock(run_dir) == e1
    plan.write_text(plan_text('["max_depth", "nodes_worked"]'))
    e2 = lock(plan, "after-shakeout", reason="amendment 1")
    assert require_lock(run_dir) == e2  # the governing (latest) plan
    ledger_dir = run_dir / "C+cur-r0"
    ledger_dir.mkdir()
    assert require_lock(ledger_dir) == e2  # chain found in the parent
    assert require_lock(run_dir, plan_text=plan.read_text()) == e2
    plan.write_text(plan_text('["nodes_worked"]'))  # edited after the lock
    with pytest.raises(NotRegisteredError, match="differs from the locked plan \\(seq 2"):
        require_lock(run_dir, plan_text=plan.read_text())
    meta = lock_metadata(e2)
    assert meta["prereg"]["hash"] == e2.hash and meta["unregistered"] is False
    assert lock_metadata(None) == {"prereg": None, "unregistered": True}


def test_cli_prereg_lock_show_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = write_plan(tmp_path, plan_text())
    chain = tmp_path / "runs" / "prereg.jsonl"
    assert main(["prereg", "lock", str(plan), "--stage", "before-runs", "--chain", str(chain)]) == 0
    assert "seq 1 at stage before-runs" in capsys.readouterr().out
    assert main(["prereg", "lock", str(plan), "--stage", "after-key", "--chain", str(chain)]) == 2
    assert "needs --reason" in capsys.readouterr().err
    args = ["prereg", "lock", str(plan), "--stage", "after-key", "--chain", str(chain)]
    assert main([*args, "--reason", "unchanged at the key"]) == 0
    capsys.readouterr()
    assert main(["prereg", "show", str(chain.parent)]) == 0
    out = capsys.readouterr().out
    assert "before-runs" in out and "after-key" in out and "reason: unchanged at the key" in out
    assert "(plan unchanged)" in out
    assert main(["prereg", "show", str(chain), "--plan", "1"]) == 0
    assert capsys.readouterr().out == plan.read_text()
    assert main(["prereg", "show", str(chain), "--diff"]) == 0
    assert capsys.readouterr().out.strip() == "the plan text never changed"
    assert main(["prereg", "verify", str(chain)]) == 0
    assert "ok, 2 entries" in capsys.readouterr().out
    chain.write_text(chain.read_text().replace("before-runs", "after-shakeout", 1))
    assert main(["prereg", "verify", str(chain), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["first_bad_seq"] == 1
    bad = write_plan(tmp_path, plan_text('["*"]'), "bad.toml")
    assert main(["prereg", "lock", str(bad), "--stage", "before-runs"]) == 2
    err = capsys.readouterr().err
    assert "bad.toml:" in err and "rule.metrics" in err and "leaves the set open" in err


def test_the_documented_example_plan_parses() -> None:
    import curiosity_tui.analysis.prereg as mod

    doc = mod.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\nThe decision-rule language", 1)[0]
    text = "\n".join(line[4:] for line in block.splitlines())
    plan = parse_plan(text, source="prereg.py docstring")
    assert plan.rule.metrics == ["max_depth"] and plan.runs == 3
