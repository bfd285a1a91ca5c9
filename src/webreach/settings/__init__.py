"""The shared settings of webreach: one typed object read from the environment and
``webreach.toml``, each value checked when read so a typo stops a command before it starts.

The server's settings (:mod:`.server`) and search and fetch's (:mod:`.web`) are declared here,
beneath the server and the tools that read them, so the server imports its settings and they
import nothing of it. Loading them with every provider's own settings, and reporting problems,
is :mod:`webreach.config`.
"""

from __future__ import annotations

from pydantic_settings import SettingsConfigDict

from ..settings_base import FileSettings
from .server import ServerSettings
from .web import WebSettings, default_render_processes

__all__ = ["ENV_PREFIX", "ServerSettings", "Settings", "WebSettings", "default_render_processes"]

ENV_PREFIX = "WEBREACH_"


class Settings(FileSettings, ServerSettings, WebSettings):
    """The shared settings of webreach, read from ``WEBREACH_<FIELD>`` and ``webreach.toml``,
    with their defaults. Secrets are ``SecretStr``.

    The server's settings are declared once, in :class:`ServerSettings`, and inherited here,
    so ``webreach serve`` hands this object to ``create_app`` whole. A provider's own settings
    (its key, endpoint, model …) are not here: each provider module declares them (see
    :mod:`webreach.providers.spec`) and :func:`build_runtime` reads them.

    Fields come in the bases' reverse order: ``webreach config`` lists search and fetch first.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", validate_default=True)
