"""An independent JSON-schema sampler (issue 27 item 2): written apart from
``protocol/schema_fill.py`` and knowing nothing of our rules, only the JSON-schema keywords.

It draws values a schema-obedient server could send, leaning on the edges: empty and blank
strings, strings at exactly ``minLength``/``maxLength``, arrays at their count bounds, the
same enum value repeated (duplicate-prone: one listed id, one requirement, one live node),
``null`` wherever a type allows it. Keywords followed: ``type`` (one or a list), ``anyOf``,
``oneOf``, ``enum``, ``const``, ``properties``/``required``/``additionalProperties``,
``items``, ``prefixItems``, ``minItems``/``maxItems``, ``minLength``/``maxLength``,
``minimum``/``maximum``. Any other keyword is an error: a sampler that silently ignored one
could draw values the schema forbids, or miss ones it allows.

``words=True`` draws text as a model writes it (3 to 12 words) instead of arbitrary
characters; the schema-obedient server (tests/schema_server.py) uses it.
"""

from __future__ import annotations

import random
import string
from typing import Any

KNOWN = {
    "type",
    "anyOf",
    "oneOf",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "title",
    "description",
}
CHARS = string.ascii_letters + string.digits + " \t\n.,;:'\"-—é✓(){}[]\\/"
SPARE_ITEMS = 6  # an array without maxItems: up to minItems + this
SPARE_CHARS = 80  # a string without maxLength: up to minLength + this


class UnknownKeyword(ValueError):
    pass


def sample(schema: dict[str, Any], rng: random.Random, *, words: bool = False) -> Any:
    """A random instance of ``schema`` (refs must already be inlined)."""
    extra = set(schema) - KNOWN
    if extra:
        raise UnknownKeyword(f"schema keyword(s) the sampler does not know: {sorted(extra)}")
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return sample(rng.choice(schema[key]), rng, words=words)
    kinds = schema.get("type")
    kind = rng.choice(kinds) if isinstance(kinds, list) else kinds
    if kind == "object":
        return _object(schema, rng, words)
    if kind == "array":
        return _array(schema, rng, words)
    if kind == "string":
        return _text(schema, rng) if words else _string(schema, rng)
    if kind == "integer":
        low = schema.get("minimum", -3)
        return rng.randint(low, schema.get("maximum", low + 20))
    if kind == "number":
        return rng.uniform(schema.get("minimum", -3.0), schema.get("maximum", 3.0))
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "null":
        return None
    raise UnknownKeyword(f"schema without a type the sampler knows: {schema}")


def _object(schema: dict[str, Any], rng: random.Random, words: bool) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    out = {}
    for name, sub in props.items():
        if name in required or rng.random() < 0.5:
            out[name] = sample(sub, rng, words=words)
    extra = schema.get("additionalProperties", True)
    if isinstance(extra, dict):  # a map: up to three keys of its own
        for _ in range(rng.randint(0, 3)):
            out["".join(rng.choices(string.ascii_letters, k=3))] = sample(extra, rng, words=words)
    return out


def _array(schema: dict[str, Any], rng: random.Random, words: bool) -> list[Any]:
    head = [sample(s, rng, words=words) for s in schema.get("prefixItems", [])]
    low = max(schema.get("minItems", 0), len(head))
    high = schema.get("maxItems", low + SPARE_ITEMS)
    if "items" in schema and schema["items"] is False:
        high = len(head)
    n = rng.choice([low, high, rng.randint(low, high)])
    item = schema.get("items", {})
    if n > len(head) and isinstance(item, dict) and "enum" in item and rng.random() < 0.3:
        repeated = rng.choice(list(item["enum"]))  # the same value, again and again
        return head + [repeated] * (n - len(head))
    return head + [sample(item, rng, words=words) for _ in range(n - len(head))]


def _string(schema: dict[str, Any], rng: random.Random) -> str:
    low = schema.get("minLength", 0)
    high = schema.get("maxLength", low + SPARE_CHARS)
    n = rng.choice([low, high, rng.randint(low, high)])
    if rng.random() < 0.15:
        return " " * n  # blank, and as long as allowed
    return "".join(rng.choice(CHARS) for _ in range(n))


def _text(schema: dict[str, Any], rng: random.Random) -> str:
    low = schema.get("minLength", 0)
    high = schema.get("maxLength", 10_000)
    words = (
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))
        for _ in range(rng.randint(3, 12))
    )
    text = " ".join(words)[:high]
    return text + "x" * max(0, low - len(text))
