"""`spa plan`: what the controller would do with these manifests, computed without a cluster.

It uses the same validation and engine as the controller, so a plan reviewed in a pull request
shows what will happen once the manifests are applied. Invalid documents become errors and
take no part; everything else is still planned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spa.api import (
    GROUP,
    SCHEDULE_KIND,
    SCHEDULED_POD_AUTOSCALER,
    VERSION,
    FieldError,
    InvalidObject,
    Schedule,
    ScheduledPodAutoscaler,
    autoscaler_base,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
)
from spa.plan.manifests import Document, ReadError
from spa.schedule import Rule, State, Timeline, state_at, transitions_between

__all__ = ["AutoscalerPlan", "Plan", "PlanError", "build_plan"]

DEFAULT_NAMESPACE = "default"
_OUR_KINDS = (SCHEDULED_POD_AUTOSCALER, SCHEDULE_KIND)


@dataclass(frozen=True, slots=True)
class PlanError:
    """An invalid document, addressed as precisely as the input allows."""

    file: str
    document: int | None
    message: str
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    field: str | None = None


@dataclass(frozen=True, slots=True)
class AutoscalerPlan:
    namespace: str
    name: str
    state: State
    transitions: list[tuple[int, State]]


@dataclass(slots=True)
class Plan:
    at: int
    until: int
    autoscalers: list[AutoscalerPlan] = field(default_factory=list)
    errors: list[PlanError] = field(default_factory=list)


@dataclass(slots=True)
class _Parsed:
    document: Document
    kind: str
    namespace: str
    name: str


def build_plan(
    documents: Sequence[Document], read_errors: Sequence[ReadError], *, at: int, until: int
) -> Plan:
    """The state of every valid autoscaler at `at` and each transition in `(at, until]`."""
    plan = Plan(at=at, until=until)
    plan.errors.extend(PlanError(e.file, e.index, e.message) for e in read_errors)
    autoscalers: dict[tuple[str, str], ScheduledPodAutoscaler] = {}
    invalid_autoscalers: set[tuple[str, str]] = set()
    rules: dict[tuple[str, str], list[Rule]] = {}
    schedules: list[tuple[_Parsed, Schedule]] = []
    seen: dict[tuple[str, str, str], Document] = {}

    for document in documents:
        identity = _identify(document, plan.errors)
        if identity is None:
            continue
        key = (identity.kind, identity.namespace, identity.name)
        if key in seen:
            first = seen[key]
            _fail(
                plan,
                identity,
                FieldError(
                    "metadata.name",
                    f"duplicate {identity.kind} {identity.namespace}/{identity.name}, "
                    f"first defined in {first.file} (document {first.index})",
                ),
            )
            continue
        seen[key] = document
        body: Mapping[str, Any] = document.body  # type: ignore[assignment]
        try:
            if identity.kind == SCHEDULED_POD_AUTOSCALER:
                autoscalers[(identity.namespace, identity.name)] = parse_scheduled_pod_autoscaler(
                    body
                )
            else:
                schedules.append((identity, parse_schedule(body)))
        except InvalidObject as invalid:
            if identity.kind == SCHEDULED_POD_AUTOSCALER:
                invalid_autoscalers.add((identity.namespace, identity.name))
            for error in invalid.errors:
                _fail(plan, identity, error)

    for identity, schedule in schedules:
        owner = (identity.namespace, schedule.spec.scale_target_ref.name)
        try:
            compiled = compile_schedule(schedule.spec)
        except InvalidObject as invalid:
            for error in invalid.errors:
                _fail(plan, identity, error)
            continue
        if owner in invalid_autoscalers:
            continue  # the autoscaler's own error already explains why nothing is planned
        if owner not in autoscalers:
            missing = f"{owner[0]}/{owner[1]}"
            _fail(
                plan,
                identity,
                FieldError(
                    "spec.scaleTargetRef.name",
                    f"ScheduledPodAutoscaler {missing} is not among the given manifests",
                ),
            )
            continue
        if not compiled.suspend:
            rules.setdefault(owner, []).append(
                Rule(
                    name=identity.name,
                    timeline=Timeline(compiled.window),
                    min_replicas=compiled.min_replicas,
                    max_replicas=compiled.max_replicas,
                )
            )

    for (namespace, name), autoscaler in sorted(autoscalers.items()):
        base = autoscaler_base(autoscaler)
        own_rules = rules.get((namespace, name), [])
        plan.autoscalers.append(
            AutoscalerPlan(
                namespace=namespace,
                name=name,
                state=state_at(base, own_rules, at),
                transitions=transitions_between(base, own_rules, at, until),
            )
        )
    return plan


def _identify(document: Document, errors: list[PlanError]) -> _Parsed | None:
    """Which of our objects the document is, or None for anything else (other kinds are
    ignored, since a Git directory holds Deployments and Services too)."""
    body = document.body
    if not isinstance(body, Mapping):
        errors.append(PlanError(document.file, document.index, "not a Kubernetes object"))
        return None
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind not in _OUR_KINDS or not isinstance(api_version, str):
        return None
    group, _, version = api_version.rpartition("/")
    if group != GROUP:
        return None
    metadata = body.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    namespace = metadata.get("namespace") or DEFAULT_NAMESPACE
    name = metadata.get("name")
    identity = _Parsed(
        document,
        str(kind),
        str(namespace),
        str(name) if name else "",
    )
    if version != VERSION:
        errors.append(
            _error(
                identity,
                FieldError(
                    "apiVersion", f"unsupported version '{api_version}', use {GROUP}/{VERSION}"
                ),
            )
        )
        return None
    return identity


def _error(identity: _Parsed, error: FieldError) -> PlanError:
    return PlanError(
        file=identity.document.file,
        document=identity.document.index,
        kind=identity.kind,
        namespace=identity.namespace,
        name=identity.name or None,
        field=error.field,
        message=error.message,
    )


def _fail(plan: Plan, identity: _Parsed, error: FieldError) -> None:
    plan.errors.append(_error(identity, error))
