"""The start-time check of what placeholder pods may do (spa/controller/permissions.py):
SelfSubjectAccessReviews for exactly the grants they need, one log line, one gauge, and the
message an SPA's CapacityReady condition carries without them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from prometheus_client import REGISTRY

from spa.controller.permissions import Permission, placeholder_access, pod_access
from spa.kube import SELF_SUBJECT_ACCESS_REVIEW, ApiUnavailable, Resource
from tests.client_double import UnexpectedRequests


@dataclass
class Reviews(UnexpectedRequests):
    """The API server's SelfSubjectAccessReviews: allowed what `granted` holds."""

    granted: set[Permission] = field(default_factory=set)
    asked: list[Permission] = field(default_factory=list)
    down: bool = False

    async def create(
        self, resource: Resource, namespace: str | None, body: Mapping[str, Any], **_: Any
    ) -> dict[str, Any]:
        assert resource == SELF_SUBJECT_ACCESS_REVIEW
        assert namespace is None
        if self.down:
            raise ApiUnavailable("connection refused")
        attributes = body["spec"]["resourceAttributes"]
        asked = Permission(
            attributes["verb"],
            attributes["resource"],
            attributes["namespace"],
            group=attributes["group"],
        )
        self.asked.append(asked)
        return {"status": {"allowed": asked in self.granted}}


WRITES = {
    Permission(verb, "deployments", "scheduled-pod-autoscaler")
    for verb in ("get", "list", "watch", "create", "patch", "delete")
}
TEMPLATES = {Permission("get", kind) for kind in ("deployments", "statefulsets", "replicasets")}


def gauge() -> float | None:
    return REGISTRY.get_sample_value("spa_capacity_placeholders_permitted")


def check(reviews: Reviews, namespaces: list[str] | None = None) -> Any:
    return asyncio.run(
        placeholder_access(
            reviews,
            namespaces=namespaces,
            placeholder_namespace="scheduled-pod-autoscaler",
        )
    )


def test_with_the_placeholder_option_everything_is_permitted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reviews = Reviews(granted=WRITES | TEMPLATES)
    with caplog.at_level(logging.INFO, logger="spa.controller.permissions"):
        access = check(reviews)
    assert access.permitted
    assert access.denied is None
    assert set(reviews.asked) == WRITES | TEMPLATES
    assert gauge() == 1
    assert [r.getMessage() for r in caplog.records] == [
        "placeholder pods permitted: pod templates readable, placeholder Deployments in "
        "namespace scheduled-pod-autoscaler"
    ]


def test_the_default_install_is_told_what_it_lacks_and_how_to_grant_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="spa.controller.permissions"):
        access = check(Reviews(granted=set(WRITES)))
    assert not access.permitted
    assert access.denied == (
        "the controller is not allowed to get deployments.apps in all namespaces, get "
        "replicasets.apps in all namespaces, get statefulsets.apps in all namespaces: enable "
        "placeholder pods: Helm value capacity.placeholders.enabled=true, or the kustomize "
        'component config/components/placeholders (docs/install.md, "Placeholder pods")'
    )
    assert gauge() == 0
    assert len(caplog.records) == 1
    assert access.denied in caplog.records[0].getMessage()


def test_a_namespaced_install_is_asked_about_its_namespaces_only() -> None:
    reviews = Reviews(granted=set(WRITES))
    check(reviews, ["shop", "payments"])
    asked = {p for p in reviews.asked if p.resource != "deployments" or p.verb == "get"}
    assert {p.namespace for p in asked if p not in WRITES} == {"shop", "payments"}


def test_an_api_server_that_does_not_answer_leaves_it_to_the_writes() -> None:
    assert check(Reviews(down=True)) is None


def test_without_the_role_of_the_controllers_namespace_placeholders_are_not_cached() -> None:
    """An informer the API server refuses would keep the controller from being ready."""
    assert check(Reviews(granted=WRITES)).may_cache
    without_list = WRITES - {Permission("list", "deployments", "scheduled-pod-autoscaler")}
    access = check(Reviews(granted=without_list | TEMPLATES))
    assert not access.may_cache
    assert "list deployments.apps in namespace scheduled-pod-autoscaler" in access.denied


def test_the_read_of_a_target_goes_by_the_answer_for_its_namespace_or_all() -> None:
    """Window readiness makes no request the start's reviews said no to (docs/install.md,
    "Window readiness")."""
    assert check(Reviews(granted=WRITES | TEMPLATES)).may_get("deployments", "shop")
    default = check(Reviews(granted=set(WRITES)))
    assert not default.may_get("deployments", "shop")
    assert not default.may_get("statefulsets", "shop")
    namespaced = check(
        Reviews(granted=set(WRITES) | {Permission("get", "deployments", "shop")}),
        ["shop", "payments"],
    )
    assert namespaced.may_get("deployments", "shop")
    assert not namespaced.may_get("deployments", "payments")
    assert not namespaced.may_get("replicasets", "shop")


# -- the pods' wait for nodes: list on pods, the placeholder option's too ---------------------

PODS = Permission("list", "pods", group="")


def pods_gauge() -> float | None:
    return REGISTRY.get_sample_value("spa_pod_waits_permitted")


def test_with_the_placeholder_option_the_pods_wait_is_measured(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reviews = Reviews(granted={PODS})
    with caplog.at_level(logging.INFO, logger="spa.controller.permissions"):
        access = asyncio.run(pod_access(reviews, namespaces=None))
    assert access is not None
    assert access.may_list("shop")
    assert reviews.asked == [PODS]
    assert pods_gauge() == 1
    assert [r.getMessage() for r in caplog.records] == [
        "pods' wait for nodes measured (status.windows[].podsWaitedSeconds): the controller "
        "may list pods"
    ]


def test_without_it_one_line_says_what_is_not_measured_and_how_to_grant_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="spa.controller.permissions"):
        access = asyncio.run(pod_access(Reviews(granted=WRITES | TEMPLATES), namespaces=None))
    assert access is not None
    assert not access.may_list("shop")
    assert pods_gauge() == 0
    assert [r.getMessage() for r in caplog.records] == [
        "pods' wait for nodes not measured (status.windows[].podsWaitedSeconds): the "
        "controller is not allowed to list pods in all namespaces: enable placeholder pods: "
        "Helm value capacity.placeholders.enabled=true, or the kustomize component "
        'config/components/placeholders (docs/install.md, "Placeholder pods")'
    ]


def test_a_namespaced_install_is_asked_about_listing_pods_in_its_namespaces() -> None:
    reviews = Reviews(granted={Permission("list", "pods", "shop", group="")})
    access = asyncio.run(pod_access(reviews, namespaces=["shop", "payments"]))
    assert access is not None
    assert {p.namespace for p in reviews.asked} == {"shop", "payments"}
    assert access.may_list("shop")
    assert not access.may_list("payments")


def test_an_api_server_that_does_not_answer_leaves_the_list_to_be_tried() -> None:
    assert asyncio.run(pod_access(Reviews(down=True), namespaces=None)) is None
