"""`spa run --event-loop`: asyncio's loop by default, even where uvloop is installed (a
dependency on Linux, setup.cfg, that the soak found unsafe), uvloop's only when asked for, and
a start refused in one log line when uvloop is asked for and missing (docs/operations.md).
The loop named in the log at start is the loop that runs: tests/integration/test_spa_run.py
reads that line from the real process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest

from spa.cli import build_parser
from spa.controller.eventloop import EventLoopUnavailable, event_loop
from spa.controller.exitcodes import EXIT_CONFIG, EXIT_USAGE

REPO = Path(__file__).resolve().parents[3]
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="uvloop is locked for Linux only")


def running_loop(factory: Callable[[], asyncio.AbstractEventLoop] | None) -> str:
    """The class of the loop a coroutine runs on under asyncio.Runner(loop_factory=factory)."""

    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__

    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(which())


@linux_only
def test_uvloop_runs_on_uvloop_when_asked_for() -> None:
    loop = event_loop("uvloop")
    assert loop.name == f"uvloop {metadata.version('uvloop')}"
    assert running_loop(loop.factory) == "uvloop"


def test_the_default_is_asyncio_even_with_uvloop_installed() -> None:
    """uvloop can end the process after a connection reset (docs/reliability.md, "Soak"): it
    is never chosen unless asked for."""
    assert build_parser().parse_args(["run"]).event_loop == "asyncio"


def test_asyncio_is_asyncio_even_with_uvloop_installed() -> None:
    loop = event_loop("asyncio")
    assert (loop.name, loop.factory) == ("asyncio", None)
    assert running_loop(loop.factory).startswith("asyncio.")


def test_uvloop_asked_for_and_missing_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # what `import uvloop` of a missing one does
    with pytest.raises(EventLoopUnavailable, match="--event-loop uvloop"):
        event_loop("uvloop")


def spa_run(*arguments: str, hide_uvloop: bool = False) -> tuple[int, list[str]]:
    """`spa run ARGUMENTS` in a fresh interpreter (its logging is process-wide), with `import
    uvloop` failing if `hide_uvloop`; the exit status and the lines it printed."""
    code = (
        "import sys\n"
        + ("sys.modules['uvloop'] = None\n" if hide_uvloop else "")
        + "from spa.cli import main\n"
        + f"raise SystemExit(main(['run', *{list(arguments)!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    return done.returncode, (done.stdout + done.stderr).splitlines()


def test_spa_run_without_the_loop_it_asks_for_exits_with_one_line() -> None:
    status, lines = spa_run(
        "--event-loop", "uvloop", "--kubeconfig", "/nonexistent", hide_uvloop=True
    )
    assert status == EXIT_USAGE
    assert len(lines) == 1, lines
    entry = json.loads(lines[0])
    assert entry["level"] == "error"
    assert entry["exit_status"] == EXIT_USAGE
    assert entry["msg"].startswith("cannot start: --event-loop uvloop: ")


@pytest.mark.parametrize("choice", ["asyncio", pytest.param("uvloop", marks=linux_only)])
def test_spa_run_on_either_loop_reaches_its_startup_checks(choice: str) -> None:
    """The loop is chosen before the client connects, and its name is not a line of its own:
    a failed start is still one error line."""
    status, lines = spa_run("--event-loop", choice, "--kubeconfig", "/nonexistent")
    assert status == EXIT_CONFIG
    assert len(lines) == 1, lines
    assert json.loads(lines[0])["exit_status"] == EXIT_CONFIG
