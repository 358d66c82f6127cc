"""`spa plan`: what the controller would do with these manifests, computed without a cluster.

It uses the same validation and engine as the controller, so a plan reviewed in a pull request
shows what will happen once the manifests are applied. Invalid documents become errors and
take no part; everything else is still planned. Errors are listed in file order, and within a
document in the order its fields are written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spa.api import (
    GROUP,
    SCHEDULE_KIND,
    SCHEDULED_POD_AUTOSCALER,
    VERSION,
    CompiledSchedule,
    FieldError,
    InvalidObject,
    Schedule,
    ScheduledPodAutoscaler,
    ScheduleSpec,
    autoscaler_base,
    autoscaler_lead,
    compile_schedule,
    parse_schedule,
    parse_scheduled_pod_autoscaler,
    wire,
)
from spa.api.annotations import annotation_warnings
from spa.api.calendars import CalendarKey, calendar_key, calendar_lookup
from spa.api.incident import Incident, incident_at
from spa.api.membership import membership
from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND
from spa.api.validation.compile import (
    autoscaler_capacity_lead,
    errors_against_autoscaler,
    ignored_fields,
    with_learned_leads,
)
from spa.api.validation.hints import suggestion
from spa.api.validation.leads import autoscaler_leads, is_auto
from spa.api.validation.parse import parse_calendar, unknown_status_fields
from spa.plan.manifests import Document, ReadError, misaddressed
from spa.plan.schedules import PlannedSchedule, ScheduleState, plan_schedule
from spa.plan.warnings import hpa_conflict, hpa_key, never_starts
from spa.schedule import (
    Base,
    Rule,
    Skipped,
    State,
    skipped_between,
    state_at,
    transitions_between,
)
from spa.schedule.learned_lead import LeadSource, LearnedLead, spoken_seconds

__all__ = ["AutoscalerPlan", "Plan", "PlanError", "SkippedWindow", "build_plan"]

DEFAULT_NAMESPACE = "default"
_OUR_KINDS = (SCHEDULED_POD_AUTOSCALER, SCHEDULE_KIND, CALENDAR_KIND, CLUSTER_CALENDAR_KIND)
_CALENDAR_KINDS = (CALENDAR_KIND, CLUSTER_CALENDAR_KIND)
# A name longer than the API server allows (253) is shown cut (it is reported invalid anyway).
_LONGEST_NAME = 253
_SHOWN_OF_A_LONG_NAME = 40


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
class SkippedWindow:
    """A window of one of the autoscaler's Schedules that does not open, and why."""

    schedule: str
    skipped: Skipped

    @property
    def time(self) -> int:
        return self.skipped.occurrence.start


@dataclass(frozen=True, slots=True)
class AutoscalerPlan:
    namespace: str
    name: str
    state: State
    transitions: list[tuple[int, State]]
    base: Base | None = None
    schedules: list[PlannedSchedule] = field(default_factory=list)
    """Its valid Schedules, suspended and completed ones too, by name."""
    skipped: list[SkippedWindow] = field(default_factory=list)
    """Windows skipped in the horizon (an excluded date, a holiday), by time, then Schedule."""
    incident: Incident = field(default_factory=Incident)
    """Its pause and override at the plan's start, by the controller's rule (spa/api/incident.py).
    `state` and `transitions` stay the schedule's: the incident says what holds instead, and
    until when."""
    auto_leads: list[str] = field(default_factory=list)
    """Its Auto lead times in words: "leadTime: Auto (default 2m until measured)"."""


@dataclass(slots=True)
class Plan:
    at: int
    until: int
    autoscalers: list[AutoscalerPlan] = field(default_factory=list)
    errors: list[PlanError] = field(default_factory=list)
    warnings: list[PlanError] = field(default_factory=list)
    """What is valid but will not do what it looks like it does (spa/plan/warnings.py), in
    file order; they do not change the exit status."""


@dataclass(slots=True)
class _Parsed:
    document: Document
    kind: str
    namespace: str
    name: str


@dataclass(slots=True)
class _Read:
    """The documents of a plan, read: what the later stages need of each kind."""

    errors: _Errors = field(default_factory=lambda: _Errors())
    warned: _Errors = field(default_factory=lambda: _Errors())
    autoscalers: dict[tuple[str, str], ScheduledPodAutoscaler] = field(default_factory=dict)
    invalid_autoscalers: set[tuple[str, str]] = field(default_factory=set)
    # Each Schedule document, its model (None: invalid) and its problems, and its body.
    schedules: list[tuple[_Parsed, Schedule | None, list[FieldError], dict[str, Any]]] = field(
        default_factory=list
    )
    # Every Schedule document (valid or not) by the SPA it names, as the controller finds them:
    # an invalid one still takes one of the SPA's places (spa/api/membership.py).
    naming: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    seen: dict[tuple[str, str, str], Document] = field(default_factory=dict)
    annotations: dict[tuple[str, str], Any] = field(default_factory=dict)
    # The shared calendars, valid or not (a Schedule that refers to an invalid one is told
    # why it does not apply, as by the controller: spa/api/calendars.py).
    calendars: dict[CalendarKey, Mapping[str, Any]] = field(default_factory=dict)
    hpas: dict[tuple[str, str], Document] = field(default_factory=dict)
    autoscaler_documents: dict[tuple[str, str], tuple[_Parsed, dict[str, Any]]] = field(
        default_factory=dict
    )


def build_plan(
    documents: Sequence[Document], read_errors: Sequence[ReadError], *, at: int, until: int
) -> Plan:
    """The state of every valid autoscaler at `at` and each transition in `(at, until]`."""
    plan = Plan(at=at, until=until)
    read = _Read()
    for read_error in read_errors:
        read.errors.add_read_error(read_error)
    for document in documents:
        _read_document(read, document)
    planned, rules = _plan_schedules(read, _not_applied(read), at=at, until=until)
    plan.autoscalers = _autoscaler_plans(read, planned, rules, at=at, until=until)
    for owner, (identity, body) in read.autoscaler_documents.items():
        if (found := read.hpas.get(owner)) is not None and isinstance(found.body, Mapping):
            where = f"{found.file}, document {found.index}"
            conflict = hpa_conflict(body, found.body, where)
            if conflict is not None:
                read.warned.add(identity, FieldError("metadata.name", conflict))
    plan.errors = read.errors.in_file_order()
    plan.warnings = read.warned.in_file_order()
    return plan


def _read_document(read: _Read, document: Document) -> None:
    """One document into `read`: an HPA kept for its conflicts, one of our objects parsed,
    every problem reported."""
    errors, warned = read.errors, read.warned
    if (hpa := hpa_key(document.body, DEFAULT_NAMESPACE)) is not None:
        read.hpas.setdefault(hpa, document)
        return
    identity = _identify(document, errors)
    if identity is None:
        return
    key = (identity.kind, identity.namespace, identity.name)
    if key in read.seen:
        first = read.seen[key]
        errors.add(
            identity,
            FieldError(
                "metadata.name",
                f"duplicate {identity.kind} {_shown(identity)}, "
                f"first defined in {first.file} (document {first.index})",
            ),
        )
        return
    read.seen[key] = document
    body = _without_nulls(document.body)
    for warning in annotation_warnings(identity.kind, _annotations_of(body)):
        warned.add(identity, warning)
    if identity.kind in _CALENDAR_KINDS:
        _read_calendar(identity, body, read.calendars, errors)
        return
    is_autoscaler = identity.kind == SCHEDULED_POD_AUTOSCALER
    # The API server drops the `status` of what a user creates or updates (both kinds have
    # a status subresource) and checks only that it has no unknown field; so `kubectl get
    # -o yaml` output plans too.
    problems = unknown_status_fields(ScheduledPodAutoscaler if is_autoscaler else Schedule, body)
    status = body.get("status")
    body = {name: value for name, value in body.items() if name != "status"}
    if is_autoscaler and isinstance(status, Mapping) and isinstance(status.get("windows"), list):
        # Except the windows an Auto lead is learned from (docs/schedules.md, "Auto lead
        # times"): `--from-cluster`, or a manifest exported with its status, plans with the
        # leads the controller uses.
        body["status"] = {"windows": status["windows"]}
    if not is_autoscaler and (target := _target(body)):
        read.naming.setdefault((identity.namespace, target), []).append(body)
    try:
        if is_autoscaler:
            autoscaler = parse_scheduled_pod_autoscaler(body)
        else:
            schedule = parse_schedule(body)
    except InvalidObject as invalid:
        problems = [*invalid.errors, *problems]
    if not is_autoscaler:
        read.schedules.append((identity, None if problems else schedule, problems, body))
    elif problems:
        read.invalid_autoscalers.add((identity.namespace, identity.name))
        for error in problems:
            errors.add(identity, error)
    else:
        read.autoscalers[(identity.namespace, identity.name)] = autoscaler
        read.autoscaler_documents[(identity.namespace, identity.name)] = (identity, body)
        read.annotations[(identity.namespace, identity.name)] = (body.get("metadata") or {}).get(
            "annotations"
        )


def auto_lead_lines(autoscaler: ScheduledPodAutoscaler) -> list[str]:
    """The SPA's Auto lead times and where their value comes from: the default until a
    window was measured, then what its status.windows teach (docs/schedules.md)."""
    spec = autoscaler.spec
    capacity_auto = spec.capacity is not None and is_auto(spec.capacity.lead_time)
    if not is_auto(spec.lead_time) and not capacity_auto:
        return []
    leads = autoscaler_leads(autoscaler)
    lines = []
    if is_auto(spec.lead_time):
        lines.append(f"leadTime: Auto ({_lead_words(leads.pods)})")
    if capacity_auto and leads.nodes is not None:
        lines.append(
            f"capacity.leadTime: Auto ({_lead_words(leads.nodes, leads.nodes_explanation)})"
        )
    return lines


def _lead_words(lead: LearnedLead, explanation: str | None = None) -> str:
    text = explanation or lead.explanation()
    if lead.source is LeadSource.Learned:
        return f"{spoken_seconds(lead.seconds)}, {text}"
    return text


def _not_applied(read: _Read) -> dict[int, str]:
    """The Schedules (by the `id` of their body) that do not apply, and why.

    The controller's membership rule, before anything else is said of a Schedule: one
    controlled by another kind of object, or beyond the SPA's limit (the oldest win;
    manifests without creationTimestamp, by name), does not apply. The controller judges
    this before it reads the SPA's spec or the Schedule's, and its status then says why the
    Schedule does not apply and nothing else; so does the plan, for an invalid SPA or an
    invalid Schedule too."""
    not_applied: dict[int, str] = {}
    for owner in read.autoscalers.keys() | read.invalid_autoscalers:
        judged = membership(
            f"{owner[0]}/{owner[1]}",
            [wire.typed(wire.Schedule, body) for body in read.naming.get(owner, [])],
        )
        for excluded in judged.excluded:
            not_applied[id(excluded.schedule)] = excluded.message
    return not_applied


def _plan_schedules(
    read: _Read, not_applied: Mapping[int, str], *, at: int, until: int
) -> tuple[dict[tuple[str, str], list[PlannedSchedule]], dict[tuple[str, str], list[Rule]]]:
    """Every Schedule that applies, planned, and the rules of those not suspended, by the SPA
    they belong to; each problem reported."""
    planned: dict[tuple[str, str], list[PlannedSchedule]] = {}
    rules: dict[tuple[str, str], list[Rule]] = {}
    errors, warned, autoscalers = read.errors, read.warned, read.autoscalers
    for identity, parsed, problems, body in read.schedules:
        if (excluded_message := not_applied.get(id(body))) is not None:
            errors.add(identity, FieldError(None, excluded_message))
            continue
        for error in problems:
            errors.add(identity, error)
        if parsed is None:
            continue
        spec = parsed.spec
        owner = (identity.namespace, spec.scale_target_ref.name)
        compiled = _compiled_for(read, identity, spec, owner)
        if compiled is None:
            continue
        compiled = with_learned_leads(compiled, autoscalers[owner])
        lead = autoscaler_lead(autoscalers[owner])
        seen_schedule = plan_schedule(
            identity.name,
            spec,
            compiled,
            at=at,
            until=until,
            lead=lead,
            capacity_lead=autoscaler_capacity_lead(autoscalers[owner]),
        )
        planned.setdefault(owner, []).append(seen_schedule)
        for warning in ignored_fields(spec):
            warned.add(identity, warning)
        if seen_schedule.state is ScheduleState.LATER and seen_schedule.next_change is None:
            never = never_starts(compiled.window, at)
            if never is not None:
                warned.add(identity, never)
        if not compiled.suspend:
            rules.setdefault(owner, []).append(
                Rule(
                    name=identity.name,
                    timeline=seen_schedule.timeline,
                    min_replicas=compiled.min_replicas,
                    max_replicas=compiled.max_replicas,
                )
            )
    return planned, rules


def _compiled_for(
    read: _Read, identity: _Parsed, spec: ScheduleSpec, owner: tuple[str, str]
) -> CompiledSchedule | None:
    """A valid Schedule compiled, if it can be planned on its SPA `owner`: None when its
    window, its SPA or the two together are wrong, each problem reported."""
    errors, autoscalers = read.errors, read.autoscalers
    try:
        compiled = compile_schedule(
            spec, calendars=calendar_lookup(identity.namespace, read.calendars)
        )
    except InvalidObject as invalid:
        for error in invalid.errors:
            errors.add(identity, error)
        return None
    if owner in read.invalid_autoscalers:
        errors.add(
            identity,
            FieldError(
                "spec.scaleTargetRef.name",
                f"ScheduledPodAutoscaler {owner[0]}/{owner[1]} is invalid (see its errors), "
                "so this Schedule is not planned",
            ),
        )
        return None
    if owner not in autoscalers:
        missing = f"{owner[0]}/{owner[1]}"
        errors.add(
            identity,
            FieldError(
                "spec.scaleTargetRef.name",
                f"ScheduledPodAutoscaler {missing} is not among the given manifests",
            ),
        )
        return None
    # As the controller refuses them (docs/schedules.md, "Scale to zero", "Node capacity").
    against = errors_against_autoscaler(
        compiled, autoscalers[owner], owner=f"{owner[0]}/{owner[1]}"
    )
    if against:
        for error in against:
            errors.add(identity, error)
        return None
    return compiled


def _autoscaler_plans(
    read: _Read,
    planned: Mapping[tuple[str, str], list[PlannedSchedule]],
    rules: Mapping[tuple[str, str], list[Rule]],
    *,
    at: int,
    until: int,
) -> list[AutoscalerPlan]:
    """The plan of every valid SPA, by namespace and name."""
    plans = []
    for (namespace, name), autoscaler in sorted(read.autoscalers.items()):
        base = autoscaler_base(autoscaler)
        own_rules = rules.get((namespace, name), [])
        plans.append(
            AutoscalerPlan(
                namespace=namespace,
                name=name,
                auto_leads=auto_lead_lines(autoscaler),
                state=state_at(base, own_rules, at),
                transitions=transitions_between(base, own_rules, at, until),
                base=base,
                schedules=sorted(planned.get((namespace, name), []), key=lambda s: s.name),
                skipped=sorted(
                    (
                        SkippedWindow(rule.name, skipped)
                        for rule in own_rules
                        for skipped in skipped_between(rule.timeline.window, at, until)
                    ),
                    key=lambda entry: (entry.time, entry.schedule),
                ),
                incident=incident_at(
                    _annotations(read.annotations.get((namespace, name))),
                    base_max=base.max_replicas,
                    instant=at,
                ),
            )
        )
    return plans


def _read_calendar(
    identity: _Parsed,
    body: dict[str, Any],
    calendars: dict[CalendarKey, Mapping[str, Any]],
    errors: _Errors,
) -> None:
    """A Calendar or ClusterCalendar document: kept for the Schedules that refer to it (by the
    namespace it will have once applied), its problems reported."""
    found = body.get("metadata")
    metadata = dict(found) if isinstance(found, Mapping) else {}
    metadata["namespace"] = identity.namespace if identity.kind == CALENDAR_KIND else None
    calendars[calendar_key({**body, "metadata": metadata})] = body
    try:
        parse_calendar(body)
    except InvalidObject as invalid:
        for error in invalid.errors:
            errors.add(identity, error)


def _shown(identity: _Parsed) -> str:
    """`namespace/name`, or `name` for a cluster-scoped object."""
    if identity.namespace:
        return f"{identity.namespace}/{identity.name}"
    return identity.name


def _annotations(found: Any) -> dict[str, str]:
    """The string annotations of a document (the API server allows nothing else; a manifest
    may hold anything, and the rule reads only its two)."""
    if not isinstance(found, Mapping):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, str)}


def _annotations_of(body: Mapping[str, Any]) -> Mapping[str, object] | None:
    metadata = body.get("metadata")
    found = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return found if isinstance(found, Mapping) else None


def _target(body: Mapping[str, Any]) -> str | None:
    """The SPA a Schedule document names, read as the controller's index reads it (for an
    invalid document too)."""
    spec = body.get("spec")
    reference = spec.get("scaleTargetRef") if isinstance(spec, Mapping) else None
    name = reference.get("name") if isinstance(reference, Mapping) else None
    return name if isinstance(name, str) and name else None


def _without_nulls(body: Any) -> dict[str, Any]:
    """The body as `kubectl apply` sends it: a field set to null (`timeZone: ~`) is left out,
    wherever it is (null items of a list stay)."""
    root: dict[str, Any] = {}
    pending: list[tuple[Any, Any]] = [(body, root)]
    while pending:
        source, target = pending.pop()
        if isinstance(source, Mapping):
            for key, value in source.items():
                if value is not None:
                    target[key] = _copied(value, pending)
        else:
            target.extend(_copied(value, pending) for value in source)
    return root


def _copied(value: Any, pending: list[tuple[Any, Any]]) -> Any:
    """A scalar as it is; an empty container to be filled from `value` later."""
    if isinstance(value, Mapping | list):
        container: Any = {} if isinstance(value, Mapping) else []
        pending.append((value, container))
        return container
    return value


class _Errors:
    """Plan errors with where they were found, so that they can be listed in file order."""

    def __init__(self) -> None:
        self._found: list[tuple[tuple[Any, ...], PlanError]] = []

    def add_read_error(self, error: ReadError) -> None:
        where = (error.order, error.index or 0, -1, ())
        found = PlanError(
            error.file,
            error.index,
            error.message,
            kind=error.kind,
            namespace=error.namespace,
            name=error.name,
            field=error.field,
        )
        self._found.append((where, found))

    def add_document_error(self, document: Document, message: str) -> None:
        where = (document.order, document.index, _item(document), ())
        field = None if document.item is None else f"items[{document.item}]"
        self._found.append((where, PlanError(document.file, document.index, message, field=field)))

    def add(self, identity: _Parsed, error: FieldError) -> None:
        document = identity.document
        position = _position(document.body, error.field)
        where = (document.order, document.index, _item(document), position)
        field = error.field
        if document.item is not None:
            field = f"items[{document.item}]" + (f".{field}" if field else "")
        self._found.append(
            (
                where,
                PlanError(
                    file=document.file,
                    document=document.index,
                    kind=identity.kind,
                    namespace=identity.namespace or None,  # None: cluster-scoped
                    name=identity.name or None,
                    field=field,
                    message=error.message,
                ),
            )
        )

    def in_file_order(self) -> list[PlanError]:
        # A stable sort: errors found at the same place keep the order they were found in.
        return [error for _, error in sorted(self._found, key=lambda found: found[0])]


def _item(document: Document) -> int:
    return -1 if document.item is None else document.item


_PATH_PART = re.compile(r"([^.\[\]]+)|\[([0-9]+)\]")


def _position(body: object, path: str | None) -> tuple[int, ...]:
    """Where the field `path` is written in `body`: the position of each key among its
    siblings (a missing one after them all) and each list index."""
    if path is None:
        return ()
    position: list[int] = []
    current: object = body
    for match in _PATH_PART.finditer(path):
        name, index = match.groups()
        if name is not None:
            keys = list(current) if isinstance(current, Mapping) else []
            position.append(keys.index(name) if name in keys else len(keys))
            current = current.get(name) if isinstance(current, Mapping) else None
        else:
            number = int(index)
            position.append(number)
            inside = isinstance(current, list) and number < len(current)
            current = current[number] if inside else None  # type: ignore[index]
    return tuple(position)


def _identify(document: Document, errors: _Errors) -> _Parsed | None:
    """Which of our objects the document is, or None for anything else (the kinds of other API
    groups are ignored, since a Git directory holds Deployments and Services too; an unknown
    kind of our group is an error, as in kubectl, and so is an object meant for our group but
    addressed to another: `spa.plan.manifests.misaddressed`)."""
    body = document.body
    if isinstance(body, list) and any(
        isinstance(item, Mapping) and "kind" in item and "apiVersion" in item for item in body
    ):
        # kubectl refuses a bare list too; one object a document, or a kind: List, is read.
        errors.add_document_error(
            document,
            "not a Kubernetes object but a list of them: write each object as a document of "
            "its own, after a line '---', or make the list the items of a kind: List "
            "(apiVersion: v1, kind: List, items: [...])",
        )
        return None
    if not isinstance(body, Mapping):
        errors.add_document_error(document, "not a Kubernetes object (not a mapping)")
        return None
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if not (isinstance(kind, str) and kind and isinstance(api_version, str) and api_version):
        errors.add_document_error(
            document,
            "not a Kubernetes object: apiVersion and kind are required (kubectl too "
            "refuses a document without them)",
        )
        return None
    group, _, version = api_version.rpartition("/")
    misdirected = misaddressed(api_version, kind) if group != GROUP else None
    if group != GROUP and misdirected is None:
        return None
    given_metadata = body.get("metadata")
    metadata = given_metadata if isinstance(given_metadata, Mapping) else {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    if kind == CLUSTER_CALENDAR_KIND:
        namespace = ""  # cluster-scoped: kubectl ignores a namespace given
    elif not (isinstance(namespace, str) and namespace):
        namespace = DEFAULT_NAMESPACE
    identity = _Parsed(
        document,
        _shortened(kind),
        _shortened(namespace),
        _shortened(name) if isinstance(name, str) else "",
    )
    problems = []
    if given_metadata is not None and not isinstance(given_metadata, Mapping):
        # Read no further: the controller's rules read the metadata of every Schedule that
        # names an SPA (its owner, its age), and the API server refuses such an object too.
        problems.append(
            FieldError(
                "metadata",
                "must be an object (name, namespace, labels, annotations), "
                f"not {type(given_metadata).__name__}",
            )
        )
    if misdirected is not None:
        problems.append(FieldError("apiVersion", misdirected))
        version = VERSION  # said with the group
    if kind not in _OUR_KINDS:
        # kubectl refuses a kind its API group does not have ("no matches for kind"); other
        # groups' kinds cannot be known offline and stay ignored.
        problems.append(
            FieldError(
                "kind",
                f"unknown kind '{_brief(kind)}' in {GROUP}/{_brief(version)}"
                + suggestion(kind, _OUR_KINDS),
            )
        )
    if version != VERSION:
        problems.append(
            FieldError(
                "apiVersion",
                f"unsupported version '{_shortened(api_version)}', use {GROUP}/{VERSION}",
            )
        )
    for problem in problems:
        errors.add(identity, problem)
    return None if problems else identity


def _shortened(text: str) -> str:
    return text if len(text) <= _LONGEST_NAME else f"{text[:_SHOWN_OF_A_LONG_NAME]}..."


def _brief(text: str) -> str:
    """`text` as quoted in a message: at most 40 characters of it."""
    return text if len(text) <= _SHOWN_OF_A_LONG_NAME else f"{text[:_SHOWN_OF_A_LONG_NAME]}..."
