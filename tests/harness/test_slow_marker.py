"""The ``slow`` mark follows what a test does: starting a process or a server marks it, whatever
its module is called; a test that only computes is left in the fast subset."""

from __future__ import annotations

import asyncio
import subprocess

from cli_helpers import run_cli
from server_harness import LiveServer
from slow_marker import Judge


def _runs_a_command() -> None:
    run_cli("--help")


def _runs_a_child() -> None:
    subprocess.run(["true"], check=True)


async def _spawns() -> None:
    await asyncio.create_subprocess_exec("true")


def _serves() -> None:
    with LiveServer(object()):
        pass


def _computes() -> int:
    return sum(range(3))


def test_a_process_or_a_server_anywhere_down_the_calls_is_slow() -> None:
    judge = Judge()
    assert judge.starts(run_cli)
    assert judge.starts(_runs_a_command)  # through a helper of the tests
    assert judge.starts(_runs_a_child)
    assert judge.starts(_spawns)
    assert judge.starts(LiveServer)
    assert judge.starts(_serves)


def test_code_that_starts_nothing_is_not() -> None:
    assert not Judge().starts(_computes)
