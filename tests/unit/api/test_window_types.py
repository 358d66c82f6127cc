"""The table of window types (spa/api/window_types.py) against everything that says the same.

For each type and each field whose presence depends on the type, a Schedule is built with the
field missing or set, and the controller's validation, the committed CRD's CEL rules (evaluated
with cel-python, as in test_crds.py) and docs/schedules.md's table of the types must all agree
with the table's row: required fields are required, refused ones refused, the others free.
A new window type fails here until it has a row, a valid example below and a line in the docs.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml

from spa.api import InvalidObject, compile_schedule, parse_schedule
from spa.api.crd import CAPACITY_LEAD_RULE, SCHEDULE_RULES, schedule_crd
from spa.api.resources import ScheduleType
from spa.api.window_types import (
    BLANK_IS_UNSET,
    WINDOW_FIELDS,
    WINDOW_TYPES,
    TimeFormat,
    only_used_by,
)
from tests.builders import schedule

ROOT = Path(__file__).resolve().parents[3]
SCHEDULE_CRD = ROOT / "config" / "crd" / "autoscaling.d-kuro.github.io_schedules.yaml"

# A valid spec of each type, with exactly its required fields (and a time zone).
VALID: dict[ScheduleType, dict[str, Any]] = {
    ScheduleType.Weekly: {
        "startTime": "09:00",
        "endTime": "18:00",
        "startDayOfWeek": "Monday",
        "endDayOfWeek": "Friday",
    },
    ScheduleType.Daily: {"startTime": "09:00", "endTime": "18:00"},
    ScheduleType.OneShot: {"startTime": "2026-03-08T09:00", "endTime": "2026-03-08T18:00"},
    ScheduleType.WeeklySpan: {
        "startTime": "18:00",
        "endTime": "08:00",
        "startDayOfWeek": "Friday",
        "endDayOfWeek": "Monday",
    },
    ScheduleType.Cron: {"schedule": "0 8 * * MON-FRI", "duration": "10h"},
}

# A value of each field that is valid in itself (the times in each format).
SAMPLE = {
    "startDayOfWeek": "Tuesday",
    "endDayOfWeek": "Thursday",
    "schedule": "30 7 * * *",
    "duration": "2h",
    "startDate": "2026-01-01",
    "endDate": "2026-12-31",
}
SAMPLE_TIME = {
    TimeFormat.HOUR_MINUTE: ("07:00", "19:00"),
    TimeFormat.LOCAL_DATETIME: ("2026-03-08T07:00", "2026-03-08T19:00"),
}


def _sample(kind: ScheduleType, field: str) -> str:
    if field in ("startTime", "endTime"):
        start, end = SAMPLE_TIME[WINDOW_TYPES[kind].time_format or TimeFormat.HOUR_MINUTE]
        return start if field == "startTime" else end
    return SAMPLE[field]


def _spec(kind: ScheduleType, **changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "scaleTargetRef": {"name": "web"},
        "type": kind.value,
        "timeZone": "Europe/Berlin",
        "minReplicas": 2,
        **VALID[kind],
        **changes,
    }
    return {key: value for key, value in spec.items() if value is not None}


def _controller_errors(spec: dict[str, Any]) -> dict[str | None, str]:
    document = schedule(name="s", namespace="default", **spec)
    try:
        compile_schedule(parse_schedule(document).spec)
    except InvalidObject as invalid:
        return {error.field: error.message for error in invalid.errors}
    return {}


@functools.cache
def _spec_rules() -> tuple[tuple[str, str], ...]:
    crd = yaml.safe_load(SCHEDULE_CRD.read_text(encoding="utf-8"))
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return tuple((rule["rule"], rule["message"]) for rule in spec["x-kubernetes-validations"])


@functools.cache
def _program(rule: str) -> Any:
    environment = celpy.Environment()
    return environment.program(environment.compile(rule))


def _cel_failures(spec: dict[str, Any]) -> list[str]:
    failures = []
    for rule, message in _spec_rules():
        result = _program(rule).evaluate({"self": celpy.json_to_cel(spec)})
        if not (isinstance(result, celpy.celtypes.BoolType) and bool(result)):
            failures.append(message)
    return failures


def test_the_table_has_one_row_per_type() -> None:
    assert list(WINDOW_TYPES) == list(ScheduleType)
    for kind, row in WINDOW_TYPES.items():
        assert row.type is kind
        assert row.description
        assert "\n" not in row.description
        assert set(row.required) <= set(WINDOW_FIELDS)
        assert set(row.not_used) <= set(WINDOW_FIELDS)
        assert not set(row.required) & set(row.not_used)
        # A type that refuses a field most types use says why ("it has its own dates").
        if any(only_used_by(field) is None for field in row.not_used):
            assert row.not_used_because
    # A test example for each type, with exactly its required fields.
    assert list(VALID) == list(ScheduleType)
    for kind, example in VALID.items():
        assert set(example) == set(WINDOW_TYPES[kind].required)


@pytest.mark.parametrize("kind", list(ScheduleType))
def test_a_valid_example_passes_everywhere(kind: ScheduleType) -> None:
    assert _controller_errors(_spec(kind)) == {}
    assert _cel_failures(_spec(kind)) == []


CASES = [(kind, field) for kind in ScheduleType for field in WINDOW_FIELDS]


@pytest.mark.parametrize(("kind", "field"), CASES)
def test_validation_and_cel_agree_with_the_table(kind: ScheduleType, field: str) -> None:
    row = WINDOW_TYPES[kind]
    if field in row.required:
        changed = _spec(kind, **{field: None})
        errors = _controller_errors(changed)
        assert errors.get(f"spec.{field}", "").startswith(f"is required for a {kind} schedule")
        assert any(message.startswith(f"{field} is required") for message in _cel_failures(changed))
        if field in BLANK_IS_UNSET:  # "" is unset too
            blank = _spec(kind, **{field: ""})
            assert f"spec.{field}" in _controller_errors(blank)
            assert _cel_failures(blank)
    elif field in row.not_used:
        changed = _spec(kind, **{field: _sample(kind, field)})
        message = _controller_errors(changed).get(f"spec.{field}", "")
        assert re.match(r"is (not|only) used by a ", message), message
        failures = _cel_failures(changed)
        assert len(failures) == 1
        assert field in failures[0]
        assert " used by a " in failures[0]
    else:  # optional, or ignored: neither the controller nor the API server minds
        changed = _spec(kind, **{field: _sample(kind, field)})
        assert _controller_errors(changed) == {}
        assert _cel_failures(changed) == []


@pytest.mark.parametrize("kind", [kind for kind in ScheduleType if WINDOW_TYPES[kind].time_format])
@pytest.mark.parametrize("field", ["startTime", "endTime"])
def test_each_type_takes_its_own_time_format_only(kind: ScheduleType, field: str) -> None:
    own = WINDOW_TYPES[kind].time_format
    assert own is not None
    for other, (start, end) in SAMPLE_TIME.items():
        if other is own:
            continue
        changed = _spec(kind, **{field: start if field == "startTime" else end})
        assert f"spec.{field}" in _controller_errors(changed)
        failures = _cel_failures(changed)
        assert failures
        assert failures[0].startswith(f"{field} must be")
        assert f"{own.described} for " in failures[0]


def test_each_generated_rule_is_in_the_committed_crd() -> None:
    # test_manifests.py checks the files are current; this, that they hold these very rules.
    # The window's rules, then the capacity lead's (docs/schedules.md, "Node capacity").
    rules = (*SCHEDULE_RULES, CAPACITY_LEAD_RULE)
    assert tuple((rule.rule, rule.message) for rule in rules) == _spec_rules()
    spec = schedule_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    # The fields' descriptions (docstrings in spa/api/resources.py) name the types they concern.
    fields = spec["properties"]
    for kind in ScheduleType:
        assert kind.value in fields["type"]["description"]
        row = WINDOW_TYPES[kind]
        if row.time_format is not None:
            for field in ("startTime", "endTime"):
                assert kind.value in fields[field]["description"]
                assert row.time_format.written in fields[field]["description"]
        for field in ("startDayOfWeek", "endDayOfWeek"):
            if field in row.required:
                assert kind.value in fields[field]["description"]


def _docs_rows() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "schedules.md").read_text(encoding="utf-8")
    section = text.split("## The types", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`\w+`", cells[0]):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_the_docs_table_of_types_agrees_with_the_table() -> None:
    rows = _docs_rows()
    assert sorted(rows) == sorted(kind.value for kind in ScheduleType)
    for kind, row in WINDOW_TYPES.items():
        times, days, active = rows[kind.value]
        if row.time_format is None:
            assert times.startswith("—")
            for field in row.required:
                assert f"`{field}`" in times
        else:
            assert times == f"`{row.time_format.written}`"
        needs_days = {"startDayOfWeek", "endDayOfWeek"} <= set(row.required)
        assert ("(both required)" in days) == needs_days
        assert active.startswith(row.description)
