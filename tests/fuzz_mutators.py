"""Seeded mutations of files for the fuzz tier (tests/test_fuzz_files.py): bit flips, byte
writes, truncations, line edits, re-encodings and JSON-aware value swaps."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

Mutator = Callable[[bytes, random.Random], bytes]

#: values a JSON-aware mutation puts where a value was
ODD_VALUES: list[Any] = [
    None,
    "",
    "made-up",
    "alice\n",
    "../../etc/x",
    "\u202e\u200b",
    -1,
    0,
    1e308,
    10**30,
    3.5,
    True,
    [],
    {},
    [1, 2],
    {"x": 1},
]
ODD_BYTES = [0x00, 0xFF, 0x80, 0xC3, 0x1B, ord('"'), ord("\n"), ord("{"), ord("\\")]


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\x01"
    buf = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def set_byte(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes([rng.choice(ODD_BYTES)])
    buf = bytearray(data)
    buf[rng.randrange(len(buf))] = rng.choice(ODD_BYTES)
    return bytes(buf)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data))] if data else data


def insert_garbage(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 12)))
    return data[:i] + junk + data[i:]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def drop_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return b"\n".join(lines)


def swap_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    if len(lines) < 2:
        return data[::-1]
    i, j = rng.sample(range(len(lines)), 2)
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def reencode(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", "replace")
    how = rng.choice(["utf-16", "utf-32", "latin-1", "bom", "crlf", "nul"])
    if how == "latin-1":
        return (text + "\u00e9\u00fc").encode("latin-1", "replace")
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "nul":
        return b"\x00" * rng.randint(1, 64)
    return text.encode(how)


def empty(data: bytes, rng: random.Random) -> bytes:
    return rng.choice([b"", b"\n", b"[]", b"{}", b"null", b"0"])


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _leaves(v, (*path, i))
    return out


def swap_json_value(data: bytes, rng: random.Random) -> bytes:
    """Replace one value somewhere in one JSON line (or the whole JSON document)."""
    lines = _lines(data)
    order = list(range(len(lines)))
    rng.shuffle(order)
    for i in order:
        try:
            doc = json.loads(lines[i])
        except ValueError:
            continue
        paths = [p for p in _leaves(doc) if p]
        if not paths:
            continue
        path = rng.choice(paths)
        target = doc
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = rng.choice(ODD_VALUES)
        lines[i] = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        return b"\n".join(lines)
    return flip_bits(data, rng)


MUTATORS: dict[str, Mutator] = {
    "flip_bits": flip_bits,
    "set_byte": set_byte,
    "truncate": truncate,
    "insert_garbage": insert_garbage,
    "drop_line": drop_line,
    "duplicate_line": duplicate_line,
    "swap_lines": swap_lines,
    "reencode": reencode,
    "empty": empty,
    "swap_json_value": swap_json_value,
}


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One mutation, chosen by ``rng``; returns its name and the new bytes (never the same)."""
    for _ in range(10):
        name = rng.choice(sorted(MUTATORS))
        out = MUTATORS[name](data, rng)
        if out != data:
            return name, out
    return "flip_bits", flip_bits(data, rng)
