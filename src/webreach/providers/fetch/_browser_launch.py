"""Finding a browser and starting it locked down: one per provider engine, started on first use.

Where the browser comes from, in order: a remote browser over CDP (``WEBREACH_BROWSER_CDP_URL``),
a binary (``WEBREACH_BROWSER_EXECUTABLE``), Playwright's own Chromium, then a Chromium or Chrome
on ``PATH``. Finding one does no I/O beyond looking at files, so ``available()`` stays cheap.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ...install_hint import install_command

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = ["LAUNCH_ARGS", "BrowserSource", "find_browser", "launch", "refusing_port"]

_ON_PATH = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

LAUNCH_ARGS = (
    # The browser resolves no name: every connection goes to the guard proxy by name.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--proxy-bypass-list=<-loopback>",
    "--disable-quic",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--mute-audio",
    # A page allocating in a loop ends its own renderer, not the machine.
    "--js-flags=--max-old-space-size=512",
)


@dataclass(frozen=True, slots=True)
class BrowserSource:
    """Where the browser comes from: ``where`` is the CDP URL or the binary (None: Playwright's)."""

    kind: Literal["cdp", "executable", "playwright", "path"]
    where: str | None


def find_browser(
    cdp_url: str | None, executable: str | None, *, no_sandbox: bool
) -> tuple[BrowserSource | None, str]:
    """The browser to use and how it was found, or None and the one-line reason there is none."""
    if not _installed("playwright"):
        return None, f"playwright is not installed: {install_command('browser')}"
    if cdp_url:
        return BrowserSource("cdp", cdp_url), f"the browser at WEBREACH_BROWSER_CDP_URL={cdp_url}"
    local: BrowserSource | None = None
    if executable:
        path = shutil.which(executable) or executable
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return None, f"WEBREACH_BROWSER_EXECUTABLE={executable} is not an executable file"
        local, how = BrowserSource("executable", path), f"WEBREACH_BROWSER_EXECUTABLE={path}"
    elif _playwright_chromium():
        local, how = BrowserSource("playwright", None), "Playwright's own Chromium"
    else:
        found = next(filter(None, map(shutil.which, _ON_PATH)), None)
        if found is None:
            return None, (
                "no browser found: install Chromium (apt-get install chromium, or "
                "`playwright install chromium`), or set WEBREACH_BROWSER_EXECUTABLE or "
                "WEBREACH_BROWSER_CDP_URL"
            )
        local, how = BrowserSource("path", found), f"{found} (on PATH)"
    if _is_root() and not no_sandbox:
        return None, (
            "running as root, where Chromium's sandbox cannot start: run webreach as another "
            "user, or set WEBREACH_BROWSER_NO_SANDBOX=true to run Chromium without its sandbox"
        )
    return local, how


def _installed(name: str) -> bool:
    """Whether ``name`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _playwright_chromium() -> bool:
    """Whether ``playwright install chromium`` has put a browser where Playwright looks."""
    named = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if named == "0":
        spec = importlib.util.find_spec("playwright") if _installed("playwright") else None
        origin = spec.origin if spec is not None else None
        if origin is None:
            return False
        root = Path(origin).parent / "driver" / "package" / ".local-browsers"
    elif named:
        root = Path(named)
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Caches" / "ms-playwright"
    elif sys.platform == "win32":
        root = Path(os.environ.get("LOCALAPPDATA", Path.home())) / "ms-playwright"
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ms-playwright"
    try:
        return any(entry.name.startswith("chromium") for entry in root.iterdir())
    except OSError:
        return False


def refusing_port() -> socket.socket:
    """A loopback port bound but never listening: a connection to it is refused.

    It is the browser-wide proxy, so anything that runs outside a fetch's own context (and its
    own guard proxy) has nowhere to go.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


async def launch(
    playwright: Playwright, source: BrowserSource, *, no_sandbox: bool, dead_end: int
) -> Browser:
    """Start (or, over CDP, connect to) the browser; ``dead_end`` is :func:`refusing_port`'s."""
    if source.kind == "cdp":
        assert source.where is not None
        return await playwright.chromium.connect_over_cdp(source.where)
    return await playwright.chromium.launch(
        executable_path=source.where,
        headless=True,
        chromium_sandbox=not no_sandbox,
        args=[*LAUNCH_ARGS, f"--proxy-server=socks5://127.0.0.1:{dead_end}"],
        handle_sigint=False,
        handle_sigterm=False,
        handle_sighup=False,
    )
