"""Adopting an HPA that already has the generated HPA's name: the one rule of whether an SPA
takes it over (docs/api.md, "Adopting an existing HPA"; docs/architecture.md, "Ownership").

Why a rule of its own, and why here: an operator who moves a hand-made HPA under a
ScheduledPodAutoscaler of the same name must not have to delete it first (the workload would
run without autoscaling in between), yet taking over somebody's object unasked, or one that
scales another workload, would be a surprise. So adoption happens only on request, by the
annotation :data:`ADOPT_ANNOTATION`, and only when it is safe. The controller's pure decision
and `kubectl spa status` must say the same ("will adopt", "adoption refused: why"), and
spa.api is the layer both may import. Pure: objects in, a :class:`Takeover` out.

The rule, for an HPA of the SPA's name that this SPA does not control (and that is not one of
ours left by an orphan deletion, which is adopted unasked: spa.controller.desired.orphaned_hpa):

- without the annotation set to `"true"` it is left untouched (`HPAConflict`, as always);
- with it, an HPA that has a controller ownerReference (any controller: another SPA's, a
  Deployment's, an operator's) is refused: an object has one controller at most;
- one whose `scaleTargetRef` names another workload than the SPA's is refused;
- any other one is adopted.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from spa.api import wire
from spa.api.resources import GROUP
from spa.api.validation.messages import FieldError, annotation_field
from spa.api.validation.messages import described as _value  # how every message shows an input

__all__ = [
    "ADOPT_ANNOTATION",
    "Takeover",
    "Verdict",
    "adopt_requested",
    "takeover",
]

ADOPT_ANNOTATION = f"{GROUP}/adopt"
# The values the annotation may have (a Kubernetes boolean annotation: the strings, exactly).
_VALUES = {"true": True, "false": False}


class Takeover(enum.StrEnum):
    """What the SPA does with an HPA of its name that it does not control."""

    LEAVE = "Leave"
    """Adoption was not asked for: the HPA is left untouched (the SPA is Degraded)."""
    ADOPT = "Adopt"
    """Asked for, and safe: the next write makes the SPA its controller."""
    REFUSE = "Refuse"
    """Asked for, but not safe (or the annotation is malformed): left untouched, Degraded."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """:func:`takeover`'s answer. `why`: for REFUSE, why not; for LEAVE, why the HPA could
    not be adopted even on request (None: it could be, so the message may offer it)."""

    takeover: Takeover
    why: str | None = None


def adopt_requested(annotations: Mapping[str, str] | None) -> bool | FieldError:
    """Whether the SPA's annotations ask for adoption; a FieldError naming the annotation
    when its value is neither `"true"` nor `"false"`."""
    value = (annotations or {}).get(ADOPT_ANNOTATION)
    if value is None:
        return False
    if value in _VALUES:
        return _VALUES[value]
    return FieldError(
        annotation_field(ADOPT_ANNOTATION),
        f'must be "true" or "false", not {_value(value)}',
    )


def takeover(
    annotations: Mapping[str, str] | None,
    hpa: wire.HorizontalPodAutoscaler,
    *,
    target: wire.CrossVersionObjectReference,
) -> Verdict:
    """What an SPA with `annotations` and the scale target `target` (its
    `horizontalPodAutoscalerSpec.scaleTargetRef`) does with `hpa`, an HPA of its name that it
    does not control."""
    unsafe = _unsafe(hpa, target)
    requested = adopt_requested(annotations)
    if isinstance(requested, FieldError):
        return Verdict(Takeover.REFUSE, str(requested))
    if not requested:
        return Verdict(Takeover.LEAVE, unsafe)
    if unsafe is not None:
        return Verdict(Takeover.REFUSE, unsafe)
    return Verdict(Takeover.ADOPT)


def _unsafe(
    hpa: wire.HorizontalPodAutoscaler, target: wire.CrossVersionObjectReference
) -> str | None:
    """Why taking `hpa` over would be wrong, or None."""
    for reference in (hpa.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(reference, Mapping) and reference.get("controller"):
            return (
                f"it is controlled by {reference.get('kind')} {reference.get('name')} "
                "(an object has one controller at most; remove that ownerReference first)"
            )
    theirs = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
    if _identity(theirs) != _identity(target):
        return (
            f"its scaleTargetRef is {_reference(theirs)}, not the ScheduledPodAutoscaler's "
            f"{_reference(target)}"
        )
    return None


def _identity(reference: wire.CrossVersionObjectReference) -> tuple[str, str, str]:
    """What names one workload: API group, kind and name. Versions of one group serve the same
    objects (`apps/v1` and `apps/v1beta2` name the same Deployment)."""
    group = str(reference.get("apiVersion") or "").rpartition("/")[0]
    return group, str(reference.get("kind") or ""), str(reference.get("name") or "")


def _reference(reference: wire.CrossVersionObjectReference) -> str:
    kind, name = reference.get("kind") or "?", reference.get("name") or "?"
    version = reference.get("apiVersion")
    return f"{kind}/{name}" + (f" ({version})" if version else "")
