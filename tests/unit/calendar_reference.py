"""The reference judge of the date rules, a naive minute-by-minute reference for the window
kinds, and the hypothesis cases drawn for them: one reference that the engine, `spa plan`, the
controller and `kubectl spa status` are all held to
(tests/unit/schedule/test_engine_calendar_properties.py,
tests/unit/agreement/test_calendar_everywhere.py, tests/unit/schedule/test_lead_time.py).

**The judge** (`Case.verdict`) is docs/schedules.md, "How the date rules compose", written out
rule by rule and nothing else: the bounds, `excludeDates`, `holidays` (Skip or Only), the Only
calendars, the Skip calendars in their listed order. It reads holidays from the `holidays`
library's own table and a calendar's ranges as plain comparisons.

**The windows** share no code with the engine either: the reference reads local wall clocks
minute by minute (a wall-clock time happens at the first minute whose local reading is at or
past it: the first occurrence of a repeated time, the jump for a skipped one), matches cron
expressions from the sets they were written from, finds the end of a weekly span by walking
forward day by day, and judges each window by the date it was generated for.

**The cases** lean on what breaks engines: instants near daylight-saving changes in zones east
and west of UTC, in the southern hemisphere, with half-hour shifts and changes at midnight;
excluded dates and holidays on the day of a change; spans across a change; cron matches inside
skipped and repeated hours; leap days; dates near the ends of the calendar (0001-01-01 and
9999-12-31); holidays in both modes with a subdivision or not; and up to four references to
Calendars and ClusterCalendars in both modes (the same calendar may be referred to twice), with
dates, ranges and holidays, beside decoys a wrong lookup would pick (a Calendar of the same name
in another namespace, a calendar of the other kind with the same name). Each case is also a set
of manifests (`Case.documents`), so the same case reaches every surface.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import holidays
from hypothesis import HealthCheck, assume, example, settings
from hypothesis import strategies as st

from spa.schedule import (
    Calendar,
    CalendarRule,
    CalendarWindow,
    CronExpression,
    CronWindow,
    DateSet,
    HolidayMode,
    OneShotWindow,
    PublicHolidays,
    RecurringWindow,
    Weekday,
    WeeklySpanWindow,
    Window,
    load_zone,
    weekdays_between,
)
from tests import builders
from tests.unit.time_zones import ZONES, zone_changes

HORIZON = 8 * 86400
MINUTE = 60
HOUR = 3600
SECOND = timedelta(seconds=1)
LOCAL_EPOCH = datetime(1970, 1, 1)
DAY = timedelta(days=1)
DAYS_IN_MONTH = dict(enumerate([31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], start=1))
LEAP_DAYS = (date(2024, 2, 29), date(2028, 2, 29))
CALENDARS = [("DE", "BY"), ("US", None), ("JP", None), ("AU", "NSW"), ("CL", None), ("GB", "SCT")]
SKIP_OR_ONLY = [HolidayMode.SKIP, HolidayMode.ONLY]
DAY_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
MONTH_NAMES = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]

NOT_PART = "not part of the schedule"
"""The judge's word for a date outside the bounds or left out by an Only rule (not skipped)."""

# Dates at the ends of the calendar. Every rule that only compares dates takes them all. An
# endDate is also turned into the instant after its last window (docs/schedules.md, "Calendars":
# the Schedule is then Completed), for which the windows' occurrence search looks at the days
# around it; at the ends of the calendar (an endDate in the first days of year 1, or 9999-12-30)
# that search is the end-of-calendar work of spa/schedule/windows.py and its tests cover it. So
# an endDate is drawn from those that do not reach it: 9998, or 9999-12-31 (no day after it:
# no end but the calendar's).
EARLIEST = (date(1, 1, 1), date(1, 1, 2), date(1, 1, 3))
LATEST = (date(9998, 12, 30), date(9998, 12, 31), date(9999, 12, 30), date(9999, 12, 31))
LATEST_END_DATES = (date(9998, 12, 30), date(9998, 12, 31), date(9999, 12, 31))

# The names in the manifests of a case: the SPA shop/web, its one Schedule, and elsewhere the
# namespace of the decoy Calendars.
NAMESPACE = "shop"
ELSEWHERE = "elsewhere"
SPA = "web"
SCHEDULE = "s"
BASE = (3, 10)
"""The SPA's minReplicas and maxReplicas; the Schedule's are `BOUNDS`."""
BOUNDS = (5, 20)


class WallClock:
    """Every minute of a stretch of time with its local reading, for naive lookups.

    A reading is held as seconds since 1970-01-01 00:00 on the local wall clock (the minute
    plus its UTC offset), not as a datetime: building ~50,000 datetimes per case was most of
    the property tests' time (docs/development.md, "Test durations"). The offset is read from
    the zone at each whole hour; an hour whose two ends disagree (it holds a change) is read
    minute by minute, so each minute's reading is still the zone's own at that minute, given
    that no zone changes its offset twice within one hour.
    """

    def __init__(self, zone: ZoneInfo, low: int, high: int) -> None:
        self.zone = zone
        self.minutes = list(range(low - low % MINUTE, high + MINUTE, MINUTE))
        first_hour = self.minutes[0] - self.minutes[0] % HOUR
        hours = range(first_hour, self.minutes[-1] + HOUR, HOUR)
        offsets = [_offset(zone, h) for h in range(first_hour, hours[-1] + 2 * HOUR, HOUR)]
        readings: list[int] = []
        for index, hour in enumerate(hours):
            offset = offsets[index]
            if offset == offsets[index + 1]:
                readings.extend(range(hour + offset, hour + HOUR + offset, MINUTE))
            else:
                readings.extend(m + _offset(zone, m) for m in range(hour, hour + HOUR, MINUTE))
        skipped = (self.minutes[0] - first_hour) // MINUTE
        readings = readings[skipped : skipped + len(self.minutes)]
        # The highest reading so far: the first minute whose reading is at or past a wall time
        # is the first one where this reaches it.
        self.highest: list[int] = list(itertools.accumulate(readings, max))

    def instant(self, wall: datetime) -> int | None:
        """The first minute whose local reading is at or past `wall` (None: out of range)."""
        position = bisect.bisect_left(self.highest, (wall - LOCAL_EPOCH) // SECOND)
        if position == 0 or position >= len(self.minutes):
            return None
        return self.minutes[position]


def _offset(zone: ZoneInfo, instant: int) -> int:
    """The UTC offset of `zone` at `instant`, in seconds."""
    offset = datetime.fromtimestamp(instant, zone).utcoffset()
    assert offset is not None
    return offset // SECOND


@dataclass(frozen=True)
class CronSets:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_star: bool
    weekdays_star: bool
    text: str

    def matches(self, wall: datetime) -> bool:
        if wall.minute not in self.minutes or wall.hour not in self.hours:
            return False
        if wall.month not in self.months:
            return False
        day_ok = wall.day in self.days
        weekday_ok = (wall.isoweekday() % 7) in self.weekdays
        if self.days_star or self.weekdays_star:
            return day_ok and weekday_ok
        return day_ok or weekday_ok


@dataclass(frozen=True)
class SharedCalendar:
    """A Calendar (in the Schedule's namespace) or a ClusterCalendar, as the reference reads it:
    every day listed, every range as two comparisons, and the holidays package's own table."""

    kind: str
    name: str
    days: frozenset[date] = frozenset()
    ranges: tuple[tuple[date, date], ...] = ()
    holidays: tuple[str, str | None] | None = None

    @property
    def label(self) -> str:
        """How a skipped window names it: `Calendar/c0`."""
        return f"{self.kind}/{self.name}"

    def has(self, day: date) -> bool:
        if day in self.days or any(first <= day <= last for first, last in self.ranges):
            return True
        return self.holidays is not None and holiday_name(*self.holidays, day) is not None

    def document(self) -> dict[str, Any]:
        holidays_ = None
        if self.holidays is not None:
            country, subdivision = self.holidays
            holidays_ = {"country": country, "subdivision": subdivision}
            holidays_ = {key: value for key, value in holidays_.items() if value is not None}
        return builders.calendar(
            name=self.name,
            kind=self.kind,
            namespace=NAMESPACE if self.kind == "Calendar" else None,
            dates=sorted(day.isoformat() for day in self.days) or None,
            dateRanges=[
                {"start": first.isoformat(), "end": last.isoformat()} for first, last in self.ranges
            ]
            or None,
            holidays=holidays_,
        )


@dataclass(frozen=True)
class Reference:
    """One entry of the Schedule's `calendars`: a calendar and a mode. `defaults` writes the
    defaults out (`kind: Calendar`, `mode: Skip`), which a reference may leave out."""

    calendar: SharedCalendar
    mode: HolidayMode = HolidayMode.SKIP
    defaults: bool = False

    def manifest(self) -> dict[str, Any]:
        written: dict[str, Any] = {"name": self.calendar.name}
        if self.calendar.kind == "ClusterCalendar" or self.defaults:
            written["kind"] = self.calendar.kind
        if self.mode is HolidayMode.ONLY or self.defaults:
            written["mode"] = self.mode.value
        return written


@dataclass(frozen=True)
class Case:
    kind: str
    zone: ZoneInfo
    start: time | datetime | None = None
    end: time | datetime | None = None
    week_days: tuple[Weekday, Weekday] | None = None
    """startDayOfWeek and endDayOfWeek of a Weekly or WeeklySpan Schedule."""
    cron: CronSets | None = None
    duration: int = 0
    start_date: date | None = None
    end_date: date | None = None
    excluded: frozenset[date] = frozenset()
    holidays: tuple[str, str | None] | None = None
    mode: HolidayMode = HolidayMode.SKIP
    shared: tuple[Reference, ...] = ()

    # --- the reference judge: docs/schedules.md, "How the date rules compose" -----------------

    def verdict(self, day: date) -> str | None:
        """None if the windows of `day` happen; else NOT_PART, or why they are skipped, in the
        words of `spa plan` (`excludeDates`, `holiday: NAME`, `calendar: KIND/NAME`)."""
        # 1. The bounds.
        if self.start_date is not None and day < self.start_date:
            return NOT_PART
        if self.end_date is not None and day > self.end_date:
            return NOT_PART
        # 2. excludeDates.
        if day in self.excluded:
            return "excludeDates"
        # 3. holidays: Skip skips a holiday; Only leaves out every other day.
        if self.holidays is not None:
            name = holiday_name(*self.holidays, day)
            if self.mode is HolidayMode.SKIP and name is not None:
                return f"holiday: {name}"
            if self.mode is HolidayMode.ONLY and name is None:
                return NOT_PART
        # 4. The Only calendars: a date on none of them is not part of the schedule.
        only = [r.calendar for r in self.shared if r.mode is HolidayMode.ONLY]
        if only and not any(calendar.has(day) for calendar in only):
            return NOT_PART
        # 5. The Skip calendars: the first listed that has the date skips it.
        for reference in self.shared:
            if reference.mode is HolidayMode.SKIP and reference.calendar.has(day):
                return f"calendar: {reference.calendar.label}"
        return None

    # --- the windows ------------------------------------------------------------------------

    def raw_occurrences(self, clock: WallClock, around: int) -> list[tuple[date, int, int]]:
        """(day, start, end) of every window generated near `around`, before the calendar."""
        today = datetime.fromtimestamp(around, self.zone).date()
        pairs: list[tuple[date, datetime, datetime | int]] = []
        if self.kind == "OneShot":
            assert isinstance(self.start, datetime)
            assert isinstance(self.end, datetime)
            pairs.append((self.start.date(), self.start, self.end))
        elif self.kind in ("Daily", "Weekly"):
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            days = range(7) if self.week_days is None else _days_from_to(*self.week_days)
            for offset in range(-4, HORIZON // 86400 + 3):
                day = today + offset * DAY
                if day.weekday() not in days:
                    continue
                end_day = day + DAY if self.end <= self.start else day
                pairs.append(
                    (day, datetime.combine(day, self.start), datetime.combine(end_day, self.end))
                )
        elif self.kind == "WeeklySpan":
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            assert self.week_days is not None
            first, last = self.week_days
            for offset in range(-10, HORIZON // 86400 + 3):
                day = today + offset * DAY
                if day.weekday() != first:
                    continue
                begin = datetime.combine(day, self.start)
                span_end = next(
                    datetime.combine(day + k * DAY, self.end)
                    for k in range(8)
                    if (day + k * DAY).weekday() == last
                    and datetime.combine(day + k * DAY, self.end) > begin
                )
                pairs.append((day, begin, span_end))
        else:
            assert self.cron is not None
            low_day = datetime.fromtimestamp(around - self.duration, self.zone).date() - DAY
            day = low_day
            while day <= today + (HORIZON // 86400 + 2) * DAY:
                for minute in range(1440):
                    wall = datetime.combine(day, time(minute // 60, minute % 60))
                    if self.cron.matches(wall):
                        pairs.append((day, wall, self.duration))
                day += DAY
        found = []
        for day, begin, finish in pairs:
            first_instant = clock.instant(begin)
            if first_instant is None:
                continue
            if isinstance(finish, int):
                last_instant: int | None = first_instant + finish
            else:
                last_instant = clock.instant(finish)
            if last_instant is not None and first_instant < last_instant:
                found.append((day, first_instant, last_instant))
        return found

    # --- the engine ------------------------------------------------------------------------

    def window(self) -> Window:
        """The engine's window of the case, built without the API."""
        window: Window
        if self.kind == "OneShot":
            assert isinstance(self.start, datetime)
            assert isinstance(self.end, datetime)
            window = OneShotWindow(self.start, self.end, self.zone)
        elif self.kind in ("Daily", "Weekly"):
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            days = None if self.week_days is None else weekdays_between(*self.week_days)
            window = RecurringWindow(self.start, self.end, self.zone, days)
        elif self.kind == "WeeklySpan":
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            assert self.week_days is not None
            first, last = self.week_days
            window = WeeklySpanWindow(first, self.start, last, self.end, self.zone)
        else:
            assert self.cron is not None
            window = CronWindow(CronExpression(self.cron.text), self.duration, self.zone)
        calendar = Calendar(
            start_date=self.start_date,
            end_date=self.end_date,
            excluded=self.excluded,
            holidays=None if self.holidays is None else PublicHolidays(*self.holidays),
            holiday_mode=self.mode,
            shared=tuple(
                CalendarRule(
                    DateSet(
                        name=r.calendar.label,
                        days=r.calendar.days,
                        ranges=r.calendar.ranges,
                        holidays=(
                            None
                            if r.calendar.holidays is None
                            else PublicHolidays(*r.calendar.holidays)
                        ),
                    ),
                    r.mode,
                )
                for r in self.shared
            ),
        )
        return CalendarWindow(window, calendar)

    # --- the manifests ----------------------------------------------------------------------

    def spec(self) -> dict[str, Any]:
        """The Schedule's spec, as a user writes it (camelCase, dates as text)."""
        spec: dict[str, Any] = {"type": self.kind, "timeZone": self.zone.key}
        if isinstance(self.start, datetime) and isinstance(self.end, datetime):
            spec["startTime"] = self.start.strftime("%Y-%m-%dT%H:%M")
            spec["endTime"] = self.end.strftime("%Y-%m-%dT%H:%M")
        elif isinstance(self.start, time) and isinstance(self.end, time):
            spec["startTime"] = self.start.strftime("%H:%M")
            spec["endTime"] = self.end.strftime("%H:%M")
        if self.week_days is not None:
            spec["startDayOfWeek"] = self.week_days[0].name
            spec["endDayOfWeek"] = self.week_days[1].name
        if self.cron is not None:
            spec["schedule"] = self.cron.text
            spec["duration"] = f"{self.duration // MINUTE}m"
        if self.start_date is not None:
            spec["startDate"] = self.start_date.isoformat()
        if self.end_date is not None:
            spec["endDate"] = self.end_date.isoformat()
        if self.excluded:
            spec["excludeDates"] = sorted(day.isoformat() for day in self.excluded)
        if self.holidays is not None:
            country, subdivision = self.holidays
            spec["holidays"] = {"country": country, "mode": self.mode.value}
            if subdivision is not None:
                spec["holidays"]["subdivision"] = subdivision
        if self.shared:
            spec["calendars"] = [reference.manifest() for reference in self.shared]
        spec["minReplicas"], spec["maxReplicas"] = BOUNDS
        return spec

    def calendar_documents(self) -> list[dict[str, Any]]:
        """The calendars the Schedule refers to, and decoys that hold every date: a Calendar of
        each name in another namespace, and a calendar of the other kind of each name where the
        case has none. A lookup that picked one would change every answer."""
        real = {(r.calendar.kind, r.calendar.name): r.calendar for r in self.shared}
        documents = [calendar.document() for calendar in real.values()]
        everything = [{"start": "0001-01-01", "end": "9999-12-31"}]
        for name in sorted({name for _, name in real}):
            documents.append(
                builders.calendar(name=name, namespace=ELSEWHERE, dateRanges=everything)
            )
            for kind in ("Calendar", "ClusterCalendar"):
                if (kind, name) not in real:
                    namespace = NAMESPACE if kind == "Calendar" else None
                    documents.append(
                        builders.calendar(
                            name=name, kind=kind, namespace=namespace, dateRanges=everything
                        )
                    )
        return documents

    def documents(self) -> list[dict[str, Any]]:
        """The SPA, the Schedule and the calendars, as `spa plan -f` reads them."""
        return [
            builders.autoscaler(
                name=SPA, namespace=NAMESPACE, minReplicas=BASE[0], maxReplicas=BASE[1]
            ),
            builders.schedule(name=SCHEDULE, namespace=NAMESPACE, target=SPA, **self.spec()),
            *self.calendar_documents(),
        ]


def _days_from_to(first: Weekday, last: Weekday) -> set[int]:
    """`first`, the days after it and `last` (`date.weekday()` numbers), walking forward: a
    range may wrap past the end of the week."""
    days = {int(first)}
    day = int(first)
    while day != last:
        day = (day + 1) % 7
        days.add(day)
    return days


def holiday_name(country: str, subdivision: str | None, day: date) -> str | None:
    """The holidays library's name of `day` (in US English), None if it is not a holiday."""
    return _holiday_names(country, subdivision, day.year).get(day)


@functools.cache
def _holiday_names(country: str, subdivision: str | None, year: int) -> dict[date, str]:
    table = holidays.country_holidays(country, subdiv=subdivision, years=year, language="en_US")
    return dict(table.items())


# --- what every surface must say: the reference's answers over a horizon ----------------------


@dataclass(frozen=True)
class Expected:
    """The reference's answers for a case at an instant, over `(instant, instant + HORIZON]`."""

    active: bool
    changes: list[tuple[int, bool]]
    """Each instant at which the Schedule starts (True) or stops (False) being active."""
    skipped: list[tuple[int, date, str]]
    """Each skipped window: its start, its date and why."""
    completed: bool
    """A OneShot whose end has passed, or a Schedule whose endDate has passed in its zone and
    whose last window has ended (docs/schedules.md, "Calendars")."""

    @property
    def next_change(self) -> int | None:
        return self.changes[0][0] if self.changes else None


def expect(case: Case, instant: int) -> Expected:
    occurrences, clock = reference(case, instant)
    happening = [(day, s, e) for day, s, e in occurrences if case.verdict(day) is None]
    runs = merged([(s, e) for _, s, e in happening])
    changes = [
        (edge, starts)
        for start, end in zip(*runs, strict=True)
        for edge, starts in ((start, True), (end, False))
        if instant < edge <= instant + HORIZON
    ]
    # The windows of one day that overlap or touch are one window (a dense cron expression).
    windows: list[tuple[date, int, int]] = []
    for day, start, end in sorted(occurrences):
        if windows and windows[-1][0] == day and start <= windows[-1][2]:
            windows[-1] = (day, windows[-1][1], max(end, windows[-1][2]))
        else:
            windows.append((day, start, end))
    skipped = sorted(
        (start, day, verdict)
        for day, start, _ in windows
        if instant < start <= instant + HORIZON
        and (verdict := case.verdict(day)) is not None
        and verdict != NOT_PART
    )
    if case.kind == "OneShot":
        assert isinstance(case.end, datetime)
        over = clock.instant(case.end)
        completed = over is not None and instant >= over
    else:
        today = datetime.fromtimestamp(instant, case.zone).date()
        completed = (
            case.end_date is not None
            and today > case.end_date
            and all(end <= instant for day, _, end in happening if day <= case.end_date)
        )
    return Expected(
        active=active_in(runs, instant), changes=changes, skipped=skipped, completed=completed
    )


def merged(intervals: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    runs: list[list[int]] = []
    for start, end in sorted(intervals):
        if runs and start <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], end)
        else:
            runs.append([start, end])
    return [r[0] for r in runs], [r[1] for r in runs]


def active_in(runs: tuple[list[int], list[int]], instant: int) -> bool:
    starts, ends = runs
    position = bisect.bisect_right(starts, instant) - 1
    return position >= 0 and instant < ends[position]


def first_change(answer_at: object, instant: int) -> int | None:
    assert callable(answer_at)
    now = answer_at(instant)
    minute = (instant // MINUTE + 1) * MINUTE
    while minute <= instant + HORIZON:
        if answer_at(minute) != now:
            return minute
        minute += MINUTE
    return None


def reference(case: Case, instant: int) -> tuple[list[tuple[date, int, int]], WallClock]:
    low = instant - max(case.duration, 9 * 86400) - 86400
    clock = WallClock(case.zone, low, instant + HORIZON + 10 * 86400)
    return case.raw_occurrences(clock, instant), clock


# --- generators -------------------------------------------------------------------------------


@st.composite
def instants(draw: st.DrawFn, zone: str, country: tuple[str, str | None] | None = None) -> int:
    """An instant of 2024 to 2030 near a change of `zone`'s offset, a leap day, a holiday (of
    `country`, if given), or anywhere."""
    places = ["change", "change", "leap", "holiday", "any"]
    if country is not None:
        # Mostly where the holidays are: in Only mode, a stretch without one has no window.
        places = ["change", "holiday", "holiday", "holiday"]
    where = draw(st.sampled_from(places))
    if where == "change":
        return draw(st.sampled_from(zone_changes(zone))) + draw(st.integers(-3 * 86400, 86400))
    if where == "leap":
        leap = datetime.combine(draw(st.sampled_from(LEAP_DAYS)), time(), load_zone(zone))
        return int(leap.timestamp()) + draw(st.integers(-3 * 86400, 86400))
    if where == "holiday":
        # Before it, so that its windows lie ahead.
        day = draw(st.sampled_from(_holidays_2024_to_2030(country)))
        return int(datetime.combine(day, time(), load_zone(zone)).timestamp()) - draw(
            st.integers(0, 3 * 86400)
        )
    return draw(st.integers(1704067200, 1893456000))


@functools.cache
def _holidays_2024_to_2030(country: tuple[str, str | None] | None = None) -> tuple[date, ...]:
    """The holidays of `country` (None: of every country the cases draw) in 2024 to 2030,
    where holidays and calendars meet."""
    countries = CALENDARS if country is None else [country]
    return tuple(
        sorted(
            {
                day
                for name, subdivision in countries
                for year in range(2024, 2031)
                for day in _holiday_names(name, subdivision, year)
            }
        )
    )


minutes_ = st.one_of(st.sampled_from([0, 15, 30, 45]), st.integers(0, 59))
hours_ = st.one_of(st.sampled_from([0, 1, 2, 3, 23]), st.integers(0, 23))
times_of_day = st.builds(time, hours_, minutes_)


@st.composite
def cron_field(
    draw: st.DrawFn, low: int, high: int, names: list[str] | None = None, offset: int = 0
) -> tuple[str, frozenset[int], bool]:
    """A field's text and the values it means; names[i] spells the value i + offset."""

    def spell(value: int) -> str:
        if names is not None and draw(st.booleans()):
            return names[value - offset]
        return str(value)

    form = draw(st.sampled_from(["star", "value", "list", "range", "step", "star-step"]))
    if form == "star":
        return "*", frozenset(range(low, high + 1)), True
    if form == "value":
        value = draw(st.integers(low, high))
        return spell(value), frozenset({value}), False
    if form == "list":
        values = draw(st.lists(st.integers(low, high), min_size=2, max_size=4, unique=True))
        return ",".join(spell(v) for v in values), frozenset(values), False
    first = draw(st.integers(low, high))
    last = draw(st.integers(first, high))
    if form == "range":
        return f"{spell(first)}-{spell(last)}", frozenset(range(first, last + 1)), False
    step = draw(st.integers(1, max(1, (high - low) // 2)))
    if form == "step":
        return f"{first}-{last}/{step}", frozenset(range(first, last + 1, step)), False
    return f"*/{step}", frozenset(range(low, high + 1, step)), True


@st.composite
def cron_sets(draw: st.DrawFn) -> CronSets:
    minute_text, minute_set, _ = draw(
        st.one_of(st.just(("0", frozenset({0}), False)), cron_field(0, 59))
    )
    hour_text, hour_set, _ = draw(
        st.one_of(st.just(("2", frozenset({2}), False)), st.just(("1", frozenset({1}), False)))
        | cron_field(0, 23)
    )
    day_text, day_set, day_star = draw(
        st.one_of(st.just(("29", frozenset({29}), False)), cron_field(1, 31))
    )
    month_text, month_set, _ = draw(cron_field(1, 12, MONTH_NAMES, offset=1))
    weekday_text, weekday_set, weekday_star = draw(cron_field(0, 6, DAY_NAMES))
    # Days that never exist in the months (30 February) with any weekday: an expression that
    # can never match, which the parser refuses and the validator reports (test_cron.py).
    assume(
        not weekday_star
        or any(day <= DAYS_IN_MONTH[month] for month in month_set for day in day_set)
    )
    return CronSets(
        minutes=minute_set,
        hours=hour_set,
        days=day_set,
        months=month_set,
        weekdays=weekday_set,
        days_star=day_star,
        weekdays_star=weekday_star,
        text=f"{minute_text} {hour_text} {day_text} {month_text} {weekday_text}",
    )


durations = st.one_of(
    st.sampled_from([60, 300, 1800, 3600, 5400, 86400, 90000]),
    st.integers(1, 3 * 24 * 60).map(lambda minutes: minutes * 60),
)


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, Case]:
    """An instant and a Schedule that the API accepts, with every kind of date rule."""
    zone_name = draw(st.sampled_from(ZONES))
    zone = load_zone(zone_name)
    holidays_ = draw(st.none() | st.sampled_from(CALENDARS))
    instant = draw(instants(zone_name, holidays_))
    today = datetime.fromtimestamp(instant, zone).date()
    kind = draw(st.sampled_from(["Daily", "Weekly", "OneShot", "WeeklySpan", "Cron", "Cron"]))
    fields: dict[str, Any] = {}
    if kind == "OneShot":
        base = datetime.combine(today, draw(times_of_day))
        start = base + draw(st.integers(-2, 2)) * DAY
        fields.update(start=start, end=start + timedelta(minutes=draw(st.integers(1, 5760))))
    elif kind == "Cron":
        fields.update(cron=draw(cron_sets()), duration=draw(durations))
    else:
        fields.update(start=draw(times_of_day), end=draw(times_of_day))
        if kind != "Daily":
            fields["week_days"] = (
                draw(st.sampled_from(list(Weekday))),
                draw(st.sampled_from(list(Weekday))),
            )
    nearby = st.integers(-6, 9).map(lambda offset: today + offset * DAY)
    # The days of clock changes near the instant, leap days and holidays, where exclusions
    # bite and rules meet.
    special = [
        datetime.fromtimestamp(change, zone).date()
        for change in zone_changes(zone_name)
        if abs(change - instant) < 10 * 86400
    ] + [day for day in (*LEAP_DAYS, *_holidays_2024_to_2030()) if abs((day - today).days) < 10]
    dates = nearby | st.sampled_from(special) if special else nearby
    far = st.sampled_from([*EARLIEST, *LATEST])
    if kind != "OneShot" and draw(st.booleans()):
        fields["start_date"] = draw(dates | st.sampled_from([*EARLIEST, *LATEST_END_DATES]))
    if kind != "OneShot" and draw(st.booleans()):
        fields["end_date"] = draw(dates | st.sampled_from(LATEST_END_DATES))
        if fields.get("start_date") is not None and fields["end_date"] < fields["start_date"]:
            fields["end_date"] = fields["start_date"]
    fields["excluded"] = frozenset(draw(st.lists(dates | far, max_size=4)))
    if holidays_ is not None:
        fields["holidays"] = holidays_
        fields["mode"] = draw(st.sampled_from(SKIP_OR_ONLY))
    fields["shared"] = draw(references(dates, far))
    return instant, Case(kind=kind, zone=zone, **fields)


@st.composite
def references(
    draw: st.DrawFn, dates: st.SearchStrategy[date], far: st.SearchStrategy[date]
) -> tuple[Reference, ...]:
    """Up to four references to a few calendars of both kinds, in both modes; a calendar may be
    referred to twice, and a Calendar and a ClusterCalendar may share a name."""
    pool = draw(
        st.lists(
            shared_calendars(dates, far),
            max_size=3,
            unique_by=lambda calendar: (calendar.kind, calendar.name),
        )
    )
    if not pool:
        return ()
    chosen = draw(st.lists(st.sampled_from(pool), max_size=4))
    return tuple(
        Reference(calendar, draw(st.sampled_from(SKIP_OR_ONLY)), draw(st.booleans()))
        for calendar in chosen
    )


@st.composite
def shared_calendars(
    draw: st.DrawFn, dates: st.SearchStrategy[date], far: st.SearchStrategy[date]
) -> SharedCalendar:
    """A calendar near the instant: a few days, a few ranges (some reaching the end of the
    calendar), maybe a country's holidays."""
    ranges = []
    for first in draw(st.lists(dates | far, max_size=2)):
        reach = draw(st.sampled_from(["days", "days", "to the end", "from the start"]))
        if reach == "to the end":
            ranges.append((first, LATEST[-1]))
        elif reach == "from the start":
            ranges.append((EARLIEST[0], first))
        else:
            days = min(draw(st.integers(0, 4)), (LATEST[-1] - first).days)
            ranges.append((first, first + days * DAY))
    return SharedCalendar(
        kind=draw(st.sampled_from(["Calendar", "ClusterCalendar"])),
        name=draw(st.sampled_from(["c0", "c1", "c2"])),
        days=frozenset(draw(st.lists(dates | far, max_size=3))),
        ranges=tuple(ranges),
        holidays=draw(st.none() | st.sampled_from(CALENDARS)),
    )


EXAMPLES = int(os.environ.get("SPA_CALENDAR_EXAMPLES", "200"))
"""Examples per property test: `SPA_CALENDAR_EXAMPLES=5000 pytest ...` for a long sweep
(docs/development.md, "Property tests")."""

PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# --- named cases: the bugs the reference found, kept whatever hypothesis draws ---------------


def _utc(text: str) -> int:
    return int(datetime.fromisoformat(f"{text}+00:00").timestamp())


_HOLIDAY_PEAK = Case(
    kind="Daily",
    zone=load_zone("America/New_York"),
    start=time(10),
    end=time(20),
    holidays=("US", None),
    mode=HolidayMode.ONLY,
)

NAMED_CASES: dict[str, tuple[int, Case]] = {
    # Issue 35: `holidays: Only` switched every shared calendar off, so Thanksgiving (a US
    # holiday that a Skip calendar holds) still had its window.
    "skip-calendar-beside-holidays-only": (
        _utc("2026-11-25T00:00"),
        dataclasses.replace(
            _HOLIDAY_PEAK,
            shared=(
                Reference(
                    SharedCalendar(
                        "Calendar", "thanksgiving-freeze", frozenset({date(2026, 11, 26)})
                    )
                ),
            ),
        ),
    ),
    # And with an Only calendar of 24-25 December, the windows of Thanksgiving and New Year's
    # Day happened: only 25 December is both a holiday and on the calendar.
    "only-calendar-beside-holidays-only": (
        _utc("2026-12-23T23:00"),
        dataclasses.replace(
            _HOLIDAY_PEAK,
            zone=load_zone("UTC"),
            start=time(0),
            end=time(6),
            shared=(
                Reference(
                    SharedCalendar(
                        "Calendar", "christmas", ranges=((date(2026, 12, 24), date(2026, 12, 25)),)
                    ),
                    HolidayMode.ONLY,
                ),
            ),
        ),
    ),
}


_Test = TypeVar("_Test", bound=Callable[..., None])


def named_examples(test: _Test) -> _Test:
    """Every named case as an explicit example of a property over `cases()`, run first."""
    for case in NAMED_CASES.values():
        test = example(case)(test)
    return test
