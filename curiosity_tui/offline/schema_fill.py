"""A schema-following random model: every reply filled at random from the request's schema.

:class:`SchemaRandomResponder` is a responder for the scripted server
(``ScriptedServer(responder=SchemaRandomResponder(seed))``). It knows nothing of our prompts:
a structured request gets a random instance of its ``response_format`` JSON schema (what a
server with grammar-constrained decoding could produce), a free-text request random words.
Tests use it to show that the per-call schemas carry the rules: whatever such a server says,
our validators accept (issue 11, item 2).

It follows the JSON-schema keywords our schemas use: ``type`` (object, array, string, integer,
number, boolean, null), ``anyOf``, ``enum``, ``const``, ``properties`` (all of them: every
field is required), ``items``, ``prefixItems``, ``minItems``/``maxItems``,
``minLength``/``maxLength``, ``minimum``/``maximum``.
"""

from __future__ import annotations

import hashlib
import random
import threading
from typing import Any

ALPHABET = (
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"-()[]{}/\\é—ü✓\n\t"
)
OPEN_COUNT = 4  # items of an array without maxItems: at most minItems + this
OPEN_LENGTH = 60  # characters of a string without maxLength: at most minLength + this


def random_instance(schema: dict[str, Any], rng: random.Random) -> Any:
    """A random value that validates against ``schema`` (refs must be inlined)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "anyOf" in schema:
        return random_instance(rng.choice(schema["anyOf"]), rng)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "object" or "properties" in schema:
        props: dict[str, Any] = schema.get("properties", {})
        return {name: random_instance(sub, rng) for name, sub in props.items()}
    if kind == "array":
        return _array(schema, rng)
    if kind == "string":
        return _string(schema, rng)
    if kind == "integer":
        low = int(schema.get("minimum", -5))
        return rng.randint(low, int(schema.get("maximum", low + 10)))
    if kind == "number":
        return rng.uniform(float(schema.get("minimum", -5)), float(schema.get("maximum", 5)))
    if kind == "boolean":
        return rng.random() < 0.5
    return None


def _array(schema: dict[str, Any], rng: random.Random) -> list[Any]:
    if "prefixItems" in schema:
        return [random_instance(s, rng) for s in schema["prefixItems"]]
    low = int(schema.get("minItems", 0))
    high = int(schema.get("maxItems", low + OPEN_COUNT))
    return [random_instance(schema.get("items", {}), rng) for _ in range(rng.randint(low, high))]


def _string(schema: dict[str, Any], rng: random.Random) -> str:
    low = int(schema.get("minLength", 0))
    high = int(schema.get("maxLength", low + OPEN_LENGTH))
    n = rng.choice([low, high, rng.randint(low, high)])
    return "".join(rng.choice(ALPHABET) for _ in range(n))


class SchemaRandomResponder:
    """Random replies from the request's schema alone, deterministic per seed and request order."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._n: dict[tuple[str, int | None], int] = {}
        self._lock = threading.Lock()

    def _rng(self, kind: str, session: int | None) -> random.Random:
        with self._lock:
            n = self._n[(kind, session)] = self._n.get((kind, session), 0) + 1
        digest = hashlib.sha256(f"{self.seed}|{kind}|{session}|{n}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def __call__(self, kind: str, session: int | None, body: dict[str, Any]) -> Any:
        rng = self._rng(kind, session)
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return random_instance(fmt["json_schema"]["schema"], rng)
        letters = ALPHABET[:26]
        words = (
            "".join(rng.choice(letters) for _ in range(rng.randint(1, 9)))
            for _ in range(rng.randint(1, 40))
        )
        return " ".join(words)
