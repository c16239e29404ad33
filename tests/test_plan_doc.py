"""docs/plan.md lists every plan key with its type, default and meaning, held to the plan
model: a key missing from the doc, a row for a key the model lacks, or a default that
differs, fails here."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from curiosity_tui.analysis.plan import PilotPlan

DOC = Path(__file__).resolve().parents[1] / "docs" / "plan.md"


def _models_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model inside an annotation, and whether it sits in a dict (keyed by a name)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    for a in args:
        model, keyed = _models_in(a)
        if model is not None:
            return model, keyed or origin is dict
    return None, False


def _model_keys(model: type[BaseModel], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, f in model.model_fields.items():
        key = prefix + name
        if f.is_required():
            out[key] = "required"
        elif f.default_factory is not None:
            out[key] = f.default_factory()  # type: ignore[call-arg]
        else:
            out[key] = f.default
        inner, keyed = _models_in(f.annotation)
        if inner is not None:
            out.update(_model_keys(inner, f"{key}.<name>." if keyed else f"{key}."))
    return out


def _doc_rows() -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            assert len(cells) == 3 and all(cells), f"docs/plan.md: row {m.group(1)} is incomplete"
            assert m.group(1) not in rows, f"docs/plan.md lists {m.group(1)} twice"
            rows[m.group(1)] = cells[1]
    return rows


def _doc_default(cell: str) -> Any:
    if cell in ("required", "none"):
        return {"none": None}.get(cell, cell)
    m = re.fullmatch(r"`(.*)`", cell)
    assert m, f"a default is `value`, none or required, got {cell!r}"
    return json.loads(m.group(1))


def test_every_plan_key_is_documented_and_no_other() -> None:
    model = _model_keys(PilotPlan)
    doc = _doc_rows()
    assert sorted(set(model) - set(doc)) == [], "plan keys missing from docs/plan.md"
    assert sorted(set(doc) - set(model)) == [], "docs/plan.md rows for keys the plan lacks"


def test_documented_defaults_are_the_models() -> None:
    model = _model_keys(PilotPlan)
    for key, cell in _doc_rows().items():
        assert _doc_default(cell) == model[key], f"docs/plan.md: {key} default {cell}"


def test_the_walk_sees_nested_keys() -> None:  # the test above is not vacuous
    keys = _model_keys(PilotPlan)
    assert keys["pack.sessions"] == "1,last" and keys["relay.models.<name>.base_url"] == "required"
    assert keys["arms.<name>.config"] == "required" and keys["comparisons.rule.margin"] == 0.0
