"""Outbound HTTP shared by providers. Imports the seam only."""

from .client import USER_AGENT, create_client

__all__ = ["USER_AGENT", "create_client"]
