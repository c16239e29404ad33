"""A small rated pack with three disagreements, for the adjudication tests.

Raters ann and bob (the expected raters) rate all six items of a pilot-01 pack. They differ on
q1 of the first two items and on q2 of the first; everywhere else they agree."""

from __future__ import annotations

from pathlib import Path

from curiosity_tui.offline.synthetic_ledgers import hand_made_materials
from curiosity_tui.packs.build import build_pack
from curiosity_tui.packs.rating import RatingSession
from curiosity_tui.packs.schemes import load_scheme

#: grounds that would style or move the cursor if shown as markup or raw text
MARKUP_GROUNDS = "[bold red]loud[/] builds on \x1b[2J session one"


def quote_of(s: RatingSession, item: str) -> str:
    """Four words of section 3 of ``item``: a quote that passes every check."""
    return " ".join(s.pack.item(item).sections[2].split()[:4])


def build_rated_pack(tmp_path: Path, *, upto: int | None = None) -> Path:
    """The pack above; ``upto``: bob stops after that many items (ratings incomplete)."""
    out = tmp_path / "pack"
    build_pack(
        hand_made_materials(),
        load_scheme("pilot-01"),
        out,
        seed=11,
        expected_raters=["ann", "bob"],
    )
    rate_two(out, upto=upto)
    return out


def rate_two(out: Path, *, upto: int | None = None) -> None:
    """ann and bob rate a pilot-01 pack as described above."""
    ann, bob = RatingSession(out, "ann"), RatingSession(out, "bob")
    for n, item in enumerate(ann.order):
        quote = [quote_of(ann, item)] if n == 0 else []
        ann.save(
            item,
            {
                "q1": {"category": "built", "grounds": MARKUP_GROUNDS if n == 0 else "builds"},
                "q2": {
                    "category": "some" if n == 0 else "none",
                    "grounds": "a figure",
                    "quotes": quote,
                },
            },
        )
    for n, item in enumerate(bob.order[:upto]):
        bob.save(
            item,
            {
                "q1": {"category": "fresh" if n < 2 else "built", "grounds": "starts over"},
                "q2": {"category": "none", "grounds": "nothing unsupported"},
            },
        )
