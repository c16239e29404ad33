"""Prompt builders, one per call kind (docs/model-io.md documents what each contains).

Every builder is a pure function of its inputs, so the exact input text of a call is
reproducible and is saved verbatim in the session record.
"""

from __future__ import annotations

from collections.abc import Sequence

from curiosity_tui.protocol.schemas import JudgeBeforeResponse

Messages = list[dict[str, str]]

SYSTEM = (
    "You are a fresh research session with no memory of earlier sessions. Whatever earlier "
    "sessions left survives only in the input you are given."
)


def _facts_block(facts: Sequence[str]) -> str:
    if not facts:
        return "Facts on file for this question: none."
    return "Facts on file for this question:\n" + "\n".join(f"- {f}" for f in facts)


def answer_messages(seed: str) -> Messages:
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Answer this research question as well as you can.\n\nQuestion: {seed}",
        },
    ]


def self_ask_messages(seed: str) -> Messages:
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                "Investigate this research question by asking yourself the questions that would "
                f"move it forward. List the questions you raise.\n\nQuestion: {seed}"
            ),
        },
    ]


def armed_self_ask_messages(seed: str, rendering: str) -> Messages:
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"Seed question: {seed}\n\nThe question store as it stands:\n\n{rendering}\n"
                "Work on the investigation by asking yourself questions. You may add new questions "
                "(with a parent id from the store or null), attach facts to existing questions, and "
                "take actions on existing questions (work, close, revive)."
            ),
        },
    ]


def candidate_messages(question: str, facts: Sequence[str]) -> Messages:
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Question: {question}\n\n{_facts_block(facts)}\n\nGive one candidate answer.",
        },
    ]


def judge_before_messages(question: str, facts: Sequence[str]) -> Messages:
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"Question: {question}\n\n{_facts_block(facts)}\n\nBefore any answer is given, list "
                "the viable framings of this question (at most 5: slots F1-F5) and the unresolved "
                "dependencies an answer would turn on (at most 8: slots D1-D8); null for a slot "
                "left unused."
            ),
        },
    ]


def judge_after_messages(question: str, before: JudgeBeforeResponse, candidate: str) -> Messages:
    items = [f"F{i}: {f}" for i, f in enumerate(before.framings, 1)]
    items += [f"D{i}: {d}" for i, d in enumerate(before.dependencies, 1)]
    listing = "\n".join(items) if items else "(nothing was listed)"
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"Question: {question}\n\nItems listed before the answer:\n{listing}\n\n"
                f"The answer:\n{candidate}\n\nFor each listed item only, say whether this answer "
                "excludes or settles it (excluded_or_settled) or leaves it viable (viable), keyed "
                "by its id. Do not list anything new."
            ),
        },
    ]


#: the pre-amendment judge-after's prompt says this (the scripted responders key on it)
RELIST_INSTRUCTION = "List anew what is still open after this answer"


def judge_relist_messages(question: str, facts: Sequence[str], candidate: str) -> Messages:
    """The shake-out's judge-after (issue 26, tension = "pre-amendment"): nothing paired, the
    judge lists framings and dependencies anew after the answer (the judge-before's input and
    the answer) and names follow-up questions."""
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"Question: {question}\n\n{_facts_block(facts)}\n\nThe answer:\n{candidate}\n\n"
                f"{RELIST_INSTRUCTION}: "
                "the framings of the question still viable (at most 5: slots F1-F5), the "
                "dependencies still unresolved (at most 8: slots D1-D8), and the follow-up "
                "questions the answer raises (at most 3: slots Q1-Q3); null for a slot left "
                "unused."
            ),
        },
    ]


def checker_messages(
    question: str,
    requirement_id: str,
    requirement: str,
    instruction: str,
    passages: Sequence[tuple[str, str]],
) -> Messages:
    if passages:
        src = "\n\n".join(f"[source {sid}]\n{text}" for sid, text in passages)
        src_block = f"Source passages retrieved for this requirement:\n\n{src}"
    else:
        src_block = "Source passages retrieved for this requirement: none (no sources match)."
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"Question: {question}\n\nRequired fact {requirement_id}: {requirement}\n\n"
                f"{instruction}\n\n{src_block}"
            ),
        },
    ]


SUPPORT_JUDGE_INSTRUCTION = (
    "A passage was found, word for word, in a stored source and cited for the required fact "
    "below. Say only whether the passage itself establishes that fact: yes (it does), partly "
    "(it establishes part of it) or no (it does not bear on it, or does not establish it). "
    "Judge the passage as written; your own knowledge is not evidence."
)


def support_judge_messages(question: str, requirement: str, passage: str) -> Messages:
    """The model judge of support (decision 520): one requirement, one verified passage."""
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"Question: {question}\n\nRequired fact: {requirement}\n\n"
                f"{SUPPORT_JUDGE_INSTRUCTION}\n\nPassage:\n{passage}"
            ),
        },
    ]


def deliverable_messages(
    *,
    seed: str,
    rendering: str,
    focus_id: str,
    focus_text: str,
    decision: str,
    candidate: str,
    open_layer_min: int,
    checks_in_deliverable: bool,
    checker_instruction: str,
    required_facts: Sequence[tuple[str, str]],
    check_summary: str,
) -> Messages:
    if decision == "PRESERVE":
        what = (
            "Decision: <PRESERVE>. The selected candidate below is withheld: do not deliver it "
            "(answer must be null). Emit the open layer instead: where the focus stands, living "
            "questions, and a return condition (what would have to change for the question to "
            "become closeable)."
        )
    else:
        what = (
            "Decision: ANSWER. Deliver the answer to the focus question (you may refine the "
            "selected candidate below) and emit the open layer."
        )
    if checks_in_deliverable and required_facts:
        reqs = "\n".join(f"- {rid}: {text}" for rid, text in required_facts)
        checks = (
            f"Dependency checks: for each required fact of the focus below, {checker_instruction[0].lower()}"
            f"{checker_instruction[1:]} Report each in `checks` with its fact_id.\n{reqs}"
        )
    else:
        checks = "Leave `checks` empty (dependency checks were run separately)."
        if check_summary:
            checks += f"\nResults of this session's dependency checks:\n{check_summary}"
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"Seed question: {seed}\n\nThe question ledger as it stands:\n\n{rendering}\n"
                f"Focus this session: {focus_id}: {focus_text}\n\n{what}\n\n"
                f"Selected candidate (in full):\n{candidate}\n\n"
                f"Open layer: give {open_layer_min} to 3 living questions (children of the focus; "
                "slots Q1-Q3, null for a slot left unused; each text is the question itself, "
                "one full sentence ending in a question mark). "
                "You may also act on existing questions (work, close, revive), raise further new "
                "questions, attach facts to existing questions, and propose to waive or weaken a "
                f"requirement, with grounds (a human curator decides).\n\n{checks}"
            ),
        },
    ]


def curator_messages(seed: str, rendering: str) -> Messages:
    return [
        {
            "role": "system",
            "content": "You are the curator of a question ledger between research sessions.",
        },
        {
            "role": "user",
            "content": (
                f"Seed question: {seed}\n\nThe ledger:\n\n{rendering}\nYou may prioritise (rank 1 = "
                "first), merge (into another node) and archive questions, each with a one-sentence "
                "reason. Return no actions if none are needed."
            ),
        },
    ]
