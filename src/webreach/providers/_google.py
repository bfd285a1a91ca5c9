"""What Google's APIs share: they refuse a bad key with 400 ``API_KEY_INVALID``, not 401."""

from __future__ import annotations

import json

import httpx

__all__ = ["google_key_refused"]


def google_key_refused(response: httpx.Response) -> bool:
    """Whether ``response`` is Google's refusal of the key (Gemini, Cloud Vision)."""
    if response.status_code != 400:
        return False
    try:
        error = json.loads(response.content).get("error", {})
        details = error.get("details", [])
        return any(detail.get("reason") == "API_KEY_INVALID" for detail in details)
    except (ValueError, AttributeError, TypeError):
        return False
