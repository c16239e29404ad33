"""Control items for a blind pack (``pilot-02``): plain repetition, repetition with added
unsupported detail, and a genuine resolution, each built from a store-bearing item so that
it looks like a real one. Only the key says an item is a control."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from curiosity_tui.packs.pack import KeyEntry, PackItem
from curiosity_tui.packs.schemes import ControlSpec, Scheme

__all__ = ["add_controls", "input_blocks"]

#: a staged pack item and its key entry
Staged = tuple[PackItem, KeyEntry]

_DETAIL_TEMPLATES = (
    "By {y1} roughly {p}% of the recorded cases already followed this pattern, "
    "and {a} of the {b} documented instances date from before {y2}.",
    "The share rose from {p2}% in {y1} to {p}% by {y2}, according to the surviving tallies.",
    "Specifically, {a} of {b} known cases ({p}%) fit this description, most of them after {y1}.",
)
_SENT_RE = re.compile(r"(?<=[.!?])\s+")


def input_blocks(section2: str) -> list[str]:
    return [b.strip() for b in section2.split("\n\n") if b.strip().startswith("- ")]


def _restate(block: str) -> str:
    """A node block of section 2 restated in the delivered-text shape (``- question``,
    ``* fact``), nothing added — so a control's section 3 looks like a real one."""
    out = []
    for ln in block.split("\n"):
        text = ln.strip()
        if not text:
            continue
        if ln.startswith("- "):
            out.append(f"- {text[2:].strip()}")
        elif text.startswith("* "):
            out.append(f"* {text[2:].strip()}")
        elif out:  # continuation of a multi-line entry
            out[-1] += " " + text
    return "\n".join(out)


def _unsupported_detail(rng: random.Random) -> str:
    y1 = rng.randint(1400, 1900)
    tmpl = rng.choice(_DETAIL_TEMPLATES)
    b = rng.randint(20, 90)
    return tmpl.format(
        y1=y1,
        y2=y1 + rng.randint(3, 30),
        p=rng.randint(35, 85),
        p2=rng.randint(5, 30),
        a=rng.randint(5, b - 1),
        b=b,
    )


def _statements(text: str) -> list[str]:
    """Sentences of ``text`` usable as a quoted passage: statements (not questions) of
    40–300 characters, taken line by line so list markers never enter a quote."""
    out: list[str] = []
    for line in text.split("\n"):
        body = re.sub(r"^\s*(?:[-*>•]|\d+[.)])\s+", "", line).strip()
        for sent in _SENT_RE.split(body):
            sent = sent.strip()
            if 40 <= len(sent) <= 300 and not sent.endswith("?"):
                out.append(sent)
    return out


def _resolution(
    rng: random.Random, block: str, sources: Sequence[tuple[str, str]], item_sections: list[str]
) -> str | None:
    head = _restate(block.split("\n")[0])  # the question line only
    if sources:
        title, text = rng.choice(sources)
        sents = _statements(text)
        if sents:
            passage = rng.choice(sents)
            return (
                f"{head}\n* This can now be settled. The point rests on a passage of {title}: "
                f'"{passage}" That passage answers the requirement directly, so it no longer '
                "stands open."
            )
    sents = _statements(item_sections[0])
    if not sents:
        return None
    passage = rng.choice(sents)
    return (
        f"{head}\n* This can now be settled from what the first part of this investigation "
        f'already established: "{passage}" That statement answers the requirement directly, '
        "so it no longer stands open."
    )


def add_controls(
    staged: list[Staged],
    sources: Sequence[Sequence[tuple[str, str]]],
    scheme: Scheme,
    rng: random.Random,
    new_id: Callable[[], str],
    per_kind: int,
    notes: list[str],
) -> int:
    """Append ``per_kind`` controls of each of the scheme's kinds to ``staged`` (whose first
    entries are the runs, ``sources[i]`` the sources of run ``i``); return how many were
    built. What could not be built is said in ``notes``."""
    if not scheme.controls or per_kind <= 0:
        return 0
    bases = [
        (it, ent, src)
        for (it, ent), src in zip(staged, sources, strict=True)
        if input_blocks(it.sections[1])
    ]
    if not bases:
        notes.append("no store-bearing run has a non-empty input section; no control items built")
    n_controls = 0
    for spec in scheme.controls:
        for _ in range(per_kind):
            if not bases:
                break
            base_item, base_ent, src = rng.choice(bases)
            s3 = _control_section(spec, base_item, src, rng)
            if s3 is None:
                notes.append(f"could not build a {spec.kind} control from {base_ent.run}")
                continue
            iid = new_id()
            staged.append(
                (
                    PackItem(id=iid, sections=[base_item.sections[0], base_item.sections[1], s3]),
                    KeyEntry(
                        item=iid,
                        kind="control",
                        run=base_ent.run,
                        ledger=base_ent.ledger,
                        config=base_ent.config,
                        control=spec.kind,
                        base_item=base_item.id,
                    ),
                )
            )
            n_controls += 1
    return n_controls


def _control_section(
    spec: ControlSpec, base: PackItem, sources: Sequence[tuple[str, str]], rng: random.Random
) -> str | None:
    """Section 3 of one control, or None when the base item offers nothing to build it from."""
    blocks = input_blocks(base.sections[1])
    block = rng.choice(blocks)
    # Other lines of section 2 restated unchanged, so the control's section 3 has
    # the length and shape of a real one; the worked line comes first.
    others = [b for b in blocks if b != block]
    rest = [_restate(b) for b in rng.sample(others, min(2, len(others)))]
    if spec.kind == "repetition":
        return "\n".join([_restate(block), *rest])
    if spec.kind == "unsupported-detail":
        return "\n".join(
            [
                _restate(block),
                f"* {_unsupported_detail(rng)}",
                f"* {_unsupported_detail(rng)}",
                *rest,
            ]
        )
    res = _resolution(rng, block, sources, base.sections)
    return "\n".join([res, *rest]) if res is not None else None
