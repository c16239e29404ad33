"""The schema text a model reads in prompt mode is compact (issue 27 item 7): valid JSON with
each description once, no titles below the root, no keyword every object repeats, and the
same constraints (enums, nullables, keys) as the schema a server would get."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from curiosity_tui.modelio.schema_text import PREAMBLE, compact_schema, schema_text
from curiosity_tui.protocol.call_specs import deliverable_spec, judge_before_spec

SPECS = {
    "deliverable": deliverable_spec(
        node_ids=["q1", "q2"],
        focus_id="q1",
        requirement_ids=["q1.f1"],
        open_layer_min=1,
        checks_in_deliverable=True,
        downgrades_allowed=True,
        preserve=False,
        source_ids=["a" * 64],
    ),
    "judge-before": judge_before_spec(),
}


def _values(node: Any, key: str) -> list[Any]:
    if isinstance(node, dict):
        return (
            [v for k, v in node.items() if k == key]
            + [x for k, v in node.items() for x in _values(v, key) if k != "properties"]
            + [x for v in (node.get("properties") or {}).values() for x in _values(v, key)]
        )
    if isinstance(node, list):
        return [x for v in node for x in _values(v, key)]
    return []


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_text_is_compact_and_says_the_same_keys_and_enums(name: str) -> None:
    spec = SPECS[name]
    schema = spec.json_schema("strict")
    text = schema_text(schema)
    assert text.startswith(PREAMBLE)
    body = json.loads(text[len(PREAMBLE) :])
    descriptions = [d for d in re.findall(r'"description":("(?:[^"\\]|\\.)*")', text)]
    assert len(descriptions) == len(set(descriptions)) > 0
    assert '"additionalProperties"' not in text and '"required"' not in text
    assert text.count('"title"') == 1 and body["title"] == schema["title"]
    assert len(text) < len(json.dumps(schema, ensure_ascii=False, sort_keys=True))
    enums = sorted(json.dumps(e) for e in _values(schema, "enum"))
    said = sorted(json.dumps([v for v in e if v is not None]) for e in _values(body, "enum"))
    assert said == enums
    assert compact_schema(schema) == body and schema == spec.json_schema("strict")  # untouched
