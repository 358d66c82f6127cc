"""Schedule windows as sets of half-open UTC intervals, and a cache that makes queries cheap.

A window (Daily, Weekly or OneShot) is described in wall-clock time; `RecurringWindow` and
`OneShotWindow` turn it into the absolute intervals `[start, end)` it covers. `Timeline` sits
on top: it answers "active at t?" and "next boundary after t" from week-sized chunks of
precomputed intervals, because the controller asks these questions for every Schedule on every
reconcile and the plan asks them thousands of times; converting wall clocks through time zones
on each question would dominate the cost.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from spa.schedule.wallclock import Weekday, local_date, to_instant

__all__ = ["OneShotWindow", "RecurringWindow", "Timeline", "Window"]

Interval = tuple[int, int]

_DAY = timedelta(days=1)
_CHUNK_SECONDS = 7 * 24 * 3600
_MAX_CACHED_CHUNKS = 128
# How far ahead `next_boundary` looks before it concludes there is none: a little over a year,
# so that a window that only exists around a yearly daylight-saving change is still found.
DEFAULT_HORIZON_SECONDS = 400 * 24 * 3600


class Window(Protocol):
    """Something that covers a set of half-open intervals of instants."""

    def intervals(self, low: int, high: int) -> list[Interval]:
        """Non-empty intervals `[start, end)` that overlap `[low, high)`, in time order."""

    def last_instant(self) -> int | None:
        """An instant after which the window has no boundary, or None if it recurs forever."""


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

    def intervals(self, low: int, high: int) -> list[Interval]:
        found: list[Interval] = []
        # A window that starts on local day d ends by the end of day d + 1 (plus at most a
        # daylight-saving shift), so days from two before `low` cover every overlap.
        day = local_date(low, self.zone) - 2 * _DAY
        last_day = local_date(high, self.zone)
        crosses_midnight = self.end <= self.start
        while day <= last_day:
            if self.days is None or Weekday(day.weekday()) in self.days:
                start = to_instant(datetime.combine(day, self.start), self.zone)
                end_day = day + _DAY if crosses_midnight else day
                end = to_instant(datetime.combine(end_day, self.end), self.zone)
                if start < end and end > low and start < high:
                    found.append((start, end))
            day += _DAY
        return found

    def last_instant(self) -> int | None:
        return None

    @property
    def always_active(self) -> bool:
        """True for a 24-hour window on every day: it never starts or ends."""
        return self.start == self.end and (self.days is None or len(self.days) == 7)


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

    def intervals(self, low: int, high: int) -> list[Interval]:
        start, end = self.span
        if start < end and end > low and start < high:
            return [self.span]
        return []

    def last_instant(self) -> int | None:
        return self.span[1]

    def completed(self, instant: int) -> bool:
        """A OneShot is completed from its end instant on."""
        return instant >= self.span[1]


@dataclass(frozen=True, slots=True)
class _Chunk:
    starts: list[int]
    ends: list[int]
    boundaries: list[int]


class Timeline:
    """Fast, cached queries over one window.

    Instants are grouped into week-long chunks; each chunk holds the window's intervals that
    overlap it and its boundaries: the instants where the window starts or stops being active.
    An end that coincides with the next start (a 24-hour window on consecutive days) is not a
    boundary, since the window stays active across it.
    """

    __slots__ = ("_chunks", "window")

    def __init__(self, window: Window) -> None:
        self.window = window
        self._chunks: dict[int, _Chunk] = {}

    def is_active(self, instant: int) -> bool:
        chunk = self._chunk(instant // _CHUNK_SECONDS)
        position = bisect.bisect_right(chunk.starts, instant) - 1
        return position >= 0 and instant < chunk.ends[position]

    def next_boundary(self, instant: int, *, horizon: int = DEFAULT_HORIZON_SECONDS) -> int | None:
        """The first boundary strictly after `instant`, looking at most `horizon` seconds ahead."""
        if self._never_changes(instant):
            return None
        index = instant // _CHUNK_SECONDS
        last_index = (instant + horizon) // _CHUNK_SECONDS
        while index <= last_index:
            boundaries = self._chunk(index).boundaries
            position = bisect.bisect_right(boundaries, instant)
            if position < len(boundaries):
                found = boundaries[position]
                return found if found <= instant + horizon else None
            index += 1
        return None

    def boundaries_between(self, low: int, high: int) -> list[int]:
        """Boundaries in `(low, high]`, in time order."""
        if self._never_changes(low):
            return []
        found: list[int] = []
        for index in range(low // _CHUNK_SECONDS, high // _CHUNK_SECONDS + 1):
            found.extend(b for b in self._chunk(index).boundaries if low < b <= high)
        return found

    def _never_changes(self, instant: int) -> bool:
        if isinstance(self.window, RecurringWindow) and self.window.always_active:
            return True
        last = self.window.last_instant()
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
        # Look a day beyond each edge so that an interval joined to one across the edge is
        # seen as joined; the far ends of the merged runs then lie outside the chunk.
        merged: list[list[int]] = []
        for start, end in self.window.intervals(low - 86400, high + 86400):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        inside = [run for run in merged if run[1] > low and run[0] < high]
        boundaries = sorted(point for run in merged for point in run if low <= point < high)
        return _Chunk(
            starts=[run[0] for run in inside],
            ends=[run[1] for run in inside],
            boundaries=boundaries,
        )
