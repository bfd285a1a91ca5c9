"""Which tests are ``slow``: those that start a process or a server, found from their code.

A test is slow when its function, a fixture it uses, or anything of the tests' own they call
(helpers, classes, fixtures under tests/, followed through their globals) names something that
starts a process or serves over a socket: :mod:`subprocess`, ``asyncio.create_subprocess_*``,
:mod:`multiprocessing`, :mod:`uvicorn` or Playwright. Nothing keeps a list of test modules: a
new test that starts a server is slow because it does. A test slow for another reason (it waits
out a deadline) carries ``@pytest.mark.slow`` itself; a harness whose mark means a process
(Chromium) declares it with :func:`starts_a_process`.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

STARTER_MODULES = (
    "subprocess",
    "multiprocessing",
    "concurrent.futures.process",
    "uvicorn",
    "playwright",
    "webreach.tools.render_pool",
    "webreach.tools.read_pool",
    "webreach.providers.fetch.browser",
    "webreach.providers.fetch._browser",
)
"""Modules whose use starts a process or a server (webreach's own: the render pool's worker
processes, the read pool's and Chromium), matched as prefixes of a module's name."""

STARTER_NAMES = frozenset(
    {"create_subprocess_exec", "create_subprocess_shell", "async_playwright", "sync_playwright"}
)
"""Attributes that start one wherever they come from (``asyncio.create_subprocess_exec``)."""


SLOW_MARKS: list[pytest.Mark] = []
"""Marks whose tests start a process some other way (a harness's Chromium): see
:func:`starts_a_process`."""


def starts_a_process(mark: pytest.MarkDecorator) -> pytest.MarkDecorator:
    """Declare that the tests carrying ``mark`` start a process, so they are slow."""
    SLOW_MARKS.append(mark.mark)
    return mark


def _ours(value: object) -> bool:
    """Defined in a file under tests/: followed further; libraries are judged by name only."""
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    where = getattr(module, "__file__", None)
    return where is not None and Path(where).resolve().is_relative_to(TESTS)


def _starter(value: object) -> bool:
    if isinstance(value, types.ModuleType):
        name = value.__name__
    else:
        name = getattr(value, "__module__", None) or ""
    return name.startswith(STARTER_MODULES)


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _codes(constant)


class Judge:
    """Whether a callable of the tests starts a process or a server, remembered per object."""

    def __init__(self) -> None:
        self._known: dict[int, bool] = {}

    def starts(self, value: object) -> bool:
        key = id(value)
        if key not in self._known:
            self._known[key] = False  # a cycle is judged by its other paths
            self._known[key] = self._judge(value)
        return self._known[key]

    def _judge(self, value: object) -> bool:
        if isinstance(value, type):
            return _ours(value) and any(
                self.starts(member) for member in vars(value).values() if _function(member)
            )
        function = _function(value)
        if function is None:
            return False
        for code in _codes(function.__code__):
            if STARTER_NAMES.intersection(code.co_names):
                return True
            for name in code.co_names:
                found = function.__globals__.get(name)
                if found is None:
                    continue
                if _starter(found) or (_ours(found) and self.starts(found)):
                    return True
        return False


def _function(value: object) -> types.FunctionType | None:
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    if isinstance(value, property):
        value = value.fget
    value = inspect.unwrap(value) if callable(value) else value
    return value if isinstance(value, types.FunctionType) else None


def mark_slow(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every collected test that starts a process or a server."""
    judge = Judge()
    slow = pytest.mark.slow
    for item in items:
        if item.get_closest_marker("slow") is not None:
            continue
        if isinstance(item, pytest.Function) and _starts(judge, item):
            item.add_marker(slow)


def _starts(judge: Judge, item: pytest.Function) -> bool:
    if judge.starts(item.function) or any(mark in SLOW_MARKS for mark in item.iter_markers()):
        return True
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        for definition in definitions:
            if _ours(definition.func) and judge.starts(definition.func):
                return True
    return False
