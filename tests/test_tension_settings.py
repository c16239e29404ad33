"""Issue 26 items 4 and 5: the tension setting of a run, on the offline scripted server through
the real openai client.

* ``pre-amendment`` reproduces the shake-out (report §3, Amendment 1): replies that hit both caps
  before and after give Δ ≥ 0 in every session and no PRESERVE; ``as-run`` on the same replies
  preserves.
* ``four-component`` records its four components, and Δ is their weighted sum as stated.
* a service session that would have preserved answers instead (recorded per session);
* Δ per candidate: another candidate that meets the threshold is delivered; when none does, the
  fallback (PRESERVE the medoid) fires and is recorded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.ledger import Ledger, verify
from curiosity_tui.ledger.models import SessionRecord
from curiosity_tui.ledger.sampling_record import PROTOCOL_SEED, SamplingTable
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.modelio.sampling import call_seed
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import ScriptedServer
from curiosity_tui.protocol.prompts import RELIST_INSTRUCTION
from curiosity_tui.protocol.tension import tension
from curiosity_tui.runs.runner import plan_runs, run_pilot

SEED = "Did the printing press cause the Reformation?"
EPS = 0.15
#: three near-identical candidates (D before is small), follow-ups that share nothing (D after
#: over them is large): the shake-out's two different objects
CANDIDATE = "The printing press spread Luther's pamphlets quickly across the German cities"
FOLLOW_UPS = [
    "Which princes protected the reformers in Saxony?",
    "How cheap was paper at the Frankfurt book fair?",
    "Were woodcuts read by the illiterate crowds?",
]


RUN = "C-cur-r0"  # the one run _run plans


class CapsResponder(DemoResponder):
    """Judge replies that hit both caps (5 framings, 8 dependencies) before and, listed anew,
    after; the paired judge-after says the answer settles most of them (Δ well below −ε).
    ``viable_for``: candidate numbers whose paired judge-after leaves everything viable."""

    def __init__(self, viable_for: tuple[int, ...] = ()) -> None:
        super().__init__(label="")
        self.viable_for = viable_for
        self._n: dict[int, int] = {}

    def _candidate(self, s: int, text: str, body: dict[str, Any]) -> str:
        # variant k is the draw candidate-k, told by its seed: the three requests of a session
        # are concurrent, so their arrival order is not their draw order (under load candidate
        # 1 arrived third and took "variant 3")
        draws = {call_seed(PROTOCOL_SEED, RUN, s, f"candidate-{k}"): k for k in (1, 2, 3)}
        n = draws.get(body.get("seed"))
        if n is None:  # no seed sent: arrival order
            n = self._n[s] = self._n.get(s, 0) + 1
        return f"{CANDIDATE} (variant {n})."

    def _judge_before(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "framings": [f"framing {i}" for i in range(1, 6)],
            "dependencies": [f"dependency {i}" for i in range(1, 9)],
        }

    def _judge_after(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        if RELIST_INSTRUCTION in text:
            return {**self._judge_before(s, text, body), "follow_ups": FOLLOW_UPS}
        keep = any(f"(variant {n})" in text for n in self.viable_for)
        fs = [f"F{i}" for i in range(1, 6)]
        ds = [f"D{i}" for i in range(1, 9)]
        verdict = "viable" if keep else "excluded_or_settled"
        return {
            "framings": [{"id": i, "verdict": verdict} for i in fs],
            "dependencies": [{"id": i, "verdict": verdict} for i in ds],
        }


def _run(
    tmp_path: Path, tension_option: dict[str, Any] | None, responder: Any, sessions: int = 3
) -> list[SessionRecord]:
    options: dict[str, Any] = {"sampling": SamplingTable().resolved().model_dump(mode="json")}
    if tension_option is not None:
        options["tension"] = tension_option
    specs = plan_runs(
        seed=SEED, configurations=["C-cur"], runs=1, contract="pilot-01", options=options
    )
    srv = ScriptedServer(responder=responder).start()
    client = ModelClient(base_url=srv.base_url, api_key="sk-test", model="s", retry_backoff_s=0.01)

    async def go() -> Any:
        try:
            return await run_pilot(specs, tmp_path, client, sessions=sessions, concurrency=1)
        finally:
            await client.aclose()

    try:
        results = asyncio.run(go())
    finally:
        srv.stop()
    assert all(not r.failed for r in results), [r.failed for r in results]
    path = tmp_path / "C-cur-r0"
    assert verify(path).ok
    with Ledger.open(path) as led:
        return led.session_records()


def test_pre_amendment_reproduces_the_shake_out_and_as_run_preserves(tmp_path: Path) -> None:
    pre = _run(tmp_path / "pre", {"measure": "pre-amendment"}, CapsResponder())
    assert [r.session for r in pre] == [1, 2, 3]
    for r in pre:
        t = r.tension
        assert t is not None and t.measure == "pre-amendment"
        # both caps hit before and after: F and U never move
        assert (t.F_before, t.U_before, t.F_after, t.U_after) == (5, 8, 5, 8)
        assert t.follow_ups == FOLLOW_UPS
        # D before over the candidates, after over the follow-up questions: different objects
        assert t.D_after is not None and t.D_after > t.D
        assert r.delta is not None and r.delta >= 0
        assert r.delta == pytest.approx((t.D_after - t.D) / 3, abs=1e-12)
        assert r.decision == "ANSWER"
        assert r.decided is not None and r.decided.by_delta == "ANSWER"
    assert not any(r.decision == "PRESERVE" for r in pre)

    as_run = _run(tmp_path / "as-run", None, CapsResponder())
    assert all(r.decision == "PRESERVE" for r in as_run)
    for r in as_run:
        assert r.delta is not None and r.delta < -EPS
        assert r.decided is None  # the default records what the pilot recorded
        assert r.tension is not None and r.tension.measure is None


def test_as_run_records_serialise_as_before(tmp_path: Path) -> None:
    """A run without the setting: no new key anywhere in its records or its metadata."""
    records = _run(tmp_path, None, CapsResponder(), sessions=1)
    dumped = records[0].model_dump(mode="json")
    assert "decided" not in dumped
    assert set(dumped["tension"]) == {
        "D",
        "F_before",
        "U_before",
        "F_after",
        "U_after",
        "candidates",
        "similarities",
        "embedder",
    }
    with Ledger.open(tmp_path / "C-cur-r0") as led:
        assert "tension" not in led.meta.options


def test_four_component_records_its_four_components(tmp_path: Path) -> None:
    weights = {"D": 0.1, "H": 0.3, "F": 0.3, "U": 0.3}
    setting = {"measure": "four-component", "weights": weights, "cluster_similarity": 0.99}
    records = _run(tmp_path, setting, CapsResponder(viable_for=(1, 2, 3)), sessions=2)
    for r in records:
        t = r.tension
        assert t is not None and t.measure == "four-component"
        assert t.weights == weights and t.cluster_similarity == 0.99
        assert t.H_before is not None and t.H_after == 0.0
        assert t.clusters is not None and len(t.clusters) == 3
        assert t.D_after is not None
        before = 0.1 * t.D + 0.3 * t.H_before + 0.3 * t.F_before / 5 + 0.3 * t.U_before / 8
        after = 0.1 * t.D_after + 0.3 * t.H_after + 0.3 * t.F_after / 5 + 0.3 * t.U_after / 8
        assert r.tension_before == pytest.approx(before, abs=1e-12)
        assert r.tension_after == pytest.approx(after, abs=1e-12)
        assert r.delta == pytest.approx(after - before, abs=1e-12)
        assert r.decided is not None and r.decided.measure == "four-component"


def test_a_service_session_that_would_have_preserved_answers(tmp_path: Path) -> None:
    records = _run(tmp_path, {"service_sessions": [2]}, CapsResponder())
    by = {r.session: r for r in records}
    for t in (1, 3):
        assert by[t].decision == "PRESERVE"
        assert by[t].decided is not None and by[t].decided.kind == "research"
    service = by[2]
    assert service.delta is not None and service.delta < -EPS  # the Δ rule says PRESERVE
    assert service.decided is not None
    assert (service.decided.kind, service.decided.by_delta) == ("service", "PRESERVE")
    assert service.decision == "ANSWER"  # … and the service session answers
    assert service.closure is not None


def test_per_candidate_delivers_a_candidate_that_meets_the_threshold(tmp_path: Path) -> None:
    """The medoid settles everything (Δ < −ε); candidate 'variant 3' leaves all viable (Δ 0)."""
    records = _run(tmp_path, {"per_candidate": True}, CapsResponder(viable_for=(3,)), sessions=1)
    r = records[0]
    assert r.tension is not None and r.tension.per_candidate is not None
    deltas = {c.index: c.delta for c in r.tension.per_candidate}
    assert len(deltas) == 3 and deltas[r.medoid or 0] == r.delta
    viable = next(i for i, c in enumerate(r.tension.candidates) if "(variant 3)" in c)
    assert deltas[viable] == 0.0
    assert r.medoid != viable  # the three tie on cosine: the medoid is the first (decision 026)
    assert r.delta is not None and r.delta < -EPS  # the medoid alone would have preserved
    assert r.decision == "ANSWER"
    assert r.decided is not None and not r.decided.fallback
    assert (r.decided.candidate, r.decided.delta) == (viable, 0.0)
    assert "(variant 3)" in r.inputs["deliverable"]


def test_fallback_fires_when_no_candidate_meets_the_threshold(tmp_path: Path) -> None:
    records = _run(tmp_path, {"per_candidate": True}, CapsResponder(), sessions=2)
    for r in records:
        assert r.tension is not None and r.tension.per_candidate is not None
        assert len(r.tension.per_candidate) == 3
        assert all(c.delta < -EPS for c in r.tension.per_candidate)
        assert r.decided is not None and r.decided.fallback
        assert r.decided.by_delta == "PRESERVE" and r.decision == "PRESERVE"
        assert r.decided.candidate == r.medoid  # the medoid is withheld, as run
        judged = [c.kind for c in r.calls if c.kind == "judge-after"]
        assert len(judged) == 3  # one judge-after per candidate


def test_tension_helper_matches_pre_amendment_formula() -> None:
    # the shake-out numbers: caps on both sides, D 0.1 → 0.7 gives Δ = 0.6 / 3 = 0.2
    assert tension(0.7, 5, 8) - tension(0.1, 5, 8) == pytest.approx(0.2)
