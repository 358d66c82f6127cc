"""Public holidays of a country (or one of its subdivisions), from the `holidays` library.

The library computes each year's holidays from rules kept in its package (no network, no
data files of ours); the version is pinned in setup.cfg, so a given manifest skips the same
days on every machine until the pin moves. "Public holidays" are the library's default
category, observed days included (a holiday on a Sunday that is observed on Monday makes
Monday a holiday too). Names are in US English where the library has a translation for the
country, so that `spa plan` reads the same for every country, else in its default language.

The library is imported when a Schedule first uses holidays: importing it costs tenths of a
second that nobody else should pay, and naming the countries reads its registry's table
rather than loading every country.
"""

from __future__ import annotations

import difflib
import functools
import re
from datetime import date
from typing import Any

from spa.schedule.wallclock import WallClockError

__all__ = ["PublicHolidays", "UnknownSubdivision", "country_code", "holiday_countries"]

_LANGUAGE = "en_US"


class UnknownSubdivision(WallClockError):
    """The country is known, the subdivision is not (the message names the valid ones)."""


@functools.cache
def holiday_countries() -> tuple[str, ...]:
    """Every supported ISO 3166-1 alpha-2 country code, sorted."""
    from holidays.registry import COUNTRIES

    # The registry's table (class name, alpha-2 code, aliases per country) is what the library
    # resolves codes with, and reading it imports no country: list_supported_countries()
    # imports all 250 of them, seconds on a busy machine for one misspelt code.
    return tuple(sorted({entry[1] for entry in COUNTRIES.values()}))


def country_code(text: str) -> str | None:
    """The alpha-2 code of the country `text` names otherwise: by its alpha-3 code (`USA`,
    `DEU`), another code the library knows it by (`UK`), or its English name without spaces
    (`Germany`, `United States`); None for anything else."""
    from holidays.registry import COUNTRIES

    wanted = re.sub(r"[\s_-]", "", text).casefold()
    for entry in COUNTRIES.values():
        name, code, *others = entry
        if wanted in {name.casefold(), *(other.casefold() for other in others)}:
            return str(code)
    return None


class PublicHolidays:
    """The public holidays of `country` (alpha-2) and optional `subdivision`, by date.

    Raises WallClockError, naming the valid choices, for an unknown country or subdivision.
    Lookups are cached per year, so asking about every day of a year costs one computation.
    """

    __slots__ = ("_by_year", "_library", "country", "subdivision")

    def __init__(self, country: str, subdivision: str | None = None) -> None:
        self.country = country
        self.subdivision = subdivision
        self._library = _calendar_class(country)
        if subdivision is not None and subdivision not in self._library.subdivisions:
            choices = tuple(self._library.subdivisions)
            meant = _subdivision_meant(self._library, subdivision)
            if meant is not None:
                raise UnknownSubdivision(
                    f"unknown subdivision '{subdivision}' of {country}; did you mean '{meant}'?"
                )
            if choices:
                raise UnknownSubdivision(
                    f"unknown subdivision '{subdivision}' of {country}: "
                    f"{_one_of(subdivision, choices, f'subdivision codes of {country}')}"
                )
            raise UnknownSubdivision(f"{country} has no subdivisions: leave subdivision unset")
        self._by_year: dict[int, dict[date, str]] = {}

    def name(self, day: date) -> str | None:
        """The holiday's name if `day` is a public holiday, else None."""
        year = self._by_year.get(day.year)
        if year is None:
            year = self._by_year[day.year] = self._compute(day.year)
        return year.get(day)

    def _compute(self, year: int) -> dict[date, str]:
        language = _LANGUAGE if _LANGUAGE in self._library.supported_languages else None
        computed = self._library(subdiv=self.subdivision, years=year, language=language)
        return dict(computed.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicHolidays) and (self.country, self.subdivision) == (
            other.country,
            other.subdivision,
        )

    def __hash__(self) -> int:
        return hash((self.country, self.subdivision))

    def __repr__(self) -> str:
        where = self.country if self.subdivision is None else f"{self.country}-{self.subdivision}"
        return f"PublicHolidays({where})"


def _subdivision_meant(library: Any, written: str) -> str | None:
    """The subdivision code `written` means: the code in other case (`by` for BY), or the code
    of the name the library knows it by (`California` for CA, `England` for ENG)."""
    folded = written.strip().casefold()
    for code in library.subdivisions:
        if code.casefold() == folded:
            return str(code)
    aliases: dict[str, str] = getattr(library, "subdivisions_aliases", None) or {}
    for name, code in aliases.items():
        if name.casefold() == folded:
            return str(code)
    return None


def _calendar_class(country: str) -> Any:
    import holidays

    # The registry resolves one country without importing all of them; only an unknown code
    # pays for the full listing, to name the choices.
    if len(country) == 2 and country.isupper():
        try:
            return type(holidays.country_holidays(country))
        except NotImplementedError:
            pass
    known = holiday_countries()
    close = difflib.get_close_matches(country.upper(), known, n=3)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    if re.fullmatch("[A-Z]{2}", country) is None:
        # The form is what the CRD checks too; only a well-formed code can be unknown.
        raise WallClockError(
            f"'{country}' is not a country code: write the two capital letters of its "
            f"ISO 3166-1 alpha-2 code{hint}"
        )
    raise WallClockError(
        f"unknown country '{country}': "
        f"{_one_of(country, known, 'ISO 3166-1 alpha-2 codes the holidays library knows')}"
    )


# An error is one line of `spa plan` and of a status message: a list longer than this is cut
# to the closest names (docs/schedules.md, "Calendars", lists where to find them all).
_MOST_LISTED_CHARACTERS = 160


def _one_of(value: str, choices: tuple[str, ...], what: str) -> str:
    listed = ", ".join(choices)
    if len(listed) <= _MOST_LISTED_CHARACTERS:
        return f"use one of {listed}"
    close = difflib.get_close_matches(value.upper(), choices, n=5, cutoff=0.0)
    return f"use one of the {len(choices)} {what}, such as {', '.join(close)}"
