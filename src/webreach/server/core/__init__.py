"""The protocol-neutral core, in layers that import only downward: ``loop`` (the agent loop)
over ``web_tools`` (the calls the server runs for the model) over ``review`` over ``upstream``
(the model) over ``wire`` (the client's side) over ``state`` over ``turn`` (one request)."""
