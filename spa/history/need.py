"""The replicas an autoscaler needed, as a regular grid of steps, and that grid laid out by
local day.

Everything `spa suggest` and `spa backtest` decide is decided on this grid (docs/suggest.md,
"How it decides"): one value per step (5 minutes by default), the most replicas needed during
that step, None where the history has no data. Recurring peaks are peaks at the same wall-clock
time on the same weekday, so the grid is also laid out by local date and time of day in the
autoscaler's zone: a day of 23 or 25 hours (a change of clocks) keeps its wall-clock slots,
the hour that is skipped has none, and the hour that repeats keeps the larger of its two values.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from spa.api.hpa import INT32_MAX
from spa.schedule import to_instant

__all__ = [
    "DAY_SECONDS",
    "Need",
    "NeedError",
    "Week",
    "counter_resets",
    "gaps",
    "local_layout",
    "needed_replicas",
]

DAY_SECONDS = 86400


class NeedError(Exception):
    """A series that cannot be read as the replicas an autoscaler needed (the message says
    why, for the user)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Need:
    """The most replicas needed in each step `[start + i * step, start + (i + 1) * step)`."""

    start: int
    step: int
    values: list[float | None]

    @property
    def end(self) -> int:
        return self.start + len(self.values) * self.step

    def instant(self, index: int) -> int:
        return self.start + index * self.step


def needed_replicas(
    points: Iterable[tuple[int, float]],
    *,
    start: int,
    step: int,
    count: int,
    per_pod: float | None = None,
) -> Need:
    """The grid of `count` steps from `start` made of `points`, (instant, value) pairs where
    the value at `t` covers the step that ends at `t` (`max_over_time(x[step])` evaluated at
    `t`: docs/suggest.md, "Reading the history"). With `per_pod`, each value is a load and the
    replicas needed are `ceil(value / per_pod)`. A value that is not finite is no data;
    NeedError for a negative one (no count of replicas or load is)."""
    values: list[float | None] = [None] * count
    for instant, value in points:
        index = (instant - step - start) // step
        if not 0 <= index < count:
            continue
        if math.isnan(value) or math.isinf(value):
            continue
        if value < 0:
            when = datetime.fromtimestamp(instant, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            raise NeedError(
                f"a negative value ({value:g}) at {when}: neither replicas nor a load can be "
                "negative"
            )
        if (value / per_pod if per_pod is not None else value) > INT32_MAX:
            # Not a count of replicas any Kubernetes object holds, and a number the analysis
            # would carry as an integer too large for a float.
            when = datetime.fromtimestamp(instant, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            hint = (
                "is --per-pod what one replica serves?"
                if per_pod is not None
                else "if the query is a load, give what one replica serves with --per-pod"
            )
            raise NeedError(
                f"a value of {value:g} at {when} needs more replicas than Kubernetes counts "
                f"({INT32_MAX}): {hint}"
            )
        # Whole numbers as ints: the small ones are shared objects, and a fleet's history is
        # millions of steps.
        needed: float = (
            math.ceil(value / per_pod - 1e-9)
            if per_pod is not None
            else int(value)
            if float(value).is_integer()
            else value
        )
        previous = values[index]
        values[index] = needed if previous is None else max(previous, needed)
    return Need(start=start, step=step, values=values)


def gaps(need: Need, *, shortest: int = 2) -> list[tuple[int, int]]:
    """The runs of at least `shortest` steps without data, as (start, end) instants."""
    found: list[tuple[int, int]] = []
    run_start: int | None = None
    for index, value in enumerate([*need.values, 0.0]):
        if value is None:
            if run_start is None:
                run_start = index
        elif run_start is not None:
            if index - run_start >= shortest:
                found.append((need.instant(run_start), need.instant(index)))
            run_start = None
    return found


def counter_resets(need: Need) -> int | None:
    """How many times the series fell back, if it looks like a counter (it only grows, apart
    from falls back towards zero at restarts), else None. A counter of requests is a total
    since the process started, not a load: its rate is (docs/suggest.md, "Queries")."""
    known = [value for value in need.values if value is not None]
    if len(known) < 24:
        return None
    rises = falls = resets = 0
    for before, after in itertools.pairwise(known):
        if after > before:
            rises += 1
        elif after < before:
            falls += 1
            if after <= before / 2:
                resets += 1
    pairs = len(known) - 1
    if rises >= pairs / 2 and falls <= max(1, pairs // 50) and known[-1] > 0:
        return resets
    return None


@dataclass(frozen=True, slots=True)
class Week:
    """The grid laid out by local day in one zone: `days[d]` is the local date of day `d`
    and `slots[d][s]` the step index (or indices) whose start falls in slot `s` of that day."""

    zone: ZoneInfo
    step: int
    days: list[date]
    slots: list[list[tuple[int, ...]]]

    @property
    def per_day(self) -> int:
        return DAY_SECONDS // self.step

    def values(self, need: Need) -> list[list[float | None]]:
        """`need` by day and slot (None: no data, or a wall-clock time that did not exist)."""
        table: list[list[float | None]] = []
        for day in self.slots:
            row: list[float | None] = []
            for indices in day:
                best: float | None = None
                for index in indices:
                    value = need.values[index]
                    if value is not None and (best is None or value > best):
                        best = value
                row.append(best)
            table.append(row)
        return table

    def instant(self, day: int, slot: int) -> int:
        """The first instant of slot `slot` of day `day` (by the engine's rules for a
        wall-clock time that is skipped or repeated: spa/schedule/wallclock.py)."""
        minutes = slot * self.step // 60
        local = datetime.combine(self.days[day], datetime.min.time()) + timedelta(minutes=minutes)
        return to_instant(local, self.zone)


def local_layout(*, start: int, step: int, count: int, zone: ZoneInfo) -> Week:
    """The local-day layout of a grid (the same for every autoscaler with the same range and
    zone, so computed once per zone: 500 autoscalers share it)."""
    return _layout(start, step, count, zone)


@functools.lru_cache(maxsize=64)
def _layout(start: int, step: int, count: int, zone: ZoneInfo) -> Week:
    per_day = DAY_SECONDS // step
    days: list[date] = []
    slots: list[list[list[int]]] = []
    position: dict[date, int] = {}
    for index in range(count):
        local = datetime.fromtimestamp(start + index * step, zone)
        day = local.date()
        where = position.get(day)
        if where is None:
            where = position[day] = len(days)
            days.append(day)
            slots.append([[] for _ in range(per_day)])
        slot = (local.hour * 3600 + local.minute * 60 + local.second) // step
        slots[where][slot].append(index)
    return Week(
        zone=zone,
        step=step,
        days=days,
        slots=[[tuple(indices) for indices in day] for day in slots],
    )
