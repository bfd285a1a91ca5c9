"""OpenAI Chat Completions: request parsing and rendering."""

from .codec import ChatCodec

__all__ = ["ChatCodec"]
