"""Each echoed Responses setting is declared once, on ``Echo``: the response carries every one
of them, and the request's field of the same name fills it."""

from __future__ import annotations

import dataclasses

from webreach.server.responses.echo import NO_ECHO, echo_of
from webreach.server.responses.shapes_in import ResponsesRequest
from webreach.server.responses.shapes_out import Echo, Response

ECHOED = [setting.name for setting in dataclasses.fields(Echo)]


def test_every_echoed_setting_is_a_key_of_the_response() -> None:
    assert set(ECHOED) <= set(Response.__annotations__)


def test_every_echoed_setting_but_top_logprobs_is_read_from_the_request() -> None:
    assert set(ECHOED) - set(ResponsesRequest.model_fields) == {"top_logprobs"}


def test_a_request_that_sets_nothing_echoes_the_defaults() -> None:
    assert echo_of(ResponsesRequest.model_validate({"model": "m"})) == NO_ECHO


def test_a_setting_sent_is_echoed_as_sent() -> None:
    request = ResponsesRequest.model_validate(
        {"model": "m", "temperature": 0.5, "user": "u", "truncation": "auto", "background": True}
    )
    echo = echo_of(request)
    assert (echo.temperature, echo.user, echo.truncation, echo.background) == (
        0.5,
        "u",
        "auto",
        True,
    )
