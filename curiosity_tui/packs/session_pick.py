"""Which two sessions a pack item shows (decision 440): ``first,later``, each a session
number or ``last``; the default is the first and the last session of the run.

An item shows session ``first``'s delivered text, session ``later``'s input (rendered from
the store after session ``later - 1``) and session ``later``'s delivered text, so ``later``
must come after ``first``. ``last`` is the run's planned last session (the pilot records it
as ``planned_sessions``), else its last recorded session; a plan's ``[pack]`` table names
the same pick and ``prereg lock`` checks it against the plan's ``sessions`` before any run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from curiosity_tui.errors import InputError

__all__ = ["DEFAULT_PICK", "SessionPick", "parse_session_pick"]

Slot = int | Literal["last"]


class SessionPick(BaseModel):
    """Two sessions, each a number (1-based) or ``"last"``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    first: Slot = 1
    later: Slot = "last"

    @field_validator("first", "later")
    @classmethod
    def _positive(cls, v: Slot) -> Slot:
        if isinstance(v, int) and v < 1:
            raise ValueError(f"session {v} is not a session number (sessions count from 1)")
        return v

    @model_validator(mode="after")
    def _ordered(self) -> SessionPick:
        if self.first == "last":
            raise ValueError("the first session shown cannot be 'last': the later one follows it")
        if isinstance(self.later, int) and self.later <= int(self.first):
            raise ValueError(
                f"sessions {self.first},{self.later}: the later session must come after the first"
            )
        return self

    def spec(self) -> str:
        """The pick as ``--sessions`` takes it, e.g. ``1,last``."""
        return f"{self.first},{self.later}"

    def resolve(self, sessions: int) -> tuple[int, int]:
        """The two session numbers for a run of ``sessions`` sessions; ValueError naming why a
        run that long cannot show them."""
        later = sessions if self.later == "last" else int(self.later)
        first = int(self.first)
        if later > sessions:
            raise ValueError(f"session {later} is past the run's {sessions} session(s)")
        if later <= first:
            raise ValueError(
                f"a run of {sessions} session(s) has no session after session {first} to show "
                f"(sessions {self.spec()})"
            )
        return first, later


DEFAULT_PICK = SessionPick()


def parse_session_pick(text: str, *, where: str = "--sessions") -> SessionPick:
    """``1,last`` / ``2,5`` / ``first,last``; :class:`InputError` naming the problem."""
    parts = [p.strip().lower() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise InputError(
            f"{where}: {text!r} is not two sessions: write FIRST,LATER, e.g. 1,last or 2,5"
        )
    slots: list[int | str] = []
    for p in parts:
        if p == "first":
            slots.append(1)
        elif p == "last":
            slots.append("last")
        elif p.isdigit():
            slots.append(int(p))
        else:
            raise InputError(f"{where}: {p!r} is not a session number, 'first' or 'last'")
    try:
        return SessionPick.model_validate({"first": slots[0], "later": slots[1]})
    except ValidationError as err:
        msg = err.errors()[0]["msg"].removeprefix("Value error, ")
        raise InputError(f"{where}: {msg}") from None
