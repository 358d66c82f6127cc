"""bench/load.py's "capacity first" check (issue 24) on hand-made audit logs: it must see a
status patch or an Event that went out before the fleet's last capacity write, count /scale
writes as capacity, and leave the capacity probe's requests out of the controller's."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from bench.load import (
    CONTROLLER_USER,
    NAMESPACE,
    PROBE_NAMESPACE,
    capacity_order,
    controller_events,
)
from tests.testenv.audit import AuditEvent, AuditLog

B = datetime(2026, 11, 26, 15, 0, tzinfo=UTC).timestamp()


def event(
    resource: str, received: float, completed: float, *, verb: str = "patch", name: str = "app"
) -> AuditEvent:
    return AuditEvent(
        audit_id=f"{resource}-{received}",
        user=CONTROLLER_USER,
        verb=verb,
        resource=resource,
        namespace=NAMESPACE,
        name=name,
        code=200,
        received=B + received,
        completed=B + completed,
        user_agent="spa",
    )


def test_capacity_written_before_any_status_or_event() -> None:
    order = capacity_order(
        [
            event("horizontalpodautoscalers", 0.01, 0.02),
            event("deployments/scale", 0.02, 0.03),
            event("horizontalpodautoscalers", 0.03, 0.05),
            event("scheduledpodautoscalers/status", 0.06, 0.07),
            event("events", 0.065, 0.07, verb="create"),
            event("schedules/status", 0.08, 0.09),
        ],
        B,
    )
    assert order["capacity_first"] is True
    assert order["capacity_writes"] == 3
    assert order["writes_before_last_capacity"] == 0
    assert round(order["last_capacity_write"], 3) == 0.05
    assert round(order["first_status_write"], 3) == 0.06
    assert round(order["first_event"], 3) == 0.065


def test_a_status_or_an_event_before_the_last_capacity_write() -> None:
    order = capacity_order(
        [
            event("horizontalpodautoscalers", 0.01, 0.02),
            event("scheduledpodautoscalers/status", 0.03, 0.04),
            event("events", 0.035, 0.04, verb="create"),
            event("get-only", 0.036, 0.04, verb="get"),  # reads are not writes
            event("horizontalpodautoscalers", 0.03, 0.05),
        ],
        B,
    )
    assert order["capacity_first"] is False
    assert order["writes_before_last_capacity"] == 2
    assert order["writes_before_last_capacity_sent"] == 0  # sent after it, but while in flight
    assert order["early"] == {"create events": 1, "patch scheduledpodautoscalers/status": 1}


def test_a_scale_write_is_capacity_too() -> None:
    order = capacity_order(
        [
            event("horizontalpodautoscalers", 0.01, 0.02),
            event("schedules/status", 0.03, 0.04),
            event("statefulsets/scale", 0.02, 0.05),
        ],
        B,
    )
    assert order["capacity_first"] is False
    assert round(order["last_capacity_write"], 3) == 0.05


def test_no_capacity_write_is_not_capacity_first() -> None:
    assert capacity_order([event("schedules/status", 0.03, 0.04)], B)["capacity_first"] is False


def test_the_probes_requests_are_not_the_controllers(tmp_path: Path) -> None:
    def line(namespace: str, audit_id: str) -> str:
        stamp = datetime.fromtimestamp(B, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return json.dumps(
            {
                "auditID": audit_id,
                "stage": "ResponseComplete",
                "user": {"username": CONTROLLER_USER},
                "verb": "patch",
                "objectRef": {
                    "resource": "horizontalpodautoscalers",
                    "namespace": namespace,
                    "name": "app-00000",
                },
                "responseStatus": {"code": 200},
                "requestReceivedTimestamp": stamp,
                "stageTimestamp": stamp,
            }
        )

    path = tmp_path / "audit.log"
    path.write_text(f"{line(PROBE_NAMESPACE, 'a')}\n{line(NAMESPACE, 'b')}\n", encoding="utf-8")
    events = controller_events(AuditLog(path), since=B - 1)
    assert [e.audit_id for e in events] == ["b"]
