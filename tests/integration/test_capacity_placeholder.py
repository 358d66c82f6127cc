"""Placeholder pods where no CapacityBuffer is served (docs/schedules.md, "Node capacity"), on the
shared control plane, which has no node autoscaler and no CapacityBuffer CRD: mode Auto falls
back to a Deployment of pause pods shaped and placed like the target's, under the install's
PriorityClass, in the controller's namespace and labelled for the SPA, removed once the target
has the window's minimum or the SPA is deleted, and never anything of the user's touched. The
controller runs in-process as its ServiceAccount with config/rbac's permissions and the
placeholder option's (config/components/placeholders) only, so the rules for placeholders are
what is tested, and without the option as another account with config/rbac's alone; the clock is
stepped (what is checked is which objects exist, not how long nodes take: that is
tests/integration/test_capacity_nodes.py, with Karpenter).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

from spa.controller.capacity import (
    DEPLOYMENTS,
    PLACEHOLDER_IMAGE,
    PLACEHOLDER_LABEL,
    PLACEHOLDER_NAMESPACE_LABEL,
    PLACEHOLDER_PRIORITY_CLASS,
    placeholder_name,
)
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import LEASE, NotFound, RequestRecord, Resource
from tests.builders import DAILY_NOON, autoscaler, deployment, schedule
from tests.integration.harness import Kube, Running, eventually, running_controller, utc
from tests.integration.processes import (
    CONTROLLER_NAMESPACE,
    leader_election_args,
    spa_run,
    wait_for,
)
from tests.testenv import kwok

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PODS = Resource("", "v1", "pods", "Pod", True)
PRIORITY_CLASS = REPO / "config" / "install" / "manager" / "capacity_priority_class.yaml"
# The option that grants the read of the targets' pod templates (docs/install.md,
# "Placeholder pods"), to the shared ServiceAccount of `controller_kubeconfig`.
PLACEHOLDERS = REPO / "config" / "components" / "placeholders" / "placeholders.yaml"


@pytest.fixture
def priority_class(cluster: Any) -> None:
    """The PriorityClass the install creates, and the placeholder option's RBAC, applied as a
    user applies them."""
    cluster.run_kubectl("apply", "--server-side", "-f", str(PRIORITY_CLASS), check=True)
    cluster.run_kubectl("apply", "--server-side", "-f", str(PLACEHOLDERS), check=True)


def _name(namespace: str) -> str:
    """The placeholder Deployment of `namespace`/web, in the controller's namespace."""
    return placeholder_name(namespace, "web")


def _placeholder(kube: Kube, namespace: str) -> dict[str, Any] | None:
    try:
        return kube.get(DEPLOYMENTS, CONTROLLER_NAMESPACE, _name(namespace))
    except NotFound:
        return None


def _existing_placeholder(kube: Kube, namespace: str) -> dict[str, Any]:
    found = _placeholder(kube, namespace)
    assert found is not None, "no placeholder Deployment"
    return found


def _capacity_ready(kube: Kube, namespace: str, reason: str) -> dict[str, Any]:
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
    conditions: list[dict[str, Any]] = status.get("conditions") or []
    found = next((c for c in conditions if c["type"] == "CapacityReady"), None)
    assert found is not None, "no CapacityReady condition"
    assert found["reason"] == reason, found
    return found


async def test_without_capacity_buffers_auto_holds_capacity_with_placeholder_pods(
    cluster: Any,
    controller_kubeconfig: Path,
    kube: Kube,
    namespace: str,
    priority_class: None,
) -> None:
    web = deployment(
        name="web",
        namespace=namespace,
        replicas=1,
        requests={"cpu": "250m", "memory": "64Mi"},
        node_selector={"kubernetes.io/os": "linux"},
    )
    kube.client.create(DEPLOYMENTS, namespace, web)
    kube.create(
        autoscaler(name="web", namespace=namespace, minReplicas=1, capacity={"leadTime": "30m"})
    )
    kube.create(
        schedule(name="noon", namespace=namespace, target="web", **DAILY_NOON, minReplicas=3)
    )
    async with running_controller(
        controller_kubeconfig, [namespace], start=utc("2026-11-16T11:00:00")
    ) as running:
        await eventually(
            lambda: _capacity_ready(kube, namespace, "NotRequested"), what="NotRequested"
        )
        assert _placeholder(kube, namespace) is None
        running.clock.set(utc("2026-11-16T11:30:00"))  # the capacity lead begins
        placeholder = await eventually(
            lambda: _existing_placeholder(kube, namespace), what="the placeholder Deployment"
        )
        # The window adds 2 replicas over the 1 that runs: room for 2 pods like web's.
        assert placeholder["spec"]["replicas"] == 2
        # In the controller's namespace: its labels, not an ownerReference, name the SPA.
        assert "ownerReferences" not in placeholder["metadata"]
        labels = placeholder["metadata"]["labels"]
        assert (labels[PLACEHOLDER_NAMESPACE_LABEL], labels[PLACEHOLDER_LABEL]) == (
            namespace,
            "web",
        )
        pod = placeholder["spec"]["template"]["spec"]
        assert pod["priorityClassName"] == PLACEHOLDER_PRIORITY_CLASS
        assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
        assert pod["containers"][0]["image"] == PLACEHOLDER_IMAGE
        assert pod["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "64Mi"}
        # The API server resolved the PriorityClass into its pods: every workload preempts them.
        pods = await eventually(
            lambda: (
                kube.client.list(
                    PODS,
                    namespace=CONTROLLER_NAMESPACE,
                    label_selector=f"{PLACEHOLDER_NAMESPACE_LABEL}={namespace},"
                    f"{PLACEHOLDER_LABEL}=web",
                ).items
            ),
            what="placeholder pods",
        )
        assert {(p["spec"]["priority"], p["spec"]["preemptionPolicy"]) for p in pods} == {
            (-5, "Never")
        }
        condition = await eventually(
            lambda: _capacity_ready(kube, namespace, "PlaceholderRunning"),
            what="PlaceholderRunning",
        )
        assert condition["status"] == "False"
        # The window starts: the target is raised to 3, and the placeholders go.
        running.clock.set(utc("2026-11-16T12:00:00"))
        await eventually(lambda: _placeholder(kube, namespace) is None, what="placeholder gone")
        await eventually(
            lambda: _capacity_ready(kube, namespace, "PodsRequested"), what="PodsRequested"
        )
        assert kube.get(DEPLOYMENTS, namespace, "web")["spec"]["replicas"] == 3
        # The window's end: no capacity wanted, none made again.
        running.clock.set(utc("2026-11-16T13:00:00"))
        await eventually(
            lambda: _capacity_ready(kube, namespace, "NotRequested"), what="NotRequested again"
        )
        assert _placeholder(kube, namespace) is None
    reasons = [e["reason"] for e in kube.events(namespace) if e["involvedObject"]["name"] == "web"]
    assert "CapacityCreated" in reasons
    assert "CapacityRemoved" in reasons


async def test_a_name_its_placeholders_cannot_carry_is_refused_once_not_written_again(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    # Over 63 characters, the placeholder label capacity-for=<name> cannot hold the name: the
    # API server refused the placeholder at every reconcile of the capacity lead. Now the SPA
    # is refused instead, with one condition and one Event, and nothing is written.
    long = "w" * 64
    kube.client.create(DEPLOYMENTS, namespace, deployment(name="web", namespace=namespace))
    kube.create(
        autoscaler(
            name=long,
            namespace=namespace,
            target="web",
            minReplicas=1,
            capacity={"leadTime": "30m"},
        )
    )
    kube.create(
        schedule(name="noon", namespace=namespace, target=long, **DAILY_NOON, minReplicas=3)
    )
    async with running_controller(
        controller_kubeconfig, [namespace], start=utc("2026-11-16T11:40:00")
    ):
        status = await eventually(
            lambda: _degraded(kube, namespace, long), what="Degraded with InvalidSpec"
        )
        assert "metadata.name: must be at most 63 characters with spec.capacity" in str(status)
        await eventually(
            lambda: (
                kube.status(SCHEDULES, namespace, "noon").get("message")
                == f"ScheduledPodAutoscaler {namespace}/{long} is invalid"
            ),
            what="the Schedule told why it does not apply",
        )
    # No placeholder was written (nor refused), and the SPA was warned of once.
    deployments = kube.client.list(DEPLOYMENTS, namespace=namespace).items
    assert [d["metadata"]["name"] for d in deployments] == ["web"]
    warnings = [
        (e["reason"], e.get("count") or 1)
        for e in kube.events(namespace)
        if e["involvedObject"]["name"] == long and e["type"] == "Warning"
    ]
    assert warnings == [("InvalidSpec", 1)]


def _degraded(kube: Kube, namespace: str, name: str) -> dict[str, Any]:
    status = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, name)
    assert status.get("condition") == "Degraded", status
    return status


async def test_a_deployment_of_the_placeholders_name_is_never_scaled_or_deleted(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    kube.client.create(DEPLOYMENTS, namespace, deployment(name="web", namespace=namespace))
    theirs = deployment(name=_name(namespace), namespace=CONTROLLER_NAMESPACE, replicas=1)
    kube.client.create(DEPLOYMENTS, CONTROLLER_NAMESPACE, theirs)
    kube.create(autoscaler(name="web", namespace=namespace, capacity={"leadTime": "30m"}))
    kube.create(
        schedule(name="noon", namespace=namespace, target="web", **DAILY_NOON, minReplicas=5)
    )
    async with running_controller(
        controller_kubeconfig, [namespace], start=utc("2026-11-16T11:45:00")
    ) as running:
        condition = await eventually(
            lambda: _capacity_ready(kube, namespace, "Unsupported"), what="Unsupported"
        )
        assert "not controlled by this ScheduledPodAutoscaler" in condition["message"]
        running.clock.set(utc("2026-11-16T13:00:00"))  # nothing wanted: still not deleted
        await eventually(
            lambda: _capacity_ready(kube, namespace, "NotRequested"), what="NotRequested"
        )
    kept = kube.get(DEPLOYMENTS, CONTROLLER_NAMESPACE, _name(namespace))
    kube.delete(DEPLOYMENTS, CONTROLLER_NAMESPACE, _name(namespace))
    assert kept["spec"]["replicas"] == 1
    assert PLACEHOLDER_LABEL not in (kept["metadata"].get("labels") or {})


def _web_with_capacity(kube: Kube, namespace: str, *, window: bool = True) -> None:
    """The target web (1 replica) and its SPA, whose window at noon (unless not `window`)
    raises it to 3 with a capacity lead of 30 minutes: 2 placeholder pods from 11:30."""
    web = deployment(
        name="web", namespace=namespace, replicas=1, requests={"cpu": "10m", "memory": "8Mi"}
    )
    kube.client.create(DEPLOYMENTS, namespace, web)
    kube.create(
        autoscaler(name="web", namespace=namespace, minReplicas=1, capacity={"leadTime": "30m"})
    )
    if window:
        kube.create(
            schedule(name="noon", namespace=namespace, target="web", **DAILY_NOON, minReplicas=3)
        )


def _leader_of(kube: Kube, lease: str) -> str:
    spec = kube.get(LEASE, CONTROLLER_NAMESPACE, lease).get("spec") or {}
    return str(spec.get("holderIdentity") or "")


async def test_placeholders_left_while_no_controller_ran_go_once_capacity_is_removed(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    """Level-triggered (docs/schedules.md, "Node capacity"): the controller that starts finds
    the placeholder Deployment in its cache, and the SPA no longer wants it."""
    _web_with_capacity(kube, namespace)
    async with running_controller(
        controller_kubeconfig, [namespace], start=utc("2026-11-16T11:30:00")
    ):
        await eventually(
            lambda: _existing_placeholder(kube, namespace), what="the placeholder Deployment"
        )
    kube.merge(SCHEDULED_POD_AUTOSCALERS, namespace, "web", {"spec": {"capacity": None}})
    # Still inside the lead: only the removed `capacity` makes the placeholders unwanted.
    async with running_controller(
        controller_kubeconfig, [namespace], start=utc("2026-11-16T11:31:00")
    ):
        await eventually(
            lambda: _placeholder(kube, namespace) is None, what="the placeholder deleted"
        )


async def test_placeholders_deleted_or_scaled_by_hand_are_put_back(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    """No clock step, no edit of the SPA: the event on the placeholder Deployment alone wakes
    its SPA, which compares what it wants with what the cache shows."""
    _web_with_capacity(kube, namespace)
    async with running_controller(
        controller_kubeconfig, [namespace], start=utc("2026-11-16T11:30:00")
    ):
        first = await eventually(
            lambda: _existing_placeholder(kube, namespace), what="the placeholder Deployment"
        )
        assert first["spec"]["replicas"] == 2
        kube.delete(DEPLOYMENTS, CONTROLLER_NAMESPACE, _name(namespace))

        def made_again() -> dict[str, Any]:
            found = _existing_placeholder(kube, namespace)
            assert found["metadata"]["uid"] != first["metadata"]["uid"]
            return found

        again = await eventually(made_again, what="the placeholder made again")
        assert again["spec"]["replicas"] == 2
        kube.merge(DEPLOYMENTS, CONTROLLER_NAMESPACE, _name(namespace), {"spec": {"replicas": 7}})

        def scaled_back() -> bool:
            return bool(_existing_placeholder(kube, namespace)["spec"]["replicas"] == 2)

        await eventually(scaled_back, what="the placeholder scaled back to 2")
    created = [
        e
        for e in kube.events(namespace)
        if e["involvedObject"]["name"] == "web" and e["reason"] == "CapacityCreated"
    ]
    assert sum(e.get("count") or 1 for e in created) == 2


@asynccontextmanager
async def _holding_placeholders(
    kubeconfig: Path, kube: Kube, namespace: str
) -> AsyncIterator[Running]:
    """`web` with a 30-minute capacity lead before noon, and the controller running at 11:30
    once its placeholder Deployment exists."""
    _web_with_capacity(kube, namespace)
    async with running_controller(
        kubeconfig, [namespace], start=utc("2026-11-16T11:30:00")
    ) as running:
        await eventually(
            lambda: _existing_placeholder(kube, namespace), what="the placeholder Deployment"
        )
        yield running


def _before_the_placeholders_delete(running: Running, write: Callable[[], None]) -> list[str]:
    """Run `write` (blocking, through the admin client) just before the controller's DELETE of
    the placeholder Deployment goes out, once: what the Deployment controller, or a user, does
    between the controller's read of it and its delete, on the real API server. The returned
    list names the DELETEs that were preceded by it (empty until then)."""
    client = running.manager.client
    send = client.delete
    done: list[str] = []

    async def delete(resource: Resource, namespace_: str | None, name: str, **options: Any) -> Any:
        if resource == DEPLOYMENTS and name.endswith("-web-capacity") and not done:
            await asyncio.to_thread(write)
            done.append(name)
        return await send(resource, namespace_, name, **options)

    # The instance's attribute: only this controller's requests pass through it.
    setattr(client, "delete", delete)  # noqa: B010
    return done


async def test_a_status_write_between_the_read_and_the_delete_does_not_delay_the_removal(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    """The flake this pins down: the Deployment controller writes the placeholder's status
    (pods created, found unavailable) between the controller's GET of it and its DELETE. The
    delete's precondition is the uid it read (docs/schedules.md, "Node capacity"), which a
    status write leaves as it is; with the resourceVersion as the precondition it answered 409,
    and the reconcile went into the queue's error backoff, which runs on the clock that is held
    here: the placeholder would stay until the next step of the clock."""
    name, home = _name(namespace), CONTROLLER_NAMESPACE
    async with _holding_placeholders(controller_kubeconfig, kube, namespace) as running:

        def status_write() -> None:
            before = kube.get(DEPLOYMENTS, home, name)["metadata"]["resourceVersion"]
            written = kube.client.patch(
                DEPLOYMENTS,
                home,
                name,
                {"status": {"conditions": [_condition("StatusWritten")]}},
                patch_type="strategic",
                field_manager="test",
                subresource="status",
            )
            # The controller's read is stale now: the test has made the race it is about.
            assert written["metadata"]["resourceVersion"] != before

        written = _before_the_placeholders_delete(running, status_write)
        # The window starts: the placeholders go, on this one step of the clock.
        running.clock.set(utc("2026-11-16T12:00:00"))
        await eventually(lambda: _placeholder(kube, namespace) is None, what="placeholder gone")
        assert written == [name]
    removed = [
        e
        for e in kube.events(namespace)
        if e["involvedObject"]["name"] == "web" and e["reason"] == "CapacityRemoved"
    ]
    assert removed, "no CapacityRemoved Event"


async def test_a_deployment_put_in_the_placeholders_place_before_the_delete_is_kept(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    """What the delete's precondition is for: the placeholder the controller read is deleted
    and a Deployment of the user's is created under its name before the controller's DELETE
    goes out. The DELETE names the uid that was read, so the user's Deployment is never
    deleted (a DELETE without a precondition would delete it)."""
    name, home = _name(namespace), CONTROLLER_NAMESPACE
    async with _holding_placeholders(controller_kubeconfig, kube, namespace) as running:

        def replace() -> None:
            kube.delete(DEPLOYMENTS, home, name)
            wait_for(lambda: _placeholder(kube, namespace) is None, within=10, what="deleted")
            kube.client.create(DEPLOYMENTS, home, deployment(name=name, namespace=home))

        replaced = _before_the_placeholders_delete(running, replace)
        running.clock.set(utc("2026-11-16T12:00:00"))
        await eventually(lambda: replaced == [name], what="the DELETE sent")
        await eventually(
            lambda: _capacity_ready(kube, namespace, "PodsRequested"), what="PodsRequested"
        )
    kept = kube.get(DEPLOYMENTS, home, name)
    assert not kept["metadata"].get("ownerReferences")


def _condition(reason: str) -> dict[str, Any]:
    """A Deployment condition of a type no controller writes, for a status write of a test."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "type": "TestWrite",
        "status": "True",
        "reason": reason,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
    }


@pytest.mark.slow
def test_a_leader_change_while_the_window_goes_leaves_no_placeholder_behind(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None, tmp_path: Path
) -> None:
    """Two `spa run` processes with leader election, on the real clock: the leader makes the
    placeholders, is killed (SIGKILL: no Lease handed back, nothing said), the window is
    deleted while no process leads, and the new leader, which never made the placeholders
    and sees an SPA that orders no capacity any more, deletes them from what its cache
    shows."""
    lease = f"spa-capacity-{namespace[-6:]}"
    election = leader_election_args(lease)
    now = datetime.now(UTC)
    _web_with_capacity(kube, namespace, window=False)
    kube.create(
        schedule(
            name="soon",
            namespace=namespace,
            target="web",
            type="OneShot",
            timeZone="UTC",
            # The capacity lead (30m) has begun; the window is far from starting.
            startTime=f"{now + timedelta(minutes=20):%Y-%m-%dT%H:%M}",
            endTime=f"{now + timedelta(minutes=40):%Y-%m-%dT%H:%M}",
            minReplicas=3,
        )
    )
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with (
        spa_run(controller_kubeconfig, namespace, *election, log=logs[0]) as first,
        spa_run(controller_kubeconfig, namespace, *election, log=logs[1]) as second,
    ):
        placeholder = wait_for(
            lambda: _placeholder(kube, namespace), within=30, what="the placeholder Deployment"
        )
        assert placeholder["spec"]["replicas"] == 2
        holder = wait_for(lambda: _leader_of(kube, lease), within=10, what="a leader")

        def maker() -> list[int]:
            made = [i for i, log in enumerate(logs) if "created Deployment" in log.read_text()]
            return made if len(made) == 1 else []

        [leader_index] = wait_for(maker, within=10, what="the leader's log line")
        leader, follower = (first, second) if leader_index == 0 else (second, first)
        leader.send_signal(signal.SIGKILL)
        leader.wait(timeout=10)
        kube.delete(SCHEDULES, namespace, "soon")
        # The follower takes over once the dead leader's Lease (15 s) has run out.
        wait_for(
            lambda: _placeholder(kube, namespace) is None,
            within=15 + 2 + 10,
            what="the placeholder deleted by the new leader",
        )
        assert _leader_of(kube, lease) not in ("", holder)
        assert follower.poll() is None
        assert "deleted Deployment" in logs[1 - leader_index].read_text()


def _spa(name: str, lead: str, capacity: str) -> dict[str, Any]:
    return autoscaler(name=name, namespace=None, leadTime=lead, capacity={"leadTime": capacity})


def _window(name: str, capacity: str, **more: Any) -> dict[str, Any]:
    return schedule(
        name=name, namespace=None, **DAILY_NOON, capacity={"leadTime": capacity}, **more
    )


@pytest.mark.parametrize(
    ("document", "accepted"),
    [
        (_spa("short", "10m", "5m"), False),
        (_spa("zero", "1s", "0"), False),
        (_spa("equal", "5m", "300s"), True),
        (_window("short", "59m", leadTime="1h"), False),
        (_window("own", "10m"), True),
    ],
)
def test_the_api_server_refuses_a_capacity_lead_shorter_than_the_lead(
    run_kubectl: Any, crds: None, namespace: str, document: dict[str, Any], accepted: bool
) -> None:
    """The CRD's CEL rule, on the real API server, agrees with the controller and `spa plan`."""
    result = run_kubectl(
        "apply", "-n", namespace, "--server-side", "-f", "-", input=yaml.safe_dump(document)
    )
    if accepted:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode != 0
        assert "capacity.leadTime must be at least leadTime" in result.stderr


async def test_the_placeholder_of_a_deleted_autoscaler_goes(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    """No ownerReference can cross namespaces: the reconcile of the deleted SPA's key, which
    its deletion event brings, deletes its placeholder (docs/schedules.md, "Node capacity")."""
    async with _holding_placeholders(controller_kubeconfig, kube, namespace):
        kube.delete(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
        await eventually(
            lambda: _placeholder(kube, namespace) is None, what="the placeholder deleted"
        )


def _rendered_rbac(cluster: Any) -> list[dict[str, Any]]:
    result = cluster.run_kubectl("kustomize", str(REPO / "config" / "rbac"), check=True)
    return [d for d in yaml.safe_load_all(result.stdout) if d]


async def test_without_the_placeholder_option_capacity_ready_names_the_permission(
    cluster: Any,
    controller_kubeconfig: Path,
    kube: Kube,
    namespace: str,
    priority_class: None,
    tmp_path: Path,
) -> None:
    """The default install's RBAC exactly (config/rbac: its ClusterRole bound cluster-wide and
    the Role of the controller's namespace), for an account of its own: the controller starts,
    says in its gauge that placeholders are not permitted, and an SPA in mode Placeholder gets
    CapacityReady False naming the missing permission, with nothing written."""
    account = f"spa-default-{namespace[-6:]}"
    kubeconfig = cluster.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, account, path=tmp_path / "default.kubeconfig"
    )
    bindings = [
        d
        for d in _rendered_rbac(cluster)
        if d["kind"] in ("ClusterRoleBinding", "RoleBinding")
        and d["roleRef"]["name"] in (CONTROLLER_NAMESPACE, f"{CONTROLLER_NAMESPACE}-capacity")
    ]
    assert len(bindings) == 2
    for binding in bindings:
        binding["metadata"]["name"] = f"{binding['metadata']['name']}-{account}"
        binding["subjects"][0]["name"] = account
    documents = yaml.safe_dump_all(bindings)
    cluster.run_kubectl("apply", "-f", "-", input=documents, check=True)
    user = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:{account}"
    answer = cluster.run_kubectl("auth", "can-i", "get", "deployments.apps", "-n", namespace,
                                 "--as", user)  # fmt: skip
    assert answer.stdout.strip() == "no"
    try:
        _web_with_capacity(kube, namespace)
        kube.merge(
            SCHEDULED_POD_AUTOSCALERS,
            namespace,
            "web",
            {"spec": {"capacity": {"mode": "Placeholder"}}},
        )
        async with running_controller(kubeconfig, [namespace], start=utc("2026-11-16T11:30:00")):
            condition = await eventually(
                lambda: _capacity_ready(kube, namespace, "Unsupported"), what="Unsupported"
            )
            assert condition["status"] == "False"
            assert "not allowed to get deployments.apps in namespace" in condition["message"]
            assert "capacity.placeholders.enabled" in condition["message"]
            assert REGISTRY.get_sample_value("spa_capacity_placeholders_permitted") == 0
        assert _placeholder(kube, namespace) is None
    finally:
        cluster.run_kubectl("delete", "-f", "-", "--ignore-not-found", input=documents)


# -- the pods' wait for a node (docs/api.md, "status.windows", podsWaitedSeconds) ---------------

NODES = Resource("", "v1", "nodes", "Node", False)
# One pod of web per node: kwok's nodes have 4 CPUs.
WIDE = {"cpu": "3", "memory": "64Mi"}


def _pool_node(kube: Kube, name: str, pool: str) -> None:
    """A fake node of its own pool (kwok's annotation, a label and a taint of `pool`), which
    kwok makes Ready; not of the plane's shared nodes (no `type: kwok` label)."""
    node = kwok.node_manifest(0)
    node["metadata"]["name"] = name
    node["metadata"]["labels"] = {"kubernetes.io/hostname": name, POOL_LABEL: pool}
    node["spec"] = {"taints": [{"key": POOL_LABEL, "value": pool, "effect": "NoSchedule"}]}
    kube.client.create(NODES, None, node)


POOL_LABEL = "spa-test/pool"


def _pool_web(namespace: str, *, start_delay: str) -> dict[str, Any]:
    """web, one replica, its pods only on the nodes of the namespace's pool."""
    web = deployment(
        name="web",
        namespace=namespace,
        replicas=1,
        start_delay=start_delay,
        requests=WIDE,
        node_selector={POOL_LABEL: namespace},
    )
    web["spec"]["template"]["spec"]["tolerations"] = [
        {"key": POOL_LABEL, "operator": "Equal", "value": namespace, "effect": "NoSchedule"}
    ]
    return web


def _web_pods(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    return list(kube.client.list(PODS, namespace=namespace, label_selector="app=web").items)


def _unschedulable(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
        for c in (pod.get("status") or {}).get("conditions") or ()
    )


def _created(pod: dict[str, Any]) -> float:
    return datetime.fromisoformat(pod["metadata"]["creationTimestamp"]).timestamp()


def _one_shot(start: datetime) -> dict[str, Any]:
    """A OneShot window from `start` (whole minutes, UTC) for two hours."""
    end = start + timedelta(hours=2)
    return {
        "type": "OneShot",
        "startTime": start.strftime("%Y-%m-%dT%H:%M"),
        "endTime": end.strftime("%Y-%m-%dT%H:%M"),
    }


def _ready_replicas(kube: Kube, namespace: str) -> int:
    return int(
        (kube.get(DEPLOYMENTS, namespace, "web").get("status") or {}).get("readyReplicas") or 0
    )


def _waiting_pods(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    """web's two new pods, once kube-scheduler found no node for either."""
    waiting = [pod for pod in _web_pods(kube, namespace) if _unschedulable(pod)]
    assert len(waiting) == 2, [p["metadata"]["name"] for p in waiting]
    return waiting


def _measured(kube: Kube, namespace: str) -> dict[str, Any]:
    """web's newest window entry, once it is no longer Pending."""
    windows = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web").get("windows") or []
    assert windows, "no window recorded"
    entry: dict[str, Any] = windows[0]
    assert entry["outcome"] != "Pending", entry
    return entry


async def test_pods_that_waited_for_a_node_added_later_say_how_long(
    controller_kubeconfig: Path, kube: Kube, namespace: str, priority_class: None
) -> None:
    """The capacity lead was too short: its placeholders never stood (no node of the pool had
    room), they were handed over at the raise, and the window's two new pods waited Pending,
    unschedulable, until the test added two nodes 20 s later. kube-scheduler bound them, kwok
    started them, and the controller, as its ServiceAccount under the placeholder option's
    RBAC, recorded that wait (one list of web's pods when the window was Ready) and learned the
    capacity lead from it: the head start plus the wait, plus the margin.

    The window is in the past of the wall clock (the clock is stepped): the pods' times are
    the API server's, and only pods created after the raise are the window's."""
    pool = namespace
    names = [f"spa-wait-{namespace[-6:]}-{index}" for index in range(3)]
    try:
        _pool_node(kube, names[0], pool)  # room for web's one replica
        kube.client.create(DEPLOYMENTS, namespace, _pool_web(namespace, start_delay="5s"))
        await eventually(lambda: _ready_replicas(kube, namespace) == 1, within=60, what="1 Ready")
        boundary = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=30)
        b = boundary.timestamp()
        kube.create(
            autoscaler(
                name="web",
                namespace=namespace,
                minReplicas=1,
                leadTime="1m",
                capacity={"leadTime": "Auto", "mode": "Placeholder"},
            )
        )
        window = _one_shot(boundary)
        kube.create(schedule(name="peak", namespace=namespace, **window, minReplicas=3))
        async with running_controller(controller_kubeconfig, [namespace], start=b - 600) as running:
            await eventually(
                lambda: _capacity_ready(kube, namespace, "NotRequested"), what="NotRequested"
            )
            # The capacity lead, the default 3m: two placeholders, Pending (no room).
            running.clock.set(b - 180)
            placeholder = await eventually(
                lambda: _existing_placeholder(kube, namespace), what="the placeholders"
            )
            assert placeholder["spec"]["replicas"] == 2
            # The raise, 1m before B: the placeholders handed over (none stood), web raised.
            running.clock.set(b - 60)
            await eventually(lambda: _placeholder(kube, namespace) is None, what="handed over")
            new = await eventually(
                lambda: _waiting_pods(kube, namespace), within=30, what="2 pods Unschedulable"
            )
            created = [_created(pod) for pod in new]
            await asyncio.sleep(max(0.0, min(created) + 20 - time.time()))
            nodes_added = time.time()
            for name in names[1:]:
                _pool_node(kube, name, pool)
            await eventually(
                lambda: all(p["spec"].get("nodeName") for p in _web_pods(kube, namespace)),
                within=60,
                what="the new pods bound to the new nodes",
            )
            bound = time.time()
            await eventually(
                lambda: _ready_replicas(kube, namespace) == 3, within=60, what="3 Ready"
            )
            # The next reconcile finds the window Ready, and lists web's pods once.
            running.clock.set(b - 30)
            entry = await eventually(lambda: _measured(kube, namespace), what="the window measured")
        assert entry["outcome"] == "Early", entry
        assert "nodesReadyAt" not in entry
        assert entry["capacityReleasedAt"] <= entry["raisedAt"]
        waited = entry["podsWaitedSeconds"]
        # From the pods' creation to their binding, whole seconds of the API server's clock:
        # at least from the last creation to the nodes' (less the seconds cut off), at most
        # from the first creation to the test seeing both bound (not their start, 5 s more).
        print(
            f"podsWaitedSeconds {waited}: nodes added {nodes_added - max(created):.1f} s and "
            f"seen bound {bound - min(created):.1f} s after the pods' creation"
        )
        assert nodes_added - max(created) - 2 <= waited <= bound - min(created) + 1
        # Learned: the head start (B-180 to B-60) and the wait, plus the margin.
        need = 120 + waited
        margin = max(15, -(-need // 10))
        lead = kube.status(SCHEDULED_POD_AUTOSCALERS, namespace, "web")["capacityLeadTime"]
        assert (lead["seconds"], lead["source"]) == (60 + need + margin, "Learned"), lead
        explanation = f"leadTime 1m + nodes learned: p90 of 1 window {need} s + {margin} s"
        assert lead["explanation"] == explanation
    finally:
        for name in names:
            with contextlib.suppress(NotFound):
                kube.client.delete(NODES, None, name)


async def test_without_the_grant_to_list_pods_their_wait_is_not_measured_nor_asked(
    cluster: Any,
    controller_kubeconfig: Path,  # config/rbac applied: the namespace, the roles bound below
    kube: Kube,
    namespace: str,
    priority_class: None,
    tmp_path: Path,
) -> None:
    """The placeholder option as it was before this version (get on the pod templates, no
    list of pods), for an account of its own: the start's access review says no, the gauge
    says 0, and a window whose pods waited for nodes that never came is recorded Missed as
    before, without podsWaitedSeconds, with no list of pods sent and no request refused."""
    account = f"spa-nopods-{namespace[-6:]}"
    kubeconfig = cluster.service_account_kubeconfig(
        CONTROLLER_NAMESPACE, account, path=tmp_path / "nopods.kubeconfig"
    )
    rules = [d for d in yaml.safe_load_all(PLACEHOLDERS.read_text()) if d]
    role = next(d for d in rules if d["kind"] == "ClusterRole")
    role["metadata"]["name"] = account
    role["rules"] = [r for r in role["rules"] if "pods" not in r["resources"]]
    assert role["rules"], "the option's get on the pod templates"
    bindings = [
        d
        for d in _rendered_rbac(cluster)
        if d["kind"] in ("ClusterRoleBinding", "RoleBinding")
        and d["roleRef"]["name"] in (CONTROLLER_NAMESPACE, f"{CONTROLLER_NAMESPACE}-capacity")
    ]
    binding = next(d for d in rules if d["kind"] == "ClusterRoleBinding")
    binding["roleRef"]["name"] = account
    for granted in (*bindings, binding):
        granted["metadata"]["name"] = f"{granted['metadata']['name']}-{account}"
        granted["subjects"][0]["name"] = account
    documents = yaml.safe_dump_all([role, *bindings, binding])
    cluster.run_kubectl("apply", "-f", "-", input=documents, check=True)
    user = f"system:serviceaccount:{CONTROLLER_NAMESPACE}:{account}"
    answer = cluster.run_kubectl("auth", "can-i", "list", "pods", "-n", namespace, "--as", user)
    assert answer.stdout.strip() == "no"
    try:
        # No node of the pool at all: web's pods and its placeholders stay Pending.
        kube.client.create(DEPLOYMENTS, namespace, _pool_web(namespace, start_delay="1s"))
        kube.create(
            autoscaler(
                name="web",
                namespace=namespace,
                minReplicas=1,
                leadTime="1m",
                capacity={"leadTime": "3m", "mode": "Placeholder"},
            )
        )
        kube.create(
            schedule(name="noon", namespace=namespace, target="web", **DAILY_NOON, minReplicas=3)
        )
        async with running_controller(
            kubeconfig, [namespace], start=utc("2026-11-16T11:50:00")
        ) as running:
            assert REGISTRY.get_sample_value("spa_pod_waits_permitted") == 0
            requests: list[RequestRecord] = []
            running.manager.client.add_request_hook(requests.append)
            running.clock.set(utc("2026-11-16T11:57:00"))
            await eventually(
                lambda: _existing_placeholder(kube, namespace), what="the placeholders"
            )
            running.clock.set(utc("2026-11-16T11:59:00"))
            await eventually(
                lambda: kube.get(DEPLOYMENTS, namespace, "web")["spec"]["replicas"] == 3,
                what="web raised",
            )
            # Its 3 pods created (and Pending): a window read at its end before the
            # Deployment's status counts them is NotReady, not PodsPending.
            await eventually(
                lambda: (
                    (kube.get(DEPLOYMENTS, namespace, "web").get("status") or {}).get("replicas")
                    == 3
                ),
                what="web's pods created",
            )
            running.clock.set(utc("2026-11-16T12:30:00"))
            running.clock.set(utc("2026-11-16T13:00:00"))
            entry = await eventually(lambda: _measured(kube, namespace), what="the window measured")
        assert (entry["outcome"], entry["reason"]) == ("Missed", "PodsPending"), entry
        assert "capacityHeldAt" in entry
        assert "nodesReadyAt" not in entry
        assert "podsWaitedSeconds" not in entry
        assert [r for r in requests if r.resource == "pods"] == []
        assert [r for r in requests if r.code == 403] == []
    finally:
        cluster.run_kubectl("delete", "-f", "-", "--ignore-not-found", input=documents)
