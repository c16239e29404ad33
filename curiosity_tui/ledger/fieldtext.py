"""The canonical JSON of a node's fields other than ``facts``, kept field by field through a
long in-place fold (replay, decision 251): at a snapshot only the fields that the events
since the node's last snapshot may have changed (``events.FOLD_FIELDS``) are encoded again.

Replay checks every snapshot's state hash, so a text kept stale would show as a mismatch;
replay then folds again the definitional way (``replay.replay``), which decides. What this
saves is time, never a check."""

from __future__ import annotations

from json.encoder import encode_basestring
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
    and those before and after ``facts`` joined."""

    __slots__ = ("after", "before", "count", "index", "keys", "parts", "split")

    def __init__(self, node: dict[str, Any]) -> None:
        names = sorted(k for k in node if k != "facts")
        self.count = len(node)
        self.index = {name: i for i, name in enumerate(names)}
        self.split = sum(1 for k in names if k < "facts")
        self.keys = [jr.canonical(k) + ":" for k in names]
        self.parts = [key + encode_value(node[k]) for key, k in zip(self.keys, names, strict=True)]
        self.before = ",".join(self.parts[: self.split])
        self.after = ",".join(self.parts[self.split :])


class FieldTexts:
    """Per node id, the canonical text of its members before and after ``facts``."""

    def __init__(self) -> None:
        self._nodes: dict[str, _Fields] = {}

    def around_facts(
        self, nid: str, node: dict[str, Any], stale: frozenset[str] | set[str]
    ) -> tuple[str, str] | None:
        """The members of ``canonical(node)`` sorted before ``"facts"`` and after it, each
        joined with commas, without braces, re-encoding only the ``stale`` fields (all of
        them for a node not seen yet, or ``ALL_FIELDS``). None if the node has no ``facts``
        or a key that is not a string (the caller then encodes the node whole)."""
        f = self._nodes.get(nid)
        if f is None or "*" in stale or f.count != len(node):
            return self._first(nid, node)
        parts, index, keys, split = f.parts, f.index, f.keys, f.split
        low = high = False
        for name in stale:
            i = index.get(name)
            if i is None:  # a field the node did not have when first seen
                if name == "facts" or name not in node:
                    continue
                return self._first(nid, node)
            parts[i] = keys[i] + encode_value(node[name])
            if i < split:
                low = True
            else:
                high = True
        if low:
            f.before = ",".join(parts[:split])
        if high:
            f.after = ",".join(parts[split:])
        return f.before, f.after

    def _first(self, nid: str, node: dict[str, Any]) -> tuple[str, str] | None:
        if "facts" not in node or not all(type(k) is str for k in node):
            return None
        f = self._nodes[nid] = _Fields(node)
        return f.before, f.after
