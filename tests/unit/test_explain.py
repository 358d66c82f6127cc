"""The one explanation of a cluster that cannot be used (spa.controller.main.explain), shared by
`spa run` and the commands that read a cluster: every kind of failure maps to its exit status of
docs/operations.md, "Exit codes", and says what failed. tests/integration/test_spa_run_failures.py
and test_kubectl_spa.py meet most of them on a real control plane; the answers a healthy test
control plane never gives (a 5xx, a 404 for a built-in resource) are checked here."""

from __future__ import annotations

import pytest

from spa.controller.exitcodes import (
    EXIT_FORBIDDEN,
    EXIT_NO_CRDS,
    EXIT_UNAUTHORIZED,
    EXIT_UNREACHABLE,
)
from spa.controller.main import explain
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import (
    HPA_V2,
    ApiError,
    ApiUnavailable,
    Resource,
    error_from_status,
)

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
