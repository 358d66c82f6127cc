"""Pause and override in the real Reconciler against the model of the API server
(tests/unit/spa_model.py): no HPA write while paused, the override's bounds held, the return
to the schedule at the exact second of the expiry, the conditions and Events of each change,
and a malformed annotation that stops nothing (docs/operations.md, "Incidents")."""

from __future__ import annotations

from typing import Any

from spa.api.incident import OVERRIDE_ANNOTATION, PAUSED_UNTIL_ANNOTATION
from spa.runtime import Result
from spa.schedule import format_instant
from tests.unit.spa_model import OURS, Server, at, autoscaler, hpa_writes, schedule


def bounds(server: Server) -> tuple[int, int]:
    assert server.hpa is not None
    return server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]


def condition(server: Server, type_: str) -> tuple[str, str, str] | None:
    assert server.autoscaler is not None
    for entry in server.autoscaler["status"].get("conditions") or ():
        if entry["type"] == type_:
            return entry["status"], entry["reason"], entry["message"]
    return None


def annotate(server: Server, **annotations: str | None) -> None:
    assert server.autoscaler is not None
    current: dict[str, Any] = server.autoscaler["metadata"].setdefault("annotations", {})
    for name, value in annotations.items():
        key = {"paused": PAUSED_UNTIL_ANNOTATION, "override": OVERRIDE_ANNOTATION}[name]
        if value is None:
            current.pop(key, None)
        else:
            current[key] = value


def settled(instant: int) -> Server:
    """An SPA whose HPA was created at 09:00, with a window from 10:00 to 11:00 (5/20)."""
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    server.reconcile(instant)
    server.reconcile(instant)
    assert bounds(server) == (3, 10)
    return server


def test_a_pause_holds_the_hpa_across_a_window_start_and_ends_at_its_second() -> None:
    server = settled(at(9))
    annotate(server, paused=format_instant(at(10, 30)))
    writes = len(hpa_writes(server))
    server.reconcile(at(9, 30))
    assert server.result == Result(requeue_at=at(10))
    assert condition(server, "Paused") == (
        "True",
        "Paused",
        "paused until 2026-11-16T10:30:00Z: the controller leaves the HorizontalPodAutoscaler "
        "as it is",
    )
    assert ("Normal", "Paused", condition(server, "Paused")[2]) in server.recorded.events  # type: ignore[index]

    # The window starts: the HPA is left as it is, and the status says what it keeps.
    server.reconcile(at(10))
    assert len(hpa_writes(server)) == writes
    assert bounds(server) == (3, 10)
    assert server.result == Result(requeue_at=at(10, 30))
    assert server.autoscaler is not None
    status = server.autoscaler["status"]
    assert (status["minReplicas"], status["maxReplicas"], status["activeSchedules"]) == (
        3,
        10,
        ["peak"],
    )
    assert condition(server, "Ready") == (
        "False",
        "Paused",
        "paused: the HorizontalPodAutoscaler keeps minReplicas 3, maxReplicas 10 (the schedule "
        "wants minReplicas 5, maxReplicas 20)",
    )
    assert status["condition"] == "Available"

    # One second before the end it still holds; at the end the schedule applies.
    server.reconcile(at(10, 30) - 1)
    assert bounds(server) == (3, 10)
    server.reconcile(at(10, 30))
    server.reconcile(at(10, 30))
    assert bounds(server) == (5, 20)
    assert condition(server, "Paused") == (
        "False",
        "PauseExpired",
        "the pause ended at 2026-11-16T10:30:00Z; the schedule applies",
    )
    assert condition(server, "Ready")[:2] == ("True", "Applied")  # type: ignore[index]
    expired = [event for event in server.recorded.events if event[1] == "PauseExpired"]
    assert len(expired) == 1
    server.reconcile(at(10, 31))
    assert len([event for event in server.recorded.events if event[1] == "PauseExpired"]) == 1


def test_a_pause_creates_no_hpa() -> None:
    server = Server(
        autoscaler(annotations={PAUSED_UNTIL_ANNOTATION: "indefinite"}),
        [schedule("peak", owner=OURS)],
    )
    server.reconcile(at(10))
    assert server.hpa is None
    assert hpa_writes(server) == []
    assert server.result == Result(requeue_at=at(11))
    assert condition(server, "Ready") == (
        "False",
        "Paused",
        "paused: there is no HorizontalPodAutoscaler, and none is created until the pause ends",
    )
    assert condition(server, "Paused")[:2] == ("True", "Paused")  # type: ignore[index]


def test_resume_returns_to_the_schedule_at_once() -> None:
    server = settled(at(9))
    annotate(server, paused="indefinite")
    server.reconcile(at(10))
    assert bounds(server) == (3, 10)
    annotate(server, paused=None)
    server.reconcile(at(10, 5))
    server.reconcile(at(10, 5))
    assert bounds(server) == (5, 20)
    assert condition(server, "Paused") == ("False", "PauseEnded", "resumed; the schedule applies")
    assert ("Normal", "PauseEnded", "resumed; the schedule applies") in server.recorded.events


def test_an_override_holds_its_bounds_then_returns_to_the_schedule_at_its_end() -> None:
    server = settled(at(9))
    annotate(server, override=f"min=8,max=12,until={format_instant(at(10, 15))}")
    server.reconcile(at(9, 30))
    assert bounds(server) == (8, 12)
    server.reconcile(at(9, 30))
    assert server.result == Result(requeue_at=at(10))
    message = "overridden to minReplicas 8, maxReplicas 12 until 2026-11-16T10:15:00Z"
    assert condition(server, "Overridden") == ("True", "Overridden", message)
    assert ("Normal", "Overridden", message) in server.recorded.events
    assert condition(server, "Ready")[:2] == ("True", "Overridden")  # type: ignore[index]

    # The window starts during the override: the override still holds.
    server.reconcile(at(10))
    server.reconcile(at(10))
    assert bounds(server) == (8, 12)
    assert server.result == Result(requeue_at=at(10, 15))
    server.reconcile(at(10, 15))
    server.reconcile(at(10, 15))
    assert bounds(server) == (5, 20)
    assert condition(server, "Overridden") == (
        "False",
        "OverrideExpired",
        "the override ended at 2026-11-16T10:15:00Z; the schedule applies",
    )
    assert server.result == Result(requeue_at=at(11))


def test_an_override_without_max_holds_the_larger_of_min_and_the_base_max() -> None:
    server = settled(at(9))
    annotate(server, override=f"min=15,until={format_instant(at(9, 45))}")
    server.reconcile(at(9, 30))
    assert bounds(server) == (15, 15)
    annotate(server, override=f"min=4,until={format_instant(at(9, 45))}")
    server.reconcile(at(9, 31))
    assert bounds(server) == (4, 10)


def test_a_pause_wins_over_an_override() -> None:
    server = settled(at(9))
    annotate(
        server,
        paused=format_instant(at(9, 40)),
        override=f"min=8,max=12,until={format_instant(at(9, 50))}",
    )
    server.reconcile(at(9, 30))
    assert bounds(server) == (3, 10)
    assert server.result == Result(requeue_at=at(9, 40))
    server.reconcile(at(9, 40))
    assert bounds(server) == (8, 12)


def test_a_malformed_annotation_is_a_warning_and_the_schedule_keeps_applying() -> None:
    server = settled(at(9))
    annotate(server, override="min=0,until=2026-11-16T12:00:00Z")
    server.reconcile(at(10))
    server.reconcile(at(10))
    assert bounds(server) == (5, 20)
    message = (
        f'metadata.annotations["{OVERRIDE_ANNOTATION}"]: min must be an integer from 1 to '
        "2147483647; got '0' (ignored: the schedule applies)"
    )
    assert condition(server, "Overridden") == ("False", "InvalidAnnotation", message)
    assert server.recorded.events.count(("Warning", "InvalidAnnotation", message)) == 1
    assert server.autoscaler is not None
    assert server.autoscaler["status"]["condition"] == "Available"
    server.reconcile(at(10, 1))
    assert server.recorded.events.count(("Warning", "InvalidAnnotation", message)) == 1
    annotate(server, override=None)
    server.reconcile(at(10, 2))
    assert condition(server, "Overridden") == (
        "False",
        "OverrideEnded",
        "the malformed annotation was removed; the schedule applies",
    )


def test_an_spa_never_paused_gets_no_incident_conditions() -> None:
    server = settled(at(9))
    annotate(server, paused=format_instant(at(8)))  # expired before anyone saw it
    server.reconcile(at(10))
    assert condition(server, "Paused") is None
    assert condition(server, "Overridden") is None


def test_an_override_that_raises_min_scales_the_target_up_as_a_window_does() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], target_replicas=2)
    server.reconcile(at(9))
    server.reconcile(at(9))
    annotate(server, override=f"min=8,until={format_instant(at(9, 45))}")
    server.reconcile(at(9, 30))
    assert server.scaled_to == [8]
