"""A pure-Python pre-check of event data for replay (decision 215): for a data model whose
fields are all plain (``str``, ``int``, ``float``, ``None``, a ``Literal`` of strings, a
``list[str]``), with ``extra="forbid"`` and no validators, a dict whose keys and value types
fit is exactly one pydantic accepts unchanged. Replay validates such events with this check
and hands everything else (and every event it cannot vouch for) to pydantic, which names the
field. Derived from the models, so it cannot drift from them."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

Checker = Callable[[Any], bool]

_NONE = type(None)


def _value_test(annotation: Any, names: dict[str, Any]) -> str | None:
    """A Python expression over ``v`` that is true only if ``v`` certainly validates as
    ``annotation`` unchanged (None: not plain). Constants it needs go into ``names``."""
    if annotation is str:
        return "type(v) is str"
    if annotation is int:
        return "type(v) is int"
    if annotation is float:
        return "(type(v) is float or type(v) is int)"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal and all(type(a) is str for a in args):
        name = f"_L{len(names)}"
        names[name] = frozenset(args)
        return f"(type(v) is str and v in {name})"
    if origin is list and args == (str,):
        return "(type(v) is list and all(type(x) is str for x in v))"
    if origin in (typing.Union, types.UnionType) and _NONE in args:
        rest = [a for a in args if a is not _NONE]
        inner = _value_test(rest[0], names) if len(rest) == 1 else None
        return None if inner is None else f"(v is None or {inner})"
    return None


def _is_plain_model(schema: type[BaseModel]) -> bool:
    deco = schema.__pydantic_decorators__
    if any(
        (
            deco.validators,
            deco.field_validators,
            deco.root_validators,
            deco.model_validators,
        )
    ):
        return False
    cfg = schema.model_config
    return cfg.get("extra") == "forbid" and not cfg.get("strict") and not cfg.get("str_max_length")


def data_checker(schema: type[BaseModel]) -> Checker | None:
    """A check that a data dict certainly validates against ``schema``; None when the
    model is not plain (then pydantic validates every event of it). The check is one
    straight-line function written from the model's fields (decision 250): each field is
    looked up once and tested for its exact type, and the count of fields found must be the
    dict's length (so no key outside the model: ``extra="forbid"``)."""
    if not _is_plain_model(schema):
        return None
    names: dict[str, Any] = {"_MISSING": _MISSING}
    body = ["def certainly_valid(data):", "    if type(data) is not dict:", "        return False"]
    body.append("    n = 0")
    for name, field in schema.model_fields.items():
        if field.metadata or field.alias not in (None, name) or not name.isidentifier():
            return None
        test = _value_test(field.annotation, names)
        if test is None:
            return None
        body.append(f"    v = data.get({name!r}, _MISSING)")
        if field.is_required():
            body += ["    if v is _MISSING:", "        return False"]
            body += [f"    if not {test}:", "        return False", "    n += 1"]
        else:
            body += [
                "    if v is not _MISSING:",
                f"        if not {test}:",
                "            return False",
            ]
            body.append("        n += 1")
    body.append("    return len(data) == n")
    exec("\n".join(body), names)  # noqa: S102 - code written here from the model's own fields
    check: Checker = names["certainly_valid"]
    return check


#: a key's absence (``None`` is a value)
_MISSING = object()
