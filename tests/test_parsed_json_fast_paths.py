"""The two walks a structured reply skipped when they provably change nothing: the lone-
surrogate replacement (``textsafe.replace_unstorable_in_json``) gives what the full walk gives
on varied JSON texts, keys included; and no parsed string is longer than its text, so the
longest-field check can be skipped for a reply no longer than the cap."""

from __future__ import annotations

import json
import random
from typing import Any

from curiosity_tui.modelio.json_reply import longest_string, parse_json_object
from curiosity_tui.textsafe import replace_unstorable_in, replace_unstorable_in_json

#: pieces of JSON string text: plain, escaped, surrogate escapes of both cases, a pair and a
#: reversed pair, an escaped backslash before "u", a raw lone surrogate, non-BMP text
PIECES = [
    "a",
    "why?",
    "é",
    "😀",
    " ",
    "\\n",
    '\\"',
    "\\\\",
    "\\/",
    "\\u00e9",
    "\\u0000",
    "\\uD7FF",
    "\\ue000",
    "\\uFFFF",
    "\\ud800",
    "\\uD800",
    "\\uDBFF",
    "\\udc00",
    "\\uDFFF",
    "\\uDfFf",
    "\\uD83D\\uDE00",
    "\\ud83d\\ude00",
    "\\uDE00\\uD83D",
    "\\uD83D",
    "\\\\ud800",
    "\\\\uD83D",
    "\ud800",
    "\udfff",
    "u",
    "d800",
]
PLAIN = [p for p in PIECES if "\\u" not in p.lower() and not ("\ud800" <= p[0] <= "\udfff")]


def _string(rng: random.Random, pieces: list[str]) -> str:
    return '"' + "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 6))) + '"'


def _value(rng: random.Random, pieces: list[str], depth: int = 0) -> str:
    kind = rng.randrange(7 if depth < 3 else 3)
    if kind == 0:
        return _string(rng, pieces)
    if kind == 1:
        return rng.choice(["0", "-1.5", "1e3", "true", "false", "null"])
    if kind == 2:
        return _string(rng, pieces)
    if kind in (3, 4):
        items = [_value(rng, pieces, depth + 1) for _ in range(rng.randrange(0, 4))]
        return "[" + ", ".join(items) + "]"
    members = [
        f"{_string(rng, pieces)}: {_value(rng, pieces, depth + 1)}"
        for _ in range(rng.randrange(0, 4))
    ]
    return "{" + ",".join(members) + "}"


def _texts(seed: int, pieces: list[str], n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        text = (
            "{" + f'"q": {_value(rng, pieces)}, {_string(rng, pieces)}: {_value(rng, pieces)}' + "}"
        )
        if rng.random() < 0.2:
            text = "```json\n" + text + "\n```"
        out.append(text)
    return out


TEXTS = _texts(1, PIECES, 400) + _texts(2, PLAIN, 200)
COLLIDING = [
    '{"\\ud800": 1, "\\udc00": 2}',  # both keys become U+FFFD: the later one wins
    '{"\\ufffd": 1, "\\ud800": [2, "\\udfff"]}',
    '{"a": {"\\uDBFF": "\\uDBFF\\uDBFF"}, "\\uDBFF": null}',
]


def _exact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)  # key order, types and every code point


def _objects(texts: list[str]) -> list[tuple[str, Any]]:
    """The texts a structured call would walk (one JSON object), each with its value."""
    out = []
    for text in texts:
        try:
            out.append((text, parse_json_object(text)))
        except ValueError:
            continue  # not an object: the call fails before any walk
    return out


def test_the_skipping_walk_equals_the_full_walk() -> None:
    for text, parsed in _objects(TEXTS + COLLIDING):
        want_value, want_n = replace_unstorable_in(parse_json_object(text))
        got_value, got_n = replace_unstorable_in_json(parsed, text)
        assert (got_n, _exact(got_value)) == (want_n, _exact(want_value)), ascii(text)


def test_the_data_covers_both_outcomes() -> None:
    parsed = _objects(TEXTS + COLLIDING)
    skipped = [t for t, v in parsed if replace_unstorable_in_json(v, t)[0] is v]
    replaced = [t for t, v in parsed if replace_unstorable_in(v)[1] > 0]
    assert len(parsed) > 400 and len(skipped) > 150 and len(replaced) > 100


def test_a_skipped_walk_returns_the_value_itself() -> None:
    value = {"a": ["b", {"c": "\u00e9😀"}]}
    text = json.dumps(value, ensure_ascii=False)
    assert replace_unstorable_in_json(value, text)[0] is value
    escaped = json.dumps(value)  # "\u00e9\ud83d\ude00": walked, same result
    assert replace_unstorable_in_json(value, escaped) == (value, 0)


def test_no_parsed_string_is_longer_than_its_text() -> None:
    for text, parsed in _objects(TEXTS):
        assert longest_string(parsed) <= len(text), ascii(text)
    assert longest_string(parse_json_object('{"a": "' + "y" * 50 + '"}')) == 50
