"""A seeded scripted model that reads like an investigation of the seed question (offline pilots).

:class:`ResearchResponder` answers every call kind for :class:`ScriptedServer` with a reply
drawn from a research bank (``offline/scripts/reformation.json``: sub-questions, stated facts,
framings, dependencies, requirements, answer sentences; some requirements are stated by the
example source, the others by none). Every draw comes from a random stream seeded by the run
(``X-Curiosity-Run``), the session and the call kind, so:

- the same run replayed gives the same replies (deterministic);
- two runs of one configuration differ in content, counts and Δ, as real runs do;
- every arm with a store is the same model: self-ask and the protocol's deliverable raise
  1-3 questions, attach 0-2 facts and write 1-2 remarks (an opening and 2-3 claims on a
  node's topic) a session, drawn alike; under the protocol the open layer takes the first
  question(s) and, when the session answers, the answer is the remark on the focus. The arms
  differ only in what the protocol does with the replies, not in how much the model writes
  (issue 25, item 7; decision 510).

The replies carry no "scripted" label: the label lives in the run metadata
(``options.scripted``), the app's header and the pack manifest, so a rater practising on the
example workspace reads plain research text. Node ids are read from the prompt, as a model
would, so every reply names ids that exist.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from curiosity_tui.offline.demo import _focus, _ids, _required, _user_text
from curiosity_tui.offline.support_verdict import parse_request, scripted_verdict
from curiosity_tui.protocol.prompts import RELIST_INSTRUCTION

BANK_FILE = "reformation.json"


class Requirement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    supported: bool
    evidence: str | None = Field(
        default=None, description="The example source's sentence that states it (supported only)."
    )


class Topic(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    keys: list[str]
    questions: list[str]
    facts: list[str]
    claims: list[str]
    framing: str
    dependency: str
    requirements: list[Requirement]


class Bank(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: str
    about: str = ""
    topics: list[Topic]
    actions: list[str]
    closure_tests: list[str]
    status_open: list[str]
    status_answered: list[str]
    curator_reasons: list[str]
    openings: list[str]

    def topic_for(self, text: str, rng: random.Random) -> Topic:
        """The topic whose keys the text mentions most; a drawn one when it mentions none."""
        words = set(re.findall(r"[a-z0-9]+", text.lower()))
        scored = [(sum(1 for k in t.keys if k in words), i) for i, t in enumerate(self.topics)]
        best = max(scored)
        if best[0] == 0:
            return rng.choice(self.topics)
        return self.topics[best[1]]

    def requirement(self, text: str) -> Requirement | None:
        for t in self.topics:
            for r in t.requirements:
                if r.text == text.strip():
                    return r
        return None


@lru_cache(maxsize=4)
def load_bank(name: str = BANK_FILE) -> Bank:
    raw = resources.files("curiosity_tui.offline").joinpath("scripts", name).read_text("utf-8")
    return Bank.model_validate(json.loads(raw))


def stream(run: str, session: int, kind: str, extra: str = "") -> random.Random:
    """The random stream of one call: seeded by run, session and call kind (and ``extra``)."""
    key = f"{run}\x1f{session}\x1f{kind}\x1f{extra}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


#: the share of sessions (either arm with a store) that also try to close an existing node
CLOSE_SHARE = 0.15
CLOSE_NOTE = "Answered by the facts on file."
#: how many remarks a session writes (either arm with a store): 1 or 2. The protocol arm's
#: answer, when it answers, is one of them: the same amount of prose in every arm, the
#: protocol deciding only what it is about (issue 25, item 7; decision 510)
REMARKS = (1, 2)
#: the share of deliverables that propose a downgrade when the focus has requirements in force
DOWNGRADE_SHARE = 0.4
DOWNGRADE_GROUNDS = (
    "The sources on file cannot settle this requirement at the precision asked; the causal "
    "question can be closed on what is established without it.",
    "This requirement duplicates what the other required facts already establish; keeping it "
    "blocks closure without adding evidence.",
    "No archive reachable in this investigation records this figure; asking for it exactly "
    "keeps the question open indefinitely.",
)


def focus_requirements(text: str, focus: str) -> dict[str, str]:
    """The focus node's required facts still in force (unchecked or not satisfied) in a
    rendering: id -> text."""
    block = re.search(
        rf"^\[\d+\] {re.escape(focus)} \|.*?(?=^\[\d+\] q\d+ \||\Z)", text, flags=re.M | re.S
    )
    if block is None:
        return {}
    return dict(
        re.findall(
            r"^\s+- (r\d+): (.+?) \[(?:unchecked|checked s\d+: not satisfied)\]$",
            block.group(0),
            flags=re.M,
        )
    )


def _question_of(text: str, node: str) -> str:
    """The question of ``node`` in a rendering ("" when the rendering does not show it)."""
    m = re.search(rf"^\[\d+\] {re.escape(node)} \|.*\n\s+question: (.+)$", text, flags=re.M)
    return m.group(1) if m else ""


def _question_line(text: str) -> str:
    m = re.search(r"^Question: (.+)$", text, flags=re.M)
    return m.group(1) if m else ""


def _sample(rng: random.Random, items: list[Any], lo: int, hi: int) -> list[Any]:
    k = min(len(items), rng.randint(lo, hi))
    return rng.sample(items, k)


class ResearchResponder:
    """``responder(kind, session, body, run=...)`` for :class:`ScriptedServer`."""

    def __init__(
        self,
        bank: Bank | None = None,
        *,
        preserve_share: float = 0.5,
        supported_only: bool = False,
        voice: str = "",
    ) -> None:
        self.bank = bank or load_bank()
        #: a second scripted "model" (the relay demo): its own draws for the same run and call
        self.voice = voice
        self.preserve_share = preserve_share
        #: return conditions ask only for what the example source states (the evidence example)
        self.supported_only = supported_only
        self._seen: dict[tuple[str, int, str], int] = {}
        self._lock = threading.Lock()

    def __call__(self, kind: str, session: int | None, body: dict[str, Any], run: str = "") -> Any:
        handler = getattr(self, "_" + kind.replace("-", "_"), None)
        if handler is None:
            return None
        s = session or 0
        text = _user_text(body)
        seed = body.get("seed")
        draw = self._nth(run, s, text, seed if isinstance(seed, int) else None)
        return handler(stream(self.voice + run, s, kind, draw), text)

    def _nth(self, run: str, s: int, text: str, seed: int | None) -> str:
        """Repeated identical requests (the three candidates) draw different streams: by the
        call's sampling seed when the request carries one (the runner derives it from the
        run, session and draw, so the three candidates draw the same three streams whatever
        order they arrive in: a pilot replays the same under any load), else the 1st, 2nd,
        3rd stream in arrival order."""
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        key = digest if seed is None else f"{digest}:seed{seed}"
        with self._lock:
            n = self._seen.get((run, s, key), 0)
            self._seen[(run, s, key)] = n + 1
        return f"{key}:{n}"

    # -- pieces ---------------------------------------------------------------
    def _questions(self, rng: random.Random, lo: int, hi: int) -> list[str]:
        pool = [q for t in self.bank.topics for q in t.questions]
        return _sample(rng, pool, lo, hi)

    def _claims(self, rng: random.Random, topic_text: str, lo: int, hi: int) -> str:
        topic = self.bank.topic_for(topic_text, rng)
        other = rng.choice(self.bank.topics)
        claims = _sample(rng, topic.claims, lo, hi)
        if other is not topic and rng.random() < 0.5:
            claims.append(rng.choice(other.claims))
        return " ".join([rng.choice(self.bank.openings), *claims])

    def _facts(
        self, rng: random.Random, nodes: list[str], lo: int, hi: int
    ) -> list[dict[str, Any]]:
        if not nodes:
            return []
        pool = [f for t in self.bank.topics for f in t.facts]
        return [
            {"node": rng.choice(nodes), "text": f, "source_id": None}
            for f in _sample(rng, pool, lo, hi)
        ]

    def _remark(self, rng: random.Random, text: str, node: str) -> str:
        """What a session writes about a node it worked on, in every arm: an opening and 2-3
        claims on the node's topic (the protocol arm's answer to its focus is one of these)."""
        return self._claims(rng, _question_of(text, node), 2, 3)

    def _actions(
        self, rng: random.Random, text: str, nodes: list[str], k: int
    ) -> list[dict[str, Any]]:
        """Voluntary actions, drawn alike in every arm that has a store: ``k`` worked nodes,
        each with a remark, and now and then a closure (what a closure attempt does is the
        protocol's business, not the model's)."""
        actions: list[dict[str, Any]] = [
            {"node": n, "action": "work", "note": self._remark(rng, text, n)}
            for n in rng.sample(nodes, min(k, len(nodes)))
        ]
        if nodes and rng.random() < CLOSE_SHARE:
            actions.append({"node": rng.choice(nodes), "action": "close", "note": CLOSE_NOTE})
        return actions

    # -- free text ------------------------------------------------------------
    def _answer(self, rng: random.Random, text: str) -> str:
        return self._claims(rng, text, 2, 3)

    def _candidate(self, rng: random.Random, text: str) -> str:
        return self._claims(rng, _question_line(text), 2, 3)

    # -- structured -----------------------------------------------------------
    def _self_ask(self, rng: random.Random, text: str) -> dict[str, Any]:
        ids = _ids(text)
        questions = self._questions(rng, 1, 3)
        if "question store" not in text:
            return {"questions": [{"text": q, "parent": None} for q in questions]}
        return {
            "questions": [
                {"text": q, "parent": rng.choice(ids) if ids and rng.random() < 0.8 else None}
                for q in questions
            ],
            "facts": self._facts(rng, ids, 0, 2),
            "actions": self._actions(rng, text, ids, rng.randint(*REMARKS)),
        }

    def _judge_before(self, rng: random.Random, text: str) -> dict[str, Any]:
        topics = self.bank.topics
        return {
            "framings": [t.framing for t in _sample(rng, topics, 3, 5)],
            "dependencies": [t.dependency for t in _sample(rng, topics, 4, 8)],
        }

    def _judge_after(self, rng: random.Random, text: str) -> dict[str, Any]:
        if RELIST_INSTRUCTION in text:  # tension = "pre-amendment": listed anew (issue 26)
            return {**self._judge_before(rng, text), "follow_ups": self._questions(rng, 1, 3)}
        f_ids = re.findall(r"^(F\d+): ", text, flags=re.M)
        d_ids = re.findall(r"^(D\d+): ", text, flags=re.M)
        if rng.random() < self.preserve_share:  # the answer settles much: Δ well below −ε
            nf, nd = rng.randint(len(f_ids) // 2, len(f_ids)), rng.randint(1, max(1, len(d_ids)))
        else:  # it settles little: Δ above −ε
            nf, nd = rng.randint(0, 1), rng.randint(0, 1)
        gone_f = set(rng.sample(f_ids, min(nf, len(f_ids))))
        gone_d = set(rng.sample(d_ids, min(nd, len(d_ids))))
        return {
            "framings": [
                {"id": i, "verdict": "excluded_or_settled" if i in gone_f else "viable"}
                for i in f_ids
            ],
            "dependencies": [
                {"id": i, "verdict": "excluded_or_settled" if i in gone_d else "viable"}
                for i in d_ids
            ],
        }

    def _checker(self, rng: random.Random, text: str) -> dict[str, Any]:
        m = re.search(r"Required fact (r\d+): (.+)", text)
        rid, rtext = (m.group(1), m.group(2)) if m else ("r1", "")
        req = self.bank.requirement(rtext)
        for sm in re.finditer(r"\[source ([0-9a-f]{64})\]\n(.+)", text):
            if req is not None and req.evidence and req.evidence in sm.group(2):
                return {
                    "fact_id": rid,
                    "satisfied": True,
                    "evidence": "The retrieved source states it directly.",
                    "source_id": sm.group(1),
                    "passage": req.evidence,
                }
        return {
            "fact_id": rid,
            "satisfied": False,
            "evidence": rng.choice(
                [
                    "No source on file states this; it remains an estimate.",
                    "The passages retrieved do not address this requirement.",
                    "Nothing on file establishes this yet.",
                ]
            ),
            "source_id": None,
            "passage": None,
        }

    def _support_judge(self, rng: random.Random, text: str) -> dict[str, str]:
        """The bank's own passage for a requirement is a yes; else the word rule, with a
        yes drawn down to partly now and then (deterministic per run and request)."""
        requirement, passage = parse_request(text)
        req = self.bank.requirement(requirement)
        if req is not None and req.evidence and req.evidence in passage:
            return {"verdict": "yes", "grounds": "The passage states the required fact."}
        reply = scripted_verdict(text)
        if reply["verdict"] == "yes" and rng.random() < 0.2:
            reply["verdict"] = "partly"
        return reply

    def _return_condition(self, rng: random.Random, focus_text: str) -> dict[str, Any]:
        topic = self.bank.topic_for(focus_text, rng)
        reqs = [r.text for r in topic.requirements]
        extra = rng.choice(self.bank.topics).requirements
        if rng.random() < 0.5:
            reqs.append(rng.choice(extra).text)
        if self.supported_only:
            reqs = [r.text for t in self.bank.topics for r in t.requirements if r.supported]
        return {
            "required_facts": list(dict.fromkeys(_sample(rng, reqs, 1, 2))),
            "required_actions": _sample(rng, self.bank.actions, 1, 2),
            "closure_test": rng.choice(self.bank.closure_tests),
        }

    def _pilot01_checks(self, rng: random.Random, text: str) -> list[dict[str, Any]]:
        if "Dependency checks: for each required fact" not in text:
            return []
        return [
            {
                "fact_id": rid,
                "satisfied": rng.random() < 0.25,  # pilot-01 lets the model certify itself
                "evidence": rng.choice(self.bank.topics).claims[0],
                "source_id": None,
                "passage": None,
            }
            for rid in _required(text)
        ]

    def _deliverable(self, rng: random.Random, text: str) -> dict[str, Any]:
        focus = _focus(text) or "q1"
        m = re.search(r"Focus this session: q\d+: (.+)", text)
        focus_text = m.group(1) if m else ""
        others = [i for i in _ids(text) if i != focus]
        preserve = "Decision: <PRESERVE>" in text
        remarks = rng.randint(*REMARKS)
        answer = None if preserve else self._remark(rng, text, focus)
        if answer is None:  # every remark on a worked node, the focus among them
            actions = self._actions(rng, text, [focus, *others], remarks)
        else:  # the answer is the remark on the focus
            actions = self._actions(rng, text, others, remarks - 1)
        statuses = self.bank.status_open if preserve else self.bank.status_answered
        # as many questions as self-ask raises (1-3): the open layer takes the first (at
        # least one), the rest are new questions beyond it (issue 25, item 7)
        questions = self._questions(rng, 1, 3)
        n_living = rng.randint(1, len(questions))
        return {
            "answer": answer,
            "actions": actions,
            "new_questions": [
                {"text": q, "parent": rng.choice([focus, *others])} for q in questions[n_living:]
            ],
            "open_layer": {
                "node_status": rng.choice(statuses).format(focus=focus),
                "living_questions": [{"text": q, "parent": focus} for q in questions[:n_living]],
                "return_condition": self._return_condition(rng, focus_text) if preserve else None,
            },
            "facts": self._facts(rng, [focus, *others], 0, 2),
            "checks": self._pilot01_checks(rng, text),
            "downgrade_proposals": self._downgrades(rng, text, focus),
        }

    def _downgrades(self, rng: random.Random, text: str, focus: str) -> list[dict[str, Any]]:
        """In some sessions (DOWNGRADE_SHARE, drawn last so the rest of the reply is as
        before) a proposal to lower one of the focus's requirements still in force, so a
        scripted pilot under binding+downgrade has proposals to decide (decision 443). A
        contract without downgrades drops it, as it drops any model's."""
        in_force = focus_requirements(text, focus)
        if not in_force or rng.random() >= DOWNGRADE_SHARE:
            return []
        rid, rtext = rng.choice(sorted(in_force.items()))
        if rng.random() < 0.5:
            return [
                {
                    "node": focus,
                    "fact_id": rid,
                    "proposal": "waive",
                    "new_text": None,
                    "grounds": rng.choice(DOWNGRADE_GROUNDS),
                }
            ]
        return [
            {
                "node": focus,
                "fact_id": rid,
                "proposal": "weaken",
                "new_text": f"A credible estimate, not an exact figure: {rtext}",
                "grounds": rng.choice(DOWNGRADE_GROUNDS),
            }
        ]

    def _curator(self, rng: random.Random, text: str) -> dict[str, Any]:
        ids = [i for i in _ids(text) if i != "q1"]
        if not ids or rng.random() < 0.2:
            return {"actions": []}
        reasons = self.bank.curator_reasons
        actions = [
            {
                "action": "prioritise",
                "node": n,
                "priority": k + 1,
                "into": None,
                "reason": rng.choice(reasons[:3]),
            }
            for k, n in enumerate(_sample(rng, ids, 1, 2))
        ]
        if len(ids) > 3 and rng.random() < 0.15:
            actions.append(
                {
                    "action": "archive",
                    "node": ids[-1],
                    "priority": None,
                    "into": None,
                    "reason": reasons[3],
                }
            )
        return {"actions": actions}
