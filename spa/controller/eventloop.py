"""The event loop `spa run` runs on (`--event-loop`): uvloop's where it is installed, which
executes fewer instructions per API request and per watch event than asyncio's own loop
(docs/performance.md, "2026-11-26: uvloop (issue 24)"), else asyncio's.

uvloop is a dependency on Linux only (setup.cfg), where the controller runs; elsewhere (a
developer's macOS) `auto` falls back to asyncio's loop. `--event-loop asyncio` stays for a
problem that only one of the two loops shows: everything above the loop is the same code, the
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

EventLoopChoice = Literal["auto", "asyncio", "uvloop"]
EVENT_LOOPS: tuple[EventLoopChoice, ...] = ("auto", "asyncio", "uvloop")


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
    """The loop `choice` names; `auto` is uvloop's if it can be imported, else asyncio's.
    Raises :class:`EventLoopUnavailable` for `uvloop` when it cannot be imported."""
    if choice == "asyncio":
        return ASYNCIO
    try:
        import uvloop
    except ImportError as error:
        if choice == "uvloop":
            raise EventLoopUnavailable(f"--event-loop uvloop: {error}") from error
        return ASYNCIO
    return EventLoop(f"uvloop {metadata.version('uvloop')}", uvloop.new_event_loop)
