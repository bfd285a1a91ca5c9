"""Which provider each capability would use with the current settings, and why none when it
cannot: for ``webreach config`` and for the commands' start-up checks.

The providers are built (no I/O) and closed again. The choice follows the runtime's table
(SPEC §2): a configured list must be registered and available; otherwise exactly one available
provider is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import BuiltProvider, Settings
    from ..config_sources import Setting

__all__ = ["Capability", "ProviderState", "capabilities"]


@dataclass(frozen=True, slots=True)
class ProviderState:
    id: str
    available: bool
    needs: tuple[str, ...]
    """The variables that would make it available, when it is not."""
    plugin: bool


@dataclass(frozen=True, slots=True)
class Capability:
    kind: str
    configured: tuple[str, ...]
    providers: tuple[ProviderState, ...]

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

    def uses(self) -> tuple[str, ...]:
        """The providers a call would try, in order; empty when none can be chosen."""
        if self.configured:
            states = [self.state(pid) for pid in self.configured]
            return self.configured if all(s and s.available for s in states) else ()
        available = [p.id for p in self.providers if p.available]
        return (available[0],) if len(available) == 1 else ()

    def problem(self, named: str | None = None) -> str | None:
        """Why no provider can be chosen, naming how the choice was made (``named``: the
        variable, or the command-line option the person used); None when one can."""
        named = named or f"{self.variable}={','.join(self.configured)}"
        for pid in self.configured:
            state = self.state(pid)
            if state is None:
                valid = ", ".join(self.ids()) or "none are installed"
                return f"{named}: there is no {self.label} provider {pid!r} (valid: {valid})"
            if not state.available:
                if state.needs:
                    return f"{named}: {pid} is not configured; set {' or '.join(state.needs)}"
                return f"{named}: {pid} is not available with the current settings"
        if self.configured:
            return None
        available = [p.id for p in self.providers if p.available]
        if not available:
            ways = [f"{' or '.join(p.needs)} ({p.id})" for p in self.providers if p.needs]
            how = f"set {' or '.join(ways)}" if ways else "install or configure one"
            return f"no {self.label} provider is available; {how}"
        if len(available) > 1:
            return (
                f"several {self.label} providers are available ({', '.join(available)}); "
                f"choose one with {self.variable}"
            )
        return None


async def capabilities(settings: Settings) -> list[Capability]:
    """Every capability with its providers and what is configured for it."""
    from ..config import built_providers, provider_kinds
    from ..seam import WebRuntime, parse_provider_ids

    async with WebRuntime() as owner:
        built = built_providers(settings, owner)
        states = [(item.kind, await _state(item)) for item in built]
    return [
        Capability(
            kind,
            parse_provider_ids(getattr(settings, f"{kind}_provider", None)),
            tuple(state for of, state in sorted(states, key=lambda s: s[1].id) if of == kind),
        )
        for kind in provider_kinds()
    ]


async def _state(item: BuiltProvider) -> ProviderState:
    available = bool(item.provider.available())
    needs = () if available else await _needs(item)
    return ProviderState(str(item.provider.id), available, needs, item.plugin)


async def _needs(item: BuiltProvider) -> tuple[str, ...]:
    """The unset settings that would make the provider available, each found by building it
    again with a placeholder value: a provider says whether it is available, not what it
    lacks."""
    from ..config_sources import Setting

    spec = item.spec
    if spec is None:
        return ()
    current = spec.settings()
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
