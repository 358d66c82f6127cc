"""UrgentWrites (spa/runtime/urgent.py): the later writes wait for the urgent ones in flight,
and never longer than `longest`."""

from __future__ import annotations

import asyncio

import pytest

from spa.runtime import FakeClock, UrgentWrites


async def test_with_nothing_in_flight_the_later_writes_go_at_once() -> None:
    urgent = UrgentWrites(clock=FakeClock(), longest=10)
    assert await asyncio.wait_for(urgent.settled(), timeout=1) is True


async def test_the_later_writes_wait_until_the_last_urgent_write_is_done() -> None:
    urgent = UrgentWrites(clock=FakeClock(), longest=10)
    first_done, second_done = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def write(name: str, done: asyncio.Event) -> None:
        async with urgent.urgent():
            await done.wait()
            order.append(name)

    async def status() -> None:
        assert await urgent.settled() is True
        order.append("status")

    writes = [
        asyncio.create_task(write("hpa-1", first_done)),
        asyncio.create_task(write("hpa-2", second_done)),
    ]
    await asyncio.sleep(0)
    assert urgent.in_flight == 2
    waiting = asyncio.create_task(status())
    first_done.set()
    await asyncio.sleep(0.01)
    assert order == ["hpa-1"]  # one urgent write still in flight: the status waits
    second_done.set()
    await asyncio.wait_for(waiting, timeout=1)
    await asyncio.gather(*writes)
    assert order == ["hpa-1", "hpa-2", "status"]
    assert urgent.in_flight == 0


async def test_a_hanging_urgent_write_delays_the_others_by_longest_at_most() -> None:
    clock = FakeClock()
    urgent = UrgentWrites(clock=clock, longest=10)
    hang = asyncio.Event()

    async def write() -> None:
        async with urgent.urgent():
            await hang.wait()

    writing = asyncio.create_task(write())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(urgent.settled())
    await clock.settle()
    assert clock.pending_timers == 1  # the wait's bound is armed
    clock.advance(9.9)
    await asyncio.sleep(0.01)
    assert not waiting.done()
    clock.advance(0.2)
    assert await asyncio.wait_for(waiting, timeout=1) is False
    hang.set()
    await writing
    assert urgent.in_flight == 0


async def test_an_urgent_write_that_fails_is_no_longer_in_flight() -> None:
    urgent = UrgentWrites(clock=FakeClock(), longest=10)

    async def failing() -> None:
        async with urgent.urgent():
            raise RuntimeError("refused")

    with pytest.raises(RuntimeError):
        await failing()
    assert urgent.in_flight == 0
    assert await asyncio.wait_for(urgent.settled(), timeout=1) is True
