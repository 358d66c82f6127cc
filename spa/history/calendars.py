"""Which public holidays can explain a dip in the history: those of the country given, or by
default of the country of the autoscaler's time zone.

The country of a zone is the one tzdata's `zone.tab` (shipped with the `tzdata` package the
engine already uses) names for it: `America/New_York` is US, `Europe/Berlin` DE. A zone that
several countries share has one row there, its first; `UTC` and the `Etc/` zones have none
(docs/suggest.md, "Holidays").
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from zoneinfo import ZoneInfo

from spa.schedule import PublicHolidays, WallClockError

__all__ = ["CalendarError", "calendar_of", "country_of_zone"]


class CalendarError(ValueError):
    """A `--holidays` value that names no calendar (the message says why)."""


@functools.cache
def _zone_countries() -> dict[str, str]:
    try:
        text = importlib.resources.files("tzdata").joinpath("zoneinfo", "zone.tab").read_text()
    except (OSError, ModuleNotFoundError):
        return {}
    countries: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) >= 3:
            countries[fields[2]] = fields[0]
    return countries


def country_of_zone(zone: ZoneInfo) -> str | None:
    """The ISO 3166-1 alpha-2 code of the country of `zone`, if tzdata names one."""
    return _zone_countries().get(zone.key or "")


def calendar_of(text: str | None, zone: ZoneInfo) -> PublicHolidays | None:
    """The calendar `--holidays` names (`US`, `DE-BY`, `none`), or (None given) the one of the
    country of `zone` when the holidays library knows it. CalendarError for a country or
    subdivision it does not know."""
    if text is not None and text.lower() == "none":
        return None
    if text is None:
        country = country_of_zone(zone)
        if country is None:
            return None
        try:
            return PublicHolidays(country)
        except WallClockError:
            return None
    found = re.fullmatch(r"([A-Za-z]{2})(?:-([A-Za-z0-9]+))?", text)
    if found is None:
        raise CalendarError(
            f"'{text}' is not a country code (US) or a country and subdivision (DE-BY), or none"
        )
    country, subdivision = found.group(1).upper(), found.group(2)
    try:
        return PublicHolidays(country, subdivision.upper() if subdivision else None)
    except WallClockError as error:
        raise CalendarError(str(error)) from None
