"""The pack renderer leaves the protocol's node-status vocabulary out of every arm's text and
gives an answer paragraph the shape of an action note (issue 25, item 7). Figures:
benchmarks/bench_arm_format.py."""

from __future__ import annotations

from curiosity_tui.packs.uniform import uniform_text

PROTOCOL = """\
In short: Pamphlet output grew sharply after 1518. Reprints carried most copies.

q4 stays open: the argument is plausible but the counts it depends on are not on file.

- Did imperial cities with presses adopt the Reformation earlier?
* The Edict of Worms of 1521 banned Luther's writings in the Empire.
> Noted that the answer depends on evidence not yet on file. It remains open for now.
? How many presses were active in 1520?
"""
SELF_ASK = """\
- Did imperial cities with presses adopt the Reformation earlier?
* The Edict of Worms of 1521 banned Luther's writings in the Empire.
> Noted that the answer depends on evidence not yet on file.
"""


def test_status_sentences_are_left_out_and_prose_is_one_note() -> None:
    out = uniform_text(PROTOCOL)
    assert "stays open" not in out and "remains open" not in out and "q4" not in out
    notes = [ln for ln in out.split("\n") if ln.startswith("> ")]
    assert notes == [
        "> In short: Pamphlet output grew sharply after 1518. Reprints carried most copies.",
        "> Noted that the answer depends on evidence not yet on file.",
    ]
    assert out.split("\n")[:2] == [
        "- Did imperial cities with presses adopt the Reformation earlier?",
        "* The Edict of Worms of 1521 banned Luther's writings in the Empire.",
    ]


def test_the_self_ask_layout_is_unchanged() -> None:
    assert uniform_text(SELF_ASK) == SELF_ASK.strip()


def test_answered_status_lines_go_too() -> None:
    out = uniform_text("q7 is answered on the evidence stated so far.\n\n- A question?\n")
    assert out == "- A question?"
