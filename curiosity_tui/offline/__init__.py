"""Offline fakes: the scripted model server, its research bank and demo replies, the
schema filler, the §5 episodes, the scripted relay and synthetic data. Real code imports
this room only where it chooses it (the CLI's ``--scripted`` and ``demo``); tests,
benchmarks and scripts use it freely (tests/test_import_hygiene.py holds that)."""
