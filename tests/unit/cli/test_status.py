"""`kubectl spa status` without a cluster: the report built from objects as the API server
returns them (docs/status.md). tests/integration/test_kubectl_spa.py runs it on a real one."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from spa.api import (
    InvalidObject,
    compile_schedule,
    parse_schedule,
)
from spa.api.adoption import ADOPT_ANNOTATION
from spa.cli import main
from spa.cli.status_render import render_status
from spa.cli.status_report import HpaState, build_status
from spa.schedule import State
from tests.unit.status_objects import AT, PUSH, SERVER, event, hpa_for, objects, users_hpa
from tests.unit.status_objects import live_autoscaler as _autoscaler
from tests.unit.status_objects import live_schedule as _schedule


def test_in_sync_with_wanted_bounds_next_transitions_and_local_times() -> None:
    spa = _autoscaler(status={"condition": "Available"})
    report = build_status(objects(autoscalers=[spa], hpas=[hpa_for(spa, 10, 20)]), at=AT)
    [entry] = report.autoscalers
    assert entry.hpa.state is HpaState.IN_SYNC
    assert entry.plan is not None
    assert entry.plan.state == State(10, 20, ("push",))
    document = json.loads(render_status(report, "json"))
    [web] = document["autoscalers"]
    assert web["base"] == {"minReplicas": 3, "maxReplicas": 10}
    assert web["wanted"] == {"minReplicas": 10, "maxReplicas": 20, "activeSchedules": ["push"]}
    assert web["hpa"] == {
        "state": "InSync",
        "minReplicas": 10,
        "maxReplicas": 20,
        "currentReplicas": 4,
        "desiredReplicas": 10,
        "detail": None,
    }
    assert web["transitions"][0] == {
        "time": "2026-11-23T04:00:00Z",
        "minReplicas": 3,
        "maxReplicas": 10,
        "activeSchedules": [],
        "local": [{"timeZone": "Asia/Tokyo", "time": "2026-11-23T13:00:00+09:00"}],
    }
    assert web["schedules"][0]["state"] == "active"
    table = render_status(report, "table")
    assert "shop/web   Available   HPA in sync" in table
    first = "2026-11-23T04:00:00Z   3     10    -        Mon 2026-11-23 13:00 JST Asia/Tokyo"
    assert first in table
    assert "  active: push" in table
    # The same structure in YAML.
    assert yaml.safe_load(render_status(report, "yaml")) == document


@pytest.mark.parametrize(
    ("hpa", "state"),
    [
        (lambda spa: hpa_for(spa, 3, 10), HpaState.OUT_OF_SYNC),  # the window is not applied
        (lambda spa: None, HpaState.MISSING),
        (
            lambda spa: {**hpa_for(spa, 10, 20), "metadata": {"name": "web", "namespace": "shop"}},
            HpaState.NOT_OWNED,
        ),
    ],
)
def test_hpa_states(hpa: Any, state: HpaState) -> None:
    spa = _autoscaler()
    found = hpa(spa)
    report = build_status(objects(autoscalers=[spa], hpas=[found] if found else []), at=AT)
    assert report.autoscalers[0].hpa.state is state


@pytest.mark.parametrize(
    ("annotations", "hpa", "state", "detail"),
    [
        (
            {},
            users_hpa(),
            HpaState.NOT_OWNED,
            'annotation autoscaling.d-kuro.github.io/adopt="true"',
        ),
        ({ADOPT_ANNOTATION: "true"}, users_hpa(), HpaState.WILL_ADOPT, None),
        (
            {ADOPT_ANNOTATION: "true"},
            users_hpa("api"),
            HpaState.ADOPTION_REFUSED,
            "its scaleTargetRef is Deployment/api (apps/v1), not the ScheduledPodAutoscaler's "
            "Deployment/web (apps/v1)",
        ),
        (
            {ADOPT_ANNOTATION: "true"},
            users_hpa(
                ownerReferences=[
                    {"apiVersion": "v1", "kind": "Foo", "name": "x", "uid": "u", "controller": True}
                ]
            ),
            HpaState.ADOPTION_REFUSED,
            "it is controlled by Foo x",
        ),
        (
            {},
            users_hpa(labels={"app.kubernetes.io/managed-by": "scheduled-pod-autoscaler"}),
            HpaState.WILL_ADOPT,  # ours, left by an orphan deletion: taken back unasked
            None,
        ),
    ],
)
def test_an_hpa_of_somebody_else_says_whether_the_controller_adopts_it(
    annotations: dict[str, str], hpa: dict[str, Any], state: HpaState, detail: str | None
) -> None:
    spa = _autoscaler()
    spa["metadata"]["annotations"] = annotations
    report = build_status(objects(autoscalers=[spa], hpas=[hpa]), at=AT)
    [entry] = report.autoscalers
    assert entry.hpa.state is state
    if detail is None:
        assert entry.hpa.detail is None
    else:
        assert entry.hpa.detail is not None
        assert detail in entry.hpa.detail
        assert detail in render_status(report, "table").splitlines()[2]
    [web] = json.loads(render_status(report, "json"))["autoscalers"]
    assert web["hpa"]["state"] == state.value
    assert web["hpa"]["detail"] == entry.hpa.detail


def test_hpas_that_cannot_be_read_are_unknown_and_said_so() -> None:
    report = build_status(objects(problems=["not allowed to list horizontalpodautoscalers"]), at=AT)
    assert report.autoscalers[0].hpa.state is HpaState.UNKNOWN
    assert "Not shown: not allowed to list horizontalpodautoscalers" in render_status(
        report, "table"
    )


def test_degraded_objects_and_invalid_schedules_are_told_once() -> None:
    # What the controller writes into the Schedule's status: the message of the same checks.
    with pytest.raises(InvalidObject) as invalid:
        compile_schedule(
            parse_schedule(
                _schedule(
                    name="typo",
                    type="Daily",
                    startTime="08:00",
                    endTime="09:00",
                    timeZone="Europe/Londn",
                )
            ).spec
        )
    typo_message = str(invalid.value)
    assert typo_message.startswith("spec.timeZone: unknown time zone 'Europe/Londn'")
    spa = _autoscaler(
        status={
            "condition": "Degraded",
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "HPAConflict", "message": "taken"}
            ],
        }
    )
    typo = _schedule(
        name="typo",
        status={"condition": "Degraded", "message": typo_message},
        type="Daily",
        startTime="08:00",
        endTime="09:00",
        timeZone="Europe/Londn",
    )
    orphan = _schedule(
        name="orphan", target="gone", type="Daily", startTime="08:00", endTime="09:00"
    )
    report = build_status(objects(autoscalers=[spa], schedules=[PUSH, typo, orphan]), at=AT)
    [entry] = report.autoscalers
    assert [(p.kind, p.name, p.message) for p in entry.problems] == [
        ("ScheduledPodAutoscaler", "web", "taken"),
        ("Schedule", "typo", typo_message),
    ]
    [error] = report.errors
    assert (error.kind, error.name, error.file, error.document) == (
        "Schedule",
        "orphan",
        SERVER,
        None,
    )
    assert error.message == (
        "ScheduledPodAutoscaler shop/gone does not exist (the Schedule is Degraded until it does)"
    )
    # Asking for one SPA leaves out what belongs to none.
    assert build_status(objects(schedules=[PUSH, orphan]), at=AT, name="web").errors == []


def test_events_of_the_spa_and_its_schedules_newest_first() -> None:
    events = [
        event("ScheduledPodAutoscaler", "web", "ScheduleStarted", "2026-11-23T02:50:00Z"),
        event(
            "Schedule",
            "push",
            "NotApplied",
            "2026-11-23T02:58:30Z",
            type="Warning",
            count=3,
        ),
        event("ScheduledPodAutoscaler", "other", "ScheduleStarted", "2026-11-23T02:59:00Z"),
        event("Schedule", "someone-elses", "InvalidSchedule", "2026-11-23T02:59:00Z"),
    ]
    report = build_status(objects(events=events), at=AT)
    assert [(e.reason, e.name) for e in report.autoscalers[0].events] == [
        ("NotApplied", "push"),
        ("ScheduleStarted", "web"),
    ]
    table = render_status(report, "table")
    assert "1m    Warning   NotApplied        Schedule/push" in table
    assert "NotApplied of push (x3)" in table
    assert "10m   Normal    ScheduleStarted   ScheduledPodAutoscaler/web" in table


def test_one_spa_by_name_and_wide_output() -> None:
    report = build_status(
        objects(autoscalers=[_autoscaler(), _autoscaler(name="api", metadata={"uid": "uid-api"})]),
        at=AT,
        name="web",
    )
    assert [a.name for a in report.autoscalers] == ["web"]
    wide = render_status(report, "wide")
    assert "  schedules:" in wide
    assert "push       Daily   daily 11:50-13:00   Asia/Tokyo" in wide
    assert "schedules:" not in render_status(report, "table")


def test_names_as_kubectl_get_prints_them() -> None:
    report = build_status(
        objects(autoscalers=[_autoscaler(), _autoscaler(name="api", metadata={"uid": "uid-api"})]),
        at=AT,
    )
    assert render_status(report, "name") == (
        "scheduledpodautoscaler.autoscaling.d-kuro.github.io/api\n"
        "scheduledpodautoscaler.autoscaling.d-kuro.github.io/web"
    )
    assert render_status(build_status(objects(autoscalers=[]), at=AT), "name") == ""


@pytest.mark.parametrize("output", ["table", "wide"])
def test_no_headers_leaves_out_the_heading_line(output: str) -> None:
    report = build_status(objects(), at=AT)
    full = render_status(report, output)
    bare = render_status(report, output, headers=False)
    assert full.startswith(f"Status at 2026-11-23T03:00:00Z from {SERVER}\n\n")
    assert full.split("\n", 2)[2] == bare
    assert bare.startswith("shop/web   ")
    # JSON and YAML have no headers to leave out.
    assert render_status(report, "json", headers=False) == render_status(report, "json")


def test_a_selection_leaves_out_the_schedules_of_other_autoscalers() -> None:
    # Listed with `-l`: only "web" came back; "api" exists but was not selected.
    api_schedule = _schedule(
        name="api-push", target="api", type="Daily", startTime="1:00", endTime="2:00"
    )
    found = objects(autoscalers=[_autoscaler()], schedules=[PUSH, api_schedule])
    selected = build_status(found, at=AT, selection=True)
    assert [a.name for a in selected.autoscalers] == ["web"]
    assert selected.errors == []
    # Without a selection the same objects mean the Schedule's SPA does not exist.
    [orphan] = build_status(found, at=AT).errors
    assert (orphan.name, orphan.field) == ("api-push", "spec.scaleTargetRef.name")


def test_a_name_and_a_selector_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["status", "web", "-l", "team=shop"])
    assert exited.value.code == 2
    assert "status: error: NAME cannot be given with -l/--selector" in capsys.readouterr().err


def test_a_raise_written_ahead_of_its_boundary_is_said() -> None:
    """The RaisedAhead condition while True (docs/schedules.md, "Raises ahead of a shared
    boundary"), in the text and the JSON; once it is False, as the last raise ahead."""
    message = (
        "raised ahead of 2026-11-23T08:00:00Z for a fleet of 3,200 SPAs at that boundary: "
        "written from 2026-11-23T07:59:36Z"
    )
    ahead = {"type": "RaisedAhead", "status": "True", "reason": "FleetAhead", "message": message}
    spa = _autoscaler(status={"condition": "Available", "conditions": [ahead]})
    report = build_status(objects(autoscalers=[spa], schedules=[PUSH]), at=AT)
    [entry] = report.autoscalers
    assert entry.raised_ahead == message
    assert f"  raised ahead: {message}" in render_status(report, output="table").splitlines()
    document = json.loads(render_status(report, output="json"))
    assert document["autoscalers"][0]["raisedAhead"] == message
    assert document["autoscalers"][0]["lastRaisedAhead"] is None
    # From the boundary on (and a shard writes it only then), the last raise ahead.
    last = f"its boundary came; the last raise ahead of one: {message}"
    past = {**ahead, "status": "False", "reason": "BoundaryReached", "message": last}
    spa = _autoscaler(status={"condition": "Available", "conditions": [past]})
    report = build_status(objects(autoscalers=[spa], schedules=[PUSH]), at=AT)
    [entry] = report.autoscalers
    assert entry.raised_ahead is None
    assert entry.last_raised_ahead == last
    table = render_status(report, output="table").splitlines()
    assert f"  last raised ahead: {last}" in table
    assert not [line for line in table if line.startswith("  raised ahead:")]
    document = json.loads(render_status(report, output="json"))
    assert document["autoscalers"][0]["raisedAhead"] is None
    assert document["autoscalers"][0]["lastRaisedAhead"] == last
    # Never raised ahead: neither.
    [entry] = build_status(
        objects(autoscalers=[_autoscaler()], schedules=[PUSH]), at=AT
    ).autoscalers
    assert (entry.raised_ahead, entry.last_raised_ahead) == (None, None)
