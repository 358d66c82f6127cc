"""`spa backtest`: the history replayed against Schedules, with the engine of `spa plan`.

The floor at every step of the history is the effective minReplicas `spa plan` computes for
the manifests over that range (holidays, calendars, daylight-saving time and leads included:
the same `build_plan`). Against it, the history's peaks (runs of steps whose need is a peak, as
`spa suggest` defines one) are judged: whether the floor was raised before the demand came and
by how long, or how late; the minutes the need was above the floor (the HPA had to climb), at
peaks that recur and, apart, at one-off peaks no Schedule can hold (those `spa suggest` would
report); the replica-hours the floor added above what was needed (the cost of the Schedules);
and each Schedule's windows that no peak needed. docs/suggest.md, "spa backtest", is the
contract.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from zoneinfo import ZoneInfo

from spa.history.analysis import Settings, suggest_windows
from spa.history.need import Need, local_layout
from spa.history.source import Key
from spa.plan import AutoscalerPlan, Plan, PlanError
from spa.schedule import Occurrence, PublicHolidays, State

__all__ = [
    "AutoscalerBacktest",
    "Backtest",
    "Peak",
    "WindowUse",
    "backtest",
]

_HOUR = 3600


@dataclass(frozen=True, slots=True)
class Peak:
    start: int
    end: int
    highest: float
    floor: int
    """The floor at its start."""
    raised_before: int | None
    """Seconds the floor had been a peak's at its start (None: it was not); for a floor raised
    before the history began, from the history's start."""
    late_by: int | None
    """When the floor was not raised at its start: seconds until it was, within the peak
    (None: never)."""
    shortfall: int
    """Seconds the need was above the floor during it, but at its one-off steps."""
    one_off_shortfall: int
    """Seconds the need was above the floor at its one-off steps (all of them for a one-off
    peak)."""
    one_off: bool
    """A peak that does not recur (most of it one-off steps, as `spa suggest` reports them)."""
    after_gap: bool = False
    """It starts where data resumes after a gap: its demand came in the gap, when is not
    known, and `raised_before` is counted from the gap's end."""


@dataclass(frozen=True, slots=True)
class WindowUse:
    """How many windows of a Schedule the history had, and which no peak needed."""

    schedule: str
    windows: int
    needed: int
    unneeded: tuple[date, ...]
    """The dates of the windows without a peak (and with data)."""

    @property
    def never_needed(self) -> bool:
        return self.windows > 0 and self.needed == 0 and bool(self.unneeded)


@dataclass(slots=True)
class AutoscalerBacktest:
    namespace: str
    name: str
    zone: ZoneInfo
    base: int
    threshold: float
    need: Need
    floor: list[int]
    """The floor at each step of `need`."""
    peaks: list[Peak] = field(default_factory=list)
    shortfall: int = 0
    """Seconds the need was above the floor at recurring peaks."""
    one_off_shortfall: int = 0
    """... and at one-off peaks."""
    added: float = 0.0
    """Replica-hours the floor held above the need (and above the base)."""
    windows: list[WindowUse] = field(default_factory=list)
    short_steps: list[int] = field(default_factory=list)
    """The steps of recurring peaks whose need was above the floor."""
    one_off_steps: list[int] = field(default_factory=list)

    @property
    def key(self) -> Key:
        return self.namespace, self.name

    @property
    def recurring(self) -> list[Peak]:
        return [peak for peak in self.peaks if not peak.one_off]

    @property
    def held(self) -> int:
        """Recurring peaks with the floor raised at their start and no shortfall."""
        return sum(
            1 for peak in self.recurring if peak.raised_before is not None and not peak.shortfall
        )


@dataclass(slots=True)
class Backtest:
    start: int
    until: int
    step: int
    weeks: int
    label: str
    """What was replayed, as given (`deploy/`, `git:main`)."""
    source: str
    query: str
    autoscalers: list[AutoscalerBacktest] = field(default_factory=list)
    plan_errors: list[PlanError] = field(default_factory=list)
    errors: list[tuple[Key, str]] = field(default_factory=list)
    """Autoscalers of the manifests without a usable history."""


def backtest(
    plan: Plan,
    needs: Mapping[Key, Need],
    *,
    label: str,
    source: str,
    query: str,
    weeks: int,
    step: int,
    zone_of: Callable[[AutoscalerPlan], ZoneInfo],
    holidays_of: Callable[[ZoneInfo], PublicHolidays | None],
    settings: Settings,
) -> Backtest:
    """Each autoscaler of `plan` (planned over the history's range) replayed on its need."""
    result = Backtest(
        start=plan.at, until=plan.until, step=step, weeks=weeks, label=label, source=source,
        query=query, plan_errors=list(plan.errors),
    )  # fmt: skip
    for autoscaler in plan.autoscalers:
        need = needs.get((autoscaler.namespace, autoscaler.name))
        if need is None:
            continue
        zone = zone_of(autoscaler)
        result.autoscalers.append(
            _replay(autoscaler, need, zone=zone, holidays=holidays_of(zone), settings=settings)
        )
    return result


def _replay(
    autoscaler: AutoscalerPlan,
    need: Need,
    *,
    zone: ZoneInfo,
    holidays: PublicHolidays | None,
    settings: Settings,
) -> AutoscalerBacktest:
    base = (autoscaler.base.min_replicas if autoscaler.base is not None else None) or 1
    steps: list[tuple[int, State]] = [(need.start, autoscaler.state), *autoscaler.transitions]
    floor = _floor_by_step(steps, need)
    week = local_layout(start=need.start, step=need.step, count=len(need.values), zone=zone)
    analysis = suggest_windows(need, week, base=base, settings=replace(settings, holidays=holidays))
    threshold = analysis.threshold
    one_off = [False] * len(need.values)
    for spike in analysis.spikes:
        first = max(0, (spike.start - need.start) // need.step)
        last = min(len(need.values), (spike.end - need.start) // need.step)
        for index in range(first, last):
            one_off[index] = True
    result = AutoscalerBacktest(
        namespace=autoscaler.namespace, name=autoscaler.name, zone=zone, base=base,
        threshold=threshold, need=need, floor=floor,
    )  # fmt: skip
    rises = _rises(steps, threshold)
    index = 0
    values = need.values
    while index < len(values):
        value = values[index]
        if value is None or value < threshold:
            index += 1
            continue
        end = _peak_end(values, index, threshold)
        result.peaks.append(_peak(need, floor, one_off, rises, index, end, threshold, result))
        index = end
    for position, value in enumerate(values):
        if value is not None:
            result.added += max(0.0, floor[position] - max(value, base)) * need.step / _HOUR
    result.windows = [
        _use(schedule.name, schedule.timeline.window.occurrences(need.start, need.end), need,
             threshold)
        for schedule in autoscaler.schedules
    ]  # fmt: skip
    return result


def _peak_end(values: list[float | None], first: int, threshold: float) -> int:
    """The step after the peak that starts at `first`. A gap in the data does not end it when
    the first step after the gap is a peak too: the demand did not start again after the gap,
    the scrapes did (docs/suggest.md, "spa backtest")."""
    end = first
    while end < len(values):
        value = values[end]
        if value is None:
            resume = end
            while resume < len(values) and values[resume] is None:
                resume += 1
            after = values[resume] if resume < len(values) else None
            if after is None or after < threshold:
                break
            end = resume
        elif value < threshold:
            break
        end += 1
    return end


def _floor_by_step(steps: list[tuple[int, State]], need: Need) -> list[int]:
    """The effective minReplicas at the start of each step."""
    floor: list[int] = []
    position = 0
    for index in range(len(need.values)):
        instant = need.instant(index)
        while position + 1 < len(steps) and steps[position + 1][0] <= instant:
            position += 1
        floor.append(steps[position][1].min_replicas)
    return floor


def _rises(steps: list[tuple[int, State]], threshold: float) -> list[int]:
    """The instants the floor rose to a peak's level (the first, if already there)."""
    rises: list[int] = []
    previous = None
    for instant, state in steps:
        high = state.min_replicas >= threshold
        if high and not previous:
            rises.append(instant)
        previous = high
    return rises


def _peak(
    need: Need,
    floor: list[int],
    one_off: list[bool],
    rises: list[int],
    first: int,
    end: int,
    threshold: float,
    result: AutoscalerBacktest,
) -> Peak:
    values = need.values
    start = need.instant(first)
    own = [index for index in range(first, end) if not one_off[index]]
    is_one_off = len(own) * 2 < end - first
    short = [
        index
        for index in range(first, end)
        if (value := values[index]) is not None and value > floor[index]
    ]
    for index in short:
        if one_off[index] or is_one_off:
            result.one_off_steps.append(index)
        else:
            result.short_steps.append(index)
    recurring_short = [i for i in short if not (one_off[i] or is_one_off)]
    result.shortfall += len(recurring_short) * need.step
    result.one_off_shortfall += (len(short) - len(recurring_short)) * need.step
    raised_before: int | None = None
    late_by: int | None = None
    if floor[first] >= threshold:
        since = (
            rises[bisect.bisect_right(rises, start) - 1] if rises and rises[0] <= start else start
        )
        raised_before = start - since
    else:
        later = next((i for i in range(first, end) if floor[i] >= threshold), None)
        late_by = None if later is None else need.instant(later) - start
    return Peak(
        start=start,
        end=need.instant(end),
        highest=max(v for v in values[first:end] if v is not None),
        floor=floor[first],
        raised_before=raised_before,
        late_by=late_by,
        shortfall=len(recurring_short) * need.step,
        one_off_shortfall=(len(short) - len(recurring_short)) * need.step,
        one_off=is_one_off,
        after_gap=first > 0 and values[first - 1] is None,
    )


def _use(name: str, occurrences: list[Occurrence], need: Need, threshold: float) -> WindowUse:
    needed = 0
    unneeded: list[date] = []
    count = 0
    for occurrence in occurrences:
        start, end = max(occurrence.start, need.start), min(occurrence.end, need.end)
        if end <= start:
            continue
        count += 1
        first = (start - need.start) // need.step
        last = (end - need.start + need.step - 1) // need.step
        seen = [v for v in need.values[first:last] if v is not None]
        if any(v >= threshold for v in seen):
            needed += 1
        elif seen:
            unneeded.append(occurrence.day)
    return WindowUse(schedule=name, windows=count, needed=needed, unneeded=tuple(unneeded))
