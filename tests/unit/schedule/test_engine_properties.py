"""The engine agrees with a deliberately naive reference, across zones, times and DST changes.

The reference shares no code with the engine. It reads local wall clocks minute by minute:
a wall-clock time "happens" at the first minute whose local reading is at or past it (which is
docs/schedules.md: the first occurrence of a repeated time, the jump for a skipped one), and
the next transition is the first minute at which the answer changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spa.schedule import (
    Base,
    OneShotWindow,
    RecurringWindow,
    Rule,
    Timeline,
    Weekday,
    load_zone,
    next_transition,
    state_at,
    transitions_between,
    weekdays_between,
)
from tests.unit.calendar_reference import HORIZON, WallClock, first_change
from tests.unit.time_zones import ZONES, zone_changes


def reference_instants(walls: list[datetime], zone: ZoneInfo) -> list[int]:
    """For each of `walls`, the first minute whose local wall-clock reading is at or past it.

    Read from one minute-by-minute clock (calendar_reference.WallClock) over the stretch the
    walls lie in, with 15 hours to spare on either side (more than any zone's offset): walking
    from 15 hours before each wall, a fromtimestamp a minute, was half the module's time."""
    readings = [int(wall.replace(tzinfo=UTC).timestamp()) for wall in walls]
    clock = WallClock(zone, min(readings) - 15 * 3600, max(readings) + 15 * 3600)
    found = [clock.instant(wall) for wall in walls]
    assert None not in found, (walls, zone)
    return [instant for instant in found if instant is not None]


@dataclass(frozen=True)
class ReferenceWindow:
    kind: str
    start: datetime | time
    end: datetime | time
    zone: ZoneInfo
    days: frozenset[Weekday] | None

    def intervals(self, around: int) -> list[tuple[int, int]]:
        if self.kind == "OneShot":
            assert isinstance(self.start, datetime)
            assert isinstance(self.end, datetime)
            pairs = [(self.start, self.end)]
        else:
            assert isinstance(self.start, time)
            assert isinstance(self.end, time)
            today = datetime.fromtimestamp(around, self.zone).date()
            pairs = []
            for offset in range(-3, HORIZON // 86400 + 3):
                day = today + timedelta(days=offset)
                if self.days is not None and Weekday(day.weekday()) not in self.days:
                    continue
                end_day = day + timedelta(days=1) if self.end <= self.start else day
                pairs.append(
                    (datetime.combine(day, self.start), datetime.combine(end_day, self.end))
                )
        instants = reference_instants([wall for pair in pairs for wall in pair], self.zone)
        found = []
        for first, last in zip(instants[::2], instants[1::2], strict=True):
            if first < last:
                found.append((first, last))
        return found

    def engine(self) -> Timeline:
        if self.kind == "OneShot":
            assert isinstance(self.start, datetime)
            assert isinstance(self.end, datetime)
            return Timeline(OneShotWindow(start=self.start, end=self.end, zone=self.zone))
        assert isinstance(self.start, time)
        assert isinstance(self.end, time)
        return Timeline(
            RecurringWindow(start=self.start, end=self.end, zone=self.zone, days=self.days)
        )


def active(intervals: list[tuple[int, int]], instant: int) -> bool:
    return any(start <= instant <= end - 1 for start, end in intervals)


@st.composite
def instants(draw: st.DrawFn, zone: str) -> int:
    near_change = draw(st.booleans())
    if near_change:
        change = draw(st.sampled_from(zone_changes(zone)))
        return change + draw(st.integers(-3 * 86400, 3 * 86400))
    return draw(st.integers(1704067200, 1893456000))  # 2024-01-01 .. 2030-01-01


minutes = st.one_of(st.sampled_from([0, 15, 30, 45]), st.integers(0, 59))
hours = st.one_of(st.sampled_from([0, 1, 2, 3, 23]), st.integers(0, 23))
times_of_day = st.builds(time, hours, minutes)


@st.composite
def windows(draw: st.DrawFn, zone_name: str, instant: int) -> ReferenceWindow:
    zone = load_zone(zone_name)
    kind = draw(st.sampled_from(["Daily", "Weekly", "OneShot"]))
    if kind == "OneShot":
        base = datetime.fromtimestamp(instant, zone).replace(tzinfo=None, second=0)
        start = base.replace(hour=draw(hours), minute=draw(minutes)) + timedelta(
            days=draw(st.integers(-2, 2))
        )
        end = start + timedelta(minutes=draw(st.integers(1, 4 * 24 * 60)))
        return ReferenceWindow(kind, start, end, zone, None)
    days = None
    if kind == "Weekly":
        first, last = draw(st.sampled_from(list(Weekday))), draw(st.sampled_from(list(Weekday)))
        days = weekdays_between(first, last)
    return ReferenceWindow(kind, draw(times_of_day), draw(times_of_day), zone, days)


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, list[ReferenceWindow]]:
    zone = draw(st.sampled_from(ZONES))
    instant = draw(instants(zone))
    count = draw(st.integers(1, 3))
    return instant, [draw(windows(zone, instant)) for _ in range(count)]


PROPERTY_SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(cases())
def test_activity_and_next_boundary_match_the_reference(
    case: tuple[int, list[ReferenceWindow]],
) -> None:
    instant, windows_ = case
    window = windows_[0]
    intervals = window.intervals(instant)
    timeline = window.engine()
    assert timeline.is_active(instant) == active(intervals, instant)
    expected = first_change(lambda t: active(intervals, t), instant)
    assert timeline.next_boundary(instant, horizon=HORIZON) == expected


@PROPERTY_SETTINGS
@given(
    cases(),
    st.integers(1, 5),
    st.integers(5, 12),
    st.lists(
        st.tuples(st.none() | st.integers(1, 15), st.none() | st.integers(1, 15)),
        min_size=3,
        max_size=3,
    ),
)
def test_effective_values_and_next_transition_match_the_reference(
    case: tuple[int, list[ReferenceWindow]],
    base_min: int,
    base_max: int,
    bounds: list[tuple[int | None, int | None]],
) -> None:
    instant, windows_ = case
    base = Base(min_replicas=base_min, max_replicas=base_max)
    references = [
        (f"s{index}", window.intervals(instant), bounds[index])
        for index, window in enumerate(windows_)
    ]
    rules = [
        Rule(name=name, timeline=window.engine(), min_replicas=low, max_replicas=high)
        for (name, _, (low, high)), window in zip(references, windows_, strict=True)
    ]

    def reference_state(at: int) -> tuple[int, int, tuple[str, ...]]:
        live = [(name, bound) for name, intervals, bound in references if active(intervals, at)]
        mins = [low for _, (low, _) in live if low is not None]
        maxes = [high for _, (_, high) in live if high is not None]
        minimum = max(mins) if mins else base_min
        maximum = max(maxes) if maxes else base_max
        return minimum, max(minimum, maximum), tuple(sorted(name for name, _ in live))

    state = state_at(base, rules, instant)
    assert (state.min_replicas, state.max_replicas, state.active) == reference_state(instant)
    assert next_transition(base, rules, instant, horizon=HORIZON) == first_change(
        reference_state, instant
    )


def test_reference_sees_every_zone_change() -> None:
    """Guard for the generators: the DST-heavy zones really have changes to sample near."""
    for name in ZONES:
        if name not in ("UTC", "Asia/Kolkata"):
            assert len(zone_changes(name)) >= 2, name
    assert date(2024, 1, 1) < datetime.fromtimestamp(zone_changes("Europe/Berlin")[0]).date()


@PROPERTY_SETTINGS
@given(
    cases(),
    st.lists(
        st.tuples(st.none() | st.integers(1, 9), st.none() | st.integers(1, 9)),
        min_size=3,
        max_size=3,
    ),
)
def test_transition_listing_agrees_with_stepping_next_transition(
    case: tuple[int, list[ReferenceWindow]], bounds: list[tuple[int | None, int | None]]
) -> None:
    """The plan's sweep gives the same transitions as the controller's one-at-a-time search."""
    instant, windows_ = case
    base = Base(min_replicas=2, max_replicas=6)
    rules = [
        Rule(name=f"s{index}", timeline=window.engine(), min_replicas=low, max_replicas=high)
        for index, (window, (low, high)) in enumerate(zip(windows_, bounds, strict=False))
    ]
    stepped = []
    cursor = instant
    while (
        found := next_transition(base, rules, cursor, horizon=instant + HORIZON - cursor)
    ) is not None:
        stepped.append((found, state_at(base, rules, found)))
        cursor = found
    assert transitions_between(base, rules, instant, instant + HORIZON) == stepped
