"""The TypedDicts of spa.api.wire against the models: nothing checks a TypedDict at run time, so
its field names are held here to the JSON names of the pydantic models (docs/api.md) they
mirror, and the status patches to what the controller actually sends."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from spa.api import hpa, resources, wire
from spa.controller.decide import status_fields


def _json_names(model: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


@pytest.mark.parametrize(
    ("body", "model"),
    [
        (wire.OwnerReference, resources.OwnerReference),
        (wire.ObjectMeta, resources.ObjectMeta),
        (wire.Condition, resources.Condition),
        (wire.ScheduledPodAutoscaler, resources.ScheduledPodAutoscaler),
        (wire.ScheduledPodAutoscalerSpec, resources.ScheduledPodAutoscalerSpec),
        (wire.ScheduledPodAutoscalerStatus, resources.ScheduledPodAutoscalerStatus),
        (wire.ScheduledPodAutoscalerStatusPatch, resources.ScheduledPodAutoscalerStatus),
        (wire.Schedule, resources.Schedule),
        (wire.ScheduleSpec, resources.ScheduleSpec),
        (wire.ScheduleTargetRef, resources.ScheduleTargetRef),
        (wire.ScheduleStatus, resources.ScheduleStatus),
        (wire.ScheduleStatusPatch, resources.ScheduleStatus),
        (wire.HorizontalPodAutoscalerSpec, hpa.HorizontalPodAutoscalerSpec),
        (wire.CrossVersionObjectReference, hpa.CrossVersionObjectReference),
    ],
)
def test_fields_are_json_names_of_the_model(body: Any, model: type[BaseModel]) -> None:
    assert set(body.__annotations__) <= _json_names(model)


@pytest.mark.parametrize(
    "body",
    [wire.ObjectMeta, wire.ScheduledPodAutoscaler, wire.Schedule, wire.HorizontalPodAutoscaler],
)
def test_only_what_the_api_server_guarantees_is_required(body: Any) -> None:
    expected = (
        {"name", "namespace", "uid", "resourceVersion"} if body is wire.ObjectMeta else {"metadata"}
    )
    assert body.__required_keys__ == expected


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (resources.ScheduledPodAutoscalerStatus(), wire.ScheduledPodAutoscalerStatusPatch),
        (resources.ScheduleStatus(), wire.ScheduleStatusPatch),
    ],
)
def test_status_patches_declare_every_field_sent(status: BaseModel, body: Any) -> None:
    sent = status_fields(status)
    assert set(sent) == body.__required_keys__


def test_an_spa_status_patch_sends_conditions_only_when_there_are_some() -> None:
    condition = resources.Condition(
        type="Ready", status="True", last_transition_time="2026-11-16T10:30:00Z", reason="Applied"
    )
    sent = status_fields(resources.ScheduledPodAutoscalerStatus(conditions=[condition]))
    assert set(sent) - wire.ScheduledPodAutoscalerStatusPatch.__required_keys__ == {"conditions"}
    assert set(wire.ScheduledPodAutoscalerStatusPatch.__annotations__) == set(sent)


def test_typing_a_body_neither_copies_nor_checks_it() -> None:
    raw: dict[str, Any] = {"metadata": {"name": "web"}, "unexpected": 1}
    assert wire.typed(wire.Schedule, raw) is raw
    assert wire.typed_optional(wire.Schedule, None) is None
    objects = [raw]
    assert wire.typed_list(wire.Schedule, objects) is objects
