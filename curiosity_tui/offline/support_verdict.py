"""The scripted support judge (decision 520): a deterministic verdict from the words a
requirement and a verified passage share, so that offline runs exercise ``yes``, ``partly``
and ``no``. Labelled scripted like every offline reply; none of it is a model's judgement."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]{4,}")
_STOP = frozenset({"that", "this", "with", "from", "were", "have", "which", "their", "there"})


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def parse_request(text: str) -> tuple[str, str]:
    """(requirement, passage) out of a ``support-judge`` prompt."""
    req = re.search(r"^Required fact: (.+)$", text, flags=re.M)
    passage = re.search(r"^Passage:\n(.*)\Z", text, flags=re.M | re.S)
    return (req.group(1) if req else "", passage.group(1) if passage else "")


def scripted_verdict(text: str, tag: str = "") -> dict[str, str]:
    """yes when the requirement and passage share three or more content words, partly for
    one or two, no for none."""
    requirement, passage = parse_request(text)
    shared = sorted(_words(requirement) & _words(passage))
    if len(shared) >= 3:
        verdict = "yes"
    elif shared:
        verdict = "partly"
    else:
        verdict = "no"
    said = ", ".join(shared[:5]) or "none of its words"
    return {
        "verdict": verdict,
        "grounds": f"{tag}The passage shares {said} with the required fact.",
    }
