"""Control items for a blind pack (``pilot-02``): plain repetition, repetition with added
unsupported detail, and a genuine resolution, each built from a store-bearing run so that
it looks like a real one. Only the key says an item is a control.

A control never repeats a pack item's text. Its base is a run kept out of the pack when
the builder is given such runs (``held_out``); otherwise a pack item. Either way all three
sections are constructed (so two controls from one base differ too): section 2 is a sample of the base's input blocks in a new order,
section 1 a few of those blocks restated as delivered text (what session 1 raised is in
the store by session 5), section 3 made as below; every label is drawn afresh. A control whose section still equals a section of any item is not added (a note
says so). How each control was made is recorded in the key only."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from curiosity_tui.packs.control_overlap import arm_overlap, item_lines
from curiosity_tui.packs.pack import KeyEntry, PackItem
from curiosity_tui.packs.schemes import ControlSpec, Scheme
from curiosity_tui.packs.uniform import LABEL_RE, relabel, uniform_text

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
_LEAD_LABEL_RE = re.compile(r"^\((?:n|q)[0-9]+\)\s*")


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
            out.append(f"- {_LEAD_LABEL_RE.sub('', text[2:].strip())}")
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
    *,
    held_out: Sequence[tuple[Staged, Sequence[tuple[str, str]]]] = (),
) -> int:
    """Append ``per_kind`` controls of each of the scheme's kinds to ``staged`` (whose first
    entries are the runs, ``sources[i]`` the sources of run ``i``); return how many were
    built. Bases come from ``held_out`` (runs kept out of the pack) when given. What could
    not be built is said in ``notes``."""
    if not scheme.controls or per_kind <= 0:
        return 0
    from_pack = not held_out
    pairs = list(zip(staged, sources, strict=True)) if from_pack else list(held_out)
    bases = [(it, ent, src) for (it, ent), src in pairs if input_blocks(it.sections[1])]
    if not bases:
        notes.append("no store-bearing run has a non-empty input section; no control items built")
    items = [it for it, _ in staged]
    limit = arm_overlap(staged) if from_pack else None
    n_controls = 0
    for spec in scheme.controls:
        for _ in range(per_kind):
            if not bases:
                break
            built = _attempts(spec, bases, items, rng, rebuild=True, limit=limit)
            if isinstance(built, str):
                notes.append(built)
                continue
            sections, (base_item, base_ent, _src) = built
            iid = new_id()
            staged.append(
                (
                    PackItem(id=iid, sections=sections),
                    KeyEntry(
                        item=iid,
                        kind="control",
                        run=base_ent.run,
                        ledger=base_ent.ledger,
                        config=base_ent.config,
                        group=base_ent.group,
                        control=spec.kind,
                        base_item=base_item.id if from_pack else None,
                    ),
                )
            )
            items.append(staged[-1][0])
            n_controls += 1
    return n_controls


_Base = tuple[PackItem, KeyEntry, Sequence[tuple[str, str]]]


def _attempts(
    spec: ControlSpec,
    bases: Sequence[_Base],
    items: Sequence[PackItem],
    rng: random.Random,
    *,
    rebuild: bool,
    limit: int | None = None,
    tries: int = 12,
) -> tuple[list[str], _Base] | str:
    """Sections for one control and its base, trying other bases and samples before giving
    up; on failure the note saying why. With ``limit``, the attempt that shares the fewest
    lines with its base is taken, the first within ``limit`` at once (decision 410)."""
    why = ""
    best: tuple[int, list[str], _Base] | None = None
    for _ in range(tries if limit is None else 4 * tries):  # cheap: a few ms each
        base = rng.choice(bases)
        sections = _control_sections(spec, base[0], base[2], rng, rebuild=rebuild)
        if sections is None:
            why = "nothing to build it from"
        elif _shares_text(sections, items):
            why = "every attempt would repeat a pack item's text"
        else:
            shared = len(item_lines(sections) & item_lines(base[0].sections))
            if limit is None or shared <= limit:
                return sections, base
            if best is None or shared < best[0]:
                best = (shared, sections, base)
    if best is not None:
        return best[1], best[2]
    return f"no {spec.kind} control built: {why}"


def _shares_text(sections: list[str], items: Sequence[PackItem]) -> bool:
    """Whether any non-empty section equals any section of any item (whitespace aside)."""
    norm = {" ".join(s.split()) for it in items for s in it.sections if s.strip()}
    return any(" ".join(s.split()) in norm for s in sections if s.strip())


def _control_sections(
    spec: ControlSpec,
    base: PackItem,
    sources: Sequence[tuple[str, str]],
    rng: random.Random,
    *,
    rebuild: bool,
) -> list[str] | None:
    """All three sections of one control with fresh labels; ``rebuild``: sections 1 and 2
    rebuilt from the base (a pack item) so that neither repeats it."""
    s1, s2 = base.sections[0], base.sections[1]
    if rebuild:
        blocks = input_blocks(s2)
        n = len(blocks)
        keep = rng.sample(blocks, rng.randint(max(1, n - max(1, n // 4)), n))  # a new order
        s2 = "\n\n".join(keep)
        # session 1 raised questions that are in the store by session 5: restate a few
        first = rng.sample(blocks, min(3, len(blocks)))
        s1 = uniform_text("\n".join(_restate(b) for b in first))
        said = _statements(base.sections[0])
        if spec.kind == "resolution" and not _statements(s1) and said:
            s1 = uniform_text(f"{s1}\n> {rng.choice(said)}")  # a statement to settle it by
    s3 = _control_section(spec, PackItem(id=base.id, sections=[s1, s2, base.sections[2]]),
                          sources, rng)  # fmt: skip
    if s3 is None:
        return None
    return relabel([s1, s2, s3], rng, LABEL_RE)


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
