"""Node capacity's steps as data (docs/architecture.md, "Decide, then act"): what the decision
asks to read, hold and release, decided from a plain-data Snapshot without an API server, and
how many decisions a boundary takes."""

from __future__ import annotations

import asyncio
from typing import Any

from spa.api import wire
from spa.api.resources import CapacityMode
from spa.controller.decide import (
    AutoscalerStatusWrite,
    CapacityHeld,
    CapacityRead,
    CapacityReleased,
    CapacityReport,
    CapacityView,
    Final,
    HoldCapacity,
    Memory,
    Plan,
    ReadCapacity,
    ReleaseCapacity,
    Snapshot,
    attempted,
    decide,
    derive,
)
from spa.controller.decide.holding import CAPACITY_RECHECK_SECONDS
from spa.controller.decide.memory import Attempts
from spa.runtime import Result
from tests.unit.spa_model import KEY, OURS, Server, at, autoscaler, hpa_writes, schedule

TARGET = ("apps/v1", "Deployment", "web")


def with_capacity(**capacity: Any) -> dict[str, Any]:
    obj = autoscaler()
    obj["spec"]["capacity"] = {"leadTime": "10m", **capacity}
    return obj


def in_sync(instant: int, obj: dict[str, Any]) -> Snapshot:
    """The snapshot of the statuses pass at `instant`: the HPA created and in sync."""
    server = Server(obj, [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(instant)
    _, memory, _ = server.reconcile(instant, memory)
    spa = wire.typed_optional(wire.ScheduledPodAutoscaler, server.autoscaler)
    schedules = wire.typed_list(wire.Schedule, server.schedules)
    return Snapshot(
        key=KEY,
        instant=instant,
        autoscaler=spa,
        schedules=schedules,
        hpa=wire.typed_optional(wire.HorizontalPodAutoscaler, server.hpa),
        live_owners=frozenset(),
        hpa_api_version="autoscaling/v2",
        derived=derive(spa, schedules),
        memory=memory,
    )


def step(plan: Plan) -> Any:
    assert not isinstance(plan.action, Final), plan.action
    return plan.action


def final(plan: Plan) -> Final:
    assert isinstance(plan.action, Final), plan.action
    return plan.action


def then(snapshot: Snapshot, *outcomes: Any) -> Snapshot:
    """The snapshot of the next decision of the same reconcile, after `outcomes`."""
    attempts = snapshot.attempts
    for outcome in outcomes:
        attempts = attempted(attempts, outcome)
    return Snapshot(**{**_fields(snapshot), "attempts": attempts})


def _fields(snapshot: Snapshot) -> dict[str, Any]:
    return {name: getattr(snapshot, name) for name in Snapshot.__dataclass_fields__}


def capacity_condition(plan: Final) -> tuple[str, str, str]:
    (write,) = [w for w in plan.statuses if isinstance(w, AutoscalerStatusWrite)]
    (condition,) = [c for c in write.status.conditions or () if c.type == "CapacityReady"]
    return condition.status, condition.reason, condition.message


def test_in_the_capacity_lead_the_decision_reads_the_target_then_holds_then_says_so() -> None:
    snapshot = in_sync(at(9, 55), with_capacity())
    view = CapacityView(held={}, buffers_served=None)
    snapshot = Snapshot(**{**_fields(snapshot), "capacity": view})
    plan = decide(snapshot)
    spa = snapshot.autoscaler
    assert spa is not None
    # Mode Auto, buffers not known: the one read asks both.
    assert step(plan) == ReadCapacity(spa, TARGET, buffers=True)
    assert plan.memory == snapshot.memory  # the final plan's Memory comes at the end
    snapshot = then(snapshot, CapacityRead(replicas=3, buffers_served=False))
    # No CapacityBuffer API: placeholder pods for the window's 5 less the 3 running.
    assert step(decide(snapshot)) == HoldCapacity(spa, TARGET, 2, CapacityMode.Placeholder)
    snapshot = then(snapshot, CapacityHeld(2, CapacityMode.Placeholder))
    plan = decide(snapshot)
    done = final(plan)
    assert done.capacity_report == CapacityReport(requested=2, late=False)
    status, reason, message = capacity_condition(done)
    assert (status, reason) == ("False", "PlaceholderRunning")
    assert "holding node capacity for 2 more pods with a placeholder Deployment" in message
    assert plan.memory is not None
    assert plan.memory.capacity_held == (2, CapacityMode.Placeholder)


def test_what_the_caches_show_held_as_wanted_needs_no_hold() -> None:
    snapshot = in_sync(at(9, 55), with_capacity(mode="CapacityBuffer"))
    view = CapacityView(held={CapacityMode.CapacityBuffer: 2}, buffers_served=True)
    snapshot = Snapshot(**{**_fields(snapshot), "capacity": view})
    spa = snapshot.autoscaler
    assert spa is not None
    # A mode of its own: whether buffers are served is not asked.
    assert step(decide(snapshot)) == ReadCapacity(spa, TARGET, buffers=False)
    done = final(decide(then(snapshot, CapacityRead(replicas=3))))
    assert capacity_condition(done)[1] == "BufferRequested"
    assert done.capacity_report == CapacityReport(requested=2, late=False)


def test_what_was_held_the_other_way_is_released_after_the_hold() -> None:
    snapshot = in_sync(at(9, 55), with_capacity())
    view = CapacityView(held={CapacityMode.Placeholder: 2}, buffers_served=True)
    snapshot = Snapshot(**{**_fields(snapshot), "capacity": view})
    spa = snapshot.autoscaler
    assert spa is not None
    snapshot = then(snapshot, CapacityRead(replicas=3))
    assert step(decide(snapshot)) == HoldCapacity(spa, TARGET, 2, CapacityMode.CapacityBuffer)
    snapshot = then(snapshot, CapacityHeld(2, CapacityMode.CapacityBuffer))
    assert step(decide(snapshot)) == ReleaseCapacity(spa, TARGET, (CapacityMode.Placeholder,))
    done = final(decide(then(snapshot, CapacityReleased())))
    assert capacity_condition(done)[1] == "BufferRequested"


def test_after_the_lead_what_is_held_goes_and_the_target_is_not_read() -> None:
    snapshot = in_sync(at(11, 30), with_capacity())
    memory = Memory(**{**_memory(snapshot.memory), "capacity_held": (2, CapacityMode.Placeholder)})
    # Without caches (None), what this process held last stands in for them.
    snapshot = Snapshot(**{**_fields(snapshot), "capacity": CapacityView(), "memory": memory})
    spa = snapshot.autoscaler
    assert spa is not None
    assert step(decide(snapshot)) == ReadCapacity(spa, None, buffers=True)
    snapshot = then(snapshot, CapacityRead(buffers_served=False))
    assert step(decide(snapshot)) == HoldCapacity(spa, TARGET, 0, CapacityMode.Placeholder)
    plan = decide(then(snapshot, CapacityHeld(0, CapacityMode.Placeholder)))
    assert capacity_condition(final(plan))[0] == "True"
    assert plan.memory is not None
    assert plan.memory.capacity_held == (0, CapacityMode.Placeholder)


def test_capacity_held_after_the_raise_is_looked_at_again_soon() -> None:
    snapshot = in_sync(at(10), with_capacity(mode="CapacityBuffer"))
    view = CapacityView(held={CapacityMode.CapacityBuffer: 2}, buffers_served=True)
    snapshot = Snapshot(**{**_fields(snapshot), "capacity": view})
    done = final(decide(then(snapshot, CapacityRead(replicas=3))))
    assert done.capacity_report == CapacityReport(requested=2, late=True)
    assert done.requeue.recheck_after == CAPACITY_RECHECK_SECONDS  # type: ignore[union-attr]


def test_without_node_capacity_wired_the_decision_asks_nothing_of_it() -> None:
    snapshot = in_sync(at(9, 55), with_capacity())
    assert snapshot.capacity is None
    done = final(decide(snapshot))
    assert done.capacity is not None  # what the SPA wants is still decided
    assert done.capacity_report is None
    assert all(
        c.type != "CapacityReady"
        for w in done.statuses
        if isinstance(w, AutoscalerStatusWrite)
        for c in w.status.conditions or ()
    )


def _memory(memory: Memory) -> dict[str, Any]:
    return {name: getattr(memory, name) for name in Memory.__dataclass_fields__}


# -- decisions at a boundary ------------------------------------------------------------------


def test_a_boundary_takes_two_decisions_over_its_two_passes() -> None:
    """Before issue 36 a boundary took three: the HPA pass's, a decision after the write that
    could only send the key to the back of the queue, and the statuses pass's."""
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    decided: list[Attempts] = []

    def counted(snapshot: Snapshot) -> Plan:
        decided.append(snapshot.attempts)
        return decide(snapshot)

    reconciler = server.reconciler(at(10), {KEY: memory}, counted)
    assert asyncio.run(reconciler.reconcile(KEY)) == Result(back_of_queue=True)
    assert hpa_writes(server) == ["create", "patch"]
    assert len(decided) == 1
    result = asyncio.run(reconciler.reconcile(KEY))
    assert result == Result(requeue_at=at(11))
    assert server.writes.count("status ScheduledPodAutoscaler") == 2
    assert len(decided) == 2
