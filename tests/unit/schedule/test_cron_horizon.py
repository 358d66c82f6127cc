"""How far ahead the next start is searched (spa/schedule/windows.py, DEFAULT_HORIZON_SECONDS):
far enough for every cron expression that can match (docs/schedules.md, "Cron").

The longest gap between two matches is computed here, not assumed: the Gregorian calendar
repeats every 400 years, 146,097 days, which is also a whole number of weeks, so the days
that match a set of date fields repeat too, and their longest gap over one cycle (wrapping
around) is their longest gap ever.
"""

from __future__ import annotations

import calendar
import itertools
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from functools import cache

import pytest

from spa.plan import Document, build_plan, render_table
from spa.plan.schedules import ScheduleState
from spa.schedule import CronExpression, CronWindow, RecurringWindow, Timeline, load_zone
from spa.schedule.windows import DEFAULT_HORIZON_SECONDS, DEFAULT_HORIZON_YEARS
from tests.builders import autoscaler, schedule

CYCLE_DAYS = 146_097  # 400 Gregorian years; 20,871 weeks
DAY = 86_400
LONGEST_GAP_DAYS = 14_609  # 40 years across 2100: 29 February on a given weekday

# The least each date field can hold, as cronsim reads them: a day of the month (or `L`, the
# last, or `LW`, the last weekday), and a day of the week (0 is Sunday; `1L`, the last Monday
# of the month; `1#5`, the fifth); `*` for a field left open.
DOM_ATOMS: list[str] = ["*", "L", "LW", *map(str, range(1, 32))]
DOW_ATOMS: list[str] = [
    "*",
    *map(str, range(7)),
    *(f"{w}L" for w in range(7)),
    *(f"{w}#{n}" for w in range(7) for n in range(1, 6)),
]


def atoms_of(day: date) -> tuple[list[str], list[str]]:
    """The day-of-month and day-of-week atoms that `day` satisfies."""
    last = calendar.monthrange(day.year, day.month)[1]
    last_weekday = last - {5: 1, 6: 2}.get(date(day.year, day.month, last).weekday(), 0)
    weekday = (day.weekday() + 1) % 7
    dom = ["*", str(day.day)]
    if day.day == last:
        dom.append("L")
    if day.day == last_weekday:
        dom.append("LW")
    dow = ["*", str(weekday), f"{weekday}#{(day.day + 6) // 7}"]
    if day.day + 7 > last:
        dow.append(f"{weekday}L")
    return dom, dow


@cache
def longest_gaps() -> dict[tuple[int, str, str], int]:
    """For each (month, day-of-month atom, day-of-week atom) that matches some day: the longest
    gap, in days, between two consecutive days that satisfy all three.

    Every expression's set of matching days contains the days of one such triple: take a day it
    matches, its month, and the atoms of the expression's fields it satisfies (when the fields
    combine with *or*, the atom of the field that matched and `*` for the other). A set that
    contains another has no longer gap, so the longest gap of the triples bounds every
    expression's.
    """
    matching: dict[tuple[int, str, str], list[int]] = defaultdict(list)
    start = date(2000, 1, 1)
    for offset in range(CYCLE_DAYS):
        day = start + timedelta(days=offset)
        dom, dow = atoms_of(day)
        for a in dom:
            for b in dow:
                matching[(day.month, a, b)].append(offset)
    return {
        key: max(
            [later - earlier for earlier, later in itertools.pairwise(days)]
            + [days[0] + CYCLE_DAYS - days[-1]]
        )
        for key, days in matching.items()
    }


def test_the_longest_gap_is_29_february_on_a_weekday() -> None:
    gaps = longest_gaps()
    longest = max(gaps.values())
    assert longest == LONGEST_GAP_DAYS
    assert gaps[(2, "*", "1#5")] == longest  # `0 2 * 2 1#5`: 2072-02-29, then 2112-02-29
    assert gaps[(2, "29", "0")] == longest  # `0 2 29 2 */7`: a Sunday
    assert gaps[(2, "29", "*")] == 2_921  # `0 2 29 2 *`: 2096-02-29, then 2104-02-29
    # Outside February a single day of a month matches at most 11 years apart.
    assert max(gap for (month, _, _), gap in gaps.items() if month != 2) < 12 * 366


def test_the_horizon_covers_the_longest_gap() -> None:
    # A day of slack: the next start may be later in its day than the last one was, and the
    # zone's offset may differ between the two.
    assert (max(longest_gaps().values()) + 1) * DAY <= DEFAULT_HORIZON_SECONDS
    # The plan says "no start in the next 41 years": that many calendar years at least.
    years = DEFAULT_HORIZON_YEARS
    assert (365 * years + years // 4 + 1) * DAY <= DEFAULT_HORIZON_SECONDS


@pytest.mark.parametrize("dom", DOM_ATOMS)
def test_the_day_of_month_atoms_are_cronsims(dom: str) -> None:
    expression = CronExpression(f"0 0 {dom} * *")
    for day in _days_around_2100():
        assert expression.matches_day(day) == (dom in atoms_of(day)[0]), day


@pytest.mark.parametrize("dow", DOW_ATOMS)
def test_the_day_of_week_atoms_are_cronsims(dow: str) -> None:
    expression = CronExpression(f"0 0 * * {dow}")
    for day in _days_around_2100():
        assert expression.matches_day(day) == (dow in atoms_of(day)[1]), day


def _days_around_2100() -> list[date]:
    """A leap year, and three years around a century that is none."""
    years = [2096, 2099, 2100, 2101]
    first = [date(year, 1, 1) for year in years]
    return [
        day + timedelta(days=n)
        for day in first
        for n in range(366)
        if (day + timedelta(days=n)).year == day.year
    ]


def utc(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def cron(text: str, duration: int = 3600, zone: str = "UTC") -> Timeline:
    return Timeline(CronWindow(CronExpression(text), duration, load_zone(zone)))


@pytest.mark.parametrize(
    ("text", "after", "expected"),
    [
        ("0 2 29 2 *", "2026-11-25T00:00", "2028-02-29T02:00"),
        ("0 2 29 2 *", "2096-02-29T03:00", "2104-02-29T02:00"),  # 2100 is no leap year
        ("0 2 * 2 1#5", "2072-02-29T03:00", "2112-02-29T02:00"),  # 29 February on a Monday
        ("0 2 29 2 */7", "2088-02-29T03:00", "2128-02-29T02:00"),  # on a Sunday
        # The longest gap, from the end of the window before: 14,609 days less an hour.
        ("0 0 * 2 2#5", "2084-02-29T01:00", "2124-02-29T00:00"),
    ],
)
def test_a_rare_expression_starts_again_within_the_horizon(
    text: str, after: str, expected: str
) -> None:
    assert cron(text).next_boundary(utc(after)) == utc(expected)


def test_an_expression_that_never_matches_has_no_next_start() -> None:
    # The 1st of the month (`*/31`, and the fields combine with *and*) that is its fifth Monday.
    timeline = cron("0 2 */31 2 1#5")
    assert timeline.next_boundary(utc("2026-11-25T00:00")) is None
    assert timeline.boundaries_between(utc("2026-01-01T00:00"), utc("2036-01-01T00:00")) == []


def test_the_plan_names_the_start_and_the_horizon() -> None:
    bodies = [
        autoscaler(maxReplicas=8, minReplicas=None, metrics=None),
        schedule(name="leap", type="Cron", schedule="0 2 29 2 *", duration="1h", minReplicas=5),
        schedule(
            name="never", type="Cron", schedule="0 2 */31 2 1#5", duration="1h", minReplicas=5
        ),
    ]
    documents = [Document("m.yaml", index, body) for index, body in enumerate(bodies, 1)]
    plan = build_plan(documents, [], at=utc("2026-11-25T00:00"), until=utc("2026-12-02T00:00"))
    assert plan.errors == []
    [web] = plan.autoscalers
    leap, never = web.schedules
    assert (leap.state, leap.next_change) == (ScheduleState.LATER, utc("2028-02-29T02:00"))
    assert (never.state, never.next_change) == (ScheduleState.LATER, None)
    table = render_table(plan)
    assert "starts Tue 2028-02-29 02:00 UTC, after this period" in table
    assert f"no start in the next {DEFAULT_HORIZON_YEARS} years" in table


# -- the search is cheap, and still exact -------------------------------------------------------


@pytest.mark.parametrize(
    "timeline",
    [
        pytest.param(cron("0 2 29 2 *"), id="leap day"),
        pytest.param(cron("*/20 9-10 * 3,10 *", 600, "Europe/Berlin"), id="two months, DST"),
        pytest.param(cron("0 * * * *", 3599, "Asia/Tokyo"), id="hourly, a second apart"),
        pytest.param(
            Timeline(RecurringWindow(time(9), time(17), load_zone("UTC"))),
            id="daily",
        ),
    ],
)
def test_asking_again_later_gives_what_a_fresh_search_gives(timeline: Timeline) -> None:
    # The controller asks the same Timeline at each reconcile, later each time, and with the
    # horizon that is left (spa/schedule/effective.py): what it remembers must not change the
    # answers.
    # It also requeues at the boundary it was told: asked there, and just before it, and a day
    # and a half-hour before it (nothing within a day, then something).
    # Asked by the same Timeline all along, and by one that starts afresh at each step.
    instant = utc("2027-01-01T00:00")
    end = utc("2029-07-01T00:00")
    while instant < end:
        boundary = Timeline(timeline.window).next_boundary(instant)
        assert boundary is not None
        again = Timeline(timeline.window)
        for asked in (boundary - DAY - 1_800, boundary - 1, boundary, instant):
            for horizon in (DAY, 90 * DAY, DEFAULT_HORIZON_SECONDS):
                fresh = Timeline(timeline.window).next_boundary(asked, horizon=horizon)
                assert timeline.next_boundary(asked, horizon=horizon) == fresh, asked
                assert again.next_boundary(asked, horizon=horizon) == fresh, asked
                if horizon < DEFAULT_HORIZON_SECONDS:
                    between = Timeline(timeline.window).boundaries_between(asked, asked + horizon)
                    assert fresh == (between[0] if between else None), asked
        instant = boundary + 11 * DAY + 3_333


def test_a_remembered_search_goes_on_from_where_it_stopped() -> None:
    timeline = cron("0 2 29 2 *")
    start = utc("2028-02-29T02:00")
    # Nothing within a day of half an hour before; then a start exactly at the horizon, half an
    # hour beyond what was searched; then the boundaries at and after it.
    assert timeline.next_boundary(start - DAY - 1_800, horizon=DAY) is None
    assert timeline.next_boundary(start - DAY, horizon=DAY) == start
    assert timeline.next_boundary(start - DAY, horizon=DAY - 1) is None
    assert timeline.next_boundary(start - 1, horizon=1) == start
    assert timeline.next_boundary(start, horizon=DAY) == start + 3_600
    assert timeline.next_boundary(start + 3_600) == utc("2032-02-29T02:00")


@pytest.mark.parametrize(
    ("text", "duration", "zone", "always"),
    [
        ("0 * * * *", 3600, "UTC", True),  # @hourly for an hour: never starts or ends
        ("* * * * *", 60, "Etc/GMT-9", True),
        ("0 * * * *", 3599, "UTC", False),  # a second without a window every hour
        ("0 * * * *", 3600, "Europe/Berlin", False),  # the repeated hour breaks it once a year
        ("0 * 1-30 * *", 3600, "UTC", False),  # the 31st
        ("0 0 * * *", 24 * 3600, "UTC", True),
    ],
)
def test_a_cron_window_that_joins_every_day_in_a_fixed_zone_is_always_active(
    text: str, duration: int, zone: str, always: bool
) -> None:
    window = CronWindow(CronExpression(text), duration, load_zone(zone))
    assert window.always_active is always
    # The Timeline agrees: no boundary over the next years exactly when always active.
    boundaries = Timeline(window).boundaries_between(
        utc("2026-01-01T00:00"), utc("2029-01-01T00:00")
    )
    assert (boundaries == []) is always
