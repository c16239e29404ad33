"""The palette's Screenshot (issue 28, item 10): saved in the current folder or
``$CURIOSITY_SCREENSHOTS``, the notice naming the full path or exactly why not (it failed
with "Failed to save screenshot" when ~/Downloads did not exist)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from curiosity_tui.app import make_app


async def _shoot(tmp_path: Path) -> tuple[str | None, list[str]]:
    app = make_app(tmp_path)
    notes: list[str] = []
    shown = app.notify

    def notify(message: str, **kw: Any) -> None:
        notes.append(message)
        shown(message, **kw)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        saved = app.deliver_screenshot()
        await pilot.pause()
    return saved, notes


async def test_saved_in_the_current_folder_with_its_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CURIOSITY_SCREENSHOTS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "no-home"))  # no ~/Downloads anywhere
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    saved, notes = await _shoot(tmp_path)
    assert saved is not None and Path(saved).parent == here and Path(saved).suffix == ".svg"
    assert Path(saved).read_text().startswith("<svg")
    assert f"Saved screenshot to {saved}" in notes


async def test_a_configured_folder_and_the_exact_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    monkeypatch.setenv("CURIOSITY_SCREENSHOTS", str(shots))
    saved, _ = await _shoot(tmp_path)
    assert saved is not None and Path(saved).parent == shots
    monkeypatch.setenv("CURIOSITY_SCREENSHOTS", str(tmp_path / "missing"))
    saved, notes = await _shoot(tmp_path)
    assert saved is None
    assert any(
        n.startswith(f"Screenshot not saved: {tmp_path / 'missing'}: no such folder") for n in notes
    ), notes
