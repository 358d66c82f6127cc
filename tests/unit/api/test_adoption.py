"""Adopting an HPA somebody made before the SPA, on request (spa/api/adoption.py; docs/api.md,
"Adopting an existing HPA"): the rule alone, then the real Reconciler against the model of the
API server (tests/unit/spa_model.py). tests/integration/test_adoption.py does it on a real
control plane."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from spa.api import FieldError
from spa.api.adoption import ADOPT_ANNOTATION, Takeover, Verdict, adopt_requested, takeover
from spa.controller.decide import PatchHpa, Plan, Snapshot, decide
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL, SPEC_HASH_ANNOTATION
from spa.kube import Conflict
from spa.runtime import Result
from tests.unit.spa_model import OURS, Server, at, autoscaler, hpa_writes, schedule

TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
DEPLOYMENT_OWNER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "name": "web",
    "uid": "uid-deployment",
    "controller": True,
}
ASKED = {ADOPT_ANNOTATION: "true"}


def users_hpa(
    target: dict[str, Any] | None = None, owners: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """An HPA made by hand (or by another tool) with the SPA's name."""
    metadata: dict[str, Any] = {
        "name": "web",
        "namespace": "shop",
        "uid": "uid-hpa",
        "resourceVersion": "5",
        "labels": {"team": "shop"},
        "annotations": {"note": "made by hand"},
    }
    if owners is not None:
        metadata["ownerReferences"] = owners
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": metadata,
        "spec": {
            "scaleTargetRef": dict(target or TARGET),
            "minReplicas": 2,
            "maxReplicas": 4,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}},
        },
    }


# -- the rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "hpa", "verdict"),
    [
        # Not asked: left alone, and whether it could be adopted is said.
        (None, users_hpa(), Verdict(Takeover.LEAVE)),
        ({ADOPT_ANNOTATION: "false"}, users_hpa(), Verdict(Takeover.LEAVE)),
        # Asked, no controller, same workload: adopted, whatever else owns it.
        (ASKED, users_hpa(), Verdict(Takeover.ADOPT)),
        (
            ASKED,
            users_hpa(owners=[{**DEPLOYMENT_OWNER, "controller": False}]),
            Verdict(Takeover.ADOPT),
        ),
        # Another version of the same group names the same Deployment.
        (ASKED, users_hpa({**TARGET, "apiVersion": "apps/v1beta2"}), Verdict(Takeover.ADOPT)),
    ],
)
def test_adoption_needs_the_request_and_an_uncontrolled_hpa_of_the_same_workload(
    annotations: dict[str, str] | None, hpa: dict[str, Any], verdict: Verdict
) -> None:
    assert takeover(annotations, hpa, target=TARGET) == verdict


@pytest.mark.parametrize("annotations", [None, ASKED])
def test_a_controlled_hpa_is_never_adopted(annotations: dict[str, str] | None) -> None:
    found = takeover(annotations, users_hpa(owners=[DEPLOYMENT_OWNER]), target=TARGET)
    assert found.takeover is (Takeover.REFUSE if annotations else Takeover.LEAVE)
    assert found.why is not None
    assert found.why.startswith("it is controlled by Deployment web")


@pytest.mark.parametrize(
    ("theirs", "shown"),
    [
        ({**TARGET, "name": "api"}, "Deployment/api (apps/v1)"),
        ({**TARGET, "kind": "StatefulSet"}, "StatefulSet/web (apps/v1)"),
        ({**TARGET, "apiVersion": "example.com/v1"}, "Deployment/web (example.com/v1)"),
    ],
)
def test_an_hpa_of_another_workload_is_refused(theirs: dict[str, Any], shown: str) -> None:
    found = takeover(ASKED, users_hpa(theirs), target=TARGET)
    assert found == Verdict(
        Takeover.REFUSE,
        f"its scaleTargetRef is {shown}, not the ScheduledPodAutoscaler's Deployment/web (apps/v1)",
    )


@pytest.mark.parametrize("value", ["True", "yes", "1", ""])
def test_a_malformed_request_is_refused_with_the_annotation_named(value: str) -> None:
    requested = adopt_requested({ADOPT_ANNOTATION: value})
    assert requested == FieldError(
        f'metadata.annotations["{ADOPT_ANNOTATION}"]', f'must be "true" or "false", not {value!r}'
    )
    found = takeover({ADOPT_ANNOTATION: value}, users_hpa(), target=TARGET)
    assert found == Verdict(Takeover.REFUSE, str(requested))


# -- the controller --------------------------------------------------------------------------------


def asking(**annotations: str) -> dict[str, Any]:
    """The SPA of spa_model, with annotations."""
    return autoscaler(annotations=dict(annotations))


def test_an_hpa_is_adopted_in_one_write_then_converges_and_is_announced() -> None:
    server = Server(asking(**ASKED), [schedule("peak", owner=OURS)], hpa=users_hpa())
    final, memory, _ = server.reconcile(at(10, 30))
    adopting = [p.action for p in server.plans if isinstance(p.action, PatchHpa)]
    assert [write.adopts for write in adopting] == [True]
    # The create met the name (409), the HPA was read, then one patch adopted it.
    assert hpa_writes(server) == ["patch"]
    assert server.hpa is not None
    metadata = server.hpa["metadata"]
    assert metadata["ownerReferences"] == [OURS]
    assert OURS["controller"]
    assert OURS["blockOwnerDeletion"]
    # The user's labels and annotations stay; ours are added.
    assert metadata["labels"] == {"team": "shop", MANAGED_BY_LABEL: FIELD_MANAGER}
    assert metadata["annotations"]["note"] == "made by hand"
    assert SPEC_HASH_ANNOTATION in metadata["annotations"]
    # Its spec is the SPA's, with the window's bounds; a field the SPA lacks is gone.
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (5, 20)
    assert "behavior" not in server.hpa["spec"]
    assert final.events == ()  # the statuses and the Event wait for the next pass
    assert memory.adopted
    # The next pass finds it in sync (it is in the label-filtered cache now), and says so once.
    final, memory, _ = server.reconcile(at(10, 30), memory)
    # (The window active now is announced too, as on any first pass that applies it.)
    assert [(e.type, e.reason) for e in final.events] == [
        ("Normal", "Adopted"),
        ("Normal", "ScheduleStarted"),
    ]
    assert "adopted HorizontalPodAutoscaler shop/web" in final.events[0].message
    assert server.autoscaler is not None
    assert server.autoscaler["status"]["condition"] == "Available"
    assert not memory.adopted
    assert not memory.foreign_hpa
    final, _, _ = server.reconcile(at(10, 30), memory)
    assert final.events == ()
    assert hpa_writes(server) == ["patch"]


@pytest.mark.parametrize(
    ("annotations", "hpa", "reason", "message"),
    [
        (
            {},
            users_hpa(),
            "HPAConflict",
            f"it is left untouched (delete it, rename the ScheduledPodAutoscaler, or annotate the "
            f'ScheduledPodAutoscaler {ADOPT_ANNOTATION}="true" to adopt it)',
        ),
        (
            {ADOPT_ANNOTATION: "false"},
            users_hpa({**TARGET, "name": "api"}),
            "HPAConflict",
            "it cannot be adopted: its scaleTargetRef is Deployment/api",
        ),
        (
            ASKED,
            users_hpa({**TARGET, "name": "api"}),
            "HPAAdoptionRefused",
            "adoption refused: its scaleTargetRef is Deployment/api (apps/v1), not the "
            "ScheduledPodAutoscaler's Deployment/web (apps/v1)",
        ),
        (
            ASKED,
            users_hpa(owners=[DEPLOYMENT_OWNER]),
            "HPAAdoptionRefused",
            "adoption refused: it is controlled by Deployment web",
        ),
        (
            {ADOPT_ANNOTATION: "yes"},
            users_hpa(),
            "HPAAdoptionRefused",
            f'adoption refused: metadata.annotations["{ADOPT_ANNOTATION}"]: must be',
        ),
    ],
)
def test_an_hpa_not_adopted_is_left_untouched_and_the_spa_says_why_once(
    annotations: dict[str, str], hpa: dict[str, Any], reason: str, message: str
) -> None:
    before = copy.deepcopy(hpa)
    server = Server(asking(**annotations), [], hpa=hpa)
    final, memory, _ = server.reconcile(at(9))
    assert hpa_writes(server) == []
    assert server.hpa == before
    assert [(e.type, e.reason) for e in final.events] == [("Warning", reason)]
    assert message in final.events[0].message
    assert server.autoscaler is not None
    status = server.autoscaler["status"]
    assert status["condition"] == "Degraded"
    [ready] = [c for c in status["conditions"] if c["type"] == "Ready"]
    assert (ready["reason"], ready["message"]) == (reason, final.events[0].message)
    # Looked at again in a while (the label-filtered cache cannot see it change); said once.
    assert server.result == Result(requeue_after=60.0)
    final, _, _ = server.reconcile(at(9), memory)
    assert final.events == ()


def test_asking_later_adopts_an_hpa_left_alone_before() -> None:
    server = Server(asking(), [], hpa=users_hpa())
    _, memory, _ = server.reconcile(at(9))
    assert memory.foreign_hpa
    assert server.autoscaler is not None
    server.autoscaler["metadata"]["annotations"] = dict(ASKED)  # kubectl annotate
    server.reconcile(at(9), memory)
    assert hpa_writes(server) == ["patch"]
    assert server.hpa is not None
    assert server.hpa["metadata"]["ownerReferences"] == [OURS]


def test_an_hpa_that_changed_since_it_was_read_is_not_adopted_by_that_write() -> None:
    """The adopting patch replaces ownerReferences whole: a controller reference added since
    the HPA was read must fail the write (a compare-and-swap), never be dropped."""
    server = Server(asking(**ASKED), [], hpa=users_hpa())

    def meanwhile(snapshot: Snapshot) -> Plan:
        plan = decide(snapshot)
        if isinstance(plan.action, PatchHpa) and plan.action.adopts:
            assert server.hpa is not None
            server.hpa["metadata"]["ownerReferences"] = [DEPLOYMENT_OWNER]
            server.hpa["metadata"]["resourceVersion"] = "6"
        return plan

    with pytest.raises(Conflict):  # the work queue retries the key with backoff
        server.reconcile(at(9), decision=meanwhile)
    assert server.hpa is not None
    assert server.hpa["metadata"]["ownerReferences"] == [DEPLOYMENT_OWNER]
    assert hpa_writes(server) == []
    # The retry reads it again, and refuses: it has a controller now.
    final, _, _ = server.reconcile(at(9))
    assert [e.reason for e in final.events] == ["HPAAdoptionRefused"]
    assert hpa_writes(server) == []


def test_an_adoption_the_api_server_refuses_is_retried_with_backoff() -> None:
    server = Server(asking(**ASKED), [], hpa=users_hpa(), refuse=403)
    final, _, _ = server.reconcile(at(9))
    assert hpa_writes(server) == []
    assert [e.reason for e in final.events] == ["HPAAdoptionRefused"]
    assert "the API server refused its adoption: spec is invalid" in final.events[0].message
    assert server.result is not None
    assert server.result.retry
