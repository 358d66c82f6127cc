"""Shared calendars (docs/schedules.md, "Shared calendars"): a Calendar or ClusterCalendar is
checked field by field, a Schedule's references resolve by the rule of spa.api.calendars
(a Calendar in the Schedule's namespace only), what cannot be resolved is an error of
`spec.calendars[i]`, and the engine skips, or keeps only, the calendars' dates with the
reasons `spa plan` shows. The property tests against the naive reference are in
tests/unit/schedule/test_engine_calendar_properties.py."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from spa.api import InvalidObject, compile_schedule, parse_schedule, wire
from spa.api.calendars import CalendarKey, calendar_lookup, keys_of, referenced_calendars
from spa.api.validation.parse import parse_calendar
from spa.schedule import (
    Calendar,
    CalendarRule,
    DateSet,
    HolidayMode,
    PublicHolidays,
    SkipCause,
    Timeline,
    skipped_between,
)
from spa.schedule.calendar import Verdict
from tests.builders import calendar, schedule

BLACK_FRIDAY = calendar(
    name="black-friday",
    description="Retail peak days",
    dates=["2026-12-24"],
    dateRanges=[{"start": "2026-11-27", "end": "2026-11-30"}],
)
FREEZE = calendar(name="freeze", namespace="shop", dates=["2026-11-29"])
# Every day 08:00-20:00 in New York.
_DAILY: dict[str, Any] = {
    "type": "Daily",
    "startTime": "08:00",
    "endTime": "20:00",
    "timeZone": "America/New_York",
}


def at(day: int, hour: int = 0, month: int = 11, year: int = 2026) -> int:
    return int(dt.datetime(year, month, day, hour, tzinfo=dt.UTC).timestamp())


def compiled(references: list[dict[str, Any]], *documents: dict[str, Any]) -> Any:
    spec = parse_schedule(schedule(calendars=references, **_DAILY)).spec
    return compile_schedule(spec, calendars=calendar_lookup("shop", keys_of(documents)))


def errors(action: Any) -> list[str]:
    try:
        action()
    except InvalidObject as invalid:
        return [str(error) for error in invalid.errors]
    return []


def days_started(window: Any, low: int, high: int) -> list[str]:
    return sorted({o.day.isoformat() for o in window.occurrences(low, high) if low <= o.start})


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (BLACK_FRIDAY, []),
        (
            calendar(dates=["2026-11-27", "2026-02-30", "2026-11-27"]),
            [
                "spec.dates[1]: '2026-02-30' is not a valid date: day is out of range for month",
                "spec.dates[2]: 2026-11-27 is listed twice",
            ],
        ),
        (
            calendar(dateRanges=[{"start": "2026-11-30", "end": "2026-11-27"}]),
            ["spec.dateRanges[0].end: must not be before start (2026-11-30)"],
        ),
        (calendar(holidays={"country": "ZZ"}), ["spec.holidays.country"]),
        (calendar(holidays={"country": "US", "subdivision": "XX"}), ["spec.holidays.subdivision"]),
        (calendar(holidays={"country": "US", "mode": "Only"}), ["spec.holidays.mode"]),
        (calendar(namespace="shop", dateRange=[]), ["spec.dateRange: unknown field"]),
        (
            calendar(
                dates=["2026-11-27T00:00"],
                dateRanges=[{"start": "2026-11-27Z", "end": "10000-01-01"}],
            ),
            [
                "spec.dates[0]: must be a date in the form yyyy-MM-dd, got '2026-11-27T00:00'; "
                "write the date alone, 2026-11-27",
                "spec.dateRanges[0].start: must be a date in the form yyyy-MM-dd, got "
                "'2026-11-27Z'; write the date alone, 2026-11-27",
                "spec.dateRanges[0].end: must be a date in the form yyyy-MM-dd, got "
                "'10000-01-01'; the years are 0001 to 9999",
            ],
        ),
    ],
)
def test_a_calendar_is_checked_field_by_field(
    document: dict[str, Any], expected: list[str]
) -> None:
    found = errors(lambda: parse_calendar(document))
    assert len(found) == len(expected)
    for message, start in zip(found, expected, strict=True):
        assert message.startswith(start), message


def test_missing_calendars_are_errors_of_their_reference() -> None:
    references = [
        {"kind": "ClusterCalendar", "name": "black-friday", "mode": "Only"},
        {"name": "freeze"},
    ]
    assert errors(lambda: compiled(references)) == [
        'spec.calendars[0]: ClusterCalendar "black-friday" not found',
        'spec.calendars[1]: Calendar "freeze" in namespace shop not found',
    ]
    # A Calendar of another namespace is not this Schedule's, whatever its name.
    elsewhere = calendar(name="freeze", namespace="payments", dates=["2026-11-29"])
    assert errors(lambda: compiled(references, BLACK_FRIDAY, elsewhere)) == [
        'spec.calendars[1]: Calendar "freeze" in namespace shop not found; a Calendar of that '
        "name exists in namespace payments (a Calendar serves the Schedules of its own "
        "namespace only)",
    ]
    # Nor is a ClusterCalendar named like the Calendar the reference means.
    same_name = calendar(name="freeze", dates=["2026-11-29"])
    assert len(errors(lambda: compiled(references, BLACK_FRIDAY, same_name))) == 1
    assert errors(lambda: compiled(references, BLACK_FRIDAY, FREEZE)) == []


def test_an_invalid_calendar_is_an_error_of_the_reference_that_names_its_field() -> None:
    broken = calendar(name="black-friday", dates=["2026-11-31"])
    found = errors(lambda: compiled([{"kind": "ClusterCalendar", "name": "black-friday"}], broken))
    assert found == [
        'spec.calendars[0]: ClusterCalendar "black-friday" is invalid: spec.dates[0]: '
        "'2026-11-31' is not a valid date: day is out of range for month"
    ]


def test_only_keeps_the_calendars_dates_and_skip_names_the_calendar() -> None:
    window = compiled(
        [{"kind": "ClusterCalendar", "name": "black-friday", "mode": "Only"}, {"name": "freeze"}],
        BLACK_FRIDAY,
        FREEZE,
    ).window
    assert days_started(window, at(1), at(31, month=12)) == [
        "2026-11-27",
        "2026-11-28",
        "2026-11-30",
        "2026-12-24",
    ]
    skipped = skipped_between(window, at(1), at(31, month=12))
    assert [(s.occurrence.day.isoformat(), s.reason) for s in skipped] == [
        ("2026-11-29", "calendar: Calendar/freeze")
    ]
    assert skipped[0].describe() == "excluded 2026-11-29 (calendar: Calendar/freeze)"
    # The window of 27 November runs 08:00-20:00 in New York: 13:00-01:00 UTC.
    timeline = Timeline(window)
    assert not timeline.is_active(at(27, 12))
    assert timeline.is_active(at(27, 13))
    assert timeline.next_boundary(at(26), horizon=40 * 86400) == at(27, 13)


def test_several_only_calendars_keep_a_date_of_any_of_them() -> None:
    holidays = calendar(name="us", holidays={"country": "US"})
    window = compiled(
        [
            {"kind": "ClusterCalendar", "name": "black-friday", "mode": "Only"},
            {"kind": "ClusterCalendar", "name": "us", "mode": "Only"},
        ],
        BLACK_FRIDAY,
        holidays,
    ).window
    # Thanksgiving (26), the Black Friday range, Christmas Eve and Christmas Day.
    assert days_started(window, at(20), at(27, month=12)) == [
        "2026-11-26",
        "2026-11-27",
        "2026-11-28",
        "2026-11-29",
        "2026-11-30",
        "2026-12-24",
        "2026-12-25",
    ]


def test_the_schedules_own_rules_come_first() -> None:
    spec = parse_schedule(
        schedule(
            excludeDates=["2026-11-29"],
            calendars=[{"name": "freeze"}],
            **_DAILY,
        )
    ).spec
    window = compile_schedule(spec, calendars=calendar_lookup("shop", keys_of([FREEZE]))).window
    assert [s.reason for s in skipped_between(window, at(28), at(30))] == ["excludeDates"]


# The bug of issue 35: with `holidays: {mode: Only}` every shared calendar was ignored.
THANKSGIVING_FREEZE = calendar(name="thanksgiving-freeze", namespace="shop", dates=["2026-11-26"])
CHRISTMAS = calendar(
    name="christmas", namespace="shop", dateRanges=[{"start": "2026-12-24", "end": "2026-12-25"}]
)
US_ONLY: dict[str, Any] = {"country": "US", "mode": "Only"}


def test_a_skip_calendar_skips_a_holiday_of_holidays_only() -> None:
    """docs/schedules.md, "How the date rules compose": a Skip calendar beats `holidays: Only`,
    and the skipped window is named after the calendar."""
    spec = parse_schedule(
        schedule(holidays=US_ONLY, calendars=[{"name": "thanksgiving-freeze"}], **_DAILY)
    ).spec
    lookup = calendar_lookup("shop", keys_of([THANKSGIVING_FREEZE]))
    window = compile_schedule(spec, calendars=lookup).window
    # The US holidays of November 2026 to January 2027 but Thanksgiving (26 November).
    assert days_started(window, at(1), at(31, month=1, year=2027)) == [
        "2026-11-11",
        "2026-12-25",
        "2027-01-01",
        "2027-01-18",
    ]
    skipped = skipped_between(window, at(1), at(31, month=1, year=2027))
    assert [(s.occurrence.day.isoformat(), s.reason) for s in skipped] == [
        ("2026-11-26", "calendar: Calendar/thanksgiving-freeze")
    ]


def test_an_only_calendar_and_holidays_only_both_hold() -> None:
    """A window starts on a holiday that is also on an Only calendar: Christmas Day alone, not
    Christmas Eve (no holiday) nor Thanksgiving and New Year's Day (on no Only calendar)."""
    spec = parse_schedule(
        schedule(holidays=US_ONLY, calendars=[{"name": "christmas", "mode": "Only"}], **_DAILY)
    ).spec
    window = compile_schedule(spec, calendars=calendar_lookup("shop", keys_of([CHRISTMAS]))).window
    assert days_started(window, at(1), at(31, month=1, year=2027)) == ["2026-12-25"]
    assert skipped_between(window, at(1), at(31, month=1, year=2027)) == []


def test_the_references_a_stored_schedule_makes_are_read_leniently() -> None:
    stored = schedule(
        calendars=[
            {"kind": "ClusterCalendar", "name": "black-friday"},
            {"name": "freeze", "mode": "Only"},
            {"kind": "Calendar"},
            "not a reference",
        ],
        **_DAILY,
    )
    assert referenced_calendars(wire.typed(wire.Schedule, stored)) == [
        CalendarKey("ClusterCalendar", "", "black-friday"),
        CalendarKey("Calendar", "shop", "freeze"),
    ]
    unreadable = schedule(calendars="none", **_DAILY)
    assert referenced_calendars(wire.typed(wire.Schedule, unreadable)) == []


# --- the engine alone (spa/schedule/calendar.py) ---------------------------------------------


def test_a_date_set_holds_its_days_its_ranges_and_its_holidays() -> None:
    dates = DateSet(
        name="ClusterCalendar/peak",
        days=frozenset({dt.date(2026, 12, 24)}),
        ranges=((dt.date(2026, 11, 27), dt.date(2026, 11, 30)),),
        holidays=PublicHolidays("US", None),
    )
    inside = ["2026-11-26", "2026-11-27", "2026-11-30", "2026-12-24", "2026-12-25"]
    outside = ["2026-11-25", "2026-12-01", "2026-12-23", "2026-12-26"]
    assert all(dt.date.fromisoformat(day) in dates for day in inside)
    assert not any(dt.date.fromisoformat(day) in dates for day in outside)
    assert "2026-11-27" not in dates  # a date, not its text


def test_the_engine_judges_only_first_then_the_first_skip_calendar() -> None:
    peak = DateSet(name="ClusterCalendar/peak", days=frozenset({dt.date(2026, 11, 27)}))
    xmas = DateSet(name="ClusterCalendar/xmas", days=frozenset({dt.date(2026, 12, 24)}))
    freeze = DateSet(
        name="Calendar/freeze",
        ranges=((dt.date(2026, 11, 27), dt.date(2026, 11, 27)),),
    )
    other = DateSet(name="Calendar/other", days=frozenset({dt.date(2026, 11, 27)}))
    calendar_ = Calendar(
        shared=(
            CalendarRule(peak, HolidayMode.ONLY),
            CalendarRule(freeze),
            CalendarRule(other),
            CalendarRule(xmas, HolidayMode.ONLY),
        )
    )
    assert not calendar_.empty
    # Not on either Only calendar: not part of the schedule, nothing skipped.
    assert calendar_.judge(dt.date(2026, 11, 28)) == Verdict(False)
    # On an Only calendar: it happens.
    assert calendar_.judge(dt.date(2026, 12, 24)) == Verdict(True)
    # On an Only calendar and on two Skip ones: skipped, by the first listed.
    assert calendar_.judge(dt.date(2026, 11, 27)) == Verdict(
        False, SkipCause.CALENDAR, "Calendar/freeze"
    )
    # Without Only calendars every other date happens.
    assert Calendar(shared=(CalendarRule(freeze),)).judge(dt.date(2026, 11, 28)) == Verdict(True)
