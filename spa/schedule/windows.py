"""Schedule windows as occurrences, and a cache that turns them into fast UTC queries.

A window (Daily, Weekly, WeeklySpan, Cron or OneShot) is described in wall-clock time. Each
kind turns its description into **occurrences**: one window opening, with the instants it
covers, `[start, end)`, and the calendar date it belongs to (the date of its start as written,
in the Schedule's zone). Calendar rules (bounds, excluded dates, holidays, spa/schedule/
calendar.py) judge that date, never the instants, so a later feature may move `start` (a lead
time that opens the window earlier) without changing which day an occurrence is on.

`Timeline` sits on top: it answers "active at t?" and "next boundary after t" from week-sized
chunks of precomputed, merged intervals, because the controller asks these questions for
every Schedule on every reconcile and the plan asks them thousands of times; converting wall
clocks through time zones on each question would dominate the cost.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from spa.schedule.wallclock import (
    BEYOND_CALENDAR,
    FIRST_INSTANT,
    LAST_INSTANT,
    Weekday,
    local_date,
    shift_date,
    to_instant,
    wall_instant,
)

__all__ = [
    "Occurrence",
    "OneShotWindow",
    "RecurringWindow",
    "Timeline",
    "WeeklySpanWindow",
    "Window",
]

Interval = tuple[int, int]

_CHUNK_SECONDS = 7 * 24 * 3600
_MAX_CACHED_CHUNKS = 128
# How far ahead `next_boundary` looks before it concludes there is none: 41 years (of 366
# days, so at least 41 calendar years). Every Daily, Weekly and WeeklySpan window starts
# within a week, but a Cron expression may match rarely: the longest gap between two matches
# of any 5-field expression is 40 years, 14,609 days (Feb 29 on a given weekday: `0 0 * 2
# 2#5` matches on 2084-02-29, then not before 2124-02-29, as 2100 is no leap year), computed
# over the 400-year Gregorian cycle by tests/unit/schedule/test_cron_horizon.py. A OneShot (or a
# `startDate`) further ahead, and starts the calendar excludes, are beyond any such bound.
# Nor does it look past LAST_INSTANT, the end of the calendar (docs/schedules.md).
DEFAULT_HORIZON_YEARS = 41
DEFAULT_HORIZON_SECONDS = DEFAULT_HORIZON_YEARS * 366 * 24 * 3600
# `next_boundary` skips a stretch without occurrences by asking the window for up to this
# many chunks of them at once, rather than building every empty chunk of the horizon.
_MAX_SKIP_CHUNKS = 8


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One opening of a window: active on `[start, end)`, belonging to the local date `day`.

    `day` is the date of the start as written in the Schedule's zone (for a start in a skipped
    hour, the date written, not the date of the jump). It is what calendar rules judge; the
    instants are what the engine schedules.
    """

    day: date
    start: int
    end: int


class Window(Protocol):
    """Something that opens a set of occurrences, written in the wall clock of `zone`."""

    @property
    def zone(self) -> ZoneInfo:
        """The zone whose dates calendar rules judge."""

    def occurrences(self, low: int, high: int) -> list[Occurrence]:
        """Every non-empty occurrence that overlaps `[low, high)` and the engine's instants
        (FIRST_INSTANT to LAST_INSTANT, spa/schedule/wallclock.py), ordered by start. One that
        ends after the last date of the calendar ends at BEYOND_CALENDAR."""

    def last_instant(self) -> int | None:
        """An instant after which the window has no boundary, or None if it recurs forever."""

    def completed(self, instant: int) -> bool:
        """True once the window will never be active again (a OneShot's end has passed)."""

    @property
    def always_active(self) -> bool:
        """True for a window that is active at every instant: it never starts or ends."""


@dataclass(frozen=True, slots=True)
class RecurringWindow:
    """Daily (`days` is None) or Weekly: from `start` to `end` wall-clock time on each day.

    An `end` at or before `start` ends on the following day, so equal times make 24 hours. A
    window belongs to the day it starts on.
    """

    start: time
    end: time
    zone: ZoneInfo
    days: frozenset[Weekday] | None = None

    def occurrences(self, low: int, high: int) -> list[Occurrence]:
        found: list[Occurrence] = []
        # A window that starts on local day d ends by the end of day d + 1 (plus at most a
        # daylight-saving shift), so days from two before `low` cover every overlap.
        days = local_days(low, high, self.zone, before=2)
        if days is None:
            return found
        low, high = max(low, FIRST_INSTANT), min(high, LAST_INSTANT + 1)
        crosses_midnight = self.end <= self.start
        for day in dates_between(*days):
            if self.days is None or Weekday(day.weekday()) in self.days:
                start = wall_instant(day, self.start, self.zone)
                end = _end_instant(day, 1 if crosses_midnight else 0, self.end, self.zone)
                if start is not None and start < end and end > low and start < high:
                    found.append(Occurrence(day, start, end))
        return found

    def last_instant(self) -> int | None:
        return None

    def completed(self, instant: int) -> bool:
        return False

    @property
    def always_active(self) -> bool:
        return self.start == self.end and (self.days is None or len(self.days) == 7)


@dataclass(frozen=True, slots=True)
class WeeklySpanWindow:
    """One continuous window a week: from `start_day` at `start` to `end_day` at `end`.

    The span ends at the first `end_day` `end` after its start, so Friday 18:00 to Monday
    08:00 lasts 62 hours, Monday 18:00 to Monday 08:00 six days and 14 hours, and an equal day
    and time a whole week (back to back: always active).
    """

    start_day: Weekday
    start: time
    end_day: Weekday
    end: time
    zone: ZoneInfo
    span_days: int = field(init=False)

    def __post_init__(self) -> None:
        days = (self.end_day - self.start_day) % 7
        if days == 0 and self.end <= self.start:
            days = 7
        object.__setattr__(self, "span_days", days)

    def occurrences(self, low: int, high: int) -> list[Occurrence]:
        found: list[Occurrence] = []
        # A span lasts at most 7 days and an hour, so starts from 8 days before `low` on
        # cover every overlap.
        days = local_days(low, high, self.zone, before=8)
        if days is None:
            return found
        low, high = max(low, FIRST_INSTANT), min(high, LAST_INSTANT + 1)
        earliest, last_day = days
        first = shift_date(earliest, (self.start_day - earliest.weekday()) % 7)
        if first is None:
            return found
        for day in dates_between(first, last_day, step=7):
            start = wall_instant(day, self.start, self.zone)
            end = _end_instant(day, self.span_days, self.end, self.zone)
            if start is not None and start < end and end > low and start < high:
                found.append(Occurrence(day, start, end))
        return found

    def last_instant(self) -> int | None:
        return None

    def completed(self, instant: int) -> bool:
        return False

    @property
    def always_active(self) -> bool:
        return self.start_day == self.end_day and self.start == self.end


@dataclass(frozen=True, slots=True)
class OneShotWindow:
    """Once, from the wall-clock `start` to `end` (naive local datetimes) in `zone`."""

    start: datetime
    end: datetime
    zone: ZoneInfo
    span: Interval = field(init=False)

    def __post_init__(self) -> None:
        span = (to_instant(self.start, self.zone), to_instant(self.end, self.zone))
        object.__setattr__(self, "span", span)

    def occurrences(self, low: int, high: int) -> list[Occurrence]:
        start, end = self.span
        if start < end and end > low and start < high:
            return [Occurrence(self.start.date(), start, end)]
        return []

    def last_instant(self) -> int | None:
        return self.span[1]

    def completed(self, instant: int) -> bool:
        """A OneShot is completed from its end instant on."""
        return instant >= self.span[1]

    @property
    def always_active(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class _Chunk:
    # Whether the window is active just before the chunk begins, and its boundaries in the
    # chunk: the merged intervals are disjoint and do not touch, so the boundaries alternate
    # between a start and an end, and the state at an instant is `active` flipped once per
    # boundary up to it. A tuple: exactly its size (a list over-allocates). The intervals'
    # starts and ends as well were 190 bytes more a chunk, and a Timeline is kept for each
    # Schedule of the fleet (docs/performance.md, "2026-11-26: memory per SPA (issue 24)",
    # "Compact caches").
    active: bool
    boundaries: tuple[int, ...]

    @property
    def empty(self) -> bool:
        """Whether no interval of the window overlaps the chunk."""
        return not self.boundaries and not self.active


class Timeline:
    """Fast, cached queries over one window.

    Instants are grouped into week-long chunks; each chunk holds the window's merged intervals
    that overlap it and its boundaries: the instants where the window starts or stops being
    active. Occurrences that overlap or touch are one interval (a 24-hour window on
    consecutive days, a cron window that opens again before it closes): the window stays
    active across them, so where one ends and the next begins is no boundary.
    """

    __slots__ = ("_always_active", "_chunks", "_last_instant", "_quiet", "window")

    def __init__(self, window: Window) -> None:
        self.window = window
        self._chunks: dict[int, _Chunk] = {}
        # Windows are immutable: asked once, not on every query (a calendar's are not free).
        self._always_active = window.always_active
        self._last_instant = window.last_instant()
        # What the last `next_boundary` learnt: no boundary in `(low, high]`, and the first
        # one after `high` if it was found. The controller asks again on every reconcile, a
        # little later each time; a rare window must not be searched for decades every time.
        self._quiet: tuple[int, int, int | None] = (0, -1, None)

    def is_active(self, instant: int) -> bool:
        # Outside the engine's instants, the state at the nearest of them holds (no boundary
        # is found beyond them: docs/schedules.md, "The end of the calendar").
        if instant > LAST_INSTANT:
            instant = LAST_INSTANT
        elif instant < FIRST_INSTANT:
            instant = FIRST_INSTANT
        chunk = self._chunk(instant // _CHUNK_SECONDS)
        # A start is active from its instant on, an end inactive: count those up to it.
        return bisect.bisect_right(chunk.boundaries, instant) & 1 != chunk.active

    def next_boundary(self, instant: int, *, horizon: int = DEFAULT_HORIZON_SECONDS) -> int | None:
        """The first boundary strictly after `instant`, looking at most `horizon` seconds ahead
        and not beyond LAST_INSTANT, where the search ends (docs/schedules.md, "The end of
        the calendar"); before FIRST_INSTANT, the first boundary after that."""
        instant = max(instant, FIRST_INSTANT)
        limit = min(instant + horizon, LAST_INSTANT)
        if limit <= instant or self._never_changes(instant):
            return None
        low, high, after = self._quiet
        if low <= instant <= high:
            # Nothing in `(instant, high]`: the answer is the first boundary after `high`.
            if after is not None:
                return after if after <= limit else None
            if limit <= high:
                return None
            cursor = high
        else:
            low = cursor = instant
        found = self._first_boundary(cursor, limit)
        self._quiet = (low, limit, None) if found is None else (low, found - 1, found)
        return found

    def _first_boundary(self, cursor: int, limit: int) -> int | None:
        """The first boundary in `(cursor, limit]`, if any."""
        index = first_index = cursor // _CHUNK_SECONDS
        last_index = limit // _CHUNK_SECONDS
        while index <= last_index:
            if index - first_index < _MAX_CACHED_CHUNKS // 2:
                chunk = self._chunk(index)
            else:
                # Far ahead: looked at once, not cached, so that a long search does not push
                # out the chunks around now that `is_active` asks for.
                chunk = self._chunks.get(index) or self._build_chunk(index)
            position = bisect.bisect_right(chunk.boundaries, cursor)
            if position < len(chunk.boundaries):
                found = chunk.boundaries[position]
                return found if found <= limit else None
            index += 1
            if chunk.empty:
                index = self._next_busy_chunk(index, last_index)
        return None

    def _next_busy_chunk(self, index: int, last_index: int) -> int:
        """The first chunk from `index` that may hold a boundary, after an empty chunk: runs
        of empty chunks (a yearly or rarer Cron window) are skipped a few at a time."""
        span = 1
        while index <= last_index:
            span = min(2 * span, _MAX_SKIP_CHUNKS)
            low = index * _CHUNK_SECONDS
            high = low + span * _CHUNK_SECONDS
            # A boundary in `[low, high)` is an end of an occurrence that overlaps this.
            occurrences = self.window.occurrences(low - 86400, high + 86400)
            if occurrences:
                return max(index, min(o.start for o in occurrences) // _CHUNK_SECONDS)
            index += span
        return index

    def boundaries_between(self, low: int, high: int) -> list[int]:
        """Boundaries in `(low, high]`, in time order (none outside the engine's instants)."""
        low, high = max(low, FIRST_INSTANT), min(high, LAST_INSTANT)
        if low >= high or self._never_changes(low):
            return []
        found: list[int] = []
        for index in range(low // _CHUNK_SECONDS, high // _CHUNK_SECONDS + 1):
            found.extend(b for b in self._chunk(index).boundaries if low < b <= high)
        return found

    def _never_changes(self, instant: int) -> bool:
        if self._always_active:
            return True
        last = self._last_instant
        return last is not None and instant >= last

    def _chunk(self, index: int) -> _Chunk:
        chunk = self._chunks.get(index)
        if chunk is None:
            if len(self._chunks) >= _MAX_CACHED_CHUNKS:
                self._chunks.clear()
            chunk = self._chunks[index] = self._build_chunk(index)
        return chunk

    def _build_chunk(self, index: int) -> _Chunk:
        low = index * _CHUNK_SECONDS
        high = low + _CHUNK_SECONDS
        # Take every occurrence that overlaps a day beyond each edge, so that an interval
        # joined to one across the edge is seen as joined. A merged run may reach beyond what
        # was fetched (occurrences that chain back for weeks), but its part inside the chunk
        # and its ends inside the chunk are exact, which is all the chunk keeps.
        merged: list[list[int]] = []
        for occurrence in sorted(self.window.occurrences(low - 86400, high + 86400), key=_by_start):
            start, end = occurrence.start, occurrence.end
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        boundaries = sorted(point for run in merged for point in run if low <= point < high)
        # Active just before `low`: an interval that began before it and ends at it or later
        # (one that chains back beyond what was fetched still began before `low - 86400`).
        active = any(start < low <= end for start, end in merged)
        return _Chunk(active=active, boundaries=tuple(boundaries))


def _by_start(occurrence: Occurrence) -> int:
    return occurrence.start


def local_days(low: int, high: int, zone: ZoneInfo, *, before: int) -> tuple[date, date] | None:
    """The dates in `zone` on which an occurrence that overlaps `[low, high)` may start, for a
    window whose occurrences last less than `before` days: from `before` days before the date
    of `low` to the date of `high`, both within the engine's instants (FIRST_INSTANT to
    LAST_INSTANT); None when `[low, high)` lies outside them."""
    low, high = max(low, FIRST_INSTANT), min(high, LAST_INSTANT + 1)
    if low >= high:
        return None
    first = shift_date(local_date(low, zone), -before) or date.min
    return first, local_date(high, zone)


def dates_between(first: date, last: date, *, step: int = 1) -> Iterator[date]:
    """`first`, then every `step` days up to `last`, stopping at the end of the calendar."""
    delta = timedelta(days=step)
    day = first
    try:
        while day <= last:
            yield day
            day += delta
    except OverflowError:
        return


def _end_instant(day: date, days: int, clock: time, zone: ZoneInfo) -> int:
    """The instant of `clock` `days` days after `day`, the end of an occurrence of `day`;
    BEYOND_CALENDAR when that is after the calendar's last date."""
    end_day = day if days == 0 else shift_date(day, days)
    end = None if end_day is None else wall_instant(end_day, clock, zone)
    return BEYOND_CALENDAR if end is None else end
