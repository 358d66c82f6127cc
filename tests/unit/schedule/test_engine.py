"""The schedule engine against hand-computed cases: windows, day ranges, DST, effective values."""

from __future__ import annotations

import re
import sys
from datetime import UTC, date, datetime, time, timedelta

import pytest

from spa.schedule import (
    Base,
    CronExpression,
    OneShotWindow,
    RecurringWindow,
    Rule,
    State,
    Timeline,
    Weekday,
    format_instant,
    load_zone,
    next_transition,
    parse_hour_minute,
    parse_local_datetime,
    state_at,
    to_instant,
    transitions_between,
    weekdays_between,
)
from spa.schedule.wallclock import WallClockError

# 2026-11-16 is a Monday.
MONDAY = "2026-11-16"


def utc(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def weekly(first: str, last: str, start: str, end: str, zone: str = "UTC") -> Timeline:
    return Timeline(
        RecurringWindow(
            start=parse_hour_minute(start),
            end=parse_hour_minute(end),
            zone=load_zone(zone),
            days=weekdays_between(Weekday[first], Weekday[last]),
        )
    )


def daily(start: str, end: str, zone: str = "UTC") -> Timeline:
    return Timeline(
        RecurringWindow(
            start=parse_hour_minute(start), end=parse_hour_minute(end), zone=load_zone(zone)
        )
    )


def oneshot(start: str, end: str, zone: str = "UTC") -> Timeline:
    return Timeline(
        OneShotWindow(
            start=parse_local_datetime(start), end=parse_local_datetime(end), zone=load_zone(zone)
        )
    )


class TestOriginalControllerCases:
    """The public unit cases of the original Go controller, in UTC, still hold."""

    def test_weekly_crossing_midnight_is_inactive_on_tuesday_afternoon(self) -> None:
        window = weekly("Monday", "Wednesday", "15:00", "01:30")
        assert not window.is_active(utc("2026-11-17T14:00"))

    def test_weekly_crossing_midnight_is_active_early_wednesday(self) -> None:
        window = weekly("Monday", "Wednesday", "15:00", "01:30")
        assert window.is_active(utc("2026-11-18T01:00"))

    def test_weekly_wrapping_to_sunday_is_active_early_monday(self) -> None:
        window = weekly("Tuesday", "Sunday", "15:00", "01:30")
        assert window.is_active(utc("2026-11-16T01:20"))

    def test_daily_window(self) -> None:
        window = daily("20:20", "20:25")
        assert window.is_active(utc("2026-11-21T20:20"))
        assert window.is_active(utc("2026-11-21T20:24:59"))
        assert not window.is_active(utc("2026-11-21T20:25"))
        assert not window.is_active(utc("2026-11-21T20:19:59"))

    def test_oneshot_window(self) -> None:
        window = oneshot("2020-10-31T20:30", "2020-10-31T20:35")
        assert window.is_active(utc("2020-10-31T20:30"))
        assert not window.is_active(utc("2020-10-31T20:35"))
        assert not window.is_active(utc("2020-11-01T20:31"))


class TestRecurringWindows:
    def test_window_crossing_midnight_belongs_to_its_start_day(self) -> None:
        monday_only = weekly("Monday", "Monday", "15:00", "01:00")
        assert monday_only.is_active(utc("2026-11-17T00:30"))  # Tuesday 00:30
        assert not monday_only.is_active(utc("2026-11-16T00:30"))  # Monday 00:30

    def test_weekly_range_is_not_one_continuous_span(self) -> None:
        window = weekly("Monday", "Wednesday", "11:50", "13:00")
        assert not window.is_active(utc("2026-11-17T15:00"))
        assert window.is_active(utc("2026-11-17T12:00"))

    @pytest.mark.parametrize(
        ("day", "active"),
        [
            ("2026-11-20", True),  # Friday
            ("2026-11-21", True),  # Saturday
            ("2026-11-22", True),  # Sunday
            ("2026-11-23", True),  # Monday
            ("2026-11-24", False),  # Tuesday
            ("2026-11-19", False),  # Thursday
        ],
    )
    def test_day_range_wraps_past_saturday(self, day: str, active: bool) -> None:
        window = weekly("Friday", "Monday", "09:00", "10:00")
        assert window.is_active(utc(f"{day}T09:30")) is active

    def test_equal_times_make_a_24_hour_window(self) -> None:
        window = weekly("Monday", "Monday", "10:00", "10:00")
        assert window.is_active(utc(f"{MONDAY}T10:00"))
        assert window.is_active(utc("2026-11-17T09:59"))
        assert not window.is_active(utc("2026-11-17T10:00"))
        assert window.next_boundary(utc(f"{MONDAY}T10:00")) == utc("2026-11-17T10:00")

    def test_24_hour_windows_on_consecutive_days_join_without_a_boundary(self) -> None:
        window = weekly("Monday", "Tuesday", "10:00", "10:00")
        assert window.boundaries_between(utc("2026-11-14T00:00"), utc("2026-11-22T00:00")) == [
            utc(f"{MONDAY}T10:00"),
            utc("2026-11-18T10:00"),
        ]

    def test_daily_24_hours_never_changes(self) -> None:
        window = daily("08:00", "08:00", "Asia/Tokyo")
        assert window.is_active(utc("2026-11-16T03:00"))
        assert window.next_boundary(utc("2026-11-16T03:00")) is None

    def test_next_boundary_is_strictly_after(self) -> None:
        window = daily("08:00", "09:00")
        assert window.next_boundary(utc("2026-11-16T08:00")) == utc("2026-11-16T09:00")
        assert window.next_boundary(utc("2026-11-16T07:59:59")) == utc("2026-11-16T08:00")
        assert window.next_boundary(utc("2026-11-16T09:00")) == utc("2026-11-17T08:00")

    def test_time_zone_is_applied(self) -> None:
        window = daily("11:50", "13:00", "Asia/Tokyo")  # 02:50-04:00 UTC
        assert window.is_active(utc("2026-11-16T02:50"))
        assert not window.is_active(utc("2026-11-16T11:50"))

    def test_boundaries_across_chunk_edges_are_found(self) -> None:
        window = daily("23:00", "01:00")
        found = window.boundaries_between(utc("2026-01-01T00:00"), utc("2026-03-01T00:00"))
        # Jan 1 01:00 ends the window begun on Dec 31; then 59 starts (Jan 1 to Feb 28) and
        # 58 ends (Jan 2 to Feb 28); Mar 1 01:00 is past the end of the range.
        assert len(found) == 1 + 59 + 58
        assert found == sorted(found)


class TestOneShot:
    def test_completed_from_end_instant(self) -> None:
        window = OneShotWindow(
            start=parse_local_datetime("2026-03-01T10:00"),
            end=parse_local_datetime("2026-03-01T12:00"),
            zone=load_zone("Asia/Tokyo"),
        )
        assert not window.completed(utc("2026-03-01T02:59"))
        assert window.completed(utc("2026-03-01T03:00"))

    def test_no_boundary_after_the_end(self) -> None:
        window = oneshot("2026-03-01T10:00", "2026-03-01T12:00")
        assert window.next_boundary(utc("2026-03-01T11:00")) == utc("2026-03-01T12:00")
        assert window.next_boundary(utc("2026-03-01T12:00")) is None

    def test_far_future_start_is_found_within_the_horizon_only(self) -> None:
        window = oneshot("2027-06-01T00:00", "2027-06-02T00:00")
        assert window.next_boundary(utc("2026-11-16T00:00")) == utc("2027-06-01T00:00")
        assert window.next_boundary(utc("2026-11-16T00:00"), horizon=86400) is None


class TestDaylightSaving:
    """docs/schedules.md's daylight-saving rules in zones east and west of UTC, in the
    southern hemisphere and with a half-hour shift."""

    @pytest.mark.parametrize(
        ("zone", "wall", "expected_utc"),
        [
            # New York springs forward 2026-03-08 02:00 EST -> 03:00 EDT (07:00 UTC).
            ("America/New_York", "2026-03-08T02:30", "2026-03-08T07:00"),
            ("America/New_York", "2026-03-08T02:00", "2026-03-08T07:00"),
            ("America/New_York", "2026-03-08T03:00", "2026-03-08T07:00"),
            ("America/New_York", "2026-03-08T01:59", "2026-03-08T06:59"),
            # Berlin springs forward 2026-03-29 02:00 CET -> 03:00 CEST (01:00 UTC).
            ("Europe/Berlin", "2026-03-29T02:15", "2026-03-29T01:00"),
            # Sydney springs forward 2026-10-04 02:00 AEST -> 03:00 AEDT (2026-10-03 16:00 UTC).
            ("Australia/Sydney", "2026-10-04T02:45", "2026-10-03T16:00"),
            # Lord Howe moves by half an hour: 02:00 -> 02:30 (2026-10-03 15:30 UTC).
            ("Australia/Lord_Howe", "2026-10-04T02:10", "2026-10-03T15:30"),
        ],
    )
    def test_skipped_time_takes_effect_when_the_clock_jumps(
        self, zone: str, wall: str, expected_utc: str
    ) -> None:
        assert to_instant(parse_local_datetime(wall), load_zone(zone)) == utc(expected_utc)

    @pytest.mark.parametrize(
        ("zone", "wall", "expected_utc"),
        [
            # New York falls back 2026-11-01 02:00 EDT -> 01:00 EST: 01:30 happens at 05:30 UTC
            # (EDT) and again at 06:30 UTC; the first counts.
            ("America/New_York", "2026-11-01T01:30", "2026-11-01T05:30"),
            ("Europe/Berlin", "2026-10-25T02:30", "2026-10-25T00:30"),
            ("Australia/Sydney", "2026-04-05T02:30", "2026-04-04T15:30"),
            ("Australia/Lord_Howe", "2026-04-05T01:45", "2026-04-04T14:45"),
        ],
    )
    def test_repeated_time_takes_effect_at_first_occurrence(
        self, zone: str, wall: str, expected_utc: str
    ) -> None:
        assert to_instant(parse_local_datetime(wall), load_zone(zone)) == utc(expected_utc)

    def test_window_wholly_inside_skipped_hour_is_empty_that_day(self) -> None:
        window = daily("02:10", "02:50", "America/New_York")
        assert window.boundaries_between(utc("2026-03-07T00:00"), utc("2026-03-09T12:00")) == [
            utc("2026-03-07T07:10"),  # EST
            utc("2026-03-07T07:50"),
            utc("2026-03-09T06:10"),  # EDT
            utc("2026-03-09T06:50"),
        ]

    def test_window_spanning_repeated_hour_lasts_an_hour_longer(self) -> None:
        window = daily("00:30", "03:00", "America/New_York")
        fall_back = window.boundaries_between(utc("2026-11-01T00:00"), utc("2026-11-01T12:00"))
        start, end = fall_back
        assert end - start == (2 * 3600 + 30 * 60) + 3600

    def test_window_starting_in_gap_starts_at_the_jump(self) -> None:
        window = daily("02:30", "04:00", "Europe/Berlin")
        assert window.next_boundary(utc("2026-03-28T23:00")) == utc("2026-03-29T01:00")
        assert window.is_active(utc("2026-03-29T01:00"))

    def test_oneshot_ending_in_gap_ends_at_the_jump(self) -> None:
        window = oneshot("2026-03-08T00:00", "2026-03-08T02:30", "America/New_York")
        assert window.next_boundary(utc("2026-03-08T06:00")) == utc("2026-03-08T07:00")


class TestParsing:
    @pytest.mark.parametrize(
        ("text", "expected"), [("0:00", time(0, 0)), ("9:05", time(9, 5)), ("23:59", time(23, 59))]
    )
    def test_hour_minute(self, text: str, expected: time) -> None:
        assert parse_hour_minute(text) == expected

    @pytest.mark.parametrize("text", ["24:00", "9:5", "09:60", "0900", " 09:00", "09:00:00", ""])
    def test_bad_hour_minute(self, text: str) -> None:
        with pytest.raises(WallClockError, match="HH:mm"):
            parse_hour_minute(text)

    @pytest.mark.parametrize(
        "text", ["2026-02-30T10:00", "2026-1-01T10:00", "2026-01-01 10:00", "2026-01-01T10:00Z"]
    )
    def test_bad_local_datetime(self, text: str) -> None:
        with pytest.raises(WallClockError):
            parse_local_datetime(text)

    def test_zone_names_are_case_sensitive(self) -> None:
        assert load_zone("Asia/Tokyo").key == "Asia/Tokyo"
        with pytest.raises(WallClockError, match="unknown time zone 'asia/tokyo'"):
            load_zone("asia/tokyo")

    @pytest.mark.parametrize("name", ["../etc/passwd", "Asia/Tokio", "Asia", "/UTC"])
    def test_unknown_zones(self, name: str) -> None:
        with pytest.raises(WallClockError, match="unknown time zone"):
            load_zone(name)

    def test_empty_zone_is_utc(self) -> None:
        assert load_zone("").key == "UTC"

    def test_format_instant(self) -> None:
        assert format_instant(utc("2026-03-08T07:00")) == "2026-03-08T07:00:00Z"


def rule(name: str, timeline: Timeline, minimum: int | None, maximum: int | None) -> Rule:
    return Rule(name=name, timeline=timeline, min_replicas=minimum, max_replicas=maximum)


class TestEffectiveValues:
    """docs/schedules.md, "Effective values", with its examples (base 3/10)."""

    base = Base(min_replicas=3, max_replicas=10)
    always = daily("00:00", "00:00")
    t = utc("2026-11-16T12:00")

    def test_highest_of_each_field(self) -> None:
        rules = [rule("a", self.always, 5, 10), rule("b", self.always, 3, 20)]
        assert state_at(self.base, rules, self.t) == State(5, 20, ("a", "b"))

    def test_unset_fields_keep_the_base_independently(self) -> None:
        rules = [rule("min", self.always, 2, None), rule("max", self.always, None, 4)]
        assert state_at(self.base, rules, self.t) == State(2, 4, ("max", "min"))

    def test_no_active_window_gives_the_base(self) -> None:
        rules = [rule("later", daily("20:00", "21:00"), 50, 60)]
        assert state_at(self.base, rules, self.t) == State(3, 10, ())

    def test_max_is_raised_to_min(self) -> None:
        rules = [rule("big", self.always, 20, None)]
        assert state_at(self.base, rules, self.t) == State(20, 20, ("big",), max_raised=True)

    def test_unset_base_min_means_one(self) -> None:
        assert state_at(Base(None, 5), [], self.t) == State(1, 5, ())

    def test_next_transition_is_the_earliest_boundary(self) -> None:
        rules = [
            rule("a", daily("13:00", "14:00"), 5, None),
            rule("b", daily("12:30", "15:00"), 4, None),
        ]
        assert next_transition(self.base, rules, self.t) == utc("2026-11-16T12:30")
        assert next_transition(self.base, rules, utc("2026-11-16T12:30")) == utc("2026-11-16T13:00")

    def test_next_transition_none_without_rules(self) -> None:
        assert next_transition(self.base, [], self.t) is None

    def test_original_readme_timeline(self) -> None:
        """Three schedules one after another; the HPA returns to base between them."""
        rules = [
            rule("test-1", weekly("Saturday", "Saturday", "20:10", "20:15"), 1, 1),
            rule("test-2", daily("20:20", "20:25"), 2, 2),
            rule("test-3", oneshot("2020-10-31T20:30", "2020-10-31T20:35"), 3, 3),
        ]
        found = transitions_between(
            self.base, rules, utc("2020-10-31T20:00"), utc("2020-10-31T20:40")
        )
        assert [
            (format_instant(t), s.min_replicas, s.max_replicas, s.active) for t, s in found
        ] == [
            ("2020-10-31T20:10:00Z", 1, 1, ("test-1",)),
            ("2020-10-31T20:15:00Z", 3, 10, ()),
            ("2020-10-31T20:20:00Z", 2, 2, ("test-2",)),
            ("2020-10-31T20:25:00Z", 3, 10, ()),
            ("2020-10-31T20:30:00Z", 3, 3, ("test-3",)),
            ("2020-10-31T20:35:00Z", 3, 10, ()),
        ]

    def test_back_to_back_windows_change_the_active_set(self) -> None:
        rules = [
            rule("a", daily("10:00", "11:00"), 5, None),
            rule("b", daily("11:00", "12:00"), 5, None),
        ]
        found = transitions_between(
            self.base, rules, utc("2026-11-16T09:00"), utc("2026-11-16T13:00")
        )
        assert [s.active for _, s in found] == [("a",), ("b",), ()]
        assert [s.min_replicas for _, s in found] == [5, 5, 3]


class TestCronDays:
    """Day-of-month and day-of-week forms beyond the property tests' generator (docs/schedules.md,
    "Cron"): cronsim's extensions, Sunday as 7, both day fields restricted, one-value steps."""

    @pytest.mark.parametrize(
        ("text", "days"),
        [
            ("0 9 L * *", [30]),  # the last day of November 2026
            ("0 9 LW * *", [30]),  # a Monday
            ("0 9 * * 5#2", [13]),  # the second Friday
            ("0 9 * * 0,7", [1, 8, 15, 22, 29]),  # Sundays
            ("0 9 1 * MON", [1, 2, 9, 16, 23, 30]),  # the 1st or a Monday
            ("0 9 1 * *", [1]),  # a star day-of-week: the day of month alone
            ("0 9 * NOV 6-6/3", [7, 14, 21, 28]),  # a stepped range of one value: Saturdays
        ],
    )
    def test_days_of_november_2026(self, text: str, days: list[int]) -> None:
        expression = CronExpression(text)
        november = [date(2026, 11, 1) + timedelta(days=n) for n in range(30)]
        assert [d.day for d in november if expression.matches_day(d)] == days

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("0 9 * *", "has 4 fields: write 5"),
            ("0 0 9 * * *", "has 6 fields (seconds are not supported)"),
            # Said to be a seconds field: the zone is the Schedule's timeZone.
            (
                "CRON_TZ=Europe/Berlin 0 9 * * 1-5",
                "'CRON_TZ=Europe/Berlin 0 9 * * 1-5' names its time zone (CRON_TZ=), which the "
                "schedule does not take: write '0 9 * * 1-5' and the zone as the Schedule's "
                "timeZone (Europe/Berlin)",
            ),
            ("TZ=Asia/Tokyo @daily", "write '@daily' and the zone as the Schedule's timeZone"),
            ("@reboot", "unknown macro '@reboot'"),
            ("0 9 * * MON-XYZ", "bad day-of-week field 'MON-XYZ'"),
            ("0 9\t* * *", "must separate its 5 fields with spaces"),
            ("0 9 32 * *", "bad day-of-month field '32'"),
            ("0 2 30 2 *", "never matches: day-of-month '30' does not occur in month '2'"),
            ("0 2 31 APR,JUN *", "day-of-month '31' does not occur in month 'APR,JUN'"),
        ],
    )
    def test_bad_expressions_name_the_problem(self, text: str, message: str) -> None:
        with pytest.raises(WallClockError, match=re.escape(message)):
            CronExpression(text)


class TestTimelineChunks:
    """A Timeline caches each week (from a Thursday 00:00 UTC, the epoch's weekday) as the
    state just before it and its boundaries: the state at an instant is that, flipped once per
    boundary up to it (docs/performance.md, "Compact caches")."""

    WEEK_START = utc("2026-11-19T00:00:00")  # a Thursday: a chunk begins here

    @pytest.mark.parametrize(
        ("start", "end", "expected"),
        [
            # Across the chunk's start: active before it, at it, until 01:00.
            ("23:00", "01:00", {-1: True, 0: True, 3599: True, 3600: False}),
            # Ending at the chunk's start: its end is a boundary of this chunk.
            ("22:00", "00:00", {-1: True, 0: False, 1: False, 79200: True}),
            # Starting at the chunk's start.
            ("00:00", "01:00", {-1: False, 0: True, 3599: True, 3600: False}),
            # Active all week but for an hour a day: a boundary first, then alternating.
            ("01:00", "00:00", {-1: True, 0: False, 3600: True, 86399: True, 86400: False}),
        ],
    )
    def test_a_week_keeps_only_its_boundaries_and_the_state_before_it(
        self, start: str, end: str, expected: dict[int, bool]
    ) -> None:
        for offset, active in expected.items():
            # A fresh Timeline for each instant: the chunk it asks for is the first built.
            timeline = daily(start, end)
            assert timeline.is_active(self.WEEK_START + offset) is active, offset
            (chunk,) = timeline._chunks.values()
            held = sys.getsizeof(chunk) + sum(
                sys.getsizeof(getattr(chunk, field)) for field in chunk.__slots__
            )
            # 7 windows: 14 boundaries (152 bytes) or fewer, and the chunk; their starts and
            # ends as well were 192 bytes more.
            assert held < 260, held
        assert daily("12:00", "13:00").next_boundary(self.WEEK_START) == self.WEEK_START + 43200
