"""OpenAI Responses: request parsing and rendering."""

from .codec import ResponsesCodec

__all__ = ["ResponsesCodec"]
