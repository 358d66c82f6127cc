"""`autoscaling/v2` HorizontalPodAutoscalerSpec, embedded whole in a ScheduledPodAutoscaler.

Modelled field by field (rather than kept as an opaque dict) so that a manifest is validated
before it reaches the cluster, and so that the CRD schema is generated from the same source.
`autoscaling/v2beta2` has the same shape, which is what makes the fallback for old clusters a
matter of the API path only.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator, Field

from spa.api.base import ApiModel

__all__ = [
    "CrossVersionObjectReference",
    "HorizontalPodAutoscalerBehavior",
    "HorizontalPodAutoscalerSpec",
    "MetricSpec",
    "MetricTarget",
    "MinReplicas",
    "NonNegativeQuantity",
    "Quantity",
]

INT32_MAX = 2_147_483_647

_QUANTITY = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?")
QUANTITY_PATTERN = f"^{_QUANTITY.pattern}$"


def _check_quantity(value: object) -> object:
    # One clear message instead of one per member of the int | str union.
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _QUANTITY.fullmatch(value) is not None:
        return value
    # The value itself is added by the caller's message, shortened (spa.api.validation.messages).
    raise ValueError("must be a Kubernetes quantity such as 500m, 2, 1Gi or 1e3")


def _check_non_negative(value: object) -> object:
    # As the API server validates an HPA's behavior tolerance: a quantity whose sign is not -.
    value = _check_quantity(value)
    if (isinstance(value, int) and value < 0) or (isinstance(value, str) and value[:1] == "-"):
        raise ValueError("must not be negative (a fraction such as 0.05 or 50m, or 0)")
    return value


Quantity = Annotated[int | str, BeforeValidator(_check_quantity)]
NonNegativeQuantity = Annotated[int | str, BeforeValidator(_check_non_negative)]
Replicas = Annotated[int, Field(ge=1, le=INT32_MAX)]
# minReplicas may be 0: HPA scale-to-zero, which the API server allows only with its
# HPAScaleToZero feature gate and an Object or External metric (docs/schedules.md,
# "Scale to zero"); the metric rule is checked where the metrics are known.
MinReplicas = Annotated[int, Field(ge=0, le=INT32_MAX)]


class CrossVersionObjectReference(ApiModel):
    """The object to scale, or the object a metric describes."""

    kind: Annotated[str, Field(min_length=1)]
    name: Annotated[str, Field(min_length=1)]
    api_version: str | None = None


class LabelSelectorRequirement(ApiModel):
    key: str
    operator: str
    values: list[str] | None = None


class LabelSelector(ApiModel):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class MetricIdentifier(ApiModel):
    name: str
    selector: LabelSelector | None = None


class MetricTargetType(StrEnum):
    Utilization = "Utilization"
    Value = "Value"
    AverageValue = "AverageValue"


class MetricTarget(ApiModel):
    type: MetricTargetType
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: Annotated[int, Field(ge=0, le=INT32_MAX)] | None = None


class ResourceMetricSource(ApiModel):
    name: str
    target: MetricTarget


class ContainerResourceMetricSource(ApiModel):
    name: str
    target: MetricTarget
    container: str


class PodsMetricSource(ApiModel):
    metric: MetricIdentifier
    target: MetricTarget


class ObjectMetricSource(ApiModel):
    described_object: CrossVersionObjectReference
    target: MetricTarget
    metric: MetricIdentifier


class ExternalMetricSource(ApiModel):
    metric: MetricIdentifier
    target: MetricTarget


class MetricSourceType(StrEnum):
    Object = "Object"
    Pods = "Pods"
    Resource = "Resource"
    ContainerResource = "ContainerResource"
    External = "External"


class MetricSpec(ApiModel):
    type: MetricSourceType
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None


class ScalingPolicyType(StrEnum):
    Pods = "Pods"
    Percent = "Percent"


class HPAScalingPolicy(ApiModel):
    type: ScalingPolicyType
    value: Annotated[int, Field(ge=1, le=INT32_MAX)]
    period_seconds: Annotated[int, Field(ge=1, le=1800)]


class ScalingPolicySelect(StrEnum):
    Max = "Max"
    Min = "Min"
    Disabled = "Disabled"


class HPAScalingRules(ApiModel):
    stabilization_window_seconds: Annotated[int, Field(ge=0, le=3600)] | None = None
    select_policy: ScalingPolicySelect | None = None
    policies: list[HPAScalingPolicy] | None = None
    tolerance: NonNegativeQuantity | None = None
    """The ratio by which the metric may differ from its target before the HPA scales in this
    direction (0.1 when unset). autoscaling/v2 from Kubernetes 1.33 (HPAConfigurableTolerance
    feature gate; on by default from 1.35); an API server without it drops the field, and the
    controller says so once (docs/schedules.md, "Newer HPA fields")."""


class HorizontalPodAutoscalerBehavior(ApiModel):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


SCALE_TO_ZERO_METRICS = frozenset({MetricSourceType.Object, MetricSourceType.External})
"""The metric types that let minReplicas be 0: they do not come from the target's pods."""


class HorizontalPodAutoscalerSpec(ApiModel):
    """The base spec: the generated HPA has exactly this spec while no window is active."""

    scale_target_ref: CrossVersionObjectReference
    """The workload to scale, usually a Deployment."""
    max_replicas: Replicas
    """Upper bound outside schedule windows."""
    min_replicas: MinReplicas | None = None
    """Lower bound outside schedule windows; unset means 1. 0 (scale to zero) needs an Object
    or External metric and the API server's HPAScaleToZero feature gate."""
    metrics: list[MetricSpec] | None = None
    """The metrics the HPA scales on, as in autoscaling/v2."""
    behavior: HorizontalPodAutoscalerBehavior | None = None
    """Scale-up and scale-down behaviour, as in autoscaling/v2."""

    def scales_to_zero(self) -> bool:
        """Whether minReplicas 0 is allowed with these metrics (the API server's rule)."""
        return any(metric.type in SCALE_TO_ZERO_METRICS for metric in self.metrics or ())
