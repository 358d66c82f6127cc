"""The engine's window kinds and date rules agree with the reference judge and its naive
minute-by-minute windows (tests/unit/calendar_reference.py). `spa plan`, the controller and
`kubectl spa status` are held to the same reference in
tests/unit/agreement/test_calendar_everywhere.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from spa.schedule import (
    Base,
    Rule,
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
    expect,
    first_change,
    merged,
    named_examples,
    reference,
)


@PROPERTY_SETTINGS
@given(cases())
@named_examples
def test_activity_and_next_boundary_match_the_reference(case_: tuple[int, Case]) -> None:
    instant, case = case_
    expected = expect(case, instant)
    timeline = Timeline(case.window())
    assert timeline.is_active(instant) == expected.active
    assert timeline.next_boundary(instant, horizon=HORIZON) == expected.next_change
    edges = [edge for edge, _ in expected.changes]
    assert timeline.boundaries_between(instant, instant + HORIZON) == edges
    assert case.window().completed(instant) == expected.completed


@PROPERTY_SETTINGS
@given(cases())
@named_examples
def test_skipped_windows_match_the_reference(case_: tuple[int, Case]) -> None:
    """Every window an excluded date, a (Skip-mode) holiday or a Skip calendar removes, and only
    those, each with its reason in the words of `spa plan`."""
    instant, case = case_
    found = [
        (s.occurrence.start, s.occurrence.day, s.reason)
        for s in skipped_between(case.window(), instant, instant + HORIZON)
    ]
    assert sorted(found) == expect(case, instant).skipped


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
