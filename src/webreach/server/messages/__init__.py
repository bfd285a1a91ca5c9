"""Anthropic Messages: request parsing and rendering."""

from .codec import MessagesCodec

__all__ = ["MessagesCodec"]
