"""The zones the engine's property tests draw from, each for a rule that breaks engines, and
the instants at which their offsets change (tests/unit/schedule/test_engine_properties.py,
tests/unit/calendar_reference.py)."""

from __future__ import annotations

import functools
from datetime import datetime
from zoneinfo import ZoneInfo

from spa.schedule import load_zone

ZONES = [
    "UTC",
    "America/New_York",  # west, DST at 02:00
    "Europe/Berlin",  # east, DST at 02:00/03:00
    "Australia/Sydney",  # southern hemisphere
    "Australia/Lord_Howe",  # half-hour DST shift
    "Asia/Kolkata",  # half-hour offset, no DST
    "America/Havana",  # DST at midnight: some days have no 00:00
    "America/Santiago",  # southern hemisphere, DST at 24:00
    "Pacific/Chatham",  # +12:45 / +13:45
    "Africa/Casablanca",  # DST suspended for Ramadan: several changes a year
]


@functools.cache
def zone_changes(name: str) -> tuple[int, ...]:
    """Instants in 2024-2030 at which the zone's offset changes (hourly scan, rounded)."""
    zone = load_zone(name)
    start = int(datetime(2024, 1, 1, tzinfo=ZoneInfo("UTC")).timestamp())
    found = []
    previous = datetime.fromtimestamp(start, zone).utcoffset()
    for instant in range(start, start + 7 * 365 * 86400, 3600):
        offset = datetime.fromtimestamp(instant, zone).utcoffset()
        if offset != previous:
            found.append(instant)
            previous = offset
    return tuple(found) or (start + 180 * 86400,)
