"""The model behind the server: the client, its chunks and streams read as typed steps, the relay
of requests without web tools, the secrets kept out of its texts, and readiness."""
