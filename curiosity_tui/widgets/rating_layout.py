"""The rating screen's layout (its stylesheet), kept apart from its behaviour in
:mod:`curiosity_tui.screens.rating`."""

from __future__ import annotations

__all__ = ["RATING_CSS"]

RATING_CSS = """
RatingScreen { layout: vertical; }
#rating-top { height: 1; background: $primary-background; }
#rating-status { width: 1fr; padding: 0 1; }
#rating-progress { width: 34; }
#rating-body { height: 1fr; }
#rating-items { width: 30; display: none; border-right: solid $primary-lighten-2; }
#rating-items.open { display: block; }
#rating-item { width: 3fr; padding: 0 1; border-right: solid $primary-lighten-2; }
#rating-side { width: 2fr; }
#rating-form { height: 1fr; padding: 0 1; }
#rating-guide { height: auto; max-height: 40%; background: $boost; padding: 0 1;
    border-bottom: solid $primary-lighten-2; }
#rating-guide.closed { display: none; }
#rating-guide.folded { height: 1; max-height: 1; overflow: hidden hidden; border-bottom: none; }
.section-title { text-style: bold; margin-top: 1; color: $accent; }
.section-text { margin-bottom: 1; }
.section-empty { color: $text-muted; text-style: italic; margin-bottom: 1; }
.q-block { height: auto; }
#rating-keys { color: $text-muted; }
.q-prompt { text-style: bold; margin-top: 1; }
.q-help { color: $text-muted; }
.q-quote-help { color: $text-muted; margin-top: 1; }
.q-quotes { margin: 0 0 0 1; color: $text; }
.q-quote-msg { margin: 0 0 0 1; }
.q-error { color: $error; margin: 0 0 0 1; }
#rating-flag { display: none; }
#rating-flag.open { display: block; }
#rating-message { height: auto; min-height: 1; padding: 0 1; }
#rating-message.error { color: $error; }
#rating-message.ok { color: $success; }
"""
