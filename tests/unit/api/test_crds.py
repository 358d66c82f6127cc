"""The CRDs as the API server will use them: structural schemas, CEL rules, printer columns.

The committed CRDs are read from config/ (test_manifests.py checks they are what the generator
makes). The schema is applied with jsonschema the way the API server applies it with strict
field validation (unknown fields are errors), and the CEL rules are evaluated with cel-python,
so a sample or a rule that the API server would reject fails here first. Every rule is also
checked against the models: the CRD must never reject what the controller accepts.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from spa.api import InvalidObject, compile_schedule, parse_schedule, parse_scheduled_pod_autoscaler
from spa.api.crd import legacy_crd, openapi_schema
from spa.api.hpa import QUANTITY_PATTERN, Quantity
from spa.api.resources import (
    CalendarReference,
    Condition,
    ScheduleCondition,
    ScheduledPodAutoscalerCondition,
    ScheduledPodAutoscalerStatus,
    ScheduleStatus,
)
from spa.api.validation.parse import parse_calendar
from spa.schedule import DateSet
from tests.builders import autoscaler, calendar, schedule

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "config"
SPA_CRD = "autoscaling.d-kuro.github.io_scheduledpodautoscalers.yaml"
SCHEDULE_CRD = "autoscaling.d-kuro.github.io_schedules.yaml"
CALENDAR_CRD = "autoscaling.d-kuro.github.io_calendars.yaml"
CLUSTER_CALENDAR_CRD = "autoscaling.d-kuro.github.io_clustercalendars.yaml"
CRDS = {
    "ScheduledPodAutoscaler": SPA_CRD,
    "Schedule": SCHEDULE_CRD,
    "Calendar": CALENDAR_CRD,
    "ClusterCalendar": CLUSTER_CALENDAR_CRD,
}


def _load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text())
    assert isinstance(document, dict)
    return document


@functools.cache
def _crd(name: str) -> dict[str, Any]:
    return _load(CONFIG / "crd" / name)


def _schema(kind: str) -> dict[str, Any]:
    crd = _crd(CRDS[kind])
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _walk(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node with its path (`.spec.startTime`, `.spec.metrics[]`)."""
    if not isinstance(node, dict):
        return
    yield path, node
    for name, sub in node.get("properties", {}).items():
        yield from _walk(sub, f"{path}.{name}")
    if "items" in node:
        yield from _walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _walk(node["additionalProperties"], f"{path}{{}}")


# --- what the API server checks without CEL ---------------------------------------------------


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with unknown fields rejected, as with `kubectl apply` (fieldValidation=Strict)."""
    strict = copy.deepcopy(schema)
    for _, node in _walk(strict):
        if "properties" in node:
            node["additionalProperties"] = False
    return strict


@functools.cache
def _validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_strict(_schema(kind)))


def schema_errors(document: dict[str, Any]) -> list[str]:
    validator = _validator(document["kind"])
    return sorted(
        f"{'.'.join(str(p) for p in error.absolute_path)}: {error.message}"
        for error in validator.iter_errors(document)
    )


# --- what the API server checks with CEL ------------------------------------------------------


@functools.cache
def _program(rule: str) -> Any:
    environment = celpy.Environment()
    return environment.program(environment.compile(rule))


def _holds(rule: str, value: Any) -> bool:
    result = _program(rule).evaluate({"self": celpy.json_to_cel(value)})
    # An evaluation error (a CELEvalError value) is a rejection too, as on the API server.
    return isinstance(result, celpy.celtypes.BoolType) and bool(result)


def cel_failures(schema: dict[str, Any], value: Any) -> list[str]:
    """The messages of every rule that `value` breaks; rules run where their field is set."""
    failures = [
        rule["message"]
        for rule in schema.get("x-kubernetes-validations", [])
        if not _holds(rule["rule"], value)
    ]
    if isinstance(value, dict):
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                failures += cel_failures(sub, value[name])
    if isinstance(value, list) and "items" in schema:
        for item in value:
            failures += cel_failures(schema["items"], item)
    return failures


def api_server_errors(document: dict[str, Any]) -> list[str]:
    errors = schema_errors(document)
    # The API server evaluates CEL only on objects that pass the schema.
    return errors or cel_failures(_schema(document["kind"]), document)


def _any_calendar(reference: CalendarReference) -> DateSet:
    """Every referenced calendar exists (and is empty): these tests are about the spec."""
    return DateSet(name=reference.name)


def controller_errors(document: dict[str, Any]) -> list[str]:
    try:
        if document["kind"] == "Schedule":
            compile_schedule(parse_schedule(document).spec, calendars=_any_calendar)
        elif document["kind"] in ("Calendar", "ClusterCalendar"):
            parse_calendar(document)
        else:
            parse_scheduled_pod_autoscaler(document)
    except InvalidObject as error:
        return [str(e) for e in error.errors]
    return []


# --- structure ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CRDS.values()))
def test_the_schema_is_structural(name: str) -> None:
    schema = _crd(name)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    problems = []
    for path, node in _walk(schema):
        if node.get("x-kubernetes-int-or-string"):
            if node.get("anyOf") != [{"type": "integer"}, {"type": "string"}] or "type" in node:
                problems.append(f"{path}: int-or-string must be anyOf integer/string, untyped")
        elif "type" not in node:
            problems.append(f"{path}: no type")
        elif "anyOf" in node or "oneOf" in node or "allOf" in node:
            problems.append(f"{path}: combinators are only for int-or-string")
        for key in ("$ref", "$defs", "title", "default", "nullable", "const"):
            if key in node:
                problems.append(f"{path}: {key} has no place in a CRD schema")
        if "properties" in node and "additionalProperties" in node:
            problems.append(f"{path}: properties and additionalProperties together")
        if (
            node.get("type") == "object"
            and path.startswith(".spec")
            and not ("properties" in node or isinstance(node.get("additionalProperties"), dict))
        ):
            problems.append(f"{path}: an untyped object would keep anything")
    assert problems == []


@pytest.mark.parametrize("name", [SPA_CRD, SCHEDULE_CRD])
def test_the_status_is_typed_and_a_subresource(name: str) -> None:
    version = _crd(name)["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]
    assert status["type"] == "object"
    assert {"condition", "lastTransitionTime", "observedGeneration", "nextTransitionTime"} <= set(
        status["properties"]
    )


def test_every_string_a_cel_rule_reads_is_bounded() -> None:
    # Without maxLength the API server assumes strings as long as a whole request when it
    # estimates a rule's cost, and rejects the CRD once the estimate is over the budget.
    for name in CRDS.values():
        schema = _crd(name)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        for path, node in _walk(schema):
            for rule in node.get("x-kubernetes-validations", []):
                if node.get("type") == "string":
                    # A rule on the string itself (leadTime's).
                    assert "maxLength" in node, f"{path} is read by {rule['rule']!r}"
                    continue
                # Fields, not methods (`self.x.matches(...)` reads x).
                for field in set(re.findall(r"self\.(\w+)\b(?!\()", rule["rule"])):
                    sub = node["properties"][field]
                    if sub["type"] == "string":
                        assert "maxLength" in sub, f"{path}.{field} is read by {rule['rule']!r}"


def test_names_scope_and_versions() -> None:
    spa, schedule = _crd(SPA_CRD), _crd(SCHEDULE_CRD)
    assert spa["metadata"]["name"] == "scheduledpodautoscalers.autoscaling.d-kuro.github.io"
    assert spa["spec"]["names"] == {
        "kind": "ScheduledPodAutoscaler",
        "listKind": "ScheduledPodAutoscalerList",
        "plural": "scheduledpodautoscalers",
        "singular": "scheduledpodautoscaler",
        "shortNames": ["spa"],
        "categories": ["autoscaling"],
    }
    assert schedule["metadata"]["name"] == "schedules.autoscaling.d-kuro.github.io"
    assert schedule["spec"]["names"] == {
        "kind": "Schedule",
        "listKind": "ScheduleList",
        "plural": "schedules",
        "singular": "schedule",
        "shortNames": ["spasched"],
        "categories": ["autoscaling"],
    }
    for kind, plural, short, scope in (
        ("Calendar", "calendars", "spacal", "Namespaced"),
        ("ClusterCalendar", "clustercalendars", "spaccal", "Cluster"),
    ):
        crd = _crd(CRDS[kind])
        assert crd["metadata"]["name"] == f"{plural}.autoscaling.d-kuro.github.io"
        assert crd["spec"]["names"] == {
            "kind": kind,
            "listKind": f"{kind}List",
            "plural": plural,
            "singular": kind.lower(),
            "shortNames": [short],
            "categories": ["autoscaling"],
        }
        assert crd["spec"]["scope"] == scope
        # Nothing writes a calendar but its author: no status, no subresource.
        assert "subresources" not in crd["spec"]["versions"][0]
        assert "status" not in crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    for crd in (spa, schedule, _crd(CALENDAR_CRD), _crd(CLUSTER_CALENDAR_CRD)):
        assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
        assert crd["spec"]["group"] == "autoscaling.d-kuro.github.io"
        assert [(v["name"], v["served"], v["storage"]) for v in crd["spec"]["versions"]] == [
            ("v1", True, True)
        ]


# --- printer columns (docs/api.md) -------------------------------------------------------

SPA_COLUMNS = [
    ("MINPODS", ".spec.horizontalPodAutoscalerSpec.minReplicas", "integer", 0),
    ("MAXPODS", ".spec.horizontalPodAutoscalerSpec.maxReplicas", "integer", 0),
    ("STATUS", ".status.condition", "string", 0),
    ("AGE", ".metadata.creationTimestamp", "date", 0),
    ("CURRENTMIN", ".status.minReplicas", "integer", 1),
    ("CURRENTMAX", ".status.maxReplicas", "integer", 1),
    ("ACTIVE", ".status.activeSchedules", "string", 1),
    ("NEXTTRANSITION", ".status.nextTransitionTime", "string", 1),
]
SCHEDULE_COLUMNS = [
    ("REFERENCE", ".spec.scaleTargetRef.name", "string", 0),
    ("TYPE", ".spec.type", "string", 0),
    ("STARTTIME", ".spec.startTime", "string", 0),
    ("ENDTIME", ".spec.endTime", "string", 0),
    ("STARTDAYOFWEEK", ".spec.startDayOfWeek", "string", 0),
    ("ENDDAYOFWEEK", ".spec.endDayOfWeek", "string", 0),
    ("TIMEZONE", ".spec.timeZone", "string", 0),
    ("MINPODS", ".spec.minReplicas", "integer", 1),
    ("MAXPODS", ".spec.maxReplicas", "integer", 1),
    ("STATUS", ".status.condition", "string", 0),
    ("AGE", ".metadata.creationTimestamp", "date", 0),
]
CALENDAR_COLUMNS = [
    ("DESCRIPTION", ".spec.description", "string", 0),
    ("AGE", ".metadata.creationTimestamp", "date", 0),
]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (SPA_CRD, SPA_COLUMNS),
        (SCHEDULE_CRD, SCHEDULE_COLUMNS),
        (CALENDAR_CRD, CALENDAR_COLUMNS),
        (CLUSTER_CALENDAR_CRD, CALENDAR_COLUMNS),
    ],
)
def test_printer_columns(name: str, expected: list[tuple[str, str, str, int]]) -> None:
    columns = _crd(name)["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [
        (c["name"], c["jsonPath"], c["type"], c.get("priority", 0)) for c in columns
    ] == expected
    legacy = _load(CONFIG / "legacy" / name)["spec"]["additionalPrinterColumns"]
    assert [(c["name"], c["JSONPath"], c["type"], c.get("priority", 0)) for c in legacy] == expected


@pytest.mark.parametrize("name", list(CRDS.values()))
def test_every_column_points_at_a_field_of_the_schema(name: str) -> None:
    schema = _crd(name)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    paths = dict(_walk(schema))
    for column in _crd(name)["spec"]["versions"][0]["additionalPrinterColumns"]:
        if column["jsonPath"].startswith(".metadata."):
            continue
        node = paths[column["jsonPath"]]
        wanted = {"integer": {"integer"}, "string": {"string", "array"}}[column["type"]]
        assert node["type"] in wanted, column


def test_legacy_crds_are_the_v1_ones_without_cel() -> None:
    for name in CRDS.values():
        assert _load(CONFIG / "legacy" / name) == legacy_crd(_crd(name))
        text = (CONFIG / "legacy" / name).read_text()
        assert "x-kubernetes-validations" not in text
        assert "x-kubernetes-list-type" not in text


# --- samples ------------------------------------------------------------------------------------


def _samples() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted((CONFIG / "samples").rglob("*.y*ml")):
        for index, document in enumerate(yaml.safe_load_all(path.read_text())):
            if document is not None:
                found.append((f"{path.name}#{index}", document))
    return found


def _documented(kind: str) -> list[tuple[str, dict[str, Any]]]:
    """The manifests of `kind` in the YAML blocks of docs/*.md that hold one (other blocks
    may be fragments, with `...`)."""
    found = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"^```yaml\n(.*?)^```", path.read_text(), re.M | re.S):
            if not re.search(rf"^kind: {kind}$", block, re.M):
                continue
            for document in yaml.safe_load_all(block):
                if isinstance(document, dict) and document.get("kind") == kind:
                    found.append((f"docs/{path.name}", document))
    return found


def test_every_kind_has_a_sample_the_api_server_and_the_controller_accept() -> None:
    # config/samples shows each namespaced kind; the cluster-scoped ClusterCalendar is shown by
    # docs/schedules.md's example instead (config/samples/calendars.yaml says so), since the
    # samples are applied into one namespace (make run; tests/integration/test_crds.py).
    cluster_scoped = {
        kind for kind, name in CRDS.items() if _crd(name)["spec"]["scope"] == "Cluster"
    }
    assert cluster_scoped == {"ClusterCalendar"}
    samples = _samples()
    shown = {document.get("kind") for _, document in samples}
    assert shown == {"ScheduledPodAutoscaler", "Schedule", "Calendar"} == set(CRDS) - cluster_scoped
    examples = [example for kind in sorted(cluster_scoped) for example in _documented(kind)]
    assert {document["kind"] for _, document in examples} == cluster_scoped
    for where, document in samples + examples:
        assert api_server_errors(document) == [], where
        assert controller_errors(document) == [], where


@pytest.mark.parametrize(("where", "document"), _samples() or [("none", {})])
def test_samples_pass_the_api_servers_validation(where: str, document: dict[str, Any]) -> None:
    assert document.get("kind") in set(CRDS), where
    assert api_server_errors(document) == [], where


# --- each rule against the bad input it exists for ------------------------------------------------


# A valid Weekly Schedule, a valid SPA and a valid Cron Schedule; each case changes a field of
# their spec (None leaves it out).
_schedule = functools.partial(
    schedule,
    name="s",
    namespace="default",
    type="Weekly",
    startDayOfWeek="Monday",
    endDayOfWeek="Friday",
    startTime="9:00",
    endTime="18:30",
    minReplicas=2,
    maxReplicas=5,
)
_autoscaler = functools.partial(autoscaler, namespace="default", minReplicas=2, metrics=None)
ONE_SHOT: dict[str, Any] = {"type": "OneShot", "startDayOfWeek": None, "endDayOfWeek": None}
_cron = functools.partial(
    _schedule,
    type="Cron",
    startDayOfWeek=None,
    endDayOfWeek=None,
    startTime=None,
    endTime=None,
    schedule="0 8 * * MON-FRI",
    duration="10h",
)

_CPU_METRIC = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
}
_QUEUE_METRIC = {
    "type": "External",
    "external": {
        "metric": {"name": "queue"},
        "target": {"type": "AverageValue", "averageValue": "30"},
    },
}


# Inputs that pass the schema and must be stopped by exactly one CEL rule.
CEL_CASES = [
    (_schedule(startDayOfWeek=None), "startDayOfWeek is required for a Weekly schedule"),
    (_schedule(startDayOfWeek=""), "startDayOfWeek is required for a Weekly schedule"),
    (_schedule(endDayOfWeek=None), "endDayOfWeek is required for a Weekly schedule"),
    (_schedule(endDayOfWeek=""), "endDayOfWeek is required for a Weekly schedule"),
    (_schedule(type="Daily", startTime="2026-03-08T09:00"), "startTime must be yyyy-MM-ddTHH:mm"),
    (_schedule(type="Daily", endTime="2026-03-08T09:00"), "endTime must be yyyy-MM-ddTHH:mm"),
    (
        _schedule(**ONE_SHOT, startTime="09:00", endTime="2026-03-08T10:00"),
        "startTime must be yyyy-MM-ddTHH:mm",
    ),
    (
        _schedule(**ONE_SHOT, startTime="2026-03-08T09:00", endTime="10:00"),
        "endTime must be yyyy-MM-ddTHH:mm",
    ),
    (
        _schedule(**ONE_SHOT, startTime="2026-03-08T09:00", endTime="2026-03-08T09:00"),
        "endTime must be after startTime",
    ),
    (
        _schedule(**ONE_SHOT, startTime="2026-03-08T09:00", endTime="2025-12-31T23:59"),
        "endTime must be after startTime",
    ),
    (_schedule(minReplicas=6, maxReplicas=5), "maxReplicas must not be less than minReplicas"),
    (_autoscaler(minReplicas=11), "minReplicas must not be greater than maxReplicas"),
    (_autoscaler(minReplicas=0), "minReplicas must not be 0 without an Object or External"),
    (
        _autoscaler(minReplicas=0, metrics=[_CPU_METRIC]),
        "minReplicas must not be 0 without an Object or External",
    ),
    (
        _autoscaler(behavior={"scaleUp": {"tolerance": "-0.05"}}),
        "behavior.scaleUp.tolerance must not be negative",
    ),
    (
        _autoscaler(behavior={"scaleDown": {"tolerance": -1}}),
        "behavior.scaleDown.tolerance must not be negative",
    ),
    (_schedule(type="WeeklySpan", startDayOfWeek=None), "startDayOfWeek is required for a Weekly"),
    (_schedule(startTime=None), "startTime is required for a Weekly, Daily, OneShot or"),
    (_schedule(type="Daily", endTime=None), "endTime is required for a Weekly, Daily, OneShot or"),
    (_cron(schedule=None), "schedule is required for a Cron schedule"),
    (_cron(duration=None), "duration is required for a Cron schedule"),
    (_cron(startTime="08:00"), "startTime, endTime, startDayOfWeek and endDayOfWeek"),
    (_cron(startDayOfWeek="Monday"), "startTime, endTime, startDayOfWeek and"),
    (_schedule(duration="1h"), "schedule and duration are only used by a Cron schedule"),
    (_cron(schedule="0 0 8 * * *"), "schedule must have 5 fields"),
    (_cron(schedule="0 8 * *"), "schedule must have 5 fields"),
    (_cron(schedule="@reboot"), "schedule must have 5 fields"),
    (_cron(schedule="0\t8 * * * *"), "schedule must have 5 fields"),
    (_cron(duration="30s"), "duration must be from 1m to 744h"),
    (_cron(duration="745h"), "duration must be from 1m to 744h"),
    (
        _schedule(
            **ONE_SHOT,
            startTime="2026-03-08T09:00",
            endTime="2026-03-08T10:00",
            endDate="2026-03-09",
        ),
        "startDate and endDate are not used by a OneShot schedule",
    ),
    (
        _schedule(startDate="2026-06-02", endDate="2026-06-01"),
        "endDate must not be before startDate",
    ),
    (_schedule(leadTime="24h0m1s"), "leadTime must be at most 24h"),
    (
        calendar(dateRanges=[{"start": "2026-11-30", "end": "2026-11-27"}]),
        "end must not be before start",
    ),
    (
        calendar(namespace="shop", dateRanges=[{"start": "2027-01-01", "end": "2026-12-31"}]),
        "end must not be before start",
    ),
    (_autoscaler(leadTime="1441m"), "leadTime must be at most 24h"),
    (_autoscaler(capacity={"leadTime": "25h"}), "leadTime must be at most 24h"),
    (
        _schedule(leadTime="10m", capacity={"leadTime": "5m"}),
        "capacity.leadTime must be at least leadTime",
    ),
    (
        _autoscaler(leadTime="90s", capacity={"leadTime": "0"}),
        "capacity.leadTime must be at least leadTime",
    ),
]


@pytest.mark.parametrize(("document", "message"), CEL_CASES)
def test_each_cel_rule_rejects_what_it_exists_for(document: dict[str, Any], message: str) -> None:
    assert schema_errors(document) == []
    failures = cel_failures(_schema(document["kind"]), document)
    assert len(failures) == 1
    assert failures[0].startswith(message)
    # The controller refuses the same input (for clusters without CEL, and for `spa plan`).
    assert controller_errors(document) != []


def test_every_cel_rule_has_a_case() -> None:
    rules = [
        rule["message"]
        for kind in CRDS
        for _, node in _walk(_schema(kind))
        for rule in node.get("x-kubernetes-validations", [])
    ]
    covered = {message for _, message in CEL_CASES}
    assert [m for m in rules if not any(m.startswith(c) for c in covered)] == []


GOOD = [
    _schedule(),
    _schedule(type="Daily", startDayOfWeek="", endDayOfWeek=""),
    _schedule(
        type="Daily", startDayOfWeek=None, endDayOfWeek=None, startTime="23:00", endTime="1:30"
    ),
    _schedule(startDayOfWeek="Friday", endDayOfWeek="Monday", minReplicas=None),
    _schedule(**ONE_SHOT, startTime="2026-03-08T09:00", endTime="2026-03-08T09:01"),
    _schedule(minReplicas=5, maxReplicas=5, timeZone="Asia/Tokyo", suspend=True),
    _schedule(type="WeeklySpan", startDayOfWeek="Friday", endDayOfWeek="Monday"),
    _cron(),
    _cron(schedule="@daily", duration="1.5h"),
    _cron(schedule="*/5  0-6 1,15 JAN-MAR sun", duration="744h"),
    _schedule(
        startDate="2026-06-01",
        endDate="2026-06-01",
        excludeDates=["2026-06-01", "2024-02-29"],
        holidays={"country": "DE", "subdivision": "BY", "mode": "Only"},
    ),
    _schedule(
        **ONE_SHOT,
        startTime="2026-03-08T09:00",
        endTime="2026-03-08T10:00",
        excludeDates=["2026-03-08"],
        holidays={"country": "JP"},
    ),
    _schedule(leadTime="1h30m"),
    _schedule(
        calendars=[
            {"kind": "ClusterCalendar", "name": "black-friday", "mode": "Only"},
            {"name": "freeze"},
            {"kind": "Calendar", "name": "x" * 253, "mode": "Skip"},
        ]
    ),
    calendar(),
    calendar(
        description="Retail peak days",
        dates=["2026-11-27", "2026-12-24", "2028-02-29"],
        dateRanges=[
            {"start": "2026-11-27", "end": "2026-11-30"},
            {"start": "2026-12-31", "end": "2026-12-31"},
        ],
        holidays={"country": "US", "subdivision": "NY"},
    ),
    calendar(namespace="shop", holidays={"country": "DE"}),
    _schedule(leadTime="24h"),
    _schedule(leadTime="0"),
    _autoscaler(leadTime="90s"),
    _autoscaler(leadTime="5m", capacity={"leadTime": "300s", "mode": "CapacityBuffer"}),
    _schedule(leadTime="0", capacity={"leadTime": "10m"}),
    _autoscaler(),
    _autoscaler(minReplicas=None),
    _autoscaler(minReplicas=0, metrics=[_CPU_METRIC, _QUEUE_METRIC]),
    _autoscaler(minReplicas=0, metrics=[{**_QUEUE_METRIC, "type": "Object"}]),
    _autoscaler(behavior={"scaleUp": {"tolerance": "0.05"}, "scaleDown": {"tolerance": 0}}),
    _autoscaler(behavior={"scaleUp": {"tolerance": 1}, "scaleDown": {"tolerance": "50m"}}),
    _autoscaler(
        minReplicas=10,
        metrics=[
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "AverageValue", "averageValue": "500m"},
                },
            },
            {
                "type": "External",
                "external": {
                    "metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
                    "target": {"type": "Value", "value": 30},
                },
            },
        ],
        behavior={
            "scaleDown": {
                "stabilizationWindowSeconds": 300,
                "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}],
            }
        },
    ),
]


@pytest.mark.parametrize("document", GOOD)
def test_valid_objects_pass_both_the_api_server_and_the_controller(
    document: dict[str, Any],
) -> None:
    assert api_server_errors(document) == []
    assert controller_errors(document) == []


# Inputs the schema itself (no CEL) rejects; the controller must reject them too.
SCHEMA_CASES = [
    _schedule(type="Monthly"),
    _schedule(startTime="24:00"),
    _schedule(endTime="9:5"),
    _schedule(startDayOfWeek="monday"),
    _schedule(minReplicas=-1),
    _schedule(maxReplicas=2**31),
    _schedule(minReplica=3),
    _schedule(scaleTargetRef=None),
    _schedule(scaleTargetRef={"name": ""}),
    _schedule(timeZone="x" * 65),
    _schedule(startDate="2026-6-1"),
    _schedule(endDate="2026-06-01T00:00"),
    _schedule(excludeDates=["2026-13-01"]),
    _schedule(excludeDates=[f"2026-01-{day:02d}" for day in range(1, 32)] * 12),
    _schedule(holidays={"country": "de"}),
    _schedule(holidays={"country": "DEU"}),
    _schedule(holidays={"subdivision": "BY"}),
    _schedule(holidays={"country": "DE", "mode": "Never"}),
    _schedule(calendars=[{"kind": "Holiday", "name": "x"}]),
    _schedule(calendars=[{"name": ""}]),
    _schedule(calendars=[{"kind": "Calendar"}]),
    _schedule(calendars=[{"name": "x", "mode": "Always"}]),
    _schedule(calendars=[{"name": f"c{n}"} for n in range(17)]),
    calendar(dates=["2026-13-01"]),
    calendar(dates=["2026-11-27T00:00"]),
    calendar(dateRanges=[{"start": "2026-11-27"}]),
    calendar(dateRanges=[{"start": "2026-11-27", "end": "2026-11-30", "step": 1}]),
    calendar(holidays={"country": "US", "mode": "Only"}),
    calendar(holidays={"country": "us"}),
    calendar(namespace="shop", extra=True),
    _cron(duration="1d"),
    _cron(duration="90"),
    _cron(duration="1h30ms"),
    _autoscaler(maxReplicas=None),
    _autoscaler(minReplicas=-1),
    _autoscaler(
        metrics=[
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Value", "value": "1x"}},
            }
        ]
    ),
    _autoscaler(metrics=[{"type": "Pods"}], unknown=True),
    _autoscaler(behavior={"scaleUp": {"selectPolicy": "Sometimes"}}),
]


@pytest.mark.parametrize("document", SCHEMA_CASES)
def test_the_schema_rejects_what_the_controller_rejects(document: dict[str, Any]) -> None:
    assert schema_errors(document) != []
    assert controller_errors(document) != []


# Near misses of both formats (hour 24, minute 60, one-digit minute, month 13, ...) as well as
# noise, so that the boundaries of the patterns are exercised.
_TIME_TEXT = st.one_of(
    st.builds(
        "{}:{}".format,
        st.integers(0, 25).map(str) | st.integers(0, 25).map("{:02d}".format),
        st.integers(0, 61).map("{:02d}".format) | st.integers(0, 9).map(str),
    ),
    st.builds(
        "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}".format,
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 24),
        st.integers(0, 60),
    ),
    st.text(alphabet="0123456789:T-", max_size=16),
)


@given(kind=st.sampled_from(["Daily", "OneShot"]), start=_TIME_TEXT, end=_TIME_TEXT)
def test_the_api_server_never_rejects_a_time_the_controller_accepts(
    kind: str, start: str, end: str
) -> None:
    document = _schedule(type=kind, startTime=start, endTime=end)
    if kind == "OneShot":
        document["spec"].pop("startDayOfWeek")
        document["spec"].pop("endDayOfWeek")
    if controller_errors(document) == []:
        assert api_server_errors(document) == []


def _status_errors(kind: str, status: dict[str, Any]) -> list[str]:
    schema = _strict(_schema(kind)["properties"]["status"])
    validator = jsonschema.Draft202012Validator(schema)
    return [error.message for error in validator.iter_errors(status)]


def _aliases(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def test_the_status_the_controller_writes_is_kept_whole() -> None:
    # A status field missing from the schema would be pruned by the API server without an
    # error: the controller would never see what it wrote.
    condition = Condition(
        type="Ready",
        status="True",
        last_transition_time="2026-03-08T06:30:00Z",
        reason="Applied",
        message="the HPA has the desired spec",
        observed_generation=3,
    )
    autoscaler = ScheduledPodAutoscalerStatus(
        condition=ScheduledPodAutoscalerCondition.Available,
        last_transition_time="2026-03-08T06:30:00Z",
        conditions=[condition],
        observed_generation=3,
        min_replicas=5,
        max_replicas=10,
        active_schedules=["a", "b"],
        next_transition_time="2026-03-08T07:00:00Z",
    ).to_wire()
    schedule = ScheduleStatus(
        condition=ScheduleCondition.Degraded,
        last_transition_time="2026-03-08T06:30:00Z",
        message="unknown time zone 'Asia/Tokio'",
        observed_generation=2,
        next_transition_time="2026-03-08T07:00:00Z",
    ).to_wire()
    assert set(autoscaler) == _aliases(ScheduledPodAutoscalerStatus)
    assert set(schedule) == _aliases(ScheduleStatus)
    assert _status_errors("ScheduledPodAutoscaler", autoscaler) == []
    assert _status_errors("Schedule", schedule) == []


def test_a_union_with_no_crd_form_is_refused() -> None:
    # A future model field typed `int | list[str]` must stop the generator, not produce a
    # schema the API server would reject or, worse, prune with.
    class Odd(BaseModel):
        value: int | list[str]

    with pytest.raises(ValueError, match="no CRD form"):
        openapi_schema(Odd)


def test_optional_fields_and_quantities_take_their_crd_form() -> None:
    class Sample(BaseModel):
        count: int | None = None
        amount: Quantity

    properties = openapi_schema(Sample)["properties"]
    assert properties["count"] == {"type": "integer"}
    assert properties["amount"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "x-kubernetes-int-or-string": True,
        "pattern": QUANTITY_PATTERN,
    }
