"""Which provider each capability would use with the current settings, and why none when it
cannot: for ``webreach config`` and for the commands' start-up checks.

The providers are built (no I/O) and closed again. The choice is the runtime's own,
:func:`webreach.seam.selection.select`, run on what each provider says of itself; this module
words it for a person at the command line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..seam.registry import did_you_mean
from ..seam.selection import AUTO, Candidate, Refusal, Selection, select

if TYPE_CHECKING:
    from ..config import BuiltProvider, Settings
    from ..config_sources import Setting
    from ..providers import ProviderKind

__all__ = [
    "Capability",
    "ProviderState",
    "capabilities",
    "capabilities_of",
    "settings_choice",
]


@dataclass(frozen=True, slots=True)
class ProviderState:
    id: str
    available: bool
    needs: tuple[str, ...]
    """The variables that would make it available, when it is not."""
    plugin: bool
    shared: bool = False
    """Its only credential is a key other programs share: it runs when named or in ``auto``."""
    reason: str | None = None
    """Why it is not available, in one line, when the provider says (a missing extra, say)."""


@dataclass(frozen=True, slots=True)
class Capability:
    kind: str
    configured: tuple[str, ...]
    providers: tuple[ProviderState, ...]
    order: tuple[str, ...] | None = None
    """The order of ``auto``; None where ``auto`` is not a choice."""
    exclude: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.kind.replace("_", " ")

    @property
    def variable(self) -> str:
        return f"WEBREACH_{self.kind.upper()}_PROVIDER"

    def ids(self) -> list[str]:
        return sorted(p.id for p in self.providers)

    def state(self, pid: str) -> ProviderState | None:
        return next((p for p in self.providers if p.id == pid), None)

    @property
    def exclude_variable(self) -> str:
        return f"WEBREACH_{self.kind.upper()}_EXCLUDE"

    @property
    def auto(self) -> bool:
        return self.order is not None and AUTO in self.configured

    def kept(self) -> tuple[str, ...]:
        """The configured ids that are not excluded."""
        return tuple(pid for pid in self.configured if pid not in self.exclude)

    def impossible(self) -> bool:
        """Whether the selection can never work, whatever keys are set: an id that names no
        provider (a typo, say), ``auto`` in a list, or a list whose ids are all excluded."""
        if self.auto:
            return len(self.configured) > 1 or any(self.state(p) is None for p in self.exclude)
        if self.configured and not self.kept():
            return True
        return any(self.state(pid) is None for pid in self.configured + self.exclude)

    def selection(self) -> Selection:
        candidates = (Candidate(p.id, p.available, p.shared) for p in self.providers)
        return select(self.configured, self.exclude, self.order, candidates)

    def uses(self) -> tuple[str, ...]:
        """The providers a call would try, in order; empty when none can be chosen."""
        return self.selection().uses

    def setting_problem(self, named: str | None = None) -> str | None:
        """What is wrong with the settings themselves (an unknown id, a provider named but
        not configured, a list all excluded), naming how the choice was made (``named``: the
        variable, or the command-line option the person used); None when nothing is."""
        chosen = self.selection()
        if chosen.refusal is None or not chosen.refusal.of_settings:
            return None
        return self._worded(chosen.refusal, chosen.about, named)

    def problem(self, named: str | None = None) -> str | None:
        """Why no provider can be chosen (see :meth:`setting_problem`), or why a bare
        configuration (or ``auto``) chooses none; None when one can."""
        chosen = self.selection()
        if chosen.refusal is None:
            return None
        return self._worded(chosen.refusal, chosen.about, named)

    def _worded(self, refusal: Refusal, about: tuple[str, ...], named: str | None) -> str:
        valid = ", ".join(self.ids()) or "none are installed"
        named = named or f"{self.variable}={','.join(self.configured)}"
        if refusal is Refusal.UNKNOWN_EXCLUDED:
            (pid,) = about
            return (
                f"{self.exclude_variable}={','.join(self.exclude)}: there is no "
                f"{self.label} provider {pid!r}{did_you_mean(pid, self.ids())} "
                f"(valid: {valid})"
            )
        if refusal is Refusal.AUTO_NOT_ALONE:
            return (
                f"{named}: {AUTO!r} stands alone (every available provider in order); "
                f"to leave providers out of it, set {self.exclude_variable}"
            )
        if refusal is Refusal.ALL_EXCLUDED:
            return (
                f"{self.exclude_variable}={','.join(self.exclude)} excludes every provider "
                f"of {named}"
            )
        if refusal is Refusal.UNKNOWN:
            (pid,) = about
            close = did_you_mean(pid, self.ids())
            return f"{named}: there is no {self.label} provider {pid!r}{close} (valid: {valid})"
        if refusal is Refusal.UNAVAILABLE:
            state = self.state(about[0])
            assert state is not None
            if state.reason:
                return f"{named}: {state.id} is not available: {state.reason}"
            if state.needs:
                return f"{named}: {state.id} is not configured; set {' or '.join(state.needs)}"
            return f"{named}: {state.id} is not available with the current settings"
        if refusal is Refusal.AMBIGUOUS:
            return (
                f"several {self.label} providers are available ({', '.join(about)}); "
                f"choose one with {self.variable}"
            )
        if self.auto:
            excluded = f" (excluded: {', '.join(self.exclude)})" if self.exclude else ""
            return f"{self.variable}={AUTO}: no {self.label} provider is available{excluded}"
        ways = [
            f"{' or '.join(p.needs)} ({p.id})"
            for p in self.providers
            if p.needs and p.id not in self.exclude
        ]
        how = f"set {' or '.join(ways)}" if ways else "install or configure one"
        return f"no {self.label} provider is available; {how}"


async def capabilities(
    settings: Settings, kinds: Iterable[ProviderKind] | None = None
) -> list[Capability]:
    """Every capability (or those of ``kinds``) with its providers and what is configured
    for it."""
    from ..config import built_providers, provider_kinds
    from ..seam import WebRuntime

    chosen = provider_kinds() if kinds is None else tuple(kinds)
    async with WebRuntime() as owner:
        return await capabilities_of(settings, built_providers(settings, owner, chosen), chosen)


async def capabilities_of(
    settings: Settings, built: Iterable[BuiltProvider], kinds: Iterable[ProviderKind]
) -> list[Capability]:
    """The capabilities of ``kinds`` as the providers ``built`` for ``settings`` give them."""
    states = [(item.kind, await _state(item)) for item in built]
    found = []
    for kind in kinds:
        configured, order, exclude = settings_choice(settings, kind)
        mine = tuple(state for of, state in sorted(states, key=lambda s: s[1].id) if of == kind)
        found.append(Capability(kind, configured, mine, order, exclude))
    return found


def settings_choice(
    settings: Settings, kind: str
) -> tuple[tuple[str, ...], tuple[str, ...] | None, tuple[str, ...]]:
    """The ids the settings choose for ``kind``, the order of ``auto`` (None where it is no
    choice) and the excluded ids; a list that names a provider twice raises
    :class:`~webreach.seam.InvalidValueError`."""
    from ..providers.search import AUTO_ORDER
    from ..seam import parse_provider_ids

    variable = f"WEBREACH_{kind.upper()}"
    return (
        parse_provider_ids(getattr(settings, f"{kind}_provider"), f"{variable}_PROVIDER"),
        AUTO_ORDER if kind == "search" else None,
        parse_provider_ids(getattr(settings, f"{kind}_exclude", None), f"{variable}_EXCLUDE"),
    )


async def _state(item: BuiltProvider) -> ProviderState:
    from ..seam import Explained, SharedCredential

    provider = item.provider
    available = bool(provider.available())
    needs = () if available else await _needs(item)
    shared = isinstance(provider, SharedCredential) and bool(provider.shared_credential())
    reason = provider.unavailable_reason() if isinstance(provider, Explained) else None
    return ProviderState(str(provider.id), available, needs, item.plugin, shared, reason)


async def _needs(item: BuiltProvider) -> tuple[str, ...]:
    """The unset settings that would make the provider available, each found by building it
    again with a placeholder value: a provider says whether it is available, not what it
    lacks."""
    from ..config import read_provider_settings
    from ..config_sources import Setting

    spec = item.spec
    if spec is None:
        return ()
    current = read_provider_settings(spec.settings)
    needs = []
    for setting in Setting.all_of(spec.settings, spec.id):
        if getattr(current, setting.field) is not None:
            continue
        values = dict(current) | {setting.field: _placeholder(setting)}
        trial = spec.create(spec.settings.model_construct(**values), item.context)
        try:
            if trial is not None and trial.available():
                needs.append(setting.variable)
        finally:
            if callable(close := getattr(trial, "aclose", None)):
                await close()
    return tuple(needs)


def _placeholder(setting: Setting) -> object:
    from pydantic import SecretStr

    if setting.secret:
        return SecretStr("placeholder")
    return "http://127.0.0.1" if setting.field.endswith("_url") else "placeholder"
