"""From the replicas an autoscaler needed to the few windows that would have held its floor.

The rules are docs/suggest.md, "How it decides"; in short:

1. The history is laid out by weekday and wall-clock slot in the autoscaler's zone
   (spa/history/need.py). The *quiet level* is what the HPA held at least a quarter of the
   time (never below its minReplicas); a *peak* is a need at least `min_increase` above it.
2. A slot of a weekday *recurs* when most of the weeks (`recurrence`, 3 of 4 by default) had a
   peak there; the level it recurs at is the need those weeks reached. One-off peaks are
   reported, not scheduled.
3. Each run of recurring slots is covered by a step function fitted by dynamic programming:
   it never goes below the recurring level and trades the replicas it adds against the
   number of windows it takes, so a climb is held by its window rather than by windows of
   its own, while a lunch peak on top of office hours becomes a window of its own.
4. The steps become nested windows (one per level and run), and the windows of different
   weekdays at the same times and level are joined: all seven days make a Daily window,
   consecutive days a Weekly one, a window of a day or more a WeeklySpan.
5. Each window's minReplicas is a high quantile (`quantile`) of what was needed in the slots
   it alone holds, over all the weeks it came from; its leadTime is how long the need took to
   climb to that level at its starts, to the end of the step that reached it (so at least one
   step).
6. A day on which a window's peak did not come (a dip) is left out and the windows found
   again; the dips that the country's public holidays explain are proposed as `holidays`
   (or, when other holidays had the peak, as `excludeDates` of the next year's same
   holidays).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

from spa.history.need import Need, Week
from spa.schedule import PublicHolidays

__all__ = [
    "Dip",
    "HolidayProposal",
    "Settings",
    "Spike",
    "SuggestedWindow",
    "Suggestion",
    "WindowKind",
    "suggest_windows",
]

WEEKDAYS = 7
_CAME = 0.5
"""A window's peak came on a day when at least this share of its slots (with data) reached
half its height."""
_DIPPED = 0.2
"""... and did not come (a dip) when fewer than this share did."""
_CLIMBED = 0.9
"""The climb of a start ends at the first step that reaches this share of the level."""


class WindowKind:
    DAILY = "Daily"
    WEEKLY = "Weekly"
    WEEKLY_SPAN = "WeeklySpan"


@dataclass(frozen=True, slots=True)
class Settings:
    """The knobs of the analysis; their flags and defaults are docs/suggest.md's."""

    quantile: float = 0.95
    recurrence: float = 0.75
    min_increase: int | None = None
    """Replicas above the quiet level that make a peak; None: max(2, 20 % of the level)."""
    min_steps: int = 2
    """A run of recurring steps shorter than this is not a window."""
    bridge: int = 1800
    """Seconds: recurring runs this close are covered together (the cover decides whether
    the gap gets a window)."""
    tolerance: int = 900
    """Seconds: windows of different weekdays whose bounds differ by at most this are one."""
    holidays: PublicHolidays | None = None


@dataclass(frozen=True, slots=True)
class Dip:
    """A day on which a window's peak did not come, and the public holiday that explains it."""

    day: date
    holiday: str | None


@dataclass(frozen=True, slots=True)
class HolidayProposal:
    """What the window should skip: `holidays` of a country, or `exclude_dates`."""

    country: str
    subdivision: str | None
    exclude_dates: tuple[date, ...] = ()
    """Empty: skip the country's holidays (`holidays`); else these dates (`excludeDates`),
    because other holidays had the peak."""
    explained: tuple[Dip, ...] = ()
    kept: tuple[tuple[date, str], ...] = ()
    """Holidays of the history on which the peak came anyway."""


@dataclass(frozen=True, slots=True)
class SuggestedWindow:
    kind: str
    days: tuple[int, ...]
    """Weekdays it starts on (Monday 0); one for a WeeklySpan, all seven for Daily."""
    start: int
    """Wall-clock seconds after midnight of its start day."""
    end: int
    """Wall-clock seconds after midnight of its start day (more than a day: it ends later)."""
    min_replicas: int
    lead: int
    """Suggested leadTime, seconds."""
    climb: int
    """The median climb at its starts, seconds: to the end of the step that reached the level
    (the need is the most of each step, so the climb ended within it)."""
    quantile: float
    steps: int
    """How many values of need its minReplicas is the quantile of."""
    median: float
    highest: float
    weeks: tuple[date, ...]
    """The Mondays of the weeks its peak came in."""
    weeks_total: int
    occurrences: int
    came: int
    dips: tuple[Dip, ...] = ()
    holidays: HolidayProposal | None = None
    moved: int = 0
    """Seconds its start was moved later (and its lead made longer) to leave an hour the
    clocks skip or repeat (spa/history/suggestions.py)."""


@dataclass(frozen=True, slots=True)
class Spike:
    """A peak that does not recur (a one-off), reported and not scheduled."""

    start: int
    end: int
    highest: float


@dataclass(slots=True)
class Suggestion:
    base: int
    """The HPA's minReplicas."""
    quiet: int
    """The quiet level: what the HPA held at least a quarter of the time, at least `base`."""
    threshold: float
    """A need at least this is a peak."""
    windows: list[SuggestedWindow] = field(default_factory=list)
    spikes: list[Spike] = field(default_factory=list)
    unexplained_dips: list[Dip] = field(default_factory=list)
    weeks: int = 0
    floor: list[int] = field(default_factory=list)
    """The suggested floor by week slot (weekday * slots a day + slot)."""
    table: list[list[float | None]] = field(default_factory=list)
    """The need by local day and slot (Week.values)."""


@dataclass(slots=True)
class _Piece:
    """A window found on the week circle: `start` is its first own slot (absolute week slot),
    the other bounds are offsets from the midnight of that slot's weekday."""

    weekday: int
    level: int
    core_start: int
    core_end: int
    free_start: int
    free_end: int
    own: list[int]
    """Its own week slots (absolute): where it alone sets the floor."""


def suggest_windows(
    need: Need, week: Week, *, base: int, settings: Settings, until: date | None = None
) -> Suggestion:
    """The windows that would have held the recurring peaks of `need` (see the module's
    docstring), `until` being the day after the history (for excludeDates ahead)."""
    per_day = week.per_day
    table = week.values(need)
    known = sorted(value for row in table for value in row if value is not None)
    quiet = max(base, math.floor(_quantile(known, 0.25))) if known else base
    increase = (
        settings.min_increase
        if settings.min_increase is not None
        else max(2, math.ceil(0.2 * quiet))
    )
    threshold = float(quiet + increase)
    suggestion = Suggestion(base=base, quiet=quiet, threshold=threshold, table=table)
    weekday_of = [day.weekday() for day in week.days]
    complete = [sum(1 for value in row if value is not None) >= per_day // 2 for row in table]
    suggestion.weeks = len(
        {_monday(day) for day, full in zip(week.days, complete, strict=False) if full}
    )

    excluded: set[int] = set()
    pieces: list[list[_Piece]] = []
    windows: list[SuggestedWindow] = []
    for _ in range(2):
        pieces = _find_pieces(
            table, weekday_of, excluded, per_day=per_day, quiet=quiet, threshold=threshold,
            settings=settings, step=week.step,
        )  # fmt: skip
        windows = [
            _describe(group, table, weekday_of, week, excluded, quiet, threshold, settings)
            for group in pieces
        ]
        dipped = {
            index
            for window in windows
            for dip in window.dips
            for index, day in enumerate(week.days)
            if day == dip.day
        }
        if dipped <= excluded:
            break
        excluded |= dipped
    holidays = settings.holidays
    unexplained: dict[date, Dip] = {}
    final: list[SuggestedWindow] = []
    for window in windows:
        proposal = None
        if holidays is not None:
            proposal = _holiday_proposal(window, week, weekday_of, table, holidays, until)
        for dip in window.dips:
            if dip.holiday is None:
                unexplained.setdefault(dip.day, dip)
        final.append(window if proposal is None else replace(window, holidays=proposal))
    suggestion.windows = sorted(final, key=lambda w: (w.days[0], w.start, -w.min_replicas))
    suggestion.unexplained_dips = sorted(unexplained.values(), key=lambda dip: dip.day)
    suggestion.floor = _floor(suggestion.windows, per_day=per_day, step=week.step, quiet=quiet)
    suggestion.spikes = _spikes(table, week, weekday_of, suggestion.floor, threshold, quiet)
    return suggestion


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _quantile(ordered: Sequence[float], share: float) -> float:
    """The `share` quantile of sorted values, interpolated between the two nearest ranks."""
    if not ordered:
        return 0.0
    position = share * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _find_pieces(
    table: list[list[float | None]],
    weekday_of: list[int],
    excluded: set[int],
    *,
    per_day: int,
    quiet: int,
    threshold: float,
    settings: Settings,
    step: int,
) -> list[list[_Piece]]:
    """The windows of the week (steps 2 to 4 of the module's docstring), grouped across
    weekdays: each group becomes one Schedule (or one per run of consecutive days)."""
    slots = WEEKDAYS * per_day
    days_of: list[list[int]] = [[] for _ in range(WEEKDAYS)]
    for index, weekday in enumerate(weekday_of):
        if index not in excluded:
            days_of[weekday].append(index)
    recurring: list[float | None] = [None] * slots
    for weekday in range(WEEKDAYS):
        rows = [table[index] for index in days_of[weekday]]
        for slot in range(per_day):
            values = [row[slot] for row in rows]
            seen = sorted((value for value in values if value is not None), reverse=True)
            if len(seen) < 2:
                continue
            rank = math.ceil(settings.recurrence * len(seen) - 1e-9)
            recurring[weekday * per_day + slot] = seen[rank - 1]
    mask = [value is not None and value >= threshold for value in recurring]
    mask = _without_short_runs(mask, settings.min_steps)
    if not any(mask):
        return []
    bridge = settings.bridge // step
    # Start the circle in the middle of its longest quiet stretch, so that no run wraps
    # around the end and runs on either side of it are far apart.
    origin = _quietest(mask)
    order = [(origin + offset) % slots for offset in range(slots)]
    level = [
        max(quiet, math.ceil(value - 1e-9)) if value is not None else quiet for value in recurring
    ]
    pieces: list[_Piece] = []
    for block in _blocks([mask[index] for index in order], bridge):
        positions = [order[offset] for offset in range(block[0], block[1])]
        cover = _cover([level[position] for position in positions], quiet, step)
        pieces.extend(_level_sets(positions, cover, quiet, per_day))
    return _group(pieces, per_day=per_day, tolerance=settings.tolerance // step, quiet=quiet)


def _quietest(mask: list[bool]) -> int:
    """The middle of the longest run of False on the circle (0 if there is none)."""
    slots = len(mask)
    if all(mask):
        return 0
    start = next(index for index in range(slots) if mask[index]) if any(mask) else 0
    best, best_length = 0, 0
    length = 0
    for offset in range(1, slots + 1):
        index = (start + offset) % slots
        if not mask[index]:
            length += 1
            if length > best_length:
                best_length = length
                best = (index - length // 2) % slots
        else:
            length = 0
    return best


def _without_short_runs(mask: list[bool], shortest: int) -> list[bool]:
    """`mask` without its runs of True shorter than `shortest` (on the circle)."""
    slots = len(mask)
    if all(mask) or shortest <= 1:
        return list(mask)
    result = list(mask)
    start = next(index for index in range(slots) if not mask[index])
    run: list[int] = []
    for offset in range(1, slots + 1):
        index = (start + offset) % slots
        if mask[index]:
            run.append(index)
            continue
        if 0 < len(run) < shortest:
            for position in run:
                result[position] = False
        run = []
    return result


def _blocks(mask: list[bool], bridge: int) -> list[tuple[int, int]]:
    """Runs of True in `mask` (not wrapping), runs closer than `bridge` joined."""
    runs: list[list[int]] = []
    index = 0
    while index < len(mask):
        if not mask[index]:
            index += 1
            continue
        end = index
        while end < len(mask) and mask[end]:
            end += 1
        if runs and index - runs[-1][1] <= bridge:
            runs[-1][1] = end
        else:
            runs.append([index, end])
        index = end
    return [(start, end) for start, end in runs]


def _cover(required: list[int], quiet: int, step: int) -> list[int]:
    """The step function over a run that is never below `required`, starts and ends at
    `quiet`, and costs least: the replica-steps it adds above `required` plus, for each
    change of level, half the replica-steps of a quarter of an hour at the run's height (a
    window of its own must save more than that)."""
    levels = sorted({quiet, *required})
    height = max(required) - quiet
    change = max(1.0, 0.5 * (900 / step) * height)
    infinite = math.inf
    count = len(levels)
    # cost[j]: the least cost of the run so far, ending at levels[j].
    cost = [0.0 if level == quiet else infinite for level in levels]
    back: list[list[int]] = []
    for need in required:
        best = min(range(count), key=cost.__getitem__)
        best_cost = cost[best]
        came = []
        new = []
        for index, level in enumerate(levels):
            if level < need:
                new.append(infinite)
                came.append(index)
                continue
            stay = cost[index]
            move = best_cost + change
            if move < stay:
                new.append(move + (level - need))
                came.append(best)
            else:
                new.append(stay + (level - need))
                came.append(index)
        back.append(came)
        cost = new
    last = min(
        range(count), key=lambda index: cost[index] + (0.0 if levels[index] == quiet else change)
    )
    chosen = [0] * len(required)
    current = last
    for position in range(len(required) - 1, -1, -1):
        chosen[position] = levels[current]
        current = back[position][current]
    return chosen


def _level_sets(positions: list[int], cover: list[int], quiet: int, per_day: int) -> list[_Piece]:
    """The nested windows of a cover: for each level, each run at or above it that has a
    slot at exactly that level (a run entirely higher needs no window at this level)."""
    pieces: list[_Piece] = []
    for level in sorted({value for value in cover if value > quiet}):
        offset = 0
        while offset < len(cover):
            if cover[offset] < level:
                offset += 1
                continue
            end = offset
            while end < len(cover) and cover[end] >= level:
                end += 1
            own = [i for i in range(offset, end) if cover[i] == level]
            if own:
                first, last = own[0], own[-1]
                start_slot = positions[first]
                weekday, at = divmod(start_slot, per_day)
                pieces.append(
                    _Piece(
                        weekday=weekday,
                        level=level,
                        core_start=at,
                        core_end=at + (last - first + 1),
                        free_start=at - (first - offset),
                        free_end=at + (end - first),
                        own=[positions[i] for i in own],
                    )
                )
            offset = end
    return pieces


def _group(pieces: list[_Piece], *, per_day: int, tolerance: int, quiet: int) -> list[list[_Piece]]:
    """Windows of different weekdays that one Weekly or Daily window can hold at once: their
    levels close, and one pair of bounds that covers each of them while adding at most
    `tolerance` slots outside the slots each already has at that level or higher."""
    groups: list[list[_Piece]] = []
    for piece in sorted(pieces, key=lambda p: (p.core_start, p.weekday, p.level)):
        if piece.core_end - piece.core_start >= per_day:
            groups.append([piece])
            continue
        for group in groups:
            if group[0].core_end - group[0].core_start >= per_day:
                continue
            if any(member.weekday == piece.weekday for member in group):
                continue
            members = [*group, piece]
            levels = [member.level for member in members]
            if max(levels) - min(levels) > max(1, 0.1 * (max(levels) - quiet)):
                continue
            start = min(member.core_start for member in members)
            end = max(member.core_end for member in members)
            if end - start >= per_day:
                continue
            if all(
                member.free_start - start <= tolerance and end - member.free_end <= tolerance
                for member in members
            ):
                group.append(piece)
                break
        else:
            groups.append([piece])
    # A group of weekdays that are not consecutive is one Weekly window per run of them.
    result: list[list[_Piece]] = []
    for group in groups:
        result.extend(_runs(group))
    return result


def _runs(group: list[_Piece]) -> list[list[_Piece]]:
    days = {member.weekday: member for member in group}
    if len(days) == WEEKDAYS:
        return [group]
    runs: list[list[_Piece]] = []
    # Start after a missing weekday, so that a run wrapping past Sunday stays one run.
    first = next(day for day in range(WEEKDAYS) if (day - 1) % WEEKDAYS not in days)
    run: list[_Piece] = []
    for offset in range(WEEKDAYS):
        day = (first + offset) % WEEKDAYS
        if day in days:
            run.append(days[day])
        elif run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    return runs


def _occurrence_days(
    group: list[_Piece], weekday_of: list[int], excluded: set[int] | None = None
) -> list[tuple[_Piece, int]]:
    by_day = {member.weekday: member for member in group}
    return [
        (by_day[weekday], index)
        for index, weekday in enumerate(weekday_of)
        if weekday in by_day and (excluded is None or index not in excluded)
    ]


def _describe(
    group: list[_Piece],
    table: list[list[float | None]],
    weekday_of: list[int],
    week: Week,
    excluded: set[int],
    quiet: int,
    threshold: float,
    settings: Settings,
) -> SuggestedWindow:
    per_day = week.per_day
    step = week.step
    start = min(member.core_start for member in group)
    end = max(member.core_end for member in group)
    level_guess = max(member.level for member in group)
    half = quiet + (level_guess - quiet) / 2
    values: list[float] = []
    climbs: list[int] = []
    weeks: set[date] = set()
    dips: list[Dip] = []
    occurrences = came = 0
    for member, index in _occurrence_days(group, weekday_of):
        own = [_cell(table, index, member, slot) for slot in member.own]
        seen = [value for value in own if value is not None]
        if len(seen) < max(1, len(own) // 2):
            continue
        share = sum(1 for value in seen if value >= half) / len(seen)
        if index in excluded:
            if share < _DIPPED:
                dips.append(Dip(week.days[index], None))
            continue
        occurrences += 1
        if share < _DIPPED:
            dips.append(Dip(week.days[index], None))
            continue
        values.extend(seen)
        if share >= _CAME:
            came += 1
            weeks.add(_monday(week.days[index]))
            climb = _climb(table, index, member, level_guess)
            if climb is not None:
                climbs.append(climb)
    values.sort()
    minimum = max(quiet + 1, math.ceil(_quantile(values, settings.quantile) - 1e-9))
    # The climb ended within the step that reached the level: counting that step whole errs
    # on the safe side (its start would make a climb of 5 to 10 minutes a lead of 5).
    climb_steps = statistics.median_low(climbs) + 1 if climbs else 1
    climb = climb_steps * step
    lead = max(step, math.ceil(climb / 60) * 60)
    days = tuple(member.weekday for member in group)
    if len(set(days)) == WEEKDAYS:
        kind = WindowKind.DAILY
        days = (0, 1, 2, 3, 4, 5, 6)
    elif end - start >= per_day:
        kind = WindowKind.WEEKLY_SPAN
    else:
        kind = WindowKind.WEEKLY
    holidays = settings.holidays
    named = [Dip(dip.day, holidays.name(dip.day) if holidays else None) for dip in dips]
    return SuggestedWindow(
        kind=kind,
        days=days,
        start=start * step,
        end=end * step,
        min_replicas=minimum,
        lead=lead,
        climb=climb,
        quantile=settings.quantile,
        steps=len(values),
        median=_quantile(values, 0.5),
        highest=values[-1] if values else float(minimum),
        weeks=tuple(sorted(weeks)),
        weeks_total=len({_monday(day) for day in week.days}),
        occurrences=occurrences,
        came=came,
        dips=tuple(sorted(named, key=lambda dip: dip.day)),
    )


def _cell(table: list[list[float | None]], day: int, member: _Piece, slot: int) -> float | None:
    """The need at week slot `slot` of `member`'s window that starts on day `day`: a slot of
    a later weekday (a window past midnight) is on a later day."""
    per_day = len(table[0]) if table else 1
    later, at = divmod(slot - member.weekday * per_day, per_day)
    later %= WEEKDAYS
    index = day + later
    return table[index][at] if 0 <= index < len(table) else None


def _climb(table: list[list[float | None]], day: int, member: _Piece, level: int) -> int | None:
    """Steps from the window's start to the first step that reached `_CLIMBED` of `level`."""
    target = _CLIMBED * level
    for slot in member.own:
        value = _cell(table, day, member, slot)
        if value is not None and value >= target:
            return slot - member.own[0]
    return None


def _holiday_proposal(
    window: SuggestedWindow,
    week: Week,
    weekday_of: list[int],
    table: list[list[float | None]],
    holidays: PublicHolidays,
    until: date | None,
) -> HolidayProposal | None:
    explained = tuple(dip for dip in window.dips if dip.holiday is not None)
    if not explained:
        return None
    dipped = {dip.day for dip in window.dips}
    kept = tuple(
        (day, name)
        for index, day in enumerate(week.days)
        if weekday_of[index] in window.days
        and day not in dipped
        and (name := holidays.name(day)) is not None
        and _has_data(table[index])
    )
    if not kept:
        return HolidayProposal(
            holidays.country, holidays.subdivision, explained=explained, kept=kept
        )
    ahead = _next_dates({dip.holiday for dip in explained if dip.holiday}, holidays, until)
    return HolidayProposal(
        holidays.country,
        holidays.subdivision,
        exclude_dates=ahead,
        explained=explained,
        kept=kept,
    )


def _has_data(row: list[float | None]) -> bool:
    return sum(1 for value in row if value is not None) >= len(row) // 2


def _next_dates(names: set[str], holidays: PublicHolidays, until: date | None) -> tuple[date, ...]:
    """The next date of each named holiday within a year after `until`."""
    if until is None:
        return ()
    found: dict[str, date] = {}
    day = until
    for _ in range(366):
        name = holidays.name(day)
        if name in names and name not in found:
            found[name] = day
        day += timedelta(days=1)
    return tuple(sorted(found.values()))


def _floor(windows: Iterable[SuggestedWindow], *, per_day: int, step: int, quiet: int) -> list[int]:
    """The floor the windows hold, by week slot (`quiet` where none does), each from its
    lead before its start: a peak that comes a little early is held by the lead."""
    slots = WEEKDAYS * per_day
    floor = [quiet] * slots
    for window in windows:
        lead = -(-window.lead // step)
        for day in window.days:
            first = day * per_day + window.start // step - lead
            for offset in range(lead + (window.end - window.start) // step):
                position = (first + offset) % slots
                floor[position] = max(floor[position], window.min_replicas)
    return floor


def _spikes(
    table: list[list[float | None]],
    week: Week,
    weekday_of: list[int],
    floor: list[int],
    threshold: float,
    quiet: int,
) -> list[Spike]:
    """Peaks that no window holds: a need of a peak where no window is, or one far above the
    window that is (the increase that makes a peak, and a fifth, above its floor); runs
    across midnight joined."""
    per_day = week.per_day
    increase = threshold - quiet
    spikes: list[Spike] = []
    current: list[float] | None = None
    current_start = 0
    last_end = 0
    for index, row in enumerate(table):
        for slot, value in enumerate(row):
            held = floor[weekday_of[index] * per_day + slot]
            above = (
                value is not None
                and value >= threshold
                and value >= held + increase
                and value > 1.2 * held
            )
            if above:
                assert value is not None
                instant = week.instant(index, slot)
                if current is not None and instant <= last_end:
                    current.append(value)
                else:
                    if current is not None:
                        spikes.append(Spike(current_start, last_end, max(current)))
                    current = [value]
                    current_start = instant
                last_end = instant + week.step
            elif value is not None and current is not None:
                spikes.append(Spike(current_start, last_end, max(current)))
                current = None
    if current is not None:
        spikes.append(Spike(current_start, last_end, max(current)))
    return spikes


def describe_days(days: tuple[int, ...]) -> str:
    """`Mon-Fri`, `Sat`, `daily`."""
    names = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    if len(days) == WEEKDAYS:
        return "daily"
    if len(days) == 1:
        return names[days[0]]
    return f"{names[days[0]]}-{names[days[-1]]}"
