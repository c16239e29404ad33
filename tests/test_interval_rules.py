"""Rules that use the uncertainty (issue 24 items 1-2; decisions 423, 424): the interval rule
kinds beside the mean ones, the bootstrap p-value that inverts the interval, and the family
corrections on a hand-computed fixture of six p-values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from curiosity_tui.analysis.aggregate import MetricAggregate, RunValue
from curiosity_tui.analysis.family import adjust
from curiosity_tui.analysis.interval_rule import read_interval
from curiosity_tui.analysis.lockchain import lock
from curiosity_tui.analysis.plan import PlanError, parse_plan
from curiosity_tui.analysis.registry import Registry
from curiosity_tui.analysis.rundata import RunData, RunSession
from curiosity_tui.analysis.verdict import evaluate_rule, format_verdict

T, C = "C+cur", "B-armed+cur"


def _registry() -> Registry:
    reg = Registry()
    reg.register(
        "score",
        definition="a fixture score",
        unit="points",
        denominator="per run",
        higher_is_better=True,
    )(lambda run: run.meta.get("score"))
    reg.register(
        "cost",
        definition="a fixture cost",
        unit="points",
        denominator="per run",
        higher_is_better=False,
    )(lambda run: run.meta.get("cost"))
    return reg


def _plan_text(kind: str, extra: str = "", comparisons: str = "") -> str:
    return f"""
name = "fixture"
configurations = ["{T}", "{C}"]
runs = 3
sessions = 1
seed_question = "Did the press cause it?"
model = "m"
epsilon = 0.15
metrics = ["score", "cost"]
{extra}
[budgets]
[rule]
kind = "{kind}"
pairs = [["{T}", "{C}"]]
metrics = ["score"]
{comparisons}
"""


def _runs(score_t: list[float], score_c: list[float], cost: float = 1.0) -> list[RunData]:
    out = []
    for cfg, values in ((T, score_t), (C, score_c)):
        for i, v in enumerate(values):
            meta = {"score": v, "cost": cost + (i if cfg == T else 0)}
            out.append(
                RunData(
                    config=cfg, run_id=f"{cfg}-r{i}", meta=meta, sessions=[RunSession(session=1)]
                )
            )
    return out


WIDE = ([0.0, 10.0, 2.0], [1.0, 3.0, 2.0])  # means 4 vs 2: +2, 95% interval [-2.0, 7.67]
TIGHT = ([5.0, 5.1, 4.9], [1.0, 1.1, 0.9])  # +4, interval [3.87, 4.13]


def _verdict(kind: str, data: tuple[list[float], list[float]], extra: str = ""):  # noqa: ANN202
    reg = _registry()
    plan = parse_plan(_plan_text(kind, extra), registry=reg)
    return evaluate_rule(plan, _runs(*data), registry=reg)


def test_mean_rule_met_where_the_interval_rule_is_not() -> None:
    v = _verdict("any_metric_beats_in_all", WIDE)
    c = v.by_metric[0].clauses[0]
    assert v.outcome == "met" and c.mean_counts is True
    assert c.by_interval is not None and c.by_interval.counts is False
    assert c.by_interval.low == pytest.approx(-2.0) and c.by_interval.low < 0 < c.advantage
    assert c.rules_agree is False
    text = "\n".join(format_verdict(v))
    assert "interval rule (beside): advantage +2.00 [-2.00, 7.67]" in text
    assert "DIFFERS from the mean rule (beats)" in text


def test_interval_rule_not_met_where_the_mean_rule_is() -> None:
    v = _verdict("any_metric_interval_beats_in_all", WIDE)
    c = v.by_metric[0].clauses[0]
    assert v.outcome == "not_met" and c.outcome == "does_not_beat" and c.mean_outcome == "beats"
    text = "\n".join(format_verdict(v))
    assert "interval rule (decides)" in text and "DIFFERS from the mean rule (beats)" in text
    both = _verdict("any_metric_interval_beats_in_all", TIGHT)
    assert both.outcome == "met" and both.by_metric[0].clauses[0].rules_agree is True


def test_alpha_and_method_are_plan_fields_that_change_the_interval() -> None:
    data = ([3.0, 4.0, 5.0], [1.0, 2.0, 3.0])
    v95 = _verdict("all_metrics_interval_beat_in_all", data)
    v999 = _verdict(
        "all_metrics_interval_beat_in_all", data, 'alpha = 0.001\ninterval_method = "basic"'
    )
    c95, c999 = v95.by_metric[0].clauses[0], v999.by_metric[0].clauses[0]
    assert c95.by_interval.level == pytest.approx(0.95) and v95.outcome == "met"
    assert c999.by_interval.method == "basic" and c999.by_interval.low < c95.by_interval.low
    assert v999.outcome == "not_met" and c999.interval.level == pytest.approx(0.999)
    with pytest.raises(PlanError, match="alpha"):
        parse_plan(_plan_text("any_metric_beats_in_all", "alpha = 0.7"), registry=_registry())
    with pytest.raises(PlanError, match="interval_method"):
        parse_plan(
            _plan_text("any_metric_beats_in_all", 'interval_method = "bca"'), registry=_registry()
        )


def _agg(config: str, values: list[float]) -> MetricAggregate:
    return MetricAggregate(
        metric="score",
        config=config,
        value=float(np.mean(values)),
        n=len(values),
        n_missing=0,
        per_run=[RunValue(run_id=f"r{i}", value=v) for i, v in enumerate(values)],
    )


@pytest.mark.parametrize("method", ["percentile", "basic"])
def test_p_value_inverts_the_interval_and_the_interval_implies_the_mean(method: str) -> None:
    """On 200 random pairs of arms: the interval lies above the margin exactly when p < alpha
    (but where the two sit within one bootstrap draw of each other), and an interval that
    beats never goes with a mean that does not (the interval holds the point)."""
    rng = np.random.default_rng(24)
    decided = 0
    for k in range(200):
        n_t, n_c = rng.integers(2, 7, size=2)
        t = list(rng.normal(rng.normal(0.5, 0.5), 1.0, n_t))
        c = list(rng.normal(0.0, 1.0, n_c))
        margin = float(rng.choice([0.0, 0.25]))
        r = read_interval(
            _agg(f"t{k}", t),
            _agg(f"c{k}", c),
            higher_is_better=True,
            margin=margin,
            ties="not_met",
            alpha=0.1,
            method=method,
        )
        assert r.p_value is not None and r.low is not None and r.point is not None
        if r.low > margin:
            assert r.point > margin
        if abs(r.p_value - 0.1) > 2.0 / r.n_boot:
            assert (r.low > margin) == (r.p_value < 0.1), (k, r)
            decided += 1
    assert decided > 150


# --------------------------------------------------------------------- family corrections

SIX = [0.01, 0.04, 0.03, 0.005, 0.20, 0.02]


def test_family_corrections_on_six_p_values_by_hand() -> None:
    # sorted: .005 .01 .02 .03 .04 .20 (m = 6)
    # Holm: 6(.005)=.03, 5(.01)=.05, 4(.02)=.08, 3(.03)=.09, 2(.04)=.08 -> .09 (monotone), .20
    assert adjust(SIX, "holm") == pytest.approx([0.05, 0.09, 0.09, 0.03, 0.20, 0.08])
    assert adjust(SIX, "bonferroni") == pytest.approx([0.06, 0.24, 0.18, 0.03, 1.0, 0.12])
    # BH: m p / rank = .03 .03 .04 .045 .048 .20, then the running minimum from the top
    assert adjust(SIX, "bh") == pytest.approx([0.03, 0.048, 0.045, 0.03, 0.20, 0.04])
    assert adjust(SIX, "none") == SIX
    assert adjust([0.01, None], "bonferroni") == pytest.approx([0.02, 1.0])


def test_family_corrections_match_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    for _ in range(50):
        p = list(rng.uniform(0, 0.2, int(rng.integers(1, 12))))
        for ours, theirs in (("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")):
            want = multipletests(p, method=theirs)[1]
            assert adjust(p, ours) == pytest.approx(list(want), abs=1e-12)


COMPARISONS = f"""
[[comparisons]]
name = "first"
metrics = ["score"]
[comparisons.rule]
kind = "any_metric_interval_beats_in_all"
pairs = [["{T}", "{C}"]]
metrics = ["score"]

[[comparisons]]
name = "second"
metrics = ["cost"]
[comparisons.rule]
kind = "any_metric_interval_beats_in_all"
pairs = [["{T}", "{C}"]]
metrics = ["cost"]
"""


def test_a_plan_with_comparisons_declares_its_family_and_the_verdict_shows_both(
    tmp_path: Path,
) -> None:
    from curiosity_tui.analysis.verdict import read_as_family

    reg = _registry()
    bare = tmp_path / "bare.toml"
    bare.write_text(_plan_text("any_metric_beats_in_all", comparisons=COMPARISONS))
    with pytest.raises(PlanError, match="2 \\[\\[comparisons\\]\\] and no family"):
        lock(bare, "before-runs", registry=reg, runs_dir=tmp_path / "none")
    plan = parse_plan(
        _plan_text("any_metric_beats_in_all", 'family = "bonferroni"', COMPARISONS), registry=reg
    )
    runs = _runs([3.0, 4.0, 5.0], [1.0, 2.0, 3.0])
    verdicts = [
        evaluate_rule(
            plan.model_copy(update={"metrics": c.metrics, "rule": c.rule}), runs, registry=reg
        )
        for c in plan.comparisons
    ]
    read_as_family(verdicts, "bonferroni", plan.alpha)
    first = verdicts[0].by_metric[0].clauses[0]
    raw = first.by_interval.p_value
    assert raw is not None and 0 < raw < 0.05 and first.p_adjusted == pytest.approx(min(1, 2 * raw))
    assert verdicts[0].outcome == "met"
    assert verdicts[0].adjusted_outcome == ("met" if 2 * raw < 0.05 else "not_met")
    # the cost arm is worse for the treatment (lower is better): no win raw or adjusted
    assert verdicts[1].outcome == "not_met" and verdicts[1].adjusted_outcome == "not_met"
    text = "\n".join(format_verdict(verdicts[0]))
    assert "read in the plan's family of comparisons (bonferroni" in text
    assert "bonferroni-adjusted" in text and "p 0.0" in text
