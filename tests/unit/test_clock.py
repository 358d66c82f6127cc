"""FakeClock and SystemClock: timers fire in order, at their time, and never early."""

from __future__ import annotations

import asyncio
import time

import pytest

from spa.runtime import Clock, FakeClock, SystemClock


def test_both_clocks_satisfy_the_protocol() -> None:
    assert isinstance(FakeClock(), Clock)
    assert isinstance(SystemClock(), Clock)


def test_fake_clock_fires_due_timers_in_time_order_with_now_at_their_instant() -> None:
    clock = FakeClock(start=1000.0)
    fired: list[tuple[str, float]] = []
    clock.call_at(1030.0, lambda: fired.append(("late", clock.now())))
    clock.call_at(1010.0, lambda: fired.append(("early", clock.now())))
    clock.call_at(1100.0, lambda: fired.append(("future", clock.now())))
    clock.advance(50)
    assert fired == [("early", 1010.0), ("late", 1030.0)]
    assert clock.now() == 1050.0
    assert clock.pending_timers == 1
    assert clock.next_timer_at() == 1100.0


def test_fake_clock_cancelled_timer_does_not_fire() -> None:
    clock = FakeClock(start=0.0)
    fired: list[int] = []
    handle = clock.call_at(5.0, lambda: fired.append(1))
    handle.cancel()
    clock.advance(10)
    assert fired == []
    assert clock.pending_timers == 0


def test_fake_clock_timer_armed_by_a_timer_fires_within_the_same_advance() -> None:
    clock = FakeClock(start=0.0)
    fired: list[float] = []

    def first() -> None:
        fired.append(clock.now())
        clock.call_at(clock.now() + 5, lambda: fired.append(clock.now()))

    clock.call_at(5.0, first)
    clock.advance(12)
    assert fired == [5.0, 10.0]


def test_fake_clock_refuses_to_go_backwards() -> None:
    clock = FakeClock(start=100.0)
    with pytest.raises(ValueError, match="backwards"):
        clock.set(99.0)


async def test_fake_clock_sleepers_wake_only_when_time_reaches_them() -> None:
    clock = FakeClock(start=0.0)
    woke: list[str] = []

    async def sleeper(name: str, when: float) -> None:
        await clock.sleep_until(when)
        woke.append(name)

    tasks = [asyncio.create_task(sleeper("a", 10)), asyncio.create_task(sleeper("b", 20))]
    await clock.settle()
    assert woke == []
    clock.advance(9.999)
    await clock.settle()
    assert woke == []
    clock.advance(0.001)
    await clock.settle()
    assert woke == ["a"]
    clock.set(25)
    await clock.settle()
    assert woke == ["a", "b"]
    await asyncio.gather(*tasks)


async def test_fake_clock_sleep_in_the_past_returns_at_once() -> None:
    clock = FakeClock(start=50.0)
    await asyncio.wait_for(clock.sleep_until(10.0), timeout=1)
    await asyncio.wait_for(clock.sleep(0), timeout=1)


async def test_cancelled_sleep_leaves_no_timer_behind() -> None:
    clock = FakeClock(start=0.0)
    task = asyncio.create_task(clock.sleep(100))
    await clock.settle()
    assert clock.pending_timers == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert clock.pending_timers == 0


async def test_system_clock_timer_fires_not_before_its_time() -> None:
    clock = SystemClock()
    fired = asyncio.Event()
    fired_at: list[float] = []
    target = clock.now() + 0.05

    def callback() -> None:
        fired_at.append(time.time())
        fired.set()

    clock.call_at(target, callback)
    await asyncio.wait_for(fired.wait(), timeout=2)
    assert fired_at[0] >= target


async def test_system_clock_sleep_until() -> None:
    clock = SystemClock()
    target = clock.now() + 0.05
    await asyncio.wait_for(clock.sleep_until(target), timeout=2)
    assert clock.now() >= target
