"""Pods in the local control plane: the real scheduler places them on kwok's fake nodes, and
kwok makes them Ready after the start-up delay a test asks for (tests/testenv/kwok.py).

Capacity is what the product is for; these tests prove the environment can show it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import watch

from tests.builders import deployment
from tests.testenv import ControlPlane
from tests.testenv.kwok import NODE_CAPACITY

pytestmark = pytest.mark.integration


REQUESTS = {"cpu": "100m", "memory": "64Mi"}


def _ready(obj: Any) -> bool:
    """A Pod or Node whose Ready condition is True."""
    conditions = obj.status.conditions or [] if obj.status else []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


class PodTimes:
    """Watches a namespace's pods and notes, on the monotonic clock, when each was bound to a
    node and when it became Ready, as the watch delivered them."""

    def __init__(self, api: k8s.ApiClient, namespace: str) -> None:
        self.bound: dict[str, float] = {}
        self.ready: dict[str, float] = {}
        self._watch = watch.Watch()
        self._core = k8s.CoreV1Api(api)
        self._namespace = namespace
        self._stopped = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for event in self._watch.stream(
                self._core.list_namespaced_pod, self._namespace, timeout_seconds=120
            ):
                pod = event["object"]
                name = pod.metadata.name
                now = time.monotonic()
                if pod.spec.node_name:
                    self.bound.setdefault(name, now)
                if _ready(pod):
                    self.ready.setdefault(name, now)
        except Exception:
            if not self._stopped:
                raise  # the test's assertions then miss events and say so

    def stop(self) -> None:
        # The watch ends at its next event, or when the test's client is closed under it.
        self._stopped = True
        self._watch.stop()


def wait_ready(
    apps: k8s.AppsV1Api, namespace: str, name: str, replicas: int, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        status = apps.read_namespaced_deployment_status(name, namespace).status
        if (status.ready_replicas or 0) >= replicas:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{name}: {status.ready_replicas} of {replicas} ready after {timeout}s")
        time.sleep(0.1)


def test_nodes_are_ready_with_their_capacity(control_plane: ControlPlane) -> None:
    assert control_plane.nodes >= 1
    with control_plane.api_client() as api:
        nodes = k8s.CoreV1Api(api).list_node(label_selector="type=kwok").items
    assert len(nodes) == control_plane.nodes
    for node in nodes:
        assert node.status.allocatable == dict(NODE_CAPACITY)
        assert _ready(node)
        # The lifecycle controller removed the not-ready taint admission put on the new node.
        assert not [t for t in node.spec.taints or () if t.key.startswith("node.kubernetes.io/")]


def test_a_deployments_pods_become_ready_on_the_nodes(
    api_client: k8s.ApiClient, namespace: str
) -> None:
    apps = k8s.AppsV1Api(api_client)
    apps.create_namespaced_deployment(
        namespace, deployment(name="web", namespace=None, replicas=4, requests=REQUESTS)
    )
    wait_ready(apps, namespace, "web", 4, timeout=60)
    pods = k8s.CoreV1Api(api_client).list_namespaced_pod(namespace).items
    assert len(pods) == 4
    for pod in pods:
        assert pod.spec.node_name.startswith("kwok-node-")
        assert pod.status.phase == "Running"
        assert _ready(pod)


def test_the_start_delay_is_honoured(api_client: k8s.ApiClient, namespace: str) -> None:
    delay = 4.0
    times = PodTimes(api_client, namespace)
    try:
        apps = k8s.AppsV1Api(api_client)
        apps.create_namespaced_deployment(
            namespace,
            deployment(
                name="slow",
                namespace=None,
                replicas=2,
                start_delay=f"{delay:g}s",
                requests=REQUESTS,
            ),
        )
        apps.create_namespaced_deployment(
            namespace, deployment(name="fast", namespace=None, replicas=2, requests=REQUESTS)
        )
        wait_ready(apps, namespace, "slow", 2, timeout=60)
        wait_ready(apps, namespace, "fast", 2, timeout=60)
        # The watch may deliver the last event a moment after the Deployment status says so.
        deadline = time.monotonic() + 10
        while len(times.ready) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        times.stop()
    lags = {name: times.ready[name] - times.bound[name] for name in times.ready}
    print(f"bound -> Ready: {lags}")
    slow = [lag for name, lag in lags.items() if name.startswith("slow-")]
    fast = [lag for name, lag in lags.items() if name.startswith("fast-")]
    assert len(slow) == 2
    assert len(fast) == 2
    # Never early (kwok times the delay from when it sees the bound pod, which is after the
    # binding this watch saw, less the watch's own latency); and not much later either.
    assert all(delay - 0.5 <= lag <= delay + 5 for lag in slow), lags
    assert all(lag < delay - 0.5 for lag in fast), lags


def test_scaling_down_removes_pods(api_client: k8s.ApiClient, namespace: str) -> None:
    apps = k8s.AppsV1Api(api_client)
    core = k8s.CoreV1Api(api_client)
    apps.create_namespaced_deployment(
        namespace, deployment(name="web", namespace=None, replicas=3, requests=REQUESTS)
    )
    wait_ready(apps, namespace, "web", 3, timeout=60)
    apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 1}})
    # Without a kubelet nobody would confirm the graceful deletion; kwok's stage does.
    deadline = time.monotonic() + 30
    while len(core.list_namespaced_pod(namespace).items) != 1:
        if time.monotonic() > deadline:
            pytest.fail("terminating pods were never removed")
        time.sleep(0.2)
