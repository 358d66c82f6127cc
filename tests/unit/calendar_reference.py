"""A naive minute-by-minute reference for the window kinds and the calendar rules, and the
hypothesis cases drawn for it (tests/unit/test_engine_calendar_properties.py and
tests/unit/test_lead_time.py compare the engine with it).

Like tests/unit/test_engine_properties.py's, the reference shares no code with the engine: it
reads local wall clocks minute by minute (a wall-clock time happens at the first minute whose
local reading is at or past it: the first occurrence of a repeated time, the jump for a skipped
one), matches cron expressions from the sets they were written from, finds the end of a weekly
span by walking forward day by day, and judges each window by the date it was generated for.
The cases lean on what breaks engines: instants near daylight-saving changes in zones east and
west of UTC, in the southern hemisphere, with half-hour shifts and changes at midnight; excluded
dates and holidays on the day of a change; spans across a change; cron matches inside skipped
and repeated hours; and leap days.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import holidays
from hypothesis import HealthCheck, assume, settings
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
class SharedCase:
    """A shared calendar a Schedule references, as the reference reads it: every day listed,
    every day of every range walked one by one, and the holidays package's own table."""

    name: str
    days: frozenset[date]
    ranges: tuple[tuple[date, date], ...]
    holidays: tuple[str, str | None] | None
    mode: HolidayMode

    def has(self, day: date) -> bool:
        walked = {
            first + k * DAY for first, last in self.ranges for k in range((last - first).days + 1)
        }
        if day in self.days or day in walked:
            return True
        if self.holidays is None:
            return False
        return day in _holidays(self.holidays[0], self.holidays[1], day.year)


@dataclass(frozen=True)
class Case:
    kind: str
    zone: ZoneInfo
    start: time | datetime | None = None
    end: time | datetime | None = None
    days: frozenset[Weekday] | None = None
    span_days: tuple[Weekday, Weekday] | None = None
    cron: CronSets | None = None
    duration: int = 0
    start_date: date | None = None
    end_date: date | None = None
    excluded: frozenset[date] = frozenset()
    holidays: tuple[str, str | None] | None = None
    mode: HolidayMode = HolidayMode.SKIP
    shared: tuple[SharedCase, ...] = ()

    # --- the reference -------------------------------------------------------------------

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
            for offset in range(-4, HORIZON // 86400 + 3):
                day = today + offset * DAY
                if self.days is not None and Weekday(day.weekday()) not in self.days:
                    continue
                end_day = day + DAY if self.end <= self.start else day
                pairs.append(
                    (day, datetime.combine(day, self.start), datetime.combine(end_day, self.end))
                )
        elif self.kind == "WeeklySpan":
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            assert self.span_days is not None
            first, last = self.span_days
            for offset in range(-10, HORIZON // 86400 + 3):
                day = today + offset * DAY
                if day.weekday() != first:
                    continue
                begin = datetime.combine(day, self.start)
                finish = next(
                    datetime.combine(day + k * DAY, self.end)
                    for k in range(8)
                    if (day + k * DAY).weekday() == last
                    and datetime.combine(day + k * DAY, self.end) > begin
                )
                pairs.append((day, begin, finish))
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

    def verdict(self, day: date) -> str | None:
        """None if a window of `day` happens, else why not ('outside', 'excluded', 'holiday',
        'calendar: NAME')."""
        if self.start_date is not None and day < self.start_date:
            return "outside"
        if self.end_date is not None and day > self.end_date:
            return "outside"
        if day in self.excluded:
            return "excluded"
        if self.holidays is not None:
            country, subdivision = self.holidays
            on_holiday = day in _holidays(country, subdivision, day.year)
            if self.mode is HolidayMode.ONLY and not on_holiday:
                return "outside"
            if self.mode is HolidayMode.SKIP and on_holiday:
                return "holiday"
        only = [c for c in self.shared if c.mode is HolidayMode.ONLY]
        if only and not any(c.has(day) for c in only):
            return "outside"
        for shared in self.shared:
            if shared.mode is HolidayMode.SKIP and shared.has(day):
                return f"calendar: {shared.name}"
        return None

    # --- the engine ------------------------------------------------------------------------

    def window(self) -> Window:
        window: Window
        if self.kind == "OneShot":
            assert isinstance(self.start, datetime)
            assert isinstance(self.end, datetime)
            window = OneShotWindow(self.start, self.end, self.zone)
        elif self.kind in ("Daily", "Weekly"):
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            window = RecurringWindow(self.start, self.end, self.zone, self.days)
        elif self.kind == "WeeklySpan":
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            assert self.span_days is not None
            window = WeeklySpanWindow(
                self.span_days[0], self.start, self.span_days[1], self.end, self.zone
            )
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
                        name=c.name,
                        days=c.days,
                        ranges=c.ranges,
                        holidays=None if c.holidays is None else PublicHolidays(*c.holidays),
                    ),
                    c.mode,
                )
                for c in self.shared
            ),
        )
        return CalendarWindow(window, calendar)


@functools.cache
def _holidays(country: str, subdivision: str | None, year: int) -> frozenset[date]:
    return frozenset(holidays.country_holidays(country, subdiv=subdivision, years=year))


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


# --- generators -------------------------------------------------------------------------------


@st.composite
def instants(draw: st.DrawFn, zone: str) -> int:
    where = draw(st.sampled_from(["change", "change", "leap", "any"]))
    if where == "change":
        return draw(st.sampled_from(zone_changes(zone))) + draw(st.integers(-3 * 86400, 86400))
    if where == "leap":
        leap = datetime.combine(draw(st.sampled_from(LEAP_DAYS)), time(), load_zone(zone))
        return int(leap.timestamp()) + draw(st.integers(-3 * 86400, 86400))
    return draw(st.integers(1704067200, 1893456000))


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
    zone_name = draw(st.sampled_from(ZONES))
    zone = load_zone(zone_name)
    instant = draw(instants(zone_name))
    today = datetime.fromtimestamp(instant, zone).date()
    kind = draw(st.sampled_from(["Daily", "Weekly", "OneShot", "WeeklySpan", "Cron", "Cron"]))
    fields: dict[str, object] = {}
    if kind == "OneShot":
        base = datetime.combine(today, draw(times_of_day))
        start = base + draw(st.integers(-2, 2)) * DAY
        fields.update(start=start, end=start + timedelta(minutes=draw(st.integers(1, 5760))))
    elif kind == "Cron":
        fields.update(cron=draw(cron_sets()), duration=draw(durations))
    else:
        fields.update(start=draw(times_of_day), end=draw(times_of_day))
        first, last = draw(st.sampled_from(list(Weekday))), draw(st.sampled_from(list(Weekday)))
        if kind == "Weekly":
            fields["days"] = weekdays_between(first, last)
        elif kind == "WeeklySpan":
            fields["span_days"] = (first, last)
    nearby = st.integers(-6, 9).map(lambda offset: today + offset * DAY)
    # The days of clock changes near the instant and leap days, where exclusions bite.
    special = [
        datetime.fromtimestamp(change, zone).date()
        for change in zone_changes(zone_name)
        if abs(change - instant) < 10 * 86400
    ] + [leap for leap in LEAP_DAYS if abs((leap - today).days) < 10]
    dates = nearby | st.sampled_from(special) if special else nearby
    if kind != "OneShot" and draw(st.booleans()):
        fields["start_date"] = draw(dates)
    if kind != "OneShot" and draw(st.booleans()):
        fields["end_date"] = draw(dates)
        if fields.get("start_date") is not None and fields["end_date"] < fields["start_date"]:  # type: ignore[operator]
            fields["end_date"] = fields["start_date"]
    fields["excluded"] = frozenset(draw(st.lists(dates, max_size=4)))
    if draw(st.booleans()):
        fields["holidays"] = draw(st.sampled_from(CALENDARS))
        fields["mode"] = draw(st.sampled_from(SKIP_OR_ONLY))
    fields["shared"] = tuple(
        draw(shared_cases(dates, name=f"ClusterCalendar/c{number}"))
        for number in range(draw(st.integers(0, 3)))
    )
    return instant, Case(kind=kind, zone=zone, **fields)


@st.composite
def shared_cases(draw: st.DrawFn, dates: st.SearchStrategy[date], *, name: str) -> SharedCase:
    """A shared calendar near the instant: a few days, a few ranges, maybe a country's holidays."""
    ranges = []
    for first in draw(st.lists(dates, max_size=2)):
        ranges.append((first, first + draw(st.integers(0, 4)) * DAY))
    return SharedCase(
        name=name,
        days=frozenset(draw(st.lists(dates, max_size=3))),
        ranges=tuple(ranges),
        holidays=draw(st.none() | st.sampled_from(CALENDARS)),
        mode=draw(st.sampled_from(SKIP_OR_ONLY)),
    )  # type: ignore[arg-type]


PROPERTY_SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def reference(case: Case, instant: int) -> tuple[list[tuple[date, int, int]], WallClock]:
    low = instant - max(case.duration, 9 * 86400) - 86400
    clock = WallClock(case.zone, low, instant + HORIZON + 10 * 86400)
    return case.raw_occurrences(clock, instant), clock
