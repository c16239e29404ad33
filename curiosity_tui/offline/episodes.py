"""Scripted replays of the report's two §5 episodes, run through the real runner.

(i) ``grabe`` (C+cur): session 1 preserves q1 with a return condition that requires a
    "Quantitative estimate of the percentage of Reformation pamphlets produced in Wittenberg vs.
    other cities between 1517-1520."; in session 2 a check marks it satisfied on the model's own
    prose citing "H.J. Grabe", and the same session's revision proposes new requirements only —
    under pilot-01 the requirement is retired; under pilot-02 the prose is stored as *proposed*
    evidence, the requirement stays unchecked and is carried.
(ii) ``suppression`` (C-cur): session 1 preserves q1 with a control requirement (Catholic
    reformist texts suppressed); in session 3 a check marks it not satisfied while the same
    response answers at Δ = −0.067 — under pilot-01 q1 closes over the unmet requirement; under
    pilot-02 the closure is blocked and the model's argument that the control is "not strictly
    required" becomes a downgrade proposal awaiting a human curator.

The evidence texts are the report's, verbatim.
"""

from __future__ import annotations

import re
from typing import Any

from curiosity_tui.offline.demo import DemoResponder, _focus, _ids, _user_text

PAMPHLETS = (
    "Quantitative estimate of the percentage of Reformation pamphlets produced in Wittenberg vs. "
    "other cities between 1517-1520."
)
GRABE_EVIDENCE = (
    "Bibliographic studies (e.g., by H.J. Grabe or more recent analyses of the \u2018Reformationsschriften\u2019 "
    "corpus) indicate that while Wittenberg was a major hub, Nuremberg and Basel accounted for the "
    "majority of early printed output. Specifically, Nuremberg produced roughly 40-50% of the earliest "
    "pamphlets, with Wittenberg producing significantly less due to smaller printing capacity. This "
    "confirms print was a multi-city network, not solely Wittenberg-centric."
)
SUPPRESSION = (
    "Records of Catholic reformist texts being effectively suppressed, as a control against the "
    "failure to suppress Luther."
)
SUPPRESSION_EVIDENCE = (
    "No records of effectively suppressed Catholic reformist texts are in the store. This is a "
    "comparative control which strengthens but does not strictly require for closing the main causal "
    "question if the primary mechanism (scale/speed) is established."
)


def _req_ids(text: str) -> dict[str, str]:
    """Required facts listed in a deliverable prompt (pilot-01) or rendering: id -> text."""
    out: dict[str, str] = {}
    for m in re.finditer(
        r"^\s*- (r\d+): (.+?)(?: \[(?:unchecked|checked s\d+: [a-z ]+|waived)\])?$",
        text,
        flags=re.M,
    ):
        out.setdefault(m.group(1), m.group(2))
    return out


class _Episode(DemoResponder):
    def _judge_after_counts(
        self, s: int, text: str, excluded_f: int, excluded_d: int
    ) -> dict[str, Any]:
        f_ids = re.findall(r"^(F\d+): ", text, flags=re.M)
        d_ids = re.findall(r"^(D\d+): ", text, flags=re.M)
        return {
            "framings": [
                {"id": i, "verdict": "excluded_or_settled" if k < excluded_f else "viable"}
                for k, i in enumerate(f_ids)
            ],
            "dependencies": [
                {"id": i, "verdict": "excluded_or_settled" if k < excluded_d else "viable"}
                for k, i in enumerate(d_ids)
            ],
        }

    @staticmethod
    def _check(fact_id: str, satisfied: bool, evidence: str) -> dict[str, Any]:
        return {
            "fact_id": fact_id,
            "satisfied": satisfied,
            "evidence": evidence,
            "source_id": None,
            "passage": None,
        }


class GrabeEpisode(_Episode):
    """Episode (i): the requirement retired on an unchecked claim."""

    def _judge_after(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        # every session preserves: Δ = ((−4/5) + (−4/8)) / 3 ≈ −0.433
        return self._judge_after_counts(s, text, 4, 4)

    def _checker(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        rid = re.search(r"Required fact (r\d+): (.+)", text)
        if rid and "pamphlets produced in Wittenberg" in rid.group(2) and s == 2:
            return self._check(rid.group(1), True, GRABE_EVIDENCE)
        return super()._checker(s, text, body)

    def _deliverable(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = super()._deliverable(s, text, body)
        focus = _focus(text) or "q1"
        rc = reply["open_layer"]["return_condition"]
        if s == 1 and rc is not None:
            rc["required_facts"] = [PAMPHLETS]
            rc["closure_test"] = "the share of pamphlets by city is established"
        elif s == 2 and rc is not None:
            # the revision proposes new requirements only and does not restate the pamphlet share
            rc["required_facts"] = [
                "Evidence on whether princely protection, not print volume, determined where Reformation texts circulated."
            ]
        if (
            "Dependency checks: for each required fact" in text
        ):  # pilot-01: checks in the deliverable
            checks = []
            for rid, rtext in _req_ids(text).items():
                if s == 2 and "pamphlets produced in Wittenberg" in rtext:
                    checks.append(self._check(rid, True, GRABE_EVIDENCE))
                else:
                    checks.append(self._check(rid, False, "Nothing on file establishes this yet."))
            reply["checks"] = checks
        reply["actions"] = [a for a in reply["actions"] if a["node"] != focus]
        return reply

    def _curator(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        # the curator keeps the seed question in focus through session 2, then lets the queue run
        ids = _ids(text)
        if s == 2 and "q1" in ids:
            return {
                "actions": [
                    {
                        "action": "prioritise",
                        "node": "q1",
                        "priority": 1,
                        "into": None,
                        "reason": "The seed question's return condition is due for checking.",
                    }
                ]
            }
        return {"actions": []}


class SuppressionEpisode(_Episode):
    """Episode (ii): a question closed while its own requirement stood unmet."""

    def _judge_after(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        if s == 3:
            # one framing of five excluded, no dependency: Δ = (−1/5) / 3 = −0.0667 > −0.15 → ANSWER
            return self._judge_after_counts(s, text, 1, 0)
        return self._judge_after_counts(s, text, 4, 4)

    def _checker(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        rid = re.search(r"Required fact (r\d+): (.+)", text)
        if rid and "Catholic reformist texts" in rid.group(2):
            return self._check(
                rid.group(1), False, SUPPRESSION_EVIDENCE if s == 3 else "Not yet examined."
            )
        return super()._checker(s, text, body)

    def _deliverable(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = super()._deliverable(s, text, body)
        focus = _focus(text) or "q1"
        rc = reply["open_layer"]["return_condition"]
        if s == 1 and rc is not None:
            rc["required_facts"] = [SUPPRESSION]
            rc["closure_test"] = (
                "print's scale and speed are shown to matter beyond suppression failure"
            )
        elif rc is not None:
            rc["required_facts"] = []  # no new requirements: no revision runs
        if s == 3 and focus == "q1":
            reply["answer"] = (
                "The press was a necessary accelerant: scale and speed of printing let Luther's texts outrun "
                "suppression. q1 is closed."
            )
        if "Dependency checks: for each required fact" in text:
            reply["checks"] = [
                self._check(rid, False, SUPPRESSION_EVIDENCE if s == 3 else "Not yet examined.")
                for rid, rtext in _req_ids(text).items()
                if "Catholic reformist texts" in rtext
            ]
        elif s == 3 and focus == "q1":
            rid = next(
                (r for r, t in _req_ids(_user_text(body)).items() if "Catholic reformist" in t),
                "r1",
            )
            reply["downgrade_proposals"] = [
                {
                    "node": "q1",
                    "fact_id": rid,
                    "proposal": "waive",
                    "new_text": None,
                    "grounds": "The control strengthens but is not strictly required for closing the main causal "
                    "question if the primary mechanism (scale/speed) is established.",
                }
            ]
        reply["actions"] = [a for a in reply["actions"] if a["node"] != focus]
        return reply


EPISODES: dict[str, tuple[type[DemoResponder], str]] = {
    "grabe": (GrabeEpisode, "C+cur"),
    "suppression": (SuppressionEpisode, "C-cur"),
}
