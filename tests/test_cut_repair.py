"""The repair after a reply cut at its cap (issue 27): the retry says where the reply ran on and
the bounds in words (what the strict dialect cannot say in its schema), and a runaway list in
strict cannot pass its slots."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.ledger import Ledger, RunMeta
from curiosity_tui.ledger.models import SessionRecord
from curiosity_tui.modelio.client import ModelClient
from curiosity_tui.modelio.json_reply import open_value, ran_on
from curiosity_tui.offline.demo import DemoResponder
from curiosity_tui.offline.scripted_server import Reply, Script, ScriptedServer, ScriptRule
from curiosity_tui.protocol.call_specs import deliverable_spec, judge_before_spec
from curiosity_tui.protocol.session import run_session

MSGS = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Q?"}]


def _one_session(tmp_path: Path, responder: Any) -> tuple[list[SessionRecord], list[str]]:
    """Session 1 of a C-cur ledger against ``responder``: its records and its nodes' texts."""
    meta = RunMeta(name="c", seed="Why did pamphlets spread?", config="C-cur", contract="pilot-01")
    led = Ledger.create(tmp_path / "c", meta)
    with ScriptedServer(responder=responder) as srv:
        client = ModelClient(base_url=srv.base_url, api_key="sk-x", model="scripted")

        async def go() -> None:
            try:
                await run_session(led, client, 1)
            finally:
                await client.aclose()

        asyncio.run(go())
    records = led.session_records()
    texts = [str(n.get("text") or n.get("question")) for n in led.raw_nodes().values()]
    led.close()
    return records, texts


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"framings": {"F1": "abc 2.2.3. 2.2.4', ("framings.F1", 16, True)),
        ('{"facts": {"fact_1": {"text": "x"}, "fact_2": {"te', ("facts.fact_2", 0, False)),
        ('{"a": ["x", "y", "zz', ("a[2]", 2, True)),
        ('{"a": [1, 2, 3', ("a", 3, False)),
        ('{"facts": [{"t": "x"}, {"t": "y"},', ("facts", 2, False)),
        ('{"q": {"question_1": {"text": "a \\"b\\" c', ("q.question_1.text", 9, True)),
        ("{}", None),
        ("not json", None),
    ],
)
def test_where_a_cut_reply_ran_on(text: str, want: tuple[str, int, bool] | None) -> None:
    assert open_value(text) == want


def test_the_note_quotes_the_end_of_a_runaway_text() -> None:
    note = ran_on('{"framings": {"F1": "The cities ' + "2.2.3. " * 200)
    assert "framings.F1, a text that ran on for 1411 characters" in note
    assert note.endswith("2.2.3.).") and len(note) < 200


async def test_the_retry_after_a_cut_says_where_and_the_bounds_in_words() -> None:
    spec = judge_before_spec()
    wire = spec.json_schema("strict")
    runaway = '{"framings": {"F1": "Printing ' + "2.2.3. " * 100
    good = {f"F{i}": None for i in range(1, 6)} | {"F1": "economic"}
    deps = {f"D{i}": None for i in range(1, 9)}
    rules = [
        ScriptRule(kind="judge-before", reply=runaway, finish_reason="length", times=1),
        ScriptRule(kind="judge-before", reply={"framings": good, "dependencies": deps}),
    ]
    with ScriptedServer(Script(rules=rules)) as srv:
        client = ModelClient(base_url=srv.base_url, api_key="sk-x", model="scripted")
        value, rec = await client.structured(
            kind="judge-before",
            session=1,
            messages=MSGS,
            schema=spec.reply_model("strict"),
            max_tokens=500,
            internal=True,
            validator=spec.check,
            wire_schema=wire,
            dialect="strict",
        )
        await client.aclose()
        retry = srv.requests[1].body["messages"][-1]["content"]
    assert rec.repair and rec.earlier[0].finish_reason == "length"  # both calls recorded
    assert "It was writing framings.F1, a text that ran on for" in retry
    assert "under 200 characters" in retry and "no repeated words or numbers" in retry
    assert spec.record(value).framings == ["economic"]  # type: ignore[attr-defined]


def test_a_runaway_list_in_strict_has_no_room_past_its_slots() -> None:
    """SmolLM2 wrote 80+ facts into a strict deliverable until its cap: in strict a bounded
    list is an object of that many slots, so a grammar ends it there; read back as the list."""
    spec = deliverable_spec(
        node_ids=["q1", "q2"],
        focus_id="q1",
        requirement_ids=["q1.f1"],
        open_layer_min=1,
        checks_in_deliverable=False,
        downgrades_allowed=False,
        preserve=False,
    )
    strict, full = spec.json_schema("strict"), spec.json_schema("full")
    facts = strict["properties"]["facts"]
    assert facts["type"] == "object" and facts["additionalProperties"] is False
    assert facts["required"] == ["fact_1", "fact_2", "fact_3"]
    assert strict["properties"]["checks"]["properties"] == {}  # pilot-02: none, said by shape
    assert full["properties"]["facts"]["type"] == "array"  # full: a list with maxItems
    assert full["properties"]["facts"]["maxItems"] == 3
    item = {"node": "q1", "text": "Printers were in Wittenberg.", "source_id": None}
    reply = {
        "answer": "Print.",
        "actions": {"action_1": None, "action_2": None},
        "new_questions": {"new_question_1": None, "new_question_2": None},
        "open_layer": {
            "node_status": "open",
            "living_questions": {
                "Q1": {"text": "Who printed the pamphlets?", "parent": "q1"},
                "Q2": None,
                "Q3": None,
            },
            "return_condition": {
                "required_facts": {"required_fact_1": "a", "required_fact_2": None},
                "required_actions": {"required_action_1": None},
                "closure_test": "t",
            },
        },
        "facts": {"fact_1": item, "fact_2": None, "fact_3": item},
        "checks": {},
        "downgrade_proposals": {},
    }
    value = spec.reply_model("strict").model_validate_json(json.dumps(reply))
    spec.check(value)
    stored = spec.record(value)
    assert [f.text for f in stored.facts] == [item["text"]] * 2  # type: ignore[attr-defined]
    assert stored.open_layer.return_condition.required_facts == ["a"]  # type: ignore[attr-defined]
    assert stored.actions == [] and stored.checks == []  # type: ignore[attr-defined]


class _LabelsForQuestions:
    """The demo model, but its deliverables write living questions as labels ("1.1.1.1"), as
    SmolLM2-135M did in strict, and a free-text request answers with a question."""

    def __init__(self) -> None:
        self.demo = DemoResponder()
        self.texts: list[str] = []

    def __call__(self, kind: str, session: int | None, body: dict[str, Any]) -> Any:
        if kind == "deliverable" and "response_format" not in body:
            self.texts.append(body["messages"][-1]["content"])
            # SmolLM2 rambled on to the cap after its first line: the mend call is cut
            return Reply(
                reply='(1)\n"Which printers in Wittenberg sold the most pamphlets?"\nmore words',
                finish_reason="length",
            )
        reply = self.demo(kind, session, body)
        if kind == "deliverable" and isinstance(reply, dict):
            layer = reply["open_layer"]
            layer["living_questions"] = [
                {"text": f"1.{i}.1.1", "parent": q["parent"]}
                for i, q in enumerate(layer["living_questions"] or [{"parent": None}], 1)
            ]
        return reply


def test_a_living_question_too_short_is_asked_again_alone(tmp_path: Path) -> None:
    """Strict cannot say a least length; a model that copies its reply in the repair turn
    fails the session. Only short texts wrong: each is asked again as free text, recorded."""
    responder = _LabelsForQuestions()
    records, texts = _one_session(tmp_path, responder)
    record = records[0]
    calls = [c for c in record.calls if c.kind == "deliverable"]
    structured = [c for c in calls if c.response_format == "json_schema"]
    mended = [c for c in calls if c.response_format != "json_schema"]
    assert [c.repair for c in structured] == [False, True]  # the client's own repair first
    assert mended and all(c.repair for c in mended)  # then one free-text call per text
    assert all(c.finish_reason == "length" for c in mended)  # cut free text: its first line
    assert "open_layer.living_questions.Q1.text: '1.1.1.1' is too short" in responder.texts[0]
    assert "Questions that keep the focus alive" in responder.texts[0]
    assert "Which printers in Wittenberg sold the most pamphlets?" in texts
    assert not any(t.startswith("1.") for t in texts)


def test_only_length_breaks_are_mended_and_the_mend_takes_a_line_within_them() -> None:
    from curiosity_tui.modelio.call_schemas import Rule
    from curiosity_tui.protocol.text_repair import _first_line, short_texts

    spec = deliverable_spec(
        node_ids=["q1"],
        focus_id="q1",
        requirement_ids=[],
        open_layer_min=1,
        checks_in_deliverable=False,
        downgrades_allowed=False,
        preserve=False,
    )
    layer = {"node_status": "s", "return_condition": None}
    base = {"answer": "a", "actions": [], "new_questions": [], "facts": [], "checks": []}
    base["downgrade_proposals"] = []

    def reply(*texts: str) -> Any:
        slots = dict(zip(["Q1", "Q2", "Q3"], [*texts, None, None, None], strict=False))
        living = {k: (v and {"text": v, "parent": "q1"}) for k, v in slots.items()}
        data = {**base, "open_layer": {**layer, "living_questions": living}}
        return spec.reply_model("strict").model_validate(data)

    long = "The answer is: " * 300  # SmolLM2's, 4,500 characters
    assert [w for _r, w, _p in short_texts(spec, reply("1.1.1.1", long)) or []] == [
        "open_layer.living_questions.Q1.text",
        "open_layer.living_questions.Q2.text",
    ]
    assert short_texts(spec, reply("Who printed the pamphlets?")) is None  # nothing broken
    text = Rule("x", min_length=8, max_length=200)
    assert _first_line("(1)\n" + "y" * 300 + "\nWho printed them?\n", text) == "Who printed them?"
    assert _first_line("Q1", text) == "Q1"  # nothing fits: the first line (the rule fails it)


class _RunawayQuestionThenCutRepair:
    """The demo model, but its first deliverable runs one living question on past its 200
    characters and stops; the repair turn, shown an excerpt of it, copies the loop to the cap
    (SmolLM2-135M in strict, decision 600); a free-text request answers with a question."""

    def __init__(self) -> None:
        self.demo = DemoResponder()
        self.structured = 0

    def __call__(self, kind: str, session: int | None, body: dict[str, Any]) -> Any:
        if kind != "deliverable":
            return self.demo(kind, session, body)
        if "response_format" not in body:
            return "Which printers in Wittenberg sold the most pamphlets?"
        self.structured += 1
        if self.structured > 1:  # the repair turn: cut inside the runaway text
            loop = "Question asked why is the question asked to the curator. " * 60
            return Reply(reply='{"open_layer": {"node_status": "' + loop, finish_reason="length")
        reply = self.demo(kind, session, body)
        layer = reply["open_layer"]
        first = layer["living_questions"][0]
        first["text"] = "Question asked why is the question asked to the curator. " * 12
        return reply


def test_a_text_too_long_is_mended_from_the_reply_before_a_cut_repair(tmp_path: Path) -> None:
    responder = _RunawayQuestionThenCutRepair()
    records, texts = _one_session(tmp_path, responder)
    assert len(records) == 1  # committed: before, the cut repair failed the session
    calls = [c for c in records[0].calls if c.kind == "deliverable"]
    structured = [c for c in calls if c.response_format == "json_schema"]
    assert [c.finish_reason for c in structured] == ["stop", "length"]
    assert any(c.repair and c.response_format != "json_schema" for c in calls)  # the mend
    assert "Which printers in Wittenberg sold the most pamphlets?" in texts
    assert not any(t.startswith("Question asked why") for t in texts)


@pytest.mark.parametrize("rejects", [(), ("frequency_penalty",)])
async def test_the_retry_after_a_cut_asks_with_its_own_seed_and_a_repetition_penalty(
    rejects: tuple[str, ...],
) -> None:
    """A cut is a loop, and the same sampling repeats it (decision 600): the retry after a cut
    asks with its own seed and ``frequency_penalty``, both recorded on its call; the first
    call's record dumps as before. A server that refuses the penalty gets the retry without it,
    recorded as refused."""
    from curiosity_tui.ledger.sampling_record import SamplingTable
    from curiosity_tui.modelio.sampling import (
        AFTER_CUT_FREQUENCY_PENALTY,
        draw_scope,
        sampling_scope,
    )

    spec = judge_before_spec()
    good = {f"F{i}": None for i in range(1, 6)} | {"F1": "economic"}
    deps = {f"D{i}": None for i in range(1, 9)}
    cut = '{"framings": {"F1": "1.1.1.1.1'
    rules = [
        ScriptRule(kind="judge-before", reply=cut, finish_reason="length", times=1),
        ScriptRule(kind="judge-before", reply={"framings": good, "dependencies": deps}),
    ]
    with ScriptedServer(Script(rules=rules), rejects=rejects) as srv:
        client = ModelClient(base_url=srv.base_url, api_key="sk-x", model="scripted")
        table = SamplingTable(seed=7).resolved()
        with sampling_scope(table, "run-a"), draw_scope("judge-before"):
            value, rec = await client.structured(
                kind="judge-before",
                session=1,
                messages=MSGS,
                schema=spec.reply_model("strict"),
                max_tokens=500,
                internal=True,
                validator=spec.check,
                wire_schema=spec.json_schema("strict"),
                dialect="strict",
            )
        await client.aclose()
        bodies = [r.body for r in srv.requests if r.kind == "judge-before"]
    first, retry = rec.earlier[0], rec
    assert first.sampling is not None and retry.sampling is not None
    assert "frequency_penalty" not in bodies[0] and first.sampling.frequency_penalty is None
    assert "frequency_penalty" not in first.model_dump(mode="json")["sampling"]
    assert bodies[-1]["seed"] == retry.sampling.seed != first.sampling.seed == bodies[0]["seed"]
    if rejects:
        assert "frequency_penalty" not in bodies[-1]
        assert retry.sampling.refused == ["frequency_penalty"]
    else:
        assert bodies[-1]["frequency_penalty"] == AFTER_CUT_FREQUENCY_PENALTY
        assert retry.sampling.frequency_penalty == AFTER_CUT_FREQUENCY_PENALTY
        assert "frequency_penalty 0.5 (retry after a cut)" in retry.sampling.summary()
    assert spec.record(value).framings == ["economic"]  # type: ignore[attr-defined]


class _ShortMendFirst(_LabelsForQuestions):
    """As ``_LabelsForQuestions``, but each text's first mend answers "No." (SmolLM2 did, in
    the real-server tier's C+cur strict run): still too short, so it is asked once more."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: dict[str, int] = {}

    def __call__(self, kind: str, session: int | None, body: dict[str, Any]) -> Any:
        if kind == "deliverable" and "response_format" not in body:
            note = body["messages"][-1]["content"]
            self.texts.append(note)
            field = note.split("Your JSON reply could not be used as it was: ")[1].split(":")[0]
            self.asked[field] = self.asked.get(field, 0) + 1
            if self.asked[field] == 1:
                return "No."
            return "Which printers in Wittenberg sold the most pamphlets?"
        return super().__call__(kind, session, body)


def test_a_mend_still_too_short_is_asked_once_more(tmp_path: Path) -> None:
    responder = _ShortMendFirst()
    records, texts = _one_session(tmp_path, responder)
    assert len(records) == 1  # committed: before, "No." failed the call
    assert responder.asked and set(responder.asked.values()) == {2}  # each text asked twice
    again = [t for t in responder.texts if "'No.' is too short" in t]
    assert len(again) == len(responder.asked)  # the second ask says what was wrong
    assert "No." not in texts
    assert "Which printers in Wittenberg sold the most pamphlets?" in texts
    mends = [c for c in records[0].calls if c.kind == "deliverable" and c.response_format is None]
    assert len(mends) == 2 * len(responder.asked) and all(c.repair for c in mends)
