"""Which occurrences of a window happen: date bounds, excluded dates and holidays.

docs/schedules.md, "Calendars": each rule judges the date an occurrence belongs to (its start
date in the Schedule's zone, `Occurrence.day`), never its instants, so an occurrence that
crosses midnight is kept or dropped whole. The rules compose in the fixed order of
docs/schedules.md, "How the date rules compose", and the first that decides a date decides
it: the bounds (`startDate`, `endDate`), the excluded dates, the holidays (Skip or Only), the
shared calendars a Schedule refers to in Only mode, then those in Skip mode (a `DateSet` with a
name, docs/schedules.md "Shared calendars").

An occurrence dropped by an excluded date, or (in Skip mode) a holiday or a shared calendar, is
*skipped*, and `CalendarWindow.skipped` lists them with the reason, for `spa plan`. Occurrences
outside the bounds, or on dates that no Only rule has, are not skipped: they are not part of
the schedule. The test of this order is tests/unit/calendar_reference.py's judge, which every
surface (the engine, `spa plan`, the controller, `kubectl spa status`) is held to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, time
from enum import Enum, StrEnum
from typing import Protocol, runtime_checkable
from zoneinfo import ZoneInfo

from spa.schedule.wallclock import shift_date, wall_instant
from spa.schedule.windows import Occurrence, Window

__all__ = [
    "Calendar",
    "CalendarRule",
    "CalendarWindow",
    "DateSet",
    "HolidayCalendar",
    "HolidayMode",
    "SkipCause",
    "Skipped",
    "SkippingWindow",
    "Verdict",
    "skipped_between",
]


class HolidayCalendar(Protocol):
    """Public holidays by date (spa.schedule.public_holidays.PublicHolidays)."""

    def name(self, day: date) -> str | None:
        """The holiday's name if `day` is one, else None."""


class HolidayMode(Enum):
    SKIP = "Skip"
    """Occurrences on a holiday do not happen."""
    ONLY = "Only"
    """Only occurrences on a holiday happen."""


class SkipCause(StrEnum):
    EXCLUDED = "excludeDates"
    HOLIDAY = "holiday"
    CALENDAR = "calendar"


@dataclass(frozen=True, slots=True)
class Skipped:
    """An occurrence that does not happen, and why."""

    occurrence: Occurrence
    cause: SkipCause
    holiday: str | None = None
    """The holiday's name (HOLIDAY), or the shared calendar's name (CALENDAR)."""

    @property
    def reason(self) -> str:
        """`excludeDates`, `holiday: <name>` or `calendar: <Kind/name>`."""
        if self.cause is SkipCause.HOLIDAY:
            return f"holiday: {self.holiday}"
        if self.cause is SkipCause.CALENDAR:
            return f"calendar: {self.holiday}"
        return str(self.cause.value)

    def describe(self) -> str:
        """`excluded 2026-12-25 (holiday: Christmas Day)`."""
        return f"excluded {self.occurrence.day.isoformat()} ({self.reason})"


@dataclass(frozen=True, slots=True)
class DateSet:
    """A named set of dates: a shared calendar (Calendar or ClusterCalendar) as the engine sees
    it. Its dates are the single days, the inclusive ranges and, with `holidays`, the public
    holidays of a country."""

    name: str
    """How the skipped occurrences name it, e.g. `ClusterCalendar/black-friday`."""
    days: frozenset[date] = frozenset()
    ranges: tuple[tuple[date, date], ...] = ()
    holidays: HolidayCalendar | None = None

    def __contains__(self, day: object) -> bool:
        if not isinstance(day, date):
            return False
        if day in self.days:
            return True
        if any(first <= day <= last for first, last in self.ranges):
            return True
        return self.holidays is not None and self.holidays.name(day) is not None


@dataclass(frozen=True, slots=True)
class CalendarRule:
    """A Schedule's reference to a shared calendar: Skip its dates, or happen Only on them."""

    dates: DateSet
    mode: HolidayMode = HolidayMode.SKIP


@dataclass(frozen=True, slots=True)
class Calendar:
    """Date rules of a Schedule; the default keeps every occurrence."""

    start_date: date | None = None
    end_date: date | None = None
    excluded: frozenset[date] = frozenset()
    holidays: HolidayCalendar | None = None
    holiday_mode: HolidayMode = HolidayMode.SKIP
    shared: tuple[CalendarRule, ...] = ()
    """The shared calendars, in the order the Schedule lists them."""

    @property
    def empty(self) -> bool:
        return (
            self.start_date is None
            and self.end_date is None
            and not self.excluded
            and self.holidays is None
            and not self.shared
        )

    def judge(self, day: date) -> Verdict:
        """What becomes of an occurrence on `day`: the first rule, in the documented order,
        that decides it (docs/schedules.md, "How the date rules compose")."""
        if self.start_date is not None and day < self.start_date:
            return OUTSIDE
        if self.end_date is not None and day > self.end_date:
            return OUTSIDE
        if day in self.excluded:
            return _EXCLUDED
        if self.holidays is not None:
            name = self.holidays.name(day)
            if self.holiday_mode is HolidayMode.ONLY and name is None:
                return OUTSIDE
            if self.holiday_mode is HolidayMode.SKIP and name is not None:
                return Verdict(False, SkipCause.HOLIDAY, name)
            # A holiday in Only mode goes on to the shared calendars, which may still skip it.
        if self.shared:
            return self._judge_shared(day)
        return KEPT

    def _judge_shared(self, day: date) -> Verdict:
        """With Only calendars, a date on none of them is not part of the schedule; then the
        first Skip calendar that has the date skips it."""
        only = [rule.dates for rule in self.shared if rule.mode is HolidayMode.ONLY]
        if only and not any(day in dates for dates in only):
            return OUTSIDE
        for rule in self.shared:
            if rule.mode is HolidayMode.SKIP and day in rule.dates:
                return Verdict(False, SkipCause.CALENDAR, rule.dates.name)
        return KEPT


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether an occurrence happens; when a date rule removed it, which and why."""

    happens: bool
    cause: SkipCause | None = None
    holiday: str | None = None
    """The holiday's or the shared calendar's name."""


KEPT = Verdict(True)
"""The occurrence happens."""
OUTSIDE = Verdict(False)
"""Outside the bounds, or an ordinary day in Only mode: not part of the schedule."""
_EXCLUDED = Verdict(False, SkipCause.EXCLUDED)


@dataclass(frozen=True, slots=True)
class CalendarWindow:
    """`window` with the occurrences that `calendar` drops removed."""

    window: Window
    calendar: Calendar
    _finish: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_finish", self._compute_finish())

    def occurrences(self, low: int, high: int) -> list[Occurrence]:
        if self.calendar.empty:
            return self.window.occurrences(low, high)
        judge = self.calendar.judge
        return [o for o in self.window.occurrences(low, high) if judge(o.day).happens]

    def skipped(self, low: int, high: int) -> list[Skipped]:
        """The occurrences starting in `(low, high]` that an excluded date or a holiday
        removed, in time order."""
        found: list[Skipped] = []
        for occurrence in self.window.occurrences(low, high + 1):
            if not low < occurrence.start <= high:
                continue
            verdict = self.calendar.judge(occurrence.day)
            if verdict.cause is not None:
                found.append(Skipped(occurrence, verdict.cause, verdict.holiday))
        return found

    def last_instant(self) -> int | None:
        inner = self.window.last_instant()
        if self._finish is None:
            return inner
        return self._finish if inner is None else min(inner, self._finish)

    def completed(self, instant: int) -> bool:
        """A window with an end date is completed once that date has passed in its zone and
        its last occurrence has ended."""
        if self._finish is not None and instant >= self._finish:
            return True
        return self.window.completed(instant)

    @property
    def always_active(self) -> bool:
        return self.calendar.empty and self.window.always_active

    @property
    def zone(self) -> ZoneInfo:
        return self.window.zone

    def _compute_finish(self) -> int | None:
        end_date = self.calendar.end_date
        if end_date is None:
            return None
        # The first instant of the day after endDate; an occurrence of endDate that crosses
        # midnight overlaps it, and none of a later date starts before it.
        day_after = shift_date(end_date, 1)
        after = None if day_after is None else wall_instant(day_after, time(), self.window.zone)
        if after is None:
            # endDate is the last date of the calendar (docs/schedules.md, "The end of the
            # calendar"): the window is never completed.
            return None
        ends = [o.end for o in self.occurrences(after - 1, after)]
        return max([after, *ends])


@runtime_checkable
class SkippingWindow(Protocol):
    """A window that can say which of its occurrences a calendar skipped: a CalendarWindow,
    or a window wrapping one (spa/schedule/lead.py's LeadWindow)."""

    def skipped(self, low: int, high: int) -> list[Skipped]:
        """The skipped occurrences starting in `(low, high]`, in time order."""


def skipped_between(window: Window, low: int, high: int) -> list[Skipped]:
    """The skipped occurrences of any window starting in `(low, high]` (none without a
    calendar)."""
    if isinstance(window, SkippingWindow):
        return window.skipped(low, high)
    return []
