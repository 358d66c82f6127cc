"""Adopting an HPA somebody made, on request (docs/api.md and docs/operations.md, "Adopting an
existing HPA"), against the real control plane: the API server applies the adopting patch and
its precondition, the real kube-controller-manager's garbage collector deletes an adopted HPA
with its SPA, and the real kubectl runs `kubectl spa status` and the documented undo.

The controller runs in-process (tests/integration/harness.py), its clock at Monday 2026-11-16
11:00 UTC.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spa.api.adoption import ADOPT_ANNOTATION
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL, SPEC_HASH_ANNOTATION
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import HPA_V2, NotFound
from tests.builders import autoscaler
from tests.integration.harness import (
    Kube,
    Running,
    condition_becomes,
    eventually,
    running_controller,
    utc,
)

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
BY_HAND = "by-hand"


def create_users_hpa(kube: Kube, namespace: str, target: str = "web") -> dict[str, Any]:
    """The HPA, created under a field manager of its own (the harness's client would otherwise
    name the controller's)."""
    return kube.client.create(
        HPA_V2, namespace, users_hpa(namespace, target), field_manager=BY_HAND
    )


def users_hpa(namespace: str, target: str = "web") -> dict[str, Any]:
    """An HPA made by hand, with a label, an annotation and a behavior of its own."""
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "web",
            "namespace": namespace,
            "labels": {"team": "shop"},
            "annotations": {"note": "made by hand"},
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": 2,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        },
    }


def asking(namespace: str, value: str = "true") -> dict[str, Any]:
    """The SPA `web` (base 3/10, Deployment web), asking to adopt."""
    spa = autoscaler(name="web", namespace=namespace)
    spa["metadata"]["annotations"] = {ADOPT_ANNOTATION: value}
    return spa


def untouched(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """The controller wrote nothing to the HPA. (Its resourceVersion may move all the same: the
    real HPA controller writes its status.)"""
    fields = ("labels", "annotations", "ownerReferences")
    return (
        after["spec"] == before["spec"]
        and all(after["metadata"].get(f) == before["metadata"].get(f) for f in fields)
        and _ours(after) == _ours(before)
    )


def _ours(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in obj["metadata"].get("managedFields") or () if e["manager"] == FIELD_MANAGER]


def reasons(kube: Kube, namespace: str) -> list[str]:
    return [str(event["reason"]) for event in kube.events(namespace)]


def gone(kube: Kube, namespace: str) -> bool:
    try:
        kube.hpa(namespace, "web")
    except NotFound:
        return True
    return False


def kubectl_spa_status(kubeconfig: Path, namespace: str) -> dict[str, Any]:
    """`kubectl spa status web -o json` through the real kubectl, which finds the plugin."""
    result = subprocess.run(
        [str(BIN / "kubectl"), "spa", "status", "web", "-n", namespace, "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        | {"KUBECONFIG": str(kubeconfig)},
    )
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)["autoscalers"]
    hpa: dict[str, Any] = entry["hpa"]
    return hpa


async def test_a_users_hpa_is_adopted_converges_and_is_collected_with_the_spa(
    cluster: Any, kube: Kube, namespace: str
) -> None:
    before = create_users_hpa(kube, namespace)
    spa = kube.create(asking(namespace))
    # No controller yet: the status tells what it will do, by the controller's own rule.
    assert kubectl_spa_status(cluster.kubeconfig, namespace)["state"] == "WillAdopt"

    async with running_controller(
        cluster.kubeconfig, [namespace], start=utc("2026-11-16T11:00:00")
    ):
        hpa = await eventually(
            lambda: (
                (found := kube.hpa(namespace, "web"))["metadata"].get("ownerReferences") and found
            ),
            what="HPA adopted",
        )
        [owner] = hpa["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"]) == (
            "ScheduledPodAutoscaler",
            "web",
            spa["metadata"]["uid"],
        )
        assert (owner["controller"], owner["blockOwnerDeletion"]) == (True, True)
        # The same object, taken over: not deleted and created again.
        assert hpa["metadata"]["uid"] == before["metadata"]["uid"]
        # Its own label and annotation stay; ours are added; the spec is the SPA's.
        assert hpa["metadata"]["labels"] == {"team": "shop", MANAGED_BY_LABEL: FIELD_MANAGER}
        assert hpa["metadata"]["annotations"]["note"] == "made by hand"
        assert SPEC_HASH_ANNOTATION in hpa["metadata"]["annotations"]
        assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 10)
        assert hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
        # The fields it set are the controller's field manager's now; the rest stay the user's.
        [mine] = _ours(hpa)
        assert "f:ownerReferences" in mine["fieldsV1"]["f:metadata"]
        assert "f:minReplicas" in mine["fieldsV1"]["f:spec"]
        [theirs] = [e for e in hpa["metadata"]["managedFields"] if e["manager"] == BY_HAND]
        assert "f:team" in theirs["fieldsV1"]["f:metadata"]["f:labels"]
        assert "f:minReplicas" not in theirs["fieldsV1"].get("f:spec", {})
        await condition_becomes(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web", "Available")
        await eventually(lambda: "Adopted" in reasons(kube, namespace), what="Adopted event")
        assert "HPAConflict" not in reasons(kube, namespace)
        assert kubectl_spa_status(cluster.kubeconfig, namespace)["state"] == "InSync"

        # From now on it is the SPA's generated HPA: deleting the SPA deletes it (the real
        # garbage collector of kube-controller-manager).
        kube.delete(SCHEDULED_POD_AUTOSCALERS, namespace, "web")
        await eventually(lambda: gone(kube, namespace), within=60, what="HPA collected")


async def test_without_the_annotation_the_hpa_is_left_alone_until_asked(
    controller: Running, kube: Kube, namespace: str
) -> None:
    before = create_users_hpa(kube, namespace)
    kube.create(autoscaler(name="web", namespace=namespace))
    status = await condition_becomes(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web", "Degraded")
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "HPAConflict"
    assert f'{ADOPT_ANNOTATION}="true" to adopt it' in ready["message"]
    await eventually(lambda: "HPAConflict" in reasons(kube, namespace), what="HPAConflict")
    assert untouched(before, kube.hpa(namespace, "web"))

    # Asked later (kubectl annotate): the SPA's watch event brings the adoption.
    kube.merge(
        SCHEDULED_POD_AUTOSCALERS,
        namespace,
        "web",
        {"metadata": {"annotations": {ADOPT_ANNOTATION: "true"}}},
    )
    await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), what="bounds converge")
    await condition_becomes(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web", "Available")
    assert kube.hpa(namespace, "web")["metadata"]["ownerReferences"][0]["name"] == "web"


@pytest.mark.parametrize(
    ("hpa_target", "value", "why"),
    [
        (
            "api",
            "true",
            "adoption refused: its scaleTargetRef is Deployment/api (apps/v1), not the "
            "ScheduledPodAutoscaler's Deployment/web (apps/v1)",
        ),
        ("web", "yes", f'adoption refused: metadata.annotations["{ADOPT_ANNOTATION}"]: must be'),
    ],
)
async def test_an_adoption_that_is_not_safe_is_refused_and_said(
    cluster: Any,
    controller: Running,
    kube: Kube,
    namespace: str,
    hpa_target: str,
    value: str,
    why: str,
) -> None:
    before = create_users_hpa(kube, namespace, hpa_target)
    kube.create(asking(namespace, value))
    status = await condition_becomes(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web", "Degraded")
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "HPAAdoptionRefused"
    assert why in ready["message"]
    await eventually(
        lambda: "HPAAdoptionRefused" in reasons(kube, namespace), what="HPAAdoptionRefused"
    )
    hpa = kube.hpa(namespace, "web")
    assert untouched(before, hpa)
    assert "ownerReferences" not in hpa["metadata"]
    shown = kubectl_spa_status(cluster.kubeconfig, namespace)
    assert shown["state"] == "AdoptionRefused"
    assert why.removeprefix("adoption refused: ") in shown["detail"]


async def test_the_documented_undo_keeps_the_hpa(
    cluster: Any, controller: Running, kube: Kube, namespace: str
) -> None:
    """docs/operations.md, "To undo": drop the annotation, then the ownerReference and the
    label in one kubectl patch, then delete the SPA; the HPA stays, with the SPA's spec."""
    create_users_hpa(kube, namespace)
    kube.create(asking(namespace))
    await eventually(lambda: kube.bounds(namespace, "web") == (3, 10), what="adopted")
    for command in (
        ["annotate", "spa", "web", f"{ADOPT_ANNOTATION}-"],
        [
            "patch",
            "hpa",
            "web",
            "--type=json",
            "-p",
            '[{"op": "remove", "path": "/metadata/ownerReferences"},'
            ' {"op": "remove", "path": "/metadata/labels/app.kubernetes.io~1managed-by"}]',
        ],
    ):
        cluster.run_kubectl(*command, "-n", namespace, check=True)
    # Not taken back: the SPA no longer asks, and the HPA is no longer one of ours.
    await condition_becomes(kube, SCHEDULED_POD_AUTOSCALERS, namespace, "web", "Degraded")
    cluster.run_kubectl("delete", "spa", "web", "-n", namespace, check=True)
    await eventually(
        lambda: not kube.client.list(SCHEDULED_POD_AUTOSCALERS, namespace=namespace).items,
        what="SPA deleted",
    )
    hpa = kube.hpa(namespace, "web")
    assert "ownerReferences" not in hpa["metadata"]
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 10)
    assert hpa["metadata"]["labels"] == {"team": "shop"}
