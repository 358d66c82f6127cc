"""EventRecorder: aggregation of repeats, expiry, and never raising into the caller."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY

from spa.kube import ApiUnavailable, NotFound
from spa.runtime import EventRecorder, FakeClock
from spa.runtime.events import event_name
from tests.builders import autoscaler

SPA = autoscaler(metadata={"uid": "u-1", "resourceVersion": "7"})


class RecordingClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.fail_next: Exception | None = None

    def _maybe_fail(self) -> None:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error

    async def create(
        self, resource: Any, namespace: str, body: dict[str, Any], **_: Any
    ) -> dict[str, Any]:
        self._maybe_fail()
        self.calls.append(("create", body))
        return body

    async def patch(
        self, resource: Any, namespace: str, name: str, body: dict[str, Any], **kw: Any
    ) -> dict[str, Any]:
        self._maybe_fail()
        self.calls.append(("patch", (namespace, name, body, kw["patch_type"])))
        return {}


def dropped() -> float:
    return REGISTRY.get_sample_value("spa_events_dropped_total") or 0.0


def make(*, max_queued: int = 1000) -> tuple[EventRecorder, RecordingClient, FakeClock]:
    client = RecordingClient()
    clock = FakeClock(start=1_767_225_600.0)
    recorder = EventRecorder(
        client,  # type: ignore[arg-type]
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
        client,  # type: ignore[arg-type]
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
