"""The new window kinds and the calendar rules agree with a naive minute-by-minute reference
(tests/unit/calendar_reference.py)."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from spa.schedule import (
    Base,
    Rule,
    SkipCause,
    Skipped,
    Timeline,
    next_transition,
    skipped_between,
    state_at,
)
from tests.unit.calendar_reference import (
    HORIZON,
    PROPERTY_SETTINGS,
    Case,
    active_in,
    cases,
    first_change,
    merged,
    reference,
)


@PROPERTY_SETTINGS
@given(cases())
def test_activity_and_next_boundary_match_the_reference(case_: tuple[int, Case]) -> None:
    instant, case = case_
    occurrences, _ = reference(case, instant)
    runs = merged([(s, e) for day, s, e in occurrences if case.verdict(day) is None])
    timeline = Timeline(case.window())
    assert timeline.is_active(instant) == active_in(runs, instant)
    expected = first_change(lambda t: active_in(runs, t), instant)
    assert timeline.next_boundary(instant, horizon=HORIZON) == expected


@PROPERTY_SETTINGS
@given(cases())
def test_skipped_windows_match_the_reference(case_: tuple[int, Case]) -> None:
    """Every window an excluded date, a (Skip-mode) holiday or a Skip calendar removes, and only
    those, each with its reason."""
    instant, case = case_
    occurrences, _ = reference(case, instant)
    # The windows of one day that overlap or touch are one window (a dense cron expression).
    windows: list[tuple[date, int, int]] = []
    for day, start, end in sorted(occurrences):
        if windows and windows[-1][0] == day and start <= windows[-1][2]:
            windows[-1] = (day, windows[-1][1], max(end, windows[-1][2]))
        else:
            windows.append((day, start, end))
    expected = sorted(
        (start, day, verdict)
        for day, start, _ in windows
        if instant < start <= instant + HORIZON
        and (verdict := case.verdict(day)) is not None
        and verdict != "outside"
    )
    found = sorted(
        (
            s.occurrence.start,
            s.occurrence.day,
            _said(s),
        )
        for s in skipped_between(case.window(), instant, instant + HORIZON)
    )
    assert found == expected


@PROPERTY_SETTINGS
@given(
    cases(),
    st.lists(
        st.tuples(st.none() | st.integers(1, 15), st.none() | st.integers(1, 15)),
        min_size=2,
        max_size=2,
    ),
    cases(),
)
def test_effective_values_with_calendars_match_the_reference(
    first: tuple[int, Case],
    bounds: list[tuple[int | None, int | None]],
    second: tuple[int, Case],
) -> None:
    instant, one = first
    other = second[1]
    base = Base(min_replicas=2, max_replicas=6)
    references = []
    for index, case in enumerate((one, other)):
        occurrences, _ = reference(case, instant)
        runs = merged([(s, e) for day, s, e in occurrences if case.verdict(day) is None])
        references.append((f"s{index}", runs, bounds[index]))
    rules = [
        Rule(name=name, timeline=Timeline(case.window()), min_replicas=low, max_replicas=high)
        for (name, _, (low, high)), case in zip(references, (one, other), strict=True)
    ]

    def reference_state(at: int) -> tuple[int, int, tuple[str, ...]]:
        live = [(name, bound) for name, runs, bound in references if active_in(runs, at)]
        mins = [low for _, (low, _) in live if low is not None]
        maxes = [high for _, (_, high) in live if high is not None]
        minimum = max(mins) if mins else 2
        maximum = max(maxes) if maxes else 6
        return minimum, max(minimum, maximum), tuple(sorted(name for name, _ in live))

    state = state_at(base, rules, instant)
    assert (state.min_replicas, state.max_replicas, state.active) == reference_state(instant)
    assert next_transition(base, rules, instant, horizon=HORIZON) == first_change(
        reference_state, instant
    )


def _said(skipped: Skipped) -> str:
    """The reference's word for a skipped occurrence's reason."""
    if skipped.cause is SkipCause.EXCLUDED:
        return "excluded"
    if skipped.cause is SkipCause.HOLIDAY:
        return "holiday"
    return skipped.reason
