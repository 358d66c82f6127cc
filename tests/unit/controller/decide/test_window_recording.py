"""Every window start recorded in status.windows by the decision (docs/api.md,
"status.windows"), through the real Reconciler and Actuator against the tiny API server of
tests/unit/spa_model.py: Early, Late, Missed, a target that may not be read, no read of the
target between windows, the history kept by every status write, and leadTime: Auto in force."""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY

from spa.api.incident import INDEFINITE, OVERRIDE_ANNOTATION, PAUSED_UNTIL_ANNOTATION
from spa.controller.decide import Memory, WakeUp
from tests.unit.spa_model import OURS, Server, at, autoscaler, schedule


def _windows(server: Server) -> list[dict[str, Any]]:
    assert server.autoscaler is not None
    return list(server.autoscaler.get("status", {}).get("windows") or [])


def _counted(outcome: str, reason: str | None = None) -> float:
    """Windows counted with `outcome` (and `reason`; None: any)."""
    return sum(
        sample.value
        for metric in REGISTRY.collect()
        if metric.name == "spa_windows"
        for sample in metric.samples
        if sample.name == "spa_windows_total"
        and sample.labels["outcome"] == outcome
        and reason in (None, sample.labels["reason"])
    )


def _late_gauge() -> float | None:
    return REGISTRY.get_sample_value("spa_window_late", {"namespace": "shop", "name": "web"})


def _server(annotations: dict[str, str] | None = None, **spec: Any) -> tuple[Server, Memory]:
    """shop/web with a Daily window 10:00-11:00 of minReplicas 5, its HPA made at 9:00 and its
    target not Ready yet."""
    obj = autoscaler() if annotations is None else autoscaler(annotations=annotations)
    obj["spec"].update(spec)
    server = Server(obj, [schedule("peak", owner=OURS)], target_ready=0)
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    return server, memory


def _window_start(server: Server, memory: Memory, instant: int) -> tuple[Any, Memory]:
    """The two passes of a raise: the HPA, then the statuses."""
    _, memory, _ = server.reconcile(instant, memory)
    return server.reconcile(instant, memory)[:2]


def test_a_window_ready_before_its_boundary_is_early() -> None:
    server, memory = _server(leadTime="5m")
    assert server.target_reads == 0  # nothing measured before the raise
    early = _counted("Early")
    plan, memory = _window_start(server, memory, at(9, 55))
    (entry,) = _windows(server)
    assert entry["outcome"] == "Pending"
    assert entry["boundary"] == "2026-11-16T10:00:00Z"
    assert entry["raisedAt"] == "2026-11-16T09:55:00Z"
    assert entry["lead"] == {"seconds": 300, "source": "Fixed", "explanation": "fixed 5m"}
    # Looked at again soon (a quarter of the time since the raise, at least 5 s), and at B.
    assert plan.requeue == WakeUp(at=at(10), recheck_after=5.0)
    server.target_ready = 5
    plan, memory, _ = server.reconcile(at(9, 57), memory)
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["readySeconds"]) == ("Early", -180)
    assert entry["readyAt"] == "2026-11-16T09:57:00Z"
    assert not [event for event in plan.events if event.reason.startswith("Window")]
    assert _counted("Early") == early + 1
    assert _late_gauge() == 0


def test_a_window_ready_after_its_boundary_is_late_with_a_warning() -> None:
    server, memory = _server()
    late = _counted("Late")
    _, memory = _window_start(server, memory, at(10))
    server.target_ready = 5
    plan, memory, _ = server.reconcile(at(10, 2), memory)
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["readySeconds"]) == ("Late", 120)
    warnings = [(e.reason, e.message) for e in plan.events if e.reason == "WindowLate"]
    assert warnings == [
        (
            "WindowLate",
            "Schedule peak, window start 2026-11-16T10:00:00Z: 5 replicas Ready at B+120 s, "
            "after the boundary (lead 0 s)",
        )
    ]
    assert _counted("Late") == late + 1
    assert _late_gauge() == 1


def test_a_window_never_ready_is_missed_when_it_ends_and_never_read_again() -> None:
    server, memory = _server()
    server.target_spec_replicas = 5  # scaled, no pod reported
    _, memory = _window_start(server, memory, at(10))
    _, memory, _ = server.reconcile(at(10, 30), memory)
    assert _windows(server)[0]["outcome"] == "Pending"
    missed = _counted("Missed")
    plan, memory = _window_start(server, memory, at(11))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "NotReady")
    assert [e.reason for e in plan.events if e.reason.startswith("Window")] == ["WindowMissed"]
    assert _counted("Missed") == missed + 1
    assert _late_gauge() == 1
    # Between windows: no read of the target at all.
    reads = server.target_reads
    for hour in (11, 12, 23):
        plan, memory, _ = server.reconcile(at(hour, 30), memory)
        assert plan.requeue == WakeUp(at=at(hour, 30) + (at(10) - at(hour, 30)) % 86400)
    assert server.target_reads == reads
    assert len(_windows(server)) == 1  # kept by every status written since


def test_a_target_the_controller_may_not_read_is_not_measured_and_not_warned_about() -> None:
    server, memory = _server()
    server.target_forbidden = True
    plan, memory = _window_start(server, memory, at(10))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "NotReadable")
    assert "grant get" in entry["message"]
    assert not [e for e in plan.events if e.reason.startswith("Window")]
    assert plan.requeue == WakeUp(at=at(11))  # no recheck: nothing to measure
    reads = server.target_reads
    server.reconcile(at(10, 30), memory)
    assert server.target_reads == reads
    assert _late_gauge() == 0


def test_a_status_write_keeps_the_history_and_the_leads_in_force() -> None:
    """Before this was wired, every status write sent windows, leadTime and capacityLeadTime as
    null: the history the Auto leads learn from was cleared at the next reconcile."""
    history = [
        {
            "schedule": "peak",
            "boundary": "2026-11-15T10:00:00Z",
            "minReplicas": 5,
            "raisedAt": "2026-11-15T09:58:00Z",
            "readyAt": "2026-11-15T09:59:30Z",
            "readySeconds": -30,
            "outcome": "Early",
        }
    ]
    obj = autoscaler()
    obj["status"] = {"windows": history}
    server = Server(obj, [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(at(9))
    server.reconcile(at(9), memory)
    assert server.writes.count("status ScheduledPodAutoscaler") == 1
    assert _windows(server) == history


def test_leadtime_auto_raises_the_hpa_by_the_learned_lead_and_says_so() -> None:
    """Learned from the history: Ready 90 s after the raise, plus 15 s: raised at 9:58:15."""
    history = [
        {
            "schedule": "peak",
            "boundary": "2026-11-15T10:00:00Z",
            "minReplicas": 5,
            "raisedAt": "2026-11-15T09:58:00Z",
            "readyAt": "2026-11-15T09:59:30Z",
            "outcome": "Early",
        }
    ]
    obj = autoscaler()
    obj["spec"]["leadTime"] = "Auto"
    obj["status"] = {"windows": history}
    server = Server(obj, [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(at(9))
    plan, memory, _ = server.reconcile(at(9), memory)
    assert plan.requeue == WakeUp(at=at(10) - 105)
    assert server.autoscaler is not None
    lead = server.autoscaler["status"]["leadTime"]
    assert (lead["seconds"], lead["source"]) == (105, "Learned")
    assert lead["explanation"] == "learned: p90 of 1 window 90 s + 15 s"
    # Written once: a reconcile that finds the same leads and windows writes nothing.
    writes = list(server.writes)
    server.reconcile(at(9, 30), memory)
    assert server.writes == writes


def test_a_schedules_own_auto_lead_is_learned_too() -> None:
    history = [
        {
            "schedule": "peak",
            "boundary": "2026-11-15T10:00:00Z",
            "minReplicas": 5,
            "raisedAt": "2026-11-15T09:58:00Z",
            "readyAt": "2026-11-15T09:59:00Z",
            "outcome": "Early",
        }
    ]
    obj = autoscaler()
    obj["status"] = {"windows": history}
    server = Server(obj, [schedule("peak", owner=OURS, leadTime="Auto")])
    _, memory, _ = server.reconcile(at(9))
    plan, memory, _ = server.reconcile(at(9), memory)
    # Ready 60 s after the raise, plus 15 s (not the default 2m of a Schedule never measured).
    assert plan.requeue == WakeUp(at=at(10) - 75)


def test_a_missing_target_is_not_measured_nor_read_again_in_the_window() -> None:
    """Its ImmediateScaleUp condition says it is missing; the window says Ready was not
    measured, once, rather than reading every few seconds until the window ends."""
    server, memory = _server()
    server.target_missing = True
    plan, memory = _window_start(server, memory, at(10))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "NoTarget")
    assert not [e for e in plan.events if e.reason.startswith("Window")]
    assert plan.requeue == WakeUp(at=at(11))
    reads = server.target_reads
    server.reconcile(at(10, 30), memory)
    assert server.target_reads == reads


def test_the_status_says_the_lead_learned_from_the_window_it_measures() -> None:
    """Nothing wakes the SPA after its own status write: the lead in force it shows is learned
    from the list it writes, not from the list before it."""
    server, memory = _server(leadTime="Auto")
    _, memory = _window_start(server, memory, at(9, 58))  # the default lead, 2m
    server.target_ready = 5
    server.reconcile(at(10, 1), memory)
    assert server.autoscaler is not None
    status = server.autoscaler["status"]
    assert status["windows"][0]["outcome"] == "Late"
    assert (status["leadTime"]["seconds"], status["leadTime"]["source"]) == (198, "Learned")


def test_a_window_that_orders_node_capacity_records_its_capacity_lead() -> None:
    server, memory = _server(capacity={"leadTime": "10m"})
    _window_start(server, memory, at(10))
    (entry,) = _windows(server)
    assert entry["capacityLead"] == {"seconds": 600, "source": "Fixed", "explanation": "fixed 10m"}


QUOTA_REFUSAL = (
    'pods "web-7d4b9c-x2x" is forbidden: exceeded quota: pods, requested: pods=1, used: '
    "pods=2, limited: pods=2"
)


def _missed_at_the_end(server: Server, memory: Memory) -> tuple[dict[str, Any], list[str]]:
    """The window started at 10:00 and read at 10:30, then its end: its entry and the
    messages of its WindowMissed Events."""
    _, memory = _window_start(server, memory, at(10))
    _, memory, _ = server.reconcile(at(10, 30), memory)
    assert _windows(server)[0]["outcome"] == "Pending"
    plan, _ = _window_start(server, memory, at(11))
    (entry,) = _windows(server)
    return entry, [e.message for e in plan.events if e.reason == "WindowMissed"]


def test_a_window_whose_pods_a_quota_refused_is_missed_for_the_quota() -> None:
    """The Deployment's ReplicaFailure condition (copied from its ReplicaSet) says why only 2
    of the 5 pods exist: the window says it, in the quota's own words."""
    server, memory = _server()
    server.target_spec_replicas, server.target_created, server.target_ready = 5, 2, 2
    server.target_failure = QUOTA_REFUSAL
    counted = _counted("Missed", "Quota")
    entry, warnings = _missed_at_the_end(server, memory)
    assert _counted("Missed", "Quota") == counted + 1
    assert (entry["outcome"], entry["reason"]) == ("Missed", "Quota")
    assert entry["message"] == f"a ResourceQuota refused the window's pods: {QUOTA_REFUSAL}"
    assert warnings == [
        "Schedule peak, window start 2026-11-16T10:00:00Z: 5 replicas not Ready before the "
        f"window ended: a ResourceQuota refused the window's pods: {QUOTA_REFUSAL}"
    ]
    assert _late_gauge() == 1


def test_pods_created_but_not_ready_are_pods_pending() -> None:
    server, memory = _server()
    server.target_spec_replicas, server.target_created, server.target_ready = 5, 5, 1
    entry, warnings = _missed_at_the_end(server, memory)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "PodsPending")
    assert len(warnings) == 1


def test_another_failure_to_create_pods_is_failed_create() -> None:
    server, memory = _server()
    server.target_spec_replicas, server.target_created, server.target_ready = 5, 1, 1
    server.target_failure = 'admission webhook "policy.example" denied the request'
    entry, _ = _missed_at_the_end(server, memory)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "FailedCreate")
    assert entry["message"].endswith("denied the request")


def test_a_target_never_scaled_to_the_minimum_is_not_scaled() -> None:
    server, memory = _server()
    server.target_spec_replicas, server.target_created, server.target_ready = 3, 3, 3
    entry, warnings = _missed_at_the_end(server, memory)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "NotScaled")
    assert "replicasAt" not in entry
    assert len(warnings) == 1


def test_a_window_that_starts_while_paused_is_recorded_paused_and_never_read() -> None:
    """The HPA is not raised for it: recorded at once, not measured (no read of the target),
    not late, no Event; the pause ending within the window does not record it again."""
    until = "2026-11-16T10:20:00Z"
    server, memory = _server(annotations={PAUSED_UNTIL_ANNOTATION: until})
    missed = _counted("Missed", "Paused")
    plan, memory = _window_start(server, memory, at(10))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "Paused")
    assert "paused when the window started" in entry["message"]
    assert "raisedAt" not in entry
    assert server.target_reads == 0
    assert not [e for e in plan.events if e.reason.startswith("Window")]
    assert _late_gauge() == 0
    assert _counted("Missed", "Paused") == missed + 1
    assert plan.requeue.recheck_after is None
    # The pause ends at 10:20: the schedule applies, the window is not recorded again.
    _, memory = _window_start(server, memory, at(10, 20))
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5
    assert _windows(server) == [entry]
    assert server.target_reads == 0


def test_a_pause_during_the_window_is_kept_and_is_why_it_was_missed() -> None:
    server, memory = _server()
    server.target_spec_replicas = 5
    _, memory = _window_start(server, memory, at(10))
    assert server.autoscaler is not None
    server.autoscaler["metadata"]["annotations"] = {PAUSED_UNTIL_ANNOTATION: INDEFINITE}
    _, memory, _ = server.reconcile(at(10, 30), memory)
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Pending", "Paused")
    server.autoscaler["metadata"]["annotations"] = {}
    plan, _ = _window_start(server, memory, at(11))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "Paused")
    assert not [e for e in plan.events if e.reason.startswith("Window")]
    assert _late_gauge() == 0


def test_an_override_below_the_window_is_why_it_was_missed_though_it_ended_with_it() -> None:
    """min=2 until the window's end: at the end the override is over (and the bounds are the
    base's), so what the window saw of it was kept on its Pending entry."""
    override = "min=2,until=2026-11-16T11:00:00Z"
    server, memory = _server(annotations={OVERRIDE_ANNOTATION: override})
    server.target_spec_replicas = 5
    _, memory = _window_start(server, memory, at(10))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Pending", "Overridden")
    plan, _ = _window_start(server, memory, at(11))
    (entry,) = _windows(server)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "Overridden")
    assert entry["message"] == "an override held the HPA's minReplicas below the window's"
    assert not [e for e in plan.events if e.reason.startswith("Window")]
    assert _late_gauge() == 0


def test_an_overrides_max_below_the_window_is_max_replicas() -> None:
    server, memory = _server(
        annotations={OVERRIDE_ANNOTATION: "min=2,max=3,until=2026-11-16T12:00:00Z"}
    )
    server.target_spec_replicas = 3
    _, memory = _window_start(server, memory, at(10))
    assert _windows(server)[0]["reason"] == "MaxReplicas"
    entry, warnings = _missed_at_the_end(server, memory)
    assert (entry["outcome"], entry["reason"]) == ("Missed", "MaxReplicas")
    assert warnings == []
