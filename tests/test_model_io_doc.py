"""docs/model-io.md quotes every response schema verbatim; this keeps it true."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from curiosity_tui.protocol.schemas import CALL_KINDS, SCHEMAS, strict_problems

DOC = Path(__file__).resolve().parent.parent / "docs" / "model-io.md"
BLOCK = re.compile(r"<!-- schema: (\w+) -->\s*```json\n(.*?)\n```", re.DOTALL)


def documented() -> dict[str, dict]:
    text = DOC.read_text(encoding="utf-8")
    found: dict[str, dict] = {}
    for name, body in BLOCK.findall(text):
        assert name not in found, f"{name} is documented twice"
        found[name] = json.loads(body)
    return found


def test_every_schema_block_parses_and_names_a_model():
    blocks = documented()
    assert set(blocks) <= set(SCHEMAS), f"unknown models documented: {set(blocks) - set(SCHEMAS)}"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_documented_schema_matches_model(name):
    blocks = documented()
    assert name in blocks, f"docs/model-io.md has no schema block for {name}"
    assert blocks[name] == SCHEMAS[name].model_json_schema(), (
        f"docs/model-io.md is out of date for {name}: regenerate its block from "
        f"{name}.model_json_schema()"
    )


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_strict_compatible(name):
    assert strict_problems(SCHEMAS[name].model_json_schema()) == []


def test_every_call_kind_has_a_section():
    text = DOC.read_text(encoding="utf-8")
    for kind in CALL_KINDS:
        assert re.search(rf"^## `{re.escape(kind)}`", text, re.MULTILINE), kind
