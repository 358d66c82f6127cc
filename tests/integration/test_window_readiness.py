"""Every window start measured on the real control plane (docs/api.md, "status.windows"):
kube-scheduler places the pods on kwok's nodes, and kwok keeps each new pod unready for the
start delay its Deployment asks for, so readyReplicas comes as on a cluster. One window Ready
before its boundary (Early), one after it (Late: the lead shorter than the pods' start), one
never (Missed): each with its status entry, its series and its Event; and no request about
the target between windows.

The controller runs in-process with the shared plane's admin credentials (the read of the
target itself is what docs/install.md, "Window readiness", grants), and once as an account
with the default install's RBAC exactly, which may not read it, on a stepped clock: the
pods' start is real time, so each step of the clock comes once the pods are (or are not)
Ready, and what is recorded relative to B is exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

from spa.api.incident import INDEFINITE, PAUSED_UNTIL_ANNOTATION
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import RequestRecord, Resource
from tests.builders import DAILY_NOON, autoscaler, deployment, schedule
from tests.integration.harness import Kube, Running, eventually, running_controller, utc
from tests.integration.processes import CONTROLLER_NAMESPACE

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration

DEPLOYMENT = Resource("apps", "v1", "deployments", "Deployment", True)
RESOURCE_QUOTA = Resource("", "v1", "resourcequotas", "ResourceQuota", True)
REQUESTS = {"cpu": "50m", "memory": "32Mi"}


def _ready(kube: Kube, namespace: str) -> int:
    return int(
        (kube.get(DEPLOYMENT, namespace, "web").get("status") or {}).get("readyReplicas") or 0
    )


def _created(kube: Kube, namespace: str) -> int:
    return int((kube.get(DEPLOYMENT, namespace, "web").get("status") or {}).get("replicas") or 0)


def _windows(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    return list(status.get("windows") or [])


def _outcome(kube: Kube, namespace: str) -> str | None:
    windows = _windows(kube, namespace)
    return windows[0].get("outcome") if windows else None


def _counted(outcome: str, reason: str | None = None) -> float:
    """Windows counted with `outcome` (and `reason`; None: any). The controller counts a
    window after its status write is answered, so a test waits for the count too: the write
    seen through the API server does not mean the count is made yet."""
    return sum(
        sample.value
        for metric in REGISTRY.collect()
        if metric.name == "spa_windows"
        for sample in metric.samples
        if sample.name == "spa_windows_total"
        and sample.labels["outcome"] == outcome
        and reason in (None, sample.labels["reason"])
    )


def _late(namespace: str) -> float | None:
    return REGISTRY.get_sample_value("spa_window_late", {"namespace": namespace, "name": "web"})


def _warnings(kube: Kube, namespace: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in kube.events(namespace) if e.get("reason") == reason]


async def _web(kube: Kube, namespace: str, *, start_delay: str, **spec: Any) -> None:
    """web: 1 replica whose new pods start in `start_delay`; its SPA (min 1) and a window of 3
    every day 12:00-13:00."""
    kube.client.create(
        DEPLOYMENT,
        namespace,
        deployment(
            name="web",
            namespace=namespace,
            replicas=1,
            start_delay=start_delay,
            requests=REQUESTS,
        ),
    )
    kube.create(autoscaler(name="web", namespace=namespace, minReplicas=1, **spec))
    kube.create(schedule(name="web-noon", namespace=namespace, minReplicas=3, **DAILY_NOON))
    await eventually(lambda: kube.bounds(namespace, "web") == (1, 10), what="HPA 1/10")


async def test_a_window_ready_before_its_boundary_is_early(
    kube: Kube, namespace: str, controller: Running
) -> None:
    await _web(kube, namespace, start_delay="2s", leadTime="1m")
    early = _counted("Early")
    controller.clock.set(utc("2026-11-16T11:59:00"))  # the raise, a minute ahead
    await eventually(lambda: _outcome(kube, namespace) == "Pending", what="being measured")
    await eventually(lambda: _ready(kube, namespace) == 3, what="3 Ready", within=60)
    controller.clock.set(utc("2026-11-16T11:59:30"))
    await eventually(lambda: _outcome(kube, namespace) == "Early", what="Early")
    (entry,) = _windows(kube, namespace)
    assert entry["boundary"] == "2026-11-16T12:00:00Z"
    assert entry["raisedAt"] == "2026-11-16T11:59:00Z"
    assert (entry["readyAt"], entry["readySeconds"]) == ("2026-11-16T11:59:30Z", -30)
    assert entry["replicasAt"] <= entry["readyAt"]
    assert entry["lead"]["seconds"] == 60
    await eventually(lambda: _counted("Early") == early + 1, what="the window counted")
    assert _late(namespace) == 0
    assert not _warnings(kube, namespace, "WindowLate")


async def test_a_lead_shorter_than_the_pods_start_is_late_with_a_warning(
    kube: Kube, namespace: str, controller: Running
) -> None:
    await _web(kube, namespace, start_delay="3s")
    late = _counted("Late")
    controller.clock.set(utc("2026-11-16T12:00:00"))  # no lead: raised at B
    await eventually(lambda: _outcome(kube, namespace) == "Pending", what="being measured")
    await eventually(lambda: _ready(kube, namespace) == 3, what="3 Ready", within=60)
    controller.clock.set(utc("2026-11-16T12:01:00"))
    await eventually(lambda: _outcome(kube, namespace) == "Late", what="Late")
    (entry,) = _windows(kube, namespace)
    assert entry["readySeconds"] == 60
    await eventually(lambda: _counted("Late") == late + 1, what="the window counted")
    assert _late(namespace) == 1
    [warning] = await eventually(lambda: _warnings(kube, namespace, "WindowLate"))
    assert warning["type"] == "Warning"
    assert "Ready at B+60 s" in warning["message"]


async def test_a_target_never_ready_is_missed_and_not_read_between_windows(
    kube: Kube, namespace: str, controller: Running
) -> None:
    await _web(kube, namespace, start_delay="1h")
    missed = _counted("Missed")
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: _outcome(kube, namespace) == "Pending", what="being measured")
    await eventually(lambda: _created(kube, namespace) == 3, what="3 pods", within=60)
    controller.clock.set(utc("2026-11-16T12:30:00"))
    controller.clock.set(utc("2026-11-16T13:00:00"))  # the window ends, nothing Ready
    await eventually(lambda: _outcome(kube, namespace) == "Missed", what="Missed")
    (entry,) = _windows(kube, namespace)
    # The pods exist (status.replicas 3) but are not Ready: the Deployment says no more.
    assert (entry["reason"], entry.get("readyAt")) == ("PodsPending", None)
    await eventually(lambda: _counted("Missed") == missed + 1, what="the window counted")
    assert _late(namespace) == 1
    [warning] = await eventually(lambda: _warnings(kube, namespace, "WindowMissed"))
    assert "not Ready before the window ended" in warning["message"]
    await eventually(lambda: kube.bounds(namespace, "web") == (1, 10), what="HPA back to 1/10")

    # Between windows: no request about the target at all, and the history stays.
    requests: list[RequestRecord] = []
    controller.manager.client.add_request_hook(requests.append)
    for instant in ("2026-11-16T14:00:00", "2026-11-16T20:00:00", "2026-11-17T11:00:00"):
        controller.clock.set(utc(instant))
        status = await eventually(
            lambda: kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web"),
            what="the status",
        )
        assert status["windows"][0]["outcome"] == "Missed"
    assert [r for r in requests if r.resource == "deployments"] == []


async def test_a_window_whose_pods_a_resource_quota_refuses_is_missed_for_the_quota(
    kube: Kube, namespace: str, controller: Running
) -> None:
    """A ResourceQuota of 2 pods: the ReplicaSet creates the second and is refused the third,
    and the Deployment's ReplicaFailure condition (copied from its ReplicaSet) says so; the
    window ends missed for the quota, in the quota's own words."""
    kube.client.create(
        RESOURCE_QUOTA,
        namespace,
        {"metadata": {"name": "two-pods", "namespace": namespace}, "spec": {"hard": {"pods": "2"}}},
    )
    await eventually(
        lambda: kube.get(RESOURCE_QUOTA, namespace, "two-pods").get("status", {}).get("hard"),
        within=30,
        what="the quota counted",
    )
    await _web(kube, namespace, start_delay="1s")
    missed = _counted("Missed", "Quota")
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: _outcome(kube, namespace) == "Pending", what="being measured")

    def refused() -> bool:
        conditions = (kube.get(DEPLOYMENT, namespace, "web").get("status") or {}).get(
            "conditions"
        ) or []
        return any(c["type"] == "ReplicaFailure" and c["status"] == "True" for c in conditions)

    await eventually(refused, what="the Deployment's ReplicaFailure", within=60)
    await eventually(lambda: _ready(kube, namespace) == 2, what="2 Ready", within=60)
    controller.clock.set(utc("2026-11-16T13:00:00"))
    await eventually(lambda: _outcome(kube, namespace) == "Missed", what="Missed")
    (entry,) = _windows(kube, namespace)
    assert entry["reason"] == "Quota", entry
    assert entry["message"].startswith("a ResourceQuota refused the window's pods: ")
    assert "exceeded quota: two-pods" in entry["message"]
    assert len(entry["message"]) <= 256
    await eventually(lambda: _counted("Missed", "Quota") == missed + 1, what="the window counted")
    assert _late(namespace) == 1
    [warning] = await eventually(lambda: _warnings(kube, namespace, "WindowMissed"))
    assert "exceeded quota: two-pods" in warning["message"]


async def test_a_window_that_starts_while_paused_is_recorded_paused_and_not_read(
    kube: Kube, namespace: str, controller: Running
) -> None:
    """Paused before the window: the HPA is left alone, the window is recorded Missed, Paused
    at its start without a read of the target, with no Event and no alert."""
    await _web(kube, namespace, start_delay="1s")
    kube.merge(
        SCHEDULED_POD_AUTOSCALERS,
        namespace,
        "web",
        {"metadata": {"annotations": {PAUSED_UNTIL_ANNOTATION: INDEFINITE}}},
    )

    def paused() -> bool:
        conditions = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("conditions")
        return any(c["type"] == "Paused" and c["status"] == "True" for c in conditions or [])

    await eventually(paused, what="Paused")
    requests: list[RequestRecord] = []
    controller.manager.client.add_request_hook(requests.append)
    missed = _counted("Missed", "Paused")
    controller.clock.set(utc("2026-11-16T12:00:00"))
    await eventually(lambda: _outcome(kube, namespace) == "Missed", what="recorded Missed")
    (entry,) = _windows(kube, namespace)
    assert entry["reason"] == "Paused"
    assert "paused when the window started" in entry["message"]
    assert "raisedAt" not in entry
    assert kube.bounds(namespace, "web") == (1, 10)  # left alone
    controller.clock.set(utc("2026-11-16T12:30:00"))
    controller.clock.set(utc("2026-11-16T13:00:00"))
    await eventually(
        lambda: kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["windows"] == [entry],
        what="the entry kept",
    )
    assert [r for r in requests if r.resource == "deployments"] == []
    await eventually(lambda: _counted("Missed", "Paused") == missed + 1, what="the window counted")
    assert _late(namespace) == 0
    assert not _warnings(kube, namespace, "WindowMissed")


async def test_auto_learns_from_a_late_window_and_the_next_is_early(
    kube: Kube, namespace: str, controller: Running
) -> None:
    """leadTime: Auto from no history: the default 2m, too short for a target that (on this
    stepped clock) takes 3 minutes from the raise to Ready; the next day's raise comes early
    by what that window needed plus the margin (180 s + 18 s), and that window is Early."""
    await _web(kube, namespace, start_delay="2s", leadTime="Auto")
    # The HPA is written before the status that says the lead: wait for the status too.
    lead = await eventually(
        lambda: kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("leadTime"),
        what="the lead in the status",
    )
    assert (lead["seconds"], lead["source"]) == (120, "Default")
    controller.clock.set(utc("2026-11-16T11:58:00"))  # the default lead's raise
    await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), what="raised")
    await eventually(lambda: _outcome(kube, namespace) == "Pending", what="being measured")
    await eventually(lambda: _ready(kube, namespace) == 3, what="3 Ready", within=60)
    controller.clock.set(utc("2026-11-16T12:01:00"))
    await eventually(lambda: _outcome(kube, namespace) == "Late", what="window 1 Late")

    def learned() -> dict[str, Any] | None:
        found = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("leadTime")
        return found if found and found.get("source") == "Learned" else None

    lead = await eventually(learned, what="the lead learned")
    assert lead["seconds"] == 198, lead
    assert lead["explanation"] == "learned: p90 of 1 window 180 s + 18 s"

    # The window ends; the next day's raise comes 198 s before its start, not 120 s.
    controller.clock.set(utc("2026-11-16T13:00:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (1, 10), what="HPA back to 1/10")
    kube.merge(DEPLOYMENT, namespace, "web", {"spec": {"replicas": 1}})
    await eventually(lambda: _ready(kube, namespace) == 1, what="back to 1", within=60)
    controller.clock.set(utc("2026-11-17T11:56:00"))
    await eventually(lambda: kube.bounds(namespace, "web") == (1, 10), what="not raised yet")
    controller.clock.set(utc("2026-11-17T11:56:42"))
    await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), what="raised 198 s early")
    await eventually(lambda: _outcome(kube, namespace) == "Pending", what="window 2 measured")
    await eventually(lambda: _ready(kube, namespace) == 3, what="3 Ready", within=60)
    controller.clock.set(utc("2026-11-17T11:57:30"))
    await eventually(lambda: _outcome(kube, namespace) == "Early", what="window 2 Early")
    second, first = _windows(kube, namespace)
    assert (second["readySeconds"], second["lead"]["seconds"]) == (-150, 198)
    assert (first["outcome"], first["lead"]["seconds"]) == ("Late", 120)


async def test_with_the_default_rbac_ready_is_not_measured_and_says_what_to_grant(
    cluster: Any, controller_kubeconfig: Path, kube: Kube, namespace: str, tmp_path: Path
) -> None:
    """config/rbac's bindings for an account of its own (the shared ServiceAccount may hold
    the placeholder option's grant from another test): the window start recorded NotReadable,
    no Event, no alert, no request refused (the start's access review said no), and the
    target never read."""
    account = f"spa-ready-{namespace[-6:]}"
    kubeconfig = cluster.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, account, path=tmp_path / "default.kubeconfig"
    )
    rendered = cluster.run_kubectl("kustomize", str(REPO / "config" / "rbac"), check=True)
    bindings = [
        d
        for d in yaml.safe_load_all(rendered.stdout)
        if d
        and d["kind"] in ("ClusterRoleBinding", "RoleBinding")
        and d["roleRef"]["name"] in (CONTROLLER_NAMESPACE, f"{CONTROLLER_NAMESPACE}-capacity")
    ]
    assert len(bindings) == 2
    for binding in bindings:
        binding["metadata"]["name"] = f"{binding['metadata']['name']}-{account}"
        binding["subjects"][0]["name"] = account
    cluster.run_kubectl("apply", "-f", "-", input=yaml.safe_dump_all(bindings), check=True)
    user = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:{account}"
    answer = cluster.run_kubectl("auth", "can-i", "get", "deployments.apps", "-n", namespace,
                                 "--as", user)  # fmt: skip
    assert answer.stdout.strip() == "no"
    async with running_controller(
        kubeconfig, [namespace], start=utc("2026-11-16T11:00:00")
    ) as running:
        refused: list[RequestRecord] = []
        running.manager.client.add_request_hook(
            lambda record: refused.append(record) if record.code == 403 else None
        )
        await _web(kube, namespace, start_delay="1s")
        running.clock.set(utc("2026-11-16T12:00:00"))
        await eventually(lambda: _outcome(kube, namespace) == "Missed", what="not measured")
        (entry,) = _windows(kube, namespace)
        assert entry["reason"] == "NotReadable"
        assert "grant get on its kind" in entry["message"]
        assert "readyAt" not in entry
        assert _late(namespace) == 0
        assert refused == []
        requests: list[RequestRecord] = []
        running.manager.client.add_request_hook(requests.append)
        running.clock.set(utc("2026-11-16T12:30:00"))
        running.clock.set(utc("2026-11-16T13:00:00"))
        await eventually(lambda: kube.bounds(namespace, "web") == (1, 10), what="window over")
        assert [r for r in requests if r.resource == "deployments"] == []
    assert not _warnings(kube, namespace, "WindowMissed")
