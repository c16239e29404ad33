"""A study's row in the workspace and the line under it (issue 28, item 1; decision 570).

The row's cells come first with the verdict and the lock (what a narrow terminal must not
cut), then the runs and packs in short; the detail line under the table spells out every
arm and every pack of the highlighted study, wrapped."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from curiosity_tui.analysis.study_state import PENDING, PRACTICE, StudyState
from curiosity_tui.widgets.literal import short

__all__ = ["STUDY_COLUMNS", "study_detail", "study_row", "verdict_cell"]

STUDY_COLUMNS = (
    ("study", "name"),
    ("verdict", "verdict"),
    ("lock", "lock"),
    ("verify", "verify"),
    ("runs done/planned", "runs"),
    ("packs: rated/items per rater", "packs"),
)


def verdict_cell(text: str) -> Text:
    """MET green, NOT MET red, anything else yellow; over scripted runs ``practice ·`` first."""
    if text == PENDING:
        return Text(text, style="dim")
    if text.startswith("not computable"):
        return Text(short(text, 40), style="yellow")
    word = text.removeprefix(PRACTICE)
    style = {"MET": "bold green", "NOT MET": "bold red"}.get(word, "bold yellow")
    if word != text:
        return Text.assemble((PRACTICE, "bold magenta"), (word, style))
    return Text(text, style=style)


def _verify_cell(text: str) -> Text:
    if text == PENDING or text == "—":
        return Text(text, style="dim")
    return Text(short(text, 30), style="green" if text.startswith("verified") else "bold red")


def study_row(s: StudyState) -> list[Text]:
    if s.scripted:
        name = Text.assemble((short(s.name, 20), "bold"), (" scripted", "bold magenta"))
    else:
        name = Text(short(s.name, 28), style="bold")
    lock = Text(short(s.lock, 28), style="green" if s.locked else "bold yellow")
    done = sum(a.done for a in s.arms)
    planned = sum(a.planned for a in s.arms)
    runs = Text(f"{done}/{planned} in {len(s.arms)} arm(s)" if s.arms else "—")
    packs = Text(short(s.packs_text(), 48), style="" if s.packs else "dim")
    if s.error:
        return [name, verdict_cell(s.verdict), Text(short(s.error, 60), style="red"),
                Text(""), runs, packs]  # fmt: skip
    return [name, verdict_cell(s.verdict), lock, _verify_cell(s.verify), runs, packs]


def study_detail(s: StudyState, root: Path) -> Text:
    """Every arm and pack of one study, and what Enter does; its folder as seen from the
    workspace ``root``."""
    folder = s.place.folder
    where = folder.relative_to(root).as_posix() if folder.is_relative_to(root) else str(folder)
    t = Text(end="")
    t.append(f"{s.name}", style="bold")
    t.append(f"  in {where}/\n" if where != "." else "  (this folder)\n", style="dim")
    t.append("runs: ", style="bold")
    t.append(s.arms_text() + "\n")
    t.append("packs: ", style="bold")
    t.append(s.packs_text() + "\n")
    t.append("verdict: ", style="bold")
    t.append_text(verdict_cell(s.verdict))
    t.append(f"  ·  {s.lock}  ·  {s.verify}", style="dim")
    if s.error:
        t.append(f"\nplan: {s.error}", style="red")
    t.append("\nEnter lists only this study's runs and packs (esc shows everything)", style="dim")
    return t
