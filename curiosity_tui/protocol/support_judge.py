"""The labelled model judge of support (issue 26.3, decision 520), between sessions.

When a run's plan names a model judge (run option ``support_judge = "model:<name>"``) and the
model this run's endpoint serves is that one, every verified passage of a requirement not yet
satisfied or waived that the judge has not judged gets one ``support-judge`` call; the verdict
is a ``support_judged`` event by ``model:<name>`` — a model's judgement, kept apart from any
person's. A call that fails leaves the passage unjudged (noted, never guessed).
"""

from __future__ import annotations

from curiosity_tui.contract.support import judge, model_judge_of, verified_items
from curiosity_tui.contract_switches import switches_of
from curiosity_tui.errors import CuriosityError
from curiosity_tui.ledger.ledger import Ledger
from curiosity_tui.ledger.models import CallRecord
from curiosity_tui.modelio.client import ModelCallError, ModelClient
from curiosity_tui.protocol import prompts
from curiosity_tui.protocol.call_specs import support_judge_spec
from curiosity_tui.protocol.context import SessionSettings
from curiosity_tui.protocol.schemas import SupportJudgeResponse

#: at most this many passages judged between two sessions (the rest wait for the next turn)
MAX_PER_TURN = 6


def wants_model_judge(led: Ledger) -> bool:
    """The run is under evidence=supported and its plan names a model judge."""
    meta = led.meta
    return switches_of(meta.contract).evidence == "supported" and bool(
        model_judge_of(meta.model_dump(mode="json"))
    )


async def model_judge_support(
    led: Ledger, client: ModelClient, after: int, st: SessionSettings
) -> tuple[list[CallRecord], list[str]]:
    """Judge the passages verified so far; returns the calls and notes for the next record."""
    named = model_judge_of(led.meta.model_dump(mode="json"))
    by = f"model:{client.model}"
    if named != by:
        return [], [f"support judge {named} is not the model this endpoint serves ({by}): not run"]
    todo = [
        i
        for i in verified_items(led.raw_nodes())
        if i.requirement_status not in ("satisfied", "waived") and not i.judged_by(by)
    ]
    calls: list[CallRecord] = []
    notes: list[str] = []
    spec = support_judge_spec()
    for item in todo[:MAX_PER_TURN]:
        messages = prompts.support_judge_messages(
            item.node_text, item.requirement_text, item.passage
        )
        try:
            reply, rec = await client.structured(
                kind="support-judge",
                session=after + 1,
                messages=messages,
                schema=SupportJudgeResponse,
                max_tokens=st.fit(st.checker_cap, messages),
                internal=True,
                validator=spec.check,
                wire_schema=spec.json_schema(st.schema_dialect),
                dialect=st.schema_dialect,
            )
        except ModelCallError as err:
            calls.extend(err.records)
            notes.append(f"support judge on {item.node}/{item.evidence_id} failed: {err.reason}")
            continue
        calls.append(rec)
        try:
            judge(led, item.node, item.evidence_id, reply.verdict, grounds=reply.grounds, by=by)
        except CuriosityError as err:
            notes.append(f"support judge on {item.node}/{item.evidence_id}: {err}")
    if len(todo) > MAX_PER_TURN:
        notes.append(f"support judge: {len(todo) - MAX_PER_TURN} passage(s) wait for the next turn")
    return calls, notes
