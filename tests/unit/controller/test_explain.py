"""The one explanation of a cluster that cannot be used (spa.controller.failures.explain),
shared by `spa run` and the commands that read a cluster: every kind of failure maps to its exit
status of docs/operations.md, "Exit codes", and says what failed.
tests/integration/test_spa_run_failures.py and test_kubectl_spa.py meet most of them on a real
control plane; the answers a healthy test control plane never gives (a 5xx, a 404 for a built-in
resource) are checked here, with which CRDs the start-up check requires and what a command makes
of a calendar CRD not installed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from spa.api import GROUP
from spa.cli.cluster import Scope, read_cluster
from spa.controller.exitcodes import (
    EXIT_FORBIDDEN,
    EXIT_NO_CRDS,
    EXIT_UNAUTHORIZED,
    EXIT_UNREACHABLE,
)
from spa.controller.failures import ClusterFailure, explain
from spa.controller.main import check_cluster
from spa.controller.resources import CALENDARS, SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import (
    HPA_V2,
    ApiError,
    ApiUnavailable,
    BlockingKubeClient,
    ListResult,
    Resource,
    error_from_status,
)
from tests import builders
from tests.builders import DAILY_NOON
from tests.client_double import UnexpectedRequests

SERVER = "https://10.96.0.1:443"


def unreachable() -> ApiUnavailable:
    try:
        raise ApiUnavailable("GET /apis failed") from ConnectionRefusedError(
            111, "Connection refused"
        )
    except ApiUnavailable as error:
        return error


def status(code: int, reason: str, message: str) -> ApiError:
    return error_from_status(
        code, {"kind": "Status", "code": code, "reason": reason, "message": message}
    )


@pytest.mark.parametrize(
    ("error", "resource", "exit_status", "message"),
    [
        (
            unreachable(),
            SCHEDULES,
            EXIT_UNREACHABLE,
            f"cannot reach the API server at {SERVER}: [Errno 111] Connection refused",
        ),
        (
            status(401, "Unauthorized", "Unauthorized"),
            SCHEDULES,
            EXIT_UNAUTHORIZED,
            f"the API server at {SERVER} does not accept the credentials (401 Unauthorized)",
        ),
        (
            status(403, "Forbidden", 'User "bob" cannot list resource "schedules"'),
            SCHEDULES,
            EXIT_FORBIDDEN,
            f"not allowed to list {SCHEDULES} in namespace shop: "
            'User "bob" cannot list resource "schedules" (the RBAC of config/rbac grants it)',
        ),
        (
            status(404, "NotFound", "the server could not find the requested resource"),
            SCHEDULED_POD_AUTOSCALERS,
            EXIT_NO_CRDS,
            f"the API server at {SERVER} does not serve {SCHEDULED_POD_AUTOSCALERS}: install "
            "the CRDs (config/crd or config/install/install.yaml)",
        ),
        (
            status(404, "NotFound", "the server could not find the requested resource"),
            HPA_V2,
            EXIT_UNREACHABLE,
            f"the API server at {SERVER} answered 404 NotFound to list {HPA_V2} in namespace "
            "shop: the server could not find the requested resource",
        ),
        (
            status(503, "ServiceUnavailable", "etcdserver: request timed out"),
            SCHEDULES,
            EXIT_UNREACHABLE,
            f"the API server at {SERVER} answered 503 ServiceUnavailable to list {SCHEDULES} "
            "in namespace shop: etcdserver: request timed out",
        ),
    ],
)
def test_each_failure_has_its_status_and_words(
    error: ApiUnavailable | ApiError, resource: Resource, exit_status: int, message: str
) -> None:
    failure = explain(
        SERVER,
        error,
        resource,
        where="in namespace shop",
        rbac_hint="the RBAC of config/rbac grants it",
    )
    assert (failure.status, failure.message) == (exit_status, message)


def test_a_forbidden_discovery_names_its_action() -> None:
    failure = explain(
        SERVER, status(403, "Forbidden", "no discovery for you"), HPA_V2, action="discover"
    )
    assert (failure.status, failure.message) == (
        EXIT_FORBIDDEN,
        f"not allowed to discover {HPA_V2}: no discovery for you",
    )


class Cluster(UnexpectedRequests):
    """The requests of `spa run`'s start-up check, answered as a server whose CRDs are
    `served` (by plural) and that forbids the lists of `forbidden`; every list asked, in order."""

    host = SERVER

    def __init__(self, served: set[str], forbidden: frozenset[str] = frozenset()) -> None:
        self.served = served
        self.forbidden = forbidden
        self.lists: list[tuple[str, str | None]] = []

    async def first_page(
        self, resource: Resource, *, namespace: str | None = None, **_: Any
    ) -> ListResult:
        self.lists.append((resource.plural, namespace))
        if resource.group == GROUP and resource.plural not in self.served:
            raise status(404, "NotFound", "the server could not find the requested resource")
        if resource.plural in self.forbidden:
            raise status(403, "Forbidden", f'cannot list resource "{resource.plural}"')
        return ListResult([], "1")

    async def serves(self, group_version: str) -> bool:
        return True


def check(cluster: Cluster, namespaces: list[str] | None) -> Resource:
    return asyncio.run(check_cluster(cluster, namespaces))


def test_only_the_spa_and_schedule_crds_are_required_at_start() -> None:
    # No calendar CRD: the start goes on (docs/runtime.md, "Optional kinds"); their lists are
    # asked once each, and no more for the other namespaces once a Calendar list says 404.
    cluster = Cluster({"scheduledpodautoscalers", "schedules"})
    assert check(cluster, ["shop", "pay"]) == HPA_V2
    asked = [plural for plural, _ in cluster.lists]
    assert asked.count("calendars") == 1
    assert asked.count("clustercalendars") == 1
    # Without the SPA CRD, it still does not start.
    with pytest.raises(ClusterFailure) as failure:
        check(Cluster({"schedules", "calendars", "clustercalendars"}), None)
    assert failure.value.status == EXIT_NO_CRDS


def test_a_calendar_kind_served_but_forbidden_still_stops_the_start() -> None:
    # Served: its informer will list it, so RBAC must allow that from the start.
    everything = {"scheduledpodautoscalers", "schedules", "calendars", "clustercalendars"}
    with pytest.raises(ClusterFailure) as failure:
        check(Cluster(everything, frozenset({"clustercalendars"})), ["shop"])
    assert failure.value.status == EXIT_FORBIDDEN
    assert "clustercalendars" in failure.value.message


class Lists(BlockingKubeClient):
    """A blocking client that lists the SPAs and a Schedule referring to a Calendar, on a
    server without the Calendar CRD; it is not connected (nothing else is asked of it)."""

    def __init__(self) -> None:
        pass

    @property
    def host(self) -> str:
        return SERVER

    def list(self, resource: Resource, **_: Any) -> ListResult:
        if resource.plural == "calendars":
            raise status(404, "NotFound", "the server could not find the requested resource")
        if resource.plural == "schedules":
            schedule = builders.schedule(calendars=[{"name": "freeze"}], **DAILY_NOON)
            return ListResult([schedule], "1")
        return ListResult([builders.autoscaler()], "1")


def test_a_command_reads_a_cluster_without_the_calendar_crd_and_says_so() -> None:
    objects = read_cluster(Scope(Lists(), "shop"), everything=False)
    assert objects.calendars == []
    assert objects.problems == [
        f"the API server at {SERVER} does not serve {CALENDARS}: install the CRDs (config/crd "
        "or config/install/install.yaml): the Schedules' references to Calendars are shown as "
        "not found"
    ]
