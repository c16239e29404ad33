"""The canonical JSON of a node's fields other than ``facts``, kept field by field through a
long in-place fold (replay, decision 251): at a snapshot only the fields that the events
since the node's last snapshot may have changed (``events.FOLD_FIELDS``) are encoded again.

Replay checks every snapshot's state hash, so a text kept stale would show as a mismatch;
replay then folds again the definitional way (``replay.replay``), which decides. What this
saves is time, never a check."""

from __future__ import annotations

from collections.abc import Mapping
from json.encoder import encode_basestring
from operator import is_
from typing import Any

from pydantic_core import to_json

from curiosity_tui.ledger import journal as jr

#: a field set meaning "any field may have changed" (an event kind without a declaration)
ALL_FIELDS: frozenset[str] = frozenset({"*"})


def encode_value(value: Any) -> str:
    """``journal.canonical(value)``; a list of ints (sessions a node resurfaced in) through
    pydantic's encoder, which writes exactly what json writes for ints and is much cheaper."""
    if type(value) is list and set(map(type, value)) <= _INT:
        return to_json(value).decode("ascii")
    return jr.canonical(value)


_INT = frozenset({int})


def encode_items(items: list[Any]) -> str:
    """``journal.canonical(items)`` without its brackets. A fact as ``fact_attached`` folds it
    (``{"text": str, "session": int, "source": str | None}``) is written directly, with the
    string encoder json itself uses; anything else goes through ``journal.canonical``."""
    out = []
    for item in items:
        if type(item) is dict and len(item) == 3:
            session, source, text = item.get("session"), item.get("source", _NO), item.get("text")
            if type(session) is int and type(text) is str:
                if source is None:
                    out.append(f'{{"session":{session:d},"source":null,"text":{_str(text)}}}')
                    continue
                if type(source) is str:
                    out.append(
                        f'{{"session":{session:d},"source":{_str(source)},"text":{_str(text)}}}'
                    )
                    continue
        out.append(jr.canonical(item))
    return ",".join(out)


_NO = object()
_str = encode_basestring  # what json's encoder calls for a str with ensure_ascii=False


class _Fields:
    """One node's member texts ``"<key>":<value>`` in sorted key order, ``facts`` left out,
    and those before and after ``facts`` joined. For a field holding a list of ints, the
    items it was encoded from: a list that only grew by one int at its end (a session added
    to ``resurfaced``) is written from its previous text."""

    __slots__ = ("after", "before", "count", "index", "ints", "keys", "parts", "split")

    def __init__(self, node: Mapping[str, Any]) -> None:
        names = sorted(k for k in node if k != "facts")
        self.count = len(node)
        self.index = {name: i for i, name in enumerate(names)}
        self.split = sum(1 for k in names if k < "facts")
        self.keys = [jr.canonical(k) + ":" for k in names]
        self.ints: list[tuple[int, ...] | None] = [None] * len(names)
        self.parts = [""] * len(names)
        for i, name in enumerate(names):
            self.set(i, node[name])
        self.before = ",".join(self.parts[: self.split])
        self.after = ",".join(self.parts[self.split :])

    def set(self, i: int, value: Any) -> None:
        """Field ``i`` now holds ``value``."""
        old = self.ints[i]
        if (
            old is not None
            and type(value) is list
            and len(value) == len(old) + 1
            and type(value[-1]) is int
            and all(map(is_, value, old))  # the same int objects as then, one for one
        ):
            text = self.parts[i]
            self.parts[i] = f"{text[:-1]}{',' if old else ''}{value[-1]:d}]"
            self.ints[i] = tuple(value)
            return
        self.parts[i] = self.keys[i] + encode_value(value)
        is_ints = type(value) is list and set(map(type, value)) <= _INT
        self.ints[i] = tuple(value) if is_ints else None


class FieldTexts:
    """Per node id, the canonical text of its members before and after ``facts``."""

    def __init__(self) -> None:
        self._nodes: dict[str, _Fields] = {}

    def around_facts(
        self, nid: str, node: Mapping[str, Any], stale: frozenset[str] | set[str]
    ) -> tuple[str, str] | None:
        """The members of ``canonical(node)`` sorted before ``"facts"`` and after it, each
        joined with commas, without braces, re-encoding only the ``stale`` fields (all of
        them for a node not seen yet, or ``ALL_FIELDS``). None if the node has no ``facts``
        or a key that is not a string (the caller then encodes the node whole)."""
        f = self._nodes.get(nid)
        if f is None or "*" in stale or f.count != len(node):
            return self._first(nid, node)
        parts, index, split = f.parts, f.index, f.split
        low = high = False
        for name in stale:
            i = index.get(name)
            if i is None:  # a field the node did not have when first seen
                if name == "facts" or name not in node:
                    continue
                return self._first(nid, node)
            f.set(i, node[name])
            if i < split:
                low = True
            else:
                high = True
        if low:
            f.before = ",".join(parts[:split])
        if high:
            f.after = ",".join(parts[split:])
        return f.before, f.after

    def _first(self, nid: str, node: Mapping[str, Any]) -> tuple[str, str] | None:
        if "facts" not in node or not all(type(k) is str for k in node):
            return None
        f = self._nodes[nid] = _Fields(node)
        return f.before, f.after
