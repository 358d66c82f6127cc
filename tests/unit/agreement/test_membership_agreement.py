"""The controller, `spa plan` and `kubectl spa status` agree on which Schedules apply.

The three used to judge membership apart: the plan and the status applied every valid Schedule
that named an SPA, while the controller applies at most 100 (the oldest) and never one
controlled by another kind of object. Here the same objects go to all three: the real decision
(driven by the real Reconciler against tests/unit/spa_model.py), `build_plan` and
`build_status`, and they must agree on the Schedules that apply, on why each other one does
not (word for word, and that alone, even when its spec or its SPA's is invalid too), on the
bounds wanted now, and so on "HPA in sync".
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from spa.api import FieldError, wire
from spa.api.membership import (
    MAX_SCHEDULES_PER_AUTOSCALER,
    Exclusion,
    foreign_controller,
    membership,
)
from spa.cli.cluster import ClusterObjects
from spa.cli.status_report import HpaState, StatusReport, build_status
from spa.plan import Document, Plan, build_plan
from tests.builders import calendar
from tests.unit.spa_model import OURS, Server, at, autoscaler, schedule

CAMPAIGN: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Campaign",
    "name": "launch",
    "uid": "uid-campaign",
    "controller": True,
}
# Monday 10:30: the windows of 10:00-11:00 are active, those of 02:00-03:00 are not.
NOW = at(10, 30)
COUNT = MAX_SCHEDULES_PER_AUTOSCALER + 2


def _created(index: int) -> str:
    return f"2026-11-01T{index // 3600:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z"


def fleet() -> list[dict[str, Any]]:
    """102 Schedules of shop/web, one second apart (half already owned, half to adopt): s000 is
    active; s001 is invalid and still takes its place; s100 and s101 are beyond the limit and
    would raise the bounds; and, older than all, one controlled by a Campaign, active too."""
    objects = [
        schedule(
            "campaign",
            owner=CAMPAIGN,
            created="2026-10-01T00:00:00Z",
            start="10:00",
            end="11:00",
            minReplicas=50,
            maxReplicas=60,
        )
    ]
    for index in range(COUNT):
        spec: dict[str, Any] = {"start": "02:00", "end": "03:00"}
        if index == 0:
            spec = {"start": "10:00", "end": "11:00", "minReplicas": 6}
        elif index == 1:
            spec["timeZone"] = "Europe/Nowhere"
        elif index >= MAX_SCHEDULES_PER_AUTOSCALER:
            spec = {"start": "10:00", "end": "11:00", "minReplicas": 40, "maxReplicas": 45}
        objects.append(
            schedule(
                f"s{index:03d}",
                owner=OURS if index % 2 else None,
                created=_created(index),
                **spec,
            )
        )
    return objects


APPLIED = {f"s{i:03d}" for i in range(MAX_SCHEDULES_PER_AUTOSCALER)} - {"s001"}
NOT_APPLIED = {"campaign", "s001", "s100", "s101"}


def plan_of(bodies: list[dict[str, Any]], file: str = "cluster") -> Plan:
    """`spa plan` of these objects, as manifests of one file, for the day from NOW."""
    documents = [Document(file, index, body) for index, body in enumerate(bodies, 1)]
    return build_plan(documents, [], at=NOW, until=NOW + 86400)


def status_of(server: Server) -> StatusReport:
    """`kubectl spa status` of the cluster as the controller left it."""
    assert server.autoscaler is not None
    return build_status(
        ClusterObjects(
            server="https://cluster",
            autoscalers=[copy.deepcopy(server.autoscaler)],
            schedules=copy.deepcopy(server.schedules),
            hpas=[copy.deepcopy(server.hpa)] if server.hpa is not None else [],
            calendars=copy.deepcopy(server.calendars),
        ),
        at=NOW,
    )


def test_the_controller_the_plan_and_the_status_agree_on_what_applies() -> None:
    # The controller: adopt, create the HPA, then write every status.
    server = Server(autoscaler(), copy.deepcopy(fleet()))
    final, memory, _ = server.reconcile(NOW)
    final, memory, _ = server.reconcile(NOW, memory)
    assert final.statuses, "the controller wrote the statuses"
    assert server.hpa is not None
    conditions = {
        obj["metadata"]["name"]: (obj["status"]["condition"], obj["status"].get("message"))
        for obj in server.schedules
    }
    controller_applied = {
        name for name, (condition, _) in conditions.items() if condition != "Degraded"
    }
    assert controller_applied == APPLIED
    hpa_bounds = (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"])
    assert hpa_bounds == (6, 20)

    # `spa plan` of the same objects, as manifests.
    plan = plan_of([autoscaler(), *fleet()])
    (planned,) = plan.autoscalers
    assert {s.name for s in planned.schedules} == APPLIED
    assert (planned.state.min_replicas, planned.state.max_replicas) == hpa_bounds
    assert list(planned.state.active) == ["s000"]
    # Why each other one does not apply: the words of the controller's status.
    said: dict[str, list[str]] = {}
    for error in plan.errors:
        assert error.name is not None
        said.setdefault(error.name, []).append(str(FieldError(error.field, error.message)))
    assert set(said) == NOT_APPLIED
    for name in NOT_APPLIED:
        assert conditions[name][0] == "Degraded"
        assert "; ".join(said[name]) == conditions[name][1]

    # `kubectl spa status` of the cluster as the controller left it.
    (entry,) = status_of(server).autoscalers
    assert entry.plan is not None
    assert {s.name for s in entry.plan.schedules} == APPLIED
    assert entry.hpa.state is HpaState.IN_SYNC
    problems = {(p.name, p.message) for p in entry.problems}
    assert problems == {(name, conditions[name][1]) for name in NOT_APPLIED}
    assert len(entry.problems) == len(NOT_APPLIED)  # each said once


FOREIGN = (
    "controlled by Campaign launch, so it is not adopted by ScheduledPodAutoscaler shop/web and "
    "does not apply; remove that controller ownerReference to use it"
)


@pytest.mark.parametrize(
    "invalid",
    [{"timeZone": "Europe/Nowhere"}, {"minReplicas": -1}],
    ids=["compile_schedule refuses it", "the model refuses it"],
)
@pytest.mark.parametrize("autoscaler_valid", [True, False], ids=["SPA valid", "SPA invalid"])
def test_a_foreign_schedule_that_is_invalid_too_is_said_foreign_alone_by_all_three(
    invalid: dict[str, Any], autoscaler_valid: bool
) -> None:
    # The controller judges membership before it reads a spec (the SPA's or the Schedule's):
    # a Schedule controlled by a Campaign is Degraded as foreign, with a ForeignController
    # Warning, whatever its spec. `spa plan` said its spec errors (and, for a valid spec, that
    # the SPA was invalid) as well or instead, and `kubectl spa status` listed both.
    spa = autoscaler()
    if not autoscaler_valid:
        spa["spec"]["horizontalPodAutoscalerSpec"]["maxReplicas"] = 0
    objects = [
        schedule("campaign", owner=CAMPAIGN, created="2026-10-01T00:00:00Z", **invalid),
        schedule("mine", owner=OURS, created="2026-10-02T00:00:00Z"),
    ]
    assert foreign_controller(wire.typed(wire.Schedule, objects[0])) == "Campaign launch"

    server = Server(copy.deepcopy(spa), copy.deepcopy(objects))
    final, memory, _ = server.reconcile(NOW)
    if autoscaler_valid:  # the HPA was created; the statuses come next
        final, memory, _ = server.reconcile(NOW, memory)
    assert final.statuses
    status = server.schedules[0]["status"]
    assert (status["condition"], status["message"]) == ("Degraded", FOREIGN)
    events = {(reason, message) for _, reason, message in server.recorded.events}
    assert ("ForeignController", FOREIGN) in events  # on the Schedule
    assert ("ForeignController", f"Schedule campaign: {FOREIGN}") in events  # on the SPA
    assert "InvalidSchedule" not in {reason for reason, _ in events}  # "mine" is valid

    plan = plan_of([spa, *objects])
    said = [(error.field, error.message) for error in plan.errors if error.name == "campaign"]
    assert said == [(None, FOREIGN)]
    assert all(s.name != "campaign" for planned in plan.autoscalers for s in planned.schedules)

    (entry,) = status_of(server).autoscalers
    assert [p.message for p in entry.problems if p.name == "campaign"] == [FOREIGN]


def test_the_shared_rule_says_why() -> None:
    judged = membership("shop/web", wire.typed_list(wire.Schedule, fleet()), owner_uid="uid-web")
    reasons = {entry.schedule["metadata"]["name"]: entry.reason for entry in judged.excluded}
    assert reasons == {
        "campaign": Exclusion.FOREIGN_CONTROLLER,
        "s100": Exclusion.TOO_MANY_SCHEDULES,
        "s101": Exclusion.TOO_MANY_SCHEDULES,
    }
    # The invalid one is a member (it takes its place); its spec is judged by compile_schedule.
    assert [m["metadata"]["name"] for m in judged.members] == [
        f"s{i:03d}" for i in range(MAX_SCHEDULES_PER_AUTOSCALER)
    ]


def test_an_adoption_refused_frees_the_place_and_an_owned_schedule_ignores_it() -> None:
    objects = [
        schedule("a", created="2026-11-01T00:00:01Z"),
        schedule("b", owner=OURS, created="2026-11-01T00:00:02Z"),
        schedule("c", created="2026-11-01T00:00:03Z"),
    ]
    failures = {"uid-a": "adoption refused", "uid-b": "an old refusal"}
    judged = membership(
        "shop/web",
        wire.typed_list(wire.Schedule, objects),
        owner_uid="uid-web",
        limit=2,
        adoption_failures=failures,
    )
    assert [m["metadata"]["name"] for m in judged.members] == ["b", "c"]
    assert [(e.schedule["metadata"]["name"], e.reason, e.message) for e in judged.excluded] == [
        ("a", Exclusion.ADOPTION_FAILED, "adoption refused")
    ]


def test_manifests_without_creation_times_keep_the_first_100_by_name() -> None:
    """Git holds no creationTimestamp: the plan keeps the first 100 by name, the controller's
    order for Schedules created in the same second (one `kubectl apply`)."""
    bodies: list[dict[str, Any]] = [autoscaler()]
    for index in reversed(range(COUNT)):
        body = schedule(f"s{index:03d}")
        del body["metadata"]["creationTimestamp"], body["metadata"]["uid"]
        bodies.append(body)
    plan = plan_of(bodies, "web.yaml")
    (planned,) = plan.autoscalers
    assert [s.name for s in planned.schedules] == [
        f"s{i:03d}" for i in range(MAX_SCHEDULES_PER_AUTOSCALER)
    ]
    assert [(e.name, e.field) for e in plan.errors] == [("s101", None), ("s100", None)]
    assert all("already has 100 Schedules" in e.message for e in plan.errors)


def test_the_controller_the_plan_and_the_status_agree_on_shared_calendars() -> None:
    """Today (Monday 16) is on the Only calendar and not on the Skip one for `peak`; `quiet`
    skips today; `lost` refers to a calendar that does not exist, `broken` to an invalid one.
    All three must apply the same Schedules, want the same bounds now, and say the same of the
    two that do not apply (docs/schedules.md, "Shared calendars")."""
    calendars = [
        calendar(name="black-friday", dates=["2026-11-16"]),
        calendar(
            name="freeze",
            namespace="shop",
            dateRanges=[{"start": "2026-11-16", "end": "2026-11-17"}],
        ),
        calendar(name="broken", dates=["2026-11-31"]),
    ]
    only = {"kind": "ClusterCalendar", "name": "black-friday", "mode": "Only"}
    objects = [
        schedule("peak", owner=OURS, minReplicas=8, maxReplicas=30, calendars=[only]),
        schedule(
            "quiet", owner=OURS, minReplicas=12, maxReplicas=40, calendars=[{"name": "freeze"}]
        ),
        schedule(
            "lost", owner=OURS, calendars=[{"kind": "ClusterCalendar", "name": "cyber-monday"}]
        ),
        schedule("bad", owner=OURS, calendars=[{"kind": "ClusterCalendar", "name": "broken"}]),
    ]
    server = Server(autoscaler(), copy.deepcopy(objects), calendars=copy.deepcopy(calendars))
    final, memory, _ = server.reconcile(NOW)
    final, memory, _ = server.reconcile(NOW, memory)
    assert final.statuses
    assert server.hpa is not None
    hpa_bounds = (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"])
    assert hpa_bounds == (8, 30)
    conditions = {
        obj["metadata"]["name"]: (obj["status"]["condition"], obj["status"].get("message"))
        for obj in server.schedules
    }
    assert conditions["peak"][0] == "Progressing"
    assert conditions["quiet"][0] == "Available"
    assert conditions["lost"] == (
        "Degraded",
        'spec.calendars[0]: ClusterCalendar "cyber-monday" not found',
    )
    assert conditions["bad"][0] == "Degraded"
    assert conditions["bad"][1].startswith(
        'spec.calendars[0]: ClusterCalendar "broken" is invalid: spec.dates[0]: '
    )

    plan = plan_of([autoscaler(), *calendars, *objects])
    (planned,) = plan.autoscalers
    assert {s.name for s in planned.schedules} == {"peak", "quiet"}
    assert (planned.state.min_replicas, planned.state.max_replicas) == hpa_bounds
    # Tuesday's window of `quiet`, within the day's horizon, is skipped by the freeze.
    assert [(s.schedule, s.skipped.reason) for s in planned.skipped] == [
        ("quiet", "calendar: Calendar/freeze")
    ]
    said = {
        e.name: str(FieldError(e.field, e.message)) for e in plan.errors if e.kind == "Schedule"
    }
    assert said == {"lost": conditions["lost"][1], "bad": conditions["bad"][1]}
    # The invalid calendar is reported as a document of its own too.
    assert [(e.kind, e.name) for e in plan.errors if e.kind != "Schedule"] == [
        ("ClusterCalendar", "broken")
    ]

    (entry,) = status_of(server).autoscalers
    assert entry.plan is not None
    assert {s.name for s in entry.plan.schedules} == {"peak", "quiet"}
    assert entry.hpa.state is HpaState.IN_SYNC
    assert sorted((p.name, p.message) for p in entry.problems) == [
        ("bad", conditions["bad"][1]),
        ("lost", conditions["lost"][1]),
    ]
    windows = {s.name: s.window for s in entry.plan.schedules}
    assert windows["peak"] == "daily 10:00-11:00, only on ClusterCalendar/black-friday"
    assert windows["quiet"] == "daily 10:00-11:00, skipping Calendar/freeze"


def test_a_calendar_not_found_says_where_one_of_its_name_is_in_all_three() -> None:
    """The controller's "not found" is the plan's, hint included: a ClusterCalendar of the name
    referred to as a Calendar, a Calendar of the name referred to as a ClusterCalendar, a
    Calendar of another namespace (docs/schedules.md, "Shared calendars"). The controller's
    caches hold every calendar; it used to look up the referred key alone and say nothing
    more."""
    calendars = [
        calendar(name="black-friday", dates=["2026-11-16"]),
        calendar(name="freeze", namespace="shop", dates=["2026-11-16"]),
        calendar(name="retail", namespace="ops", dates=["2026-11-16"]),
        calendar(name="retail", namespace="web-team", dates=["2026-11-16"]),
    ]
    objects = [
        schedule("no-kind", owner=OURS, calendars=[{"name": "black-friday"}]),
        schedule(
            "as-cluster", owner=OURS, calendars=[{"kind": "ClusterCalendar", "name": "freeze"}]
        ),
        schedule("elsewhere", owner=OURS, calendars=[{"name": "retail"}]),
        schedule("nowhere", owner=OURS, calendars=[{"name": "gone"}]),
    ]
    server = Server(autoscaler(), copy.deepcopy(objects), calendars=copy.deepcopy(calendars))
    _, memory, _ = server.reconcile(NOW)
    server.reconcile(NOW, memory)
    said = {
        obj["metadata"]["name"]: (obj["status"]["condition"], obj["status"].get("message"))
        for obj in server.schedules
    }
    assert said == {
        "no-kind": (
            "Degraded",
            'spec.calendars[0]: Calendar "black-friday" in namespace shop not found; a '
            "ClusterCalendar of that name exists: write kind: ClusterCalendar",
        ),
        "as-cluster": (
            "Degraded",
            'spec.calendars[0]: ClusterCalendar "freeze" not found; a Calendar of that name '
            "exists in namespace shop: leave out kind (or write kind: Calendar)",
        ),
        "elsewhere": (
            "Degraded",
            'spec.calendars[0]: Calendar "retail" in namespace shop not found; a Calendar of '
            "that name exists in namespaces ops, web-team (a Calendar serves the Schedules of "
            "its own namespace only)",
        ),
        "nowhere": ("Degraded", 'spec.calendars[0]: Calendar "gone" in namespace shop not found'),
    }
    warnings = sorted(m for kind, _, m in server.recorded.events if kind == "Warning")
    assert warnings == sorted(message for _, message in said.values())

    plan = plan_of([autoscaler(), *calendars, *objects])
    planned = {
        e.name: str(FieldError(e.field, e.message)) for e in plan.errors if e.kind == "Schedule"
    }
    assert planned == {name: message for name, (_, message) in said.items()}
    (entry,) = status_of(server).autoscalers
    assert {p.name: p.message for p in entry.problems} == planned
