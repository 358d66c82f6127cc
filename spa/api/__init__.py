"""API models of the two custom resources and the validation users see in messages.

Depends on the pure engine (to build windows) and on pydantic; never on the Kubernetes client.
"""

from spa.api.resources import (
    API_VERSION,
    GROUP,
    SCHEDULE_KIND,
    SCHEDULED_POD_AUTOSCALER,
    VERSION,
    Condition,
    Schedule,
    ScheduleCondition,
    ScheduledPodAutoscaler,
    ScheduledPodAutoscalerCondition,
    ScheduledPodAutoscalerStatus,
    ScheduleSpec,
    ScheduleStatus,
)
from spa.api.validation.compile import (
    CompiledSchedule,
    autoscaler_base,
    autoscaler_lead,
    compile_schedule,
)
from spa.api.validation.messages import FieldError, InvalidObject
from spa.api.validation.parse import parse_schedule, parse_scheduled_pod_autoscaler

__all__ = [
    "API_VERSION",
    "GROUP",
    "SCHEDULED_POD_AUTOSCALER",
    "SCHEDULE_KIND",
    "VERSION",
    "CompiledSchedule",
    "Condition",
    "FieldError",
    "InvalidObject",
    "Schedule",
    "ScheduleCondition",
    "ScheduleSpec",
    "ScheduleStatus",
    "ScheduledPodAutoscaler",
    "ScheduledPodAutoscalerCondition",
    "ScheduledPodAutoscalerStatus",
    "autoscaler_base",
    "autoscaler_lead",
    "compile_schedule",
    "parse_schedule",
    "parse_scheduled_pod_autoscaler",
]
