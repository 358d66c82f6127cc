"""Wall-clock parsing and the one place where local times become absolute instants.

Schedules are written in local wall-clock time, but every comparison in the engine is between
absolute instants (integer seconds since the Unix epoch, UTC). Daylight-saving time makes the
mapping from wall clock to instant partial (a skipped hour) and ambiguous (a repeated hour);
docs/schedules.md ("Daylight-saving time") fixes the rules, and `to_instant` is the only code
that applies them.

Zones are loaded from the `tzdata` package only, never from the host's zone files, so that the
same manifest gives the same answer on every machine, and zone names are case-sensitive.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from datetime import UTC, date, datetime, time, timedelta
from enum import IntEnum
from zoneinfo import ZoneInfo

__all__ = [
    "BEYOND_CALENDAR",
    "FIRST_INSTANT",
    "LAST_INSTANT",
    "UTC_ZONE",
    "WallClockError",
    "Weekday",
    "format_instant",
    "from_instant",
    "instant_of",
    "load_zone",
    "local_date",
    "parse_date",
    "parse_hour_minute",
    "parse_local_datetime",
    "shift_date",
    "to_instant",
    "wall_instant",
    "weekdays_between",
]


class WallClockError(ValueError):
    """A wall-clock value that cannot be used; the message is meant for the user."""


class Weekday(IntEnum):
    """Days as the API spells them; values follow Python's `date.weekday()` (Monday is 0)."""

    Monday = 0
    Tuesday = 1
    Wednesday = 2
    Thursday = 3
    Friday = 4
    Saturday = 5
    Sunday = 6


# The API's week starts on Sunday: a range Friday..Monday wraps past Saturday.
_SUNDAY_FIRST = (
    Weekday.Sunday,
    Weekday.Monday,
    Weekday.Tuesday,
    Weekday.Wednesday,
    Weekday.Thursday,
    Weekday.Friday,
    Weekday.Saturday,
)

_HOUR_MINUTE = re.compile(r"([01]?[0-9]|2[0-3]):([0-5][0-9])")
_LOCAL_DATETIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")

HOUR_MINUTE_PATTERN = r"^([01]?[0-9]|2[0-3]):[0-5][0-9]$"
LOCAL_DATETIME_PATTERN = (
    r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]$"
)
DATE_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"


def parse_hour_minute(text: str) -> time:
    """Parse `HH:mm` (hour with one or two digits, minute with exactly two)."""
    match = _HOUR_MINUTE.fullmatch(text)
    if match is None:
        raise WallClockError(f"'{text}' is not a time of day in the form HH:mm (00:00 to 23:59)")
    return time(int(match[1]), int(match[2]))


def parse_local_datetime(text: str) -> datetime:
    """Parse `yyyy-MM-ddTHH:mm` into a naive local datetime (no seconds, no offset)."""
    match = _LOCAL_DATETIME.fullmatch(text)
    if match is None:
        raise WallClockError(f"'{text}' is not a date and time in the form yyyy-MM-ddTHH:mm")
    year, month, day, hour, minute = (int(part) for part in match.groups())
    try:
        return datetime(year, month, day, hour, minute)
    except ValueError as error:
        raise WallClockError(f"'{text}' is not a valid date and time: {error}") from None


def parse_date(text: str) -> date:
    """Parse a calendar date `yyyy-MM-dd` (four-digit year, two-digit month and day)."""
    match = _DATE.fullmatch(text)
    if match is None:
        raise WallClockError(f"'{text}' is not a date in the form yyyy-MM-dd")
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError as error:
        raise WallClockError(f"'{text}' is not a valid date: {error}") from None


@functools.cache
def zone_names() -> frozenset[str]:
    """Every IANA zone name the tzdata package ships: the zones `load_zone` accepts."""
    listing = importlib.resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in listing.splitlines() if line.strip())


def zones_abbreviated(abbreviation: str) -> tuple[str, ...]:
    """The zones whose clocks show `abbreviation` (`CEST`, `PST`, `IST`; any case) around the
    release year of the tzdata package, the best-known first: the zones a user who wrote an
    abbreviation as `timeZone` may mean. Empty for anything else.

    Only the names of zone.tab are offered (one or more per country, no deprecated spellings
    such as Asia/Calcutta), and numeric abbreviations (`+03`) are left out: they say an offset,
    not a place.
    """
    return _abbreviations().get(abbreviation.casefold(), ())


# The order in which zones are offered for an abbreviation: these (widely used, large cities
# first within a region) before the others, which follow in alphabetical order. Which zones use
# an abbreviation comes from tzdata alone; this list only decides who is named first.
WELL_KNOWN_ZONES = (
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Phoenix",
    "America/Los_Angeles",
    "America/Anchorage",
    "Pacific/Honolulu",
    "America/Toronto",
    "America/Vancouver",
    "America/Halifax",
    "America/St_Johns",
    "America/Mexico_City",
    "America/Havana",
    "America/Bogota",
    "America/Lima",
    "America/Santiago",
    "America/Argentina/Buenos_Aires",
    "America/Sao_Paulo",
    "Europe/London",
    "Europe/Dublin",
    "Europe/Lisbon",
    "Europe/Berlin",
    "Europe/Paris",
    "Europe/Rome",
    "Europe/Madrid",
    "Europe/Amsterdam",
    "Europe/Brussels",
    "Europe/Vienna",
    "Europe/Zurich",
    "Europe/Stockholm",
    "Europe/Warsaw",
    "Europe/Prague",
    "Europe/Athens",
    "Europe/Helsinki",
    "Europe/Kyiv",
    "Europe/Bucharest",
    "Europe/Istanbul",
    "Europe/Moscow",
    "Africa/Casablanca",
    "Africa/Lagos",
    "Africa/Cairo",
    "Africa/Johannesburg",
    "Africa/Nairobi",
    "Asia/Jerusalem",
    "Asia/Riyadh",
    "Asia/Tehran",
    "Asia/Dubai",
    "Asia/Karachi",
    "Asia/Kolkata",
    "Asia/Dhaka",
    "Asia/Bangkok",
    "Asia/Jakarta",
    "Asia/Shanghai",
    "Asia/Hong_Kong",
    "Asia/Taipei",
    "Asia/Singapore",
    "Asia/Manila",
    "Asia/Seoul",
    "Asia/Tokyo",
    "Australia/Perth",
    "Australia/Adelaide",
    "Australia/Darwin",
    "Australia/Brisbane",
    "Australia/Sydney",
    "Australia/Melbourne",
    "Pacific/Auckland",
)


@functools.cache
def _abbreviations() -> dict[str, tuple[str, ...]]:
    """Abbreviation (casefolded) to the zones that show it, the best-known first.

    Built on first use only (an unknown time zone is rare), in about 20 ms: each zone of
    zone.tab is read and asked for its abbreviation on the 15th of every month of the three
    years around the tzdata release, which finds standard and daylight-saving time in both
    hemispheres, and keeps what is in use now rather than every abbreviation of the past.
    """
    zoneinfo = importlib.resources.files("tzdata.zoneinfo")
    with zoneinfo.joinpath("tzdata.zi").open("r", encoding="utf-8") as data:
        version = re.match(r"# version ([0-9]{4})", data.readline())
    year = int(version[1]) if version else datetime.now(UTC).year
    moments = [
        datetime(year + offset, month, 15, tzinfo=UTC)
        for offset in (-1, 0, 1)
        for month in range(1, 13)
    ]
    listing = zoneinfo.joinpath("zone.tab").read_text(encoding="utf-8")
    names = {
        line.split("\t")[2] for line in listing.splitlines() if line and not line.startswith("#")
    }
    users: dict[str, set[str]] = {}
    for name in names & zone_names():
        with zoneinfo.joinpath(*name.split("/")).open("rb") as data:
            zone = ZoneInfo.from_file(data, key=name)
        for moment in moments:
            abbreviation = moment.astimezone(zone).tzname()
            if abbreviation and abbreviation[0] not in "+-":
                users.setdefault(abbreviation.casefold(), set()).add(name)
    rank = {name: position for position, name in enumerate(WELL_KNOWN_ZONES)}
    return {
        abbreviation: tuple(sorted(zones, key=lambda name: (rank.get(name, len(rank)), name)))
        for abbreviation, zones in users.items()
    }


@functools.cache
def load_zone(name: str) -> ZoneInfo:
    """The IANA zone `name` from the tzdata package; an empty name means UTC."""
    if name == "":
        return UTC_ZONE
    if name == "Local":
        # The original controller read "Local" as the zone of the machine it ran on; here a
        # window means the same wherever the controller runs (docs/schedules.md).
        raise WallClockError(
            "'Local' (the controller machine's own zone) is not supported: write the IANA "
            "name of the zone you mean, such as Europe/Berlin or America/New_York"
        )
    if name not in zone_names():
        raise WallClockError(f"unknown time zone '{name}'")
    resource = importlib.resources.files("tzdata.zoneinfo").joinpath(*name.split("/"))
    with resource.open("rb") as data:
        return ZoneInfo.from_file(data, key=name)


def _load_utc() -> ZoneInfo:
    resource = importlib.resources.files("tzdata.zoneinfo").joinpath("UTC")
    with resource.open("rb") as data:
        return ZoneInfo.from_file(data, key="UTC")


UTC_ZONE = _load_utc()


def weekdays_between(first: Weekday, last: Weekday) -> frozenset[Weekday]:
    """The days from `first` to `last` inclusive, in a week that starts on Sunday.

    A range may wrap past Saturday: Friday..Monday is Friday, Saturday, Sunday and Monday.
    """
    begin = _SUNDAY_FIRST.index(first)
    span = (_SUNDAY_FIRST.index(last) - begin) % 7
    return frozenset(_SUNDAY_FIRST[(begin + offset) % 7] for offset in range(span + 1))


# Fleets share a handful of zones and times of day, so the same conversions recur constantly;
# this bound keeps the cache to a few megabytes.
@functools.lru_cache(maxsize=1 << 16)
def to_instant(wall: datetime, zone: ZoneInfo) -> int:
    """The instant (epoch seconds) at which the naive wall-clock time `wall` happens in `zone`.

    A repeated wall-clock time (clocks go back) happens at its first occurrence. A skipped one
    (clocks go forward) happens at the instant the clock jumps, the first valid instant after
    the gap (docs/schedules.md, "Daylight-saving time").
    """
    # fold=0 selects the offset in force before a transition: the first occurrence of a
    # repeated time, and for a skipped time an instant after the jump that we correct below.
    instant = int(wall.replace(tzinfo=zone).timestamp())
    if datetime.fromtimestamp(instant, zone).replace(tzinfo=None) == wall:
        return instant
    return _jump_instant(wall, zone)


def _jump_instant(wall: datetime, zone: ZoneInfo) -> int:
    """The instant of the forward jump whose gap contains `wall`."""
    offset_before = wall.replace(tzinfo=zone, fold=0).utcoffset()
    offset_after = wall.replace(tzinfo=zone, fold=1).utcoffset()
    assert offset_before is not None
    assert offset_after is not None
    naive_utc = wall.replace(tzinfo=UTC)
    # The jump lies in (wall - offset_after, wall - offset_before]; offsets change only at the
    # jump, so a binary search over whole seconds finds its first second.
    low = int((naive_utc - offset_after).timestamp())
    high = int((naive_utc - offset_before).timestamp())
    while high - low > 1:
        middle = (low + high) // 2
        if datetime.fromtimestamp(middle, zone).utcoffset() == offset_before:
            low = middle
        else:
            high = middle
    return high


# The instants the engine schedules (docs/schedules.md, "The end of the calendar"): from the
# start of 0001-01-02 to the start of 9999-12-31, UTC. No zone is a day or more from UTC, so
# every one of them has a date and a wall-clock time in every zone, and a plan or a status can
# show it; the engine finds no boundary outside them (a window still open at LAST_INSTANT
# stays open), and a search for the next start stops at LAST_INSTANT.
FIRST_INSTANT = int(datetime(1, 1, 2, tzinfo=UTC).timestamp())
LAST_INSTANT = int(datetime(9999, 12, 31, tzinfo=UTC).timestamp())
# After every instant of the calendar (10000-01-01T00:00:00Z): the end of an occurrence that
# ends beyond the calendar's last date, where no wall-clock time can be converted.
BEYOND_CALENDAR = LAST_INSTANT + 86400


def local_date(instant: int, zone: ZoneInfo) -> date:
    """The calendar date in `zone` at `instant`: for an instant whose date there would be
    before the year 1 or after the year 9999, the first or the last date of the calendar."""
    try:
        return datetime.fromtimestamp(instant, zone).date()
    except (OverflowError, ValueError, OSError):
        return date.min if instant < 0 else date.max


def shift_date(day: date, days: int) -> date | None:
    """`day` and `days` days (fewer if negative), or None when that is not a date of the
    calendar (the years 1 to 9999)."""
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return None


def wall_instant(day: date, clock: time, zone: ZoneInfo) -> int | None:
    """`to_instant` of `clock` on `day`, or None when that wall-clock time is not within the
    years 1 to 9999 in UTC (9999-12-31 23:00 in New York is in the year 10000 in UTC): the
    windows' way to ask for a time near the ends of the calendar."""
    try:
        return to_instant(datetime.combine(day, clock), zone)
    except (OverflowError, ValueError, OSError):
        return None


def from_instant(instant: int) -> datetime:
    """An aware UTC datetime for epoch seconds."""
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=instant)


def format_instant(instant: int) -> str:
    """RFC 3339 in UTC with seconds and a `Z`, the one format the API and the plan use."""
    # isoformat writes the year in four digits (0001), which strftime's %Y does not everywhere.
    return from_instant(instant).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def instant_of(moment: datetime) -> int:
    """Epoch seconds of an aware datetime, rounded down: boundaries fall on whole seconds, so
    rounding down keeps every comparison with them exact."""
    return math.floor(moment.timestamp())
