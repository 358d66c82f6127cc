"""Node capacity ahead of a window (docs/schedules.md, "Node capacity"), proven with the real
Karpenter: the controller's CapacityBuffer makes Karpenter provision a node before the window,
the window's pods are Ready at its start, and no buffer outlives what it was for.

Everything here is real: the API server, kube-controller-manager (Deployments, garbage
collection), kube-scheduler, kwok playing the kubelets, and Karpenter's kwok provider, whose
nodes register only after their pool's delay (tests/testenv/karpenter.py).

The clock. The controller runs in-process with an injected clock, as in every integration
test; but a node's delay is Karpenter's and passes in real time, so a clock *stepped* across
the boundary would prove nothing about being on time. Where timing is the point, the clock is
:class:`ShiftedClock`: real time, shifted so that the window starts a known number of real
seconds after the test begins. Where only the end state matters (the buffer removed on
deletion, on a window edited away, after a restart), the stepped FakeClock is used.

The permissions. In mode CapacityBuffer the controller runs as its ServiceAccount with exactly
the default install's RBAC (config/rbac, without config/components/placeholders), and the API
server's audit log of that account says it wrote no Deployment, read no pod template and was
refused nothing (docs/install.md, "RBAC review"). The other tests run it as admin.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import pytest
from kubernetes import client as k8s

from spa.controller.capacity import (
    CAPACITY_BUFFER_GROUP,
    PLACEHOLDER_LABEL,
    PLACEHOLDER_NAMESPACE,
    PLACEHOLDER_NAMESPACE_LABEL,
    buffer_name,
    placeholder_name,
)
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.runtime import FakeClock, TimerHandle
from tests.builders import autoscaler, deployment, schedule
from tests.integration.harness import (
    Kube,
    admin,
    eventually,
    install_crds,
    running_controller,
    utc,
)
from tests.testenv.audit import AuditLog
from tests.testenv.fixtures import KARPENTER_AUDITED
from tests.testenv.karpenter import Karpenter, NodePool, served_version

pytestmark = [pytest.mark.integration, pytest.mark.karpenter]

REQUESTS = {"cpu": "2", "memory": "1Gi"}
# A cloud VM's boot, shortened to keep the test short (DEFAULT_NODE_DELAY_SECONDS is 60).
NODE_DELAY_SECONDS = 20
# The pods' start (kwok keeps each new pod unready this long).
POD_START = "2s"
# The window: OneShot, 12:00-13:00 on the controller's clock.
WINDOW_START = utc("2026-11-16T12:00:00")
PLURAL = "capacitybuffers"
REPO = Path(__file__).resolve().parents[2]
PRIORITY_CLASS = REPO / "config" / "install" / "manager" / "capacity_priority_class.yaml"
# The kinds whose pod template only the placeholder option may read (docs/install.md,
# "Placeholder pods").
WORKLOADS = frozenset({"deployments", "statefulsets", "replicasets"})


class ShiftedClock:
    """The real clock, `offset` seconds ahead (or behind): a window of the controller's
    calendar then comes at a chosen real instant, and every delay in between is real."""

    def __init__(self, now: float) -> None:
        self.offset = now - time.time()

    def now(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        delay = max(0.0, when - self.now())
        return asyncio.get_running_loop().call_later(delay, callback)

    async def sleep_until(self, when: float) -> None:
        await asyncio.sleep(max(0.0, when - self.now()))

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def real(self, instant: float) -> float:
        """The real (time.time) instant of an instant of this clock."""
        return instant - self.offset


@pytest.fixture(scope="module")
def spa_crds(karpenter: Karpenter) -> None:
    install_crds(karpenter.plane)


@pytest.fixture(scope="module")
def priority_class(karpenter: Karpenter) -> None:
    """The install's PriorityClass of placeholder pods, applied as a user applies it, and the
    controller's namespace, where the placeholders are (docs/install.md, "Placeholder pods")."""
    karpenter.plane.run_kubectl("apply", "--server-side", "-f", str(PRIORITY_CLASS), check=True)
    karpenter.plane.run_kubectl("create", "namespace", PLACEHOLDER_NAMESPACE)


@pytest.fixture(scope="module")
def default_rbac(karpenter: Karpenter, priority_class: None) -> Path:
    """config/rbac applied as the default install applies it (no placeholder option), and a
    kubeconfig of its ServiceAccount, the account the plane's audit log records."""
    plane = karpenter.plane
    plane.run_kubectl("apply", "--server-side", "-k", str(REPO / "config" / "rbac"), check=True)
    return plane.service_account_kubeconfig(
        PLACEHOLDER_NAMESPACE, "scheduled-pod-autoscaler", create=False
    )


def _assert_least_privilege(karpenter: Karpenter, *, since: float) -> None:
    """What the controller's ServiceAccount asked since `since`, from the API server's audit
    log: its CapacityBuffer created and deleted; no write on a Deployment, no read of a
    workload (its pod template) outside the controller's namespace, nothing refused."""
    assert karpenter.plane.audit_log is not None
    asked = AuditLog(karpenter.plane.audit_log).select(user=KARPENTER_AUDITED, since=since)
    buffer_writes = {e.verb for e in asked if e.is_write and e.resource == PLURAL}
    assert {"create", "delete"} <= buffer_writes, buffer_writes
    refused = [(e.verb, e.resource, e.namespace) for e in asked if e.code == 403]
    assert not refused, f"refused: {refused}"
    deployment_writes = [e for e in asked if e.is_write and e.resource == "deployments"]
    assert not deployment_writes, deployment_writes
    templates = [
        (e.verb, e.resource, e.namespace)
        for e in asked
        if e.resource in WORKLOADS and e.namespace != PLACEHOLDER_NAMESPACE
    ]
    assert not templates, f"workloads read: {templates}"


@pytest.fixture
def kube(karpenter: Karpenter, spa_crds: None) -> Iterator[Kube]:
    with admin(karpenter.plane) as client:
        yield client


def _version(karpenter: Karpenter) -> str:
    with karpenter.plane.api_client() as api:
        version = served_version(api, CAPACITY_BUFFER_GROUP)
    assert version is not None
    return version


def _buffer(karpenter: Karpenter, namespace: str, name: str) -> dict[str, Any] | None:
    with karpenter.plane.api_client() as api:
        try:
            return cast(
                dict[str, Any],
                k8s.CustomObjectsApi(api).get_namespaced_custom_object(
                    CAPACITY_BUFFER_GROUP, _version(karpenter), namespace, PLURAL, name
                ),
            )
        except k8s.ApiException as error:
            if error.status == 404:
                return None
            raise


def _existing_buffer(karpenter: Karpenter, namespace: str, name: str) -> dict[str, Any]:
    buffer = _buffer(karpenter, namespace, name)
    assert buffer is not None, f"no CapacityBuffer {name}"
    return buffer


def _placeholder(karpenter: Karpenter, namespace: str) -> dict[str, Any] | None:
    with karpenter.plane.api_client() as api:
        try:
            found = k8s.AppsV1Api(api).read_namespaced_deployment(
                placeholder_name(namespace, "web"), PLACEHOLDER_NAMESPACE
            )
        except k8s.ApiException as error:
            if error.status == 404:
                return None
            raise
        return cast(dict[str, Any], api.sanitize_for_serialization(found))


def _ready_pods(karpenter: Karpenter, namespace: str) -> list[dict[str, Any]]:
    """The Ready pods of the target `web` (not the placeholders)."""
    with karpenter.plane.api_client() as api:
        listed = k8s.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="app=web")
        pods = cast(dict[str, Any], api.sanitize_for_serialization(listed))["items"]
    return [
        pod
        for pod in pods
        if not pod["metadata"].get("deletionTimestamp")
        and any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in pod.get("status", {}).get("conditions") or ()
        )
    ]


def _create_web(karpenter: Karpenter, namespace: str, pool: NodePool, replicas: int) -> None:
    web = deployment(
        name="web",
        namespace=None,
        replicas=replicas,
        requests=REQUESTS,
        node_selector=pool.node_selector,
        start_delay=POD_START,
    )
    with karpenter.plane.api_client() as api:
        k8s.AppsV1Api(api).create_namespaced_deployment(
            namespace, k8s.V1Deployment.model_validate(web)
        )


def _one_shot(namespace: str, *, minimum: int, **more: Any) -> dict[str, Any]:
    return schedule(
        name="peak",
        namespace=namespace,
        target="web",
        type="OneShot",
        startTime="2026-11-16T12:00",
        endTime="2026-11-16T13:00",
        minReplicas=minimum,
        maxReplicas=10,
        **more,
    )


def _spa(namespace: str, **spec: Any) -> dict[str, Any]:
    return autoscaler(name="web", namespace=namespace, minReplicas=1, maxReplicas=10, **spec)


def _condition(kube: Kube, namespace: str, kind: str) -> dict[str, Any] | None:
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    return next((c for c in status.get("conditions") or () if c["type"] == kind), None)


def _condition_with(kube: Kube, namespace: str, kind: str, reason: str | None) -> dict[str, Any]:
    """The SPA's condition `kind`, once it exists (with `reason`, unless None)."""
    condition = _condition(kube, namespace, kind)
    assert condition is not None, f"no {kind} condition"
    assert reason is None or condition["reason"] == reason, condition
    return condition


@pytest.mark.parametrize("mode", ["CapacityBuffer", "Placeholder"])
async def test_a_capacity_lead_has_the_node_and_the_pods_ready_before_the_window(
    karpenter: Karpenter,
    karpenter_namespace: str,
    kube: Kube,
    priority_class: None,
    default_rbac: Path,
    mode: str,
) -> None:
    """In mode CapacityBuffer under the default install's RBAC exactly (the module's
    docstring); placeholders as admin (their RBAC is tested in test_capacity_placeholder.py)."""
    namespace = karpenter_namespace
    test_start = time.time()
    # One pod runs before the window, on a node of the pool made quickly; the pool's later
    # nodes take NODE_DELAY_SECONDS, like a cloud VM's boot.
    pool = karpenter.add_node_pool(f"lead-{mode.lower()}", node_delay_seconds=3)
    _create_web(karpenter, namespace, pool, replicas=1)
    await eventually(
        lambda: len(_ready_pods(karpenter, namespace)) == 1, within=90, what="web's first pod"
    )
    pool = karpenter.add_node_pool(pool.name, node_delay_seconds=NODE_DELAY_SECONDS)
    nodes_before = {n["metadata"]["name"] for n in karpenter.nodes(pool)}

    capacity_lead, pod_lead, window_minimum = 50, 10, 4
    capacity = {"leadTime": f"{capacity_lead}s", "mode": mode}
    kube.create(_spa(namespace, leadTime=f"{pod_lead}s", capacity=capacity))
    kube.create(_one_shot(namespace, minimum=window_minimum))
    # The window's capacity lead begins 2 s after the controller starts.
    clock = ShiftedClock(WINDOW_START - capacity_lead - 2)

    def held() -> dict[str, Any] | None:
        if mode == "CapacityBuffer":
            return _buffer(karpenter, namespace, buffer_name("web"))
        return _placeholder(karpenter, namespace)

    kubeconfig = default_rbac if mode == "CapacityBuffer" else karpenter.plane.kubeconfig
    async with running_controller(kubeconfig, [namespace], start=0, clock=cast(FakeClock, clock)):
        boundary = clock.real(WINDOW_START)
        capacity_object = await eventually(held, within=20, what=f"the {mode}")
        assert capacity_object is not None
        created_before_boundary = boundary - time.time()
        # Sized to what the window adds over what runs.
        assert capacity_object["spec"]["replicas"] == window_minimum - 1
        if mode == "CapacityBuffer":
            # Beside the target, owned by the SPA.
            owner = capacity_object["metadata"]["ownerReferences"][0]
            assert (owner["kind"], owner["name"], owner["controller"]) == (
                "ScheduledPodAutoscaler",
                "web",
                True,
            )
            # Shaped like the target's pods by the node autoscaler itself.
            assert capacity_object["spec"]["scalableRef"] == {
                "apiGroup": "apps",
                "kind": "Deployment",
                "name": "web",
            }
        else:
            # In the controller's namespace: its labels, not an ownerReference, name the SPA
            # (docs/install.md, "Placeholder pods").
            assert "ownerReferences" not in capacity_object["metadata"]
            labels = capacity_object["metadata"]["labels"]
            assert (labels[PLACEHOLDER_NAMESPACE_LABEL], labels[PLACEHOLDER_LABEL]) == (
                namespace,
                "web",
            )
            # Shaped and placed like the target's pods by the controller.
            pod = capacity_object["spec"]["template"]["spec"]
            assert pod["nodeSelector"] == pool.node_selector
            assert pod["containers"][0]["resources"]["requests"] == REQUESTS
        reason = "BufferRequested" if mode == "CapacityBuffer" else "PlaceholderRunning"
        condition = await eventually(
            lambda: _condition_with(kube, namespace, "CapacityReady", reason), what=reason
        )
        assert condition["status"] == "False"
        assert "3 more pods" in condition["message"]

        # Karpenter makes a new node for the capacity alone: no pod of the window exists yet.
        def new_node() -> list[dict[str, Any]]:
            return [
                n
                for n in karpenter.schedulable_nodes(pool)
                if n["metadata"]["name"] not in nodes_before
            ]

        await eventually(new_node, within=capacity_lead + 30, what="a new node for the capacity")
        node_ready = time.time()
        assert len(_ready_pods(karpenter, namespace)) == 1

        # At the pod lead the HPA and the target are raised; the pods land on the new node.
        await eventually(
            lambda: len(_ready_pods(karpenter, namespace)) >= window_minimum,
            within=capacity_lead + 60,
            what=f"{window_minimum} Ready pods",
        )
        pods_ready = time.time()
        # The capacity goes once the target has the window's minimum (its pods take the room).
        await eventually(lambda: held() is None, within=20, what=f"the {mode} gone")
        seen_gone = time.time()
        condition = await eventually(
            lambda: _condition_with(kube, namespace, "CapacityReady", "PodsRequested"),
            what="CapacityReady PodsRequested",
        )
        assert condition["status"] == "True"
    reasons = [e["reason"] for e in kube.events(namespace) if e["involvedObject"]["name"] == "web"]
    assert "CapacityCreated" in reasons
    assert "CapacityRemoved" in reasons
    if mode == "CapacityBuffer":
        _assert_least_privilege(karpenter, since=test_start)
    print(
        f"\n{mode}: created {created_before_boundary:.1f}s before the boundary; node Ready "
        f"{boundary - node_ready:.1f}s before it; {window_minimum} pods Ready "
        f"{boundary - pods_ready:.1f}s before it; seen gone {boundary - seen_gone:.1f}s before it"
    )
    assert node_ready <= boundary, f"the node came {node_ready - boundary:.1f}s late"
    assert pods_ready <= boundary, f"the pods were Ready {pods_ready - boundary:.1f}s late"
    # The window's pods run on the node bought for them.
    on_new = {p["spec"]["nodeName"] for p in _ready_pods(karpenter, namespace)} - nodes_before
    assert on_new, "no pod of the window runs on the node bought for it"


def _with(entry: dict[str, Any], field: str) -> dict[str, Any] | None:
    return entry if field in entry else None


def _instant(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


async def test_an_auto_capacity_lead_is_learned_from_when_the_placeholders_stood(
    karpenter: Karpenter, karpenter_namespace: str, kube: Kube, priority_class: None
) -> None:
    """`capacity.leadTime: Auto` with placeholder pods on the real Karpenter (docs/schedules.md,
    "Auto lead times"): the window's status entry records when the capacity was held, when
    every placeholder pod was Ready on the new node, and when it was handed over; the capacity
    lead in force is then learned from that wait (the pod lead plus the nodes' wait plus the
    margin), where it was the default before."""
    namespace = karpenter_namespace
    pool = karpenter.add_node_pool("auto-capacity", node_delay_seconds=3)
    _create_web(karpenter, namespace, pool, replicas=1)
    await eventually(
        lambda: len(_ready_pods(karpenter, namespace)) == 1, within=90, what="web's first pod"
    )
    pool = karpenter.add_node_pool(pool.name, node_delay_seconds=NODE_DELAY_SECONDS)
    # The default 3m is bounded to 1m30s, to keep the test short.
    pod_lead, capacity_lead, window_minimum = 10, 90, 4
    capacity = {"leadTime": "Auto", "mode": "Placeholder", "leadTimeBounds": {"max": "1m30s"}}
    kube.create(_spa(namespace, leadTime=f"{pod_lead}s", capacity=capacity))
    kube.create(_one_shot(namespace, minimum=window_minimum))
    clock = ShiftedClock(WINDOW_START - capacity_lead - 2)

    def entry() -> dict[str, Any]:
        windows = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("windows")
        assert windows, "no window recorded"
        return cast(dict[str, Any], windows[0])

    async with running_controller(
        karpenter.plane.kubeconfig, [namespace], start=0, clock=cast(FakeClock, clock)
    ):
        held = await eventually(entry, within=20, what="the window's entry")
        assert "raisedAt" not in held
        lead = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["capacityLeadTime"]
        assert (lead["seconds"], lead["source"]) == (capacity_lead, "Default")
        stood = await eventually(
            lambda: _with(entry(), "nodesReadyAt"), within=capacity_lead + 30, what="nodesReadyAt"
        )
        assert stood is not None
        assert "raisedAt" not in stood
        done = await eventually(
            lambda: entry() if entry()["outcome"] != "Pending" else None,
            within=capacity_lead + 60,
            what="the window measured",
        )
        learned = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["capacityLeadTime"]
    assert done is not None
    boundary = WINDOW_START
    held_at = _instant(done["capacityHeldAt"])
    nodes_at = _instant(done["nodesReadyAt"])
    released_at = _instant(done["capacityReleasedAt"])
    raised_at = _instant(done["raisedAt"])
    waited = nodes_at - held_at
    print(
        f"\nAuto capacity lead: held at B-{boundary - held_at:.0f}s, nodes Ready "
        f"{waited:.0f}s later (B-{boundary - nodes_at:.0f}s), released at "
        f"B-{boundary - released_at:.0f}s, raised at B-{boundary - raised_at:.0f}s, "
        f"{done['outcome']} at B{done.get('readySeconds')}s; capacity lead learned "
        f"{learned['seconds']}s ({learned['explanation']})"
    )
    # Held at the capacity lead's start (the controller's first reconcile of it), the nodes
    # standing after Karpenter's delay, handed over 5 s before the raise.
    assert boundary - capacity_lead <= held_at <= boundary - capacity_lead + 5
    assert NODE_DELAY_SECONDS <= waited < capacity_lead - 5
    assert boundary - pod_lead - 5 <= released_at < raised_at
    assert boundary - pod_lead <= raised_at <= boundary - pod_lead + 2
    assert done["outcome"] == "Early"
    # Learned: the pod lead, plus the nodes' wait, plus the 15 s margin.
    assert learned["source"] == "Learned"
    assert learned["seconds"] == pod_lead + int(waited) + 15
    assert learned["explanation"] == (
        f"leadTime {pod_lead}s + nodes learned: p90 of 1 window {int(waited)} s + 15 s"
    )


async def test_without_a_capacity_lead_the_pods_wait_for_the_node_past_the_window(
    karpenter: Karpenter, karpenter_namespace: str, kube: Kube
) -> None:
    """The same window and pod lead without `capacity`: the pods are created at the pod lead,
    stay Pending while Karpenter boots a node, and are Ready only after the boundary (what the
    feature exists for; it also shows the test above can fail)."""
    namespace = karpenter_namespace
    pool = karpenter.add_node_pool("no-capacity-lead", node_delay_seconds=3)
    _create_web(karpenter, namespace, pool, replicas=1)
    await eventually(
        lambda: len(_ready_pods(karpenter, namespace)) == 1, within=90, what="web's first pod"
    )
    pool = karpenter.add_node_pool("no-capacity-lead", node_delay_seconds=NODE_DELAY_SECONDS)
    pod_lead, window_minimum = 10, 4
    kube.create(_spa(namespace, leadTime=f"{pod_lead}s"))
    kube.create(_one_shot(namespace, minimum=window_minimum))
    clock = ShiftedClock(WINDOW_START - pod_lead - 2)
    async with running_controller(
        karpenter.plane.kubeconfig, [namespace], start=0, clock=cast(FakeClock, clock)
    ):
        boundary = clock.real(WINDOW_START)
        await eventually(
            lambda: len(_ready_pods(karpenter, namespace)) >= window_minimum,
            within=NODE_DELAY_SECONDS + 90,
            what=f"{window_minimum} Ready pods",
        )
        pods_ready = time.time()
        assert _condition(kube, namespace, "CapacityReady") is None
        assert _buffer(karpenter, namespace, buffer_name("web")) is None
    print(
        f"\nwithout a capacity lead: {window_minimum} pods Ready {pods_ready - boundary:.1f}s after"
    )
    assert pods_ready > boundary + NODE_DELAY_SECONDS - pod_lead


async def test_no_buffer_outlives_its_window_a_restart_or_its_autoscaler(
    karpenter: Karpenter, karpenter_namespace: str, kube: Kube
) -> None:
    """A stepped clock: only the end states matter here, not how long nodes take."""
    namespace = karpenter_namespace
    pool = karpenter.add_node_pool("capacity-gone", node_delay_seconds=3)
    _create_web(karpenter, namespace, pool, replicas=1)
    kube.create(_spa(namespace, capacity={"leadTime": "30m"}))
    kube.create(_one_shot(namespace, minimum=3))
    name = buffer_name("web")
    async with running_controller(
        karpenter.plane.kubeconfig, [namespace], start=utc("2026-11-16T11:00:00")
    ) as running:
        assert _buffer(karpenter, namespace, name) is None
        running.clock.set(utc("2026-11-16T11:45:00"))  # in the capacity lead
        buffer = await eventually(
            lambda: _existing_buffer(karpenter, namespace, name),
            within=20,
            what="the CapacityBuffer",
        )
        assert buffer["spec"]["replicas"] == 2
        # The window edited away: suspended.
        kube.merge(SCHEDULES, namespace, "peak", {"spec": {"suspend": True}})
        await eventually(
            lambda: _buffer(karpenter, namespace, name) is None, within=20, what="buffer gone"
        )
        kube.merge(SCHEDULES, namespace, "peak", {"spec": {"suspend": False}})
        await eventually(
            lambda: _buffer(karpenter, namespace, name), within=20, what="the buffer again"
        )
    # A restart after the window was edited away while no controller ran: the new process
    # finds the buffer left behind and deletes it.
    kube.merge(SCHEDULES, namespace, "peak", {"spec": {"minReplicas": 1}})
    assert _buffer(karpenter, namespace, name) is not None
    async with running_controller(
        karpenter.plane.kubeconfig, [namespace], start=utc("2026-11-16T11:46:00")
    ):
        await eventually(
            lambda: _buffer(karpenter, namespace, name) is None, within=20, what="buffer gone"
        )
        kube.merge(SCHEDULES, namespace, "peak", {"spec": {"minReplicas": 3}})
        await eventually(
            lambda: _buffer(karpenter, namespace, name), within=20, what="the buffer again"
        )
    # The SPA deleted (no controller running): the garbage collector removes its buffer.
    kube.delete(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    await eventually(
        lambda: _buffer(karpenter, namespace, name) is None, within=60, what="buffer collected"
    )


async def test_a_capacity_buffer_of_the_name_that_is_not_ours_is_left_alone(
    karpenter: Karpenter, karpenter_namespace: str, kube: Kube
) -> None:
    namespace = karpenter_namespace
    pool = karpenter.add_node_pool("capacity-taken", node_delay_seconds=3)
    _create_web(karpenter, namespace, pool, replicas=0)
    theirs = {
        "apiVersion": f"{CAPACITY_BUFFER_GROUP}/{_version(karpenter)}",
        "kind": "CapacityBuffer",
        "metadata": {"name": buffer_name("web")},
        "spec": {
            "scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"},
            "replicas": 1,
        },
    }
    with karpenter.plane.api_client() as api:
        k8s.CustomObjectsApi(api).create_namespaced_custom_object(
            CAPACITY_BUFFER_GROUP, _version(karpenter), namespace, PLURAL, theirs
        )
    kube.create(_spa(namespace, capacity={"leadTime": "30m"}))
    kube.create(_one_shot(namespace, minimum=3))
    async with running_controller(
        karpenter.plane.kubeconfig, [namespace], start=utc("2026-11-16T11:45:00")
    ):
        condition = await eventually(
            lambda: _condition_with(kube, namespace, "CapacityReady", None), what="CapacityReady"
        )
        assert (condition["status"], condition["reason"]) == ("False", "Unsupported")
        assert "not controlled by this ScheduledPodAutoscaler" in condition["message"]
    buffer = _buffer(karpenter, namespace, buffer_name("web"))
    assert buffer is not None
    assert buffer["spec"]["replicas"] == 1
    assert not buffer["metadata"].get("ownerReferences")
