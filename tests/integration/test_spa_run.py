"""`spa run` as a real process, as its own ServiceAccount with only the RBAC of config/rbac.

These tests run in real time: one waits for two real minute boundaries, one kills a leader with
SIGKILL and waits for the other replica to take over the Lease. The first moves the process's
wall clock forward by under a minute (libfaketime, `processes.minute_boundary_in`) so that its
first boundary comes 10 s after the start, not 5 to 65 s.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2, LEASE
from tests.builders import autoscaler, schedule
from tests.integration.harness import Kube
from tests.integration.processes import (
    CONTROLLER_NAMESPACE,
    leader_election_args,
    log_lines,
    minute_boundary_in,
    skewed,
    spa_run,
    wait_for,
    writes,
)

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def strict_log_lines(log: Path) -> list[dict[str, object]]:
    """Every line the controller printed, each of which must be a JSON object."""
    text = log.read_text().splitlines()
    for line in text:
        json.loads(line)  # raises on a line that is not JSON
    return log_lines(log)


@pytest.mark.slow
def test_window_starts_and_ends_on_real_minute_boundaries(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    log = tmp_path / "spa-run.log"
    # A minute of the process's clock 10 s ahead: time to create the objects and start first.
    # `start` and `end` are in the process's time; `changed_at` measures against the real one.
    offset, at = minute_boundary_in(10)
    start = datetime.fromtimestamp(at + offset, UTC)
    end = start + timedelta(minutes=1)
    kube.create(autoscaler(name="web", namespace=namespace))
    kube.create(
        schedule(
            name="soon",
            namespace=namespace,
            type="Daily",
            startTime=start.strftime("%H:%M"),
            endTime=end.strftime("%H:%M"),
            minReplicas=6,
            maxReplicas=12,
        )
    )
    with spa_run(controller_kubeconfig, namespace, log=log, env=skewed(f"+{offset}s")) as process:
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="HPA created")
        wait_for(
            lambda: kube.status(SCHEDULES, namespace, "soon").get("condition") == "Available",
            within=10,
            what="status",
        )

        def changed_at(expected: tuple[int, int], boundary: datetime) -> float:
            real = boundary.timestamp() - offset
            wait_for(
                lambda: kube.bounds(namespace, "web") == expected,
                within=real - time.time() + 10,
                what=f"bounds {expected}",
            )
            return time.time() - real

        lag_start = changed_at((6, 12), start)
        wait_for(
            lambda: (
                kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["activeSchedules"]
                == ["soon"]
            ),
            within=5,
            what="status written after the HPA",
        )
        lag_end = changed_at((3, 10), end)
        # Seen by polling every 50 ms from this test: generous, but far below a polling design.
        assert lag_start < 2.0, lag_start
        assert lag_end < 2.0, lag_end
        assert lag_start > -0.5, "applied before the boundary"
        assert lag_end > -0.5, "applied before the boundary"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    lines = strict_log_lines(log)
    applied = [line for line in lines if str(line.get("msg", "")).startswith("applied HPA")]
    assert applied, lines[-5:]
    assert all(line.get("namespace") == namespace and line.get("name") == "web" for line in applied)
    # Each write at debug; at info, one line per burst of writes (a boundary), with the counts.
    assert {line.get("level") for line in applied} == {"debug"}
    summaries = [
        line
        for line in lines
        if line.get("logger") == "spa.controller.writes" and line.get("level") == "info"
    ]
    assert summaries, lines[-5:]
    assert sum(line["written"].get("HPAs", 0) for line in summaries) >= len(applied)


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (None, "asyncio"),
        pytest.param(
            "uvloop",
            "uvloop ",
            marks=pytest.mark.skipif(sys.platform != "linux", reason="uvloop: Linux only"),
        ),
    ],
)
def test_it_runs_on_the_event_loop_it_names_at_start(
    controller_kubeconfig: Path,
    kube: Kube,
    namespace: str,
    tmp_path: Path,
    choice: str | None,
    expected: str,
) -> None:
    """asyncio's loop by default, uvloop's when asked for (docs/operations.md): either way the
    controller creates the HPA, stops cleanly, and its first info line says which loop it ran
    on."""
    log = tmp_path / "spa-run.log"
    kube.create(autoscaler(name="web", namespace=namespace))
    chosen = () if choice is None else ("--event-loop", choice)
    with spa_run(controller_kubeconfig, namespace, *chosen, log=log) as process:
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="HPA created")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    lines = strict_log_lines(log)
    first = next(line for line in lines if line.get("level") == "info")
    assert str(first["msg"]).startswith("managing HorizontalPodAutoscalers as "), first
    assert str(first["event_loop"]).startswith(expected), first


def leader_of(kube: Kube, lease: str) -> str:
    spec = kube.get(LEASE, CONTROLLER_NAMESPACE, lease).get("spec") or {}
    return str(spec.get("holderIdentity") or "")


def writes_of(process_log: Path) -> int:
    return len(writes(process_log))


@pytest.mark.slow
def test_leader_failover_after_sigkill(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    lease = f"spa-test-{namespace[-6:]}"
    election = leader_election_args(lease)
    kube.create(autoscaler(name="web", namespace=namespace))
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with (
        spa_run(controller_kubeconfig, namespace, *election, log=logs[0]) as first,
        spa_run(controller_kubeconfig, namespace, *election, log=logs[1]) as second,
    ):
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="HPA created")
        holder = wait_for(lambda: leader_of(kube, lease), within=10, what="a leader")
        # Exactly one process wrote the HPA: the leader (its log line follows the write).
        wait_for(
            lambda: sorted(writes_of(log) for log in logs) == [0, 1],
            within=10,
            what="one write, logged by the leader alone",
        )
        leader_index = 0 if writes_of(logs[0]) == 1 else 1
        leader, follower = (first, second) if leader_index == 0 else (second, first)
        leader.send_signal(signal.SIGKILL)
        leader.wait(timeout=10)
        killed_at = time.monotonic()
        # The follower takes over once the dead leader's lease (15 s) has run out.
        kube.merge(HPA_V2, namespace, "web", {"spec": {"minReplicas": 1}})
        wait_for(
            lambda: kube.bounds(namespace, "web") == (3, 10),
            within=30,
            what="follower restores the HPA",
        )
        takeover = time.monotonic() - killed_at
        assert takeover < 15 + 2 + 2 + 3, takeover  # lease duration + retry period + reconcile
        assert leader_of(kube, lease) != holder
        assert follower.poll() is None
        wait_for(
            lambda: writes_of(logs[1 - leader_index]) >= 1,
            within=10,
            what="the follower's write in its log",
        )
