"""The protocol-neutral core: the turn, the loop, web calls, citations, the upstream."""
