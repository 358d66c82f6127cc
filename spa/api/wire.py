"""Static types of the JSON bodies the controller reads and writes, as `TypedDict`s.

Why not the pydantic models of `spa.api`, or the `kubernetes` package's generated classes:
decoding every object into models costs more CPU than the whole request path of the client
(docs/architecture.md, "The client"), while the controller reads a handful of fields of each
object. A `TypedDict` costs nothing at run time: it *is* the dict the client decoded, the
informer cached and the API server will be sent; only mypy sees the field names and types.
The price is that nothing checks them at run time, so:

- Only the fields the controller reads (and the bodies it writes) are declared, in the shapes
  of the models in `spa.api.resources` and `spa.api.hpa` (docs/api.md) and of the Kubernetes
  API; a unit test holds the names to the models' JSON names.
- `total=False` wherever the API server may leave a field out, and `Required[...]` only where
  it guarantees one: the name, namespace, uid and resourceVersion of a stored object. Code
  keeps reading optional fields with `.get`, as a cached object may come from anybody.
- A raw dict becomes typed in one place, :func:`typed` (with its list and optional forms),
  called where JSON enters the controller: its informers' caches, the client's answers, and
  the JSON dump of a model. That is the one unchecked cast; past it, mypy checks every read.
"""

from collections.abc import Mapping
from typing import Any, Literal, Required, TypedDict, TypeVar, cast

__all__ = [
    "CalendarReference",
    "Condition",
    "CrossVersionObjectReference",
    "HorizontalPodAutoscaler",
    "HorizontalPodAutoscalerSpec",
    "HorizontalPodAutoscalerStatus",
    "LeadInForce",
    "NewHorizontalPodAutoscaler",
    "NewObjectMeta",
    "ObjectMeta",
    "OwnerReference",
    "Schedule",
    "ScheduleSpec",
    "ScheduleStatus",
    "ScheduleStatusPatch",
    "ScheduleTargetRef",
    "ScheduledPodAutoscaler",
    "ScheduledPodAutoscalerSpec",
    "ScheduledPodAutoscalerStatus",
    "ScheduledPodAutoscalerStatusPatch",
    "WindowRecord",
    "typed",
    "typed_list",
    "typed_optional",
]


# -- metadata -------------------------------------------------------------------------------------


class OwnerReference(TypedDict, total=False):
    """`metav1.OwnerReference`; the API server requires the first four fields."""

    apiVersion: Required[str]
    kind: Required[str]
    name: Required[str]
    uid: Required[str]
    controller: bool
    blockOwnerDeletion: bool


class ObjectMeta(TypedDict, total=False):
    """`metav1.ObjectMeta` of a stored (namespaced) object: the server always sets its name,
    namespace, uid and resourceVersion."""

    name: Required[str]
    namespace: Required[str]
    uid: Required[str]
    resourceVersion: Required[str]
    generation: int
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    creationTimestamp: str
    deletionTimestamp: str


class NewObjectMeta(TypedDict):
    """The metadata of the HPA as the controller creates it (no uid or version yet)."""

    name: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]


class Condition(TypedDict, total=False):
    """`metav1.Condition` (`spa.api.resources.Condition`). Read from the status as found, which
    anybody may have written, so nothing is required."""

    type: str
    status: Literal["True", "False", "Unknown"]
    lastTransitionTime: str
    reason: str
    message: str
    observedGeneration: int


# -- HorizontalPodAutoscaler (autoscaling/v2) -----------------------------------------------------


class CrossVersionObjectReference(TypedDict, total=False):
    kind: str
    name: str
    apiVersion: str


class HorizontalPodAutoscalerSpec(TypedDict, total=False):
    """`spa.api.hpa.HorizontalPodAutoscalerSpec` on the wire. The controller reads the bounds;
    `metrics` and `behavior` it only hashes and compares as JSON, so their insides are left
    untyped (they are the model's, and the API server rewrites their quantities). Nothing is
    `Required`: the controller reads a spec of anybody's HPA, or none, with `.get`."""

    scaleTargetRef: CrossVersionObjectReference
    maxReplicas: int
    minReplicas: int
    metrics: list[dict[str, Any]]
    behavior: dict[str, Any]


class HorizontalPodAutoscalerStatus(TypedDict, total=False):
    """Written by the HPA controller (kube-controller-manager); immediate scale-up reads the
    replicas it last set and whether it could read the target's Scale (`AbleToScale`)."""

    currentReplicas: int
    desiredReplicas: int
    conditions: list[Condition]


class HorizontalPodAutoscaler(TypedDict, total=False):
    """An HPA as stored (cached, or an answer of the API server)."""

    apiVersion: str
    kind: str
    metadata: Required[ObjectMeta]
    spec: HorizontalPodAutoscalerSpec
    status: HorizontalPodAutoscalerStatus


class NewHorizontalPodAutoscaler(TypedDict):
    """The HPA as the controller wants it: what it creates, and what a patch makes of one."""

    apiVersion: str
    kind: Literal["HorizontalPodAutoscaler"]
    metadata: NewObjectMeta
    spec: HorizontalPodAutoscalerSpec


# -- ScheduledPodAutoscaler -----------------------------------------------------------------------


class ScheduledPodAutoscalerSpec(TypedDict, total=False):
    """Read through `spa.api.parse_scheduled_pod_autoscaler`, never field by field."""

    horizontalPodAutoscalerSpec: HorizontalPodAutoscalerSpec


class LeadInForce(TypedDict, total=False):
    """`spa.api.resources.LeadInForce`: a lead time in force and where it comes from."""

    seconds: int
    source: str
    explanation: str


class WindowRecord(TypedDict, total=False):
    """`spa.api.resources.WindowRecord`: one window start of status.windows (docs/api.md).
    Timestamps are RFC 3339 text; `readySeconds` is Ready relative to the boundary."""

    schedule: str
    boundary: str
    minReplicas: int
    lead: LeadInForce
    capacityLead: LeadInForce
    raisedAt: str
    replicasAt: str
    readyAt: str
    capacityHeldAt: str
    capacityReleasedAt: str
    nodesReadyAt: str
    podsWaitedSeconds: int
    readySeconds: int
    outcome: str
    reason: str
    message: str


class ScheduledPodAutoscalerStatus(TypedDict, total=False):
    """`spa.api.resources.ScheduledPodAutoscalerStatus` as stored."""

    condition: str
    lastTransitionTime: str
    conditions: list[Condition]
    observedGeneration: int
    minReplicas: int
    maxReplicas: int
    activeSchedules: list[str]
    nextTransitionTime: str
    leadTime: LeadInForce
    capacityLeadTime: LeadInForce
    windows: list[WindowRecord]


class ScheduledPodAutoscaler(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: Required[ObjectMeta]
    spec: ScheduledPodAutoscalerSpec
    status: ScheduledPodAutoscalerStatus


class ScheduledPodAutoscalerStatusPatch(TypedDict, total=False):
    """The merge patch of the SPA status fields the controller owns: every one of them is
    sent, None (null) clearing it; `conditions` only when there are some."""

    condition: Required[str | None]
    lastTransitionTime: Required[str | None]
    conditions: list[Condition]
    observedGeneration: Required[int | None]
    minReplicas: Required[int | None]
    maxReplicas: Required[int | None]
    activeSchedules: Required[list[str] | None]
    nextTransitionTime: Required[str | None]
    leadTime: Required[LeadInForce | None]
    capacityLeadTime: Required[LeadInForce | None]
    windows: Required[list[WindowRecord] | None]


# -- Schedule -------------------------------------------------------------------------------------


class ScheduleTargetRef(TypedDict, total=False):
    name: str
    apiVersion: str
    kind: str


class CalendarReference(TypedDict, total=False):
    """`spa.api.resources.CalendarReference`: a Schedule's reference to a shared calendar."""

    kind: str
    name: str
    mode: str


class ScheduleSpec(TypedDict, total=False):
    """What the controller reads itself: the SPA a Schedule names and the calendars it refers
    to, for the indexes (the rest is read through `spa.api.parse_schedule`)."""

    scaleTargetRef: ScheduleTargetRef
    calendars: list[CalendarReference]


class ScheduleStatus(TypedDict, total=False):
    """`spa.api.resources.ScheduleStatus` as stored."""

    condition: str
    lastTransitionTime: str
    message: str
    observedGeneration: int
    nextTransitionTime: str


class Schedule(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: Required[ObjectMeta]
    spec: ScheduleSpec
    status: ScheduleStatus


class ScheduleStatusPatch(TypedDict):
    """The merge patch of the Schedule status fields the controller owns (None clears one)."""

    condition: str | None
    lastTransitionTime: str | None
    message: str | None
    observedGeneration: int | None
    nextTransitionTime: str | None


# -- where JSON becomes typed ---------------------------------------------------------------------

_Body = TypeVar("_Body", bound=Mapping[str, Any])


def typed(kind: type[_Body], obj: Mapping[str, Any]) -> _Body:
    """`obj` seen as the body `kind`: the same dict, neither checked nor copied.

    The one cast of the controller. Call it only where JSON enters: a cache of an informer,
    an answer of the client, the JSON dump of a model.
    """
    return cast("_Body", obj)


def typed_optional(kind: type[_Body], obj: Mapping[str, Any] | None) -> _Body | None:
    """:func:`typed` for what may be missing (a cache's `get`). (Not an overload of it: mypy
    reads an overloaded call with a `dict[str, Any]` argument as returning `Any`.)"""
    return cast("_Body | None", obj)


def typed_list(kind: type[_Body], objs: list[dict[str, Any]]) -> list[_Body]:
    """:func:`typed` for a list of objects (the same list)."""
    return cast("list[_Body]", objs)
