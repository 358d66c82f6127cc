"""FakeClock and SystemClock: timers fire in order, at their time, and never early."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from spa.runtime import Clock, FakeClock, SystemClock
from spa.runtime import clock as clock_module

START = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class _InjectedTime:
    """`time` as spa.runtime.clock reads it: a wall and a monotonic clock that move only when
    the test moves them, so that a SystemClock can be driven like a FakeClock."""

    def __init__(self, wall: float) -> None:
        self.wall = wall
        self.elapsed = 0.0

    def time(self) -> float:
        return self.wall

    def monotonic(self) -> float:
        return self.elapsed

    def set(self, when: float) -> None:
        self.elapsed += when - self.wall
        self.wall = when

    def step(self, seconds: float) -> None:
        """An NTP step: the wall clock jumps, no time elapses."""
        self.wall += seconds


@pytest.fixture(params=["FakeClock", "SystemClock"])
def clock_and_setter(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> tuple[Clock, Callable[[float], None]]:
    """Each clock, with the function that moves its time to an instant."""
    if request.param == "FakeClock":
        fake = FakeClock(start=START)
        return fake, fake.set
    injected = _InjectedTime(START)
    monkeypatch.setattr(clock_module, "time", injected)
    return SystemClock(), injected.set


async def test_both_clocks_read_the_time_given_and_fire_nothing_before_it(
    clock_and_setter: tuple[Clock, Callable[[float], None]],
) -> None:
    # One contract (spa/runtime/clock.py, Clock) for the clock of the tests and the real one:
    # now() and monotonic() are the time given, a timer fires once now() >= its instant and in
    # time order, sleep_until wakes then, and returns at once for an instant already reached.
    clock, set_time = clock_and_setter
    assert clock.now() == START
    began = clock.monotonic()
    fired: list[tuple[str, float]] = []
    done = {"early": asyncio.Event(), "late": asyncio.Event()}

    def record(name: str) -> Callable[[], None]:
        def callback() -> None:
            fired.append((name, clock.now()))
            done[name].set()

        return callback

    clock.call_at(START + 0.02, record("late"))
    clock.call_at(START + 0.01, record("early"))
    sleeper = asyncio.create_task(clock.sleep_until(START + 0.01))
    # Longer than the event loop's delays the SystemClock armed (10 and 20 ms): its timers came
    # up, found the wall clock short of their instants, and waited again.
    await asyncio.sleep(0.05)
    assert fired == []
    assert not sleeper.done()

    set_time(START + 0.015)
    await asyncio.wait_for(done["early"].wait(), timeout=2)
    await asyncio.wait_for(sleeper, timeout=2)
    assert [name for name, _ in fired] == ["early"]
    assert START + 0.01 <= fired[0][1] <= START + 0.015

    set_time(START + 0.03)
    await asyncio.wait_for(done["late"].wait(), timeout=2)
    assert [name for name, _ in fired] == ["early", "late"]
    assert START + 0.02 <= fired[1][1] <= START + 0.03
    assert clock.now() == START + 0.03
    assert clock.monotonic() - began == pytest.approx(0.03, abs=1e-6)

    await asyncio.wait_for(clock.sleep_until(START + 0.03), timeout=1)
    await asyncio.wait_for(clock.sleep(0), timeout=1)


async def test_system_clock_timer_waits_out_a_wall_clock_step_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # spa/runtime/clock.py: a step makes a timer late by at most one re-arm, never early; the
    # monotonic clock, for elapsed time, does not step with the wall clock.
    injected = _InjectedTime(START)
    monkeypatch.setattr(clock_module, "time", injected)
    clock = SystemClock()
    fired: list[float] = []
    done = asyncio.Event()

    def callback() -> None:
        fired.append(clock.now())
        done.set()

    clock.call_at(START + 0.01, callback)
    injected.set(START + 0.005)
    injected.step(-0.02)
    assert clock.now() == pytest.approx(START - 0.015, abs=1e-6)
    assert clock.monotonic() == pytest.approx(0.005, abs=1e-6)
    # Past the loop's delay of 10 ms: the timer came up 15 ms short of its instant and waited again.
    await asyncio.sleep(0.05)
    assert fired == []
    injected.set(START + 0.01)
    await asyncio.wait_for(done.wait(), timeout=2)
    assert fired == [START + 0.01]
    assert clock.monotonic() == pytest.approx(0.03, abs=1e-6)


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
