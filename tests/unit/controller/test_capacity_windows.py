"""What node capacity did for each window, in status.windows (docs/api.md, "status.windows"),
through the real Reconciler, Actuator and CapacityActuator on a stepped clock: the entry made
when capacity is held at the capacity lead's start (`capacityHeldAt`, no `raisedAt`, no read
of the target), `nodesReadyAt` when every placeholder pod is Ready, `capacityReleasedAt` at the
handover, and `capacity.leadTime: Auto` learned from them (docs/schedules.md, "Auto lead
times"). The real API server and Karpenter: tests/integration/test_capacity_nodes.py."""

from __future__ import annotations

from typing import Any

from spa.api.incident import INDEFINITE, PAUSED_UNTIL_ANNOTATION
from spa.controller.decide import Memory
from tests.unit.controller.test_capacity_actuator import PLACEHOLDER, Buffers, Caches
from tests.unit.spa_model import OURS, Server, at, autoscaler, schedule

DAY = 86400


def _server(kube: Buffers, **spec: Any) -> tuple[Server, Caches, Memory]:
    """shop/web, Daily 10:00-11:00 at minReplicas 5, its target at 3 replicas not Ready yet for
    the window, node capacity by placeholder pods where no CapacityBuffer API is served."""
    obj = autoscaler()
    obj["spec"].update(spec)
    server = Server(obj, [schedule("peak", owner=OURS)], target_replicas=3, target_ready=3)
    caches = Caches(kube)
    server.capacity = caches.actuator(server)
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    return server, caches, memory


def _step(server: Server, caches: Caches, memory: Memory, instant: int) -> Memory:
    """One reconcile at `instant`, its caches caught up with the API server (the watch), and
    the pass after a write that ended it (an HPA write goes to the back of the queue)."""
    caches.sync()
    _, memory, _ = server.reconcile(instant, memory)
    caches.sync()
    _, memory, _ = server.reconcile(instant, memory)
    return memory


def _windows(server: Server) -> list[dict[str, Any]]:
    assert server.autoscaler is not None
    return list(server.autoscaler.get("status", {}).get("windows") or [])


def _status(server: Server, field: str) -> Any:
    assert server.autoscaler is not None
    return server.autoscaler["status"].get(field)


def _stand(kube: Buffers) -> None:
    """Every placeholder pod scheduled and started: the Deployment controller's status write."""
    placeholder = kube.deployments[PLACEHOLDER]
    placeholder["status"] = {"readyReplicas": placeholder["spec"]["replicas"]}


def test_placeholder_capacity_is_recorded_per_window_and_its_lead_learned() -> None:
    kube = Buffers(version=None)
    server, caches, memory = _server(
        kube, leadTime="Auto", capacity={"leadTime": "Auto", "mode": "Placeholder"}
    )
    # Defaults: the pods' 2m, the capacity's 3m in all.
    assert _status(server, "capacityLeadTime")["explanation"] == "default 3m until measured"
    memory = _step(server, caches, memory, at(9, 56))
    assert _windows(server) == []
    # The capacity lead starts at 9:57: two placeholder pods, and the window's entry.
    memory = _step(server, caches, memory, at(9, 57))
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    (entry,) = _windows(server)
    assert entry["outcome"] == "Pending"
    assert entry["boundary"] == "2026-11-16T10:00:00Z"
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert entry["capacityLead"]["seconds"] == 180
    assert "raisedAt" not in entry
    assert "nodesReadyAt" not in entry
    # The target itself is not read before the raise (only its /scale, for the capacity).
    assert server.target_reads == 0
    # Some placeholder pods still Pending: nothing stands yet.
    kube.deployments[PLACEHOLDER]["status"] = {"readyReplicas": 1}
    memory = _step(server, caches, memory, at(9, 57) + 20)
    assert "nodesReadyAt" not in _windows(server)[0]
    # 40 s after the order every placeholder pod is Ready: the nodes stand.
    _stand(kube)
    memory = _step(server, caches, memory, at(9, 57) + 40)
    (entry,) = _windows(server)
    assert entry["nodesReadyAt"] == "2026-11-16T09:57:40Z"
    # A later status write changes nothing.
    memory = _step(server, caches, memory, at(9, 57) + 50)
    assert _windows(server)[0]["nodesReadyAt"] == "2026-11-16T09:57:40Z"
    assert server.target_reads == 0
    # Handed over 5 s before the raise: the placeholders go, the capacity is released.
    memory = _step(server, caches, memory, at(9, 57) + 55)
    assert PLACEHOLDER not in kube.deployments
    (entry,) = _windows(server)
    assert entry["capacityReleasedAt"] == "2026-11-16T09:57:55Z"
    assert "raisedAt" not in entry
    # The pod lead in force is still the default: a window without a pod measurement counts
    # for nothing.
    assert _status(server, "leadTime")["explanation"] == "default 2m until measured"
    # The raise at 9:58 fills raisedAt on the same entry; the target is read from then on.
    memory = _step(server, caches, memory, at(9, 58))
    (entry,) = _windows(server)
    assert entry["raisedAt"] == "2026-11-16T09:58:00Z"
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert entry["outcome"] == "Pending"
    assert server.target_reads > 0
    server.target_ready = 5
    memory = _step(server, caches, memory, at(9, 58) + 30)
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["readySeconds"]) == ("Early", -90)
    # Learned: the pods needed 30 s (+ 15 s), the nodes 40 s (+ 15 s) of head start.
    assert _status(server, "leadTime")["seconds"] == 45
    capacity_lead = _status(server, "capacityLeadTime")
    assert capacity_lead["seconds"] == 45 + 55
    assert capacity_lead["source"] == "Learned"
    assert capacity_lead["explanation"] == (
        "leadTime 45s + nodes learned: p90 of 1 window 40 s + 15 s"
    )
    # The next day's capacity is ordered 100 s before B, not at the default 3m.
    server.target_ready = 3
    server.target_replicas = 3
    memory = _step(server, caches, memory, at(11) + 60)
    memory = _step(server, caches, memory, DAY + at(9, 58) + 19)
    assert PLACEHOLDER not in kube.deployments
    memory = _step(server, caches, memory, DAY + at(9, 58) + 20)
    assert kube.deployments[PLACEHOLDER]["spec"]["replicas"] == 2
    assert _windows(server)[0]["capacityHeldAt"] == "2026-11-17T09:58:20Z"


def test_a_capacity_buffer_records_held_and_released_but_not_nodes_ready() -> None:
    """A CapacityBuffer's status says nothing of nodes: nodesReadyAt is not measured, and the
    capacity lead stays at its default."""
    kube = Buffers()
    server, caches, memory = _server(kube, leadTime="1m", capacity={"leadTime": "Auto"})
    memory = _step(server, caches, memory, at(9, 57))
    (entry,) = _windows(server)
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    memory = _step(server, caches, memory, at(9, 58))
    assert "capacityReleasedAt" not in _windows(server)[0]
    # At the raise the target is scaled to the window's minimum: its pods take the capacity.
    memory = _step(server, caches, memory, at(9, 59))
    (entry,) = _windows(server)
    assert entry["raisedAt"] == "2026-11-16T09:59:00Z"
    assert entry["capacityReleasedAt"] == "2026-11-16T09:59:00Z"
    server.target_ready = 5
    memory = _step(server, caches, memory, at(9, 59) + 20)
    (entry,) = _windows(server)
    assert entry["outcome"] == "Early"
    assert "nodesReadyAt" not in entry
    assert _status(server, "capacityLeadTime")["explanation"] == "default 3m until measured"


def test_a_window_whose_raise_comes_paused_keeps_its_capacity_times() -> None:
    kube = Buffers(version=None)
    server, caches, memory = _server(kube, leadTime="1m", capacity={"leadTime": "3m"})
    memory = _step(server, caches, memory, at(9, 57))
    assert _windows(server)[0]["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert server.autoscaler is not None
    server.autoscaler["metadata"]["annotations"] = {PAUSED_UNTIL_ANNOTATION: INDEFINITE}
    memory = _step(server, caches, memory, at(9, 59))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "Paused")
    assert entry["capacityHeldAt"] == "2026-11-16T09:57:00Z"
    assert entry["capacityReleasedAt"] == "2026-11-16T09:59:00Z"
    assert "raisedAt" not in entry
    assert server.target_reads == 0


def test_an_entry_made_at_the_capacity_lead_goes_when_its_window_no_longer_starts() -> None:
    kube = Buffers(version=None)
    server, caches, memory = _server(kube, leadTime="1m", capacity={"leadTime": "3m"})
    memory = _step(server, caches, memory, at(9, 57))
    assert len(_windows(server)) == 1
    # The Schedule is edited to start at noon: 10:00 is no window start any more.
    server.schedules[0]["spec"]["startTime"] = "12:00"
    server.schedules[0]["spec"]["endTime"] = "13:00"
    server.schedules[0]["metadata"]["generation"] = 2
    memory = _step(server, caches, memory, at(9, 58))
    assert _windows(server) == []
    assert PLACEHOLDER not in kube.deployments
    assert server.target_reads == 0
