"""What a cache store URL may be, checked when the setting is read: a typo or a missing extra
stops every command at once instead of leaving replicas without their shared store."""

from __future__ import annotations

from importlib.util import find_spec
from urllib.parse import urlsplit

__all__ = ["check_store_url", "shown_store_url"]

REDIS_SCHEMES = ("redis", "rediss", "unix")


def check_store_url(url: str) -> None:
    """Raise ``ValueError`` naming what is wrong (never the URL itself, which may hold a
    password): an unknown scheme, a malformed sqlite path, redis without its extra."""
    if url in ("memory", "none"):
        return
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        if parts.netloc or not parts.path:
            raise ValueError("expected sqlite:///absolute/path (three slashes, then the path)")
        return
    if parts.scheme in REDIS_SCHEMES:
        if not _installed("redis"):
            from ..install_hint import install_command

            raise ValueError(
                f"{parts.scheme}:// needs the redis extra (redis is not installed): "
                f"{install_command('redis')}"
            )
        return
    shown = f"the scheme {parts.scheme!r} is not" if parts.scheme else "it is not"
    raise ValueError(
        f"{shown} a cache store; use memory, none, sqlite:///absolute/path or redis://host"
    )


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except ImportError:
        return False


def shown_store_url(url: str) -> str:
    """``url`` as a log line may show it: a password (``redis://:secret@host``) masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()
