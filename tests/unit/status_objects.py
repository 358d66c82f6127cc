"""The objects of `kubectl spa status`'s unit tests, as the API server returns them (with a uid
and a status): the SPA web (base 3/10), its Schedule push, the HPA the controller writes for
given bounds and an Event. Shared by tests/unit/cli/test_status.py and test_incident_views.py, so
neither imports the other (docs/development.md, "Where the test helpers live")."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from spa.api import parse_scheduled_pod_autoscaler
from spa.cli.cluster import ClusterObjects
from spa.controller.desired import desired_hpa
from spa.schedule import State, instant_of
from tests.builders import autoscaler, schedule

__all__ = [
    "AT",
    "PUSH",
    "SERVER",
    "event",
    "hpa_for",
    "live_autoscaler",
    "live_schedule",
    "objects",
    "users_hpa",
]

AT = instant_of(datetime.fromisoformat("2026-11-23T03:00:00Z"))  # Mon 12:00 in Tokyo
SERVER = "https://127.0.0.1:6443"


# The SPA web (base 3/10) and its Schedules, as the API server returns them: with a uid and a
# status.
live_autoscaler = partial(autoscaler, metadata={"uid": "uid-web"}, metrics=None, status={})
live_schedule = partial(schedule, status={"condition": "Available"})

PUSH = live_schedule(
    name="push",
    type="Daily",
    startTime="11:50",
    endTime="13:00",
    timeZone="Asia/Tokyo",
    minReplicas=10,
    maxReplicas=20,
)


def hpa_for(spa: dict[str, Any], minimum: int, maximum: int) -> dict[str, Any]:
    """The HPA exactly as the controller writes it for these bounds."""
    model = parse_scheduled_pod_autoscaler(spa)
    hpa = desired_hpa(spa, model, State(minimum, maximum, ()), api_version="autoscaling/v2")
    hpa["status"] = {"currentReplicas": 4, "desiredReplicas": 10}
    return hpa


def event(involved: str, name: str, reason: str, when: str, **more: Any) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "shop", "name": f"{name}.{reason}"},
        "involvedObject": {"kind": involved, "name": name, "namespace": "shop"},
        "type": more.get("type", "Normal"),
        "reason": reason,
        "message": more.get("message", f"{reason} of {name}"),
        "count": more.get("count", 1),
        "lastTimestamp": when,
    }


def objects(**fields: Any) -> ClusterObjects:
    return ClusterObjects(
        server=SERVER,
        autoscalers=fields.pop("autoscalers", [live_autoscaler()]),
        schedules=fields.pop("schedules", [PUSH]),
        **fields,
    )


def users_hpa(target: str = "web", **metadata: Any) -> dict[str, Any]:
    """An HPA somebody made by hand, with the SPA's name."""
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "shop", **metadata},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 2,
            "maxReplicas": 4,
        },
    }
