"""Model I/O: the HTTP client and how a call crosses the wire (retries, rate limits, the
request template), the endpoint probe, the per-call schemas and dialects, and the embedders.
Knows nothing of the protocol's steps or of runs."""
