"""The protocol-neutral edge with the client: the bounded body, declared fields, the codec contract
and its driver, and the framing of JSON and SSE."""
