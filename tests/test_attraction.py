"""Attraction (issue 16, item 4): hand-computed fixtures on constructed runs — a sustained
shift, a one-session spike (not attraction) and none — with a fixed fake embedder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from curiosity_tui.analysis.attraction import (
    AttractionParams,
    attraction,
    leader_regions,
    with_attraction_params,
)
from curiosity_tui.analysis.plan import parse_plan
from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.rundata import RunData
from curiosity_tui.cli import main
from curiosity_tui.errors import InputError


class LetterEmbedder:
    """Text "A …" -> (1, 0, 0), "B …" -> (0, 1, 0), "AB …" -> (0.8, 0.6, 0), "C …" -> (0, 0, 1)."""

    name = "letters-test"
    VECS = {"A": (1.0, 0.0, 0.0), "B": (0.0, 1.0, 0.0), "AB": (0.8, 0.6, 0.0), "C": (0.0, 0.0, 1.0)}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([self.VECS[t.split()[0]] for t in texts])

    async def aembed(self, texts: Sequence[str], *, session: int = 0) -> np.ndarray:
        return self.embed(texts)


EMB = LetterEmbedder()


def _run(nodes: dict[str, tuple[str, int, list[int]]], focus: dict[int, str]) -> RunData:
    """nodes: id -> (text, created, voluntary sessions); focus: session -> focus id."""
    return RunData.model_validate(
        {
            "config": "C-cur",
            "run_id": "r0",
            "nodes": {
                nid: {"id": nid, "text": t, "created": c, "voluntary": v}
                for nid, (t, c, v) in nodes.items()
            },
            "sessions": [{"session": s, "focus": f} for s, f in sorted(focus.items())],
        }
    )


BASE: dict[str, tuple[str, int, list[int]]] = {
    "q1": ("A seed question", 0, []),
    "q2": ("A printing costs", 1, []),
    "q3": ("B city councils", 1, []),
    "q4": ("A paper prices", 2, []),
    "q5": ("B guild records", 3, []),
}


def sustained_run() -> RunData:
    # s1: q1 q2 q3 (A A B); s2: q2 q4 (A A)      -> early share A 4/5, B 1/5
    # s3: q3 q5 (B B)          -> B share 1     -> excess 0.8
    # s4: q5 q6 + q1 voluntary (B B A) -> B 2/3 -> excess 2/3 - 1/5 = 7/15
    # s5: q1 q7 (A A)          -> B 0: the stretch ends at s4
    nodes = {**BASE, "q6": ("B tax rolls", 4, []), "q7": ("A woodcuts", 5, [])}
    nodes["q1"] = ("A seed question", 0, [4])
    return _run(nodes, {1: "q1", 2: "q2", 3: "q3", 4: "q5", 5: "q1"})


def spike_run() -> RunData:
    # s3 is B only (excess 0.8), s4 back to A: a one-session spike
    nodes = {**BASE, "q6": ("A ink trade", 4, []), "q7": ("A woodcuts", 5, [])}
    return _run(nodes, {1: "q1", 2: "q2", 3: "q3", 4: "q4", 5: "q1"})


def flat_run() -> RunData:
    nodes: dict[str, tuple[str, int, list[int]]] = {
        "q1": ("A seed question", 0, []),
        "q2": ("A printing costs", 1, []),
        "q3": ("A paper prices", 2, []),
        "q4": ("A ink trade", 3, []),
        "q5": ("A woodcuts", 4, []),
    }
    return _run(nodes, {1: "q1", 2: "q2", 3: "q3", 4: "q4"})


def test_a_sustained_shift_is_attraction() -> None:
    a = attraction(sustained_run(), embedder=EMB)
    assert a is not None
    assert [r.members for r in a.regions] == [["q1", "q2", "q4", "q7"], ["q3", "q5", "q6"]]
    assert a.early_share == pytest.approx({0: 0.8, 1: 0.2})
    assert a.stretch is not None and a.stretch.region == 1 and a.stretch.sessions == [3, 4]
    assert a.stretch.excess == pytest.approx([0.8, 7 / 15])
    assert a.sustained_sessions == 2
    assert a.stretch.mean_excess == pytest.approx((0.8 + 7 / 15) / 2)
    assert a.representative == "B city councils"


def test_a_one_session_spike_is_not_attraction() -> None:
    a = attraction(spike_run(), embedder=EMB)
    assert a is not None
    assert a.shares[3][1] == pytest.approx(1.0)  # the spike is seen ...
    assert a.stretch is None and a.sustained_sessions == 0  # ... and not counted
    assert a.representative is None


def test_no_shift_no_attraction() -> None:
    a = attraction(flat_run(), embedder=EMB)
    assert a is not None and len(a.regions) == 1 and a.sustained_sessions == 0


def test_the_parameters_decide() -> None:
    run = sustained_run()
    # a margin above both excesses: no stretch; a one-session minimum is refused by the model
    assert attraction(run, AttractionParams(margin=0.9), EMB).stretch is None  # type: ignore[union-attr]
    # the margin between the two excesses: only s3 qualifies, too short for min_sessions 2
    assert attraction(run, AttractionParams(margin=0.6), EMB).stretch is None  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        AttractionParams(min_sessions=1)
    # too few sessions after the early window: undefined, not 0
    assert attraction(run, AttractionParams(early_sessions=5), EMB) is None


def test_leader_clustering_threshold_and_ties() -> None:
    ids = ["q1", "q2", "q3", "q4"]
    texts = ["A one", "B two", "AB three", "C four"]
    # AB has cosine 0.8 with A's leader and 0.6 with B's: it joins A (the most similar)
    regions = leader_regions(ids, texts, EMB, 0.5)
    assert [r.members for r in regions] == [["q1", "q3"], ["q2"], ["q4"]]
    # above 0.8 nobody joins anybody
    assert len(leader_regions(ids, texts, EMB, 0.85)) == 4


def test_registry_metrics_and_plan_parameters() -> None:
    reg = default_registry()
    m = reg.get("attraction_sustained_sessions")
    assert m.group == "attraction" and "leader-v1" in m.definition
    bound = with_attraction_params(reg, AttractionParams(margin=0.5))
    assert "margin 0.5" in bound.get("attraction_excess_share").definition
    assert with_attraction_params(reg, None) is reg


PLAN = """
name = "attraction-plan"
configurations = ["C-cur", "B-armed-cur"]
runs = 3
sessions = 5
seed_question = "Why?"
model = "m"
epsilon = 0.15
metrics = ["attraction_sustained_sessions", "max_depth"]
[budgets]
session_completion_tokens = 4000
[rule]
kind = "any_metric_beats_in_all"
pairs = [["C-cur", "B-armed-cur"]]
metrics = ["attraction_sustained_sessions"]
[attraction]
threshold = 0.3
early_sessions = 1
margin = 0.2
min_sessions = 3
"""


def test_a_plan_locks_the_parameters() -> None:
    plan = parse_plan(PLAN)
    assert plan.attraction == AttractionParams(
        threshold=0.3, early_sessions=1, margin=0.2, min_sessions=3
    )
    with pytest.raises(InputError, match="attraction"):
        parse_plan(PLAN.replace("min_sessions = 3", "min_sessions = 1"))
    with pytest.raises(InputError, match="attraction"):
        parse_plan(PLAN + "window = 4\n")


def test_the_cli_names_the_stretch_and_its_representative(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = Path(__file__).resolve().parents[1] / "ledgers" / "episode-suppression-pilot01"
    assert main(["attraction", str(ledger), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["run"] == "episode-suppression-pilot01" and row["defined"]
    assert row["sustained_sessions"] == len(row["stretch_sessions"]) >= 2
    assert row["representative"] and "tfidf" in row["embedder"]
    plan = tmp_path / "plan.toml"
    plan.write_text(
        PLAN.replace("margin = 0.2", "margin = 0.99").replace(
            "min_sessions = 3", "min_sessions = 2"
        )
    )
    assert main(["attraction", str(ledger), "--plan", str(plan)]) == 0
    out = capsys.readouterr().out
    assert "margin 0.99" in out and " none (" in out


def test_the_default_embedders_regions_are_computed_once_per_run_and_equal_uncached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both attraction metrics of a run cluster the same questions: the default embedder's
    regions are cached by content, and equal the uncached clustering on varied texts."""
    import curiosity_tui.analysis.attraction as at

    rng = np.random.default_rng(3)
    words = ["drift", "model", "ledger", "question", "closure", "evidence", "source", "why"]
    for trial in range(20):
        n = int(rng.integers(1, 40))
        ids = [f"q{i + 1}" for i in range(n)]
        texts = [" ".join(rng.choice(words, size=int(rng.integers(2, 7)))) + "?" for _ in ids]
        threshold = float(rng.choice([0.2, 0.4, 0.7]))
        cached = leader_regions(ids, texts, at.DEFAULT_EMBEDDER, threshold)
        at._default_groups.cache_clear()
        plain = at._leader_groups(ids, texts, at.DEFAULT_EMBEDDER, threshold)
        expect = [(ids[i], texts[i], [ids[j] for j in m]) for i, m in plain]
        assert [(r.leader, r.representative, r.members) for r in cached] == expect, trial
        assert [r.index for r in cached] == list(range(len(cached)))
        cached[0].members.append("mutated")  # a caller's copy: the cache is not touched
        again = leader_regions(ids, texts, at.DEFAULT_EMBEDDER, threshold)
        assert [r.members for r in again] == [e[2] for e in expect]

    calls: list[int] = []
    real_embed = at.DEFAULT_EMBEDDER.embed
    monkeypatch.setattr(
        at.DEFAULT_EMBEDDER, "embed", lambda texts: calls.append(len(texts)) or real_embed(texts)
    )
    at._default_groups.cache_clear()
    reg = default_registry()
    reg.get("attraction_sustained_sessions")(sustained_run())
    reg.get("attraction_excess_share")(sustained_run())
    assert calls == [7]  # one clustering of the run's 7 questions for both metrics
