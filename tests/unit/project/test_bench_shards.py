"""bench/shards.py's reading of what a sharded fleet did, on hand-made audit events and watch
instants: which SPA each write is for, the fleet's and a shard's raises against B, the
failover (the standby's first write is the first after it took the Lease, a write of the
killed replica still in flight is not it), the audit log read as it grows, and the smoke's
verdict. The benchmark itself runs in tests/bench (its --smoke) and by `make bench-fleet
SHARDS=4`."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench import shards
from bench.load import CONTROLLER_USER, NAMESPACE
from bench.measured import NOTHING_MEASURED
from bench.plane import SA_NAME, SA_NAMESPACE
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.controller.shards import SHARD_LABEL
from tests.testenv.audit import AuditEvent

B = datetime(2026, 11, 28, 8, 0, tzinfo=UTC).timestamp()
OWNER = {"app-00000": "s0", "app-00001": "s1", "app-00002": "s0", "app-00003": "s1"}


def event(
    resource: str, name: str | None, received: float, *, completed: float | None = None
) -> AuditEvent:
    return AuditEvent(
        audit_id=f"{resource}-{name}-{received}",
        user=CONTROLLER_USER,
        verb="patch",
        resource=resource,
        namespace=NAMESPACE,
        name=name,
        code=200,
        received=B + received,
        completed=B + (received + 0.01 if completed is None else completed),
        user_agent="spa",
    )


def test_each_shard_has_its_own_lease_named_as_spa_run_names_it() -> None:
    assert shards.shard_names(3) == ["s0", "s1", "s2"]
    assert shards.lease_name(shards.ONE) == "scheduled-pod-autoscaler-leader"
    assert shards.lease_name("s1") == "scheduled-pod-autoscaler-leader-shard-s1"


def test_the_shards_may_list_the_leases_where_they_campaign_as_the_account_they_run_as() -> None:
    """The grant applied before the shards start (config/components/shards) is for the
    ServiceAccount the benchmark runs them as, in the namespace of their Leases."""
    granted = [d for d in yaml.safe_load_all(shards.SHARDS_RBAC.read_text()) if d]
    role = next(d for d in granted if d["kind"] == "Role")
    binding = next(d for d in granted if d["kind"] == "RoleBinding")
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == SA_NAMESPACE
    assert {r for rule in role["rules"] for r in rule["resources"]} == {"leases"}
    assert [v for rule in role["rules"] for v in rule["verbs"]] == ["list"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": SA_NAME, "namespace": SA_NAMESPACE}
    ]


def test_an_spa_and_its_schedules_are_labelled_for_the_same_shard() -> None:
    spa: dict[str, Any] = {"metadata": {"name": "app-00001"}, "spec": {}}
    schedule: dict[str, Any] = {
        "metadata": {"name": "app-00001-prescale"},
        "spec": {"scaleTargetRef": {"name": "app-00001"}},
    }
    shards.label_fleet([(SCHEDULED_POD_AUTOSCALERS, spa), (SCHEDULES, schedule)], OWNER)
    assert spa["metadata"]["labels"] == {SHARD_LABEL: "s1"}
    assert schedule["metadata"]["labels"] == {SHARD_LABEL: "s1"}


def test_no_spa_of_the_fleet_raises_its_missing_target_at_once() -> None:
    """A standby that takes a Lease would otherwise read each missing target's /scale in the
    window its failover is measured in, which the warm processes learned to skip."""
    spa: dict[str, Any] = {"metadata": {"name": "app-00001"}, "spec": {}}
    schedule: dict[str, Any] = {"metadata": {"name": "app-00001-prescale"}, "spec": {}}
    shards.without_immediate_scale_up([(SCHEDULED_POD_AUTOSCALERS, spa), (SCHEDULES, schedule)])
    assert spa["spec"] == {"scaleUpImmediately": False}
    assert schedule["spec"] == {}


@pytest.mark.parametrize(
    ("resource", "name", "spa"),
    [
        ("horizontalpodautoscalers", "app-00002", "app-00002"),
        ("scheduledpodautoscalers/status", "app-00002", "app-00002"),
        ("schedules/status", "app-00002-prescale", "app-00002"),
        ("events", "app-00002.1872", None),  # an Event's name says nothing reliable
        ("leases", "scheduled-pod-autoscaler-leader-shard-s0", None),
    ],
)
def test_the_spa_a_write_is_for(resource: str, name: str, spa: str | None) -> None:
    assert shards.spa_of(event(resource, name, 0.0)) == spa


def test_raises_against_the_boundary_from_the_watch_and_the_audit_log() -> None:
    changed = {"app-00000": B - 4.0, "app-00002": B - 1.5}
    patches = [
        event("horizontalpodautoscalers", "app-00000", -4.2, completed=-4.1),
        event("horizontalpodautoscalers", "app-00002", -1.7, completed=-1.6),
    ]
    figures = shards.raise_figures(["app-00000", "app-00002"], changed, patches, B)
    assert figures["raised"] == 2
    assert figures["first_seconds"] == pytest.approx(-4.0)
    assert figures["last_seconds"] == pytest.approx(-1.5)
    assert figures["first_sent_seconds"] == pytest.approx(-4.2)
    assert figures["last_hpa_audit_seconds"] == pytest.approx(-1.6)
    # Two patches from the first sent to the last done (2.6 s).
    assert figures["hpa_patches_per_second"] == pytest.approx(2 / 2.6)


def test_a_raise_not_seen_is_counted_missing() -> None:
    figures = shards.raise_figures(["app-00000", "app-00002"], {"app-00000": B + 1.0}, [], B)
    assert (figures["spas"], figures["raised"]) == (2, 1)
    assert math.isnan(figures["first_sent_seconds"])


def failover(**changes: Any) -> dict[str, Any]:
    """Shard s0's active replica killed at B - 30 s, its standby acquiring at B - 13 s."""
    arguments: dict[str, Any] = {
        "kill_at": B - 30.0,
        "boundary": B,
        "acquired_at": B - 13.0,
        "lease_seen_at": B - 12.9,
        "victim_names": ["app-00000", "app-00002"],
        "changed": {"app-00000": B - 31.0, "app-00002": B - 12.0},
        "writes": [
            # The killed replica's last patch, received after the kill (in flight).
            event("horizontalpodautoscalers", "app-00000", -29.99),
            # Shard s1's writes, whoever wrote them, are not the standby's.
            event("horizontalpodautoscalers", "app-00001", -12.8),
            event("scheduledpodautoscalers/status", "app-00002", -12.5),
            event("horizontalpodautoscalers", "app-00002", -12.2),
        ],
        "owner": OWNER,
        "victim": "s0",
    }
    return shards.failover_figures(**(arguments | changes))


def test_the_failover_from_the_kill_to_the_standbys_lease_and_first_write() -> None:
    figures = failover()
    assert figures["killed_seconds"] == pytest.approx(-30.0)
    assert figures["lease_acquired_seconds"] == pytest.approx(17.0)
    assert figures["lease_seen_seconds"] == pytest.approx(17.1)
    assert figures["first_write_seconds"] == pytest.approx(17.5)  # its status, not s1's HPA
    assert (figures["raised_before_kill"], figures["raised_after_kill"]) == (1, 1)
    assert figures["last_raise_seconds"] == pytest.approx(-12.0)
    assert figures["within_failover"] is True


def test_a_shard_raised_later_than_b_plus_its_failover_is_not_within() -> None:
    figures = failover(changed={"app-00000": B - 31.0, "app-00002": B + 17.5})
    assert figures["last_raise_seconds"] == pytest.approx(17.5)
    assert figures["within_failover"] is False
    # A standby that never took the Lease: no failover time, no first write, not within.
    never = failover(acquired_at=math.nan)
    assert math.isnan(never["lease_acquired_seconds"])
    assert math.isnan(never["first_write_seconds"])
    assert never["within_failover"] is False


def test_the_audit_log_is_read_as_it_grows_each_request_once(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"

    def line(audit_id: str, stage: str, verb: str, resource: str, at: str) -> str:
        return json.dumps(
            {
                "auditID": audit_id,
                "stage": stage,
                "verb": verb,
                "user": {"username": CONTROLLER_USER},
                "objectRef": {"resource": resource, "namespace": "bench", "name": "app-00000"},
                "requestReceivedTimestamp": at,
                "stageTimestamp": at,
            }
        )

    at = "2026-11-28T08:00:01.000000Z"
    path.write_text(
        line("w", "ResponseStarted", "watch", "horizontalpodautoscalers", at)
        + "\n"
        + line("p", "ResponseComplete", "patch", "horizontalpodautoscalers", at)
        + "\n"
        + line("l", "ResponseComplete", "update", "leases", at)
        + "\n"
        + line("half", "ResponseComplete", "patch", "leases", at)[:40]  # being written
    )
    tail = shards.AuditTail(path)
    assert [event.audit_id for event in tail.controller(B)] == ["w", "p"]
    assert [event.audit_id for event in tail.controller(B, leases=True)] == ["w", "p", "l"]
    with path.open("a") as more:  # the watch ends, the half line completes
        more.write(
            line("half", "ResponseComplete", "patch", "leases", at)[40:]
            + "\n"
            + line("w", "ResponseComplete", "watch", "horizontalpodautoscalers", at)
            + "\n"
        )
    assert [event.audit_id for event in tail.controller(B, leases=True)] == ["w", "p", "l", "half"]
    tail.forget(B + 2)
    assert tail.controller(B, leases=True) == []


def result(**failover_changes: Any) -> dict[str, Any]:
    """What a run of 4 SPAs in 2 shards returns, every check passing."""

    def transition(label: str) -> dict[str, Any]:
        return {
            "label": label,
            "complete": True,
            "fleet": {"raised": 4},
            "idle": {"writes": 0, "requests": {}},
            "writes_per_object": {"patch horizontalpodautoscalers": {1: 4}},
        }

    killed = transition("2 shards, s0 killed") | {
        "failover": {
            "shard": "s0",
            "lease_acquired_seconds": 17.0,
            "first_write_seconds": 17.4,
            "last_raise_seconds": 0.1,
            "within_failover": True,
        }
        | failover_changes
    }
    return {
        "n": 4,
        "one_process": {"transitions": [transition("one process")]},
        "sharded": {
            "start": {"writes": 0},
            "transitions": [transition("2 shards")],
            "failover": killed,
        },
    }


def test_the_smoke_passes_a_run_that_holds_every_claim() -> None:
    assert shards.smoke_failures(result()) == []


def test_the_smoke_fails_a_slow_failover_or_a_shard_raised_too_late() -> None:
    slow = shards.smoke_failures(result(lease_acquired_seconds=35.0))
    assert any("took the Lease 35.0 s after the kill" in failure for failure in slow), slow
    late = shards.smoke_failures(result(within_failover=False, last_raise_seconds=20.0))
    assert any("last raise 20.0 s after B" in failure for failure in late), late
    silent = shards.smoke_failures(result(first_write_seconds=math.nan))
    assert any("wrote nothing" in failure for failure in silent), silent


def test_the_smoke_fails_an_hpa_written_twice_or_writes_at_the_shards_start() -> None:
    run = result()
    run["sharded"]["transitions"][0]["writes_per_object"] = {
        "patch horizontalpodautoscalers": {1: 3, 2: 1}
    }
    run["sharded"]["start"]["writes"] = 5
    failures = shards.smoke_failures(run)
    assert any("not once each" in failure for failure in failures), failures
    assert any("5 writes as the shards started" in failure for failure in failures), failures


def test_a_report_of_no_results_says_nothing_was_measured() -> None:
    assert shards.markdown([]) == NOTHING_MEASURED
