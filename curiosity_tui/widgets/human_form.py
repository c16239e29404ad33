"""The human session's form: one labelled field per part of a C deliverable, keyboard-first.

:func:`form_fields` lists the fields for a session (pure); :class:`HumanForm` shows them
(``OrderedInput`` / ``OrderedOptionList``, so a burst lands as typed) and reads or restores
their values as strings (the draft); :func:`deliverable_from_fields` turns the strings into
the model's deliverable schema. Lists are fixed rows (empty rows are skipped); the return
condition's facts and actions are separated by ``;``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Label, OptionList, TextArea
from textual.widgets.option_list import Option

from curiosity_tui.errors import InputError
from curiosity_tui.protocol.human_session import HumanDeliverable, HumanSessionInput
from curiosity_tui.protocol.schemas import (
    CheckResult,
    DeliverableResponse,
    DowngradeProposal,
    FactItem,
    NewQuestion,
    NodeAction,
    OpenLayer,
    ReturnConditionProposal,
)
from curiosity_tui.widgets.literal import short
from curiosity_tui.widgets.ordered import OrderedInput, OrderedOptionList, OrderedTextArea

NEW_ROWS = 2
LIVING_ROWS = 3
VERDICTS = (("", "no check"), ("yes", "satisfied"), ("no", "not satisfied"))
KINDS = (("work", "work"), ("close", "close"), ("revive", "revive"))


@dataclass(frozen=True)
class FormField:
    id: str
    label: str
    kind: Literal["input", "choice", "text"] = "input"  # text: several lines (a TextArea)
    choices: tuple[tuple[str, str], ...] = field(default=())  # (value, shown)
    placeholder: str = ""


def _passage_choices(
    inp: HumanSessionInput, rid: str, problems: dict[str, str]
) -> tuple[tuple[str, str], ...]:
    req = next(r for r in inp.requirements if r.id == rid)
    out = [("", "no passage")]
    for i, (src, text) in enumerate(req.passages, start=1):
        problem = problems.get(f"{rid}:{i}", "")
        mark = "✓ matches its source" if not problem else f"✗ {problem}"
        out.append((str(i), f"{src[:8]} · {short(text, 70)} [{mark}]"))
    return tuple(out)


def form_fields(inp: HumanSessionInput, problems: dict[str, str] | None = None) -> list[FormField]:
    """The fields of session ``inp.session``'s form, in the order Enter walks them.
    ``problems``: for "<requirement>:<n>", why retrieved passage n would not verify ('' if it
    would), from the same match check the commit runs."""
    problems = problems or {}
    f = [
        FormField(
            "decision",
            "Decision (↑↓): yours, recorded as such",
            "choice",
            (("ANSWER", "ANSWER"), ("PRESERVE", "PRESERVE")),
        ),
        FormField(
            "reason", "Reason for the decision (required; Enter: new line, tab: next)", "text"
        ),
        FormField(
            "answer",
            "Answer (ANSWER; under PRESERVE the answer you withhold, or empty; several lines)",
            "text",
        ),
        FormField("node_status", "Open layer: where the focus stands"),
    ]
    f += [
        FormField(f"living_{i}", f"Living question {i} (child of {inp.focus})")
        for i in range(1, LIVING_ROWS + 1)
    ]
    f += [
        FormField("rc_facts", "Return condition: required facts (; between them)"),
        FormField("rc_actions", "Return condition: required actions (; between them)"),
        FormField("rc_test", "Return condition: closure test"),
    ]
    for r in inp.requirements:
        f += [
            FormField(f"check_{r.id}", f"Check {r.id}: {short(r.text, 60)}", "choice", VERDICTS),
            FormField(
                f"passage_{r.id}",
                f"Evidence for {r.id} from the sources (↑↓)",
                "choice",
                _passage_choices(inp, r.id, problems),
            ),
            FormField(f"evidence_{r.id}", f"Grounds for {r.id} in words (empty: the passage)"),
        ]
    for i in range(1, NEW_ROWS + 1):
        f += [
            FormField(f"new_{i}", f"New question {i}"),
            FormField(f"new_{i}_parent", f"New question {i}: parent id (empty: {inp.focus})"),
        ]
    f += [
        FormField("fact_node", "Fact: node id (empty: no fact)"),
        FormField("fact_text", "Fact: the assertion"),
        FormField("fact_source", "Fact: source id or its first 8+ characters (optional)"),
        FormField("action_node", "Action: node id (empty: no action)"),
        FormField("action_kind", "Action: kind (↑↓)", "choice", KINDS),
        FormField("action_note", "Action: note"),
    ]
    if inp.downgrades_allowed and inp.requirements:
        reqs = (("", "no proposal"), *((r.id, r.id) for r in inp.requirements))
        f += [
            FormField("dg_fact", "Downgrade proposal: requirement (↑↓)", "choice", reqs),
            FormField(
                "dg_kind",
                "Downgrade: waive or weaken (↑↓)",
                "choice",
                (("waive", "waive"), ("weaken", "weaken")),
            ),
            FormField("dg_text", "Downgrade: the weaker requirement (weaken)"),
            FormField("dg_grounds", "Downgrade: grounds"),
        ]
    return f


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(";") if p.strip()]


def _source(inp: HumanSessionInput, raw: str) -> str | None:
    v = raw.strip().lower()
    if not v:
        return None
    hits = [s for s in inp.source_ids if s.startswith(v)] if len(v) >= 8 else []
    if len(hits) != 1:
        raise InputError(f"fact source {raw.strip()!r}: no single source of this ledger starts so")
    return hits[0]


def _checks(inp: HumanSessionInput, v: dict[str, str]) -> list[CheckResult]:
    out = []
    for r in inp.requirements:
        verdict = v.get(f"check_{r.id}", "")
        if not verdict:
            continue
        pick = v.get(f"passage_{r.id}", "")
        src, passage = r.passages[int(pick) - 1] if pick.isdigit() else (None, None)
        grounds = v.get(f"evidence_{r.id}", "").strip() or (passage or "")
        out.append(
            CheckResult(
                fact_id=r.id,
                satisfied=verdict == "yes",
                evidence=grounds,
                source_id=src,
                passage=passage,
            )
        )
    return out


def _open_layer(inp: HumanSessionInput, v: dict[str, str], decision: str) -> OpenLayer:
    living = [
        NewQuestion(text=v[k].strip(), parent=inp.focus)
        for k in (f"living_{i}" for i in range(1, LIVING_ROWS + 1))
        if v.get(k, "").strip()
    ]
    facts, actions, test = (
        _split(v.get("rc_facts", "")),
        _split(v.get("rc_actions", "")),
        v.get("rc_test", "").strip(),
    )
    rc = None
    if decision == "PRESERVE" and (facts or actions or test):
        rc = ReturnConditionProposal(
            required_facts=facts, required_actions=actions, closure_test=test
        )
    return OpenLayer(
        node_status=v.get("node_status", "").strip(), living_questions=living, return_condition=rc
    )


def _rows(inp: HumanSessionInput, v: dict[str, str]) -> dict[str, list[Any]]:
    """The fixed rows that were filled in: new questions, a fact, an action, a downgrade."""
    new = [
        NewQuestion(
            text=v[f"new_{i}"].strip(),
            parent=v.get(f"new_{i}_parent", "").strip().lower() or inp.focus,
        )
        for i in range(1, NEW_ROWS + 1)
        if v.get(f"new_{i}", "").strip()
    ]
    facts, actions, downgrades = [], [], []
    if v.get("fact_node", "").strip():
        facts.append(
            FactItem(
                node=v["fact_node"].strip().lower(),
                text=v.get("fact_text", "").strip(),
                source_id=_source(inp, v.get("fact_source", "")),
            )
        )
    if v.get("action_node", "").strip():
        kind = (
            v.get("action_kind") if v.get("action_kind") in ("work", "close", "revive") else "work"
        )
        actions.append(
            NodeAction.model_validate(
                {
                    "node": v["action_node"].strip().lower(),
                    "action": kind,
                    "note": v.get("action_note", "").strip(),
                }
            )
        )
    if v.get("dg_fact"):
        downgrades.append(
            DowngradeProposal.model_validate(
                {
                    "node": inp.focus,
                    "fact_id": v["dg_fact"],
                    "proposal": "weaken" if v.get("dg_kind") == "weaken" else "waive",
                    "new_text": v.get("dg_text", "").strip() or None,
                    "grounds": v.get("dg_grounds", "").strip(),
                }
            )
        )
    return {"new": new, "facts": facts, "actions": actions, "downgrades": downgrades}


def deliverable_from_fields(inp: HumanSessionInput, v: dict[str, str]) -> HumanDeliverable:
    """The form's strings as the person's deliverable (InputError: a field that cannot be read)."""
    decision: Literal["ANSWER", "PRESERVE"] = (
        "PRESERVE" if v.get("decision") == "PRESERVE" else "ANSWER"
    )
    rows = _rows(inp, v)
    deliv = DeliverableResponse(
        answer=v.get("answer", "").strip() or None,
        actions=rows["actions"],
        new_questions=rows["new"],
        open_layer=_open_layer(inp, v, decision),
        facts=rows["facts"],
        checks=_checks(inp, v),
        downgrade_proposals=rows["downgrades"],
    )
    return HumanDeliverable(
        decision=decision, reason=v.get("reason", "").strip(), deliverable=deliv
    )


class HumanForm(VerticalScroll):
    """The fields of :func:`form_fields`, read and restored as strings. Not focusable itself:
    focus goes from field to field, and the form scrolls to the focused one."""

    can_focus = False

    def __init__(self, fields: list[FormField], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.fields = fields

    def compose(self) -> ComposeResult:
        for fd in self.fields:
            yield Label(Text(fd.label), classes="hs-label")
            if fd.kind == "choice":
                ol = OrderedOptionList(
                    *[
                        Option(Text(shown), id=f"{fd.id}:{i}")
                        for i, (_, shown) in enumerate(fd.choices)
                    ],
                    id=f"hs-{fd.id}",
                    classes="hs-choice",
                )
                yield ol
            elif fd.kind == "text":
                yield OrderedTextArea(id=f"hs-{fd.id}", classes="hs-text", soft_wrap=True)
            else:
                yield OrderedInput(placeholder=fd.placeholder, id=f"hs-{fd.id}")

    def on_mount(self) -> None:
        for ol in self.query(OptionList):
            ol.highlighted = 0

    def values(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for fd in self.fields:
            if fd.kind == "choice":
                ol = self.query_one(f"#hs-{fd.id}", OptionList)
                i = ol.highlighted or 0
                out[fd.id] = fd.choices[i][0] if i < len(fd.choices) else ""
            elif fd.kind == "text":
                out[fd.id] = self.query_one(f"#hs-{fd.id}", TextArea).text
            else:
                out[fd.id] = self.query_one(f"#hs-{fd.id}", Input).value
        return out

    def restore(self, values: dict[str, str]) -> None:
        for fd in self.fields:
            if fd.id not in values:
                continue
            if fd.kind == "choice":
                idx = [c[0] for c in fd.choices]
                if values[fd.id] in idx:
                    self.query_one(f"#hs-{fd.id}", OptionList).highlighted = idx.index(
                        values[fd.id]
                    )
            elif fd.kind == "text":
                self.query_one(f"#hs-{fd.id}", TextArea).load_text(values[fd.id])
            else:
                self.query_one(f"#hs-{fd.id}", Input).value = values[fd.id]
