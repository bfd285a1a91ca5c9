"""The ``webreach`` Typer application that every command module adds itself to, and the plain
help format its commands use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["app", "command"]

F = TypeVar("F", bound=Callable[..., Any])

_EPILOG = (
    "Settings come from WEBREACH_* and provider variables (EXA_API_KEY …) or a webreach.toml "
    "file (WEBREACH_CONFIG names another); `webreach config` shows every setting, where it came "
    "from and which providers it enables."
)
_ORDER = ("search", "fetch", "config", "mcp", "serve")


class _Group(TyperGroup):
    """Lists the commands in the order a newcomer uses them."""

    def list_commands(self, ctx: Any) -> list[str]:
        rank = {name: index for index, name in enumerate(_ORDER)}
        return sorted(super().list_commands(ctx), key=lambda name: rank.get(name, len(rank)))


class PlainCommand(TyperCommand):
    """Help as people write it: ``webreach search [OPTIONS] QUERY...``, each option with its
    value's name, and no Python types, ranges or braces."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = ["[OPTIONS]"] if _options(self.get_params(ctx)) else []
        return pieces + [_argument_name(p) for p in _arguments(self.params)]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments = [(_argument_name(p), p.help or "") for p in _arguments(self.params)]
        options = [(_option_name(p), p.help or "") for p in _options(self.get_params(ctx))]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _arguments(params: list[Any]) -> list[Any]:
    return [p for p in params if p.param_type_name == "argument"]


def _options(params: list[Any]) -> list[Any]:
    return [p for p in params if p.param_type_name == "option" and not p.hidden]


def _argument_name(param: Any) -> str:
    return str(param.metavar or (param.name or "").upper())


def _option_name(option: Any) -> str:
    names = ", ".join(sorted([*option.opts, *option.secondary_opts], key=len))
    if option.is_flag:
        return names
    # typer 0.29 describes the type in `type_descriptor`; click keeps it in `type`
    described: Any = getattr(option, "type_descriptor", None) or getattr(option, "type", None)
    choices = getattr(described, "choices", None)
    value = option.metavar or ("[" + "|".join(map(str, choices)) + "]" if choices else "VALUE")
    return f"{names} {value}"


app = typer.Typer(
    name="webreach",
    cls=_Group,
    help="Give any language model the web: search, fetch, and serve web tools.",
    epilog=_EPILOG,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def command(name: str | None = None, *, short_help: str) -> Callable[[F], F]:
    """Add a command to :data:`app`, with the plain help format and a short summary for the
    command list (which would otherwise cut the first sentence)."""
    decorator: Callable[[F], F] = app.command(name, cls=PlainCommand, short_help=short_help)
    return decorator


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"webreach {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Give any language model the web: search, fetch, and serve web tools."""
