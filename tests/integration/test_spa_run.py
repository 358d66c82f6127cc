"""`spa run` as a real process, as its own ServiceAccount with only the RBAC of config/rbac.

These tests run in real time: one waits for a real minute boundary, one kills a leader with
SIGKILL and waits for the other replica to take over the Lease.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from spa.kube import HPA_V2, LEASE, SCHEDULE, SCHEDULED_POD_AUTOSCALER, NotFound
from tests.integration.harness import REPO, Kube, autoscaler, schedule

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

CONTROLLER_NAMESPACE = "scheduled-pod-autoscaler"
SPA = Path(sys.executable).parent / "spa"


@pytest.fixture(scope="module")
def controller_kubeconfig(cluster: Any, crds: None) -> Path:
    """A kubeconfig of the controller's ServiceAccount, bound by the project's own RBAC."""
    cluster.run_kubectl("apply", "--server-side", "-k", str(REPO / "config" / "rbac"), check=True)
    return Path(
        cluster.service_account_kubeconfig(
            CONTROLLER_NAMESPACE, "scheduled-pod-autoscaler", create=False
        )
    )


@contextmanager
def spa_run(
    kubeconfig: Path, namespace: str, *extra: str, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                str(SPA),
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--namespace",
                namespace,
                "--metrics-addr",
                "127.0.0.1:0",
                "--probe-addr",
                "127.0.0.1:0",
                *extra,
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "KUBECONFIG": ""},
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def wait_for(check: Any, *, within: float, what: str) -> Any:
    deadline = time.monotonic() + within
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (AssertionError, NotFound) as error:
            last = error
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached within {within:.0f}s; last: {last!r}")


def log_lines(log: Path) -> list[dict[str, Any]]:
    lines = []
    for line in log.read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON log line: {line!r}") from None
    return lines


@pytest.mark.slow
def test_window_starts_and_ends_on_real_minute_boundaries(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    log = tmp_path / "spa-run.log"
    now = datetime.now(UTC)
    start = (now + timedelta(minutes=1)).replace(second=0, microsecond=0)
    if (start - now).total_seconds() < 5:  # leave time to create the objects first
        start += timedelta(minutes=1)
    end = start + timedelta(minutes=1)
    kube.create(autoscaler("web", namespace))
    kube.create(
        schedule(
            "soon",
            namespace,
            "web",
            type="Daily",
            startTime=start.strftime("%H:%M"),
            endTime=end.strftime("%H:%M"),
            minReplicas=6,
            maxReplicas=12,
        )
    )
    with spa_run(controller_kubeconfig, namespace, log=log) as process:
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="HPA created")
        wait_for(
            lambda: kube.status(SCHEDULE, namespace, "soon").get("condition") == "Available",
            within=10,
            what="status",
        )

        def changed_at(expected: tuple[int, int], boundary: datetime) -> float:
            wait_for(
                lambda: kube.bounds(namespace, "web") == expected,
                within=(boundary - datetime.now(UTC)).total_seconds() + 10,
                what=f"bounds {expected}",
            )
            return (datetime.now(UTC) - boundary).total_seconds()

        lag_start = changed_at((6, 12), start)
        wait_for(
            lambda: (
                kube.status(SCHEDULED_POD_AUTOSCALER, namespace, "web")["activeSchedules"]
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
    lines = log_lines(log)
    applied = [line for line in lines if line.get("msg", "").startswith("applied HPA")]
    assert applied, lines[-5:]
    assert all(line.get("namespace") == namespace and line.get("name") == "web" for line in applied)


def leader_of(kube: Kube, lease: str) -> str:
    spec = kube.get(LEASE, CONTROLLER_NAMESPACE, lease).get("spec") or {}
    return str(spec.get("holderIdentity") or "")


def writes_of(process_log: Path) -> int:
    return sum(
        1
        for line in log_lines(process_log)
        if line.get("msg", "").startswith(("applied HPA", "created HPA"))
    )


@pytest.mark.slow
def test_leader_failover_after_sigkill(
    controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    lease = f"spa-test-{namespace[-6:]}"
    election = [
        "--enable-leader-election",
        "--leader-election-namespace",
        CONTROLLER_NAMESPACE,
        "--leader-election-id",
        lease,
    ]
    kube.create(autoscaler("web", namespace))
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with (
        spa_run(controller_kubeconfig, namespace, *election, log=logs[0]) as first,
        spa_run(controller_kubeconfig, namespace, *election, log=logs[1]) as second,
    ):
        wait_for(lambda: kube.bounds(namespace, "web") == (3, 10), within=30, what="HPA created")
        holder = wait_for(lambda: leader_of(kube, lease), within=10, what="a leader")
        # Exactly one process wrote the HPA: the leader.
        assert sorted(writes_of(log) for log in logs) == [0, 1]
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
        assert writes_of(logs[1 - leader_index]) >= 1
