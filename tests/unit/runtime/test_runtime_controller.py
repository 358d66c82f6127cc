"""Controller runner: success, errors with backoff, requeue requests, resync — on a FakeClock."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest

from spa.kube import ApiUnavailable, DeadlinePassed, TooManyRequests, error_from_status
from spa.runtime import Controller, FakeClock, Result, WorkQueue

START = 2_000_000.0


class Recorder:
    """A reconcile function scripted per call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float]] = []
        self.outcomes: dict[str, list[Result | Exception | None]] = {}
        self.clock: FakeClock | None = None

    async def __call__(self, key: str) -> Result | None:
        assert self.clock is not None
        self.calls.append((key, self.clock.now()))
        script = self.outcomes.get(key) or [None]
        outcome = script.pop(0) if len(script) > 1 else script[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


@pytest.fixture
def setup() -> tuple[Controller, WorkQueue, FakeClock, Recorder]:
    clock = FakeClock(start=START)
    queue = WorkQueue(clock=clock, base_delay=1.0, max_delay=8.0, jitter=0.0, name="ctl-test")
    reconcile = Recorder()
    reconcile.clock = clock
    keys = ["ns/a", "ns/b"]
    controller = Controller(
        name="ctl-test",
        queue=queue,
        reconcile=reconcile,
        workers=2,
        list_keys=lambda: keys,
        resync_period=600,
        clock=clock,
    )
    return controller, queue, clock, reconcile


async def run_for_a_moment(controller: Controller) -> asyncio.Task[None]:
    task = asyncio.create_task(controller.run())
    for _ in range(10):
        await asyncio.sleep(0)
    return task


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def stop(controller: Controller, task: asyncio.Task[None]) -> None:
    controller.queue.shutdown()
    await asyncio.wait_for(task, timeout=2)


async def test_success_with_requeue_at_acts_exactly_at_that_instant(setup) -> None:  # type: ignore[no-untyped-def]
    controller, queue, clock, reconcile = setup
    reconcile.outcomes["ns/a"] = [Result(requeue_at=START + 300), Result()]
    task = await run_for_a_moment(controller)
    queue.add("ns/a")
    await settle()
    assert reconcile.calls == [("ns/a", START)]
    clock.set(START + 299.999)
    await settle()
    assert len(reconcile.calls) == 1
    clock.set(START + 300)
    await settle()
    assert reconcile.calls[-1] == ("ns/a", START + 300)
    await stop(controller, task)


async def test_requeue_after_and_earlier_of_both(setup) -> None:  # type: ignore[no-untyped-def]
    controller, queue, _clock, reconcile = setup
    reconcile.outcomes["ns/a"] = [Result(requeue_at=START + 100, requeue_after=30), Result()]
    task = await run_for_a_moment(controller)
    queue.add("ns/a")
    await settle()
    assert queue.waiting_until("ns/a") == START + 30
    await stop(controller, task)


async def test_back_of_queue_runs_the_key_again_now_after_every_key_already_queued() -> None:
    # The SPA reconciler's HPA-first order at a boundary: a reconcile that wrote an HPA yields
    # to every other key due, then writes its statuses. Without the request, "ns/a" would not
    # run again; with a backoff or a delay, not at START.
    clock = FakeClock(start=START)
    queue = WorkQueue(clock=clock, base_delay=1.0, max_delay=8.0, jitter=0.0, name="ctl-back")
    reconcile = Recorder()
    reconcile.clock = clock
    reconcile.outcomes["ns/a"] = [Result(back_of_queue=True), Result()]
    controller = Controller(name="ctl-back", queue=queue, reconcile=reconcile, workers=1)
    for key in ("ns/a", "ns/b", "ns/c"):
        queue.add(key)
    task = await run_for_a_moment(controller)
    await settle()
    assert reconcile.calls == [(key, START) for key in ("ns/a", "ns/b", "ns/c", "ns/a")]
    assert queue.num_requeues("ns/a") == 0
    assert queue.waiting_until("ns/a") is None
    await stop(controller, task)


def test_back_of_queue_combines_with_no_other_request() -> None:
    for other in ({"requeue_at": START}, {"requeue_after": 0.0}, {"retry": True}):
        with pytest.raises(ValueError, match="back_of_queue"):
            Result(back_of_queue=True, **other)


async def test_errors_back_off_exponentially_then_success_forgets(setup, caplog) -> None:  # type: ignore[no-untyped-def]
    controller, queue, clock, reconcile = setup
    boom = RuntimeError("boom")
    reconcile.outcomes["ns/a"] = [boom, boom, boom, Result(), boom]
    task = await run_for_a_moment(controller)
    with caplog.at_level(logging.ERROR):
        queue.add("ns/a")
        await settle()
        for expected_delay in (1.0, 2.0, 4.0):
            due = queue.waiting_until("ns/a")
            assert due == clock.now() + expected_delay
            clock.set(due)
            await settle()
    assert len(reconcile.calls) == 4
    assert queue.num_requeues("ns/a") == 0  # the success forgot the failures
    assert queue.waiting_until("ns/a") is None
    # The failure was logged with the object's namespace and name.
    failures = [r for r in caplog.records if "reconcile failed" in r.getMessage()]
    assert len(failures) == 3
    assert failures[0].spa_context["namespace"] == "ns"
    assert failures[0].spa_context["name"] == "a"
    # A new failure starts again at the base delay.
    queue.add("ns/a")
    await settle()
    assert queue.waiting_until("ns/a") == clock.now() + 1.0
    await stop(controller, task)


def _status(code: int, message: str) -> Exception:
    return error_from_status(code, {"kind": "Status", "code": code, "message": message})


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (_status(409, "the object has been modified"), "409 : the object has been modified"),
        (_status(404, 'horizontalpodautoscalers "web" not found'), "404 : "),
        (_status(410, "too old resource version"), "410 : too old"),
        (_status(403, "RBAC says no"), "403 : RBAC says no"),
        (_status(422, "spec.maxReplicas: Invalid value"), "422 : spec.maxReplicas"),
        (_status(429, "slow down"), "429 : slow down"),
        (error_from_status(500, b"<html>\ninternal\n</html>"), "500 : <html> internal </html>"),
        (ApiUnavailable("GET /apis: connection refused"), "GET /apis: connection refused"),
        (DeadlinePassed("the deadline passed"), "the deadline passed"),
    ],
    ids=["409", "404", "410", "403", "422", "429", "500", "unreachable", "deadline"],
)
async def test_an_answer_of_the_api_server_is_one_line_without_a_traceback(
    setup: tuple[Controller, WorkQueue, FakeClock, Recorder],
    caplog: pytest.LogCaptureFixture,
    error: Exception,
    said: str,
) -> None:
    """What the API server may answer (docs/operations.md, "Logs") is not a bug: one warning
    line that says it, and the key's backoff; a traceback only for a bug (below)."""
    controller, queue, clock, reconcile = setup
    reconcile.outcomes["ns/a"] = [error, Result()]
    task = await run_for_a_moment(controller)
    queue.add("ns/a")
    await settle()
    (line,) = [r for r in caplog.records if "reconcile failed" in r.getMessage()]
    assert line.levelno == logging.WARNING
    assert line.exc_info is None
    assert said in line.getMessage()
    assert "\n" not in line.getMessage()
    assert line.getMessage().endswith("; retry 1 with backoff")
    assert queue.waiting_until("ns/a") == clock.now() + 1.0
    await stop(controller, task)


async def test_a_bug_is_logged_with_its_traceback(
    setup: tuple[Controller, WorkQueue, FakeClock, Recorder], caplog: pytest.LogCaptureFixture
) -> None:
    controller, queue, _clock, reconcile = setup
    reconcile.outcomes["ns/a"] = [KeyError("spec"), Result()]
    task = await run_for_a_moment(controller)
    queue.add("ns/a")
    await settle()
    (line,) = [r for r in caplog.records if "reconcile failed" in r.getMessage()]
    assert line.levelno == logging.ERROR
    assert line.exc_info is not None
    await stop(controller, task)


async def test_periodic_resync_queues_every_key(setup) -> None:  # type: ignore[no-untyped-def]
    controller, _queue, clock, reconcile = setup
    task = await run_for_a_moment(controller)
    assert reconcile.calls == []
    clock.advance(600)
    await settle()
    assert sorted(k for k, _ in reconcile.calls) == ["ns/a", "ns/b"]
    clock.advance(600)
    await settle()
    assert len(reconcile.calls) == 4
    await stop(controller, task)


async def test_cancelling_run_shuts_the_queue_down(setup) -> None:  # type: ignore[no-untyped-def]
    controller, queue, _clock, _reconcile = setup
    task = await run_for_a_moment(controller)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert queue.shutting_down


async def test_one_key_is_never_reconciled_twice_at_once() -> None:
    clock = FakeClock(start=START)
    queue = WorkQueue(clock=clock, jitter=0.0)
    running: set[str] = set()
    overlaps = 0
    calls = 0
    release = asyncio.Event()

    async def reconcile(key: str) -> Result:
        nonlocal overlaps, calls
        calls += 1
        if key in running:
            overlaps += 1
        running.add(key)
        await release.wait()
        running.discard(key)
        return Result()

    controller = Controller(name="overlap", queue=queue, reconcile=reconcile, workers=4)
    task = asyncio.create_task(controller.run())
    await settle()
    queue.add("ns/a")
    await settle()
    queue.add("ns/a")  # arrives while ns/a is being reconciled
    await settle()
    assert calls == 1
    release.set()
    await settle()
    assert calls == 2  # re-run after the first finished, not alongside it
    assert overlaps == 0
    queue.shutdown()
    await asyncio.wait_for(task, timeout=2)


async def test_keys_that_need_no_request_leave_the_loop_to_others_between_them() -> None:
    """The Lease's renewal, the watches and the probes run on the same event loop: a start on
    thousands of keys in sync, none of which sends a request, must not hold it until the
    last one (a shard of 5,000 SPAs lost its Lease so)."""
    queue = WorkQueue(clock=FakeClock(start=START), jitter=0.0)
    done = 0

    async def reconcile(key: str) -> Result:
        nonlocal done
        done += 1  # in sync: nothing to write, nothing awaited that suspends
        return Result()

    for index in range(1000):
        queue.add(f"ns/{index}")
    seen: list[int] = []

    async def renewal() -> None:
        while done < 1000:
            seen.append(done)
            await asyncio.sleep(0)

    controller = Controller(name="busy", queue=queue, reconcile=reconcile, workers=2)
    other = asyncio.create_task(renewal())
    task = asyncio.create_task(controller.run())
    await asyncio.wait_for(other, timeout=5)
    # The other task ran between keys all along, not only after the last one.
    assert len(seen) > 100
    assert seen[1] < 10
    queue.shutdown()
    await asyncio.wait_for(task, timeout=2)


async def test_too_many_requests_waits_at_least_the_servers_retry_after(setup) -> None:  # type: ignore[no-untyped-def]
    controller, queue, clock, reconcile = setup
    throttled = TooManyRequests(429, "TooManyRequests", "slow down", retry_after=5.0)
    reconcile.outcomes["ns/a"] = [throttled, Result()]
    task = await run_for_a_moment(controller)
    queue.add("ns/a")
    await settle()
    # The backoff alone would retry after 1 s; the server asked for 5.
    assert queue.waiting_until("ns/a") == clock.now() + 5.0
    clock.advance(4.9)
    await settle()
    assert len(reconcile.calls) == 1
    clock.advance(0.1)
    await settle()
    assert len(reconcile.calls) == 2
    await stop(controller, task)


async def test_unreachable_api_parks_keys_until_the_probe_succeeds() -> None:
    clock = FakeClock(start=START)
    queue = WorkQueue(clock=clock, base_delay=1.0, max_delay=300.0, jitter=0.0, name="ctl-probe")
    reconcile = Recorder()
    reconcile.clock = clock
    down = ApiUnavailable("connection refused")
    reconcile.outcomes = {key: [down] * 8 + [Result()] for key in ("ns/a", "ns/b")}
    api_up = False
    probes: list[float] = []

    async def probe() -> None:
        probes.append(clock.now())
        if not api_up:
            raise ApiUnavailable("connection refused")

    controller = Controller(
        name="ctl-probe",
        queue=queue,
        reconcile=reconcile,
        workers=2,
        clock=clock,
        probe=probe,
        probe_backoff=(0.5, 4.0),
    )
    task = await run_for_a_moment(controller)
    queue.add("ns/a")
    queue.add("ns/b")
    await settle()
    assert len(reconcile.calls) == 2
    # A long outage: the keys do not back off on their own (they would wait minutes by now)...
    for _ in range(300):
        clock.advance(0.5)
        await settle()
    assert len(reconcile.calls) == 2
    assert queue.waiting_until("ns/a") is None
    # ...and one probe at most every 4 s is all the outage costs.
    assert 150 / 4.0 <= len(probes) <= 150 / 2.0 + 1
    assert all(b - a <= 4.0 + 1e-6 for a, b in itertools.pairwise(probes))
    # The API is back: within one probe interval both keys are retried.
    api_up = True
    back = clock.now()
    while len(reconcile.calls) < 4:
        clock.advance(0.25)
        await settle()
        assert clock.now() - back <= 4.0
    assert sorted(key for key, _ in reconcile.calls[2:]) == ["ns/a", "ns/b"]
    await stop(controller, task)


async def test_retry_results_back_off_but_never_past_a_requested_instant(setup) -> None:  # type: ignore[no-untyped-def]
    controller, queue, clock, reconcile = setup
    retry = Result(retry=True)
    due_soon = Result(requeue_at=START + 5.5, retry=True)
    reconcile.outcomes["ns/a"] = [retry, retry, due_soon, Result()]
    task = await run_for_a_moment(controller)
    queue.add("ns/a")
    await settle()
    # A successful reconcile that asks to retry backs off exactly as a failed one would.
    for expected_delay in (1.0, 2.0):
        due = queue.waiting_until("ns/a")
        assert due == clock.now() + expected_delay
        clock.set(due)
        await settle()
    # The third (at START + 3) backs off 4 s, but its transition at START + 5.5 is not delayed.
    assert queue.waiting_until("ns/a") == START + 5.5
    assert queue.num_requeues("ns/a") == 3
    clock.set(START + 5.5)
    await settle()
    assert len(reconcile.calls) == 4
    assert queue.num_requeues("ns/a") == 0  # a plain result resets the backoff
    await stop(controller, task)


async def test_a_stuck_reconcile_is_cancelled_at_the_timeout_and_retried_with_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock(start=START)
    queue = WorkQueue(clock=clock, base_delay=1.0, max_delay=8.0, jitter=0.0)
    cancelled = asyncio.Event()
    retried = asyncio.Event()
    calls = 0

    async def reconcile(key: str) -> Result:
        nonlocal calls
        calls += 1
        if calls == 2:
            retried.set()
        try:
            await asyncio.Event().wait()  # a request that never answers
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return Result()

    controller = Controller(
        name="stuck", queue=queue, reconcile=reconcile, workers=1, reconcile_timeout=0.05
    )
    task = asyncio.create_task(controller.run())
    queue.add("ns/a")
    await asyncio.wait_for(cancelled.wait(), timeout=5)
    await settle()
    assert calls == 1
    assert queue.waiting_until("ns/a") == clock.now() + 1.0  # the key's backoff, not lost
    # A request that never answered is no bug of ours: one line, no traceback.
    (line,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.getMessage() == (
        "reconcile took longer than 0.05s and was cancelled; retry 1 with backoff"
    )
    assert line.exc_info is None
    clock.advance(1.0)
    await asyncio.wait_for(retried.wait(), timeout=5)
    queue.shutdown()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
