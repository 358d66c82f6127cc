"""`spa plan -f` with shared calendars (docs/schedules.md, "Shared calendars"; docs/plan.md):
Calendar and ClusterCalendar documents are read like the other kinds, resolved as the
controller resolves them (spa/api/calendars.py), and the windows they skip are listed with the
calendar's name. The controller's agreement is
tests/unit/agreement/test_membership_agreement.py's."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from spa.plan import Document, Plan, build_plan
from spa.plan.render import describe_error, render_json, render_table
from tests.builders import autoscaler, calendar, schedule

NOW = int(dt.datetime(2026, 11, 26, tzinfo=dt.UTC).timestamp())
WEEK = 7 * 86400
BLACK_FRIDAY = calendar(
    name="black-friday",
    description="Retail peak days",
    dates=["2026-12-24"],
    dateRanges=[{"start": "2026-11-27", "end": "2026-11-30"}],
)
_PEAK: dict[str, Any] = {
    "type": "Daily",
    "startTime": "08:00",
    "endTime": "20:00",
    "minReplicas": 20,
}


def plan_of(*bodies: dict[str, Any]) -> Plan:
    documents = [Document("peak.yaml", index, body) for index, body in enumerate(bodies, 1)]
    return build_plan(documents, [], at=NOW, until=NOW + WEEK)


def test_an_only_calendar_keeps_its_dates_and_a_skip_calendar_is_named() -> None:
    freeze = calendar(name="freeze", namespace="shop", dates=["2026-11-29"])
    plan = plan_of(
        BLACK_FRIDAY,
        freeze,
        autoscaler(),
        schedule(
            name="peak",
            calendars=[
                {"kind": "ClusterCalendar", "name": "black-friday", "mode": "Only"},
                {"name": "freeze"},
            ],
            **_PEAK,
        ),
    )
    assert plan.errors == []
    (planned,) = plan.autoscalers
    starts = [
        dt.datetime.fromtimestamp(at, dt.UTC).date().isoformat()
        for at, state in planned.transitions
        if state.active
    ]
    assert starts == ["2026-11-27", "2026-11-28", "2026-11-30"]
    table = render_table(plan)
    assert "excluded 2026-11-29 (calendar: Calendar/freeze)" in table
    assert "only on ClusterCalendar/black-friday, skipping Calendar/freeze" in table
    (skipped,) = json.loads(render_json(plan))["autoscalers"][0]["skipped"]
    assert (skipped["date"], skipped["reason"]) == ("2026-11-29", "calendar: Calendar/freeze")


# Issue 35: `holidays: {mode: Only}` switched off every shared calendar of the Schedule.
_HOLIDAY_PEAK: dict[str, Any] = {
    "type": "Daily",
    "startTime": "10:00",
    "endTime": "20:00",
    "timeZone": "America/New_York",
    "holidays": {"country": "US", "mode": "Only"},
    "maxReplicas": 30,
}
_NOVEMBER_TO_JANUARY = (
    int(dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()),
    int(dt.datetime(2027, 2, 1, tzinfo=dt.UTC).timestamp()),
)


def starts_of(plan: Plan) -> list[str]:
    """The local dates (New York) on which the plan's one autoscaler starts a window."""
    (planned,) = plan.autoscalers
    zone = planned.schedules[0].zone
    return [
        dt.datetime.fromtimestamp(at, zone).date().isoformat()
        for at, state in planned.transitions
        if state.active
    ]


def test_a_skip_calendar_beside_holidays_only_skips_thanksgiving() -> None:
    freeze = calendar(name="thanksgiving-freeze", namespace="shop", dates=["2026-11-26"])
    documents = [
        Document("peak.yaml", index, body)
        for index, body in enumerate(
            [
                freeze,
                autoscaler(),
                schedule(
                    name="holiday-peak",
                    calendars=[{"name": "thanksgiving-freeze"}],
                    **_HOLIDAY_PEAK,
                ),
            ],
            1,
        )
    ]
    plan = build_plan(documents, [], at=_NOVEMBER_TO_JANUARY[0], until=_NOVEMBER_TO_JANUARY[1])
    assert plan.errors == []
    assert starts_of(plan) == ["2026-11-11", "2026-12-25", "2027-01-01", "2027-01-18"]
    (skipped,) = plan.autoscalers[0].skipped
    assert skipped.skipped.describe() == (
        "excluded 2026-11-26 (calendar: Calendar/thanksgiving-freeze)"
    )
    (planned,) = plan.autoscalers[0].schedules
    assert planned.window == (
        "daily 10:00-20:00, only on US holidays, skipping Calendar/thanksgiving-freeze"
    )


def test_an_only_calendar_beside_holidays_only_keeps_the_holidays_on_it() -> None:
    christmas = calendar(
        name="christmas",
        namespace="shop",
        dateRanges=[{"start": "2026-12-24", "end": "2026-12-25"}],
    )
    documents = [
        Document("peak.yaml", index, body)
        for index, body in enumerate(
            [
                christmas,
                autoscaler(),
                schedule(
                    name="holiday-peak",
                    calendars=[{"name": "christmas", "mode": "Only"}],
                    **_HOLIDAY_PEAK,
                ),
            ],
            1,
        )
    ]
    plan = build_plan(documents, [], at=_NOVEMBER_TO_JANUARY[0], until=_NOVEMBER_TO_JANUARY[1])
    assert plan.errors == []
    # Not Christmas Eve (no holiday), nor Thanksgiving or New Year's Day (not on the calendar).
    assert starts_of(plan) == ["2026-12-25"]
    assert plan.autoscalers[0].skipped == []
    (planned,) = plan.autoscalers[0].schedules
    assert planned.window == "daily 10:00-20:00, only on US holidays that are on Calendar/christmas"


def test_an_end_date_on_the_last_day_of_the_calendar_is_no_end() -> None:
    """endDate 9999-12-31 has no day after it: the Schedule goes on as without endDate (it was
    a traceback in `spa plan` and the controller)."""
    plan = plan_of(
        autoscaler(), schedule(name="peak", startDate="0001-01-01", endDate="9999-12-31", **_PEAK)
    )
    assert plan.errors == []
    (planned,) = plan.autoscalers
    assert [dt.datetime.fromtimestamp(at, dt.UTC).isoformat() for at, _ in planned.transitions][
        :2
    ] == ["2026-11-26T08:00:00+00:00", "2026-11-26T20:00:00+00:00"]


def test_calendars_are_found_where_the_api_server_would_put_them() -> None:
    # A Calendar without a namespace goes to `default`, as kubectl applies it; a namespace
    # given to a ClusterCalendar is ignored, as kubectl ignores it.
    plan = plan_of(
        calendar(name="freeze", kind="Calendar", dates=["2026-11-27"]),
        {**BLACK_FRIDAY, "metadata": {"name": "black-friday", "namespace": "shop"}},
        autoscaler(namespace="default"),
        schedule(
            name="peak",
            namespace="default",
            calendars=[{"name": "freeze"}, {"kind": "ClusterCalendar", "name": "black-friday"}],
            **_PEAK,
        ),
    )
    assert plan.errors == []
    (planned,) = plan.autoscalers
    assert [s.skipped.reason for s in planned.skipped][:2] == [
        "calendar: Calendar/freeze",
        "calendar: ClusterCalendar/black-friday",
    ]


def test_a_missing_or_invalid_calendar_is_an_error_of_the_schedule_and_of_the_calendar() -> None:
    broken = calendar(name="broken", dateRanges=[{"start": "2026-11-30", "end": "2026-11-27"}])
    plan = plan_of(
        broken,
        calendar(name="broken", dates=["2026-11-27"]),
        autoscaler(),
        schedule(name="lost", calendars=[{"name": "black-friday"}], **_PEAK),
        schedule(name="bad", calendars=[{"kind": "ClusterCalendar", "name": "broken"}], **_PEAK),
    )
    said = [(e.document, e.kind, e.name, e.field, e.message) for e in plan.errors]
    assert said == [
        (
            1,
            "ClusterCalendar",
            "broken",
            "spec.dateRanges[0].end",
            "must not be before start (2026-11-30)",
        ),
        (
            2,
            "ClusterCalendar",
            "broken",
            "metadata.name",
            "duplicate ClusterCalendar broken, first defined in peak.yaml (document 1)",
        ),
        (
            4,
            "Schedule",
            "lost",
            "spec.calendars[0]",
            'Calendar "black-friday" in namespace shop not found',
        ),
        (
            5,
            "Schedule",
            "bad",
            "spec.calendars[0]",
            'ClusterCalendar "broken" is invalid: spec.dateRanges[0].end: must not be before '
            "start (2026-11-30)",
        ),
    ]
    (planned,) = plan.autoscalers
    assert planned.schedules == []


def test_a_calendar_not_found_says_where_one_of_that_name_is() -> None:
    # "not found" and nothing else, while the calendar was there under another kind or in
    # another namespace: the reason it was not found.
    plan = plan_of(
        BLACK_FRIDAY,
        calendar(name="freeze", namespace="ops", dates=["2026-11-27"]),
        calendar(name="local", namespace="shop", dates=["2026-11-27"]),
        autoscaler(),
        schedule(
            name="peak",
            calendars=[
                {"name": "black-friday"},
                {"name": "freeze"},
                {"kind": "ClusterCalendar", "name": "local"},
                {"name": "nowhere"},
            ],
            type="Daily",
            startTime="08:00",
            endTime="20:00",
            minReplicas=20,
        ),
    )
    assert [(error.field, error.message) for error in plan.errors] == [
        (
            "spec.calendars[0]",
            'Calendar "black-friday" in namespace shop not found; a ClusterCalendar of that '
            "name exists: write kind: ClusterCalendar",
        ),
        (
            "spec.calendars[1]",
            'Calendar "freeze" in namespace shop not found; a Calendar of that name exists in '
            "namespace ops (a Calendar serves the Schedules of its own namespace only)",
        ),
        (
            "spec.calendars[2]",
            'ClusterCalendar "local" not found; a Calendar of that name exists in namespace '
            "shop: leave out kind (or write kind: Calendar)",
        ),
        ("spec.calendars[3]", 'Calendar "nowhere" in namespace shop not found'),
    ]


def test_a_structural_error_of_a_calendar_does_not_hide_its_dates() -> None:
    broken = calendar(name="broken", dates=["2026-02-30", 5], dateRange=[])
    plan = plan_of(broken, autoscaler())
    assert [(error.field, error.message.split(",")[0]) for error in plan.errors] == [
        ("spec.dates[0]", "'2026-02-30' is not a valid date: day is out of range for month"),
        ("spec.dates[1]", "must be a string"),
        ("spec.dateRange", "unknown field; did you mean 'dateRanges'?"),
    ]


def test_an_error_of_a_cluster_calendar_names_no_namespace() -> None:
    plan = plan_of(calendar(name="broken", dates=["2026-02-30"]), autoscaler())
    (error,) = plan.errors
    assert error.namespace is None
    assert describe_error(error).startswith(
        "peak.yaml (document 1) ClusterCalendar broken: spec.dates[0]: "
    )


def test_a_calendar_with_broken_metadata_is_an_error_not_a_crash() -> None:
    plan = plan_of(
        {**calendar(name="x"), "metadata": "black-friday"},
        {**calendar(name="y", namespace="shop"), "metadata": ["shop"]},
        autoscaler(),
    )
    assert [(e.kind, e.field) for e in plan.errors] == [
        ("ClusterCalendar", "metadata"),
        ("Calendar", "metadata"),
    ]
