"""The hand-laid JSON of `spa plan` parses to exactly the structure of docs/plan.md."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from spa.plan import AutoscalerPlan, Plan, PlanError, SkippedWindow, render_json
from spa.schedule import Occurrence, SkipCause, Skipped, State, format_instant

names = st.text(min_size=1, max_size=8)
states = st.builds(
    State,
    st.integers(1, 50),
    st.integers(1, 50),
    st.lists(names, max_size=3).map(lambda found: tuple(sorted(found))),
)
skipped = st.builds(
    SkippedWindow,
    schedule=names,
    skipped=st.builds(
        Skipped,
        occurrence=st.builds(
            Occurrence, st.dates(), st.integers(0, 4_000_000_000), st.integers(0, 4_000_000_000)
        ),
        cause=st.sampled_from(SkipCause),
        holiday=st.none() | names,
    ),
)
autoscalers = st.builds(
    AutoscalerPlan,
    namespace=names,
    name=names,
    state=states,
    transitions=st.lists(st.tuples(st.integers(0, 4_000_000_000), states), max_size=4),
    skipped=st.lists(skipped, max_size=3),
)
errors = st.builds(
    PlanError,
    file=names,
    document=st.none() | st.integers(1, 9),
    message=st.text(max_size=30),
    kind=st.none() | names,
    namespace=st.none() | names,
    name=st.none() | names,
    field=st.none() | names,
)


def state_fields(state: State) -> dict[str, object]:
    return {
        "minReplicas": state.min_replicas,
        "maxReplicas": state.max_replicas,
        "activeSchedules": list(state.active),
    }


@given(
    st.lists(autoscalers, max_size=3),
    st.lists(errors, max_size=3),
    st.lists(errors, max_size=3),
)
def test_json_is_the_contract(
    found: list[AutoscalerPlan], problems: list[PlanError], warned: list[PlanError]
) -> None:
    plan = Plan(at=0, until=86400, autoscalers=found, errors=problems, warnings=warned)
    assert json.loads(render_json(plan)) == {
        "at": "1970-01-01T00:00:00Z",
        "until": "1970-01-02T00:00:00Z",
        "autoscalers": [
            {
                "namespace": a.namespace,
                "name": a.name,
                **state_fields(a.state),
                "transitions": [
                    {"time": format_instant(t), **state_fields(s)} for t, s in a.transitions
                ],
                "skipped": [
                    {
                        "time": format_instant(k.time),
                        "schedule": k.schedule,
                        "date": k.skipped.occurrence.day.isoformat(),
                        "reason": k.skipped.reason,
                    }
                    for k in a.skipped
                ],
                "incident": None,
            }
            for a in found
        ],
        "errors": [
            {
                "file": e.file,
                "document": e.document,
                "kind": e.kind,
                "namespace": e.namespace,
                "name": e.name,
                "field": e.field,
                "message": e.message,
            }
            for e in problems
        ],
        "warnings": [
            {
                "file": w.file,
                "document": w.document,
                "kind": w.kind,
                "namespace": w.namespace,
                "name": w.name,
                "field": w.field,
                "message": w.message,
            }
            for w in warned
        ],
    }
