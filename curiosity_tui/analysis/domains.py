"""Cross-domain share of question-to-question edges, with a deterministic, recorded
domain assignment (S6, §4 P2 table).

A question's domain comes from a fixed, versioned keyword lexicon: the text is split
into lowercase words; each domain scores the words that start with one of its stems;
the highest score wins, ties go to the domain listed first, no hit leaves the node
"unassigned". An edge is a node and its parent (both in the final snapshot). The share
counts edges whose two ends have different domains, over edges with both ends assigned;
edges with an unassigned end are left out and counted. The lexicon is part of the
metric's identity (name, version and sha256 are recorded in its definition), so a
pre-registered ``cross_domain_share`` always means the same computation.
"""

from __future__ import annotations

import hashlib
import json
import re

from pydantic import BaseModel

from curiosity_tui.analysis.registry import register
from curiosity_tui.analysis.rundata import RunData

UNASSIGNED = "unassigned"
LEXICON_NAME = "default-v1"

#: domain -> word stems (a word matches a stem it starts with). Order breaks ties.
DEFAULT_LEXICON: dict[str, tuple[str, ...]] = {
    "religion": (
        "relig",
        "church",
        "theolog",
        "faith",
        "pope",
        "papa",
        "clergy",
        "bible",
        "scriptur",
        "sermon",
        "indulgenc",
        "heres",
        "heretic",
        "protestant",
        "catholic",
        "luther",
        "calvin",
        "reformation",
        "monast",
        "monk",
        "priest",
        "spiritual",
        "god",
        "salvation",
    ),
    "technology": (
        "technolog",
        "print",
        "press",
        "machine",
        "invent",
        "innovat",
        "tool",
        "engine",
        "device",
        "media",
        "medium",
        "typograph",
        "paper",
        "comput",
        "digital",
        "internet",
    ),
    "economy": (
        "econom",
        "trade",
        "market",
        "merchant",
        "price",
        "cost",
        "profit",
        "commerc",
        "money",
        "capital",
        "labor",
        "labour",
        "wage",
        "guild",
        "industr",
        "financ",
        "tax",
    ),
    "politics": (
        "politic",
        "state",
        "prince",
        "king",
        "emperor",
        "govern",
        "law",
        "legal",
        "power",
        "authorit",
        "censor",
        "war",
        "diplomat",
        "empire",
        "imperial",
        "ruler",
        "nation",
        "polic",
        "elector",
        "territor",
    ),
    "society": (
        "societ",
        "social",
        "literac",
        "literate",
        "educat",
        "universit",
        "school",
        "class",
        "peasant",
        "urban",
        "city",
        "cities",
        "popul",
        "communit",
        "famil",
        "women",
        "gender",
    ),
    "culture": (
        "cultur",
        "art",
        "literatur",
        "languag",
        "vernacular",
        "humanis",
        "music",
        "poet",
        "book",
        "read",
        "writ",
        "pamphlet",
        "translat",
        "latin",
    ),
    "science": (
        "scien",
        "experiment",
        "astronom",
        "medic",
        "physic",
        "math",
        "empiric",
        "observ",
    ),
    "ideas": ("philosoph", "idea", "knowledg", "epistem", "belief", "truth", "reason"),
}

WORD_RE = re.compile(r"[a-z]+")


def lexicon_sha256(lexicon: dict[str, tuple[str, ...]]) -> str:
    canonical = json.dumps(list(lexicon.items()), separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


METHOD = (
    f"lexicon {LEXICON_NAME} (sha256 {lexicon_sha256(DEFAULT_LEXICON)[:12]}): "
    "word-stem hits, highest score wins, ties to the first-listed domain"
)


def assign_domain(text: str, lexicon: dict[str, tuple[str, ...]] = DEFAULT_LEXICON) -> str:
    words = WORD_RE.findall(text.lower())
    best, best_score = UNASSIGNED, 0
    for domain, stems in lexicon.items():
        score = sum(1 for w in words if w.startswith(stems))
        if score > best_score:
            best, best_score = domain, score
    return best


class EdgeCount(BaseModel):
    method: str
    edges: int  # node-parent pairs in the snapshot
    assigned: int  # of those, with both ends assigned
    cross: int
    share: float | None
    domains: dict[str, str]  # node id -> domain (the recorded assignment)


def cross_domain_edges(
    run: RunData, lexicon: dict[str, tuple[str, ...]] = DEFAULT_LEXICON
) -> EdgeCount:
    domains = {nid: assign_domain(n.text, lexicon) for nid, n in run.nodes.items()}
    edges = assigned = cross = 0
    for nid, n in run.nodes.items():
        if n.parent is None or n.parent not in run.nodes:
            continue
        edges += 1
        a, b = domains[nid], domains[n.parent]
        if UNASSIGNED in (a, b):
            continue
        assigned += 1
        cross += a != b
    method = (
        METHOD if lexicon is DEFAULT_LEXICON else f"lexicon sha256 {lexicon_sha256(lexicon)[:12]}"
    )
    return EdgeCount(
        method=method,
        edges=edges,
        assigned=assigned,
        cross=cross,
        share=(cross / assigned if assigned else None),
        domains=domains,
    )


@register(
    "cross_domain_share",
    definition="cross-domain share of question-to-question edges: node-parent edges whose "
    f"ends fall in different domains; domains by {METHOD}",
    unit="share of edges",
    denominator="node-parent edges of the final snapshot with both ends assigned a domain; "
    "mean over runs",
    higher_is_better=True,
    group="similarity",
)
def cross_domain_share(run: RunData) -> float | None:
    return cross_domain_edges(run).share
