"""The return-condition revision rule, as run (S3, report §2).

When the model proposes a return condition for a node that already has one:
- required facts not satisfied (unchecked, not_satisfied) carry into the new condition;
- satisfied ones are not carried automatically (a proposal may restate one, as a new fact);
- waived ones are settled and likewise not carried;
- newly proposed requirements are merged in (dropping exact restatements of a carried text);
- if the model proposes no new requirements, no revision runs (returns None).
"""

from __future__ import annotations

from dataclasses import dataclass

from curiosity_tui.ledger.node_record import RequirementEntry, ReturnConditionEntry


@dataclass
class Revision:
    required_facts: list[RequirementEntry]
    required_actions: list[str]
    closure_test: str
    carried: list[str]
    retired: list[str]
    added: list[str]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def revise(
    current: ReturnConditionEntry,
    proposed_texts: list[str],
    *,
    required_actions: list[str] | None,
    closure_test: str | None,
    next_counter: int,
) -> Revision | None:
    """Apply the rule to ``current`` (a return-condition dict). ``next_counter`` is the node's
    requirement counter; new requirement ids continue from it and are never reused."""
    proposed = [p for p in (t.strip() for t in proposed_texts) if p]
    if not proposed:
        return None
    carried = [
        r.copy() for r in current["required_facts"] if r["status"] in ("unchecked", "not_satisfied")
    ]
    retired = [
        r["id"]
        for r in current["required_facts"]
        if r["status"] not in ("unchecked", "not_satisfied")
    ]
    seen = {_norm(r["text"]) for r in carried}
    added: list[RequirementEntry] = []
    counter = next_counter
    for text in proposed:
        key = _norm(text)
        if key in seen:
            continue
        seen.add(key)
        counter += 1
        added.append({"id": f"r{counter}", "text": text, "status": "unchecked", "checked": None})
    return Revision(
        required_facts=carried + added,
        required_actions=list(
            required_actions if required_actions is not None else current["required_actions"]
        ),
        closure_test=closure_test if closure_test is not None else current["closure_test"],
        carried=[r["id"] for r in carried],
        retired=retired,
        added=[r["id"] for r in added],
    )
