"""spa.kube pieces that need no server: paths, error mapping, the token bucket.
(Requests themselves are tested against the real API server in tests/integration.)"""

from __future__ import annotations

import itertools
import json
import socket
import ssl
import threading
import time

import pytest

from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS
from spa.kube import (
    CONFIGMAP,
    EVENT,
    HPA_V2,
    LEASE,
    ApiError,
    ApiUnavailable,
    Conflict,
    Forbidden,
    Gone,
    NamespaceDeleted,
    NamespaceGone,
    NamespaceTerminating,
    NotFound,
    Resource,
    TokenBucket,
    TooManyRequests,
    error_from_status,
)
from tests.builders import namespace_gone, namespace_terminating


def test_paths_for_core_group_and_custom_resources() -> None:
    assert CONFIGMAP.collection_path() == "/api/v1/configmaps"
    assert CONFIGMAP.collection_path("ns") == "/api/v1/namespaces/ns/configmaps"
    assert EVENT.object_path("ns", "e.1") == "/api/v1/namespaces/ns/events/e.1"
    assert (
        SCHEDULED_POD_AUTOSCALERS.object_path("ns", "web", subresource="status")
        == "/apis/autoscaling.d-kuro.github.io/v1/namespaces/ns/scheduledpodautoscalers/web/status"
    )
    assert HPA_V2.api_version == "autoscaling/v2"
    assert LEASE.collection_path("kube-system") == (
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    )
    nodes = Resource("", "v1", "nodes", "Node", False)
    assert nodes.object_path(None, "n1") == "/api/v1/nodes/n1"
    with pytest.raises(ValueError, match="cluster-scoped"):
        nodes.collection_path("ns")
    with pytest.raises(ValueError, match="namespace is required"):
        CONFIGMAP.object_path(None, "x")
    # A hostile name cannot escape its path segment.
    assert CONFIGMAP.object_path("ns", "../x") == "/api/v1/namespaces/ns/configmaps/..%2Fx"


@pytest.mark.parametrize(
    ("status", "cls"),
    [(403, Forbidden), (404, NotFound), (409, Conflict), (410, Gone), (429, TooManyRequests)],
)
def test_status_maps_to_error_class(status: int, cls: type[ApiError]) -> None:
    body = json.dumps({"kind": "Status", "code": status, "reason": "R", "message": "m"}).encode()
    error = error_from_status(status, body)
    assert type(error) is cls
    assert (error.status, error.reason, error.message) == (status, "R", "m")


def test_status_code_in_body_wins_and_retry_after_is_read() -> None:
    # A watch reports 410 inside a 200 stream, as an ERROR event's Status object.
    assert isinstance(error_from_status(500, {"kind": "Status", "code": 410}), Gone)
    error = error_from_status(
        429,
        {"kind": "Status", "code": 429, "details": {"retryAfterSeconds": 3}},
    )
    assert error.retry_after == 3.0
    assert error_from_status(429, b"", retry_after=1.5).retry_after == 1.5
    plain = error_from_status(502, b"<html>bad gateway</html>")
    assert type(plain) is ApiError
    assert "bad gateway" in plain.message


def test_a_create_refused_in_a_namespace_being_deleted_is_known_by_its_cause() -> None:
    # The 403 the API server answers to a create in a namespace being deleted, as the client
    # reads it off the wire: a Forbidden (what handles a 403 still does), of its own kind.
    body = json.dumps(namespace_terminating(resource="events", group="", name="web.1")).encode()
    error = error_from_status(403, body)
    assert type(error) is NamespaceTerminating
    assert isinstance(error, Forbidden)
    assert isinstance(error, NamespaceDeleted)
    assert error.details["kind"] == "events"
    assert error.resource == "events"  # without the client's word, the details say it
    assert "being terminated" in error.message
    # Once the namespace is gone: a 404 that names the namespace, not the object.
    gone = error_from_status(404, json.dumps(namespace_gone()).encode(), resource="events")
    assert type(gone) is NamespaceGone
    assert isinstance(gone, NotFound)
    assert isinstance(gone, NamespaceDeleted)
    assert gone.resource == "events"
    missing = {"kind": "Status", "code": 404, "details": {"name": "web", "kind": "events"}}
    assert type(error_from_status(404, missing)) is NotFound
    # A 403 of RBAC, even one whose message speaks of a namespace, is not: only the cause is.
    rbac = error_from_status(
        403,
        {
            "kind": "Status",
            "code": 403,
            "reason": "Forbidden",
            "message": 'events is forbidden: User "x" cannot create resource "events" in the '
            'namespace "shop" because it is being terminated',
            "details": {"kind": "events", "causes": [{"reason": "FieldValueForbidden"}]},
        },
    )
    assert type(rbac) is Forbidden


def test_token_bucket_allows_burst_then_paces_at_qps() -> None:
    bucket = TokenBucket(qps=50, burst=5)
    waits = [bucket.reserve() for _ in range(10)]
    assert waits[:5] == [0.0] * 5
    # Reservations beyond the burst are spaced 1/qps apart.
    for earlier, later in itertools.pairwise(waits[5:]):
        assert later - earlier == pytest.approx(0.02, abs=0.005)


def test_token_bucket_is_thread_safe_and_enforces_the_rate() -> None:
    bucket = TokenBucket(qps=100, burst=1)
    started = time.monotonic()
    threads = [
        threading.Thread(target=lambda: [bucket.acquire() for _ in range(5)]) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # 20 requests at 100/s with a burst of 1 take at least ~0.19 s.
    assert time.monotonic() - started >= 0.18


@pytest.mark.parametrize(
    ("inner", "cause"),
    [
        # asyncio's own words name the address; the errno says why.
        (OSError(111, "Connect call failed ('127.0.0.1', 6443)"), "[Errno 111] Connection refused"),
        (
            ConnectionResetError(104, "Connection reset by peer"),
            "[Errno 104] Connection reset by peer",
        ),
        (socket.gaierror(-2, "Name or service not known"), "[Errno -2] Name or service not known"),
        (
            ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify"),
            "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify",
        ),
        (TimeoutError(), "TimeoutError"),
    ],
)
def test_the_cause_of_a_transport_failure_is_what_a_person_can_act_on(
    inner: Exception, cause: str
) -> None:
    def fail() -> None:
        try:
            raise inner
        except Exception as error:
            raise ApiUnavailable("GET /api: ...") from error

    with pytest.raises(ApiUnavailable) as unavailable:
        fail()
    assert unavailable.value.cause.startswith(cause)
