"""Pause and override as `spa plan` and `kubectl spa status` show them, by the controller's own
rule (spa/api/incident.py): the line, the JSON, and what "wanted now" and the HPA state become
(docs/plan.md, docs/status.md)."""

from __future__ import annotations

import json
from typing import Any

from spa.api.adoption import ADOPT_ANNOTATION
from spa.api.incident import OVERRIDE_ANNOTATION, PAUSED_UNTIL_ANNOTATION
from spa.cli.status_render import render_status
from spa.cli.status_report import HpaState, build_status
from spa.plan import Document, build_plan, render_json, render_table
from spa.schedule import format_instant
from tests.unit.status_objects import AT, hpa_for, live_autoscaler, objects, users_hpa

UNTIL = format_instant(AT + 7200)


def annotated(**annotations: str) -> dict[str, Any]:
    spa = live_autoscaler(status={"condition": "Available"})
    spa["metadata"]["annotations"] = annotations
    return spa


def test_the_plan_shows_an_override_and_keeps_the_schedules_values() -> None:
    spa = annotated(**{OVERRIDE_ANNOTATION: f"min=20,until={UNTIL}"})
    plan = build_plan([Document("spa.yaml", 1, spa)], [], at=AT, until=AT + 86400)
    [planned] = plan.autoscalers
    assert (planned.state.min_replicas, planned.state.max_replicas) == (3, 10)
    assert json.loads(render_json(plan))["autoscalers"][0]["incident"] == {
        "paused": None,
        "override": {"minReplicas": 20, "maxReplicas": 20, "until": UNTIL},
        "errors": [],
    }
    assert (
        f"  overridden to minReplicas 20, maxReplicas 20 until {UNTIL}, then the schedule"
        in render_table(plan).splitlines()
    )


def test_the_plan_names_a_malformed_annotation_and_an_expired_one_is_not_shown() -> None:
    spa = annotated(
        **{
            PAUSED_UNTIL_ANNOTATION: "later",
            OVERRIDE_ANNOTATION: f"min=2,until={format_instant(AT)}",
        }
    )
    plan = build_plan([Document("spa.yaml", 1, spa)], [], at=AT, until=AT + 86400)
    incident = json.loads(render_json(plan))["autoscalers"][0]["incident"]
    assert incident["paused"] is None
    assert incident["override"] is None
    [error] = incident["errors"]
    assert error.startswith(f'metadata.annotations["{PAUSED_UNTIL_ANNOTATION}"]: must be')
    assert f"  ignored: {error}" in render_table(plan).splitlines()
    assert plan.errors == []


def test_status_wants_the_override_and_compares_the_hpa_with_it() -> None:
    spa = annotated(**{OVERRIDE_ANNOTATION: f"min=20,max=40,until={UNTIL}"})
    report = build_status(objects(autoscalers=[spa], hpas=[hpa_for(spa, 20, 40)]), at=AT)
    [entry] = report.autoscalers
    assert entry.hpa.state is HpaState.IN_SYNC
    [web] = json.loads(render_status(report, "json"))["autoscalers"]
    assert web["wanted"] == {"minReplicas": 20, "maxReplicas": 40, "activeSchedules": ["push"]}
    assert web["incident"]["override"] == {"minReplicas": 20, "maxReplicas": 40, "until": UNTIL}
    table = render_status(report, "table")
    assert f"  overridden to minReplicas 20, maxReplicas 40 until {UNTIL}, then the schedule" in (
        table.splitlines()
    )


def test_status_of_a_paused_autoscaler_leaves_the_hpa_as_it_is() -> None:
    spa = annotated(**{PAUSED_UNTIL_ANNOTATION: UNTIL})
    report = build_status(objects(autoscalers=[spa], hpas=[hpa_for(spa, 3, 10)]), at=AT)
    [entry] = report.autoscalers
    assert entry.hpa.state is HpaState.PAUSED
    [web] = json.loads(render_status(report, "json"))["autoscalers"]
    assert web["hpa"]["state"] == "Paused"
    assert web["incident"] == {"paused": {"until": UNTIL}, "override": None, "errors": []}
    table = render_status(report, "table").splitlines()
    assert "shop/web   Available   HPA left as it is (paused)" in table
    assert f"  paused until {UNTIL}: the controller leaves the HPA as it is" in table


def test_status_without_annotations_has_no_incident() -> None:
    spa = live_autoscaler(status={"condition": "Available"})
    report = build_status(objects(autoscalers=[spa], hpas=[hpa_for(spa, 10, 20)]), at=AT)
    [web] = json.loads(render_status(report, "json"))["autoscalers"]
    assert web["incident"] is None
    assert web["hpa"]["state"] == "InSync"


def test_a_paused_autoscaler_adopts_nothing_and_status_says_paused() -> None:
    # The controller writes nothing to the HPA while paused, not even the adopting patch.
    spa = annotated(**{PAUSED_UNTIL_ANNOTATION: UNTIL, ADOPT_ANNOTATION: "true"})
    report = build_status(objects(autoscalers=[spa], hpas=[users_hpa()]), at=AT)
    [entry] = report.autoscalers
    assert entry.hpa.state is HpaState.PAUSED
    del spa["metadata"]["annotations"][PAUSED_UNTIL_ANNOTATION]
    report = build_status(objects(autoscalers=[spa], hpas=[users_hpa()]), at=AT)
    assert report.autoscalers[0].hpa.state is HpaState.WILL_ADOPT
