"""Cron windows: a window of a fixed duration opens each time a cron expression matches.

Parsing and matching the expression is the `cronsim` library's (5 fields, ranges, lists,
steps, names, and its `L`/`LW`/`#` extensions; day-of-month and day-of-week combine as in
Vixie and Debian cron). It is asked two questions only: which days match, and the sets of
hours and minutes. It is never asked for instants, because its daylight-saving handling is
Debian cron's and ours is docs/schedules.md's: each matching wall-clock time goes through
`to_instant` like every other boundary, so a match in a skipped hour fires at the jump and a
match in a repeated hour fires once, at its first occurrence.

One occurrence is one uninterrupted window of a day: matches of the same day whose windows
overlap or touch (every minute for 5 minutes, say) are a single occurrence, which is what
`spa plan` lists when the day is skipped, and what keeps a dense expression cheap: on a day
without a clock change the windows of a day are computed once per expression, in minutes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import durationpy
from cronsim import CronSim, CronSimError

from spa.schedule.wallclock import (
    FIRST_INSTANT,
    LAST_INSTANT,
    WallClockError,
    shift_date,
    wall_instant,
)
from spa.schedule.windows import Occurrence, local_days

__all__ = [
    "CRON_FIELDS_PATTERN",
    "CRON_MACROS",
    "DURATION_PATTERN",
    "MAX_DURATION_SECONDS",
    "MIN_DURATION_SECONDS",
    "CronExpression",
    "CronWindow",
    "go_duration_seconds",
    "parse_duration",
]

MIN_DURATION_SECONDS = 60
MAX_DURATION_SECONDS = 31 * 24 * 3600

# The macros of Vixie cron that name a time (not @reboot).
CRON_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")
# Five fields of printable ASCII separated by spaces: the CRD's check, and the first of ours,
# so that both accept the same text (cronsim would also split on tabs).
CRON_FIELDS_PATTERN = "^[!-~]+( +[!-~]+){4}$"

# A Go duration (time.ParseDuration) in hours, minutes and seconds: what a Kubernetes
# metav1.Duration field accepts, less the sub-second units that a window has no use for.
DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(h|m|s))+$"


def go_duration_seconds(text: str) -> float | None:
    """The seconds of a Go duration that its field's pattern accepted, or None when it is too
    large to read (beyond timedelta's 999,999,999 days: far beyond any field's limit, so the
    field reports it as above its maximum, never a traceback).

    The one reading of Go durations, `durationpy`'s, for `duration` and `leadTime` alike.
    durationpy raises DurationError for an out-of-range value; releases before 0.10 let
    timedelta's OverflowError through instead.
    """
    try:
        return durationpy.from_str(text).total_seconds()
    except (durationpy.DurationError, OverflowError):
        return None


def parse_duration(text: str) -> int:
    """Seconds of a Go duration such as `1h30m`, `90m` or `1.5h`, from 1m to 744h (31 days)."""
    if re.fullmatch(DURATION_PATTERN, text) is None:
        raise WallClockError(
            f"'{text}' is not a duration: write hours, minutes and seconds such as 1h30m, "
            "90m or 45s"
        )
    # Read as leadTime is (spa.api.validation.compile.duration_seconds): one reading of Go
    # durations; the pattern above only narrows the units. Too large to read is above the range.
    total = go_duration_seconds(text)
    if total is not None and total != int(total):
        raise WallClockError(f"'{text}' is not a whole number of seconds")
    if total is None or not MIN_DURATION_SECONDS <= total <= MAX_DURATION_SECONDS:
        raise WallClockError(f"must be from 1m to 744h (31 days), got {text}")
    return int(total)


# A zone written into the expression, as Vixie cron's `CRON_TZ=` and a Kubernetes CronJob's
# `TZ=` once took it: counted as a sixth field, it was said to be seconds. The zone is the
# Schedule's timeZone.
_ZONE_PREFIX = re.compile(r"(?P<key>CRON_TZ|TZ)=(?P<zone>\S*)\s+(?P<rest>\S.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class CronExpression:
    """A parsed 5-field cron expression (or one of `CRON_MACROS`)."""

    text: str
    _matcher: CronSim = field(init=False, repr=False, compare=False)
    minutes_of_day: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        zoned = _ZONE_PREFIX.fullmatch(self.text)
        if zoned is not None:
            raise WallClockError(
                f"'{self.text}' names its time zone ({zoned['key']}=), which the schedule "
                f"does not take: write '{zoned['rest']}' and the zone as the Schedule's "
                f"timeZone ({zoned['zone'] or 'an IANA name such as Europe/Berlin'})"
            )
        fields = CRON_MACROS.get(self.text, self.text)
        if self.text.startswith("@") and self.text not in CRON_MACROS:
            raise WallClockError(
                f"unknown macro '{self.text}': use one of {', '.join(CRON_MACROS)}"
            )
        count = len(fields.split())
        if count == 5 and re.fullmatch(CRON_FIELDS_PATTERN, fields) is None:
            raise WallClockError(
                f"'{self.text}' must separate its 5 fields with spaces, without spaces before "
                "or after them, and hold printable ASCII only"
            )
        if count != 5:
            hint = " (seconds are not supported)" if count == 6 else ""
            raise WallClockError(
                f"'{self.text}' has {count} fields{hint}: write 5 (minute hour day-of-month "
                "month day-of-week) or a macro such as @daily"
            )
        try:
            # A fixed UTC start: the matcher is used as a clock without daylight-saving time.
            matcher = CronSim(_single_value_ranges(fields), datetime(2000, 1, 1, tzinfo=UTC))
        except CronSimError as error:
            raise WallClockError(_describe(self.text, fields, error)) from None
        object.__setattr__(self, "_matcher", matcher)
        minutes = sorted(hour * 60 + minute for hour in matcher.hours for minute in matcher.minutes)
        object.__setattr__(self, "minutes_of_day", tuple(minutes))

    def matches_day(self, day: date) -> bool:
        """Whether the expression matches at some time on `day` (its date fields)."""
        return day.month in self._matcher.months and self._matcher.match_day(day)

    def matches_every_day(self) -> bool:
        """Whether the date fields match every day of every month (`*`, `1-31`, `0-6`)."""
        matcher = self._matcher
        every_date = set(range(1, 32)) <= matcher.days
        every_weekday = {item % 7 for item in matcher.weekdays if isinstance(item, int)} == set(
            range(7)
        )
        days = every_date and every_weekday if matcher.day_and else every_date or every_weekday
        return set(range(1, 13)) <= matcher.months and days

    def next_day_to_try(self, day: date) -> date | None:
        """The day after `day`, or the 1st of the next month of the expression's months when
        `day`'s month is not one: a yearly expression is not tried on every day of the year.
        None when that day would be after the end of the calendar (9999-12-31)."""
        months = self._matcher.months
        if day.month in months:
            return shift_date(day, 1)
        while day.month not in months:
            if day.year == date.max.year and day.month == 12:
                return None
            day = date(day.year + day.month // 12, day.month % 12 + 1, 1)
        return day


_STEPPED_RANGE = re.compile(r"([^,/-]+)-([^,/-]+)/[0-9]+")


def _single_value_ranges(fields: str) -> str:
    """`fields` with each stepped range of one value (`3-3/2`, `MON-MON/1`) written as that
    value, which is what it means in cron; cronsim reads a range whose set has one value as
    `3/2`, from 3 to the end of the field."""

    def term(text: str) -> str:
        match = _STEPPED_RANGE.fullmatch(text)
        if match is None:
            return text
        first, last = match[1].upper(), match[2].upper()
        same = first == last or (first.isdigit() and last.isdigit() and int(first) == int(last))
        return match[1] if same else text

    return " ".join(",".join(term(t) for t in part.split(",")) for part in fields.split(" "))


def _valid_in_any_month(fields: str) -> bool:
    """Whether the day-of-month field is fine on its own, so that only its months (30
    February) make the expression one that never matches, which the parser refuses too."""
    minute, hour, days, _, weekdays = fields.split()
    try:
        CronSim(f"{minute} {hour} {days} * {weekdays}", datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError:
        return False
    return True


def _describe(text: str, fields: str, error: CronSimError) -> str:
    reason = str(error)  # cronsim says "Bad minute", "Bad day-of-week", ...
    for index, name in enumerate(_FIELD_NAMES):
        if reason.lower() == f"bad {name}":
            value = fields.split()[index]
            if name == "day-of-month" and _valid_in_any_month(fields):
                month = fields.split()[3]
                return (
                    f"'{text}' never matches: day-of-month '{value}' does not occur in "
                    f"month '{month}'"
                )
            return f"'{text}' is not a valid cron expression: bad {name} field '{value}'"
    return f"'{text}' is not a valid cron expression: {reason[:1].lower()}{reason[1:]}"


@dataclass(frozen=True, slots=True)
class CronWindow:
    """A window of `duration` seconds from each match of `expression`, in `zone`."""

    expression: CronExpression
    duration: int
    zone: ZoneInfo
    # Per day without a clock change: (first, last) minute of day of each group of matches
    # whose windows overlap or touch.
    _groups: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        groups: list[tuple[int, int]] = []
        for minute in self.expression.minutes_of_day:
            if groups and (minute - groups[-1][1]) * 60 <= self.duration:
                groups[-1] = (groups[-1][0], minute)
            else:
                groups.append((minute, minute))
        object.__setattr__(self, "_groups", tuple(groups))

    def occurrences(self, low: int, high: int) -> list[Occurrence]:
        found: list[Occurrence] = []
        # Windows last at most `duration` (elapsed time), so matches from a day before the
        # date of `low - duration` on cover every overlap.
        days = local_days(low - self.duration, high, self.zone, before=1)
        if days is None:
            return found
        low, high = max(low, FIRST_INSTANT), min(high, LAST_INSTANT + 1)
        day: date | None
        day, last_day = days
        while day is not None and day <= last_day:
            if self.expression.matches_day(day):
                for occurrence in self._day_occurrences(day):
                    if occurrence.end > low and occurrence.start < high:
                        found.append(occurrence)
                day = shift_date(day, 1)
            else:
                day = self.expression.next_day_to_try(day)
        return found

    def _day_occurrences(self, day: date) -> list[Occurrence]:
        midnight = wall_instant(day, time(), self.zone)
        following = shift_date(day, 1)
        next_midnight = None if following is None else wall_instant(following, time(), self.zone)
        if (
            midnight is not None
            and next_midnight is not None
            and next_midnight - midnight == 86400
            and _offset(midnight, self.zone) == _offset(next_midnight - 1, self.zone)
        ):
            # No clock change that day (zones change at most once a day): wall-clock minutes
            # are elapsed minutes from midnight.
            return [
                Occurrence(day, midnight + 60 * first, midnight + 60 * last + self.duration)
                for first, last in self._groups
            ]
        # A day with a clock change, or at an end of the calendar (where a time that is not
        # within the years 1 to 9999 in UTC has no instant, and no window).
        starts = sorted(
            {
                start
                for minute in self.expression.minutes_of_day
                if (start := wall_instant(day, time(minute // 60, minute % 60), self.zone))
                is not None
            }
        )
        found: list[Occurrence] = []
        for start in starts:
            if found and start <= found[-1].end:
                found[-1] = Occurrence(day, found[-1].start, start + self.duration)
            else:
                found.append(Occurrence(day, start, start + self.duration))
        return found

    def last_instant(self) -> int | None:
        return None

    def completed(self, instant: int) -> bool:
        return False

    @property
    def always_active(self) -> bool:
        """True when each day's windows join into the next day's and the zone's clock never
        changes (UTC, Etc/GMT-9): `@hourly` for 1h in UTC never starts or ends, which the
        Timeline would otherwise search its whole horizon to find out."""
        groups = self._groups
        return (
            len(groups) == 1
            and (24 * 60 - groups[0][1] + groups[0][0]) * 60 <= self.duration
            and self.expression.matches_every_day()
            and (self.zone.key in _FIXED_OFFSET_ZONES or str(self.zone.key).startswith("Etc/"))
        )


# Zones whose offset never changed (with every Etc/ zone): no clock change to break a window.
_FIXED_OFFSET_ZONES = frozenset(
    {"UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu"}
)


def _offset(instant: int, zone: ZoneInfo) -> timedelta | None:
    return datetime.fromtimestamp(instant, zone).utcoffset()
