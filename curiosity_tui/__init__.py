"""curiosity-tui: run and audit multi-session LLM investigations over a question ledger."""

__version__ = "0.1.0"
