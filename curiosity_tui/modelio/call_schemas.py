"""Per-call response schemas that carry the rules (issue 11 item 2; decision 150).

A :class:`CallSpec` is the ONE source of what a structured call's reply may be: the response
model (``schemas.py``) plus :class:`Rule` s built for this call from what the session knows (the
ids the judge-before listed, the ledger's node ids, the focus's requirement ids, the open layer's
bounds). From it come both

* the JSON schema sent to the endpoint (:meth:`CallSpec.json_schema`), in one of two dialects:

  - ``strict``: the common subset hosted APIs accept in strict mode: every field required,
    nullable instead of optional, ``additionalProperties: false``, ``enum`` s; no item counts,
    no string lengths, no tuples; a list with a bound (guidance too) is sent as an object of
    that many nullable slots (``facts``: ``fact_1`` … ``fact_3``), read back into the list by
    :meth:`CallSpec.reply_model` (issue 27: a runaway list cannot run past its slots);
  - ``full``: strict plus ``minItems``/``maxItems`` and ``minLength``/``maxLength`` (lists
    stay lists);

  an enforced count or pairing is said by the reply's shape in both (issue 27, decision 360): a
  ``min_items``/``max_items`` rule on an object of nullable slots drops the first slots' null
  branch and the slots past the bound; an ``exact_ids`` rule turns a map into an object whose
  properties are exactly the listed ids, all required. :meth:`CallSpec.checked_after` names what
  a dialect still cannot say (checked on the reply; the call's repair turn follows);

* and the validator run on every reply (:meth:`CallSpec.check`), whatever the dialect, for the
  rules marked ``enforced`` (servers without constrained decoding exist).

A rule that is not ``enforced`` is guidance the schema carries (node ids, requirement ids, size
bounds that keep a small model's reply inside its token cap); breaking it does not fail the call:
the apply step drops what names an unknown node or requirement and lists it in ``rejected``.

The specs of the calls are built in ``protocol/call_specs.py``; a spec's ``stored`` turns a
checked reply into the record the ledger keeps (``protocol/reply_shapes.py``).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, create_model, model_validator

Dialect = Literal["strict", "full"]
DIALECTS: tuple[str, ...] = ("strict", "full")

_COUNT_KEYS = ("minItems", "maxItems", "minLength", "maxLength", "prefixItems", "minimum")


@dataclass(frozen=True)
class Rule:
    """One constraint on the reply at ``path``.

    ``path`` names a field by its properties, ``[]`` stepping into every item of an array:
    ``"framings"``, ``"open_layer.living_questions"``, ``"actions[].node"``.
    """

    path: str
    one_of: tuple[str, ...] | None = None  # allowed strings (a nullable field may also be null)
    min_items: int | None = None
    max_items: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    exact_ids: tuple[str, ...] | None = None  # an array of {id, ...}: each id exactly once
    enforced: bool = True  # the validator rejects a reply that breaks it

    def problems(self, where: str, value: Any) -> Iterator[str]:
        """What is wrong with ``value`` (found at ``where``) under this rule. A list's items
        are its elements; an object's (slots, or a map keyed by id) its values not null."""
        if self.exact_ids is not None and isinstance(value, list | dict):
            got = _ids_of(value)
            want = list(self.exact_ids)
            if sorted(got) != sorted(want) or len(set(got)) != len(got):
                yield f"{where}: judge exactly the listed ids {want} once each, nothing else (got {got})"
        if isinstance(value, list | dict):
            n = (
                len(value)
                if isinstance(value, list)
                else sum(v is not None for v in value.values())
            )
            if self.min_items is not None and n < self.min_items:
                yield f"{where}: give at least {self.min_items} item(s) (got {n})"
            if self.max_items is not None and n > self.max_items:
                yield f"{where}: give at most {self.max_items} item(s) (got {n})"
        if isinstance(value, str):
            if self.one_of is not None and value not in self.one_of:
                yield f"{where}: {value!r} is not one of {list(self.one_of)}"
            if self.min_length is not None and not value.strip():
                yield f"{where}: blank; write the text"
            elif self.min_length is not None and len(value) < self.min_length:
                yield (
                    f"{where}: {value!r} is too short: write it out in full, at least "
                    f"{self.min_length} characters (got {len(value)})"
                )
            if self.max_length is not None and len(value) > self.max_length:
                yield f"{where}: at most {self.max_length} characters (got {len(value)})"


def _ids_of(value: list[Any] | dict[str, Any]) -> list[str]:
    if isinstance(value, dict):  # a map keyed by id (the wire shape)
        return [str(k) for k in value]
    return [str(item.get("id", "")).strip() for item in value if isinstance(item, dict)]


@dataclass(frozen=True)
class CallSpec:
    """A structured call's response model and the rules built for this call."""

    model: type[BaseModel]
    rules: tuple[Rule, ...] = ()
    #: the reply's wire shape -> the record stored (protocol/reply_shapes.to_record); None: the
    #: reply is stored as it is
    stored: Callable[[BaseModel], BaseModel] | None = None

    @property
    def name(self) -> str:
        return self.model.__name__

    def with_rule(self, rule: Rule) -> CallSpec:
        """This spec with ``rule`` replacing the rule on the same path (or added)."""
        kept = tuple(r for r in self.rules if r.path != rule.path)
        return replace(self, rules=(*kept, rule))

    def json_schema(self, dialect: Dialect = "strict") -> dict[str, Any]:
        """The schema to send (a fresh dict): the model's, refs inlined, the rules applied."""
        if dialect not in DIALECTS:
            raise ValueError(f"unknown schema dialect {dialect!r} (use one of {list(DIALECTS)})")
        return _copy_tree(_built(self, dialect))  # type: ignore[no-any-return]

    def slotted(self, dialect: Dialect) -> tuple[str, ...]:
        """The paths of the lists sent as objects of slots: in ``strict``, every list with a
        bound (``max_items``), which only a shape can say there."""
        if dialect != "strict":
            return ()
        template = _template(self.model, dialect)
        return tuple(
            dict.fromkeys(
                r.path
                for r in self.rules
                if r.max_items is not None
                and any(
                    _non_null(n).get("type") == "array" for n in _schema_nodes(template, r.path)
                )
            )
        )

    def reply_model(self, dialect: Dialect = "strict") -> type[BaseModel]:
        """The model a reply in ``dialect`` is read with: :attr:`model`, reading the slots of
        the lists :meth:`slotted` sends back into lists (their values not null, in slot order).
        :meth:`record` gives the stored record as :attr:`model` itself."""
        paths = self.slotted(dialect)
        return _reading(self.model, paths) if paths else self.model

    def breaks(self, reply: BaseModel) -> list[tuple[Rule, str, str]]:
        """Every enforced rule the reply breaks: (rule, where, what is wrong)."""
        data = reply.model_dump(mode="json")
        out: list[tuple[Rule, str, str]] = []
        for rule in self.rules:
            if not rule.enforced:
                continue
            for where, value in _data_values(data, rule.path):
                out.extend((rule, where, problem) for problem in rule.problems(where, value))
        return out

    def description(self, path: str) -> str:
        """What the schema says of the field at ``path`` and of the list it is in (the words a
        repair asks with)."""
        template = _template(self.model, "full")
        said: list[str] = []
        paths = [path.rsplit("[]", 1)[0], path] if "[]" in path else [path]
        for p in paths:
            for node in _schema_nodes(template, p)[:1]:
                text = node.get("description") or _non_null(node).get("description")
                if isinstance(text, str) and text not in said:
                    said.append(text)
        return " ".join(said)

    def check(self, reply: BaseModel) -> None:
        """Raise ValueError naming every enforced rule the reply breaks."""
        found = [problem for _rule, _where, problem in self.breaks(reply)]
        if found:
            raise ValueError(
                "; ".join(found[:5]) + (f" (+{len(found) - 5} more)" if len(found) > 5 else "")
            )

    def validator(self) -> Callable[[BaseModel], None]:
        return self.check

    def record(self, reply: BaseModel) -> BaseModel:
        """The stored record of a checked reply (translated once, here, from the wire shape;
        a reply read with :meth:`reply_model` comes back as :attr:`model`)."""
        if self.stored is not None:
            return self.stored(reply)
        if type(reply) is not self.model:
            return self.model.model_validate(reply.model_dump())
        return reply

    def shorter(self) -> CallSpec:
        """This spec for the retry after a reply cut at its cap (issue 27): every guidance
        bound tighter, the enforced rules as they are: a guidance ``max_items`` or
        ``max_length`` halved (a text never below its least length). Said in ``full``
        (counts and lengths); ``strict`` cannot say them, so its retry schema is the same."""
        rules = []
        for rule in self.rules:
            if not rule.enforced:
                half = None if rule.max_length is None else max(rule.max_length // 2, 1)
                low = rule.min_length or 0
                rule = replace(
                    rule,
                    max_items=None if rule.max_items is None else rule.max_items // 2,
                    max_length=None if half is None else max(half, low),
                )
            rules.append(rule)
        return replace(self, rules=tuple(rules))

    def checked_after(self, dialect: Dialect) -> list[Rule]:
        """The enforced rules ``dialect`` cannot say: :meth:`check` finds a break after the
        reply, and the call's repair turn follows. In any dialect, a least length's "not
        blank" (a schema without ``pattern`` counts spaces as text); in ``strict`` also every
        length, and counts on a plain array (the replies' bounded lists are slots instead)."""
        schema = _template(self.model, dialect)
        out = []
        for rule in self.rules:
            if not rule.enforced:
                continue
            if rule.min_length is not None or (dialect == "strict" and rule.max_length is not None):
                out.append(rule)
            elif dialect == "strict" and rule.min_items is not None and rule.max_items is None:
                nodes = _schema_nodes(schema, rule.path)  # a bound list is slots instead
                if any(_non_null(n).get("type") == "array" for n in nodes):
                    out.append(rule)
        return out


# --------------------------------------------------------------------------- schema side


@functools.lru_cache(maxsize=64)
def _built(spec: CallSpec, dialect: Dialect) -> dict[str, Any]:
    """``spec``'s schema in ``dialect``, built once (read-only; ``json_schema`` copies it). The
    specs a pilot's concurrent sessions ask with repeat (the judges' fixed ids, a scripted
    pilot: 208 hits, 22 misses); a deliverable's schema names the ledger's node ids, so it is
    32 KB at 100 nodes: 64 entries bound what the cache holds."""
    schema: dict[str, Any] = _copy_tree(_template(spec.model, dialect))
    for rule in spec.rules:
        for node in _schema_nodes(schema, rule.path):
            _apply(node, rule, dialect)
    for path in spec.slotted(dialect):  # last: each slot gets the item with its rules
        for node in _schema_nodes(schema, path):
            rule = next(r for r in spec.rules if r.path == path and r.max_items is not None)
            _array_as_slots(node, path, rule.min_items, rule.max_items or 0)
    return schema


@functools.cache
def _template(model: type[BaseModel], dialect: Dialect) -> dict[str, Any]:
    """The model's schema with refs inlined (and counts stripped, strict): the same for every
    call of a model, so built once (pydantic's ``model_json_schema`` costs ~2 ms, and a pilot
    makes thousands of structured calls; issue 14.5). Read-only: ``json_schema`` copies it."""
    base = model.model_json_schema()
    schema: dict[str, Any] = _inline(base, base.get("$defs", {}))
    schema.pop("$defs", None)
    if dialect == "strict":
        _strip_counts(schema)
    return schema


def _copy_tree(node: Any) -> Any:
    """A copy of a JSON tree (dicts and lists copied, key order kept, scalars shared)."""
    if isinstance(node, dict):
        return {k: _copy_tree(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy_tree(v) for v in node]
    return node


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = copy.deepcopy(defs[ref.removeprefix("#/$defs/")])
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **extra}, defs)
        return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _strip_counts(node: Any) -> None:
    if isinstance(node, dict):
        for key in _COUNT_KEYS:
            node.pop(key, None)
        for value in node.values():
            _strip_counts(value)
    elif isinstance(node, list):
        for value in node:
            _strip_counts(value)


def _non_null(node: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of a nullable field (``anyOf: [X, {type: null}]``), else the node."""
    for branch in node.get("anyOf", []):
        if isinstance(branch, dict) and branch.get("type") != "null":
            return branch
    return node


def _segments(path: str) -> list[tuple[str, bool]]:
    out = []
    for seg in path.split("."):
        items = seg.endswith("[]")
        out.append((seg.removesuffix("[]"), items))
    return out


def _schema_nodes(schema: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The schema node(s) the path names (the field itself, nullable wrapper included)."""
    nodes = [schema]
    for name, items in _segments(path):
        nxt: list[dict[str, Any]] = []
        for node in nodes:
            prop = _non_null(node).get("properties", {}).get(name)
            if prop is None:
                raise KeyError(f"rule path {path!r}: no field {name!r}")
            if items:
                nxt.extend(_item_nodes(_non_null(prop)))
            else:
                nxt.append(prop)
        nodes = nxt
    return nodes


def _item_nodes(arr: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema of each item of an array, of each slot of an object of slots, or of the
    values of a map keyed by id."""
    if "prefixItems" in arr:
        return list(arr["prefixItems"])
    if "items" in arr:
        return [arr["items"]]
    if isinstance(arr.get("additionalProperties"), dict):
        return [arr["additionalProperties"]]
    return list(arr.get("properties", {}).values())


def _apply(node: dict[str, Any], rule: Rule, dialect: Dialect) -> None:
    target = _non_null(node)
    if rule.one_of is not None:
        _apply_enum(node, list(rule.one_of))
    if rule.exact_ids is not None:
        _keyed_by(target, list(rule.exact_ids))
    if target.get("type") == "object":  # slots: counts are said by the shape, in any dialect
        _bound_slots(target, rule.min_items, rule.max_items)
        return
    if dialect != "full":
        return
    for key, value in (
        ("minItems", rule.min_items),
        ("maxItems", rule.max_items),
        ("minLength", rule.min_length),
        ("maxLength", rule.max_length),
    ):
        if value is not None:
            target[key] = value


def _apply_enum(node: dict[str, Any], values: list[str]) -> None:
    branches = node.get("anyOf")
    if isinstance(branches, list):  # nullable: the string branch gets the enum (or goes)
        strings = [b for b in branches if isinstance(b, dict) and b.get("type") == "string"]
        for b in strings:
            if values:
                b["enum"] = values
            else:
                branches.remove(b)
        if len(branches) == 1:
            node.pop("anyOf")
            node.update(branches[0])
        return
    if values:  # a required string with no allowed value keeps its type (the apply step drops it)
        node["enum"] = values


def _keyed_by(target: dict[str, Any], ids: list[str]) -> None:
    """A map keyed by id becomes an object with exactly ``ids``, each required."""
    value = target.pop("additionalProperties")
    target["properties"] = {i: copy.deepcopy(value) for i in ids}
    target["required"] = list(ids)
    target["additionalProperties"] = False


def _bound_slots(target: dict[str, Any], low: int | None, high: int | None) -> None:
    """The first ``low`` slots lose their null; slots past ``high`` go."""
    props: dict[str, Any] = target.get("properties", {})
    keys = list(props)
    if high is not None:
        for key in keys[high:]:
            props.pop(key)
        target["required"] = [k for k in target.get("required", []) if k in props]
    for key in keys[: low or 0]:
        if key in props:
            props[key] = _non_null(props[key])


def slot_names(path: str, n: int) -> list[str]:
    """The slots of the list at ``path`` sent as an object: ``facts`` -> ``fact_1`` …"""
    name = path.rsplit(".", 1)[-1]
    stem = name[:-1] if name.endswith("s") else name
    return [f"{stem}_{i}" for i in range(1, n + 1)]


def _array_as_slots(node: dict[str, Any], path: str, low: int | None, high: int) -> None:
    """The array at ``node`` (or its non-null branch) becomes an object of ``high`` slots,
    each the item or null, the first ``low`` not nullable; its description stays."""
    target = _non_null(node)
    if target.get("type") != "array":
        return
    item = target.get("items", {})
    names = slot_names(path, high)
    props = {
        k: (item if i < (low or 0) else {"anyOf": [item, {"type": "null"}]})
        for i, k in enumerate(names)
    }
    kept = {k: v for k, v in target.items() if k in ("title", "description")}
    target.clear()
    target.update(kept)
    target.update(
        type="object",
        properties=_copy_tree(props),
        required=names,
        additionalProperties=False,
    )


@functools.cache
def _reading(model: type[BaseModel], paths: tuple[str, ...]) -> type[BaseModel]:
    def slots_to_lists(cls: type[BaseModel], data: Any) -> Any:
        return lists_from_slots(data, paths)

    reader: type[BaseModel] = create_model(
        model.__name__,
        __base__=model,
        __module__=model.__module__,
        __validators__={"slots_to_lists": model_validator(mode="before")(slots_to_lists)},  # type: ignore[dict-item]
    )
    return reader


def lists_from_slots(data: Any, paths: tuple[str, ...]) -> Any:
    """``data`` (a reply's JSON) with the object of slots at each path as the list of its values
    not null, in slot order (a copy where it changes; anything else as given)."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for path in paths:
        head, _, rest = path.partition(".")
        if head not in out:
            continue
        if rest:
            out[head] = lists_from_slots(out[head], (rest,))
        elif isinstance(out[head], dict):
            out[head] = [v for v in out[head].values() if v is not None]
    return out


def slots_from_lists(data: Any, schema: dict[str, Any]) -> Any:
    """``data`` in the stored shape (plain JSON) with every list the schema sends as an object
    of slots (:func:`slot_names`) as that object, unused slots null and items past the last
    slot under the next names (which the schema forbids, as it forbade the long list): what a
    canned reply becomes for a request in ``strict``. The inverse of :func:`lists_from_slots`."""
    if not isinstance(data, dict):
        return data
    props = _non_null(schema).get("properties", {})
    return {k: _fit(k, v, props.get(k)) for k, v in data.items()}


def _fit(name: str, value: Any, sub: dict[str, Any] | None) -> Any:
    if sub is None:
        return value
    branch = _non_null(sub)
    slots = branch.get("properties")
    if isinstance(value, list) and isinstance(slots, dict):
        if list(slots) != slot_names(name, len(slots)):
            return value
        names = slot_names(name, max(len(slots), len(value)))
        item = _non_null(next(iter(slots.values()))) if slots else {}
        values = [slots_from_lists(v, item) for v in value]
        return dict(zip(names, values + [None] * (len(names) - len(values)), strict=True))
    if isinstance(value, list):
        return [slots_from_lists(v, branch.get("items") or {}) for v in value]
    return slots_from_lists(value, sub)


# --------------------------------------------------------------------------- data side


def _data_values(data: Any, path: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = [("", data)]
    for name, items in _segments(path):
        nxt: list[tuple[str, Any]] = []
        for where, value in found:
            if not isinstance(value, dict) or name not in value:
                continue
            here = f"{where}.{name}" if where else name
            child = value[name]
            if items and isinstance(child, list):
                nxt.extend((f"{here}[{i}]", v) for i, v in enumerate(child))
            elif items and isinstance(child, dict):  # slots, or a map keyed by id
                nxt.extend((f"{here}.{k}", v) for k, v in child.items() if v is not None)
            elif not items:
                nxt.append((here, child))
        found = nxt
    return [(w, v) for w, v in found if v is not None]
