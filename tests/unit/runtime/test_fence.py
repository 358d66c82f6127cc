"""The write fence (spa/runtime/fence.py) with the client's deadline (spa.kube.deadline): a
write runs under what is left of the renew deadline, nested deadlines keep the earliest, a
closed fence sends nothing. The real API server's side is in
tests/integration/test_runtime_kube_client.py."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from spa.kube import DeadlinePassed, deadline
from spa.kube.client import _within_deadline
from spa.runtime import NotLeader, may_write, unfenced, write_fenced

NO_TIMEOUT = aiohttp.ClientTimeout(total=30)


def bounded(seconds: float | None) -> tuple[dict[str, str | int] | None, float | None]:
    """The query and total timeout a request sent now gets."""
    if seconds is None:
        query, timeouts = _within_deadline("PATCH", "/x", {"fieldManager": "spa"}, NO_TIMEOUT)
    else:
        with deadline(seconds):
            query, timeouts = _within_deadline("PATCH", "/x", {"fieldManager": "spa"}, NO_TIMEOUT)
    return (None if query is None else dict(query)), timeouts.total


def test_without_a_deadline_a_request_is_unchanged() -> None:
    assert bounded(None) == ({"fieldManager": "spa"}, 30)


def test_a_deadline_bounds_the_wait_and_tells_the_server() -> None:
    query, total = bounded(4.0)
    assert query is not None
    assert query["fieldManager"] == "spa"
    assert total is not None
    assert 3.9 < total <= 4.0
    # Whole milliseconds in Go's duration syntax, never more than is left.
    timeout = str(query["timeout"])
    assert timeout.endswith("s")
    assert 3.9 < float(timeout[:-1]) <= total


def test_a_later_request_timeout_does_not_extend_the_deadline_nor_an_earlier_one_shorten_it() -> (
    None
):
    with deadline(2.0):
        _, timeouts = _within_deadline("GET", "/x", None, aiohttp.ClientTimeout(total=1.0))
    assert timeouts.total == 1.0
    with deadline(2.0), deadline(60.0):  # nested: the earliest wins
        query, timeouts = _within_deadline("GET", "/x", None, NO_TIMEOUT)
    assert timeouts.total is not None
    assert timeouts.total <= 2.0
    assert query is not None
    assert float(str(query["timeout"])[:-1]) <= 2.0


def test_a_request_whose_deadline_has_passed_is_not_sent() -> None:
    with deadline(0.01):
        time.sleep(0.02)
        with pytest.raises(DeadlinePassed, match="PATCH /x: not sent"):
            _within_deadline("PATCH", "/x", None, NO_TIMEOUT)


async def test_write_fenced_runs_the_call_under_what_the_fence_leaves() -> None:
    seen: list[float | None] = []

    async def call() -> str:
        _, timeouts = _within_deadline("PATCH", "/x", None, NO_TIMEOUT)
        seen.append(timeouts.total)
        return "written"

    assert await write_fenced(lambda: 3.0, call) == "written"
    assert await write_fenced(unfenced, call) == "written"
    assert seen[0] is not None
    assert 2.9 < seen[0] <= 3.0
    assert seen[1] == 30


async def test_a_closed_fence_sends_nothing_and_one_that_closes_before_sending_is_not_leader() -> (
    None
):
    calls: list[str] = []

    async def call() -> None:
        calls.append("called")

    with pytest.raises(NotLeader):
        await write_fenced(lambda: 0.0, call)
    assert calls == []
    assert not may_write(lambda: 0.0)
    assert may_write(lambda: 0.5)
    assert may_write(unfenced)

    async def queued_too_long() -> None:
        await asyncio.sleep(0.05)  # behind the rate limiter, say
        _within_deadline("PATCH", "/x", None, NO_TIMEOUT)

    with pytest.raises(NotLeader, match="renew deadline passed before the write was sent"):
        await write_fenced(lambda: 0.01, queued_too_long)


async def test_the_deadline_follows_the_task_not_the_process() -> None:
    """A context variable: another task's requests (a watch, say) are not bounded by it."""
    other: list[float | None] = []

    async def elsewhere() -> None:
        _, timeouts = _within_deadline("GET", "/x", None, NO_TIMEOUT)
        other.append(timeouts.total)

    task = asyncio.get_running_loop().create_task(elsewhere())
    with deadline(1.0):
        await task
    assert other == [30]
