"""Drift and survival computed by hand on a 3-session relay with known signatures.

A fixed fake embedder maps each text to a chosen unit vector, so every figure below follows
from the table: signatures S0..S3 on axes 0-2, items on axes 3-7.

  S0 = (1, 0, 0)  S1 = (.6, .8, 0)  S2 = (0, 1, 0)  S3 = (0, .6, .8)
  drift(1) = 1 - .6 = .4 (first)   drift(2) = 1 - .8 = .2   drift(3) = 1 - .6 = .4
  total = 1 - cos(S1, S3) = 1 - .48 = .52

  session 2 (model A -> model B): carried r1, q2, q3; r1 and q2 by id, q3 by similarity
  (cos(q3, q4) = .9 >= .8): 3 of 3, 2 by id.
  session 3 (model B -> human): carried r1, q2, q4; r1 gone (cos(r1, r2) = .5 < .8), q2 gone
  (cos 0 with q4), q4 by id: 1 of 3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from curiosity_tui.analysis import relay
from curiosity_tui.analysis.registry import default_registry
from curiosity_tui.analysis.rundata import RunData, RunSession
from curiosity_tui.analysis.signature import QuestionSignature, SignatureItem, signature_of

R1 = SignatureItem(id="q1.r1", text="press output rose after 1500")
R2 = SignatureItem(id="q1.r2", text="pamphlet sales by city")
Q2 = SignatureItem(id="q2", text="Who printed the pamphlets?")
Q3 = SignatureItem(id="q3", text="Where did Luther publish?")
Q4 = SignatureItem(id="q4", text="In which city did Luther publish first?")

SIGS = [
    QuestionSignature(session=0, text="Did the press cause it?"),
    QuestionSignature(
        session=1, text="Did the press cause it?", required_facts=[R1], living=[Q2, Q3]
    ),
    QuestionSignature(
        session=2, text="Did the press cause it?", required_facts=[R1], living=[Q2, Q4]
    ),
    QuestionSignature(session=3, text="Did the press cause it?", required_facts=[R2], living=[Q4]),
]


def _unit(*pairs: tuple[int, float]) -> list[float]:
    v = [0.0] * 8
    for i, x in pairs:
        v[i] = x
    return v


VECTORS = {
    SIGS[0].as_text(): _unit((0, 1.0)),
    SIGS[1].as_text(): _unit((0, 0.6), (1, 0.8)),
    SIGS[2].as_text(): _unit((1, 1.0)),
    SIGS[3].as_text(): _unit((1, 0.6), (2, 0.8)),
    R1.text: _unit((3, 1.0)),
    R2.text: _unit((3, 0.5), (4, math.sqrt(0.75))),
    Q2.text: _unit((5, 1.0)),
    Q3.text: _unit((6, 1.0)),
    Q4.text: _unit((6, 0.9), (7, math.sqrt(0.19))),
}


class FixedEmbedder:
    name = "fixed-test-embedder"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([VECTORS[t] for t in texts])

    async def aembed(self, texts: Sequence[str], *, session: int = 0) -> np.ndarray:
        return self.embed(texts)


def _run() -> RunData:
    a = {"kind": "model", "name": "model-a", "endpoint": "http://127.0.0.1:8080"}
    b = {"kind": "model", "name": "model-b", "endpoint": "http://127.0.0.1:8081"}
    h = {"kind": "human", "name": "ana", "endpoint": None}
    sessions = [
        RunSession(session=i, focus=f, mind=m)  # type: ignore[call-arg]
        for i, f, m in ((1, "q1", a), (2, "q2", b), (3, "q4", h))
    ]
    return RunData(config="C+cur", run_id="relay-fixture", sessions=sessions, signatures=SIGS)


def test_handovers_by_hand() -> None:
    hs = relay.handovers(_run(), FixedEmbedder())
    assert [h.session for h in hs] == [1, 2, 3]
    assert [h.transition for h in hs] == ["first", "other_model", "model_to_human"]
    assert [h.drift for h in hs] == pytest.approx([0.4, 0.2, 0.4])
    assert hs[0].carried == 0 and hs[0].survival is None
    # session 2: q3 survives by similarity (reworded as q4), r1 and q2 by id
    assert (hs[1].survived, hs[1].survived_by_id, hs[1].carried) == (3, 2, 3)
    # session 3: only q4 survives (by id); r1 -> r2 is below the threshold
    assert (hs[2].survived, hs[2].survived_by_id, hs[2].carried) == (1, 1, 3)
    assert hs[2].survival == pytest.approx(1 / 3)
    assert hs[1].mind == "model:model-b@http://127.0.0.1:8081" and hs[2].mind == "human:ana"


def test_total_drift_by_hand() -> None:
    assert relay.drift_total(_run(), FixedEmbedder()) == pytest.approx(0.52)


def test_a_rewording_below_the_threshold_does_not_survive() -> None:
    sigs = [s.model_copy(deep=True) for s in SIGS]
    VECTORS["In which city first?"] = _unit((6, 0.79), (7, math.sqrt(1 - 0.79**2)))
    sigs[2].living[1] = SignatureItem(id="q4", text="In which city first?")
    VECTORS[sigs[2].as_text()] = _unit((1, 1.0))
    run = _run().model_copy(update={"signatures": sigs})
    hs = relay.handovers(run, FixedEmbedder())
    assert (hs[1].survived, hs[1].carried) == (2, 3)


def test_registry_metrics_split_by_transition(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relay, "DEFAULT_EMBEDDER", FixedEmbedder())
    relay._CACHE.clear()
    reg = default_registry()
    run = _run()
    try:
        got = {m.name: m(run) for m in reg if m.group == "relay"}
    finally:
        relay._CACHE.clear()
    assert got["relay_drift_step_mean"] == pytest.approx(0.3)
    assert got["relay_drift_total"] == pytest.approx(0.52)
    assert got["relay_survival_share"] == pytest.approx((1.0 + 1 / 3) / 2)
    assert got["relay_drift_step_mean_other_model"] == pytest.approx(0.2)
    assert got["relay_drift_step_mean_model_to_human"] == pytest.approx(0.4)
    assert got["relay_survival_share_model_to_human"] == pytest.approx(1 / 3)
    assert got["relay_drift_step_mean_same_model"] is None
    assert got["relay_survival_share_human_to_model"] is None


def test_a_run_without_minds_is_the_same_model_baseline() -> None:
    run = _run()
    plain = run.model_copy(
        update={"sessions": [RunSession(session=s.session) for s in run.sessions]}
    )
    hs = relay.handovers(plain, FixedEmbedder())
    assert [h.transition for h in hs] == ["first", "same_model", "same_model"]


def test_signature_of_reads_conditions_and_living_questions() -> None:
    nodes = {
        "q1": {
            "id": "q1",
            "text": "Root?",
            "parent": None,
            "status": "open",
            "return_condition": {
                "required_facts": [{"id": "r1", "text": "a fact"}],
                "required_actions": ["read"],
                "closure_test": "when",
            },
        },
        "q2": {
            "id": "q2",
            "text": "Child?",
            "parent": "q1",
            "status": "open",
            "return_condition": {
                "required_facts": [{"id": "r1", "text": "child fact"}],
                "required_actions": [],
                "closure_test": "",
            },
        },
        "q3": {"id": "q3", "text": "Closed child?", "parent": "q1", "status": "closed"},
        "q10": {"id": "q10", "text": "Grandchild?", "parent": "q2", "status": "open"},
    }
    sig = signature_of(nodes, 4)
    assert [q.id for q in sig.living] == ["q2", "q10"]
    assert [f.id for f in sig.required_facts] == ["q1.r1", "q2.r1"]
    assert sig.required_actions == ["read"] and sig.closure_tests == ["when"]
    # the parts alone, one a line, no labels (decision 421)
    assert sig.as_text() == "Root?\na fact\nchild fact\nread\nwhen\nChild?\nGrandchild?"
