"""LeaderElector logic on a FakeClock against an in-memory Lease with compare-and-swap.

The in-memory Lease only stands in for the storage semantics (resourceVersion CAS, 404, 409);
tests/integration/test_runtime_leaderelection.py runs the same story on the real API server.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from spa.kube import ApiUnavailable, Conflict, NotFound, Resource
from spa.runtime import FakeClock, LeaderElector
from spa.runtime.leaderelection import format_micro_time, parse_micro_time
from tests.client_double import UnexpectedRequests

START = 1_767_225_600.0  # 2026-01-01T00:00:00Z


class LeaseStore:
    """One Lease object with the API server's optimistic-concurrency rules."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.updates = 0

    def client(self) -> PartitionableClient:
        return PartitionableClient(self)

    def lease_metadata(self) -> dict[str, Any]:
        assert self.lease is not None
        return dict(self.lease["metadata"])


class PartitionableClient(UnexpectedRequests):
    def __init__(self, store: LeaseStore) -> None:
        self.store = store
        self.partitioned = False

    def _check(self) -> None:
        if self.partitioned:
            raise ApiUnavailable("partitioned")

    async def get(
        self, resource: Resource, namespace: str | None, name: str, **_: Any
    ) -> dict[str, Any]:
        self._check()
        if self.store.lease is None:
            raise NotFound(404, "NotFound", "no lease")
        return copy.deepcopy(self.store.lease)

    async def create(
        self, resource: Resource, namespace: str | None, body: Mapping[str, Any], **_: Any
    ) -> dict[str, Any]:
        self._check()
        if self.store.lease is not None:
            raise Conflict(409, "AlreadyExists", "exists")
        self.store.version += 1
        lease = self.store.lease = copy.deepcopy(dict(body))
        lease["metadata"]["resourceVersion"] = str(self.store.version)
        return copy.deepcopy(lease)

    async def update(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any],
        **_: Any,
    ) -> dict[str, Any]:
        self._check()
        assert self.store.lease is not None
        if body["metadata"]["resourceVersion"] != self.store.lease["metadata"]["resourceVersion"]:
            raise Conflict(409, "Conflict", "stale")
        self.store.version += 1
        self.store.updates += 1
        lease = self.store.lease = copy.deepcopy(dict(body))
        lease["metadata"]["resourceVersion"] = str(self.store.version)
        return copy.deepcopy(lease)


def holder(store: LeaseStore) -> str | None:
    return None if store.lease is None else store.lease["spec"].get("holderIdentity")


class SkewedClock:
    """A replica's view of the shared fake time: its wall clock off by `offset` (which a test
    may step), its monotonic clock and timers the shared ones."""

    def __init__(self, clock: FakeClock, offset: float) -> None:
        self.clock = clock
        self.offset = offset

    def now(self) -> float:
        return self.clock.now() + self.offset

    def monotonic(self) -> float:
        return self.clock.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> Any:
        return self.clock.call_at(when - self.offset, callback)

    async def sleep_until(self, when: float) -> None:
        await self.clock.sleep_until(when - self.offset)

    async def sleep(self, seconds: float) -> None:
        await self.clock.sleep(seconds)


class Candidate:
    def __init__(self, store: LeaseStore, clock: FakeClock | SkewedClock, identity: str) -> None:
        self.client = store.client()
        self.events: list[str] = []
        self.elector = LeaderElector(
            self.client,
            namespace="kube-system",
            name="spa-leader",
            identity=identity,
            clock=clock,
            on_started_leading=lambda: self.events.append("started"),
            on_stopped_leading=lambda: self.events.append("stopped"),
        )
        self.task = asyncio.create_task(self.elector.run())


async def run_for(clock: FakeClock, seconds: float, step: float = 0.25) -> None:
    """Advance the fake time in small steps, letting the electors act at each."""
    for _ in range(int(seconds / step)):
        clock.advance(step)
        await clock.settle(10)


def test_micro_time_round_trip() -> None:
    assert format_micro_time(START + 0.5) == "2026-01-01T00:00:00.500000Z"
    assert parse_micro_time("2026-01-01T00:00:00.500000Z") == START + 0.5
    assert parse_micro_time("2026-01-01T00:00:00Z") == START


def test_invalid_timing_is_rejected() -> None:
    with pytest.raises(ValueError, match="renew_deadline"):
        LeaderElector(
            UnexpectedRequests(),
            namespace="n",
            name="l",
            lease_duration=10,
            renew_deadline=10,
        )


async def test_exactly_one_leads_and_release_on_cancel_hands_over_at_once() -> None:
    clock = FakeClock(start=START)
    store = LeaseStore()
    a = Candidate(store, clock, "a")
    await clock.settle(10)
    b = Candidate(store, clock, "b")
    await run_for(clock, 30)
    assert a.elector.is_leader
    assert not b.elector.is_leader
    assert holder(store) == "a"
    assert store.lease is not None
    assert store.lease["spec"]["leaseDurationSeconds"] == 15
    assert store.updates >= 10  # a renewed every retry period

    a.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await a.task
    assert a.events == ["started", "stopped"]
    assert holder(store) == ""  # released
    # b takes over at its next retry (2 s), far sooner than the 15 s lease duration.
    await run_for(clock, 2.25)
    assert b.elector.is_leader
    assert holder(store) == "b"
    assert store.lease["spec"]["leaseTransitions"] == 1
    b.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await b.task


async def test_partitioned_leader_stops_before_the_other_takes_over() -> None:
    clock = FakeClock(start=START)
    store = LeaseStore()
    a = Candidate(store, clock, "a")
    await clock.settle(10)
    b = Candidate(store, clock, "b")
    await run_for(clock, 4)
    assert a.elector.is_leader
    assert store.lease is not None
    last_renew = parse_micro_time(store.lease["spec"]["renewTime"])

    a.client.partitioned = True
    timeline: list[tuple[float, bool, bool]] = []
    for _ in range(100):  # 25 s in 0.25 s steps
        await run_for(clock, 0.25)
        timeline.append((clock.now(), a.elector.is_leader, b.elector.is_leader))
    # Never two leaders at the same instant.
    assert not any(a_leads and b_leads for _, a_leads, b_leads in timeline)
    a_stopped = next(t for t, a_leads, _ in timeline if not a_leads)
    b_started = next(t for t, _, b_leads in timeline if b_leads)
    assert a_stopped <= last_renew + 10 + 0.5  # gave up within the renew deadline
    assert b_started >= last_renew + 15  # honoured the lease until it expired
    assert b_started <= last_renew + 15 + 2.5  # and took over at its next retry
    assert a.task.done()  # run() returned: the process would exit now
    assert a.events == ["started", "stopped"]
    b.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await b.task


async def test_async_leading_callback_is_cancelled_when_leadership_ends() -> None:
    clock = FakeClock(start=START)
    store = LeaseStore()
    client = store.client()
    cancelled = asyncio.Event()

    async def lead() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    elector = LeaderElector(
        client,
        namespace="ns",
        name="lease",
        identity="solo",
        clock=clock,
        on_started_leading=lead,
    )
    task = asyncio.create_task(elector.run())
    await run_for(clock, 1)
    assert elector.is_leader
    client.partitioned = True
    await run_for(clock, 12)
    assert task.done()
    assert cancelled.is_set()
    assert not elector.is_leader


async def test_stale_lease_of_a_dead_holder_is_taken_after_expiry_only() -> None:
    clock = FakeClock(start=START)
    store = LeaseStore()
    store.lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "spa-leader", "namespace": "kube-system", "resourceVersion": "1"},
        "spec": {
            "holderIdentity": "dead",
            "leaseDurationSeconds": 15,
            "renewTime": format_micro_time(START - 5),
            "acquireTime": format_micro_time(START - 100),
            "leaseTransitions": 3,
        },
    }
    store.version = 1
    c = Candidate(store, clock, "c")
    # The Lease's own timestamps say it expired at START + 10, but those are the holder's
    # clock: a newcomer waits a whole lease duration from when it first saw the record.
    await run_for(clock, 14.5)
    assert not c.elector.is_leader
    await run_for(clock, 2.5)
    assert c.elector.is_leader
    assert store.lease["spec"]["leaseTransitions"] == 4
    c.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await c.task


async def test_crashed_leading_work_releases_the_lease_and_ends_run() -> None:
    clock = FakeClock(start=START)
    store = LeaseStore()

    async def lead() -> None:
        raise RuntimeError("controller crashed")

    elector = LeaderElector(
        store.client(),
        namespace="ns",
        name="lease",
        identity="solo",
        clock=clock,
        on_started_leading=lead,
    )
    task = asyncio.create_task(elector.run())
    await run_for(clock, 3)
    assert task.done()
    assert not elector.is_leader
    assert holder(store) == ""  # released, so a healthy replica takes over at once


async def test_a_frozen_leader_is_not_leader_once_its_renew_deadline_has_passed() -> None:
    """A process frozen (SIGSTOP, VM pause) past the renew deadline wakes up with work queued;
    whatever runs before the renew loop must already see that it may not write."""
    clock = FakeClock(start=START)
    store = LeaseStore()
    a = Candidate(store, clock, "a")
    await run_for(clock, 4)
    assert a.elector.is_leader
    # The write fence: what is left of the renew deadline since the last renewal was sent.
    assert 8 <= a.elector.write_time_left() <= 10
    # Frozen: time passes but no task of this process runs.
    clock.advance(10.5)
    assert not a.elector.is_leader
    assert a.elector.write_time_left() == 0
    await clock.settle(10)
    # The renew loop then finds the deadline passed and stops leading for good.
    assert not a.elector.is_leader
    assert a.events == ["started", "stopped"]
    assert a.task.done()


async def both_lead(a: Candidate, b: Candidate, clock: FakeClock, seconds: float) -> float:
    """How long, in 0.25 s steps over `seconds`, both electors said they were leader."""
    overlap = 0.0
    for _ in range(int(seconds / 0.25)):
        await run_for(clock, 0.25)
        if a.elector.is_leader and b.elector.is_leader:
            overlap += 0.25
    return overlap


@pytest.mark.parametrize("skew", [8.0, 12.0, -12.0])
async def test_a_partitioned_leader_and_a_skewed_follower_never_lead_together(skew: float) -> None:
    clock = FakeClock(start=START)
    store = LeaseStore()
    a = Candidate(store, clock, "a")
    await clock.settle(10)
    b = Candidate(store, SkewedClock(clock, skew), "b")
    await run_for(clock, 6)
    assert a.elector.is_leader
    a.client.partitioned = True  # a can no longer renew; it still thinks it leads a while
    assert await both_lead(a, b, clock, 30) == 0.0
    assert b.elector.is_leader  # and b did take over
    for candidate in (a, b):
        candidate.task.cancel()
    await asyncio.gather(a.task, b.task, return_exceptions=True)


async def test_stepping_the_leaders_wall_clock_back_does_not_extend_its_leadership() -> None:
    clock = FakeClock(start=START)
    store = LeaseStore()
    stepped = SkewedClock(clock, 0.0)
    a = Candidate(store, stepped, "a")
    await clock.settle(10)
    b = Candidate(store, clock, "b")
    await run_for(clock, 6)
    assert a.elector.is_leader
    a.client.partitioned = True
    stepped.offset = -20.0  # NTP, or an operator, steps a's clock back during the partition
    assert await both_lead(a, b, clock, 30) == 0.0
    assert b.elector.is_leader
    for candidate in (a, b):
        candidate.task.cancel()
    await asyncio.gather(a.task, b.task, return_exceptions=True)


async def test_what_a_leader_learned_is_in_the_lease_for_the_next_one() -> None:
    """The memo's annotations ride on the acquire, every renewal and the release (no request
    of their own), and the next leader reads them when it takes over."""
    clock = FakeClock(start=START)
    store = LeaseStore()
    learned: dict[str, str] = {}
    first = LeaderElector(
        store.client(),
        namespace="kube-system",
        name="spa-leader",
        identity="a",
        clock=clock,
        memo=lambda: learned,
    )
    task = asyncio.create_task(first.run())
    await run_for(clock, 3)
    assert first.is_leader
    assert "annotations" not in store.lease_metadata()  # nothing learned yet: nothing written
    learned["example.com/write-seconds"] = "0.007"
    updates = store.updates
    await run_for(clock, 2.25)  # the next renewal carries it
    assert store.updates == updates + 1
    assert store.lease_metadata()["annotations"] == {"example.com/write-seconds": "0.007"}
    learned["example.com/write-seconds"] = "0.009"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.lease_metadata()["annotations"] == {"example.com/write-seconds": "0.009"}

    # Another process, which has learned nothing: it keeps and shows what the last one wrote.
    second = LeaderElector(
        store.client(),
        namespace="kube-system",
        name="spa-leader",
        identity="b",
        clock=clock,
        memo=dict,
    )
    assert second.annotations == {}
    task = asyncio.create_task(second.run())
    await run_for(clock, 2.25)
    assert second.is_leader
    assert second.annotations == {"example.com/write-seconds": "0.009"}
    assert store.lease_metadata()["annotations"] == {"example.com/write-seconds": "0.009"}
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
