"""CallSpec.json_schema builds each model's base schema once (a cached template, copied per
call): the schemas are exactly what the per-call construction gave, on every kind of spec,
both dialects and varied ids, and no call's rules leak into another call's schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from curiosity_tui.modelio import call_schemas as cs
from curiosity_tui.protocol import call_specs as sp
from curiosity_tui.protocol.schemas import JudgeBeforeResponse


def _definitional(spec: cs.CallSpec, dialect: cs.Dialect) -> dict[str, Any]:
    """json_schema as it was written before the template: built from pydantic every call."""
    base = spec.model.model_json_schema()
    schema = cs._inline(base, base.get("$defs", {}))
    schema.pop("$defs", None)
    if dialect == "strict":
        cs._strip_counts(schema)
    for rule in spec.rules:
        for node in cs._schema_nodes(schema, rule.path):
            cs._apply(node, rule, dialect)
    for path in spec.slotted(dialect):  # strict: bounded lists as slots (issue 27)
        rule = next(r for r in spec.rules if r.path == path and r.max_items is not None)
        for node in cs._schema_nodes(schema, path):
            cs._array_as_slots(node, path, rule.min_items, rule.max_items or 0)
    return schema


def _specs() -> list[cs.CallSpec]:
    before = JudgeBeforeResponse(framings=["a", "b"], dependencies=["c"])
    out = [sp.judge_before_spec(), sp.judge_after_spec(before), sp.self_ask_spec()]
    for n in (0, 1, 4, 9):
        ids = [f"q{i}" for i in range(1, n + 1)]
        live = ids[: max(0, n - 1)]
        sources = [f"s{i}" for i in range(n)]
        out += [
            sp.checker_spec(f"R{n}", sources),
            sp.curator_spec(ids, live),
            sp.curator_spec(ids),
            sp.armed_self_ask_spec(ids, sources, live),
        ]
        for flags in ((True, True, False), (False, False, True)):
            out.append(
                sp.deliverable_spec(
                    node_ids=ids or ["q1"],
                    live_ids=live or None,
                    focus_id=(ids or ["q1"])[0],
                    requirement_ids=[f"R{i}" for i in range(n)],
                    open_layer_min=min(n, 2),
                    checks_in_deliverable=flags[0],
                    downgrades_allowed=flags[1],
                    preserve=flags[2],
                    source_ids=sources,
                )
            )
    return out


@pytest.mark.parametrize("dialect", list(cs.DIALECTS))
def test_the_template_gives_the_schemas_built_per_call(dialect: cs.Dialect) -> None:
    specs = _specs()
    for _ in range(2):  # the second round reads the cached templates
        for spec in specs:
            got, want = spec.json_schema(dialect), _definitional(spec, dialect)
            assert json.dumps(got) == json.dumps(want)  # same keys, order and values


def test_a_call_changing_its_schema_does_not_change_the_next() -> None:
    spec = sp.curator_spec(["q1", "q2"])
    first = spec.json_schema("full")
    first["properties"]["actions"]["items"]["properties"].clear()
    first["required"].append("mutated")
    assert json.dumps(spec.json_schema("full")) == json.dumps(_definitional(spec, "full"))
    slots = spec.json_schema("strict")  # strict: the bounded list is slots, each its own copy
    slots["properties"]["actions"]["properties"]["action_1"]["anyOf"][0]["properties"].clear()
    assert json.dumps(spec.json_schema("strict")) == json.dumps(_definitional(spec, "strict"))
