"""The SPA controller's decisions, without an API server: table tests of each rule, and
properties checked against a tiny model of the API server (it stores what it is sent, may spell
values its own way, and may refuse a spec, tests/unit/spa_model.py), driven by the real
Reconciler."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spa.api import FieldError, InvalidObject, parse_scheduled_pod_autoscaler, wire
from spa.controller.decide import (
    FOREIGN_HPA_RECHECK_SECONDS,
    Attempts,
    AutoscalerStatusWrite,
    BackOfQueue,
    CreateHpa,
    Event,
    EventType,
    Final,
    HpaWritten,
    Memory,
    Plan,
    Reason,
    Refusal,
    ScaleUp,
    SetOwners,
    Snapshot,
    WakeUp,
    absorb,
    compile_window,
    decide,
    derive,
    ends_after,
)
from spa.controller.decide.hpa import dropped_fields
from spa.controller.decide.scaleup import one_request_raise, plan_scale_up
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_LABEL
from spa.runtime import Result
from spa.schedule import State
from tests.unit.spa_model import (
    KEY,
    MONDAY_1030,
    OURS,
    Server,
    at,
    autoscaler,
    hpa_writes,
    kilo,
    schedule,
)


def snapshot(
    instant: int, obj: dict[str, Any] | None, schedules: list[dict[str, Any]], **more: Any
) -> Snapshot:
    """A snapshot of the SPA `obj` with no HPA yet, as the reconciler builds it (plain data:
    what is derived from the objects is computed before, without the reconciler's memos)."""
    return Snapshot(
        key=KEY,
        instant=instant,
        autoscaler=obj,
        schedules=schedules,
        hpa=more.pop("hpa", None),
        live_owners=more.pop("live_owners", frozenset()),
        hpa_api_version="autoscaling/v2",
        derived=derive(
            wire.typed_optional(wire.ScheduledPodAutoscaler, obj),
            wire.typed_list(wire.Schedule, schedules),
            more.get("calendars"),
        ),
        **more,
    )


def final(plan: Plan) -> Final:
    assert isinstance(plan.action, Final)
    return plan.action


def retried(plan: Final) -> bool:
    """The key is retried with its backoff (a refusal, a loop withheld)."""
    return isinstance(plan.requeue, WakeUp) and plan.requeue.backoff


# -- table tests ---------------------------------------------------------------------------------


def test_a_write_that_changes_the_hpa_ends_the_reconcile_with_the_next_boundary_it_found() -> None:
    """No decision after an HPA write that changed it (issue 36; before, a decide that could
    only requeue): its step carries "then back of the queue", and its outcome keeps the
    boundary after it, which the decision that asked for the write computed."""
    schedules = [schedule("peak", owner=OURS)]
    write = decide(snapshot(at(9), autoscaler(), schedules))
    assert isinstance(write.action, CreateHpa)
    assert write.action.then == BackOfQueue()
    assert write.memory is not None
    assert write.memory.following_boundary == at(10)
    assert write.memory.expected_boundary is None  # the write's lag is measured against it
    answer: Any = {"metadata": {"resourceVersion": "7"}, "spec": {}}
    changed = HpaWritten(write.action.wanted, answer, changed=True)
    assert ends_after(write.action, changed) == BackOfQueue()
    after = absorb(write.memory, changed)
    assert (after.expected_boundary, after.following_boundary) == (at(10), None)
    # A write that changed nothing is decided on again, which finds the boundary itself.
    unchanged = replace(changed, changed=False)
    assert ends_after(write.action, unchanged) is None
    assert absorb(write.memory, unchanged).following_boundary == at(10)


def test_a_new_autoscaler_gets_its_hpa_first_and_its_statuses_on_the_next_pass() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    plan, memory, _ = server.reconcile(at(9))
    assert server.writes == ["create"]
    assert plan.requeue == BackOfQueue()
    assert not plan.statuses
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (3, 10)
    plan, memory, _ = server.reconcile(at(9), memory)
    assert hpa_writes(server) == ["create"]
    assert server.writes.count("status ScheduledPodAutoscaler") == 1
    assert server.writes.count("status Schedule") == 1
    assert plan.requeue == WakeUp(at=at(10))
    assert server.autoscaler is not None
    status = server.autoscaler["status"]
    assert status["condition"] == "Available"
    assert (status["minReplicas"], status["maxReplicas"]) == (3, 10)
    assert status["conditions"][0]["status"] == "True"
    assert server.schedules[0]["status"]["condition"] == "Available"
    assert server.schedules[0]["status"]["nextTransitionTime"] == "2026-11-16T10:00:00Z"


def test_a_window_start_is_one_patch_then_the_statuses_and_events() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    plan, memory, _ = server.reconcile(at(10), memory)
    assert hpa_writes(server) == ["create", "patch"]
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (5, 20)
    plan, memory, _ = server.reconcile(at(10), memory)
    assert hpa_writes(server) == ["create", "patch"]
    assert [(e.type, e.reason) for e in plan.events] == [(EventType.NORMAL, "ScheduleStarted")]
    assert server.autoscaler is not None
    assert server.autoscaler["status"]["activeSchedules"] == ["peak"]
    assert server.schedules[0]["status"]["condition"] == "Progressing"
    assert plan.requeue == WakeUp(at=at(11))


def test_a_raise_of_min_replicas_asks_for_one_scale_up_and_a_fall_asks_for_none() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    memory = None
    for hour in (9, 9, 10, 10, 10, 11, 11):
        _, memory, _ = server.reconcile(at(hour), memory)
    # Only the window's start raises minReplicas (to 5); the creation raised nothing and the
    # end lowers it: both are left to the HPA controller.
    assert server.scale_ups == [ScaleUp("apps/v1", "Deployment", "web", 5)]


def test_putting_back_a_lowered_min_replicas_is_no_scale_up() -> None:
    # In the window (min 5), somebody lowers the HPA's minReplicas to 1: the controller puts 5
    # back, which raises the HPA's minReplicas but not the effective one; no boundary, so no
    # scale-up (docs/schedules.md, "Immediate scale-up": at boundaries only).
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    memory = None
    for hour in (9, 9, 10, 10):
        _, memory, _ = server.reconcile(at(hour), memory)
    assert server.scale_ups == [ScaleUp("apps/v1", "Deployment", "web", 5)]
    assert server.hpa is not None
    server.hpa["spec"]["minReplicas"] = 1
    server.hpa["metadata"]["resourceVersion"] = str(server.version + 1)
    server.version += 1
    _, memory, _ = server.reconcile(at(10) + 60, memory)
    assert server.hpa["spec"]["minReplicas"] == 5
    assert hpa_writes(server)[-1] == "patch"
    assert server.scale_ups == [ScaleUp("apps/v1", "Deployment", "web", 5)]
    # After a restart nothing is remembered: the HPA's own minReplicas is the measure.
    server.hpa["spec"]["minReplicas"] = 1
    server.version += 1
    server.hpa["metadata"]["resourceVersion"] = str(server.version)
    server.reconcile(at(10) + 120)
    assert server.scale_ups[1:] == [ScaleUp("apps/v1", "Deployment", "web", 5)]


def test_scale_up_immediately_false_never_asks_for_a_scale_up() -> None:
    obj = autoscaler()
    obj["spec"]["scaleUpImmediately"] = False
    server = Server(obj, [schedule("peak", owner=OURS)])
    memory = None
    for hour in (9, 9, 10, 10):
        _, memory, _ = server.reconcile(at(hour), memory)
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5
    assert server.scale_ups == []


def test_the_last_scale_up_is_the_autoscalers_condition() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    outcome = ("False", "NoScaleSubresource", "Deployment has no scale subresource; ...")
    server.reconcile(at(9), Memory(scale_up=outcome))
    _, memory, _ = server.reconcile(at(9), Memory(scale_up=outcome))
    assert server.autoscaler is not None
    conditions = {c["type"]: c for c in server.autoscaler["status"]["conditions"]}
    assert (conditions["ImmediateScaleUp"]["status"], conditions["ImmediateScaleUp"]["reason"]) == (
        "False",
        "NoScaleSubresource",
    )
    assert conditions["Ready"]["status"] == "True"
    assert memory.scale_up == outcome


def test_the_scale_up_event_waits_for_the_final_plan() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    scaled = Event(server.autoscaler or {}, EventType.NORMAL, "ScaledUp", "raised ...")
    _, memory, _ = server.reconcile(at(9))
    plan, memory, _ = server.reconcile(at(9), replace(memory, scale_up_event=scaled))
    assert isinstance(plan, Final)
    assert scaled in plan.events
    assert memory.scale_up_event is None
    plan, _, _ = server.reconcile(at(9), memory)
    assert scaled not in plan.events


def test_the_autoscalers_lead_time_moves_its_schedules_starts() -> None:
    obj = autoscaler()
    obj["spec"]["leadTime"] = "10m"
    server = Server(obj, [schedule("peak", owner=OURS), schedule("own", leadTime="0", owner=OURS)])
    memory = None
    for instant in (at(9), at(9), at(9, 50), at(9, 50)):
        plan, memory, _ = server.reconcile(instant, memory)
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5
    peak, own = server.schedules
    assert peak["status"]["condition"] == "Progressing"
    assert own["status"]["condition"] == "Available"
    assert own["status"]["nextTransitionTime"] == "2026-11-16T10:00:00Z"
    assert plan.requeue == WakeUp(at=at(10))


def test_the_servers_spelling_is_learned_by_one_dry_run_and_never_written_again() -> None:
    server = Server(autoscaler(), [])
    _, memory, _ = server.reconcile(at(9))
    assert server.hpa is not None
    assert server.hpa["spec"]["metrics"][0]["pods"]["target"] == {
        "type": "AverageValue",
        "averageValue": "1k",
    }
    # After a restart nothing is remembered: the server is asked, once, without a write.
    _plan, memory, _ = server.reconcile(at(9), Memory())
    assert server.writes[1:] == ["dry-run", "status ScheduledPodAutoscaler"]
    for _ in range(3):
        server.reconcile(at(9), memory)
    assert server.writes[1:] == ["dry-run", "status ScheduledPodAutoscaler"]


def _without_tolerance(spec: dict[str, Any]) -> dict[str, Any]:
    """The spelling of an API server that does not serve behavior tolerance (a release before
    1.33, or its feature gate off): it prunes the field silently."""
    spelled = kilo(spec)
    for rules in (spelled.get("behavior") or {}).values():
        rules.pop("tolerance", None)
    return spelled


def _with_tolerance() -> dict[str, Any]:
    obj = autoscaler()
    obj["spec"]["horizontalPodAutoscalerSpec"]["behavior"] = {
        "scaleUp": {"tolerance": "0.05"},
        "scaleDown": {"tolerance": "50m", "stabilizationWindowSeconds": 60},
    }
    return obj


def _dropped_warnings(plans: list[Final]) -> list[str]:
    return [
        event.message
        for plan in plans
        for event in plan.events
        if event.reason == Reason.HPA_FIELD_DROPPED and event.type == EventType.WARNING
    ]


def test_a_field_the_server_drops_is_said_once_and_never_written_again() -> None:
    server = Server(_with_tolerance(), [schedule("peak", owner=OURS)], spell=_without_tolerance)
    plans = []
    memory = None
    for hour in (9, 9, 9, 9, 10, 10, 10):
        plan, memory, _ = server.reconcile(at(hour), memory)
        plans.append(plan)
    # One create, one patch at the window's start: the missing field writes nothing more.
    assert hpa_writes(server) == ["create", "patch"]
    assert server.hpa is not None
    assert "tolerance" not in server.hpa["spec"]["behavior"]["scaleUp"]
    assert _dropped_warnings(plans) == [
        "the API server stored the HorizontalPodAutoscaler without "
        "behavior.scaleUp.tolerance, behavior.scaleDown.tolerance: this Kubernetes release "
        "does not serve the field, or its feature gate is off (behavior tolerance: Kubernetes "
        "1.33 and later, feature gate HPAConfigurableTolerance); the HPA runs without it"
    ]
    assert server.autoscaler is not None
    assert server.autoscaler["status"]["condition"] == "Available"
    # A restart remembers nothing: one dry-run, no write, and the Warning once more.
    plan, memory, _ = server.reconcile(at(10) + 60)
    plans = [plan]
    for _ in range(3):
        plan, memory, _ = server.reconcile(at(10) + 120, memory)
        plans.append(plan)
    assert hpa_writes(server) == ["create", "patch"]
    assert server.writes.count("dry-run") == 1
    assert len(_dropped_warnings(plans)) == 1


def test_a_field_the_server_keeps_is_not_warned_about() -> None:
    server = Server(_with_tolerance(), [schedule("peak", owner=OURS)])
    plans = []
    memory = None
    for hour in (9, 9, 10, 10):
        plan, memory, _ = server.reconcile(at(hour), memory)
        plans.append(plan)
    assert server.hpa is not None
    assert server.hpa["spec"]["behavior"]["scaleUp"]["tolerance"] == "0.05"
    assert _dropped_warnings(plans) == []
    assert memory.reported_dropped == ()


@pytest.mark.parametrize(
    ("desired", "stored", "expected"),
    [
        (
            {"behavior": {"scaleUp": {"tolerance": "0.05"}}},
            {"behavior": {"scaleUp": {}}},
            ["behavior.scaleUp.tolerance"],
        ),
        ({"behavior": {"scaleUp": {"tolerance": "0.05"}}}, {}, ["behavior"]),
        # Spelling, not unknown fields: empty values dropped or defaulted, lists replaced.
        ({"metrics": []}, {"metrics": [{"type": "Resource"}]}, []),
        (
            {"metrics": [{"external": {"metric": {"name": "q", "selector": {"matchLabels": {}}}}}]},
            {"metrics": [{"external": {"metric": {"name": "q"}}}]},
            [],
        ),
        (
            {"metrics": [{"type": "Pods", "pods": {"x": 1}}]},
            {"metrics": [{"type": "Pods"}]},
            ["metrics[0].pods"],
        ),
        ({"minReplicas": 3}, {"minReplicas": 3, "extra": 1}, []),
    ],
)
def test_dropped_fields_are_the_values_the_server_did_not_store(
    desired: dict[str, Any], stored: dict[str, Any], expected: list[str]
) -> None:
    assert list(dropped_fields(desired, stored)) == expected


def test_a_target_the_hpa_scaled_to_zero_is_raised_when_min_replicas_rises_from_zero() -> None:
    obj = autoscaler()
    hpa = obj["spec"]["horizontalPodAutoscalerSpec"]
    hpa["minReplicas"] = 0
    hpa["metrics"] = [
        {
            "type": "External",
            "external": {
                "metric": {"name": "queue_depth"},
                "target": {"type": "AverageValue", "averageValue": "30"},
            },
        }
    ]
    server = Server(obj, [schedule("peak", owner=OURS)], target_replicas=0)
    memory = None
    for hour in (9, 9, 10, 10):
        _, memory, _ = server.reconcile(at(hour), memory)
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5
    assert server.scaled_to == [5]


def test_a_window_of_zero_without_an_object_or_external_metric_is_refused_alone() -> None:
    # The SPA scales on a Pods metric: the API server would refuse minReplicas 0. The Schedule
    # is refused on its own, as `spa plan` refuses it; the other window still applies.
    server = Server(
        autoscaler(),
        [
            schedule("night", owner=OURS, minReplicas=0),
            schedule("peak", owner=OURS, start="10:00", end="11:00"),
        ],
    )
    plans = []
    memory = None
    for hour in (9, 9, 10, 10, 10):
        plan, memory, _ = server.reconcile(at(hour), memory)
        plans.append(plan)
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (5, 20)
    assert server.autoscaler is not None
    assert server.autoscaler["status"]["condition"] == "Available"
    assert server.autoscaler["status"]["activeSchedules"] == ["peak"]
    night = next(s for s in server.schedules if s["metadata"]["name"] == "night")
    expected = (
        "spec.minReplicas: must not be 0: ScheduledPodAutoscaler shop/web has no Object or "
        "External metric (scale to zero: the API server requires such a metric, and its "
        'HPAScaleToZero feature gate; docs/schedules.md, "Scale to zero")'
    )
    assert (night["status"]["condition"], night["status"]["message"]) == ("Degraded", expected)
    warnings = [
        event.message
        for plan in plans
        for event in plan.events
        if event.reason == Reason.INVALID_SCHEDULE and event.obj is not server.autoscaler
    ]
    assert warnings.count(expected) == 1


def test_a_target_at_zero_is_left_alone_when_min_replicas_rises_from_one() -> None:
    # The control of the test above: from a minReplicas of 1, 0 replicas are somebody's
    # choice (the HPA is off), and the scale-up leaves them.
    server = Server(autoscaler(minReplicas=None), [schedule("peak", owner=OURS)], target_replicas=0)
    server.autoscaler = autoscaler()
    assert server.autoscaler is not None
    server.autoscaler["spec"]["horizontalPodAutoscalerSpec"]["minReplicas"] = 1
    memory = None
    for hour in (9, 9, 10, 10):
        _, memory, _ = server.reconcile(at(hour), memory)
    assert server.scale_ups == [ScaleUp("apps/v1", "Deployment", "web", 5)]
    assert server.scaled_to == []


def test_an_edit_of_the_hpa_is_undone() -> None:
    server = Server(autoscaler(), [])
    _, memory, _ = server.reconcile(at(9))
    assert server.hpa is not None
    server.hpa["spec"]["minReplicas"] = 1
    server.hpa["metadata"]["resourceVersion"] = "999"
    server.reconcile(at(9), memory)
    assert hpa_writes(server) == ["create", "patch"]
    assert server.hpa["spec"]["minReplicas"] == 3


def test_an_hpa_of_somebody_else_is_left_alone_and_reported_once() -> None:
    foreign = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "5"},
        "spec": {"minReplicas": 1, "maxReplicas": 2},
    }
    server = Server(autoscaler(), [], hpa=foreign)
    plan, memory, _ = server.reconcile(at(9))
    assert hpa_writes(server) == []
    assert [e.reason for e in plan.events] == ["HPAConflict"]
    assert plan.requeue == WakeUp(recheck_after=FOREIGN_HPA_RECHECK_SECONDS)
    assert server.autoscaler is not None
    assert server.autoscaler["status"]["condition"] == "Degraded"
    assert memory.foreign_hpa
    plan, memory, _ = server.reconcile(at(9), memory)
    assert [e.reason for e in plan.events] == []


def test_an_orphaned_hpa_with_our_label_is_adopted() -> None:
    orphan = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "resourceVersion": "5",
            "labels": {MANAGED_BY_LABEL: FIELD_MANAGER},
        },
        "spec": {"minReplicas": 1, "maxReplicas": 2},
    }
    server = Server(autoscaler(), [], hpa=orphan)
    server.reconcile(at(9))
    assert hpa_writes(server) == ["patch"]
    assert server.hpa is not None
    assert server.hpa["metadata"]["ownerReferences"] == [OURS]


@pytest.mark.parametrize("code", [400, 422])
def test_an_invalid_spec_still_gets_the_bounds_of_the_schedules(code: int) -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(at(9))
    server.refuse = code
    plan, memory, _ = server.reconcile(at(10), memory)
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (5, 20)
    assert retried(plan)
    assert plan.problem is not None
    assert "still follow the Schedules" in plan.problem
    assert [e.reason for e in plan.events if e.type is EventType.WARNING] == ["HPARejected"]
    assert server.autoscaler is not None
    assert server.autoscaler["status"]["condition"] == "Degraded"
    # The retry refused again says nothing new and writes nothing.
    before = list(server.writes)
    plan, memory, _ = server.reconcile(at(10), memory)
    assert server.writes == before
    assert retried(plan)
    assert [e.reason for e in plan.events if e.type is EventType.WARNING] == []


def test_a_forbidden_hpa_is_not_patched_at_all() -> None:
    server = Server(autoscaler(), [], refuse=403)
    plan, _, _ = server.reconcile(at(9))
    assert hpa_writes(server) == []
    assert server.hpa is None
    assert retried(plan)
    assert plan.problem is not None
    assert "forbade" in plan.problem
    assert plan.report is not None
    assert plan.report.replicas is None


def test_a_write_that_does_not_converge_is_not_repeated() -> None:
    # A server that answers one spelling but stores another.
    server = Server(autoscaler(), [], spell=lambda spec: spec)
    _, memory, _ = server.reconcile(at(9))
    assert server.hpa is not None
    server.hpa["spec"]["minReplicas"] = 1  # stored differently, same resourceVersion
    plan, memory, _ = server.reconcile(at(9), memory)
    assert hpa_writes(server) == ["create"]
    assert retried(plan)
    assert [e.reason for e in plan.events] == ["HPANotConverging"]


def test_schedules_are_adopted_and_a_foreign_controller_is_respected() -> None:
    theirs = {
        "apiVersion": "example.com/v1",
        "kind": "Campaign",
        "name": "x",
        "uid": "u",
        "controller": True,
    }
    server = Server(
        autoscaler(),
        [schedule("mine"), schedule("claimed", owner=theirs, start="09:00", end="12:00")],
    )
    _, memory, _ = server.reconcile(at(9))
    assert server.writes[:2] == ["owner", "create"]
    assert server.schedules[0]["metadata"]["ownerReferences"] == [OURS]
    assert server.schedules[1]["metadata"]["ownerReferences"] == [theirs]
    _, memory, _ = server.reconcile(at(10), memory)
    _, memory, _ = server.reconcile(at(10), memory)
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5
    assert server.schedules[1]["status"]["condition"] == "Degraded"
    assert "Campaign x" in server.schedules[1]["status"]["message"]


def test_the_oldest_schedules_win_beyond_the_limit() -> None:
    schedules = [
        schedule(f"s{i}", owner=OURS, created=f"2026-11-0{i + 1}T00:00:00Z") for i in range(3)
    ]
    server = Server(autoscaler(), list(reversed(schedules)))
    snapshot_plan = final(
        decide(
            snapshot(
                at(9),
                server.autoscaler,
                server.schedules,
                attempts=Attempts(hpa_refusal=Refusal(403, "no")),
                max_schedules=2,
            )
        )
    )
    refused = [w for w in snapshot_plan.statuses if w.status.model_dump().get("message")]
    assert [w.obj["metadata"]["name"] for w in refused] == ["s2"]
    assert "TooManySchedules" in [e.reason for e in snapshot_plan.events]


def test_without_its_autoscaler_a_schedule_is_released_from_a_live_owner_then_degraded() -> None:
    other = {**OURS, "uid": "uid-other", "name": "old"}
    server = Server(
        None,
        [schedule("moved", owner=other), schedule("early")],
        live_owners=frozenset({"uid-other"}),
    )
    server.reconcile(at(9))
    assert server.writes[0] == "owner"
    assert "ownerReferences" not in server.schedules[0]["metadata"]  # none left
    assert server.forgotten
    assert hpa_writes(server) == []
    for obj in server.schedules:
        assert obj["status"]["condition"] == "Degraded"
        assert obj["status"]["message"] == "ScheduledPodAutoscaler shop/web not found"


def test_a_schedule_whose_owner_is_gone_is_left_to_the_garbage_collector() -> None:
    server = Server(None, [schedule("mine", owner=OURS)])
    server.reconcile(at(9))
    assert "owner" not in server.writes
    assert server.schedules[0]["metadata"]["ownerReferences"] == [OURS]


def test_a_dying_autoscaler_is_left_to_the_garbage_collector() -> None:
    server = Server(
        autoscaler(deletionTimestamp="2026-11-16T09:00:00Z"), [schedule("mine", owner=OURS)]
    )
    server.reconcile(at(9))
    assert server.forgotten
    assert server.writes == []


def test_an_invalid_autoscaler_is_degraded_with_its_schedules_and_warned_once() -> None:
    broken = autoscaler()
    broken["spec"]["horizontalPodAutoscalerSpec"]["minReplicas"] = 0
    server = Server(broken, [schedule("mine", owner=OURS)])
    plan, _, _ = server.reconcile(at(9))
    assert hpa_writes(server) == []
    assert plan.problem is not None
    assert "minReplicas" in plan.problem
    assert "InvalidSpec" in [e.reason for e in plan.events]
    assert broken["status"]["condition"] == "Degraded"
    assert server.schedules[0]["status"]["message"] == "ScheduledPodAutoscaler shop/web is invalid"
    plan, _, _ = server.reconcile(at(9))
    assert [e.reason for e in plan.events] == []


def test_an_invalid_schedule_does_not_stop_the_others() -> None:
    server = Server(
        autoscaler(),
        [schedule("bad", owner=OURS, timeZone="Europe/Nowhere"), schedule("good", owner=OURS)],
    )
    _, memory, _ = server.reconcile(at(10))
    plan, _, _ = server.reconcile(at(10), memory)
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5
    bad, good = server.schedules
    assert bad["status"]["condition"] == "Degraded"
    assert "timeZone" in bad["status"]["message"]
    assert good["status"]["condition"] == "Progressing"
    assert [e.reason for e in plan.events if e.type is EventType.WARNING] == ["InvalidSchedule"]


# Matches the CRD's pattern and length; too large for durationpy (and timedelta) to read.
HUGE = "99999999999999999999h"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"leadTime": HUGE}, f"spec.leadTime: must be at most 24h, got '{HUGE}'"),
        (
            {"type": "Cron", "schedule": "0 2 * * *", "duration": HUGE},
            f"spec.duration: must be from 1m to 744h (31 days), got {HUGE}",
        ),
    ],
)
def test_a_duration_too_large_to_read_degrades_its_schedule_alone(
    spec: dict[str, Any], message: str
) -> None:
    """Without CEL (Kubernetes before 1.25) nothing bounds the digits the CRD's pattern lets
    through: such a Schedule is reported like any invalid one, and its SPA still reconciles."""
    bad = schedule("bad", owner=OURS, **spec)
    if spec.get("type") == "Cron":
        del bad["spec"]["startTime"], bad["spec"]["endTime"]
    compiled, timeline = compile_window(bad)
    assert isinstance(compiled, InvalidObject)
    assert (compiled.errors, timeline) == ((FieldError(*message.split(": ", 1)),), None)
    server = Server(autoscaler(), [bad, schedule("good", owner=OURS)])
    _, memory, _ = server.reconcile(at(10))
    plan, _, _ = server.reconcile(at(10), memory)
    assert plan.problem is None
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5
    bad, good = server.schedules
    assert (bad["status"]["condition"], bad["status"]["message"]) == ("Degraded", message)
    assert good["status"]["condition"] == "Progressing"
    warnings = [(e.reason, e.message) for e in plan.events if e.type is EventType.WARNING]
    assert warnings == [("InvalidSchedule", message)]


def test_an_autoscaler_lead_time_too_large_to_read_is_its_invalid_spec() -> None:
    broken = autoscaler()
    broken["spec"]["leadTime"] = "30000000000h"
    server = Server(broken, [schedule("mine", owner=OURS)])
    plan, _, _ = server.reconcile(at(10))
    assert plan.problem == "invalid spec: spec.leadTime: must be at most 24h, got '30000000000h'"
    assert hpa_writes(server) == []
    assert "InvalidSpec" in [e.reason for e in plan.events]
    assert broken["status"]["condition"] == "Degraded"
    assert server.schedules[0]["status"]["message"] == "ScheduledPodAutoscaler shop/web is invalid"


def test_a_name_its_placeholders_cannot_carry_is_an_invalid_spec_not_a_write_loop() -> None:
    # With capacity, an SPA named over 63 characters was reconciled as if fine, and every
    # write of its placeholder (label capacity-for=<name>) was refused by the API server.
    broken = autoscaler(name="w" * 64)
    broken["spec"]["capacity"] = {"leadTime": "10m"}
    plan = final(decide(snapshot(at(9), broken, [schedule("mine", owner=OURS)])))
    assert plan.problem is not None
    assert plan.problem.startswith(
        "invalid spec: metadata.name: must be at most 63 characters with spec.capacity"
    )
    assert plan.capacity is None
    assert not retried(plan)
    [event] = [e for e in plan.events if e.obj is broken]
    assert (event.type, event.reason) == (EventType.WARNING, Reason.INVALID_SPEC)
    [written] = [s for s in plan.statuses if isinstance(s, AutoscalerStatusWrite)]
    assert written.status.condition == "Degraded"


def test_a_schedule_both_at_zero_and_short_of_capacity_lead_is_told_both() -> None:
    # One problem hid the other: fixed, the Schedule was refused again for the next.
    owner = autoscaler()
    owner["spec"]["capacity"] = {"leadTime": "5m"}
    both = schedule("both", owner=OURS, minReplicas=0, leadTime="10m")
    server = Server(owner, [both])
    _, memory, _ = server.reconcile(at(9))
    server.reconcile(at(9), memory)
    message = server.schedules[0]["status"]["message"]
    assert message.startswith("spec.minReplicas: must not be 0")
    assert "; spec.leadTime: must be at most the capacity.leadTime" in message


def test_a_lost_adoption_is_reported_and_the_others_still_apply() -> None:
    server = Server(autoscaler(), [schedule("mine")])
    plan = decide(
        snapshot(
            at(10),
            server.autoscaler,
            server.schedules,
            attempts=Attempts(owner_failures={"uid-mine": "the API server refused to adopt it"}),
        )
    )
    assert isinstance(plan.action, CreateHpa)
    assert plan.action.desired["spec"]["minReplicas"] == 3  # the refused Schedule does not apply
    assert not isinstance(plan.action, SetOwners)


# -- properties against the model ----------------------------------------------------------------

hours = st.integers(min_value=0, max_value=23)
windows = st.tuples(hours, hours, st.integers(1, 9), st.integers(10, 40)).filter(
    lambda w: w[0] != w[1]
)


@settings(max_examples=100, deadline=None)
@given(
    windows=st.lists(windows, max_size=4),
    instants=st.lists(st.integers(0, 3 * 24 * 60), min_size=1, max_size=6).map(sorted),
    start_with=st.sampled_from(["nothing", "stale", "orphan"]),
    restarts=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_each_change_is_one_write_then_nothing(
    windows: list[tuple[int, int, int, int]],
    instants: list[int],
    start_with: str,
    restarts: list[bool],
) -> None:
    """Whatever the Schedules, the starting HPA and the restarts (memory lost): each reconcile
    ends within the step bound; the HPA then has the engine's bounds for that instant; and a
    second reconcile at the same instant writes nothing at all."""
    schedules = [
        schedule(f"s{i}", owner=OURS, start=f"{a:02d}:00", end=f"{b:02d}:00", minReplicas=lo)
        for i, (a, b, lo, _hi) in enumerate(windows)
    ]
    for obj, (_a, _b, _lo, hi) in zip(schedules, windows, strict=True):
        obj["spec"]["maxReplicas"] = hi
    server = Server(autoscaler(), schedules)
    if start_with != "nothing":
        server.hpa = {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "web",
                "namespace": "shop",
                "resourceVersion": "7",
                "labels": {MANAGED_BY_LABEL: FIELD_MANAGER},
                "ownerReferences": [OURS] if start_with == "stale" else [],
            },
            "spec": {"minReplicas": 1, "maxReplicas": 1},
        }
    memory = Memory()
    for minutes, restart in zip(instants, restarts, strict=False):
        instant = MONDAY_1030 + 60 * minutes
        if restart:
            memory = Memory()
        plan, memory, steps = server.reconcile(instant, memory)
        if plan.requeue == BackOfQueue():
            plan, memory, steps = server.reconcile(instant, memory)
        assert plan.report is not None
        assert plan.report.replicas is not None
        assert server.hpa is not None
        bounds = (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"])
        assert bounds == plan.report.replicas
        assert isinstance(plan.requeue, WakeUp)
        assert plan.requeue.recheck_after is None
        assert not plan.requeue.backoff
        assert server.result == Result(requeue_at=plan.requeue.at)
        assert plan.problem is None
        before = list(server.writes)
        again, memory, steps = server.reconcile(instant, memory)
        assert server.writes == before, "a second reconcile wrote"
        assert steps == 1
        assert not again.events
        assert again.requeue == plan.requeue
        if plan.requeue.at is not None:
            assert plan.requeue.at > instant


# -- reasons ---------------------------------------------------------------------------------------


def test_every_reason_keeps_its_wire_value_and_is_documented() -> None:
    """The reasons are an interface (alerts, `kubectl describe`): their strings never change,
    and each is in the docs' tables (Ready's `Applied` is the only one that says nothing)."""
    assert sorted(Reason) == sorted(
        [
            "Adopted",
            "AdoptionFailed",
            "Applied",
            "BoundaryReached",
            "BufferRequested",
            "CapacityCreated",
            "CapacityNameTaken",
            "CapacityRemoved",
            "CapacityResized",
            "FleetAhead",
            "ForeignController",
            "HPAAdoptionRefused",
            "HPAConflict",
            "HPAFieldDropped",
            "HPANotConverging",
            "HPARejected",
            "InvalidAnnotation",
            "InvalidSchedule",
            "InvalidSpec",
            "MaxRaisedToMin",
            "NoScaleSubresource",
            "NotApplied",
            "NotRequested",
            "OverrideEnded",
            "OverrideExpired",
            "Overridden",
            "PauseEnded",
            "PauseExpired",
            "Paused",
            "PlaceholderRunning",
            "PodsRequested",
            "ScaleForbidden",
            "ScaleRefused",
            "ScaledUp",
            "ScheduleEnded",
            "ScheduleStarted",
            "TargetNotFound",
            "TooManySchedules",
            "Unsupported",
            "WindowLate",
            "WindowMissed",
        ]
    )
    docs = Path(__file__).parents[4] / "docs"
    text = (docs / "operations.md").read_text(encoding="utf-8")
    text += (docs / "schedules.md").read_text(encoding="utf-8")
    assert [r for r in Reason if r is not Reason.APPLIED and f"`{r}`" not in text] == []


@pytest.mark.parametrize(
    ("status", "expected", "tested"),
    [
        # Right after the HPA controller rescaled 2 -> 3: desiredReplicas is the target's count.
        ({"currentReplicas": 2, "desiredReplicas": 3}, 3, (3, 5)),
        # Metrics unreadable: only currentReplicas follows the target; desiredReplicas is 0.
        ({"currentReplicas": 2, "desiredReplicas": 0}, 2, (2, 5)),
        # Enough already by the status: only a read can tell it is still true.
        ({"currentReplicas": 7, "desiredReplicas": 7}, 7, None),
        # No status (the HPA controller has not synced), or a target at 0: read first.
        ({}, None, None),
        ({"desiredReplicas": 0}, None, None),
    ],
)
def test_the_replicas_a_scale_up_tests_come_from_the_hpas_status(
    status: dict[str, Any], expected: int | None, tested: tuple[int, int] | None
) -> None:
    model = parse_scheduled_pod_autoscaler(autoscaler())
    hpa = {"spec": {"minReplicas": 3}, "status": status}
    scale_up = plan_scale_up(model, State(5, 20, ()), hpa, 3, missing=None, instant=at(10))
    assert scale_up is not None
    assert scale_up.expected == expected
    assert one_request_raise(scale_up) == tested
