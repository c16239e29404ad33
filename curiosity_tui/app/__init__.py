"""The app layer: one base, one navigator, the full app and the one-screen apps.

- :mod:`~curiosity_tui.app.base` — :class:`AppBase` (help, palette, keymap, stylesheet) and
  :func:`load_keymap`;
- :mod:`~curiosity_tui.app.navigator` — every screen change screens ask for;
- :mod:`~curiosity_tui.app.main` — :class:`CuriosityApp` and :func:`make_app`;
- :mod:`~curiosity_tui.app.standalone` — :class:`RatingApp`, :class:`AgreementApp`,
  :class:`AdjudicationApp`, :class:`AnalysisApp`.

Screens live one per file in :mod:`curiosity_tui.screens`, reusable widgets in
:mod:`curiosity_tui.widgets`; they call domain modules (``ledger``, ``contract``,
``analysis``, ``packs``, ``workspace_scan`` …) which never import textual. The app never
imports :mod:`curiosity_tui.cli`; the CLI imports the app, lazily, inside its handlers.
"""

from curiosity_tui.app.base import AppBase, env_keymap, load_keymap
from curiosity_tui.app.main import CuriosityApp, make_app
from curiosity_tui.app.standalone import AdjudicationApp, AgreementApp, AnalysisApp, RatingApp

__all__ = [
    "AdjudicationApp",
    "AgreementApp",
    "AnalysisApp",
    "AppBase",
    "CuriosityApp",
    "RatingApp",
    "env_keymap",
    "load_keymap",
    "make_app",
]
