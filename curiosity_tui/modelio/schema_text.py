"""The schema as text, for a model that reads it (``json_object`` without a schema, and prompt
mode; issue 27 item 7).

A server that enforces the schema gets it whole, as JSON (``response_format``). A model that
only reads it gets it compact: the same JSON with no titles below the root, each description
once (the inlined ``$defs`` repeat them per use), a nullable scalar as ``"type": [T, "null"]``,
and what every object says alike (``"type": "object"`` beside its properties, ``required``:
every property, ``additionalProperties: false``) said once in words instead.
Measured per call kind in decision 360 (``benchmarks/bench_schema_text.py``).
"""

from __future__ import annotations

import json
from typing import Any

PREAMBLE = (
    "Reply with one JSON object and nothing else. It must validate against this JSON schema "
    "(every property shown is required, null where the schema allows it; no other keys):\n"
)


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without what a reader does not need (a new dict; ``schema`` is untouched)."""
    seen: set[str] = set()

    def walk(node: Any, root: bool) -> Any:
        if isinstance(node, list):
            return [walk(v, False) for v in node]
        if not isinstance(node, dict):
            return node
        node = _nullable_scalar(node)
        props = node.get("properties")
        every = isinstance(props, dict) and sorted(node.get("required", [])) == sorted(props)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and not root and isinstance(value, str):
                continue
            if key == "description" and isinstance(value, str):
                if value in seen:
                    continue
                seen.add(value)
            if key == "additionalProperties" and value is False:
                continue
            if key == "required" and every:
                continue
            if key == "type" and value == "object" and isinstance(props, dict):
                continue  # "properties" says it
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: walk(sub, False) for name, sub in value.items()}
                continue
            out[key] = walk(value, False)
        return out

    result: dict[str, Any] = walk(schema, True)
    return result


def _nullable_scalar(node: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [{"type": T, ...}, {"type": "null"}], ...}`` as ``{"type": [T, "null"], ...}``
    where T is a scalar type (the same JSON schema, said shorter)."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2 or {"type": "null"} not in branches:
        return node
    other = next(b for b in branches if b != {"type": "null"})
    if not isinstance(other, dict) or other.get("type") not in (
        "string",
        "integer",
        "number",
        "boolean",
    ):
        return node
    out = {k: v for k, v in node.items() if k != "anyOf"}
    out.update(other)
    out["type"] = [other["type"], "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def schema_text(schema: dict[str, Any]) -> str:
    """The instruction and the compact schema, as put in the last user turn."""
    body = json.dumps(compact_schema(schema), ensure_ascii=False, separators=(",", ":"))
    return PREAMBLE + body
