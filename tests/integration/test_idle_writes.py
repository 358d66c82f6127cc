"""What the API server saw from `spa run` (its audit log), between boundaries and at one.

`spa run` runs as a subprocess with its own ServiceAccount against a private control plane
whose audit log records that user's requests. Between boundaries the controller must send no
write at all; at a real wall-clock minute boundary it must patch each HPA exactly once and each
status at most once (docs/architecture.md, "Convergence"), and an SPA that holds node capacity
throughout costs nothing between boundaries either.

The process's wall clock is moved forward by under a minute (libfaketime,
`processes.minute_boundary_in`) so that its boundary comes 40 s after the objects are made,
the time the start and the idle period need, rather than 40 to 100 s after. Windows are written
in the process's time; the audit log's times are the API server's, the real ones.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from spa.controller.capacity import DEPLOYMENTS, placeholder_name
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import HPA_V2, BlockingKubeClient, connect_blocking
from tests.builders import autoscaler, deployment, schedule
from tests.integration.harness import REPO, install_crds
from tests.integration.processes import minute_boundary_in, skewed, spa_run, wait_for
from tests.testenv.audit import AuditLog, audit_policy, service_account_user
from tests.testenv.controlplane import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.slow]

SA_NAMESPACE = "scheduled-pod-autoscaler"
SA_NAME = "scheduled-pod-autoscaler"
USER = service_account_user(SA_NAMESPACE, SA_NAME)
NAMESPACE = "idle"
PRIORITY_CLASS = REPO / "config" / "install" / "manager" / "capacity_priority_class.yaml"
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def starting_at(boundary: datetime, zone: str, kind: str) -> dict[str, Any]:
    """A window of `kind` that starts at the instant `boundary`, written in `zone`."""
    start = boundary.astimezone(ZoneInfo(zone))
    end = (boundary + timedelta(minutes=30)).astimezone(ZoneInfo(zone))
    spec: dict[str, Any] = {"type": kind, "timeZone": zone, "minReplicas": 6, "maxReplicas": 20}
    if kind == "OneShot":
        spec |= {"startTime": f"{start:%Y-%m-%dT%H:%M}", "endTime": f"{end:%Y-%m-%dT%H:%M}"}
    else:
        spec |= {"startTime": f"{start:%H:%M}", "endTime": f"{end:%H:%M}"}
    if kind == "Weekly":
        spec |= {"startDayOfWeek": DAYS[start.weekday()], "endDayOfWeek": DAYS[end.weekday()]}
    return spec


def reconciled(client: BlockingKubeClient, names: list[str]) -> bool:
    for name in names:
        client.get(HPA_V2, NAMESPACE, name)
        spa = client.get(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, name)
        if (spa.get("status") or {}).get("observedGeneration") != spa["metadata"]["generation"]:
            return False
    for item in client.list(SCHEDULES, namespace=NAMESPACE).items:
        if (item.get("status") or {}).get("observedGeneration") != item["metadata"]["generation"]:
            return False
    return True


def test_no_writes_between_boundaries_and_one_patch_per_change(
    control_plane_factory: Callable[..., ControlPlane], tmp_path: Path
) -> None:
    if os.environ.get("SPA_TESTENV_KUBECONFIG"):
        pytest.skip("needs the audit log of a private local control plane")
    plane = control_plane_factory(audit_policy=audit_policy(users=[USER]))
    assert plane.audit_log is not None
    audit = AuditLog(plane.audit_log)
    install_crds(plane)
    plane.run_kubectl("apply", "--server-side", "-k", str(REPO / "config/rbac"), check=True)
    # The placeholder option (docs/install.md, "Placeholder pods"): the templates' read.
    placeholders = REPO / "config/components/placeholders/placeholders.yaml"
    plane.run_kubectl("apply", "--server-side", "-f", str(placeholders), check=True)
    plane.run_kubectl("create", "namespace", NAMESPACE, check=True)
    kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)

    # A minute boundary of the process's clock, 40 s ahead: time for the start and an idle
    # period of 20 s+. `boundary` is in the process's time, `at` the same instant in real time.
    offset, at = minute_boundary_in(40)
    now = datetime.now(UTC) + timedelta(seconds=offset)
    boundary = datetime.fromtimestamp(at + offset, UTC)
    names = ["tokyo", "berlin", "newyork"]
    kinds = ["Daily", "Weekly", "OneShot"]
    zones = ["Asia/Tokyo", "Europe/Berlin", "America/New_York"]
    client = connect_blocking(kubeconfig=str(plane.kubeconfig))
    try:
        for name, kind, zone in zip(names, kinds, zones, strict=True):
            client.create(
                SCHEDULED_POD_AUTOSCALERS, NAMESPACE, autoscaler(name=name, namespace=NAMESPACE)
            )
            client.create(
                SCHEDULES,
                NAMESPACE,
                schedule(
                    name=f"{name}-prescale",
                    namespace=NAMESPACE,
                    target=name,
                    **starting_at(boundary, zone, kind),
                ),
            )
            # A window active throughout (an hour either side), in another zone.
            around = now.astimezone(ZoneInfo("Australia/Sydney"))
            client.create(
                SCHEDULES,
                NAMESPACE,
                schedule(
                    name=f"{name}-daytime",
                    namespace=NAMESPACE,
                    target=name,
                    type="Daily",
                    timeZone="Australia/Sydney",
                    startTime=f"{around - timedelta(hours=1):%H:%M}",
                    endTime=f"{around + timedelta(hours=1):%H:%M}",
                    minReplicas=4,
                ),
            )

        # An SPA whose capacity lead runs throughout (its window starts in 20 minutes): its
        # placeholder Deployment is held all along, and nothing about it (its pods, its
        # status) may cost a request between boundaries (docs/schedules.md, "Node capacity").
        plane.run_kubectl("apply", "--server-side", "-f", str(PRIORITY_CLASS), check=True)
        client.create(
            DEPLOYMENTS,
            NAMESPACE,
            deployment(name="nodes", namespace=NAMESPACE, requests={"cpu": "10m"}),
        )
        client.create(
            SCHEDULED_POD_AUTOSCALERS,
            NAMESPACE,
            autoscaler(name="nodes", namespace=NAMESPACE, capacity={"leadTime": "30m"}),
        )
        client.create(
            SCHEDULES,
            NAMESPACE,
            schedule(
                name="nodes-soon",
                namespace=NAMESPACE,
                target="nodes",
                type="OneShot",
                timeZone="UTC",
                startTime=f"{now + timedelta(minutes=20):%Y-%m-%dT%H:%M}",
                endTime=f"{now + timedelta(minutes=40):%Y-%m-%dT%H:%M}",
                # Above the base minimum of 3 (a window at the base orders no capacity).
                minReplicas=6,
            ),
        )

        with spa_run(
            kubeconfig, NAMESPACE, log=tmp_path / "spa-run.log", env=skewed(f"+{offset}s")
        ) as process:
            wait_for(lambda: reconciled(client, names), within=30, what="all reconciled")
            wait_for(
                lambda: client.get(DEPLOYMENTS, SA_NAMESPACE, placeholder_name(NAMESPACE, "nodes")),
                within=30,
                what="the placeholder Deployment",
            )
            assert process.poll() is None
            idle_from = time.time() + 1
            idle_to = at - 2
            assert idle_to - idle_from >= 20, "no room for the idle period"
            time.sleep(idle_to - time.time())

            idle = audit.select(user=USER, since=idle_from, until=idle_to)
            assert [e for e in idle if e.is_write] == [], "writes between boundaries"
            # Not even reads: the informers' watches stay open and nothing polls.
            assert idle == [], [(e.verb, e.resource) for e in idle]

            def flipped() -> bool:
                return all(
                    client.get(HPA_V2, NAMESPACE, n)["spec"]["minReplicas"] == 6 for n in names
                )

            wait_for(flipped, within=at + 15 - time.time(), what="HPAs patched")

            def statuses_done() -> bool:
                for name in names:
                    status = client.get(SCHEDULED_POD_AUTOSCALERS, NAMESPACE, name)["status"]
                    if f"{name}-prescale" not in status.get("activeSchedules", []):
                        return False
                    flip = client.get(SCHEDULES, NAMESPACE, f"{name}-prescale")["status"]
                    if flip.get("condition") != "Progressing":
                        return False
                return True

            wait_for(statuses_done, within=10, what="statuses")
            time.sleep(3)  # anything more the controller would send (it must not)
            writes = audit.writes(user=USER, since=at - 1)
            assert process.poll() is None
    finally:
        client.close()

    by_kind = Counter((e.verb, e.resource) for e in writes)
    hpa_patches = Counter(e.name for e in writes if e.resource == "horizontalpodautoscalers")
    assert hpa_patches == Counter(dict.fromkeys(names, 1)), writes
    assert by_kind[("patch", "horizontalpodautoscalers")] == len(names)
    status_patches = Counter((e.resource, e.name) for e in writes if e.resource.endswith("/status"))
    assert status_patches, "the statuses changed at the boundary"
    assert max(status_patches.values()) == 1, status_patches
    # Exactly: each SPA's status, and the status of each Schedule that started; nothing else
    # but the Events that report the starts.
    assert set(status_patches) == {("scheduledpodautoscalers/status", name) for name in names} | {
        ("schedules/status", f"{name}-prescale") for name in names
    }
    assert set(by_kind) <= {
        ("patch", "horizontalpodautoscalers"),
        ("patch", "scheduledpodautoscalers/status"),
        ("patch", "schedules/status"),
        ("create", "events"),
        ("patch", "events"),
    }, by_kind
    # The audit log's own times: each patch was done within a second of the boundary.
    for event in writes:
        if event.resource == "horizontalpodautoscalers":
            assert event.completed - at < 1.0, event
