"""`kubectl spa status` shows the last window starts of status.windows and the Auto leads in
force (docs/status.md), from the objects as the API server returns them."""

from __future__ import annotations

import json
from typing import Any

import yaml

from spa.api.resources import WindowRecord
from spa.cli.status_render import render_status, window_line
from spa.cli.status_report import build_status
from tests.unit.status_objects import AT, hpa_for, live_autoscaler, objects

WINDOWS: list[dict[str, Any]] = [
    {
        "schedule": "push",
        "boundary": "2026-11-23T02:50:00Z",
        "minReplicas": 10,
        "lead": {"seconds": 53, "source": "Learned", "explanation": "learned"},
        "raisedAt": "2026-11-23T02:49:07Z",
        "readyAt": "2026-11-23T02:49:18Z",
        "readySeconds": -42,
        "outcome": "Early",
    },
    {
        "schedule": "push",
        "boundary": "2026-11-22T02:50:00Z",
        "minReplicas": 10,
        "raisedAt": "2026-11-22T02:48:00Z",
        "readyAt": "2026-11-22T02:51:15Z",
        "readySeconds": 75,
        "outcome": "Late",
    },
    {
        "schedule": "push",
        "boundary": "2026-11-21T02:50:00Z",
        "minReplicas": 10,
        "outcome": "Missed",
        "reason": "PodsPending",
    },
    # Written by somebody else: left out, the others still shown.
    {"schedule": "push", "outcome": "Early"},
]


def _report(**spec: Any) -> Any:
    spa = live_autoscaler(**spec, status={"condition": "Available", "windows": WINDOWS})
    return build_status(objects(autoscalers=[spa], hpas=[hpa_for(spa, 10, 20)]), at=AT)


def test_the_table_has_one_line_per_window_newest_first() -> None:
    table = render_status(_report(), "table")
    lines = [line.strip() for line in table.splitlines()]
    start = lines.index("windows (UTC, B = the window's start):")
    assert lines[start + 1 : start + 4] == [
        "2026-11-23 02:50 push: Ready at B-42 s",
        "2026-11-22 02:50 push: late: Ready at B+75 s",
        "2026-11-21 02:50 push: missed: pods Pending or not Ready",
    ]
    assert "lead:" not in table  # no Auto lead: the spec says it


def test_auto_leads_say_where_they_come_from() -> None:
    table = render_status(_report(leadTime="Auto", capacity={"leadTime": "Auto"}), "table")
    # Ready 11 s and 195 s after the raise: the larger of two, plus a tenth of it.
    assert "  lead: 3m35s (learned: p90 of 2 windows 195 s + 20 s)" in table
    # Nothing measured of the nodes: the default, never below the pod lead.
    assert "  capacity lead: 3m35s (default 3m35s until measured)" in table


def test_yaml_and_json_carry_the_windows_as_recorded() -> None:
    report = _report(leadTime="Auto")
    document = yaml.safe_load(render_status(report, "yaml"))["autoscalers"][0]
    assert document["windows"] == WINDOWS[:3]
    assert document["leadTime"]["source"] == "Learned"
    assert document["capacityLeadTime"] is None
    assert json.loads(render_status(report, "json"))["autoscalers"][0]["windows"] == WINDOWS[:3]


def test_a_window_not_measured_says_what_to_grant() -> None:
    line = window_line(
        WindowRecord(
            schedule="push",
            boundary="2026-11-23T02:50:00Z",
            outcome="Missed",
            reason="NotReadable",
        )
    )
    assert line == (
        "2026-11-23 02:50 push: missed: Ready not measured (grant get on the target, "
        "docs/install.md)"
    )


def test_each_reason_reads_as_words_and_a_pending_window_says_what_holds_it_back() -> None:
    def line(**entry: Any) -> str:
        return window_line(
            WindowRecord.model_validate(
                {"schedule": "push", "boundary": "2026-11-21T02:50:00Z", **entry}
            )
        )

    assert line(outcome="Missed", reason="Quota") == (
        "2026-11-21 02:50 push: missed: a ResourceQuota refused pods"
    )
    assert line(outcome="Missed", reason="NotScaled") == (
        "2026-11-21 02:50 push: missed: the target's spec.replicas never reached the minimum"
    )
    assert line(outcome="Missed", reason="Overridden").endswith(
        "missed: an override held minReplicas below the window's"
    )
    assert line(outcome="Pending", reason="Paused") == (
        "2026-11-21 02:50 push: being measured, held back: paused"
    )
    assert line(outcome="Pending") == "2026-11-21 02:50 push: being measured"


def test_a_window_in_its_capacity_lead_says_nodes_ordered_and_then_how_long_they_took() -> None:
    """An entry made when node capacity was held, before the pods' raise (docs/status.md)."""
    ordered = {
        "schedule": "push",
        "boundary": "2026-11-21T02:50:00Z",
        "outcome": "Pending",
        "capacityHeldAt": "2026-11-21T02:47:00Z",
    }
    assert window_line(WindowRecord.model_validate(ordered)) == (
        "2026-11-21 02:50 push: nodes ordered, pods not raised yet"
    )
    stood = {**ordered, "nodesReadyAt": "2026-11-21T02:47:40Z"}
    assert window_line(WindowRecord.model_validate(stood)) == (
        "2026-11-21 02:50 push: nodes ordered, pods not raised yet, nodes Ready 40 s after "
        "the order"
    )
    early = {**stood, "raisedAt": "2026-11-21T02:48:00Z", "outcome": "Early", "readySeconds": -90}
    assert window_line(WindowRecord.model_validate(early)) == (
        "2026-11-21 02:50 push: Ready at B-90 s, nodes Ready 40 s after the order"
    )
    # Handed over before the nodes stood: how long the window's pods waited for them.
    waited: dict[str, object] = {**ordered, "raisedAt": "2026-11-21T02:48:00Z", "outcome": "Late"}
    waited |= {"readySeconds": 25, "podsWaitedSeconds": 87}
    assert window_line(WindowRecord.model_validate(waited)) == (
        "2026-11-21 02:50 push: late: Ready at B+25 s, pods waited 87 s for a node"
    )
