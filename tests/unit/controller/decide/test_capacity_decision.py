"""Node capacity ahead of a window (docs/schedules.md, "Node capacity"), decided without an API
server: when capacity is wanted, for how many pods, when the controller wakes up for it, what the
CapacityReady condition says, and which capacity leads are refused."""

from __future__ import annotations

from typing import Any

import pytest

from spa.api import InvalidObject, compile_schedule, parse_schedule, parse_scheduled_pod_autoscaler
from spa.api.incident import INDEFINITE, PAUSED_UNTIL_ANNOTATION
from spa.api.resources import CapacityMode
from spa.controller.decide import Final, Memory, Reason, WakeUp
from spa.controller.decide.capacity import (
    PLACEHOLDER_HANDOVER_SECONDS,
    CapacityIntent,
    capacity_condition,
    pods_wanted,
)
from spa.plan import Document, build_plan
from spa.plan.render import describe_schedule_state
from tests import builders
from tests.unit.spa_model import OURS, Server, at, autoscaler, schedule


def settled(server: Server, instant: int) -> tuple[Final, Memory]:
    """The final plan of a reconcile at `instant` once the HPA is in sync (the first reconcile
    creates or patches it and leaves the statuses to the next)."""
    plan, memory, _ = server.reconcile(instant)
    plan, memory, _ = server.reconcile(instant, memory)
    return plan, memory


def with_capacity(**spec: Any) -> dict[str, Any]:
    obj = autoscaler()
    obj["spec"].update(spec)
    return obj


def intent_at(server: Server, instant: int) -> CapacityIntent | None:
    plan, _ = settled(server, instant)
    assert plan.capacity is not None
    return plan.capacity.intent


# -- when, and for how many pods ------------------------------------------------------------------


def test_capacity_is_wanted_from_the_capacity_lead_to_the_windows_end() -> None:
    # Daily 10:00-11:00 raising minReplicas to 5; capacity ordered 10 minutes ahead.
    server = Server(with_capacity(capacity={"leadTime": "10m"}), [schedule("peak", owner=OURS)])
    before = intent_at(server, at(9, 49))
    assert before is not None
    assert before.minimum is None
    # The controller wakes at the capacity lead's start, before the window's own boundary.
    assert before.wake_at == at(9, 50)
    during = intent_at(server, at(9, 50))
    assert during is not None
    assert (during.minimum, during.windows) == (5, ("peak",))
    assert during.wake_at == at(11)
    inside = intent_at(server, at(10, 59))
    assert inside is not None
    assert inside.minimum == 5
    after = intent_at(server, at(11))
    assert after is not None
    assert after.minimum is None


def test_the_final_plan_requeues_at_the_capacity_leads_start() -> None:
    server = Server(with_capacity(capacity={"leadTime": "10m"}), [schedule("peak", owner=OURS)])
    plan, _ = settled(server, at(9))
    assert plan.requeue == WakeUp(at=at(9, 50))
    # Without a capacity lead the next wake-up is the window's start.
    plain = Server(autoscaler(), [schedule("peak", owner=OURS)])
    plan, _ = settled(plain, at(9))
    assert plan.requeue == WakeUp(at=at(10))
    assert plan.capacity is not None
    assert plan.capacity.intent is None


def test_the_pods_wanted_are_the_windows_minimum_less_what_the_target_runs() -> None:
    intent = CapacityIntent(CapacityMode.Auto, 5, ("peak",), None)
    assert pods_wanted(intent, 3) == 2
    assert pods_wanted(intent, 0) == 5
    # Once the target has been raised to the minimum its own pods take the capacity.
    assert pods_wanted(intent, 5) == 0
    assert pods_wanted(intent, 8) == 0
    assert pods_wanted(CapacityIntent(CapacityMode.Auto, None, (), None), 0) == 0
    assert pods_wanted(None, 0) == 0


def test_a_schedules_own_capacity_lead_overrides_the_autoscalers() -> None:
    server = Server(
        with_capacity(capacity={"leadTime": "10m"}),
        [schedule("peak", owner=OURS, capacity={"leadTime": "30m"})],
    )
    intent = intent_at(server, at(9, 30))
    assert intent is not None
    assert intent.minimum == 5
    intent = intent_at(server, at(9, 29))
    assert intent is not None
    assert intent.minimum is None
    assert intent.wake_at == at(9, 30)


def test_only_the_windows_with_a_capacity_lead_order_capacity() -> None:
    # No capacity on the SPA: only the Schedule that sets one orders capacity, for its minimum.
    server = Server(
        autoscaler(),
        [
            schedule("peak", owner=OURS, capacity={"leadTime": "15m"}),
            schedule("big", owner=OURS, minReplicas=9, maxReplicas=20),
        ],
    )
    intent = intent_at(server, at(9, 45))
    assert intent is not None
    assert (intent.minimum, intent.windows) == (5, ("peak",))


def test_the_highest_minimum_of_the_windows_in_their_capacity_lead_counts() -> None:
    server = Server(
        with_capacity(capacity={"leadTime": "20m", "mode": "CapacityBuffer"}),
        [
            schedule("peak", owner=OURS),
            schedule("big", owner=OURS, start="10:10", end="10:30", minReplicas=9),
        ],
    )
    first = intent_at(server, at(9, 45))
    assert first is not None
    assert (first.minimum, first.windows) == (5, ("peak",))
    both = intent_at(server, at(9, 50))
    assert both is not None
    assert (both.minimum, both.windows) == (9, ("big", "peak"))
    assert both.mode is CapacityMode.CapacityBuffer


def test_no_capacity_is_wanted_while_paused() -> None:
    obj = with_capacity(capacity={"leadTime": "10m"})
    obj["metadata"]["annotations"] = {PAUSED_UNTIL_ANNOTATION: INDEFINITE}
    server = Server(obj, [schedule("peak", owner=OURS)])
    plan, _ = settled(server, at(9, 55))
    assert plan.capacity is not None
    assert plan.capacity.intent is None


def test_the_task_names_the_scale_target_and_its_autoscaler() -> None:
    server = Server(with_capacity(capacity={"leadTime": "10m"}), [schedule("peak", owner=OURS)])
    plan, _ = settled(server, at(9, 55))
    assert plan.capacity is not None
    assert plan.capacity.target == ("apps/v1", "Deployment", "web")
    assert plan.capacity.autoscaler["metadata"]["name"] == "web"


# -- the CapacityReady condition ------------------------------------------------------------------


def test_the_condition_says_what_is_held_and_why() -> None:
    intent = CapacityIntent(CapacityMode.Auto, 5, ("peak",), None)
    status, reason, message = capacity_condition(
        intent, pods=2, replicas=3, mode=CapacityMode.CapacityBuffer
    )
    assert (status, reason) == ("False", Reason.BUFFER_REQUESTED)
    assert "2 more pods" in message
    assert "minReplicas 5 of peak" in message
    status, reason, _ = capacity_condition(
        intent, pods=2, replicas=3, mode=CapacityMode.Placeholder
    )
    assert (status, reason) == ("False", Reason.PLACEHOLDER_RUNNING)
    status, reason, _ = capacity_condition(
        intent, pods=0, replicas=5, mode=CapacityMode.CapacityBuffer
    )
    assert (status, reason) == ("True", Reason.PODS_REQUESTED)
    status, reason, _ = capacity_condition(None, pods=0, replicas=None, mode=None)
    assert (status, reason) == ("True", Reason.CAPACITY_NOT_REQUESTED)
    status, reason, message = capacity_condition(
        intent, pods=2, replicas=3, mode=None, unsupported="no CapacityBuffer API"
    )
    assert (status, reason, message) == (
        "False",
        Reason.CAPACITY_UNSUPPORTED,
        "no CapacityBuffer API",
    )


# -- validation ----------------------------------------------------------------------------------


def test_an_autoscalers_capacity_lead_shorter_than_its_lead_is_refused() -> None:
    obj = builders.autoscaler(leadTime="5m", capacity={"leadTime": "2m"})
    with pytest.raises(InvalidObject) as refused:
        parse_scheduled_pod_autoscaler(obj)
    assert str(refused.value) == "spec.capacity.leadTime: must be at least leadTime (5m), got '2m'"
    # Equal is fine: the nodes are ordered with the pods.
    parse_scheduled_pod_autoscaler(builders.autoscaler(leadTime="5m", capacity={"leadTime": "5m"}))


def test_a_capacity_lead_above_a_day_is_refused() -> None:
    with pytest.raises(InvalidObject) as refused:
        parse_scheduled_pod_autoscaler(builders.autoscaler(capacity={"leadTime": "25h"}))
    assert str(refused.value) == "spec.capacity.leadTime: must be at most 24h, got '25h'"


def test_an_unknown_capacity_mode_is_refused_with_its_field() -> None:
    with pytest.raises(InvalidObject) as refused:
        parse_scheduled_pod_autoscaler(
            builders.autoscaler(capacity={"leadTime": "5m", "mode": "Balloon"})
        )
    assert "spec.capacity.mode" in str(refused.value)


def test_a_schedules_capacity_lead_shorter_than_its_own_lead_is_refused() -> None:
    document = builders.schedule(
        **builders.DAILY_NOON, leadTime="10m", capacity={"leadTime": "5m"}, minReplicas=5
    )
    with pytest.raises(InvalidObject) as refused:
        compile_schedule(parse_schedule(document).spec)
    assert str(refused.value) == (
        "spec.capacity.leadTime: must be at least leadTime (10m), got '5m'"
    )


def test_a_schedule_leading_past_its_autoscalers_capacity_lead_is_degraded() -> None:
    server = Server(
        with_capacity(capacity={"leadTime": "10m"}),
        [schedule("peak", owner=OURS, leadTime="20m")],
    )
    settled(server, at(9))
    status = server.schedules[0]["status"]
    assert status["condition"] == "Degraded"
    assert status["message"] == (
        "spec.leadTime: must be at most the capacity.leadTime of ScheduledPodAutoscaler "
        "shop/web (10m), got 20m (or set spec.capacity.leadTime on this Schedule)"
    )


def test_a_schedules_capacity_lead_shorter_than_its_autoscalers_lead_is_degraded() -> None:
    server = Server(
        with_capacity(leadTime="15m", capacity={"leadTime": "20m"}),
        [schedule("peak", owner=OURS, capacity={"leadTime": "10m"})],
    )
    settled(server, at(9))
    status = server.schedules[0]["status"]
    assert status["condition"] == "Degraded"
    assert status["message"] == (
        "spec.capacity.leadTime: must be at least the leadTime of ScheduledPodAutoscaler "
        "shop/web (15m), got 10m"
    )


# -- placeholders hand over before the pod lead ----------------------------------------------------


def test_placeholders_go_a_handover_before_the_hpa_is_raised() -> None:
    server = Server(
        with_capacity(capacity={"leadTime": "10m", "mode": "Placeholder"}),
        [schedule("peak", owner=OURS)],
    )
    plan, _ = settled(server, at(9, 55))
    assert plan.capacity is not None
    assert not plan.capacity.handing_over
    # The controller wakes PLACEHOLDER_HANDOVER_SECONDS before the window's start.
    assert plan.requeue == WakeUp(at=at(10) - PLACEHOLDER_HANDOVER_SECONDS)
    plan, _ = settled(server, at(10) - PLACEHOLDER_HANDOVER_SECONDS)
    assert plan.capacity is not None
    assert plan.capacity.handing_over
    assert not plan.capacity.raised
    intent = plan.capacity.intent
    # Placeholders go; a CapacityBuffer (which occupies no node) stays until the raise.
    assert pods_wanted(intent, 3, placeholders=True, handing_over=True) == 0
    assert pods_wanted(intent, 3, placeholders=False, handing_over=True) == 2
    plan, _ = settled(server, at(10))
    assert plan.capacity is not None
    assert plan.capacity.raised


def test_spa_plan_refuses_a_short_capacity_lead_with_the_controllers_message() -> None:
    bodies = [
        builders.autoscaler(capacity={"leadTime": "10m"}),
        builders.schedule(**builders.DAILY_NOON, minReplicas=5, leadTime="20m"),
    ]
    documents = [Document("m.yaml", index, body) for index, body in enumerate(bodies, 1)]
    plan = build_plan(documents, [], at=at(9), until=at(23))
    [error] = plan.errors
    assert (error.field, error.message) == (
        "spec.leadTime",
        "must be at most the capacity.leadTime of ScheduledPodAutoscaler shop/web (10m), got "
        "20m (or set spec.capacity.leadTime on this Schedule)",
    )
    # The same Schedule in the controller: Degraded with that message (the test above).
    [web] = plan.autoscalers
    assert web.schedules == []


def test_spa_plan_shows_when_nodes_are_next_ordered_for_an_upcoming_window() -> None:
    bodies = [
        builders.autoscaler(capacity={"leadTime": "10m"}),
        builders.schedule(name="noon", **builders.DAILY_NOON, minReplicas=5),
        builders.schedule(
            name="own", **builders.DAILY_NOON, minReplicas=5, capacity={"leadTime": "1h"}
        ),
    ]
    documents = [Document("m.yaml", index, body) for index, body in enumerate(bodies, 1)]
    plan = build_plan(documents, [], at=at(9), until=at(23))
    [web] = plan.autoscalers
    by_name = {s.name: s for s in web.schedules}
    assert by_name["noon"].capacity_from == at(11, 50)
    assert by_name["own"].capacity_from == at(11)
    assert describe_schedule_state(by_name["noon"]) == (
        "starts Mon 2026-11-16 12:00 UTC (nodes from Mon 2026-11-16 11:50 UTC)"
    )
    # Inside its capacity lead: ordered now. Active: nothing to order any more.
    plan = build_plan(documents, [], at=at(11, 55), until=at(23))
    assert {s.name: s.capacity_from for s in plan.autoscalers[0].schedules} == {
        "noon": at(11, 55),
        "own": at(11, 55),
    }
    plan = build_plan(documents, [], at=at(12, 30), until=at(23))
    assert [s.capacity_from for s in plan.autoscalers[0].schedules] == [None, None]
