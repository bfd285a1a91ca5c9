"""The agent loop: each upstream step's body, the conversation it reads, the web calls it plans,
the title beside it, and its debug lines."""
