"""The ``webreach`` command line.

Each command lives in its own module and adds itself to :data:`app`; heavy modules load inside
the commands, so ``webreach --help`` answers at once.
"""

from __future__ import annotations

import re
import sys

from typer import Abort

from . import servers, show_config, web
from .app import app
from .click_errors import ClickException, NoArgsIsHelpError, UsageError

__all__ = ["app", "main"]

_COMMANDS = (web, show_config, servers)  # imported for the commands they add to the app


_PYDANTIC_PREFIX = re.compile(r"\b(?:Value|Assertion) error, ")


def main() -> None:
    """Run a command; a usage error (a bad option value, a missing argument) is one line on
    stderr and exit 2, like every other refused input, instead of click's four."""
    try:
        code = app(prog_name="webreach", standalone_mode=False)
    except NoArgsIsHelpError as error:
        error.show()
        sys.exit(error.exit_code)
    except UsageError as error:
        print(f"webreach: USAGE: {_usage_line(error)}", file=sys.stderr)
        sys.exit(error.exit_code)
    except ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_line(error: UsageError) -> str:
    message = " ".join(_PYDANTIC_PREFIX.sub("", error.format_message()).split())
    context = error.ctx
    if context is None:
        return message
    return f"{message} (see `{context.command_path} --help`)"
