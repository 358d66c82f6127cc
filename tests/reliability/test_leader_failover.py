"""Fault 5: two `spa run` replicas with leader election; the leader is killed (SIGKILL), or
frozen (SIGSTOP) for longer than the lease and then woken up.

What must hold: the other replica takes over within the lease duration (15 s) plus two retry
periods (it judges expiry from when it saw the last renewal, up to one retry period late,
docs/runtime.md), and at no time do both write. This is checked from three independent records: the
Lease as sampled from the API server every 100 ms (holder history, leaseTransitions), each
process's own log of its HPA writes with timestamps, and the HPAs' final state.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.builders import autoscaler
from tests.integration.harness import Kube
from tests.integration.processes import (
    leader_election_args,
    log_time,
    spa_run,
    wait_for,
    writes,
)
from tests.reliability.common import bounds_of, report
from tests.reliability.leases import (
    LEASE_DURATION,
    NAMES,
    RETRY_PERIOD,
    LeaseHistory,
    drift,
    identity_of,
    lease_acquired_at,
)

pytestmark = [pytest.mark.integration, pytest.mark.reliability, pytest.mark.e2e, pytest.mark.slow]


@contextmanager
def two_replicas(kubeconfig: Path, namespace: str, tmp_path: Path, lease: str) -> Iterator[Any]:
    election = leader_election_args(lease)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    with (
        spa_run(kubeconfig, namespace, *election, log=logs[0]) as a,
        spa_run(kubeconfig, namespace, *election, log=logs[1]) as b,
    ):
        yield (a, b), logs


@pytest.mark.parametrize("fault", ["sigkill", "sigstop"])
def test_the_other_replica_takes_over_and_never_both_write(
    fault: str, controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    lease = f"spa-rel-{namespace[-6:]}"
    for name in NAMES:
        kube.create(autoscaler(name=name, namespace=namespace))
    with (
        LeaseHistory(kube.client, lease) as history,
        two_replicas(controller_kubeconfig, namespace, tmp_path, lease) as (processes, logs),
    ):
        wait_for(
            lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
            within=60,
            what="HPAs created",
        )
        wait_for(lambda: history.current(), within=10, what="a leader")
        identities = wait_for(
            lambda: all(identity_of(log) for log in logs) and [identity_of(log) for log in logs],
            within=30,
            what="both campaigning",
        )
        leader_index = identities.index(history.current())
        leader, follower = processes[leader_index], processes[1 - leader_index]
        leader_log, follower_log = logs[leader_index], logs[1 - leader_index]
        # The leader has logged all its writes (a frozen process would log them late) and is
        # idle: whatever it logs from now on is a new write.
        wait_for(lambda: len(writes(leader_log)) == len(NAMES), within=30, what="writes logged")
        time.sleep(2)
        assert writes(follower_log) == [], "the follower wrote while the other led"
        transitions_before = history.samples[-1][2]

        faulted_at = time.time()
        leader.send_signal(signal.SIGKILL if fault == "sigkill" else signal.SIGSTOP)
        drift(kube, namespace)
        wait_for(
            lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
            within=LEASE_DURATION + 3 * RETRY_PERIOD + 10,
            what="the follower restores the HPAs",
        )
        restored = time.time() - faulted_at
        # The new leader may restore all HPAs within one sampling interval of acquiring the
        # Lease, so the sampler can see it a moment after the HPAs are right.
        seen = wait_for(
            lambda: history.first_seen(identities[1 - leader_index]),
            within=5,
            what="the new holder in the sampled Lease",
        )
        takeover = seen - faulted_at
        if fault == "sigstop":
            # Wake the old leader up: queued events make it want to write, but its lease is
            # gone. It must stop (exit 1) without a single write.
            woken_at = time.time()
            drift(kube, namespace)
            leader.send_signal(signal.SIGCONT)
            assert leader.wait(timeout=30) == 1
            wait_for(
                lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
                within=30,
                what="the new leader restores the HPAs again",
            )
            late = [w for w in writes(leader_log) if log_time(w) >= faulted_at]
            assert not late, f"the frozen leader wrote after waking up at {woken_at}: {late}"
        time.sleep(1)
        assert follower.poll() is None

    acquired = lease_acquired_at(kube, lease)
    leader_writes = [log_time(w) for w in writes(leader_log)]
    follower_writes = [log_time(w) for w in writes(follower_log)]
    report(
        f"leader {fault}",
        takeover_s=takeover,
        hpas_restored_s=restored,
        leader_writes=len(leader_writes),
        follower_writes=len(follower_writes),
        lease_holders=len(history.holders()),
        lease_sampling_errors=len(history.errors),
    )
    # The Lease changed hands exactly once, from the leader to the follower.
    assert history.holders() == [identities[leader_index], identities[1 - leader_index]]
    assert history.samples[-1][2] == transitions_before + 1
    # Within the lease duration plus two retry periods (and the sampling interval).
    assert takeover <= LEASE_DURATION + 2 * RETRY_PERIOD + 1.0
    # Never both: every write of the old leader precedes the fault, every write of the new
    # one follows its acquisition of the Lease.
    assert all(t <= faulted_at for t in leader_writes)
    assert follower_writes
    assert all(t >= acquired for t in follower_writes)
    assert acquired >= faulted_at
