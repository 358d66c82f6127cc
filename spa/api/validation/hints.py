"""What to write instead: the hints that end a message about a field.

A message says what is wrong and, where it can, what to write: the closest name ("did you mean
'endTime'?"), a time without its seconds or UTC offset, midnight at the end of a day as 00:00,
a zone for an offset or an abbreviation. These read the input only, so that pydantic's errors
(spa.api.validation.messages) and the window checks (spa.api.validation.compile) say the same.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import assert_never

from spa.api.resources import ScheduleType
from spa.schedule import WallClockError, Weekday, country_code, load_zone, parse_date
from spa.schedule.wallclock import WELL_KNOWN_ZONES, zone_names, zones_abbreviated

__all__ = [
    "TIME_SHAPE",
    "country_hint",
    "date_form_hint",
    "is_date_field",
    "midnight_hint",
    "number_hint",
    "suggestion",
    "time_form_hint",
    "zone_hint",
]

_MIDNIGHT_AT_END = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T24:00")


def midnight_hint(
    field: str,
    value: object,
    *,
    kind: ScheduleType | None,
    start_time: object,
    start_day: object,
    end_day: object,
) -> str:
    """How to write a time of `24:00` (midnight at the end of a day), which the API does not
    accept, for a Schedule of type `kind` with that startTime and those days; nothing for any
    other value."""
    match kind:
        case None | ScheduleType.Cron:
            return ""
        case ScheduleType.OneShot:
            return _midnight_date_hint(value)
        case _ if value != "24:00":
            return ""
        case ScheduleType.Daily | ScheduleType.Weekly if field == "spec.endTime":
            # docs/schedules.md, "Crossing midnight" and "24 hours".
            rule = (
                "an endTime equal to startTime makes a 24-hour window"
                if start_time in ("00:00", "0:00")
                else "an endTime earlier than startTime ends on the next day"
            )
            return f"; for a window that ends at midnight write 00:00 ({rule})"
        case ScheduleType.Daily:
            return "; for a window that starts at midnight write 00:00"
        case ScheduleType.WeeklySpan:
            where, name = ("ends", "endDayOfWeek")
            if field == "spec.startTime":
                where, name = ("starts", "startDayOfWeek")
            next_day = _day_after(end_day if where == "ends" else start_day)
            then = f"{name} {next_day}" if next_day else f"the day after {name}"
            return f"; for a window that {where} at midnight write 00:00 and {then}"
        case ScheduleType.Weekly:
            # A start at midnight at the end of each day is at 00:00 of the days after.
            first, last = _day_after(start_day), _day_after(end_day)
            then = (
                f"startDayOfWeek {first} and endDayOfWeek {last}"
                if first and last
                else "startDayOfWeek and endDayOfWeek one day later"
            )
            return f"; for a window that starts at midnight write 00:00 with {then}"
        case _:
            assert_never(kind)


# A time of day or a date-time as other formats write it: with seconds (`08:00:00`, a fraction
# too) or a UTC offset (`08:00+02:00`, `2026-03-08T08:00Z`), a space for the `T`.
TIME_SHAPE = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ])?(?P<time>[0-9]{1,2}:[0-9]{2})"
    r"(?P<seconds>:[0-9]{2}(?:[.,][0-9]+)?)?(?P<offset>[Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)


_TIME_FIELDS = ("spec.startTime", "spec.endTime")


def time_form_hint(field: str, value: object, *, one_shot: bool | None = None) -> str:
    """Why a startTime or endTime with seconds or a UTC offset is not of the form the API takes
    (HH:mm, or yyyy-MM-ddTHH:mm for a OneShot), and what to write: the seconds go, and the
    zone is `spec.timeZone`'s, never the time's own (docs/schedules.md, "Time zones"); for a
    time of another notation (`6pm`, `17.30`, `9h`, `2026-12-24 18:00`, `2026/12/24T18:00`),
    the same time in the API's, a date and time only for a OneShot (`one_shot`; None: not
    known); nothing for any other value."""
    if field not in _TIME_FIELDS or not isinstance(value, str):
        return ""
    found = TIME_SHAPE.fullmatch(value)
    if found is None or not (found["seconds"] or found["offset"]):
        return _notation_hint(value, one_shot=one_shot)
    date = found["date"][:10] + "T" if found["date"] else ""
    parts = []
    if found["seconds"]:
        parts.append("seconds")
    if found["offset"]:
        parts.append(f"a UTC offset ({found['offset']})")
    fix = f"write {date}{found['time']}"
    if found["offset"]:
        fix += " and give the zone in spec.timeZone (an IANA name such as Europe/Berlin)"
    return f"; it has {' and '.join(parts)}, which the API does not take: {fix}"


# A time of day in another notation: 12-hour (`6pm`, `5:30 p.m.`), with a dot or an `h`
# between hours and minutes (`17.30`, `9h`, `17h30`), after a date written with a space or
# slashes (`2026-12-24 18:00`, `2026/12/24T18:00`).
_NOTATION = re.compile(
    r"(?:(?P<year>[0-9]{4})[-/.](?P<month>[0-9]{1,2})[-/.](?P<day>[0-9]{1,2})(?:[Tt]| +))?"
    r"(?P<hour>[0-9]{1,2})(?:(?P<separator>[:.hH])(?P<minute>[0-9]{2})?)? *"
    r"(?P<half>[AaPp]\.? *[Mm]\.?)?"
)


def _notation_hint(value: str, *, one_shot: bool | None) -> str:
    """The time `value` means, written as the API takes it, if it is a time (or, but for a
    window that is known not to be a OneShot, a date and time) in another notation; nothing
    for anything else."""
    found = _NOTATION.fullmatch(value.strip())
    if found is None or (found["year"] and one_shot is False):
        return ""
    hour, minute = int(found["hour"]), int(found["minute"] or 0)
    if found["half"]:
        if not 1 <= hour <= 12:
            return ""
        hour = hour % 12 + (12 if found["half"][0] in "Pp" else 0)
    elif found["separator"] in (None, ":") and not found["year"]:
        return ""  # plain digits or H:mm: not another notation
    if hour > 23 or minute > 59:
        return ""
    written = f"{hour:02d}:{minute:02d}"
    if found["year"]:
        try:
            day = parse_date(f"{found['year']}-{int(found['month']):02d}-{int(found['day']):02d}")
        except WallClockError:
            return ""
        written = f"{day.isoformat()}T{written}"
    if written == value:
        return ""
    return f"; write {written}"


# The fields that hold a date alone (a Schedule's bounds and excludeDates, a calendar's dates
# and ranges), by the path a message gives them.
_DATE_FIELD = re.compile(
    r"spec\.(startDate|endDate|excludeDates\[[0-9]+\]|dates\[[0-9]+\]"
    r"|dateRanges\[[0-9]+\]\.(start|end))"
)

# A date and more: a time of day or a UTC offset after it, a sign or a fifth digit of the year.
_DATE_AND_MORE = re.compile(
    r"(?P<sign>[+-])?(?P<year>[0-9]{4,})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})(?P<more>.*)",
    re.DOTALL,
)


def is_date_field(field: str) -> bool:
    """Whether the field at `field` (`spec.excludeDates[0]`) holds a date alone."""
    return _DATE_FIELD.fullmatch(field) is not None


def date_form_hint(value: object) -> str:
    """For a date written with more than the date (`2026-12-25T00:00`, `2026-12-25Z`,
    `+2026-12-25`), which a date field does not take: the date alone; for a year of five
    digits, the years there are; nothing for any other value."""
    found = _DATE_AND_MORE.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return ""
    if len(found["year"]) > 4:
        return "; the years are 0001 to 9999"
    alone = f"{found['year']}-{found['month']}-{found['day']}"
    if not found["more"]:
        return f"; write it without the sign: {alone}"
    return (
        f"; write the date alone, {alone}: a date field takes no time of day or UTC offset "
        "(dates are judged in the Schedule's timeZone)"
    )


def _midnight_date_hint(value: object) -> str:
    """For `2026-12-31T24:00`: the next date at 00:00; nothing for any other value."""
    found = _MIDNIGHT_AT_END.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return ""
    try:
        day = parse_date(found[1])
        after = (day + timedelta(days=1)).isoformat()
    except (WallClockError, OverflowError):
        return ""
    return f"; midnight at the end of {day} is {after}T00:00: write that"


def _day_after(name: object) -> str | None:
    """The weekday after the one named, if `name` is one."""
    if not isinstance(name, str) or name not in Weekday.__members__:
        return None
    return Weekday((Weekday[name].value + 1) % 7).name


# How many zones an abbreviation's message names before "and N more".
_ZONES_NAMED = 4


def zone_hint(name: str) -> str:
    """What to write instead of an unknown zone: for a UTC offset (`UTC+1`, `+01:00`, `Z`),
    the zones with that offset; for a zone name in the wrong case, or for a typo, the closest
    name; for an abbreviation (CEST, PST), the zones that use it."""
    offset = _offset_hint(name)
    if offset is not None:
        return offset
    names = zone_names()
    if name.casefold() not in {zone.casefold() for zone in names}:
        users = zones_abbreviated(name) if len(name) <= 8 else ()
        if users:
            named = ", ".join(users[:_ZONES_NAMED])
            if len(users) > _ZONES_NAMED:
                named += f" and {len(users) - _ZONES_NAMED} more"
            return (
                f"; it is an abbreviation, used by {named}: write the IANA name of the zone you"
                " mean"
            )
    return suggestion(name, names)


# A UTC offset written where a zone belongs: `Z`, `+01:00`, `-0530`, `UTC+1`, `GMT-5`.
_OFFSET = re.compile(
    r"(?i:z|(?:utc|gmt|z)?(?P<sign>[+-])(?P<hours>[0-9]{1,2})(?::?(?P<minutes>[0-9]{2}))?)\Z"
)


# The instants at which a place's standard offset is read: fixed, so that the same input gets
# the same message whenever it is checked.
_SEASONS = (datetime(2026, 1, 15, 12, tzinfo=UTC), datetime(2026, 7, 15, 12, tzinfo=UTC))


def _offset_hint(name: str) -> str | None:
    """For a UTC offset where a zone belongs: the Etc/GMT zone of that offset, whose sign is
    POSIX's and so the opposite of the offset's (Etc/GMT-1 is UTC+01:00), and a place on that
    standard offset (docs/schedules.md, "Time zones"). A suggestion by spelling offered a zone
    an hour off (`UTC+1`: 'UTC'; `Z`: 'NZ'). None for anything that is not an offset."""
    found = _OFFSET.fullmatch(name)
    if found is None:
        return None
    if found["sign"] is None:
        minutes = 0
    else:
        minutes = int(found["hours"]) * 60 + int(found["minutes"] or 0)
        minutes *= -1 if found["sign"] == "-" else 1
    if minutes == 0:
        return "; a UTC offset is not a zone: write UTC (or Etc/UTC)"
    hours, rest = divmod(abs(minutes), 60)
    shown = f"UTC{'+' if minutes > 0 else '-'}{hours:02d}:{rest:02d}"
    place = next((zone for zone in WELL_KNOWN_ZONES if _standard_minutes(zone) == minutes), None)
    if rest == 0 and -12 <= minutes // 60 <= 14:
        etc = f"Etc/GMT{'-' if minutes > 0 else '+'}{hours}"
        also = "" if place is None else f" or the zone of the place you mean, such as {place}"
        return (
            f"; a UTC offset is not a zone: use an IANA zone such as {etc} (the sign is "
            f"inverted: {etc} is {shown}){also}"
        )
    such = "" if place is None else f", such as {place}"
    return f"; a UTC offset is not a zone: use the IANA zone of the place you mean{such} ({shown})"


def _standard_minutes(zone: str) -> int:
    """The standard offset of `zone` in minutes east of UTC: the smaller of its offsets in
    January and in July (daylight saving time adds an hour in either hemisphere; tzdata's
    Europe/Dublin has a negative one in winter, which makes `dst()` useless here)."""
    offsets = [
        (instant.astimezone(load_zone(zone)).utcoffset() or timedelta(0)) for instant in _SEASONS
    ]
    return int(min(offsets).total_seconds()) // 60


# A country and its subdivision in one (`DE-BY`, `de_by`, `US/CA`), as ISO 3166-2 writes them.
_COUNTRY_AND_SUBDIVISION = re.compile(r"(?P<country>[A-Za-z]{2})[-_/ ](?P<subdivision>\w{1,3})")


def country_hint(value: str) -> str:
    """What to write for a country given as more than its alpha-2 code: the two codes of
    `DE-BY`, the alpha-2 code of `USA` or `Germany`, else where to find the codes."""
    both = _COUNTRY_AND_SUBDIVISION.fullmatch(value.strip())
    if both is not None:
        return (
            f"; write country: {both['country'].upper()} and subdivision: "
            f"{both['subdivision'].upper()}"
        )
    code = country_code(value) if len(value) <= 64 else None
    if code is not None:
        return f"; did you mean '{code}'?"
    return " (such as US or DE)"


def number_hint(field: str, value: float, *, one_shot: bool) -> str | None:
    """For a number that YAML read where the API wants text, if quoting it would not make it
    right: what to write instead (`timeZone: +1`, a UTC offset; `startTime: 9` or `1200`, a
    time; `excludeDates: [20261225]`, a date; `country: 49`; `schedule: 5`). None where the
    digits are fine as text (`name: 2026`): then quoting it is the fix. `one_shot`: the
    Schedule is a OneShot, whose times are dates and times."""
    if field == "spec.timeZone":
        return _number_zone_hint(value)
    if field in _TIME_FIELDS:
        if one_shot:
            return (
                "; a OneShot's times are text in the form yyyy-MM-ddTHH:mm, such as "
                "2026-03-08T09:00"
            )
        reading = _clock_reading(value)
        if reading is not None:
            return f"; a time of day is text in the form HH:mm: write {reading}"
        return "; a time of day is text in the form HH:mm (00:00 to 23:59), such as 09:00"
    if is_date_field(field):
        digits = str(value) if isinstance(value, int) and 10_000_000 <= value < 100_000_000 else ""
        try:
            day = parse_date(f"{digits[:4]}-{digits[4:6]}-{digits[6:]}") if digits else None
        except WallClockError:
            day = None
        if day is not None:
            return f"; a date is written yyyy-MM-dd: write {day.isoformat()}"
        return "; a date is text in the form yyyy-MM-dd, such as 2026-12-25"
    if field.endswith("holidays.country"):
        return (
            "; a country is the two capital letters of its ISO 3166-1 alpha-2 code, such as "
            "US or DE"
        )
    if field == "spec.schedule":
        return (
            "; a schedule is a cron expression of 5 fields such as '0 9 * * 1-5' (quoted), "
            "or a macro such as @daily"
        )
    return None


def _number_zone_hint(value: float) -> str:
    """A number as timeZone (`+1`, `-5`, `0`, `5.5`) is a UTC offset in hours."""
    sign = "-" if value < 0 else "+"
    hours, fraction = divmod(abs(value), 1)
    minutes = round(fraction * 60)
    said = _offset_hint(f"{sign}{int(hours):02d}:{minutes:02d}") if hours <= 14 else None
    return said or "; a time zone is an IANA name such as Europe/Berlin"


def _clock_reading(value: float) -> str | None:
    """The time of day a number probably meant: 9 is 09:00, 1730 is 17:30, 12.3 (`12.30` to
    YAML) is 12:30; None for a number that is no time, or not clearly one (720 is 07:20, or
    12:00 as minutes, which a YAML 1.1 reader makes of an unquoted 12:00)."""
    if isinstance(value, int):
        hour, minute = (value, 0) if 0 <= value <= 23 else divmod(value, 100)
        if not (0 <= value <= 23 or 1000 <= value <= 2359):
            return None
    else:
        hour = int(value)
        minute = round((value - hour) * 100)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"{hour:02d}:{minute:02d}"


def suggestion(word: str, choices: Iterable[str]) -> str:
    """ "; did you mean 'X'?" for the choice closest to `word`, or nothing."""
    if len(word) > 64:
        return ""
    folded = {choice.casefold(): choice for choice in choices}
    match = folded.get(word.casefold())
    if match is None:
        close = difflib.get_close_matches(word.casefold(), list(folded), n=1, cutoff=0.6)
        match = folded[close[0]] if close else None
    return f"; did you mean '{match}'?" if match is not None and match != word else ""
