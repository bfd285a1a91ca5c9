"""What every command shares: exit codes, one-line failures, the start-up check of the settings,
and the live status line.

Heavy modules (pydantic, httpx, the providers) load inside these functions, so ``--help`` stays
instant.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

import typer

if TYPE_CHECKING:
    from ..config import BuiltProvider, Settings
    from ..providers import ProviderKind
    from ..seam import WebRuntime
    from .report import Capability

EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE = 0, 1, 2
EXIT_HTTP_ERROR = 22
"""``fetch --fail`` on an HTTP status of 400 or more, as ``curl --fail`` does."""
EXIT_INTERRUPTED = 130
JSON_SCHEMA_VERSION = 1
"""``schema_version`` of every ``--json`` document: raised when a field changes meaning or goes
away (new fields may appear without it)."""


def print_json(data: dict[str, Any]) -> None:
    """One ``--json`` document on stdout, results and errors alike: indented, versioned."""
    print(json.dumps({"schema_version": JSON_SCHEMA_VERSION, **data}, ensure_ascii=False, indent=2))


def fail(
    code: str,
    message: str,
    *,
    as_json: bool,
    exit_code: int = EXIT_TOOL_ERROR,
    retry_after: float | None = None,
    hint: str | None = None,
    **extra: Any,
) -> NoReturn:
    """Stop with ``code`` and ``message``: one line on stderr (and a ``hint:`` line with the
    next step to take, when there is one), or the JSON error on stdout."""
    Status.stop_live()  # the status line goes first, so it is not drawn again below the error
    if as_json:
        error: dict[str, Any] = {"code": code, "message": message, **extra}
        if retry_after is not None:
            error["retry_after"] = retry_after
        if hint is not None:
            error["hint"] = hint
        print_json({"error": error})
    else:
        print(f"webreach: {code}: {message}", file=sys.stderr)
        if hint is not None:
            print(f"webreach: hint: {hint}", file=sys.stderr)
    raise typer.Exit(exit_code)


def usage(message: str, *, as_json: bool = False) -> NoReturn:
    """A command line that cannot run as given (exit 2)."""
    fail("USAGE", message, as_json=as_json, exit_code=EXIT_USAGE)


def warn(message: str) -> None:
    """A warning on stderr; a server whose log is set up writes it as one of its log lines."""
    if logging.getLogger("webreach").handlers:
        logging.getLogger("webreach.cli").warning(message)
        return
    print(f"webreach: warning: {message}", file=sys.stderr)


# What `pip install webreach` leaves out: the commands that need more name the extra to install.
_EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("starlette", "uvicorn", "openai", "cryptography"),
    "mcp": ("mcp", "uvicorn"),
}


def require_extra(command: str, extra: str) -> None:
    """Stop with one line (exit 2) when ``command`` needs an extra that is not installed, with
    the pip command that fits how webreach was installed (from the index, or a checkout)."""
    from ..install_hint import install_command

    for module in _EXTRAS[extra]:
        try:
            import_module(module)
        except ImportError as error:
            missing = error.name or module
            fail(
                "MISSING_EXTRA",
                f"`webreach {command}` needs the {extra} extra ({missing} is not installed): "
                f"{install_command(extra)}",
                as_json=False,
                exit_code=EXIT_USAGE,
            )


def invalid_setting(error: Exception, *, as_json: bool) -> NoReturn:
    """Every problem of a :class:`~webreach.config.ConfigError`, one line each (exit 2)."""
    problems = getattr(error, "problems", None) or (str(error),)
    if as_json:
        fail("INVALID_SETTING", "; ".join(problems), as_json=True, exit_code=EXIT_USAGE)
    for problem in problems:
        print(f"webreach: INVALID_SETTING: {problem}", file=sys.stderr)
    raise typer.Exit(EXIT_USAGE)


def startup(as_json: bool, *, uses: ProviderKind | None = None, **overrides: Any) -> Settings:
    """Every setting read and checked (the shared ones, the settings file, every provider's own)
    before a command does anything; a bad one stops it here with exit 2.

    A command that ``uses`` one capability (``search``, ``fetch``) checks only its providers'
    settings and reads each of them once for the whole process: the others' modules never
    load, which keeps a cached fetch as quick as the interpreter allows."""
    from ..config import ConfigError, check_settings_of, read_each_once

    if uses is not None:
        read_each_once()
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return check_settings_of(None if uses is None else (uses,), **given)
    except ConfigError as error:
        invalid_setting(error, as_json=as_json)


def check_providers(
    settings: Settings,
    *,
    need: str | None,
    option: str | None = None,
    as_json: bool = False,
    warn_unavailable: bool = False,
) -> list[Capability]:
    """Stop (exit 2) on a configured or excluded provider id that does not exist, or a
    selection that cannot be (``auto`` in a list, a list all excluded), for any capability, and
    on one that cannot run (its key missing) for the capability ``need`` that the command uses;
    a server only warns about the latter (``warn_unavailable``), as each call to it would fail.

    A message names what the person used: ``option`` (``--provider exa``) when it chose the
    provider of ``need``, else the variable. With ``need``, a capability the settings choose
    nothing for (no provider, no exclusion) has nothing to check, and its providers are not
    built."""
    import asyncio

    from ..seam import InvalidValueError
    from .report import capabilities

    try:
        found = asyncio.run(capabilities(settings, checked_kinds(settings, need)))
    except InvalidValueError as error:
        fail("INVALID_SETTING", error.message, as_json=as_json, exit_code=EXIT_USAGE)
    _judge(found, need=need, option=option, as_json=as_json, warn_unavailable=warn_unavailable)
    return found


async def checked_providers(
    settings: Settings, owner: WebRuntime, *, need: ProviderKind, option: str | None, as_json: bool
) -> tuple[list[BuiltProvider], list[ProviderKind]]:
    """:func:`check_providers` for a command that then runs: the providers it checked, built
    once and owned by ``owner``, for the runtime to register as they are, and their kinds."""
    from ..config import built_providers
    from ..seam import InvalidValueError
    from .report import capabilities_of

    kinds = checked_kinds(settings, need)
    built = built_providers(settings, owner, kinds)
    try:
        found = await capabilities_of(settings, built, kinds)
    except InvalidValueError as error:
        fail("INVALID_SETTING", error.message, as_json=as_json, exit_code=EXIT_USAGE)
    _judge(found, need=need, option=option, as_json=as_json, warn_unavailable=False)
    return built, kinds


def checked_kinds(settings: Settings, need: str | None) -> list[ProviderKind]:
    """The capabilities a command checks: ``need``, and those whose providers the settings
    name (a list, an exclusion), which can be wrong without the command using them; every
    one without ``need``."""
    from ..config import provider_kinds

    return [k for k in provider_kinds() if need is None or k == need or _doubtful(settings, k)]


def _doubtful(settings: Settings, kind: ProviderKind) -> bool:
    return _chosen(settings, kind) and not _plainly_possible(settings, kind)


def _plainly_possible(settings: Settings, kind: ProviderKind) -> bool:
    """Whether the choice the settings make for ``kind`` (a capability the command does not use)
    names only built-in providers, in a selection that can work: checking it would then build
    every provider of ``kind`` to find nothing that stops the command. The built-in ids are the
    keys of the package's ``SETTING_PREFIXES``; anything else takes the whole check."""
    from ..providers import PACKAGES
    from ..seam import InvalidValueError
    from .report import Capability, ProviderState, settings_choice

    known = getattr(import_module(PACKAGES[kind]), "SETTING_PREFIXES", None)
    if not known:
        return False
    try:
        configured, order, exclude = settings_choice(settings, kind)
    except InvalidValueError:
        return False
    states = tuple(ProviderState(pid, False, (), False) for pid in known)
    return not Capability(kind, configured, states, order, exclude).impossible()


def _judge(
    found: list[Capability],
    *,
    need: str | None,
    option: str | None,
    as_json: bool,
    warn_unavailable: bool,
) -> None:
    for capability in found:
        named = option if option and capability.kind == need else None
        problem = capability.setting_problem(named)
        if problem is None:
            continue
        impossible = capability.impossible()
        if named is not None:
            usage(problem, as_json=as_json)
        if impossible or capability.kind == need:
            fail("INVALID_SETTING", problem, as_json=as_json, exit_code=EXIT_USAGE)
        if warn_unavailable:
            warn(f"{problem}; every {capability.label} will fail until then")


def _chosen(settings: Settings, kind: str) -> bool:
    named = getattr(settings, f"{kind}_provider", None), getattr(settings, f"{kind}_exclude", None)
    return any(value not in (None, "") for value in named)


class _Line:
    """The status line's text, drawn afresh at every refresh (rich asks for it again), so its
    seconds keep counting while the search waits."""

    def __init__(self, status: Status) -> None:
        self._status = status

    def __rich__(self) -> Any:
        return self._status._text()


class Status:
    """A live status line on a terminal's stderr, with the seconds since it started (so slow
    and stuck look different); silent when stderr is not a terminal."""

    _live_now: ClassVar[Status | None] = None

    @classmethod
    def stop_live(cls) -> None:
        if cls._live_now is not None:
            cls._live_now.__exit__()

    def __init__(self, title: str, items: list[str]) -> None:
        self._title = title
        self._items = items
        self._done: set[str] = set()
        self._live: Any = None
        self._started = time.monotonic()
        if sys.stderr.isatty():
            from rich.console import Console

            self._live = Console(stderr=True).status(_Line(self))

    def _text(self) -> Any:
        from rich.text import Text  # plain text: a query is never read as rich markup

        marks = " · ".join(f"{item} ✓" if item in self._done else item for item in self._items)
        seconds = int(time.monotonic() - self._started)
        return Text(f"{self._title}: {marks} … {seconds} s")

    def done(self, item: str) -> None:
        self._done.add(item)

    def __enter__(self) -> Status:
        self._started = time.monotonic()
        if self._live is not None:
            self._live.start()
            Status._live_now = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            Status._live_now = None
