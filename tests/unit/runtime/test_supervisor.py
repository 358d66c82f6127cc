"""The supervisor on a fake clock: a failed or ended task is restarted after the backoff, is
reported down meanwhile and counted, and nothing restarts once the supervisor is closed."""

from __future__ import annotations

import asyncio
import logging

import pytest
from prometheus_client import REGISTRY

from spa.kube import error_from_status
from spa.runtime import FakeClock, Supervisor


def restarts(task: str) -> float:
    value = REGISTRY.get_sample_value("spa_task_restarts_total", {"task": task})
    return value or 0.0


class Crashing:
    """A task that fails `failures` times, then runs until cancelled."""

    def __init__(self, failures: int, *, ends: bool = False) -> None:
        self.failures = failures
        self.ends = ends
        self.starts = 0
        self.running = asyncio.Event()

    async def run(self) -> None:
        self.starts += 1
        await asyncio.sleep(0)
        if self.starts <= self.failures:
            if self.ends:
                return
            raise RuntimeError(f"crash {self.starts}")
        self.running.set()
        await asyncio.Event().wait()


async def test_a_failed_task_is_down_until_restarted_after_the_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    supervisor = Supervisor(clock=clock, initial=1.0, maximum=60.0)
    task = Crashing(1)
    before = restarts("informer a")
    supervisor.start("informer a", task.run)
    await clock.settle()
    assert task.starts == 1
    assert not supervisor.healthy
    assert supervisor.down == {"informer a"}
    assert restarts("informer a") == before + 1
    assert "informer a failed" in caplog.text
    assert "RuntimeError: crash 1" in caplog.text
    clock.advance(1.0)  # the first delay is at most `initial`
    await clock.settle()
    assert task.starts == 2
    assert task.running.is_set()
    assert supervisor.healthy
    await supervisor.close()


async def test_a_task_that_ends_unasked_is_restarted_too(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    supervisor = Supervisor(clock=clock, initial=1.0)
    task = Crashing(1, ends=True)
    supervisor.start("informer b", task.run)
    await clock.settle()
    assert not supervisor.healthy
    assert "informer b ended without being stopped" in caplog.text
    clock.advance(1.0)
    await clock.settle()
    assert task.running.is_set()
    assert supervisor.healthy
    await supervisor.close()


async def test_quick_failures_back_off_exponentially() -> None:
    clock = FakeClock()
    supervisor = Supervisor(clock=clock, initial=1.0, maximum=60.0)
    task = Crashing(4)
    supervisor.start("informer c", task.run)
    await clock.settle()
    waited = []
    while not task.running.is_set():
        due = clock.next_timer_at()
        assert due is not None
        waited.append(due - clock.now())
        clock.set(due)
        await clock.settle()
    # Nominal 1, 2, 4, 8 s, each less up to half of itself (the runtime's one jitter rule).
    assert len(waited) == 4
    for attempt, delay in enumerate(waited):
        assert 2**attempt * 0.5 <= delay <= 2**attempt
    await supervisor.close()


async def test_nothing_restarts_after_close() -> None:
    clock = FakeClock()
    supervisor = Supervisor(clock=clock)
    task = Crashing(0)
    supervisor.start("informer d", task.run)
    await clock.settle()
    assert task.running.is_set()
    await supervisor.close()
    clock.advance(3600)
    await clock.settle()
    assert task.starts == 1
    assert supervisor.healthy


async def test_names_are_unique() -> None:
    supervisor = Supervisor(clock=FakeClock())
    supervisor.start("x", Crashing(0).run)
    with pytest.raises(ValueError, match="already supervised"):
        supervisor.start("x", Crashing(0).run)
    await supervisor.close()


async def test_an_answer_of_the_api_server_is_one_line_a_bug_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    supervisor = Supervisor(clock=clock, initial=1.0, maximum=60.0)
    refused = error_from_status(403, {"kind": "Status", "code": 403, "message": "RBAC says no"})

    async def forbidden() -> None:
        raise refused

    async def buggy() -> None:
        raise KeyError("metadata")

    supervisor.start("informer a", forbidden)
    supervisor.start("informer b", buggy)
    await clock.settle()
    failed = {r.getMessage(): r for r in caplog.records if r.levelno >= logging.ERROR}
    assert failed["informer a failed: 403 : RBAC says no"].exc_info is None
    assert failed["informer b failed"].exc_info is not None
    await supervisor.close()
