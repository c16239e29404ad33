"""Evidence records and the match check (S4).

A passage is *verified* only when it occurs in the cited source's text after whitespace and
quote normalisation. Prose the model composed — even if it reads like a citation — is stored as
``proposed`` and never raises a requirement's status.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MATCH_METHOD = "verbatim-after-whitespace-and-quote-normalisation/v1"

_QUOTES = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "`": "'",
    "\u00b4": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u00ab": '"',
    "\u00bb": '"',
}
_WS = re.compile(r"\s+")


def _clusters(text: str) -> list[tuple[int, str]]:
    """``text`` cut into (offset, NFC form) pieces: a starter with the combining marks (and
    conjoining Hangul jamo) that follow it. NFC never composes across these pieces, so every
    character of the normalised text can be traced back to an offset in the original."""
    out: list[tuple[int, str]] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i < len(text):
            ch = text[i]
            if unicodedata.combining(ch) or "\u1160" <= ch <= "\u11ff":
                continue
        out.append((start, unicodedata.normalize("NFC", text[start:i])))
        start = i
    return out


def normalise_with_map(text: str) -> tuple[str, list[int]]:
    """Normalised text and, for each of its characters, the offset in ``text`` (the original,
    as given: not its NFC form) of the character it came from."""
    if unicodedata.is_normalized("NFC", text):
        pieces: list[tuple[int, str]] = list(enumerate(text))
    else:
        pieces = _clusters(text)
    out: list[str] = []
    index: list[int] = []
    in_ws = False
    for i, piece in pieces:
        for ch in piece:
            if ch.isspace():
                if not in_ws and out:
                    out.append(" ")
                    index.append(i)
                in_ws = True
                continue
            in_ws = False
            out.append(_QUOTES.get(ch, ch))
            index.append(i)
    if out and out[-1] == " ":
        out.pop()
        index.pop()
    return "".join(out), index


def normalise(text: str) -> str:
    return normalise_with_map(text)[0]


@dataclass
class MatchOutcome:
    ok: bool
    offset: int | None
    reason: str


def _needle_pattern(needle: str) -> re.Pattern[str]:
    """A regex that finds a normalised ``needle`` in *un*-normalised (NFC) text: each space
    matches a whitespace run, each straight quote any quote it stands for, everything else
    itself. Equivalent to searching the normalised text, at C speed, with original offsets."""
    classes = {
        q: "[" + re.escape(q + "".join(k for k, v in _QUOTES.items() if v == q)) + "]"
        for q in ("'", '"')
    }
    parts = []
    for ch in needle:
        if ch == " ":
            parts.append(r"\s+")
        else:
            parts.append(classes.get(ch) or re.escape(ch))
    return re.compile("".join(parts))


def match_passage(passage: str, source_text: str) -> MatchOutcome:
    needle = normalise(passage)
    if len(needle) < 12:
        return MatchOutcome(
            False, None, "passage too short to verify (under 12 characters after normalisation)"
        )
    if unicodedata.is_normalized("NFC", source_text):
        found = _needle_pattern(needle).search(source_text)
        if found is None:
            return MatchOutcome(False, None, "passage does not occur in the cited source")
        return MatchOutcome(True, found.start(), "")
    hay, index = normalise_with_map(source_text)
    pos = hay.find(needle)
    if pos == -1:
        return MatchOutcome(False, None, "passage does not occur in the cited source")
    return MatchOutcome(True, index[pos], "")
