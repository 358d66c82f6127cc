"""Parsing manifests: field-addressed messages, every problem reported, never a traceback."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import date, timedelta
from functools import partial
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spa.api import (
    API_VERSION,
    FieldError,
    InvalidObject,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
)
from spa.api.validation.messages import WrittenNumber
from spa.api.validation.parse import parse_calendar
from spa.schedule import OneShotWindow, RecurringWindow, Weekday
from spa.schedule.wallclock import WELL_KNOWN_ZONES, zone_names, zones_abbreviated
from tests.builders import autoscaler, schedule

# The README's example, with a scale-down behavior.
SPA = autoscaler(
    name="nginx",
    namespace="default",
    behavior={
        "scaleDown": {
            "stabilizationWindowSeconds": 300,
            "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}],
        }
    },
)

# A valid Weekly Schedule, Monday to Wednesday 11:50-13:00 in Tokyo; a case changes its spec's
# fields (None removes one).
_push = partial(
    schedule,
    name="push",
    namespace="default",
    scaleTargetRef={"apiVersion": API_VERSION, "kind": "ScheduledPodAutoscaler", "name": "nginx"},
    type="Weekly",
    startDayOfWeek="Monday",
    endDayOfWeek="Wednesday",
    startTime="11:50",
    endTime="13:00",
    timeZone="Asia/Tokyo",
    minReplicas=10,
    maxReplicas=20,
)
SCHEDULE = _push()


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
    # To the instants its wall-clock times name in its zone (Tokyo: UTC+9, no daylight-saving
    # time), active from the start on and inactive, completed, from the end on.
    from spa.schedule import Timeline  # here: this one test reads the compiled window's activity

    document = _push(type="OneShot", startTime="2026-09-01T10:00", endTime="2026-09-10T19:00")
    window = compile_schedule(parse_schedule(document).spec).window
    assert isinstance(window, OneShotWindow)
    start = (date(2026, 9, 1) - date(1970, 1, 1)).days * 86400 + 1 * 3600  # 10:00 in Tokyo
    end = (date(2026, 9, 10) - date(1970, 1, 1)).days * 86400 + 10 * 3600  # 19:00 in Tokyo
    assert window.span == (start, end)
    timeline = Timeline(window)
    active = [timeline.is_active(instant) for instant in (start - 1, start, end - 1, end)]
    assert active == [False, True, True, False]
    assert [timeline.next_boundary(start - 86400), timeline.next_boundary(start)] == [start, end]
    assert timeline.next_boundary(end) is None
    assert (window.completed(end - 1), window.completed(end)) == (False, True)


def test_daily_ignores_weekdays_and_accepts_blank_ones() -> None:
    document = _push(type="Daily", startDayOfWeek="", endDayOfWeek=None)
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
        ({"startTime": None}, "spec.startTime: is required for a Weekly schedule"),
    ],
)
def test_semantic_errors_name_the_field(changes: dict[str, Any], expected: str) -> None:
    assert any(message.startswith(expected) for message in messages(_push(**changes)))


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"minReplicas": -1}, "spec.minReplicas"),
        ({"maxReplicas": 2**31}, "spec.maxReplicas"),
        ({"type": "Hourly"}, "spec.type"),
        ({"startDayOfWeek": "Mondy"}, "spec.startDayOfWeek"),
        ({"minReplica": 5}, "spec.minReplica"),
        ({"scaleTargetRef": {"name": ""}}, "spec.scaleTargetRef.name"),
        ({"scaleTargetRef": {"name": "x", "kind": "Deployment"}}, "spec.scaleTargetRef.kind"),
        ({"suspend": "sometimes"}, "spec.suspend"),
    ],
)
def test_structural_errors_name_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(_push(**changes))
    assert field in [error.field for error in caught.value.errors]


def test_every_problem_is_reported_at_once() -> None:
    found = messages(_push(timeZone="Mars/Base", startTime="7pm", startDayOfWeek=None))
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


def autoscaler_problems(document: dict[str, Any]) -> list[str]:
    with pytest.raises(InvalidObject) as caught:
        parse_scheduled_pod_autoscaler(document)
    return [str(error) for error in caught.value.errors]


def test_every_problem_of_an_autoscaler_is_reported_at_once() -> None:
    # One error hid the others: an unknown field hid the lead time over 24h, which hid min
    # above max (fix one, run again, meet the next).
    document = autoscaler(name="web", leadTime="25h", minReplicas=11, maxReplicas=10)
    document["spec"]["bogus"] = True
    assert autoscaler_problems(document) == [
        "spec.bogus: unknown field",
        "spec.leadTime: must be at most 24h, got '25h'",
        "spec.horizontalPodAutoscalerSpec.minReplicas: must not be greater than maxReplicas "
        "(10), got 11",
    ]
    del document["spec"]["bogus"]
    assert len(autoscaler_problems(document)) == 2


def test_a_capacity_lead_and_min_above_max_are_reported_together() -> None:
    document = autoscaler(
        leadTime="10m", capacity={"leadTime": "5m"}, minReplicas=11, maxReplicas=10
    )
    assert autoscaler_problems(document) == [
        "spec.capacity.leadTime: must be at least leadTime (10m), got '5m'",
        "spec.horizontalPodAutoscalerSpec.minReplicas: must not be greater than maxReplicas "
        "(10), got 11",
    ]


@pytest.mark.parametrize(
    ("mode", "longest"),
    [(None, 63), ("Auto", 63), ("Placeholder", 63), ("CapacityBuffer", 244)],
)
def test_a_name_its_capacity_objects_cannot_carry_is_refused(
    mode: str | None, longest: int
) -> None:
    # Planned and reconciled as if fine, while the API server refused every placeholder
    # (label value capacity-for=<name> over 63) or CapacityBuffer (<name>-capacity over 253).
    capacity = {"leadTime": "10m"} | ({} if mode is None else {"mode": mode})
    parse_scheduled_pod_autoscaler(autoscaler(name="w" * longest, capacity=capacity))
    [problem] = autoscaler_problems(autoscaler(name="w" * (longest + 1), capacity=capacity))
    assert problem.startswith(f"metadata.name: must be at most {longest} characters with ")
    assert problem.endswith(f"got {longest + 1}")
    # Without capacity the name is the HPA's alone, up to 253 characters.
    parse_scheduled_pod_autoscaler(autoscaler(name="w" * 253))


def test_a_long_name_is_reported_with_a_structural_error() -> None:
    document = autoscaler(name="w" * 64, capacity={"leadTime": "10m"})
    document["spec"]["bogus"] = True
    assert [problem.split(":")[0] for problem in autoscaler_problems(document)] == [
        "spec.bogus",
        "metadata.name",
    ]


def _unknown_fields(
    parse: Callable[[dict[str, Any]], object], document: dict[str, Any]
) -> list[str]:
    found = problems(lambda: parse(document))
    assert found is not None
    return sorted(str(error) for error in found if "unknown field" in error.message)


def test_an_unknown_field_says_where_it_belongs_or_what_to_write() -> None:
    """A field one level too high, a reference to another namespace, a calendar's mode, days
    as a list and the HPA fields of autoscaling/v1 and v2beta1: a spelling suggestion said
    nothing of these, or misled (`namespace`: "did you mean 'name'?")."""
    flat = autoscaler(name="web")
    flat["spec"] = {"minReplicas": 2, **flat["spec"]}
    flat["spec"]["horizontalPodAutoscalerSpec"]["targetCPUUtilizationPercentage"] = 70
    flat["spec"]["horizontalPodAutoscalerSpec"]["metrics"] = [
        {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 70}},
        {"type": "External", "external": {"metricName": "queue", "targetValue": 30}},
    ]
    v2 = "that is the form of autoscaling/v2beta1; in autoscaling/v2 write"
    assert _unknown_fields(parse_scheduled_pod_autoscaler, flat) == sorted(
        [
            "spec.minReplicas: unknown field; it belongs under spec.horizontalPodAutoscalerSpec: "
            "spec.horizontalPodAutoscalerSpec.minReplicas",
            "spec.horizontalPodAutoscalerSpec.targetCPUUtilizationPercentage: unknown field; that "
            "is the field of autoscaling/v1; in autoscaling/v2 write metrics: [{type: Resource, "
            "resource: {name: cpu, target: {type: Utilization, averageUtilization: N}}}]",
            "spec.horizontalPodAutoscalerSpec.metrics[0].resource.targetAverageUtilization: "
            f"unknown field; {v2} target: {{type: Utilization, averageUtilization: N}}",
            "spec.horizontalPodAutoscalerSpec.metrics[1].external.metricName: unknown field; "
            f"{v2} metric: {{name: NAME}}",
            "spec.horizontalPodAutoscalerSpec.metrics[1].external.targetValue: unknown field; "
            f"{v2} target: {{type: Value, value: Q}}",
        ]
    )
    weekly = _push(
        scaleTargetRef={"name": "nginx", "namespace": "other"},
        calendars=[{"name": "freeze", "namespace": "ops"}],
        daysOfWeek=["Monday"],
        capacity={"leadTime": "10m", "mode": "Placeholder"},
        leadTimeBounds={"max": "10m"},
    )
    weekly["type"] = weekly["spec"].pop("type")
    assert _unknown_fields(parse_schedule, weekly) == sorted(
        [
            "type: unknown field; it belongs under spec: spec.type",
            "spec.scaleTargetRef.namespace: unknown field; a Schedule applies to a "
            "ScheduledPodAutoscaler of its own namespace: create the Schedule in that namespace",
            "spec.calendars[0].namespace: unknown field; a Calendar serves the Schedules of its "
            "own namespace only: refer to one there, or to a ClusterCalendar (kind: "
            "ClusterCalendar), which serves every namespace",
            "spec.daysOfWeek: unknown field; a Weekly window's days are a range, startDayOfWeek to "
            "endDayOfWeek (Monday and Friday for the working week)",
            "spec.capacity.mode: unknown field; the capacity mode is the ScheduledPodAutoscaler's "
            "(its spec.capacity.mode), for all its Schedules; a Schedule sets only its own "
            "capacity.leadTime",
            "spec.leadTimeBounds: unknown field; the bounds of leadTime: Auto are the "
            "ScheduledPodAutoscaler's (its spec.leadTimeBounds), for all its Schedules",
        ]
    )
    calendar = {
        "apiVersion": API_VERSION,
        "kind": "Calendar",
        "metadata": {"name": "freeze", "namespace": "shop"},
        "spec": {"holidays": {"country": "DE", "mode": "Only"}, "mode": "Skip"},
    }
    mode = (
        "unknown field; a calendar has no mode: each Schedule that refers to it says Skip or "
        "Only, in its spec.calendars (name: ..., mode: Only)"
    )
    assert _unknown_fields(parse_calendar, calendar) == [
        f"spec.holidays.mode: {mode}",
        f"spec.mode: {mode}",
    ]


EXTERNAL_METRIC = {
    "type": "External",
    "external": {
        "metric": {"name": "queue_depth"},
        "target": {"type": "AverageValue", "averageValue": "30"},
    },
}


@pytest.mark.parametrize(
    ("metrics", "valid"),
    [
        (None, False),
        ([SPA["spec"]["horizontalPodAutoscalerSpec"]["metrics"][0]], False),
        ([SPA["spec"]["horizontalPodAutoscalerSpec"]["metrics"][0], EXTERNAL_METRIC], True),
        ([{**EXTERNAL_METRIC, "type": "Object"}], True),
    ],
)
def test_a_base_min_of_zero_needs_an_object_or_external_metric(
    metrics: list[dict[str, Any]] | None, valid: bool
) -> None:
    document = copy.deepcopy(SPA)
    hpa = document["spec"]["horizontalPodAutoscalerSpec"]
    hpa["minReplicas"] = 0
    if metrics is None:
        del hpa["metrics"]
    else:
        hpa["metrics"] = metrics
    if valid:
        assert (
            parse_scheduled_pod_autoscaler(document).spec.horizontal_pod_autoscaler_spec.to_wire()[
                "minReplicas"
            ]
            == 0
        )
        return
    with pytest.raises(InvalidObject) as caught:
        parse_scheduled_pod_autoscaler(document)
    assert [str(error) for error in caught.value.errors] == [
        "spec.horizontalPodAutoscalerSpec.minReplicas: must not be 0 without an Object or "
        "External metric in horizontalPodAutoscalerSpec.metrics (scale to zero: the API server "
        'requires such a metric, and its HPAScaleToZero feature gate; docs/schedules.md, "Scale '
        'to zero")'
    ]


def test_a_window_min_of_zero_is_valid_on_its_own() -> None:
    compiled = compile_schedule(parse_schedule(_push(minReplicas=0)).spec)
    assert compiled.min_replicas == 0


@pytest.mark.parametrize("tolerance", ["0.05", "50m", 0, "0", "1e-2", 1])
def test_a_tolerance_passes_through_as_written(tolerance: object) -> None:
    document = copy.deepcopy(SPA)
    behavior = document["spec"]["horizontalPodAutoscalerSpec"]["behavior"]
    behavior["scaleUp"] = {"tolerance": tolerance}
    behavior["scaleDown"]["tolerance"] = tolerance
    hpa = parse_scheduled_pod_autoscaler(document).spec.horizontal_pod_autoscaler_spec
    wired = hpa.to_wire()["behavior"]
    assert (wired["scaleUp"]["tolerance"], wired["scaleDown"]["tolerance"]) == (
        tolerance,
        tolerance,
    )


@pytest.mark.parametrize(
    ("direction", "tolerance", "expected"),
    [
        ("scaleUp", "-0.05", "must not be negative"),
        ("scaleDown", -1, "must not be negative"),
        ("scaleUp", "five percent", "must be a Kubernetes quantity"),
    ],
)
def test_a_bad_tolerance_is_refused_at_its_field(
    direction: str, tolerance: object, expected: str
) -> None:
    document = copy.deepcopy(SPA)
    document["spec"]["horizontalPodAutoscalerSpec"]["behavior"][direction] = {
        "tolerance": tolerance
    }
    with pytest.raises(InvalidObject) as caught:
        parse_scheduled_pod_autoscaler(document)
    [error] = caught.value.errors
    assert error.field == f"spec.horizontalPodAutoscalerSpec.behavior.{direction}.tolerance"
    assert expected in str(error)


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
# Found by this test: a value JSON cannot carry, and a null startTime (it raised TypeError).
@example({"scaleTargetRef": [float("inf")], "startTime": None})
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
    document = _push(
        minReplicas=-1, timeZone="Asia/Tokio", startTime="25:00", startDayOfWeek="Mondy"
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


# -- Strict types and messages in our words --------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"minReplicas": "5"},
            "spec.minReplicas: must be an integer, got '5' (write it without quotes)",
        ),
        ({"minReplicas": 5.5}, "spec.minReplicas: must be an integer, got 5.5"),
        (
            {"suspend": "yes"},
            "spec.suspend: must be true or false, got 'yes' (write true or false without quotes)",
        ),
        (
            {"startTime": 720},
            "spec.startTime: must be a string, got 720 (a time of day is text in the form "
            "HH:mm (00:00 to 23:59), such as 09:00)",
        ),
        # Quoting a number makes it text, not a time, a date, a zone or a country: what to
        # write instead (it was "quote it to keep it text" for each).
        (
            {"startTime": 1730, "endTime": 9},
            "spec.startTime: must be a string, got 1730 (a time of day is text in the form "
            "HH:mm: write 17:30)",
        ),
        (
            {"endTime": 12.3},
            "spec.endTime: must be a string, got 12.3 (a time of day is text in the form "
            "HH:mm: write 12:30)",
        ),
        (
            {"timeZone": 1},
            "spec.timeZone: must be a string, got 1 (a UTC offset is not a zone: use an IANA "
            "zone such as Etc/GMT-1 (the sign is inverted: Etc/GMT-1 is UTC+01:00) or the zone "
            "of the place you mean, such as Europe/Berlin)",
        ),
        (
            {"timeZone": 0},
            "spec.timeZone: must be a string, got 0 (a UTC offset is not a zone: write UTC (or "
            "Etc/UTC))",
        ),
        (
            {"excludeDates": [20261225]},
            "spec.excludeDates[0]: must be a string, got 20261225 (a date is written "
            "yyyy-MM-dd: write 2026-12-25)",
        ),
        (
            {"endDate": 2026},
            "spec.endDate: must be a string, got 2026 (a date is text in the form yyyy-MM-dd, "
            "such as 2026-12-25)",
        ),
        (
            {"holidays": {"country": 49}},
            "spec.holidays.country: must be a string, got 49 (a country is the two capital "
            "letters of its ISO 3166-1 alpha-2 code, such as US or DE)",
        ),
        (
            {
                "type": "OneShot",
                "startTime": 1735000000,
                "endTime": "2026-03-08T10:00",
                **dict.fromkeys(("startDayOfWeek", "endDayOfWeek")),
            },
            "spec.startTime: must be a string, got 1735000000 (a OneShot's times are text in "
            "the form yyyy-MM-ddTHH:mm, such as 2026-03-08T09:00)",
        ),
        (
            {"description": 42},
            "spec.description: must be a string, got 42 (quote it to keep it text)",
        ),
        # A country as more than its alpha-2 code got only "must be at most 2 characters".
        (
            {"holidays": {"country": "USA"}},
            "spec.holidays.country: must be the two capital letters of an ISO 3166-1 alpha-2 "
            "code, got 'USA'; did you mean 'US'?",
        ),
        (
            {"holidays": {"country": "Germany"}},
            "spec.holidays.country: must be the two capital letters of an ISO 3166-1 alpha-2 "
            "code, got 'Germany'; did you mean 'DE'?",
        ),
        (
            {"holidays": {"country": "de-BY"}},
            "spec.holidays.country: must be the two capital letters of an ISO 3166-1 alpha-2 "
            "code, got 'de-BY'; write country: DE and subdivision: BY",
        ),
        # A subdivision by its name, or in lower case, got the list of codes.
        (
            {"holidays": {"country": "US", "subdivision": "California"}},
            "spec.holidays.subdivision: unknown subdivision 'California' of US; did you mean 'CA'?",
        ),
        (
            {"holidays": {"country": "DE", "subdivision": "by"}},
            "spec.holidays.subdivision: unknown subdivision 'by' of DE; did you mean 'BY'?",
        ),
        # Weekdays as cron's numbers.
        (
            {"type": "Weekly", "startDayOfWeek": 1, "endDayOfWeek": 0},
            "spec.startDayOfWeek: must be one of Sunday, Monday, Tuesday, Wednesday, Thursday, "
            "Friday, Saturday, got 1; did you mean 'Monday'?",
        ),
        (
            {"type": "Weekly", "startDayOfWeek": "Mon-Fri", "endDayOfWeek": "monday to sunday"},
            "spec.startDayOfWeek: must be one of Sunday, Monday, Tuesday, Wednesday, Thursday, "
            "Friday, Saturday, got 'Mon-Fri'; a range is two fields: startDayOfWeek Monday, "
            "endDayOfWeek Friday",
        ),
        # Times in other notations: the same time as the API takes it.
        (
            {"endTime": "6pm"},
            "spec.endTime: '6pm' is not a time of day in the form HH:mm "
            "(00:00 to 23:59); write 18:00",
        ),
        (
            {"startTime": "12:30 a.m."},
            "spec.startTime: '12:30 a.m.' is not a time of day in "
            "the form HH:mm (00:00 to 23:59); write 00:30",
        ),
        (
            {"endTime": "17.30"},
            "spec.endTime: '17.30' is not a time of day in the form HH:mm "
            "(00:00 to 23:59); write 17:30",
        ),
        (
            {"startTime": "9h"},
            "spec.startTime: '9h' is not a time of day in the form HH:mm "
            "(00:00 to 23:59); write 09:00",
        ),
        (
            {
                "type": "OneShot",
                "startTime": "2026-03-08 08:00",
                "endTime": "2026/03/08T10:00",
                **dict.fromkeys(("startDayOfWeek", "endDayOfWeek")),
            },
            "spec.endTime: '2026/03/08T10:00' is not a date and time in the form "
            "yyyy-MM-ddTHH:mm; write 2026-03-08T10:00",
        ),
        (
            {"type": "weekly"},
            "spec.type: must be one of Weekly, Daily, OneShot, WeeklySpan, Cron, got 'weekly'; "
            "did you mean 'Weekly'?",
        ),
        ({"endtime": "13:00"}, "spec.endtime: unknown field; did you mean 'endTime'?"),
        ({"scaleTargetRef": "nginx"}, "spec.scaleTargetRef: must be an object, got 'nginx'"),
        (
            {"scaleTargetRef": {"name": "x", "kind": "Deployment"}},
            "spec.scaleTargetRef.kind: must be ScheduledPodAutoscaler, got 'Deployment'",
        ),
        ({"minReplicas": -1}, "spec.minReplicas: must be at least 0, got -1"),
        ({"maxReplicas": 0}, "spec.maxReplicas: must be at least 1, got 0"),
        (
            {"description": "d" * 70_000},
            "spec.description: must be at most 1024 characters, got 70,000",
        ),
        (
            {"timeZone": "Europe/Londn"},
            "spec.timeZone: unknown time zone 'Europe/Londn'; did you mean 'Europe/London'?",
        ),
        (
            {"excludeDates": [str(date(2027, 1, 1) + timedelta(days=n)) for n in range(376)]},
            "spec.excludeDates: must have at most 366 dates, got 376",
        ),
        (
            {"leadTime": 0},
            "spec.leadTime: must be a string, got 0 (a duration needs a unit: write 0s)",
        ),
        (
            {"leadTime": 90},
            "spec.leadTime: must be a string, got 90 "
            "(a duration needs a unit: write 90s (1m30s) or 90m (1h30m))",
        ),
        # Only durations within the field's range are offered (600h is over 24h), and an
        # integer capacity.leadTime got "quote it to keep it text", itself still invalid.
        (
            {"leadTime": 600},
            "spec.leadTime: must be a string, got 600 "
            "(a duration needs a unit: write 600s (10m) or 600m (10h))",
        ),
        (
            {"leadTime": "10m", "capacity": {"leadTime": 600}},
            "spec.capacity.leadTime: must be a string, got 600 "
            "(a duration needs a unit: write 600s (10m) or 600m (10h))",
        ),
        (
            {"leadTime": 100000},
            "spec.leadTime: must be a string, got 100000 "
            "(a duration needs a unit, such as 90s, 10m or 1h; from 0s to 24h)",
        ),
        # A UTC offset got a zone an hour off by spelling ('NZ', 'UTC').
        (
            {"timeZone": "Z"},
            "spec.timeZone: unknown time zone 'Z'; a UTC offset is not a zone: write UTC (or "
            "Etc/UTC)",
        ),
        (
            {"timeZone": "UTC+1"},
            "spec.timeZone: unknown time zone 'UTC+1'; a UTC offset is not a zone: use an IANA "
            "zone such as Etc/GMT-1 (the sign is inverted: Etc/GMT-1 is UTC+01:00) or the zone "
            "of the place you mean, such as Europe/Berlin",
        ),
        (
            {"timeZone": "GMT-5"},
            "spec.timeZone: unknown time zone 'GMT-5'; a UTC offset is not a zone: use an IANA "
            "zone such as Etc/GMT+5 (the sign is inverted: Etc/GMT+5 is UTC-05:00) or the zone "
            "of the place you mean, such as America/New_York",
        ),
        (
            {"timeZone": "+01:00"},
            "spec.timeZone: unknown time zone '+01:00'; a UTC offset is not a zone: use an IANA "
            "zone such as Etc/GMT-1 (the sign is inverted: Etc/GMT-1 is UTC+01:00) or the zone "
            "of the place you mean, such as Europe/Berlin",
        ),
        (
            {"timeZone": "+05:30"},
            "spec.timeZone: unknown time zone '+05:30'; a UTC offset is not a zone: use the IANA "
            "zone of the place you mean, such as Asia/Kolkata (UTC+05:30)",
        ),
        # Seconds or an offset in a time: what form, and why this is not it.
        (
            {"startTime": "08:00:00"},
            "spec.startTime: '08:00:00' is not a time of day in the form HH:mm (00:00 to 23:59); "
            "it has seconds, which the API does not take: write 08:00",
        ),
        (
            {"endTime": "13:00+02:00"},
            "spec.endTime: '13:00+02:00' is not a time of day in the form HH:mm (00:00 to "
            "23:59); it has a UTC offset (+02:00), which the API does not take: write 13:00 and "
            "give the zone in spec.timeZone (an IANA name such as Europe/Berlin)",
        ),
        (
            {
                "type": "OneShot",
                "startTime": "2026-03-08T08:00:00",
                "endTime": "2026-03-08T10:00",
                **dict.fromkeys(("startDayOfWeek", "endDayOfWeek")),
            },
            "spec.startTime: must be yyyy-MM-ddTHH:mm (e.g. 2026-03-08T09:00), got "
            "'2026-03-08T08:00:00'; it has seconds, which the API does not take: write "
            "2026-03-08T08:00",
        ),
        (
            {
                "type": "OneShot",
                "startTime": "2026-03-08T08:00",
                "endTime": "2026-03-08T10:00:00+01:00",
                **dict.fromkeys(("startDayOfWeek", "endDayOfWeek")),
            },
            "spec.endTime: must be yyyy-MM-ddTHH:mm (e.g. 2026-03-08T09:00), got "
            "'2026-03-08T10:00:00+01:00'; it has seconds and a UTC offset (+01:00), which the "
            "API does not take: write 2026-03-08T10:00 and give the zone in spec.timeZone (an "
            "IANA name such as Europe/Berlin)",
        ),
        (
            {
                "type": "Cron",
                "schedule": "0 9 * * *",
                "duration": 8,
                **dict.fromkeys(("startTime", "endTime", "startDayOfWeek", "endDayOfWeek")),
            },
            "spec.duration: must be a string, got 8 (a duration needs a unit: write 8m or 8h)",
        ),
        (
            {"endTime": "24:00"},
            "spec.endTime: '24:00' is not a time of day in the form HH:mm (00:00 to 23:59); for "
            "a window that ends at midnight write 00:00 (an endTime earlier than startTime ends "
            "on the next day)",
        ),
    ],
)
def test_messages_are_ours(changes: dict[str, Any], expected: str) -> None:
    document = _push(**changes)
    found = problems(lambda: compile_schedule(parse_schedule(document).spec))
    assert found is not None
    assert expected in [str(error) for error in found]


def test_a_time_zone_abbreviation_names_the_zones_that_use_it() -> None:
    # CEST got "did you mean 'EST'?", a US zone; the zones that show CEST are in tzdata.
    [cest] = messages(_push(timeZone="CEST"))
    assert cest.startswith(
        "spec.timeZone: unknown time zone 'CEST'; it is an abbreviation, used by "
        "Europe/Berlin, Europe/Paris, Europe/Rome, Europe/Madrid and "
    )
    assert cest.endswith(" more: write the IANA name of the zone you mean")
    # An ambiguous one names every zone; any case is understood.
    [ist] = messages(_push(timeZone="ist"))
    assert ist == (
        "spec.timeZone: unknown time zone 'ist'; it is an abbreviation, used by Europe/Dublin, "
        "Asia/Jerusalem, Asia/Kolkata: write the IANA name of the zone you mean"
    )
    # A zone name in the wrong case, and a typo, still get the name.
    assert messages(_push(timeZone="cet")) == [
        "spec.timeZone: unknown time zone 'cet'; did you mean 'CET'?"
    ]
    assert messages(_push(timeZone="Europe/Berln")) == [
        "spec.timeZone: unknown time zone 'Europe/Berln'; did you mean 'Europe/Berlin'?"
    ]


def test_the_abbreviation_table_offers_current_zone_names_only() -> None:
    assert set(WELL_KNOWN_ZONES) <= zone_names()
    assert zones_abbreviated("PST")[0] == "America/Los_Angeles"
    assert "Asia/Calcutta" not in zones_abbreviated("IST")  # a deprecated spelling
    assert zones_abbreviated("+03") == ()  # an offset, not a place
    assert zones_abbreviated("Europe/Berlin") == ()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"type": "Daily", "startTime": "00:00", "endTime": "24:00"},
            "spec.endTime: '24:00' is not a time of day in the form HH:mm (00:00 to 23:59); "
            "for a window that ends at midnight write 00:00 (an endTime equal to startTime makes "
            "a 24-hour window)",
        ),
        (
            {"type": "Daily", "startTime": "24:00"},
            "spec.startTime: '24:00' is not a time of day in the form HH:mm (00:00 to 23:59); "
            "for a window that starts at midnight write 00:00",
        ),
        (
            {"startTime": "24:00"},  # Weekly, Monday to Wednesday
            "spec.startTime: '24:00' is not a time of day in the form HH:mm (00:00 to 23:59); "
            "for a window that starts at midnight write 00:00 with startDayOfWeek Tuesday and "
            "endDayOfWeek Thursday",
        ),
        (
            {"type": "WeeklySpan", "endDayOfWeek": "Saturday", "endTime": "24:00"},
            "spec.endTime: '24:00' is not a time of day in the form HH:mm (00:00 to 23:59); "
            "for a window that ends at midnight write 00:00 and endDayOfWeek Sunday",
        ),
        (
            {"type": "OneShot", "startTime": "2026-12-31T20:00", "endTime": "2026-12-31T24:00"},
            "spec.endTime: '2026-12-31T24:00' is not a valid date and time: hour must be in "
            "0..23; midnight at the end of 2026-12-31 is 2027-01-01T00:00: write that",
        ),
    ],
)
def test_a_time_of_24_00_says_how_to_write_midnight(changes: dict[str, Any], expected: str) -> None:
    assert messages(_push(**changes)) == [expected]


def test_an_integer_beyond_int64_is_shown_as_written() -> None:
    # The reader keeps the digits of a number kubectl sends as a float64 (1.2345678901234567e+31).
    number = WrittenNumber(12345678901234567890123456789012, "12345678901234567890123456789012")
    assert messages(_push(minReplicas=number)) == [
        "spec.minReplicas: must be an integer, got 12345678901234567890123456789012 (too large: "
        "kubectl sends an integer beyond 64 bits as a floating-point number)"
    ]
    assert copy.deepcopy(number).text == number.text
    assert json.dumps(number) == "1.2345678901234567e+31"


def test_a_long_wrong_value_is_shortened() -> None:
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(_push(minReplicas="9" * 70_000))
    [error] = caught.value.errors
    assert error.message.startswith("must be an integer, got '99999")
    assert error.message.endswith("... (70,000 characters) (too large for a number)")


def test_metadata_name_and_namespace_are_checked_as_the_api_server_checks_them() -> None:
    document = copy.deepcopy(SCHEDULE)
    document["metadata"] = {"name": "Push_1", "namespace": "Default", "lables": {}}
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(document)
    assert [error.field for error in caught.value.errors] == [
        "metadata.lables",
        "metadata.name",
        "metadata.namespace",
    ]
    assert caught.value.errors[0].message == "unknown field; did you mean 'labels'?"


def test_a_very_deep_value_is_an_error_of_its_field() -> None:
    deep: Any = []
    for _ in range(900):
        deep = [deep]
    # Set after the builder, which copies its arguments deeply (900 levels would overflow).
    document = _push()
    document["spec"] |= {"bogus": deep, "minReplicas": deep}
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(document)
    assert {str(error) for error in caught.value.errors} == {
        "spec.minReplicas: must be an integer, got a list",
        "spec.bogus: unknown field",
    }


def test_many_errors_in_one_object_are_cut_short() -> None:
    document = copy.deepcopy(SPA)
    document["spec"]["horizontalPodAutoscalerSpec"]["metrics"] = [{"type": "Nope"}] * 5000
    with pytest.raises(InvalidObject) as caught:
        parse_scheduled_pod_autoscaler(document)
    assert len(caught.value.errors) == 21
    assert caught.value.errors[-1].message == "4,980 more problems in this object not shown"


def test_a_whole_number_written_as_a_float_is_not_an_integer_to_the_models() -> None:
    # The reader turns 5.0 into 5 as kubectl does (tests/unit/plan/test_decoding.py); a float that
    # reaches the models is a float.
    with pytest.raises(InvalidObject, match=r"must be an integer, got 5\.0"):
        parse_schedule(_push(minReplicas=5.0))


@pytest.mark.parametrize("field", ["endDate", "startDate"])
def test_a_list_in_a_date_field_says_the_api_server_lets_it_through(field: str) -> None:
    # The API server's format: date check admits a list (found by make test-parity).
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(_push(**{field: [1]}))
    [error] = caught.value.errors
    assert error.field == f"spec.{field}"
    assert error.message == (
        "must be a string, got a list (the API server admits a list in a date field; "
        "the controller refuses it)"
    )


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        (
            "2026-12-25T00:00",
            "; write the date alone, 2026-12-25: a date field takes no time of day or UTC "
            "offset (dates are judged in the Schedule's timeZone)",
        ),
        (
            "2026-12-25T00:00:00Z",
            "; write the date alone, 2026-12-25: a date field takes no time of day or UTC "
            "offset (dates are judged in the Schedule's timeZone)",
        ),
        ("+2026-12-25", "; write it without the sign: 2026-12-25"),
        ("10000-01-01", "; the years are 0001 to 9999"),
        ("the 25th of December", ""),
    ],
)
@pytest.mark.parametrize("field", ["startDate", "endDate", "excludeDates"])
def test_a_date_with_more_than_the_date_says_its_form(field: str, written: str, hint: str) -> None:
    """A date field holds at most 10 characters: a date with a time or an offset (as an
    RFC 3339 instant is written), a sign or a year of five digits said only `must be at most 10
    characters, got 16`."""
    value: Any = [written] if field == "excludeDates" else written
    with pytest.raises(InvalidObject) as caught:
        parse_schedule(_push(**{field: value}))
    [error] = caught.value.errors
    assert error.field == f"spec.{field}" + ("[0]" if field == "excludeDates" else "")
    assert error.message == f"must be a date in the form yyyy-MM-dd, got {written!r}{hint}"
