"""Send keystrokes the way a terminal delivers a fast typist or a paste: every key event is
queued to the app before any of them is handled (Pilot's ``press`` waits for idle between
keys, which hides ordering bugs)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.events import Key
from textual.keys import _character_to_key
from textual.pilot import Pilot

SPECIAL = {"enter": "\r", "tab": "\t", "escape": "\x1b", "space": " ", "backspace": "\x7f"}


def keys_of(*parts: str) -> list[str]:
    """``keys_of("b", "enter", "two words")``: a named key stays one key, other text is
    split into characters."""
    out: list[str] = []
    for part in parts:
        if (
            part in SPECIAL
            or part.startswith(("ctrl+", "shift+"))
            or part
            in (
                "left_square_bracket",
                "right_square_bracket",
                "delete",
                "up",
                "down",
                "left",
                "right",
                "home",
                "end",
            )
        ):
            out.append(part)
        else:
            out.extend(part)
    return out


def _event(key: str) -> Key:
    if len(key) == 1:
        name = key if key.isalnum() else _character_to_key(key)
        return Key(name, key)
    char = SPECIAL.get(key)
    if key == "left_square_bracket":
        char = "["
    elif key == "right_square_bracket":
        char = "]"
    return Key(key, char)


async def burst(pilot: Pilot, keys: Iterable[str], *, settle: int = 20) -> None:
    """Queue every key at once, then let the app handle them all."""
    app = pilot.app
    for key in keys:
        event = _event(key)
        event.set_sender(app)
        app.post_message(event)
    for _ in range(settle):
        await pilot.pause()
