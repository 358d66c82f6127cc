"""Fault 5b: two `spa run` replicas whose wall clocks disagree, as node clocks do.

The processes run under libfaketime (Debian `libfaketime`), which moves only their wall clock
(`DONT_FAKE_MONOTONIC=1`: a node's monotonic clock is its own and never skewed against
another's). Leader election must judge a holder's expiry from when this replica saw the Lease
record change, on its own monotonic clock (docs/runtime.md, "LeaderElector"), so that:

- a follower whose clock runs 20 s ahead (more than the lease duration) never takes the Lease
  from a leader that renews (with wall-clock comparisons it took it at once, and both led);
- a leader whose clock runs 12 s ahead, once killed, is replaced within the lease duration plus
  two retry periods (with wall-clock comparisons its renewTime lay in the future and the
  takeover came 12 s later);

and in both cases no two replicas ever write, checked as in test_leader_failover.py from the
sampled Lease and each process's own log of writes.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.builders import autoscaler
from tests.integration.harness import Kube
from tests.integration.processes import (
    leader_election_args,
    log_time,
    skewed,
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

# The follower's skew exceeds the lease duration: judged by wall clocks, every Lease it reads
# has expired. The leader's is less: its renewTime lies in the future for a follower.
FOLLOWER_SKEW = "+20s"
SKEW_SECONDS = 12
SKEW = f"+{SKEW_SECONDS}s"


def fleet(kube: Kube, namespace: str) -> tuple[str, list[str]]:
    """The SPAs, and the Lease both replicas campaign for with its `spa run` flags."""
    for name in NAMES:
        kube.create(autoscaler(name=name, namespace=namespace))
    lease = f"spa-skew-{namespace[-6:]}"
    return lease, leader_election_args(lease)


def test_a_follower_ahead_in_time_never_takes_a_renewed_lease(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    lease, election = fleet(kube, namespace)
    leader_log, follower_log = tmp_path / "leader.log", tmp_path / "follower.log"
    with (
        LeaseHistory(kube.client, lease) as history,
        spa_run(controller_kubeconfig, namespace, *election, log=leader_log) as leader,
    ):
        wait_for(lambda: identity_of(leader_log), within=30, what="the leader campaigning")
        wait_for(lambda: history.current(), within=30, what="a leader")
        leader_identity = history.current()
        assert leader_identity == identity_of(leader_log)
        with spa_run(
            controller_kubeconfig, namespace, *election, log=follower_log, env=skewed(FOLLOWER_SKEW)
        ) as follower:
            wait_for(lambda: identity_of(follower_log), within=30, what="the follower campaigning")
            started = time.time()
            # Two lease durations and more, with writes for the leader to make meanwhile.
            while time.time() - started < 2 * LEASE_DURATION + 5:
                drift(kube, namespace)
                wait_for(
                    lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
                    within=30,
                    what="the leader restores the HPAs",
                )
                time.sleep(3)
            assert follower.poll() is None
            assert leader.poll() is None
    report(
        "follower 20 s ahead",
        observed_s=time.time() - started,
        lease_holders=len(history.holders()),
        leader_writes=len(writes(leader_log)),
        follower_writes=len(writes(follower_log)),
    )
    assert history.holders() == [leader_identity]
    assert writes(follower_log) == []


def test_a_leader_ahead_in_time_is_replaced_within_the_lease_when_killed(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    lease, election = fleet(kube, namespace)
    leader_log, follower_log = tmp_path / "leader.log", tmp_path / "follower.log"
    with (
        LeaseHistory(kube.client, lease) as history,
        spa_run(
            controller_kubeconfig, namespace, *election, log=leader_log, env=skewed(SKEW)
        ) as leader,
    ):
        wait_for(lambda: history.current(), within=30, what="a leader")
        leader_identity = history.current()
        wait_for(lambda: len(writes(leader_log)) == len(NAMES), within=60, what="HPAs created")
        with spa_run(controller_kubeconfig, namespace, *election, log=follower_log) as follower:
            follower_identity = wait_for(
                lambda: identity_of(follower_log), within=30, what="the follower campaigning"
            )
            time.sleep(2 * RETRY_PERIOD)  # the follower has seen the Lease renewed
            killed_at = time.time()
            leader.send_signal(signal.SIGKILL)
            drift(kube, namespace)
            wait_for(
                lambda: bounds_of(kube, namespace) == dict.fromkeys(NAMES, (3, 10)),
                within=LEASE_DURATION + 3 * RETRY_PERIOD + 15,
                what="the follower restores the HPAs",
            )
            seen = wait_for(
                lambda: history.first_seen(follower_identity),
                within=5,
                what="the new holder in the sampled Lease",
            )
            assert follower.poll() is None
    takeover = seen - killed_at
    acquired = lease_acquired_at(kube, lease)  # written by the follower, whose clock is right
    report("leader 12 s ahead, killed", takeover_s=takeover)
    assert history.holders() == [leader_identity, follower_identity]
    assert takeover <= LEASE_DURATION + 2 * RETRY_PERIOD + 1.0
    # Never both: the leader's log is in its own (skewed) time.
    assert all(log_time(w) - SKEW_SECONDS <= killed_at for w in writes(leader_log))
    assert writes(follower_log)
    assert all(log_time(w) >= acquired for w in writes(follower_log))
    assert acquired >= killed_at
