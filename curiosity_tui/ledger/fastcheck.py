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


def _value_check(annotation: Any) -> Checker | None:
    """A check that a value certainly validates as ``annotation`` (None: not plain)."""
    if annotation is str:
        return lambda v: type(v) is str
    if annotation is int:
        return lambda v: type(v) is int
    if annotation is float:
        return lambda v: type(v) is float or type(v) is int
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal and all(type(a) is str for a in args):
        allowed = frozenset(args)
        return lambda v: type(v) is str and v in allowed
    if origin is list and args == (str,):
        return lambda v: type(v) is list and all(type(x) is str for x in v)
    if origin in (typing.Union, types.UnionType) and _NONE in args:
        rest = [a for a in args if a is not _NONE]
        inner = _value_check(rest[0]) if len(rest) == 1 else None
        if inner is None:
            return None
        return lambda v: v is None or inner(v)
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
    model is not plain (then pydantic validates every event of it)."""
    if not _is_plain_model(schema):
        return None
    checks: dict[str, Checker] = {}
    required: set[str] = set()
    for name, field in schema.model_fields.items():
        if field.metadata or field.alias not in (None, name):
            return None
        check = _value_check(field.annotation)
        if check is None:
            return None
        checks[name] = check
        if field.is_required():
            required.add(name)
    allowed = frozenset(checks)
    need = frozenset(required)

    def certainly_valid(data: Any) -> bool:
        if type(data) is not dict:
            return False
        keys = data.keys()
        if not (need <= keys <= allowed):
            return False
        for key, value in data.items():  # noqa: SIM110 - a loop is cheaper than all() here
            if not checks[key](value):
                return False
        return True

    return certainly_valid
