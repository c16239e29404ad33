"""A scripted model for offline runs: ``curiosity-tui demo``, end-to-end tests and benchmarks.

:class:`DemoResponder` answers every call kind with a schema-valid reply built
deterministically from the request (it reads node ids out of the rendering it was sent), so
sessions really happen — against the real HTTP server and the real ``openai`` client — without
a key. Everything it says is labelled scripted (``label``; the example workspace passes "" and
records the label in the run metadata instead); none of it is a model's work.

The judge-after verdicts alternate by session so that both PRESERVE and ANSWER occur.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

from curiosity_tui.offline.support_verdict import scripted_verdict
from curiosity_tui.protocol.prompts import RELIST_INSTRUCTION

SCRIPTED_LABEL = "[scripted demo reply]"

_TOPICS = [
    "pamphlet output in Wittenberg versus Nuremberg",
    "literacy rates among urban artisans",
    "the cost of paper in the 1520s",
    "vernacular translation of scripture",
    "princely protection of reformers",
    "the indulgence controversy before 1517",
    "woodcut propaganda and illiterate audiences",
    "Catholic counter-printing",
    "trade routes of the book fairs",
    "sermons read aloud from printed texts",
    "the Hussite precedent without print",
    "censorship attempts by bishops",
]


def _pick(key: str, n: int) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % n


def _user_text(body: dict[str, Any]) -> str:
    msgs = body.get("messages") or []
    return "\n".join(str(m.get("content", "")) for m in msgs if m.get("role") == "user")


def _ids(text: str) -> list[str]:
    seen: list[str] = []
    for m in re.finditer(r"^\[\d+\] (q\d+) \|", text, flags=re.M):
        if m.group(1) not in seen:
            seen.append(m.group(1))
    return seen


def _focus(text: str) -> str | None:
    m = re.search(r"Focus this session: (q\d+):", text)
    return m.group(1) if m else None


def _required(text: str) -> list[str]:
    return re.findall(r"^- (r\d+): ", text, flags=re.M)


class DemoResponder:
    """``responder(kind, session, body)`` for :class:`ScriptedServer`."""

    def __init__(
        self,
        *,
        preserve_sessions: tuple[int, ...] = (1, 2, 4),
        candidate_words: int = 60,
        label: str = SCRIPTED_LABEL,
    ) -> None:
        self.preserve_sessions = preserve_sessions
        self.candidate_words = candidate_words
        #: prefixed to every text it writes; "" when the run's metadata carries the label
        self.tag = f"{label} " if label else ""
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, kind: str, session: int | None, body: dict[str, Any]) -> Any:
        s = session or 0
        text = _user_text(body)
        handler = getattr(self, "_" + kind.replace("-", "_"), None)
        return None if handler is None else handler(s, text, body)

    # free text --------------------------------------------------------------
    def _answer(self, s: int, text: str, body: dict[str, Any]) -> str:
        return (
            f"{self.tag}Session {s}: the press accelerated the Reformation's spread, but "
            "causation runs through princes, preachers and prior reform movements as well."
        )

    def _candidate(self, s: int, text: str, body: dict[str, Any]) -> str:
        key = hashlib.sha256(f"{s}:{text}".encode()).hexdigest()
        with self._lock:
            n = self._seen.get(key, 0)
            self._seen[key] = n + 1
        topic = _TOPICS[_pick(f"{key}:{n}", len(_TOPICS))]
        words = " ".join(["evidence"] * max(0, self.candidate_words - 20))
        return f"{self.tag}candidate {n}: the answer turns on {topic}. {words}"

    # structured --------------------------------------------------------------
    def _self_ask(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        ids = _ids(text)
        qs = [
            {
                "text": f"{self.tag}What does {_TOPICS[(s + i) % len(_TOPICS)]} show about the seed (s{s})?",
                "parent": ids[i % len(ids)] if ids else None,
            }
            for i in range(2)
        ]
        if "question store" not in text:
            return {"questions": [{"text": q["text"], "parent": None} for q in qs]}
        facts = (
            [
                {
                    "node": ids[0],
                    "text": f"{self.tag}fact noted in session {s}.",
                    "source_id": None,
                }
            ]
            if ids
            else []
        )
        actions = [
            {"node": i, "action": "work", "note": f"{self.tag}developed {i}."} for i in ids[1:3]
        ]
        return {"questions": qs, "facts": facts, "actions": actions}

    def _judge_before(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "framings": [f"framing {i}: {_TOPICS[(s + i) % len(_TOPICS)]}" for i in range(1, 5)],
            "dependencies": [
                f"dependency {i}: {_TOPICS[(s * 3 + i) % len(_TOPICS)]}" for i in range(1, 7)
            ],
        }

    def _judge_after(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        if RELIST_INSTRUCTION in text:  # tension = "pre-amendment": listed anew (issue 26)
            listed = self._judge_before(s, text, body)
            return {
                **listed,
                "follow_ups": [
                    f"{self.tag}What follows for {_TOPICS[(s + i) % len(_TOPICS)]}?" for i in (2, 7)
                ],
            }
        f_ids = re.findall(r"^(F\d+): ", text, flags=re.M)
        d_ids = re.findall(r"^(D\d+): ", text, flags=re.M)
        preserve = s in self.preserve_sessions
        # PRESERVE: the answer closes most items (Δ well below −ε); ANSWER: it closes one
        fv = [
            {"id": i, "verdict": "excluded_or_settled" if (preserve or k == 0) else "viable"}
            for k, i in enumerate(f_ids)
        ]
        dv = [
            {"id": i, "verdict": "excluded_or_settled" if (preserve and k < 5) else "viable"}
            for k, i in enumerate(d_ids)
        ]
        return {"framings": fv, "dependencies": dv}

    def _checker(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        rid = re.search(r"Required fact (r\d+):", text)
        src = re.search(r"\[source ([0-9a-f]{64})\]\n(.+)", text)
        if src:
            sentence = src.group(2).split(". ")[0]
            return {
                "fact_id": rid.group(1) if rid else "r1",
                "satisfied": True,
                "evidence": f"{self.tag}the retrieved source states it.",
                "source_id": src.group(1),
                "passage": sentence,
            }
        return {
            "fact_id": rid.group(1) if rid else "r1",
            "satisfied": False,
            "evidence": f"{self.tag}nothing on file establishes this yet.",
            "source_id": None,
            "passage": None,
        }

    def _deliverable(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        focus = _focus(text) or "q1"
        ids = [i for i in _ids(text) if i != focus]
        preserve = "Decision: <PRESERVE>" in text
        checks = []
        if "Dependency checks: for each required fact" in text:
            for rid in _required(text):
                checks.append(
                    {
                        "fact_id": rid,
                        "satisfied": False,
                        "evidence": f"{self.tag}not yet established.",
                        "source_id": None,
                        "passage": None,
                    }
                )
        living = [
            {
                "text": f"{self.tag}How does {_TOPICS[(s * 2 + i) % len(_TOPICS)]} bear on {focus} (s{s})?",
                "parent": focus,
            }
            for i in range(1 + s % 2)
        ]
        return {
            "answer": None if preserve else f"{self.tag}Answer to {focus} in session {s}.",
            "actions": [
                {"node": i, "action": "work", "note": f"{self.tag}returned to {i}."}
                for i in ids[:1]
            ],
            "new_questions": [
                {"text": f"{self.tag}A further question from session {s}?", "parent": focus}
            ]
            if s % 2
            else [],
            "open_layer": {
                "node_status": f"{self.tag}{focus} stays open after session {s}."
                if preserve
                else f"{self.tag}{focus} answered.",
                "living_questions": living,
                "return_condition": {
                    "required_facts": [f"{self.tag}a count of {_TOPICS[s % len(_TOPICS)]} (s{s})"],
                    "required_actions": ["compare two cities' output"],
                    "closure_test": "the count is on file from a source",
                }
                if preserve
                else None,
            },
            "facts": [
                {
                    "node": focus,
                    "text": f"{self.tag}asserted fact from session {s}.",
                    "source_id": None,
                }
            ],
            "checks": checks,
            "downgrade_proposals": [],
        }

    def _support_judge(self, s: int, text: str, body: dict[str, Any]) -> dict[str, str]:
        return scripted_verdict(text, self.tag)

    def _curator(self, s: int, text: str, body: dict[str, Any]) -> dict[str, Any]:
        ids = _ids(text)
        if len(ids) < 2:
            return {"actions": []}
        return {
            "actions": [
                {
                    "action": "prioritise",
                    "node": ids[-1],
                    "priority": 1,
                    "into": None,
                    "reason": f"{self.tag}the newest line deserves a turn.",
                }
            ]
        }
