"""`spa plan`, the controller and `kubectl spa status` say of every date what the reference judge
says (tests/unit/calendar_reference.py: docs/schedules.md, "How the date rules compose", rule by
rule, over naive minute-by-minute windows). The engine alone is held to it in
tests/unit/schedule/test_engine_calendar_properties.py; here each case goes in as manifests (the
SPA, the Schedule, its Calendars and ClusterCalendars, and decoys a wrong lookup would pick)
through the path each surface takes:

- `spa plan -f`: `build_plan` over the documents;
- the controller: the real Reconciler against the model API server of tests/unit/spa_model.py,
  which compiles the Schedule with the calendars from its caches and writes its status and the
  HPA;
- `kubectl spa status`: `build_status` over the objects as read from a cluster, and its JSON.

Each compares whether the Schedule is active now, when it next starts or ends, whether it is
Completed, and (the plan and status) every transition and skipped window over the horizon.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given

from spa.cli.cluster import ClusterObjects
from spa.cli.status_render import status_document
from spa.cli.status_report import HORIZON_SECONDS, build_status
from spa.plan import AutoscalerPlan, Document, build_plan
from spa.plan.schedules import ScheduleState
from spa.schedule import HolidayMode, format_instant
from tests import builders
from tests.unit import spa_model
from tests.unit.calendar_reference import (
    BASE,
    BOUNDS,
    HORIZON,
    NAMED_CASES,
    NAMESPACE,
    PROPERTY_SETTINGS,
    SCHEDULE,
    SPA,
    Case,
    Expected,
    cases,
    expect,
    named_examples,
)


def planned(case: Case, instant: int) -> AutoscalerPlan:
    """The plan of the case's manifests over the reference's horizon (no errors: the cases are
    what the API accepts)."""
    documents = [
        Document("case.yaml", index, body) for index, body in enumerate(case.documents(), 1)
    ]
    plan = build_plan(documents, [], at=instant, until=instant + HORIZON)
    assert plan.errors == []
    (autoscaler,) = plan.autoscalers
    return autoscaler


def next_change_agrees(found: int | None, expected: Expected, instant: int) -> bool:
    """The engine looks 41 years ahead, the reference over its horizon: past it, any or none."""
    if expected.next_change is not None:
        return found == expected.next_change
    return found is None or found > instant + HORIZON


@PROPERTY_SETTINGS
@given(cases())
@named_examples
def test_spa_plan_matches_the_reference(case_: tuple[int, Case]) -> None:
    instant, case = case_
    expected = expect(case, instant)
    plan = planned(case, instant)
    assert bool(plan.state.active) == expected.active
    assert [(at, bool(state.active)) for at, state in plan.transitions] == expected.changes
    skipped = [(s.time, s.skipped.occurrence.day, s.skipped.reason) for s in plan.skipped]
    assert sorted(skipped) == expected.skipped
    (schedule,) = plan.schedules
    if expected.completed:
        assert (schedule.state, schedule.next_change) == (ScheduleState.COMPLETED, None)
    else:
        if expected.active:
            assert schedule.state is ScheduleState.ACTIVE
        else:
            upcoming = ScheduleState.UPCOMING if expected.changes else ScheduleState.LATER
            assert schedule.state is upcoming
        assert next_change_agrees(schedule.next_change, expected, instant)
    # The window in words names every date rule that keeps or skips whole days.
    if case.holidays is not None:
        country, subdivision = case.holidays
        where = country if subdivision is None else f"{country}-{subdivision}"
        said = "only on" if case.mode is HolidayMode.ONLY else "skipping"
        assert f"{said} {where} holidays" in schedule.window
    for reference in case.shared:
        assert reference.calendar.label in schedule.window


def settled(server: spa_model.Server, instant: int) -> dict[str, Any]:
    """The Schedule's status once the reconciler has nothing left to do at `instant`."""
    _, memory, _ = server.reconcile(instant)
    server.reconcile(instant, memory)
    return dict(server.schedules[0]["status"])


@PROPERTY_SETTINGS
@given(cases())
@named_examples
def test_the_controller_matches_the_reference(case_: tuple[int, Case]) -> None:
    instant, case = case_
    expected = expect(case, instant)
    stored = builders.schedule(
        name=SCHEDULE,
        namespace=NAMESPACE,
        target=SPA,
        metadata={
            "uid": "uid-s",
            "generation": 1,
            "creationTimestamp": "2020-01-01T00:00:00Z",
            "ownerReferences": [spa_model.OURS],
        },
        **case.spec(),
    )
    server = spa_model.Server(spa_model.autoscaler(), [stored], calendars=case.calendar_documents())
    status = settled(server, instant)
    if expected.completed:
        assert (status["condition"], status.get("nextTransitionTime")) == ("Completed", None)
    else:
        assert status["condition"] == ("Progressing" if expected.active else "Available")
        found = status.get("nextTransitionTime")
        at = None if found is None else int(datetime.fromisoformat(found).timestamp())
        assert next_change_agrees(at, expected, instant)
    assert server.hpa is not None
    in_force = (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"])
    assert in_force == (BOUNDS if expected.active else BASE)


@PROPERTY_SETTINGS
@given(cases())
@named_examples
def test_kubectl_spa_status_matches_the_reference(case_: tuple[int, Case]) -> None:
    instant, case = case_
    expected = expect(case, instant)
    autoscaler, schedule, *calendars = case.documents()
    objects = ClusterObjects(
        server="https://cluster.test",
        autoscalers=[autoscaler],
        schedules=[schedule],
        calendars=calendars,
    )
    report = build_status(objects, at=instant)
    assert report.errors == []
    (entry,) = status_document(report)["autoscalers"]
    assert entry["problems"] == []
    assert entry["wanted"]["activeSchedules"] == ([SCHEDULE] if expected.active else [])
    # `status` looks as far ahead as the reference.
    assert HORIZON_SECONDS == HORIZON
    transitions = [(t["time"], t["activeSchedules"] == [SCHEDULE]) for t in entry["transitions"]]
    assert transitions == [(format_instant(at), starts) for at, starts in expected.changes]
    (shown,) = entry["schedules"]
    if expected.completed:
        assert (shown["state"], shown["nextChange"]) == ("completed", None)
    else:
        found = shown["nextChange"]
        at = None if found is None else int(datetime.fromisoformat(found).timestamp())
        assert next_change_agrees(at, expected, instant)


def test_the_reference_says_what_the_docs_say_of_the_named_cases() -> None:
    """The reference itself, on the docs' examples (docs/schedules.md, "How the date rules
    compose"), so that the properties above hold every surface to the documented answer."""
    instant, case = NAMED_CASES["skip-calendar-beside-holidays-only"]
    expected = expect(case, instant)
    assert expected.changes == []
    assert [(day.isoformat(), why) for _, day, why in expected.skipped] == [
        ("2026-11-26", "calendar: Calendar/thanksgiving-freeze")
    ]
    instant, case = NAMED_CASES["only-calendar-beside-holidays-only"]
    expected = expect(case, instant)
    starts = [
        datetime.fromtimestamp(at, UTC).isoformat() for at, starts in expected.changes if starts
    ]
    assert starts == ["2026-12-25T00:00:00+00:00"]
    assert expected.skipped == []
