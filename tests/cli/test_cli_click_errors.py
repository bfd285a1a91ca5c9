"""The click errors webreach words itself are the classes typer raises: a typer upgrade that moves
its copy of click fails here, not as a four-line traceback at a user's first typo."""

from __future__ import annotations

import pytest
import typer

from webreach.cli import app
from webreach.cli.click_errors import ClickException, NoArgsIsHelpError, UsageError


def test_an_unknown_option_is_the_usage_error_caught() -> None:
    with pytest.raises(UsageError) as caught:
        app(["--no-such-option"], prog_name="webreach", standalone_mode=False)
    assert "--no-such-option" in caught.value.format_message()


def test_no_arguments_is_the_help_error_caught() -> None:
    with pytest.raises(NoArgsIsHelpError):
        app([], prog_name="webreach", standalone_mode=False)


def test_typers_public_errors_are_of_the_same_family() -> None:
    assert issubclass(typer.BadParameter, UsageError)
    assert issubclass(UsageError, ClickException)
