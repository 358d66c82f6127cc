"""Parsing manifests: field-addressed messages, every problem reported, never a traceback."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spa.api import (
    FieldError,
    InvalidObject,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
)
from spa.schedule import OneShotWindow, RecurringWindow, Weekday

SPA: dict[str, Any] = {
    "apiVersion": "autoscaling.d-kuro.github.io/v1",
    "kind": "ScheduledPodAutoscaler",
    "metadata": {"name": "nginx", "namespace": "default"},
    "spec": {
        "horizontalPodAutoscalerSpec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
            "minReplicas": 3,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": 300,
                    "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}],
                }
            },
        }
    },
}

SCHEDULE: dict[str, Any] = {
    "apiVersion": "autoscaling.d-kuro.github.io/v1",
    "kind": "Schedule",
    "metadata": {"name": "push", "namespace": "default"},
    "spec": {
        "scaleTargetRef": {
            "apiVersion": "autoscaling.d-kuro.github.io/v1",
            "kind": "ScheduledPodAutoscaler",
            "name": "nginx",
        },
        "type": "Weekly",
        "startDayOfWeek": "Monday",
        "endDayOfWeek": "Wednesday",
        "startTime": "11:50",
        "endTime": "13:00",
        "timeZone": "Asia/Tokyo",
        "minReplicas": 10,
        "maxReplicas": 20,
    },
}


def with_spec(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    document = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            document["spec"].pop(key, None)
        else:
            document["spec"][key] = value
    return document


def messages(document: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidObject) as caught:
        compile_schedule(parse_schedule(document).spec)
    return [str(error) for error in caught.value.errors]


def test_valid_autoscaler_round_trips_to_the_same_json() -> None:
    parsed = parse_scheduled_pod_autoscaler(SPA)
    assert parsed.spec.to_wire() == SPA["spec"]


def test_valid_weekly_schedule_compiles() -> None:
    compiled = compile_schedule(parse_schedule(SCHEDULE).spec)
    assert isinstance(compiled.window, RecurringWindow)
    assert compiled.window.days == {Weekday.Monday, Weekday.Tuesday, Weekday.Wednesday}
    assert compiled.window.zone.key == "Asia/Tokyo"
    assert (compiled.min_replicas, compiled.max_replicas, compiled.suspend) == (10, 20, False)


def test_oneshot_compiles() -> None:
    document = with_spec(
        SCHEDULE, type="OneShot", startTime="2026-09-01T10:00", endTime="2026-09-10T19:00"
    )
    assert isinstance(compile_schedule(parse_schedule(document).spec).window, OneShotWindow)


def test_daily_ignores_weekdays_and_accepts_blank_ones() -> None:
    document = with_spec(SCHEDULE, type="Daily", startDayOfWeek="", endDayOfWeek=None)
    window = compile_schedule(parse_schedule(document).spec).window
    assert isinstance(window, RecurringWindow)
    assert window.days is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"timeZone": "Asia/Tokio"}, "spec.timeZone: unknown time zone 'Asia/Tokio'"),
        ({"startTime": "25:00"}, "spec.startTime: '25:00' is not a time of day in the form HH:mm"),
        ({"endTime": "2026-01-01T10:00"}, "spec.endTime: '2026-01-01T10:00' is not a time of day"),
        ({"startDayOfWeek": None}, "spec.startDayOfWeek: is required for a Weekly schedule"),
        ({"endDayOfWeek": ""}, "spec.endDayOfWeek: is required for a Weekly schedule"),
        ({"maxReplicas": 5}, "spec.maxReplicas: must not be less than minReplicas (10), got 5"),
        (
            {"type": "OneShot", "startTime": "2026-01-02T10:00", "endTime": "2026-01-02T10:00"},
            "spec.endTime: must be after startTime (2026-01-02T10:00)",
        ),
        (
            {"type": "OneShot", "startTime": "2026-02-30T10:00", "endTime": "2026-03-02T10:00"},
            "spec.startTime: '2026-02-30T10:00' is not a valid date and time",
        ),
    ],
)
def test_semantic_errors_name_the_field(changes: dict[str, Any], expected: str) -> None:
    assert any(message.startswith(expected) for message in messages(with_spec(SCHEDULE, **changes)))


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"minReplicas": 0}, "spec.minReplicas"),
        ({"maxReplicas": 2**31}, "spec.maxReplicas"),
        ({"type": "Hourly"}, "spec.type"),
        ({"startDayOfWeek": "Mondy"}, "spec.startDayOfWeek"),
        ({"minReplica": 5}, "spec.minReplica"),
        ({"scaleTargetRef": {"name": ""}}, "spec.scaleTargetRef.name"),
        ({"scaleTargetRef": {"name": "x", "kind": "Deployment"}}, "spec.scaleTargetRef.kind"),
        ({"startTime": None}, "spec.startTime"),
        ({"suspend": "sometimes"}, "spec.suspend"),
    ],
)
def test_structural_errors_name_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(with_spec(SCHEDULE, **changes))
    assert field in [error.field for error in caught.value.errors]


def test_every_problem_is_reported_at_once() -> None:
    found = messages(
        with_spec(SCHEDULE, timeZone="Mars/Base", startTime="7pm", startDayOfWeek=None)
    )
    assert [message.split(":")[0] for message in found] == [
        "spec.timeZone",
        "spec.startTime",
        "spec.startDayOfWeek",
    ]


def test_autoscaler_min_above_max_is_invalid() -> None:
    document = copy.deepcopy(SPA)
    document["spec"]["horizontalPodAutoscalerSpec"]["minReplicas"] = 11
    with pytest.raises(InvalidObject, match=r"minReplicas: must not be greater than maxReplicas"):
        parse_scheduled_pod_autoscaler(document)


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (
            ("metrics", 0, "resource", "target", "averageValue"),
            "lots",
            "metrics[0].resource.target.averageValue",
        ),
        (("metrics", 0, "type"), "Magic", "metrics[0].type"),
        (("scaleTargetRef",), {"name": "x"}, "scaleTargetRef.kind"),
        (("behavior", "scaleDown", "policies", 0, "periodSeconds"), 0, "policies[0].periodSeconds"),
    ],
)
def test_embedded_hpa_errors_are_addressed(path: tuple[Any, ...], value: Any, field: str) -> None:
    document = copy.deepcopy(SPA)
    target = document["spec"]["horizontalPodAutoscalerSpec"]
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    with pytest.raises(InvalidObject) as caught:
        parse_scheduled_pod_autoscaler(document)
    assert any(str(error.field).endswith(field) for error in caught.value.errors)


def test_missing_name_is_reported() -> None:
    document = copy.deepcopy(SCHEDULE)
    del document["metadata"]["name"]
    with pytest.raises(InvalidObject, match=r"metadata\.name: is required"):
        parse_schedule(document)


def problems(action: Callable[[], object]) -> tuple[FieldError, ...] | None:
    """The errors `action` reports, or None when it succeeds; any other exception escapes."""
    try:
        action()
    except InvalidObject as invalid:
        return invalid.errors
    return None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([*SCHEDULE["spec"], "junk"]), json_values, max_size=12))
def test_arbitrary_specs_never_raise_anything_but_invalid_object(spec: dict[str, Any]) -> None:
    document = {**copy.deepcopy(SCHEDULE), "spec": {**SCHEDULE["spec"], **spec}}
    errors = problems(lambda: compile_schedule(parse_schedule(document).spec))
    assert errors is None or (errors and all(error.message for error in errors))


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_arbitrary_documents_never_raise_anything_but_invalid_object(document: Any) -> None:
    for parse in (parse_schedule, parse_scheduled_pod_autoscaler):
        errors = problems(lambda parse=parse: parse(document))  # type: ignore[misc]
        assert errors is None or errors


def test_structural_and_window_errors_are_reported_together() -> None:
    document = with_spec(
        SCHEDULE, minReplicas=0, timeZone="Asia/Tokio", startTime="25:00", startDayOfWeek="Mondy"
    )
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(document)
    found = {str(error.field): str(error) for error in caught.value.errors}
    assert set(found) == {
        "spec.minReplicas",
        "spec.startDayOfWeek",
        "spec.timeZone",
        "spec.startTime",
    }
    # The bad weekday is reported once, as a bad value, not also as a missing one.
    assert "is required" not in found["spec.startDayOfWeek"]
    assert found["spec.timeZone"] == (
        "spec.timeZone: unknown time zone 'Asia/Tokio'; did you mean 'Asia/Tokyo'?"
    )
