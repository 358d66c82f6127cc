"""EventRecorder: aggregation of repeats, expiry, and never raising into the caller."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from prometheus_client import REGISTRY

from spa.kube import ApiUnavailable, NotFound, Resource, error_from_status
from spa.runtime import EventRecorder, FakeClock, TerminatingNamespaces
from spa.runtime.events import event_name
from tests.builders import autoscaler, namespace_gone, namespace_terminating
from tests.client_double import UnexpectedRequests

SPA = autoscaler(metadata={"uid": "u-1", "resourceVersion": "7"})


class RecordingClient(UnexpectedRequests):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.fail_next: Exception | None = None
        # Namespaces being deleted or gone: a create there is answered with this Status.
        self.deleted: dict[str, dict[str, Any]] = {}

    def _maybe_fail(self) -> None:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error

    async def create(
        self, resource: Resource, namespace: str | None, body: Mapping[str, Any], **_: Any
    ) -> dict[str, Any]:
        self._maybe_fail()
        answer = self.deleted.get(namespace or "")
        if answer is not None:
            # As spa.kube's client raises it: the answer's bytes, about the resource asked.
            raise error_from_status(
                int(answer["code"]), json.dumps(answer).encode(), resource=resource.plural
            )
        self.calls.append(("create", body))
        return dict(body)

    async def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        **kw: Any,
    ) -> dict[str, Any]:
        self._maybe_fail()
        self.calls.append(("patch", (namespace, name, body, kw["patch_type"])))
        return {}


def dropped() -> float:
    return REGISTRY.get_sample_value("spa_events_dropped_total") or 0.0


def not_made(resource: str) -> float:
    return (
        REGISTRY.get_sample_value("spa_namespace_terminating_writes_total", {"resource": resource})
        or 0.0
    )


def make(*, max_queued: int = 1000) -> tuple[EventRecorder, RecordingClient, FakeClock]:
    client = RecordingClient()
    clock = FakeClock(start=1_767_225_600.0)
    recorder = EventRecorder(
        client,
        clock=clock,
        instance="pod-1",
        aggregation_window=300,
        max_queued=max_queued,
    )
    return recorder, client, clock


async def test_first_event_is_created_with_involved_object_and_source() -> None:
    recorder, client, _ = make()
    recorder.normal(SPA, "WindowStarted", "min 3->5, max 10->20")
    await recorder.flush()
    assert len(client.calls) == 1
    verb, body = client.calls[0]
    assert verb == "create"
    assert body["metadata"]["namespace"] == "shop"
    assert body["metadata"]["name"].startswith("web.")
    assert body["involvedObject"] == {
        "apiVersion": "autoscaling.d-kuro.github.io/v1",
        "kind": "ScheduledPodAutoscaler",
        "name": "web",
        "namespace": "shop",
        "uid": "u-1",
        "resourceVersion": "7",
    }
    assert body["type"] == "Normal"
    assert body["reason"] == "WindowStarted"
    assert body["source"] == {"component": "scheduled-pod-autoscaler"}
    assert body["reportingComponent"] == "scheduled-pod-autoscaler"
    assert body["reportingInstance"] == "pod-1"
    assert body["count"] == 1
    assert body["firstTimestamp"] == body["lastTimestamp"] == "2026-01-01T00:00:00Z"
    await recorder.close()


async def test_repeats_within_the_window_patch_the_count() -> None:
    recorder, client, clock = make()
    recorder.warning(SPA, "MinAboveMax", "min 20 > max 10")
    await recorder.flush()
    name = client.calls[0][1]["metadata"]["name"]
    clock.advance(60)
    recorder.warning(SPA, "MinAboveMax", "min 20 > max 10")
    clock.advance(60)
    recorder.warning(SPA, "MinAboveMax", "min 20 > max 10")
    await recorder.flush()
    assert [verb for verb, _ in client.calls] == ["create", "patch", "patch"]
    assert client.calls[1][1] == (
        "shop",
        name,
        {"count": 2, "lastTimestamp": "2026-01-01T00:01:00Z"},
        "merge",
    )
    assert client.calls[2][1][2]["count"] == 3
    # A different message is a different Event.
    recorder.warning(SPA, "MinAboveMax", "min 30 > max 10")
    await recorder.flush()
    assert client.calls[-1][0] == "create"
    await recorder.close()


async def test_repeat_after_the_window_or_after_expiry_creates_a_new_event() -> None:
    recorder, client, clock = make()
    recorder.normal(SPA, "R", "m")
    await recorder.flush()
    clock.advance(301)
    recorder.normal(SPA, "R", "m")
    await recorder.flush()
    assert [verb for verb, _ in client.calls] == ["create", "create"]
    # The Event was garbage-collected by the API server (TTL): PATCH 404 -> create.
    client.fail_next = NotFound(404, "NotFound", "gone")
    clock.advance(10)
    recorder.normal(SPA, "R", "m")
    await recorder.flush()
    assert [verb for verb, _ in client.calls] == ["create", "create", "create"]
    await recorder.close()


async def test_failures_are_logged_never_raised(caplog) -> None:  # type: ignore[no-untyped-def]
    recorder, client, _ = make()
    client.fail_next = ApiUnavailable("refused")
    recorder.normal(SPA, "R", "m")  # must not raise
    recorder.normal({"not": "an object"}, "R", "m")  # odd input must not raise either
    await recorder.flush()
    assert "could not record" in caplog.text
    recorder.normal(SPA, "R2", "x" * 5000)
    await recorder.flush()
    assert len(client.calls[-1][1]["message"]) == 1024
    await recorder.close()


def test_event_names_stay_valid_and_distinct_for_the_longest_object_names() -> None:
    at = 1_800_000_000.123
    assert event_name("web", at) == f"web.{int(at * 1e9):x}"
    first, second = event_name("a" * 250 + "x", at), event_name("a" * 250 + "y", at)
    assert len(first) <= 253
    assert len(second) <= 253
    assert first != second
    assert first.endswith(f".{int(at * 1e9):x}")


async def test_events_queued_before_losing_the_lease_are_not_sent_after() -> None:
    client = RecordingClient()
    leader = {"now": True}
    recorder = EventRecorder(
        client,
        clock=FakeClock(),
        fence=lambda: None if leader["now"] else 0.0,
    )
    obj = {"kind": "ScheduledPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"}}
    recorder.warning(obj, "First", "sent while leading")
    await recorder.flush()
    recorder.warning(obj, "Second", "queued while leading")
    leader["now"] = False  # the Lease is lost before the sender gets to it
    await recorder.flush()
    assert [body["reason"] for verb, body in client.calls if verb == "create"] == ["First"]


async def test_a_full_queue_drops_events_with_two_log_lines_and_counts_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What does not fit in the queue is dropped (as client-go's broadcaster does), with one
    warning when the queue fills and one with the count when it has drained, never a line
    per Event, and counted in spa_events_dropped_total."""
    recorder, client, _ = make(max_queued=3)
    before = dropped()
    for index in range(10):  # no await in between: the sender cannot take any yet
        recorder.normal(SPA, "WindowStarted", f"window {index}")
    await recorder.flush()
    assert [body["message"] for _, body in client.calls] == [f"window {i}" for i in range(3)]
    assert dropped() - before == 7
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        "event queue full (3 waiting): dropping Events until it has drained",
        "dropped 7 Events while the event queue was full",
    ]
    recorder.normal(SPA, "WindowStarted", "after")  # room again: sent, nothing logged
    await recorder.flush()
    assert client.calls[-1][1]["message"] == "after"
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 2


async def test_events_refused_in_a_namespace_being_deleted_are_counted_and_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A namespace being deleted is a normal state: its Events are refused (403,
    NamespaceTerminating) and left at that, with one line for the namespace, no warning and no
    traceback per Event, and counted (docs/operations.md, "Namespaces being deleted")."""
    clock = FakeClock(start=1_767_225_600.0)
    client = RecordingClient()
    client.deleted["shop"] = namespace_terminating(resource="events", group="", name="web.1")
    client.deleted["old"] = namespace_gone(namespace="old")
    recorder = EventRecorder(
        client,
        clock=clock,
        terminating=TerminatingNamespaces(clock=clock, quiet=600),
    )
    before = not_made("events")
    others = autoscaler(name="api", namespace="elsewhere")
    with caplog.at_level(logging.DEBUG):
        for index in range(5):
            recorder.warning(autoscaler(name=f"web-{index}"), "HPARejected", "refused")
            recorder.normal(autoscaler(name=f"api-{index}", namespace="old"), "R", "gone")
        recorder.normal(others, "ScheduleStarted", "min 3 -> 5")
        await recorder.flush()
        assert not_made("events") - before == 10
        assert [body["metadata"]["namespace"] for _, body in client.calls] == ["elsewhere"]
        assert not [r for r in caplog.records if r.exc_info]
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        for namespace, state in (("shop", "is being deleted"), ("old", "is gone")):
            said = [r.getMessage() for r in caplog.records if namespace in r.getMessage()]
            assert len(said) == 1
            assert said[0].startswith(f"namespace {namespace} {state}: ")
        # Still Terminating (a finalizer holds it): said again only after `quiet`.
        clock.advance(599)
        recorder.warning(autoscaler(name="web-0"), "HPARejected", "refused again")
        await recorder.flush()
        assert len([r for r in caplog.records if "shop" in r.getMessage()]) == 1
        clock.advance(1)
        recorder.warning(autoscaler(name="web-0"), "HPARejected", "refused later")
        await recorder.flush()
        assert len([r for r in caplog.records if "shop" in r.getMessage()]) == 2
    assert not_made("events") - before == 12
    await recorder.close()


@pytest.mark.parametrize(
    "error",
    [
        error_from_status(409, {"kind": "Status", "code": 409, "message": "already exists"}),
        error_from_status(403, {"kind": "Status", "code": 403, "message": "RBAC says no"}),
        error_from_status(422, {"kind": "Status", "code": 422, "message": "invalid"}),
        error_from_status(429, {"kind": "Status", "code": 429, "message": "slow down"}),
        error_from_status(500, b"<html>internal error</html>"),
        ApiUnavailable("POST /api/v1/namespaces/shop/events: connection refused"),
    ],
    ids=["409", "403", "422", "429", "500", "unreachable"],
)
async def test_an_answer_of_the_api_server_is_one_line_without_a_traceback(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    recorder, client, _ = make()
    client.fail_next = error
    recorder.warning(SPA, "HPARejected", "refused")
    await recorder.flush()
    (line,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.exc_info is None
    assert line.getMessage() == f"could not record Warning event HPARejected for shop/web: {error}"
    await recorder.close()


async def test_a_bug_while_recording_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder, client, _ = make()
    client.fail_next = KeyError("metadata")
    recorder.warning(SPA, "HPARejected", "refused")
    await recorder.flush()
    (line,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert line.exc_info is not None
    await recorder.close()
