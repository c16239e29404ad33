"""The coordinator's adjudication screen, still blind: where raters disagree, side by side.

Left, the disagreements (an item and a question on which the raters' categories differ; ✓
once adjudicated). Enter opens one: the item's three sections (literally, as the raters saw
them), each rater's category, grounds and quotes in columns side by side, and a form — the
question's category row (its keys act only while the row has focus) and one line of grounds.
Enter in the grounds, or Ctrl+S, saves the adjudication to ``adjudication.jsonl`` (never to a
ratings file) and goes back to the list at the next open disagreement. An item already
adjudicated is recorded again as a revision that names the record it replaces. Esc goes back
(form → list → out).

Self-contained: ``AdjudicationScreen(packdir, coordinator)``. It reads the manifest, items,
every rater's ratings and the adjudication file, never the key; the rating screen and its app
have no route here (tests/test_adjudication_app.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from curiosity_tui.errors import CuriosityError
from curiosity_tui.packs.disagreement import (
    AdjudicationState,
    Disagreement,
    adjudicate,
    adjudication_state,
)
from curiosity_tui.packs.pack import Pack
from curiosity_tui.screens.base import AppScreen
from curiosity_tui.screens.form_base import FormSteps, leave_key, step_keys, submit_key
from curiosity_tui.widgets.choice_row import Choice, ChoiceRow
from curiosity_tui.widgets.footer import Footer
from curiosity_tui.widgets.literal import clean, literal
from curiosity_tui.widgets.ordered import OrderedInput, OrderedOptionList, drain
from curiosity_tui.widgets.textual_private import add_priority_binding

__all__ = ["AdjudicationScreen"]

KEYS_LINE = (
    "List: ↑/↓ choose · Enter opens.  Row: its letter picks · Enter goes to grounds.  "
    "Grounds: Enter or Ctrl+S saves.  Esc back · Tab next field"
)


class AdjudicationScreen(FormSteps, AppScreen):
    HELP_TITLE: ClassVar[str] = "Adjudication (coordinator, blind)"
    HELP: ClassVar[str] = (
        "Items where raters disagree, with each rater's category, grounds and quotes side by "
        "side. Record an adjudicated category with grounds; the raw ratings never change and "
        "agreement is computed on them. Closed once the key is opened."
    )
    DEFAULT_CSS = """
    AdjudicationScreen { layout: vertical; }
    #adj-status { height: auto; padding: 0 1; background: $primary-background; }
    #adj-body { height: 1fr; }
    #adj-list { width: 30; border-right: solid $primary-lighten-2; }
    #adj-item { width: 2fr; padding: 0 1; border-right: solid $primary-lighten-2; }
    #adj-side { width: 3fr; padding: 0 1; }
    .section-title { text-style: bold; margin-top: 1; color: $accent; }
    .section-text { margin-bottom: 1; }
    #adj-question { text-style: bold; margin-top: 1; }
    #adj-raters { height: auto; margin: 1 0; }
    #adj-current { height: auto; color: $text-muted; }
    #adj-form-title { text-style: bold; margin-top: 1; }
    #adj-keys { color: $text-muted; }
    #adj-message { height: auto; min-height: 1; }
    #adj-message.error { color: $error; }
    #adj-message.ok { color: $success; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "enter", "Open", id="adjudication.enter", priority=True, show=False),
        submit_key("adjudication", "save"),
        leave_key("adjudication", "back", "Back"),
        *step_keys("adjudication"),
    ]

    def __init__(self, packdir: str | Path, coordinator: str, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.pack = Pack.open(packdir)
        self.coordinator = coordinator
        self.scheme = self.pack.scheme
        self.key_map = self.scheme.key_map()
        self.state: AdjudicationState = adjudication_state(self.pack)
        self.current: Disagreement | None = None
        self.raters_table: Table | None = None
        self.chosen: str | None = None
        for key, (qid, cat) in self.key_map.items():
            label = self.scheme.question(qid).category(cat).label
            add_priority_binding(self, key, f"pick('{key}')", f"{qid}: {label}")

    # -- layout ----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(id="adj-status")
        with Horizontal(id="adj-body"):
            yield OrderedOptionList(id="adj-list")
            with VerticalScroll(id="adj-item"):
                for i, title in enumerate(self.scheme.sections, start=1):
                    yield Static(title, classes="section-title", markup=False)
                    yield Static("", classes="section-text", id=f"adj-section-{i}")
            with VerticalScroll(id="adj-side"):
                yield Static(KEYS_LINE, id="adj-keys", markup=False)
                yield Static("", id="adj-question")
                yield Static("", id="adj-raters")
                yield Static("", id="adj-current")
                yield Static(
                    "Adjudicated category (its letter, while the row has focus) and grounds",
                    id="adj-form-title",
                    markup=False,
                )
                yield ChoiceRow("adjudication", [], id="adj-choice")
                yield OrderedInput(
                    placeholder="grounds: one line (required); Enter or Ctrl+S saves",
                    id="adj-grounds",
                )
                yield Static("", id="adj-message")
        yield Footer()

    def on_mount(self) -> None:
        first = next(
            (i for i, d in enumerate(self.state.disagreements) if d.adjudication is None), 0
        )
        self._refresh_list(first)
        if self.state.disagreements:
            self._show(self.state.disagreements[first])
        self.set_focus(self.query_one("#adj-list", OptionList))

    # -- display ---------------------------------------------------------------------
    def _status(self) -> Text:
        st = self.state
        done = sum(1 for d in st.disagreements if d.adjudication is not None)
        t = Text(end="")
        t.append(f"pack {st.pack_id} · scheme {st.scheme} · coordinator {self.coordinator}\n")
        if st.key_opened is not None:
            t.append(
                f"the key was opened (pack log seq {st.key_opened}): adjudication is closed",
                style="bold red",
            )
        elif not st.complete:
            t.append(f"ratings incomplete ({st.reason}): nothing to adjudicate yet", "yellow")
        else:
            t.append(
                f"{len(st.disagreements)} disagreement(s) · {done} adjudicated · raters "
                f"{', '.join(st.raters)} · blind: the key stays closed"
            )
        return t

    def _refresh_list(self, highlight: int | None = None) -> None:
        self.query_one("#adj-status", Static).update(self._status())
        ol = self.query_one("#adj-list", OptionList)
        keep = ol.highlighted if highlight is None else highlight
        ol.clear_options()
        for d in self.state.disagreements:
            mark = "✓" if d.adjudication is not None else "·"
            ol.add_option(
                Option(Text(f"{mark} {d.item} {d.question}"), id=f"{d.item}/{d.question}")
            )
        if self.state.disagreements:
            ol.highlighted = min(keep or 0, len(self.state.disagreements) - 1)

    def _show(self, d: Disagreement) -> None:
        self.current, self.chosen = d, None
        item = self.pack.item(d.item)
        for i, text in enumerate(item.sections, start=1):
            self.query_one(f"#adj-section-{i}", Static).update(
                literal(text) if text.strip() else Text("(empty)", style="italic dim")
            )
        q = self.scheme.question(d.question)
        self.query_one("#adj-question", Static).update(
            literal(f"{d.item} · {q.id.upper()}. {q.prompt}")
        )
        self.raters_table = self._raters_table(d)
        self.query_one("#adj-raters", Static).update(self.raters_table)
        a = d.adjudication
        self.query_one("#adj-current", Static).update(
            Text("not adjudicated yet")
            if a is None
            else literal(
                f"adjudicated {a.category} by {a.adjudicator} (record {a.seq}): {a.grounds}"
                + (" — raw ratings revised since" if d.stale else "")
                + f" — saving records a revision that replaces record {a.seq}"
            )
        )
        row = self.query_one("#adj-choice", ChoiceRow)
        row.choices = [Choice(c.key, c.id, c.label, c.help) for c in q.categories]
        row.chosen = None
        row.refresh(layout=True)
        self.query_one("#adj-grounds", Input).value = ""

    def _raters_table(self, d: Disagreement) -> Table:
        table = Table(expand=True, show_lines=True)
        table.add_column("", style="dim", no_wrap=True)
        for v in d.raters:
            table.add_column(literal(v.rater, "bold"), ratio=1)
        table.add_row("category", *(Text(v.category, style="bold") for v in d.raters))
        table.add_row("grounds", *(literal(v.grounds) for v in d.raters))
        table.add_row(
            "quotes",
            *(literal("\n".join(f"“{clean(x)}”" for x in v.quotes) or "(none)") for v in d.raters),
        )
        return table

    def _message(self, text: str, kind: str = "") -> None:
        w = self.query_one("#adj-message", Static)
        w.update(literal(text))
        w.set_classes(kind)

    # -- keys ------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick":
            key = str(parameters[0]) if parameters else ""
            return (
                isinstance(self.focused, ChoiceRow)
                and self.current is not None
                and self.key_map.get(key, ("", ""))[0] == self.current.question
            )
        return True

    async def action_pick(self, key: str) -> None:
        _qid, cat = self.key_map[key]
        self.chosen = cat
        self.query_one("#adj-choice", ChoiceRow).chosen = cat
        self.set_focus(self.query_one("#adj-grounds", Input))

    async def action_enter(self) -> None:
        focused = self.focused
        await drain(focused)
        if isinstance(focused, OptionList):
            if focused.highlighted is not None and self.state.disagreements:
                self._open(focused.highlighted)
        elif isinstance(focused, ChoiceRow):
            if self.chosen is not None:
                self.set_focus(self.query_one("#adj-grounds", Input))
        elif isinstance(focused, Input):
            await self._save()

    def _open(self, index: int) -> None:
        self._show(self.state.disagreements[index])
        self._message("")
        self.set_focus(self.query_one("#adj-choice", ChoiceRow))

    @on(OptionList.OptionSelected, "#adj-list")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option_index)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Enter is the priority binding (action_enter)

    async def action_save(self) -> None:
        await drain(self.focused)
        await self._save()

    async def action_back(self) -> None:
        focused = self.focused
        await drain(focused)
        if isinstance(focused, OptionList):
            self.nav.close_screen(self)
        else:
            self.set_focus(self.query_one("#adj-list", OptionList))

    # -- saving ----------------------------------------------------------------------
    async def _save(self) -> None:
        d = self.current
        if d is None:
            self._message("nothing to adjudicate: open a disagreement first", "error")
            return
        if self.chosen is None:
            self._message(f"not saved: pick a category for {d.question} on its row", "error")
            self.set_focus(self.query_one("#adj-choice", ChoiceRow))
            return
        grounds = self.query_one("#adj-grounds", Input).value
        a = d.adjudication
        try:
            rec = adjudicate(
                self.pack.path,
                d.item,
                d.question,
                self.chosen,
                grounds,
                by=self.coordinator,
                replaces=a.seq if a is not None else None,
            )
        except CuriosityError as err:
            self._message(f"not saved: {err}", "error")
            return
        self._after_save(
            f"saved: {rec.item} {rec.question} adjudicated {rec.category} (record {rec.seq}"
            + (f", replaces {rec.replaces})" if rec.replaces else ")")
        )

    def _after_save(self, text: str) -> None:
        done = self.current
        index = next(
            (
                i
                for i, d in enumerate(self.state.disagreements)
                if done is not None and (d.item, d.question) == (done.item, done.question)
            ),
            0,
        )
        self.state = adjudication_state(self.pack)
        todo = [i for i, d in enumerate(self.state.disagreements) if d.adjudication is None]
        nxt = next((i for i in todo if i > index), todo[0] if todo else index)
        self._refresh_list(nxt)
        if self.state.disagreements:
            self._show(self.state.disagreements[nxt])
        self._message(text + ("" if todo else " · every disagreement is adjudicated"), "ok")
        self.set_focus(self.query_one("#adj-list", OptionList))
