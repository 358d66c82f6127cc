"""The real Reconciler (spa/controller/reconciler.py) and its Actuator against the model of the
API server in tests/unit/spa_model.py: what each step's outcome becomes, immediate scale-up's
reads and compare-and-swap, the wake-up each final plan asks of the work queue, and the bound
on decisions. The rules themselves are tests/unit/controller/decide/test_decide.py's."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from prometheus_client import REGISTRY

from spa.controller import derived as derived_module
from spa.controller.decide import Memory, Plan, SetOwners, Snapshot, decide
from spa.kube import NamespaceTerminating, error_from_status
from spa.runtime import FakeClock, Result, TerminatingNamespaces, WriteSummary
from tests import builders
from tests.unit.spa_model import KEY, OURS, Server, at, autoscaler, hpa_writes, schedule

RAISED = (
    "raised Deployment web from 2 to 5 replicas through its scale subresource, ahead of the "
    "HPA controller"
)
STARTED = "minReplicas 3 -> 5, maxReplicas 10 -> 20"
INSTEAD = "; the HPA controller raises the target at its next sync instead"


def at_the_window_start(server: Server) -> Memory:
    """Reconcile from 09:00 (HPA created, statuses) to the first pass at 10:00 (the raise)."""
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    _, memory, _ = server.reconcile(at(10), memory)
    return memory


def conditions(server: Server) -> dict[str, dict[str, Any]]:
    assert server.autoscaler is not None
    return {c["type"]: c for c in server.autoscaler["status"]["conditions"]}


def test_a_raise_scales_the_target_up_and_says_so_with_the_statuses() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], target_replicas=2)
    memory = at_the_window_start(server)
    assert server.scaled_to == [5]
    # HPAs first: the key goes to the back of the queue; the Event waits for the final plan.
    assert server.result == Result(back_of_queue=True)
    assert ("Normal", "ScaledUp", RAISED) not in server.recorded.events
    plan, _, _ = server.reconcile(at(10), memory)
    assert server.recorded.events[-2:] == [
        ("Normal", "ScaledUp", RAISED),
        (
            "Normal",
            "ScheduleStarted",
            "Schedule peak started: minReplicas 3 -> 5, maxReplicas 10 -> 20",
        ),
    ]
    assert server.result == Result(requeue_at=at(11))
    scale_up = conditions(server)["ImmediateScaleUp"]
    assert (scale_up["status"], scale_up["reason"], scale_up["message"]) == (
        "True",
        "ScaledUp",
        RAISED,
    )
    assert plan.problem is None


def test_a_scale_changed_in_between_is_read_again() -> None:
    server = Server(
        autoscaler(), [schedule("peak", owner=OURS)], target_replicas=2, scale_conflicts=1
    )
    at_the_window_start(server)
    assert len(server.scale_ups) == 2  # read, conflict, read again
    assert server.scaled_to == [5]


def test_a_scale_that_keeps_changing_is_left_to_the_hpa_controller() -> None:
    server = Server(
        autoscaler(), [schedule("peak", owner=OURS)], target_replicas=2, scale_conflicts=3
    )
    memory = at_the_window_start(server)
    assert len(server.scale_ups) == 3
    assert server.scaled_to == []
    assert memory.scale_up is None
    server.reconcile(at(10), memory)
    assert "ImmediateScaleUp" not in conditions(server)
    assert [reason for _, reason, _ in server.recorded.events] == ["ScheduleStarted"]


def test_a_target_at_zero_or_with_enough_replicas_is_not_written() -> None:
    for replicas in (0, 5, 7):
        server = Server(autoscaler(), [schedule("peak", owner=OURS)], target_replicas=replicas)
        memory = at_the_window_start(server)
        assert len(server.scale_ups) == 1
        assert server.scaled_to == []
        assert memory.scale_up is None


def test_a_raise_is_one_json_patch_testing_the_replicas_the_hpa_controller_left() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], target_replicas=2, hpa_desired=2)
    memory = at_the_window_start(server)
    # One request: the read that came before every write is gone.
    assert server.scale_requests == ["json"]
    assert server.scaled_to == [5]
    assert memory.scale_up == ("True", "ScaledUp", RAISED)


def test_a_target_scaled_since_the_hpa_controller_said_is_read_then_patched() -> None:
    # The HPA's status says 3, the target has 2: the test fails (422), nothing is applied,
    # and the controller reads the Scale and raises from what it finds.
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], target_replicas=2, hpa_desired=3)
    memory = at_the_window_start(server)
    assert server.scale_requests == ["json", "get", "merge"]
    assert server.scaled_to == [5]
    assert memory.scale_up == ("True", "ScaledUp", RAISED)


def test_a_target_with_more_replicas_than_the_hpa_said_is_never_scaled_down() -> None:
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], target_replicas=7, hpa_desired=2)
    memory = at_the_window_start(server)
    assert server.scale_requests == ["json", "get"]
    assert server.scaled_to == []
    assert server.target_replicas == 7
    assert memory.scale_up is None


def test_without_a_value_to_test_the_scale_is_read_first() -> None:
    # No HPA status (the HPA controller has not synced), one that already says enough
    # replicas (only a read can tell it is still true), and a target at 0 (its Scale has no
    # spec.replicas to test): read, then patch as before.
    for desired, target, requests, scaled in (
        (None, 2, ["get", "merge"], [5]),
        (6, 2, ["get", "merge"], [5]),
        (6, 6, ["get"], []),
    ):
        server = Server(
            autoscaler(),
            [schedule("peak", owner=OURS)],
            target_replicas=target,
            hpa_desired=desired,
        )
        at_the_window_start(server)
        assert (server.scale_requests, server.scaled_to) == (requests, scaled), desired


def test_a_refused_json_patch_is_a_warning_without_a_read() -> None:
    server = Server(
        autoscaler(),
        [schedule("peak", owner=OURS)],
        target_replicas=2,
        hpa_desired=2,
        scale_refuse=403,
    )
    memory = at_the_window_start(server)
    assert server.scale_requests == ["json"]
    assert memory.scale_up is not None
    assert memory.scale_up[1] == "ScaleRefused"


def boundaries(server: Server, *instants: int) -> Memory:
    """Reconcile at each instant until the key asks for a later one (a boundary's two passes)."""
    memory = Memory()
    for instant in instants:
        for _pass in range(3):
            _, memory, _ = server.reconcile(instant, memory)
            if server.result != Result(back_of_queue=True):
                break
    return memory


def short_windows() -> list[dict[str, Any]]:
    """Three raises of minReplicas: at 10:00, 40 minutes later, and 90 minutes later."""
    return [
        schedule("a", owner=OURS, start="10:00", end="10:20"),
        schedule("b", owner=OURS, start="10:40", end="11:00"),
        schedule("c", owner=OURS, start="11:30", end="11:50"),
    ]


def test_a_missing_target_is_not_asked_for_again_at_the_next_boundary() -> None:
    server = Server(autoscaler(), short_windows(), target_missing=True)
    memory = boundaries(server, at(9), at(10), at(10, 20), at(10, 40))
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5  # the HPA follows the windows all the same
    # One request at 10:00 (its 404 remembered), none at 10:40.
    assert server.scale_requests == ["get"]
    message = "Deployment shop/web not found" + INSTEAD
    assert server.recorded.events.count(("Warning", "TargetNotFound", message)) == 1
    assert conditions(server)["ImmediateScaleUp"]["reason"] == "TargetNotFound"
    assert memory.missing_target is not None
    # Where no HPA controller says the target appeared, it is asked for again after an hour.
    boundaries(server, at(11), at(11, 30))
    assert server.scale_requests == ["get", "get"]


def test_a_missing_target_is_asked_for_again_once_the_hpa_controller_can_scale_it() -> None:
    server = Server(autoscaler(), short_windows(), target_missing=True, target_replicas=2)
    memory = boundaries(server, at(9), at(10), at(10, 20))
    assert server.scale_requests == ["get"]
    # The Deployment is created; the HPA controller's next sync reads its Scale and says so.
    server.target_missing = False
    assert server.hpa is not None
    server.hpa["status"] = {
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "reason": "SucceededGetScale",
                "lastTransitionTime": "2026-11-16T10:30:00Z",
            }
        ]
    }
    memory = boundaries(server, at(10, 40))
    assert server.scale_requests == ["get", "get", "merge"]
    assert server.scaled_to == [5]
    assert memory.missing_target is None


def test_a_target_without_scale_is_a_warning_and_a_false_condition() -> None:
    server = Server(
        autoscaler(),
        [schedule("peak", owner=OURS)],
        target_replicas=2,
        target_resources=[{"name": "deployments", "kind": "Deployment", "namespaced": True}],
    )
    memory = at_the_window_start(server)
    server.reconcile(at(10), memory)
    message = "Deployment (deployments.apps/v1) has no scale subresource" + INSTEAD
    assert ("Warning", "NoScaleSubresource", message) in server.recorded.events
    scale_up = conditions(server)["ImmediateScaleUp"]
    assert (scale_up["status"], scale_up["reason"], scale_up["message"]) == (
        "False",
        "NoScaleSubresource",
        message,
    )
    # The HPA was written all the same.
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5


def test_a_refused_scale_is_a_warning() -> None:
    server = Server(
        autoscaler(), [schedule("peak", owner=OURS)], target_replicas=2, scale_refuse=403
    )
    memory = at_the_window_start(server)
    server.reconcile(at(10), memory)
    message = "the API server refused to scale Deployment web: no scaling here" + INSTEAD
    assert ("Warning", "ScaleRefused", message) in server.recorded.events
    assert conditions(server)["ImmediateScaleUp"]["reason"] == "ScaleRefused"


def test_a_refused_adoption_degrades_that_schedule_alone() -> None:
    server = Server(autoscaler(), [schedule("mine")], refuse_owners=422)
    _, memory, _ = server.reconcile(at(9))
    assert server.result == Result(back_of_queue=True)  # the HPA was created: statuses next
    server.reconcile(at(9), memory)
    message = "the API server refused to adopt it: Only one controller"
    assert ("Warning", "AdoptionFailed", f"Schedule mine: {message}") in server.recorded.events
    status = server.schedules[0]["status"]
    assert (status["condition"], status["message"]) == ("Degraded", message)
    assert hpa_writes(server) == ["create"]  # the SPA goes on without it


def test_an_autoscaler_deleted_behind_the_cache_gets_no_hpa() -> None:
    server = Server(autoscaler(), [schedule("mine", owner=OURS)], deleted=True)
    reconciler = server.reconciler(at(9), {})
    assert asyncio.run(reconciler.reconcile(KEY)) == Result()
    assert server.writes == []
    assert server.hpa is None


@pytest.mark.parametrize("said", [False, True], ids=["anywhere", "namespace-being-deleted"])
def test_an_autoscaler_deleted_behind_the_cache_is_said_unless_its_namespace_was(
    said: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """An SPA found gone before its HPA's creation is said at INFO; in a namespace already
    said to be being deleted (the namespace controller deletes its SPAs while our cache still
    holds them) the namespace's line stands for it, and it is said at DEBUG only
    (docs/operations.md, "Namespaces being deleted")."""
    terminating = TerminatingNamespaces(clock=FakeClock(at(9)), quiet=600)
    if said:
        body = json.dumps(builders.namespace_terminating(namespace="shop")).encode()
        refusal = error_from_status(403, body)
        assert isinstance(refusal, NamespaceTerminating)
        terminating.refused("shop", refusal)
    server = Server(autoscaler(), [schedule("mine", owner=OURS)], deleted=True)
    reconciler = server.reconciler(at(9), {}, terminating=terminating)
    with caplog.at_level(logging.DEBUG):
        caplog.clear()
        assert asyncio.run(reconciler.reconcile(KEY)) == Result()
    assert server.hpa is None
    (gone,) = [r for r in caplog.records if "no longer exists" in r.getMessage()]
    assert gone.getMessage() == "not creating the HPA: the ScheduledPodAutoscaler no longer exists"
    assert gone.levelno == (logging.DEBUG if said else logging.INFO)
    if said:
        assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]


def test_a_refusal_is_retried_with_backoff_and_a_foreign_hpa_looked_at_again() -> None:
    refused = Server(autoscaler(), [schedule("peak", owner=OURS)], refuse=403)
    refused.reconcile(at(9))
    assert refused.result == Result(requeue_at=at(10), retry=True)
    foreign = Server(
        autoscaler(),
        [],
        hpa={"metadata": {"name": "web", "namespace": "shop", "resourceVersion": "5"}, "spec": {}},
    )
    _, memory, steps = foreign.reconcile(at(9))
    assert foreign.result == Result(requeue_after=60.0)
    assert steps == 2  # create (409), then decide on the HPA read from the server
    assert memory.foreign_hpa
    # Our cache cannot hold it: the next reconcile reads it again, and says nothing new.
    foreign.reconcile(at(9), memory)
    assert [reason for _, reason, _ in foreign.recorded.events] == ["HPAConflict"]


def test_a_key_that_keeps_stepping_is_retried_with_backoff_after_fourteen_decisions() -> None:
    """The bound is the longest sequence the rules make (twelve decisions, node capacity's four
    steps after the HPA's, the read of the target's readiness and the list of its pods
    included) and two more (docs/architecture.md, "The bound")."""
    decisions: list[Snapshot] = []

    def stepping(snapshot: Snapshot) -> Plan:
        decisions.append(snapshot)
        return Plan(snapshot.memory, SetOwners(()))

    server = Server(autoscaler(), [])
    reconciler = server.reconciler(at(9), {}, stepping)
    assert asyncio.run(reconciler.reconcile(KEY)) == Result(retry=True)
    assert len(decisions) == 14


def test_a_missing_autoscaler_is_forgotten() -> None:
    memories = {KEY: Memory(foreign_hpa=True)}
    server = Server(None, [schedule("early")])
    asyncio.run(server.reconciler(at(9), memories).reconcile(KEY))
    assert memories == {}
    assert server.schedules[0]["status"]["message"] == "ScheduledPodAutoscaler shop/web not found"


def test_a_release_from_a_live_owner_forgets_the_key_too() -> None:
    memories = {KEY: Memory(foreign_hpa=True)}
    old = {**OURS, "uid": "uid-other", "name": "old"}
    server = Server(None, [schedule("moved", owner=old)], live_owners=frozenset({"uid-other"}))
    asyncio.run(server.reconciler(at(9), memories).reconcile(KEY))
    assert server.writes[0] == "owner"
    assert memories == {}


def test_writes_are_one_info_line_per_burst_and_one_debug_line_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    clock = FakeClock(at(10))
    server = Server(
        autoscaler(),
        [schedule("peak", owner=OURS)],
        target_replicas=2,
        hpa_desired=2,
        summary=WriteSummary(clock=clock, logger=logging.getLogger("spa.controller.writes")),
    )
    at_the_window_start(server)
    server.reconcile(at(10), server.plans[-1].memory)
    clock.advance(1)
    info = [r for r in caplog.records if r.levelno == logging.INFO]
    assert [r.getMessage() for r in info] == [
        # 09:00 and 10:00 on a clock that does not move meanwhile: one burst.
        "wrote 2 HPAs, 2 Schedule statuses, 2 ScheduledPodAutoscaler statuses, "
        "1 scale targets in 0.0s"
    ]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert "applied HPA with minReplicas 5, maxReplicas 20" in debug
    assert RAISED in debug


def count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The resourceVersion of each SPA the reconciler validates (makes a ParsedAutoscaler
    of), in order."""
    validated: list[str] = []

    class Counted(derived_module.ParsedAutoscaler):
        def __init__(self, autoscaler: Any) -> None:
            validated.append(autoscaler["metadata"]["resourceVersion"])
            super().__init__(autoscaler)

    monkeypatch.setattr(derived_module, "ParsedAutoscaler", Counted)
    return validated


def test_an_spa_is_validated_once_per_version_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The decisions of a boundary (the HPA pass, then the statuses pass: no decision after
    the write, issue 36) share one validation of the SPA and its desired HPA; a new version of
    the SPA is validated anew, and what was validated is not kept once the key's passes are
    done."""
    validated = count_validations(monkeypatch)
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    decided: list[str] = []

    def decision(snapshot: Snapshot) -> Plan:
        assert snapshot.autoscaler is not None
        decided.append(snapshot.autoscaler["metadata"]["resourceVersion"])
        return decide(snapshot)

    reconciler = server.reconciler(at(9), {KEY: Memory()}, decision)
    assert asyncio.run(reconciler.reconcile(KEY)) == Result(back_of_queue=True)  # HPA created
    assert (decided, validated) == (["1"], ["1"])
    # Edited between the passes (maxReplicas 10 -> 12): a new generation and resourceVersion.
    edited = autoscaler(resourceVersion="2", generation=2)
    edited["spec"]["horizontalPodAutoscalerSpec"]["maxReplicas"] = 12
    assert server.autoscaler_cache is not None
    server.autoscaler_cache.upsert(edited)
    assert asyncio.run(reconciler.reconcile(KEY)) == Result(back_of_queue=True)  # HPA patched
    assert server.hpa is not None
    assert server.hpa["spec"]["maxReplicas"] == 12
    assert (decided[1:], validated) == (["2"], ["1", "2"])
    asyncio.run(reconciler.reconcile(KEY))  # the statuses: the same version, no validation
    assert server.writes.count("status ScheduledPodAutoscaler") == 1
    assert (decided[2:], validated) == (["2"], ["1", "2"])
    asyncio.run(reconciler.reconcile(KEY))  # done with that boundary: validated again
    assert (decided[3:], validated) == (["2"], ["1", "2", "2"])
    assert hpa_writes(server) == ["create", "patch"]


def test_the_validations_kept_between_the_passes_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over MAX_PARSED_KEPT keys waiting for their statuses pass, a key keeps no validation:
    its statuses pass validates the SPA again, so a whole-fleet boundary's peak does not grow
    with the fleet (docs/performance.md, "The boundary's peak")."""
    validated = count_validations(monkeypatch)
    monkeypatch.setattr(derived_module, "MAX_PARSED_KEPT", 0)
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    reconciler = server.reconciler(at(9), {KEY: Memory()})
    assert asyncio.run(reconciler.reconcile(KEY)) == Result(back_of_queue=True)  # HPA created
    assert validated == ["1"]
    asyncio.run(reconciler.reconcile(KEY))  # the statuses
    assert server.writes.count("status ScheduledPodAutoscaler") == 1
    assert validated == ["1", "1"]


@pytest.mark.parametrize(
    "answer",
    [builders.namespace_terminating(), builders.namespace_gone()],
    ids=["terminating", "gone"],
)
def test_an_spa_in_a_namespace_being_deleted_is_left_alone_quietly(
    answer: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """The API server refuses the HPA's creation (403, NamespaceTerminating; or 404, the
    namespace is gone): the SPA is going with its namespace, so it gets no Degraded status, no
    HPARejected Event, no warning and no retry; the refusal is counted and the namespace said
    once (docs/operations.md, "Namespaces being deleted")."""

    def not_made() -> float:
        sample = REGISTRY.get_sample_value(
            "spa_namespace_terminating_writes_total", {"resource": "horizontalpodautoscalers"}
        )
        return sample or 0.0

    before = not_made()
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], namespace_deleted=answer)
    reconciler = server.reconciler(at(10), {})
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            assert asyncio.run(reconciler.reconcile(KEY)) == Result()
    assert server.hpa is None
    assert server.writes == []
    assert server.recorded.events == []
    assert not_made() - before == 3
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    (said,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    state = "is gone" if answer["code"] == 404 else "is being deleted"
    assert said.startswith(f"namespace shop {state}: ")


def test_an_hpa_deleted_behind_the_cache_is_retried_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The cache still holds the HPA the API server has deleted (as the namespace controller
    deletes a namespace's HPAs before its SPAs): the patch at the boundary finds none (404).
    A race, not a failure: no warning, no Event, a retry with backoff, which finds it gone."""
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    events = list(server.recorded.events)
    server.hpa_deleted = True
    reconciler = server.reconciler(at(10), {KEY: memory})
    with caplog.at_level(logging.DEBUG):
        assert asyncio.run(reconciler.reconcile(KEY)) == Result(retry=True)
    assert server.recorded.events == events
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    assert any("deleted meanwhile" in r.getMessage() for r in caplog.records)
