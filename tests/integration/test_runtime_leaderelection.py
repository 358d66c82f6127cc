"""Two LeaderElectors on one real Lease: exactly one leads; when it stops, the other takes over
(at once after a graceful release, within the lease duration after a crash)."""

from __future__ import annotations

import asyncio
import time

import pytest

from spa.kube import LEASE, KubeClient
from spa.runtime import LeaderElector

pytestmark = pytest.mark.integration


class Watched:
    """Samples who leads every 50 ms, to catch any moment with two leaders."""

    def __init__(self, *electors: LeaderElector) -> None:
        self.electors = electors
        self.samples: list[tuple[float, tuple[bool, ...]]] = []
        self._task = asyncio.create_task(self._sample())

    async def _sample(self) -> None:
        while True:
            self.samples.append((time.monotonic(), tuple(e.is_leader for e in self.electors)))
            await asyncio.sleep(0.05)

    def max_concurrent_leaders(self) -> int:
        return max(sum(leaders) for _, leaders in self.samples)

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def wait_for_leader(*electors: LeaderElector, within: float) -> tuple[LeaderElector, float]:
    began = time.monotonic()
    while time.monotonic() - began < within:
        leaders = [e for e in electors if e.is_leader]
        if leaders:
            return leaders[0], time.monotonic() - began
        await asyncio.sleep(0.05)
    raise AssertionError(f"no leader within {within}s")


def elector(
    kube_client: KubeClient, namespace: str, identity: str, **timing: float
) -> LeaderElector:
    return LeaderElector(
        kube_client, namespace=namespace, name="spa-leader", identity=identity, **timing
    )


async def test_one_leader_and_immediate_failover_on_graceful_release(
    kube_client: KubeClient, namespace: str
) -> None:
    a = elector(kube_client, namespace, "a")  # defaults: 15 s / 10 s / 2 s
    b = elector(kube_client, namespace, "b")
    watched = Watched(a, b)
    task_a = asyncio.create_task(a.run())
    first, _ = await wait_for_leader(a, within=10)
    assert first is a
    task_b = asyncio.create_task(b.run())
    await asyncio.sleep(5)  # a renews a few times while b keeps trying
    assert a.is_leader
    assert not b.is_leader
    lease = await kube_client.get(LEASE, namespace, "spa-leader")
    assert lease["spec"]["holderIdentity"] == "a"
    assert lease["spec"]["leaseDurationSeconds"] == 15
    assert lease["spec"]["renewTime"].endswith("Z")

    task_a.cancel()  # graceful shutdown: releases the Lease
    await asyncio.gather(task_a, return_exceptions=True)
    released_at = time.monotonic()
    second, _ = await wait_for_leader(b, within=15)
    takeover = time.monotonic() - released_at
    assert second is b
    assert takeover < 3  # b's next retry (2 s), not the 15 s lease duration
    assert (await kube_client.get(LEASE, namespace, "spa-leader"))["spec"]["holderIdentity"] == "b"
    await watched.stop()
    assert watched.max_concurrent_leaders() == 1
    task_b.cancel()
    await asyncio.gather(task_b, return_exceptions=True)


async def test_crashed_leader_is_replaced_within_the_lease_duration(
    kube_client: KubeClient, namespace: str
) -> None:
    # Shorter timings than production so the crash case takes seconds, not a quarter minute.
    timing = {"lease_duration": 4.0, "renew_deadline": 3.0, "retry_period": 0.5}
    a = LeaderElector(
        kube_client,
        namespace=namespace,
        name="spa-leader",
        identity="a",
        release_on_cancel=False,  # a crash: the Lease is not handed back
        **timing,
    )
    b = elector(kube_client, namespace, "b", **timing)
    watched = Watched(a, b)
    task_a = asyncio.create_task(a.run())
    await wait_for_leader(a, within=10)
    task_b = asyncio.create_task(b.run())
    await asyncio.sleep(2)
    assert not b.is_leader

    task_a.cancel()
    await asyncio.gather(task_a, return_exceptions=True)
    crashed_at = time.monotonic()
    leader, _ = await wait_for_leader(b, within=10)
    takeover = time.monotonic() - crashed_at
    assert leader is b
    # Not before the Lease expired (renewTime + 4 s, renewed at most 0.5 s before the crash)...
    assert takeover >= 4.0 - 0.5 - 0.2
    # ...and within the lease duration plus one retry period.
    assert takeover <= 4.0 + 0.5 + 1.0
    await watched.stop()
    assert watched.max_concurrent_leaders() == 1
    lease = await kube_client.get(LEASE, namespace, "spa-leader")
    assert lease["spec"]["holderIdentity"] == "b"
    assert lease["spec"]["leaseTransitions"] == 1
    task_b.cancel()
    await asyncio.gather(task_b, return_exceptions=True)
