"""WorkQueue: client-go semantics, with time driven by a FakeClock (no real waiting)."""

from __future__ import annotations

import asyncio
import random

import pytest

from spa.runtime import FakeClock, QueueShutDown, WorkQueue
from spa.runtime.workqueue import DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY

START = 1_000_000.0


def make_queue(
    *, base_delay: float = DEFAULT_BASE_DELAY, max_delay: float = DEFAULT_MAX_DELAY
) -> tuple[WorkQueue, FakeClock]:
    """A queue on a fake clock, without jitter."""
    clock = FakeClock(start=START)
    queue = WorkQueue(
        clock=clock, jitter=0.0, name="test", base_delay=base_delay, max_delay=max_delay
    )
    return queue, clock


async def get_now(queue: WorkQueue) -> str:
    """get() that must not block: the key is supposed to be ready."""
    return await asyncio.wait_for(queue.get(), timeout=1)


async def assert_empty(queue: WorkQueue) -> None:
    assert len(queue) == 0
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(queue.get(), timeout=0.01)


async def test_duplicates_collapse() -> None:
    queue, _ = make_queue()
    for key in ("a", "b", "a", "a", "b"):
        queue.add(key)
    assert len(queue) == 2
    assert await get_now(queue) == "a"
    assert await get_now(queue) == "b"
    await assert_empty(queue)


async def test_key_added_while_processing_is_not_handed_out_until_done() -> None:
    queue, _ = make_queue()
    queue.add("a")
    assert await get_now(queue) == "a"
    queue.add("a")
    queue.add("a")
    # Another worker must not receive "a" while the first still processes it.
    await assert_empty(queue)
    queue.done("a")
    assert len(queue) == 1
    assert await get_now(queue) == "a"
    queue.done("a")
    await assert_empty(queue)


async def test_done_without_readd_does_not_requeue() -> None:
    queue, _ = make_queue()
    queue.add("a")
    await get_now(queue)
    queue.done("a")
    await assert_empty(queue)


async def test_workers_never_process_one_key_concurrently() -> None:
    queue, _ = make_queue()
    active: set[str] = set()
    overlaps: list[str] = []
    processed: list[str] = []
    rng = random.Random(7)

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            if key in active:
                overlaps.append(key)
            active.add(key)
            for _ in range(rng.randint(0, 3)):
                await asyncio.sleep(0)
            active.discard(key)
            processed.append(key)
            queue.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    adds = 0
    for round_ in range(50):
        for _ in range(rng.randint(1, 6)):  # bursts: several adds between two yields
            queue.add(f"k{(round_ + adds) % 3}")
            adds += 1
        await asyncio.sleep(0)
    for _ in range(1000):  # let the workers drain the queue
        if not len(queue) and not queue.processing:
            break
        await asyncio.sleep(0)
    queue.shutdown()
    await asyncio.gather(*workers)
    assert overlaps == []
    assert set(processed) == {"k0", "k1", "k2"}
    # Collapsing means fewer reconciles than adds.
    assert len(processed) < adds


async def test_blocked_get_wakes_on_add() -> None:
    queue, _ = make_queue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not getter.done()
    queue.add("x")
    assert await asyncio.wait_for(getter, timeout=1) == "x"


async def test_add_at_fires_in_time_order_on_the_clock() -> None:
    queue, clock = make_queue()
    queue.add_at("late", START + 20)
    queue.add_at("early", START + 10)
    queue.add_after("middle", 15)
    assert len(queue) == 0
    assert queue.waiting == 3
    clock.advance(9.9)
    await assert_empty(queue)
    clock.advance(0.1)
    assert await get_now(queue) == "early"
    clock.advance(10)
    assert await get_now(queue) == "middle"
    assert await get_now(queue) == "late"
    assert queue.waiting == 0


async def test_add_at_earlier_time_wins_and_later_time_is_ignored() -> None:
    queue, clock = make_queue()
    queue.add_at("k", START + 100)
    queue.add_at("k", START + 50)  # earlier: replaces
    queue.add_at("k", START + 70)  # later than pending: ignored
    assert queue.waiting_until("k") == START + 50
    clock.set(START + 50)
    assert await get_now(queue) == "k"
    queue.done("k")
    # The superseded 70 and 100 entries must not fire again.
    clock.set(START + 200)
    await assert_empty(queue)


async def test_add_at_in_the_past_is_immediate() -> None:
    queue, _ = make_queue()
    queue.add_at("k", START - 5)
    assert await get_now(queue) == "k"


async def test_delayed_key_fires_while_it_is_processing_is_requeued_after_done() -> None:
    queue, clock = make_queue()
    queue.add("k")
    assert await get_now(queue) == "k"
    queue.add_after("k", 5)
    clock.advance(5)
    await assert_empty(queue)
    queue.done("k")
    assert await get_now(queue) == "k"


async def test_rate_limited_backoff_doubles_up_to_the_cap_and_forget_resets() -> None:
    queue, clock = make_queue(base_delay=0.5, max_delay=4.0)
    delays = []
    for _ in range(6):
        queue.add_rate_limited("k")
        due = queue.waiting_until("k")
        assert due is not None
        delays.append(due - clock.now())
        clock.set(due)
        assert await get_now(queue) == "k"
        queue.done("k")
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert queue.num_requeues("k") == 6
    queue.forget("k")
    assert queue.num_requeues("k") == 0
    queue.add_rate_limited("k")
    assert queue.waiting_until("k") == clock.now() + 0.5


def test_backoff_jitter_stays_within_bounds() -> None:
    queue = WorkQueue(clock=FakeClock(), base_delay=1.0, max_delay=10.0, jitter=0.1)
    for failures in range(10):
        delay = queue.backoff_delay(failures)
        nominal = min(10.0, 2.0**failures)
        assert nominal * 0.9 <= delay <= nominal


async def test_backoff_is_per_key() -> None:
    queue, clock = make_queue(base_delay=1.0)
    queue.add_rate_limited("a")
    queue.add_rate_limited("a")
    queue.add_rate_limited("b")
    assert queue.waiting_until("a") == clock.now() + 1.0  # earlier pending time wins
    assert queue.num_requeues("a") == 2
    assert queue.num_requeues("b") == 1


async def test_shutdown_wakes_blocked_getters_and_ignores_later_adds() -> None:
    queue, clock = make_queue()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(0)
    queue.add_after("late", 10)
    queue.shutdown()
    for getter in getters:
        with pytest.raises(QueueShutDown):
            await asyncio.wait_for(getter, timeout=1)
    queue.add("x")
    clock.advance(20)
    assert len(queue) == 0
    with pytest.raises(QueueShutDown):
        await queue.get()


async def test_cancelled_getter_does_not_swallow_a_key() -> None:
    queue, _ = make_queue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("k")  # wakes the first getter...
    first.cancel()  # ...which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await asyncio.wait_for(second, timeout=1) == "k"
