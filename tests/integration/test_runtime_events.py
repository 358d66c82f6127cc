"""EventRecorder against the real API server: the Event passes validation, shows the involved
object, and repeats are folded into one Event with a count."""

from __future__ import annotations

import pytest

from spa.kube import CONFIGMAP, EVENT, KubeClient
from spa.runtime import EventRecorder

pytestmark = pytest.mark.integration


async def test_events_are_created_and_repeats_aggregated(
    kube_client: KubeClient, namespace: str
) -> None:
    target = await kube_client.create(
        CONFIGMAP,
        namespace,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "target"}},
    )
    target.setdefault("apiVersion", "v1")
    target.setdefault("kind", "ConfigMap")
    recorder = EventRecorder(kube_client, instance="test-pod")
    try:
        recorder.warning(target, "MinAboveMax", "min 20 > max 10; max raised to 20")
        recorder.warning(target, "MinAboveMax", "min 20 > max 10; max raised to 20")
        recorder.normal(target, "WindowStarted", "min 3->5")
        await recorder.flush()
    finally:
        await recorder.close()
    events = (await kube_client.list(EVENT, namespace=namespace)).items
    mine = {e["reason"]: e for e in events if e["involvedObject"].get("name") == "target"}
    assert set(mine) == {"MinAboveMax", "WindowStarted"}
    warning = mine["MinAboveMax"]
    assert warning["type"] == "Warning"
    assert warning["count"] == 2
    assert warning["involvedObject"]["uid"] == target["metadata"]["uid"]
    assert warning["involvedObject"]["kind"] == "ConfigMap"
    assert warning["source"]["component"] == "scheduled-pod-autoscaler"
    assert warning["reportingComponent"] == "scheduled-pod-autoscaler"
    assert warning["reportingInstance"] == "test-pod"
    assert mine["WindowStarted"]["count"] == 1
