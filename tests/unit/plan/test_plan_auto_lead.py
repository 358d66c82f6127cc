"""`spa plan` with `leadTime: Auto` (docs/plan.md, docs/schedules.md "Auto lead times"):
offline, the default until measured; from the cluster (or a manifest exported with its
status), the lead learned from the SPA's status.windows, and the transitions move with it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from spa.cli.cluster import ClusterObjects, cluster_plan
from spa.plan import build_plan
from spa.plan.manifests import Document
from spa.plan.render import render_table
from spa.schedule import format_instant, instant_of
from tests import builders

AT = instant_of(datetime.fromisoformat("2026-11-23T06:00:00Z"))
UNTIL = AT + 86_400
NOON = builders.schedule(**builders.DAILY_NOON, minReplicas=5)
# Two measured windows: Ready 38 s and 30 s after the HPA was raised.
WINDOWS: list[dict[str, Any]] = [
    {
        "schedule": "noon",
        "boundary": "2026-11-22T12:00:00Z",
        "raisedAt": "2026-11-22T11:58:00Z",
        "readyAt": "2026-11-22T11:58:38Z",
        "outcome": "Early",
    },
    {
        "schedule": "noon",
        "boundary": "2026-11-21T12:00:00Z",
        "raisedAt": "2026-11-21T11:58:00Z",
        "readyAt": "2026-11-21T11:58:30Z",
        "outcome": "Early",
    },
]


def _starts(plan: Any) -> list[str]:
    [web] = plan.autoscalers
    return [format_instant(instant) for instant, state in web.transitions if "noon" in state.active]


def test_offline_the_default_until_measured() -> None:
    spa = builders.autoscaler(leadTime="Auto", capacity={"leadTime": "Auto"})
    documents = [Document("m.yaml", n, body) for n, body in enumerate([spa, NOON], 1)]
    plan = build_plan(documents, [], at=AT, until=UNTIL)
    assert plan.errors == []
    table = render_table(plan)
    assert "  leadTime: Auto (default 2m until measured)" in table
    assert "  capacity.leadTime: Auto (default 3m until measured)" in table
    assert _starts(plan) == ["2026-11-23T11:58:00Z"]


def test_from_the_cluster_the_learned_lead() -> None:
    spa = builders.autoscaler(
        leadTime="Auto",
        metadata={"uid": "uid-web"},
        status={"condition": "Available", "windows": WINDOWS},
    )
    objects = ClusterObjects(server="https://127.0.0.1:6443", autoscalers=[spa], schedules=[NOON])
    plan = cluster_plan(objects, at=AT, until=UNTIL)
    assert plan.errors == []
    assert "  leadTime: Auto (53s, learned: p90 of 2 windows 38 s + 15 s)" in render_table(plan)
    assert _starts(plan) == ["2026-11-23T11:59:07Z"]


def test_a_fixed_lead_says_nothing_more() -> None:
    spa = builders.autoscaler(leadTime="5m")
    documents = [Document("m.yaml", n, body) for n, body in enumerate([spa, NOON], 1)]
    assert "leadTime:" not in render_table(build_plan(documents, [], at=AT, until=UNTIL))


def test_a_schedule_of_its_own_auto_uses_its_spas_learned_lead() -> None:
    spa = builders.autoscaler(
        metadata={"uid": "uid-web"}, status={"condition": "Available", "windows": WINDOWS}
    )
    noon = builders.schedule(
        **builders.DAILY_NOON, minReplicas=5, leadTime="Auto", capacity={"leadTime": "Auto"}
    )
    objects = ClusterObjects(server="https://127.0.0.1:6443", autoscalers=[spa], schedules=[noon])
    plan = cluster_plan(objects, at=AT, until=UNTIL)
    assert plan.errors == []
    assert _starts(plan) == ["2026-11-23T11:59:07Z"]
    [web] = plan.autoscalers
    # Nodes: no head start measured yet, so 3m in all (the default) before the window.
    assert [s.capacity_from for s in web.schedules] == [
        instant_of(datetime.fromisoformat("2026-11-23T11:57:00Z"))
    ]
