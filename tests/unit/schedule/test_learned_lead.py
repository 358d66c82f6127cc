"""The Auto lead rule (spa/schedule/learned_lead.py, docs/schedules.md "Auto lead times"):
examples, then its properties over any history."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spa.schedule.learned_lead import (
    DEFAULT_POD_LEAD_SECONDS,
    HISTORY,
    LeadSource,
    Need,
    fixed_lead,
    learned_lead,
    spoken_seconds,
)

CEILING = 1800


def _lead(needs: list[Need], *, floor: int = 0, ceiling: int = CEILING) -> int:
    return learned_lead(
        needs, default=DEFAULT_POD_LEAD_SECONDS, ceiling=ceiling, floor=floor
    ).seconds


def test_the_default_until_a_window_is_measured() -> None:
    lead = learned_lead([], default=120, ceiling=CEILING)
    assert (lead.seconds, lead.source) == (120, LeadSource.Default)
    assert lead.explanation() == "default 2m until measured"


def test_one_window_is_learned_from_with_its_margin() -> None:
    lead = learned_lead([Need(38)], default=120, ceiling=CEILING)
    assert (lead.seconds, lead.source) == (53, LeadSource.Learned)
    assert lead.explanation() == "learned: p90 of 1 window 38 s + 15 s"


def test_p90_of_eight_windows_ignores_the_largest() -> None:
    needs = [Need(s) for s in (30, 31, 32, 33, 35, 36, 38, 600)]
    lead = learned_lead(needs, default=120, ceiling=CEILING)
    assert lead.explanation() == "learned: p90 of 8 windows 38 s + 15 s"
    assert lead.seconds == 53


def test_the_newest_windows_need_is_never_the_outlier_ignored() -> None:
    # Nodes went from 60 s to 120 s: the newest window (first) needed 78 s where the others
    # needed 25. Ignoring it made the next window late too (docs/performance.md, "Ready
    # before the peak"); the next lead covers it.
    settled = [Need(25, censored=True)] * 3
    assert _lead([Need(78), *settled]) == 93
    # Once a newer window is measured, a one-off is an outlier like any other.
    assert _lead([Need(25), Need(78), *settled]) == 40
    # A newest need known only as "at most" (the lead in force was enough) shows no change.
    assert _lead([Need(200, censored=True), *[Need(25)] * 4]) == 40


@given(
    st.lists(st.floats(min_value=0, max_value=900, allow_nan=False), min_size=3, max_size=9),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
def test_the_newest_window_alone_is_always_covered(seconds: list[float], newest: float) -> None:
    needs = [Need(newest), *(Need(s) for s in seconds)]
    assert _lead(needs, ceiling=10**9) >= Need(newest).target()


def test_the_margin_is_a_tenth_of_a_long_need() -> None:
    assert _lead([Need(400)]) == 440


def test_only_the_last_windows_count() -> None:
    old = [Need(900)] * 5
    recent = [Need(40)] * HISTORY
    assert _lead(recent + old) == 55


def test_bounds_are_said() -> None:
    above = learned_lead([Need(4000)], default=120, ceiling=1800)
    assert above.seconds == 1800
    assert above.explanation() == "learned: p90 of 1 window 4000 s + 400 s (at most 30m)"
    below = learned_lead([Need(5)], default=120, ceiling=1800, floor=60)
    assert below.seconds == 60
    assert below.explanation().endswith("(at least 1m)")


def test_a_fixed_floor_wins_over_the_ceiling() -> None:
    assert _lead([Need(10)], floor=600, ceiling=300) == 600


def test_a_censored_need_gets_no_margin() -> None:
    assert _lead([Need(180, censored=True)]) == 180


def test_fixed_and_spoken() -> None:
    assert fixed_lead(300).explanation() == "fixed 5m"
    assert [spoken_seconds(s) for s in (0, 45, 90, 3600, 5400)] == [
        "0s",
        "45s",
        "1m30s",
        "1h",
        "1h30m",
    ]


needs_strategy = st.lists(
    st.builds(
        Need,
        st.floats(min_value=0, max_value=20_000, allow_nan=False),
        st.booleans(),
    ),
    max_size=14,
)
bounds = st.tuples(st.integers(0, 600), st.integers(0, 7200))


@given(needs_strategy, bounds)
def test_bounded(needs: list[Need], floor_ceiling: tuple[int, int]) -> None:
    floor, ceiling = floor_ceiling
    lead = _lead(needs, floor=floor, ceiling=ceiling)
    assert lead >= floor
    assert lead <= max(floor, ceiling)


@given(needs_strategy, st.data())
def test_monotone_in_every_need(needs: list[Need], data: st.DataObject) -> None:
    if not needs:
        return
    index = data.draw(st.integers(0, len(needs) - 1))
    more = data.draw(st.floats(min_value=0, max_value=5000, allow_nan=False))
    slower = list(needs)
    slower[index] = Need(needs[index].seconds + more, needs[index].censored)
    assert _lead(slower) >= _lead(needs)


@given(
    st.lists(st.floats(min_value=0, max_value=900, allow_nan=False), min_size=3, max_size=9),
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.integers(1, 9),
)
def test_one_outlier_moves_it_at_most_to_the_largest_other_window(
    seconds: list[float], outlier: float, where: int
) -> None:
    """An outlier among the older windows (index 0 is the newest)."""
    needs = [Need(s) for s in seconds]
    with_outlier = list(needs)
    with_outlier.insert(min(where, len(needs)), Need(outlier))
    largest_other = max(n.target() for n in needs)
    assert _lead(with_outlier, ceiling=10**9) <= largest_other


@given(
    st.lists(st.floats(min_value=0, max_value=900, allow_nan=False), min_size=1, max_size=10),
    st.integers(1, 30),
)
def test_no_drift_up_when_nothing_changes(seconds: list[float], windows: int) -> None:
    """Windows in time after the lead was learned add censored needs (the lead in force was
    enough): the lead never grows from them."""
    history = [Need(s) for s in seconds]
    lead = _lead(history)
    for _ in range(windows):
        history.insert(0, Need(lead, censored=True))
        following = _lead(history)
        assert following <= lead
        lead = following


@given(st.floats(min_value=0, max_value=900, allow_nan=False), st.integers(1, 30))
def test_the_same_need_every_window_keeps_the_same_lead(need: float, windows: int) -> None:
    leads = {_lead([Need(need)] * count) for count in range(1, windows + 1)}
    assert len(leads) == 1
