"""Runs: one ledger for N sessions (the runner), pilots over worker processes and shards,
and the relay (which mind takes each session). Built on the protocol and the model I/O."""
