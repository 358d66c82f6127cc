"""The event loop `spa run` runs on (`--event-loop`): asyncio's by default; uvloop's only
when asked for.

uvloop executes fewer instructions per API request and per watch event (docs/performance.md,
"2026-11-26: uvloop (issue 24)"), but the soak found it unsafe: after a connection reset or an
API server restart, a new connection fails with "RuntimeError: File descriptor N is used by
transport", a known uvloop bug with aiohttp's connects (docs/reliability.md, "Soak", the run
of 2026-11-26 evening), which escapes the client and ends the process. So the default is
asyncio's loop, and `uvloop` stays a choice for measuring, not for production. uvloop is a
dependency on Linux only (setup.cfg); everything above the loop is the same code, the
controller using only asyncio's public API.

Kept apart from the controller, as spa/controller/options.py is, so that `spa --help` can list
the choices without importing the Kubernetes client; uvloop is imported only when `spa run`
chooses its loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Literal

__all__ = ["EVENT_LOOPS", "EventLoop", "EventLoopChoice", "EventLoopUnavailable", "event_loop"]

EventLoopChoice = Literal["asyncio", "uvloop"]
EVENT_LOOPS: tuple[EventLoopChoice, ...] = ("asyncio", "uvloop")


class EventLoopUnavailable(Exception):
    """`--event-loop uvloop` where uvloop cannot be imported."""


@dataclass(frozen=True)
class EventLoop:
    """The loop chosen: its name (and version) for the log, and the factory to hand to
    :class:`asyncio.Runner` (None: asyncio's default loop)."""

    name: str
    factory: Callable[[], asyncio.AbstractEventLoop] | None


ASYNCIO = EventLoop("asyncio", None)


def event_loop(choice: EventLoopChoice) -> EventLoop:
    """The loop `choice` names. Raises :class:`EventLoopUnavailable` for `uvloop` when it
    cannot be imported."""
    if choice == "asyncio":
        return ASYNCIO
    try:
        import uvloop
    except ImportError as error:
        raise EventLoopUnavailable(f"--event-loop uvloop: {error}") from error
    return EventLoop(f"uvloop {metadata.version('uvloop')}", uvloop.new_event_loop)
