"""What to tell a person whose run stopped, by the reason it stopped (decision 246). Kept
free of heavy imports: the CLI and the app's screens import it before any model client."""

from __future__ import annotations

#: why a session of a store-based arm cannot start: nothing is open to focus on
NO_OPEN_QUESTION = "no open question to focus on"


def resume_advice(reason: str | None) -> str:
    """What to tell a person whose run stopped for ``reason``: run again to resume, unless
    nothing is open (running again would only record the same failure)."""
    if reason == NO_OPEN_QUESTION:
        return (
            "nothing is left open (every question is closed, archived or merged), so running "
            "again will not continue it"
        )
    return "run the same command again to resume"
