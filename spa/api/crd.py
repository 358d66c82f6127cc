"""The CustomResourceDefinitions of the kinds, built from the API models.

The models are the one description of the API: the CRDs' OpenAPI schemas are derived from
`model_json_schema`, so a field added to a model cannot be forgotten in the CRD (a schema that
lacks it would make the API server prune it silently). What JSON Schema cannot say about several
fields at once is written here as CEL rules, using the same regexes as the parser, so that the
API server rejects at admission what the controller would otherwise mark Degraded.

The result is plain data; `hack/generate_manifests.py` writes it to `config/`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from spa.api.hpa import INT32_MAX, QUANTITY_PATTERN
from spa.api.resources import (
    CALENDAR_KIND,
    CLUSTER_CALENDAR_KIND,
    GO_DURATION_PATTERN,
    GROUP,
    SCHEDULE_KIND,
    SCHEDULED_POD_AUTOSCALER,
    VERSION,
    CalendarSpec,
    ScheduledPodAutoscalerSpec,
    ScheduledPodAutoscalerStatus,
    ScheduleSpec,
    ScheduleStatus,
    ScheduleType,
    WeekdayName,
)
from spa.api.window_types import (
    BLANK_IS_UNSET,
    WINDOW_TYPES,
    TimeFormat,
    listed,
    only_used_by,
    refusing,
    requiring,
    types_phrase,
)
from spa.schedule.cron import CRON_FIELDS_PATTERN, CRON_MACROS, DURATION_PATTERN
from spa.schedule.wallclock import DATE_PATTERN, HOUR_MINUTE_PATTERN, LOCAL_DATETIME_PATTERN

__all__ = [
    "CALENDAR_COLUMNS",
    "CALENDAR_SHORT_NAME",
    "CAPACITY_LEAD_RULE",
    "CLUSTER_CALENDAR_SHORT_NAME",
    "DATE_RANGE_RULE",
    "LEAD_TIME_BOUNDS_RULE",
    "LEAD_TIME_RULE",
    "SCHEDULED_POD_AUTOSCALER_COLUMNS",
    "SCHEDULED_POD_AUTOSCALER_RULES",
    "SCHEDULE_COLUMNS",
    "SCHEDULE_RULES",
    "SCHEDULE_SHORT_NAME",
    "Column",
    "Rule",
    "calendar_crd",
    "cluster_calendar_crd",
    "crd_name",
    "legacy_crd",
    "openapi_schema",
    "schedule_crd",
    "scheduled_pod_autoscaler_crd",
]

Schema = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Rule:
    """A CEL rule (`x-kubernetes-validations`) and the message users get when it fails."""

    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class Column:
    """An additional printer column of `kubectl get`."""

    name: str
    type: str
    json_path: str
    description: str
    priority: int = 0


def _cel_string(text: str) -> str:
    # CEL single-quoted literal. The patterns use no quote or backslash; refuse rather than
    # emit a rule that means something else.
    if "'" in text or "\\" in text:
        raise ValueError(f"cannot quote {text!r} as a CEL string")
    return f"'{text}'"


def _unanchored(pattern: str) -> str:
    return pattern.removeprefix("^").removesuffix("$")


# The schema accepts either format on both times; the CEL rules below then pick by type.
_TIME_PATTERN = f"^({_unanchored(HOUR_MINUTE_PATTERN)}|{_unanchored(LOCAL_DATETIME_PATTERN)})$"

# The type-dependent rules below are generated from the table of window types
# (spa.api.window_types); only their order in the CRD is chosen here.

# How the messages have always named the types that need the day fields.
_PHRASES: dict[tuple[ScheduleType, ...], str] = {
    (ScheduleType.Weekly, ScheduleType.WeeklySpan): "a Weekly schedule and a WeeklySpan"
}


def _phrase(kinds: tuple[ScheduleType, ...]) -> str:
    return _PHRASES.get(kinds) or types_phrase(kinds)


def _unless_type(applies_to: tuple[ScheduleType, ...], body: str) -> str:
    """`body` for the types in `applies_to`, true for the others: the guard names whichever
    set is the shorter, the types it applies to (`!=`) or the others (`==`)."""
    if not applies_to:
        raise ValueError(f"a rule for no type of Schedule: {body}")
    others = [kind for kind in ScheduleType if kind not in applies_to]
    if not others:
        return body
    if len(others) < len(applies_to):
        guard = " || ".join(f"self.type == {_cel_string(kind.value)}" for kind in others)
    else:
        guard = " && ".join(f"self.type != {_cel_string(kind.value)}" for kind in applies_to)
    return f"{guard} || {body}"


def _required_rule(field: str) -> Rule:
    kinds = requiring(field)
    if field in BLANK_IS_UNSET:
        return Rule(
            rule=_unless_type(kinds, f"(has(self.{field}) && self.{field} != '')"),
            message=f"{field} is required for {_phrase(kinds)}: set it to Sunday ... Saturday",
        )
    return Rule(
        rule=_unless_type(kinds, f"has(self.{field})"),
        message=f"{field} is required for {_phrase(kinds)}",
    )


def _time_format_rule(field: str) -> Rule:
    by_format: dict[TimeFormat, tuple[ScheduleType, ...]] = {}
    for kind in ScheduleType:
        time_format = WINDOW_TYPES[kind].time_format
        if time_format is not None:
            by_format[time_format] = (*by_format.get(time_format, ()), kind)
    # The format most types use is the default: a type without times is refused anyway.
    default = max(by_format, key=lambda time_format: len(by_format[time_format]))
    choice = f"self.{field}.matches({_cel_string(default.pattern)})"
    described = [
        f"{default.described} for {listed(tuple(k.value for k in by_format[default]), 'and')}"
    ]
    for time_format, kinds in reversed(by_format.items()):
        if time_format is default:
            continue
        test = " || ".join(f"self.type == {_cel_string(kind.value)}" for kind in kinds)
        test = test if len(kinds) == 1 else f"({test})"
        choice = f"{test} ? self.{field}.matches({_cel_string(time_format.pattern)}) : {choice}"
        described.insert(0, f"{time_format.described} for {_phrase(kinds)}")
    return Rule(
        rule=f"!has(self.{field}) || ({choice})",
        message=f"{field} must be {' and '.join(described)}",
    )


def _absent(field: str) -> str:
    if field in BLANK_IS_UNSET:
        return f"(!has(self.{field}) || self.{field} == '')"
    return f"!has(self.{field})"


def _not_used_rules(*fields: str) -> list[Rule]:
    """One rule per set of types refusing some of `fields`, in the order of `fields`."""
    groups: dict[tuple[ScheduleType, ...], tuple[str, ...]] = {}
    for field in fields:
        kinds = refusing(field)
        if kinds:
            groups[kinds] = (*groups.get(kinds, ()), field)
    rules = []
    for kinds, group in groups.items():
        users = only_used_by(group[0])  # the same for every field of the group
        verb = "is" if len(group) == 1 else "are"
        if users is not None:
            message = f"{listed(group, 'and')} {verb} only used by {_phrase(users)}"
        else:
            reasons = {WINDOW_TYPES[kind].not_used_because for kind in kinds} - {""}
            why = f": {reasons.pop()}" if len(reasons) == 1 else ""
            message = f"{listed(group, 'and')} {verb} not used by {_phrase(kinds)}{why}"
        body = " && ".join(_absent(field) for field in group)
        rules.append(Rule(rule=_unless_type(kinds, f"({body})"), message=message))
    return rules


def _ordered_rule() -> Rule:
    # Compared only when both are 16 characters, i.e. (by the pattern) yyyy-MM-ddTHH:mm: that
    # format is fixed-width, so string order is time order. Otherwise the format rule above
    # already reports the real problem.
    kinds = tuple(kind for kind in ScheduleType if WINDOW_TYPES[kind].ordered_as_text)
    return Rule(
        rule=_unless_type(
            kinds,
            "!has(self.startTime) || !has(self.endTime)"
            " || size(self.startTime) != 16 || size(self.endTime) != 16"
            " || self.endTime > self.startTime",
        ),
        message=f"endTime must be after startTime for {_phrase(kinds)}",
    )


_MACROS = "|".join(name.removeprefix("@") for name in CRON_MACROS)

SCHEDULE_RULES: tuple[Rule, ...] = (
    *map(_required_rule, ("startDayOfWeek", "endDayOfWeek", "startTime", "endTime")),
    _time_format_rule("startTime"),
    _time_format_rule("endTime"),
    *map(_required_rule, ("schedule", "duration")),
    *_not_used_rules("startTime", "endTime", "startDayOfWeek", "endDayOfWeek"),
    *_not_used_rules("schedule", "duration"),
    Rule(
        rule=(
            "!has(self.schedule)"
            f" || self.schedule.matches({_cel_string(f'^@({_MACROS})$')})"
            f" || self.schedule.matches({_cel_string(CRON_FIELDS_PATTERN)})"
        ),
        message=(
            "schedule must have 5 fields separated by spaces (minute hour day-of-month month "
            "day-of-week; no seconds) or be a macro such as @daily"
        ),
    ),
    Rule(
        # The schema's pattern has the format; this the range (CEL parses Go durations).
        rule=(
            "!has(self.duration) || (duration(self.duration) >= duration('1m')"
            " && duration(self.duration) <= duration('744h'))"
        ),
        message="duration must be from 1m to 744h (31 days)",
    ),
    *_not_used_rules("startDate", "endDate"),
    # yyyy-MM-dd (the schema's pattern) is fixed-width, so text order is date order.
    Rule(
        rule="!has(self.startDate) || !has(self.endDate) || self.endDate >= self.startDate",
        message="endDate must not be before startDate",
    ),
    _ordered_rule(),
    Rule(
        rule=(
            "!has(self.minReplicas) || !has(self.maxReplicas)"
            " || self.minReplicas <= self.maxReplicas"
        ),
        message="maxReplicas must not be less than minReplicas",
    ),
)
"""CEL rules on a Schedule's `spec`."""

SCHEDULED_POD_AUTOSCALER_RULES: tuple[Rule, ...] = (
    Rule(
        rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",
        message="minReplicas must not be greater than maxReplicas",
    ),
    # The API server's own rule for an HPA's minReplicas 0 (docs/schedules.md, "Scale to
    # zero"); the feature gate it also needs is the server's to check.
    Rule(
        rule=(
            "!has(self.minReplicas) || self.minReplicas > 0 || (has(self.metrics)"
            " && self.metrics.exists(m, m.type == 'Object' || m.type == 'External'))"
        ),
        message="minReplicas must not be 0 without an Object or External metric (scale to zero)",
    ),
    *(
        # A quantity is an int or a string here; string() spells both, sign first.
        Rule(
            rule=(
                f"!has(self.behavior) || !has(self.behavior.{direction})"
                f" || !has(self.behavior.{direction}.tolerance)"
                f" || !string(self.behavior.{direction}.tolerance).startsWith('-')"
            ),
            message=f"behavior.{direction}.tolerance must not be negative",
        )
        for direction in ("scaleUp", "scaleDown")
    ),
)
"""CEL rules on an SPA's `spec.horizontalPodAutoscalerSpec`."""

SCHEDULED_POD_AUTOSCALER_COLUMNS: tuple[Column, ...] = (
    Column(
        "MINPODS", "integer", ".spec.horizontalPodAutoscalerSpec.minReplicas", "Base minReplicas"
    ),
    Column(
        "MAXPODS", "integer", ".spec.horizontalPodAutoscalerSpec.maxReplicas", "Base maxReplicas"
    ),
    Column("STATUS", "string", ".status.condition", "Available or Degraded"),
    Column("AGE", "date", ".metadata.creationTimestamp", "Age of the object"),
    Column("CURRENTMIN", "integer", ".status.minReplicas", "minReplicas in force now", 1),
    Column("CURRENTMAX", "integer", ".status.maxReplicas", "maxReplicas in force now", 1),
    Column("ACTIVE", "string", ".status.activeSchedules", "Schedules active now", 1),
    # A string, not a date: the server renders a date column as an age, and a future instant
    # as "<invalid>".
    Column("NEXTTRANSITION", "string", ".status.nextTransitionTime", "Next change (UTC)", 1),
)

# `schedule` alone is ambiguous wherever Velero (schedules.velero.io) or Chaos Mesh
# (schedules.chaos-mesh.org) is installed too; neither they nor the other widespread projects
# (cert-manager, Argo, KEDA, Flux, Crossplane) use this short name (docs/api.md, "Names").
SCHEDULE_SHORT_NAME = "spasched"

SCHEDULE_COLUMNS: tuple[Column, ...] = (
    Column("REFERENCE", "string", ".spec.scaleTargetRef.name", "The ScheduledPodAutoscaler"),
    Column("TYPE", "string", ".spec.type", listed(tuple(kind.value for kind in ScheduleType))),
    Column("STARTTIME", "string", ".spec.startTime", "Start of the window"),
    Column("ENDTIME", "string", ".spec.endTime", "End of the window"),
    Column("STARTDAYOFWEEK", "string", ".spec.startDayOfWeek", "First day (Weekly)"),
    Column("ENDDAYOFWEEK", "string", ".spec.endDayOfWeek", "Last day (Weekly)"),
    # Empty means UTC; the column shows it because the same 09:00 is a different instant in
    # every zone, and the zone is what a reader checks first.
    Column("TIMEZONE", "string", ".spec.timeZone", "IANA time zone of the times (empty: UTC)"),
    Column("MINPODS", "integer", ".spec.minReplicas", "minReplicas while active", 1),
    Column("MAXPODS", "integer", ".spec.maxReplicas", "maxReplicas while active", 1),
    Column("STATUS", "string", ".status.condition", "Condition of the Schedule"),
    Column("AGE", "date", ".metadata.creationTimestamp", "Age of the object"),
)

# Like `spasched`: `calendar` alone is too common a word, and no widespread project uses these
# (docs/api.md, "Names").
CALENDAR_SHORT_NAME = "spacal"
CLUSTER_CALENDAR_SHORT_NAME = "spaccal"

CALENDAR_COLUMNS: tuple[Column, ...] = (
    Column("DESCRIPTION", "string", ".spec.description", "What the dates are"),
    Column("AGE", "date", ".metadata.creationTimestamp", "Age of the object"),
)

# yyyy-MM-dd (the schema's pattern) is fixed-width, so text order is date order.
DATE_RANGE_RULE = Rule(rule="self.end >= self.start", message="end must not be before start")

# pydantic keywords with no place in a CRD schema: `title` is noise, and `default` is left out
# on purpose, so the API server stores objects as they were written and the models alone
# decide what an unset field means.
_DROPPED = frozenset({"title", "default", "$defs"})


def _resolve(node: Schema, defs: Schema) -> Schema:
    """The node with `$ref`, nullable `anyOf` and `const` rewritten in the CRD dialect."""
    node = dict(node)
    if "$ref" in node:
        target = defs[node.pop("$ref").removeprefix("#/$defs/")]
        # Keywords beside the reference (the field's own description) win over the target's.
        node = {**_resolve(target, defs), **{k: v for k, v in node.items() if k not in _DROPPED}}
    if "anyOf" in node:
        members = [m for m in node.pop("anyOf") if m.get("type") != "null"]
        kinds = sorted(str(m.get("type")) for m in members)
        if kinds == ["integer", "string"]:
            # pydantic's int | str: a Kubernetes quantity.
            node.update(
                {
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                    "x-kubernetes-int-or-string": True,
                    "pattern": QUANTITY_PATTERN,
                }
            )
        elif len(members) == 1:
            # X | None: the API server has no null; an absent field is the None.
            node = {**_resolve(members[0], defs), **node}
        else:
            raise ValueError(f"no CRD form for anyOf {members!r}")
    if "const" in node:
        node["enum"] = [node.pop("const")]
        node.setdefault("type", "string")
    return node


def _convert(node: Schema, defs: Schema) -> Schema:
    node = _resolve(node, defs)
    out: Schema = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties":
            out[key] = {name: _convert(sub, defs) for name, sub in value.items()}
        elif key == "items":
            out[key] = _convert(value, defs)
        elif key == "additionalProperties":
            # `false` is the models' extra="forbid"; in a structural schema unknown fields are
            # pruned instead, and `additionalProperties` may not sit beside `properties`.
            if isinstance(value, dict):
                out[key] = _convert(value, defs)
        else:
            out[key] = value
    if out.get("type") == "integer" and out.get("maximum") == INT32_MAX:
        out["format"] = "int32"
    if out.get("type") == "string" and "enum" in out and "maxLength" not in out:
        # Bounds the CEL cost estimate of rules that read the field.
        out["maxLength"] = max(len(str(v)) for v in out["enum"])
    return out


def openapi_schema(model: type[BaseModel]) -> Schema:
    """The structural OpenAPI v3 schema of a model: every `$ref` inlined, no null, no titles."""
    generated = model.model_json_schema(by_alias=True)
    return _convert(generated, generated.get("$defs", {}))


# On the field itself; both kinds have it. The API server runs it even when the pattern has
# failed, so it converts only what the pattern accepts (else a second, confusing error); and
# "0" is Go syntax too, but not every CEL implementation's duration() reads it.
LEAD_TIME_RULE = Rule(
    rule=(
        f"!self.matches({_cel_string(GO_DURATION_PATTERN)}) || self == '0'"
        " || duration(self) <= duration('24h')"
    ),
    message="leadTime must be at most 24h",
)


def _with_lead_time_rule(props: Schema) -> None:
    props["leadTime"]["x-kubernetes-validations"] = [_rule_dict(LEAD_TIME_RULE)]
    bounds = props.get("leadTimeBounds")
    if bounds is not None:
        for name in ("min", "max"):
            bounds["properties"][name]["x-kubernetes-validations"] = [
                _rule_dict(
                    Rule(
                        rule=LEAD_TIME_RULE.rule,
                        message=f"leadTimeBounds.{name} must be at most 24h",
                    )
                )
            ]
        bounds["x-kubernetes-validations"] = [_rule_dict(LEAD_TIME_BOUNDS_RULE)]


def _cel_duration(field: str) -> str:
    return f"(self.{field} == '0' ? duration('0s') : duration(self.{field}))"


# min <= max of an Auto lead's bounds, where both are durations CEL can read.
LEAD_TIME_BOUNDS_RULE = Rule(
    rule=(
        "!has(self.min) || !has(self.max)"
        f" || !self.min.matches({_cel_string(GO_DURATION_PATTERN)})"
        f" || !self.max.matches({_cel_string(GO_DURATION_PATTERN)})"
        f" || {_cel_duration('max')} >= {_cel_duration('min')}"
    ),
    message="leadTimeBounds.max must be at least min",
)


# On the spec of both kinds: nodes ordered after the pods would come too late to help them
# (docs/schedules.md, "Node capacity"). Only where both fields are in the same object; a
# Schedule's lead against its SPA's capacity lead is the controller's and `spa plan`'s check.
CAPACITY_LEAD_RULE = Rule(
    rule=(
        "!has(self.capacity) || !has(self.leadTime)"
        f" || !self.leadTime.matches({_cel_string(GO_DURATION_PATTERN)})"
        f" || !self.capacity.leadTime.matches({_cel_string(GO_DURATION_PATTERN)})"
        f" || {_cel_duration('capacity.leadTime')} >= {_cel_duration('leadTime')}"
    ),
    message="capacity.leadTime must be at least leadTime",
)


def _with_capacity_rules(spec: Schema) -> None:
    _with_lead_time_rule(spec["properties"]["capacity"]["properties"])
    spec.setdefault("x-kubernetes-validations", []).append(_rule_dict(CAPACITY_LEAD_RULE))


def _schedule_spec_schema() -> Schema:
    spec = openapi_schema(ScheduleSpec)
    props = spec["properties"]
    _with_lead_time_rule(props)
    for field in ("startTime", "endTime"):
        props[field]["pattern"] = _TIME_PATTERN
    for field in ("startDayOfWeek", "endDayOfWeek"):
        # "" is how manifests exported from the original controller say "unset".
        props[field]["enum"] = ["", *(day.value for day in WeekdayName)]
        props[field]["maxLength"] = max(len(day.value) for day in WeekdayName)
    for node in (props["startDate"], props["endDate"], props["excludeDates"]["items"]):
        node["pattern"] = DATE_PATTERN
        # The API server also checks that the date exists (no 30 February).
        node["format"] = "date"
    # Each date once, as a set: the API server rejects a duplicate.
    props["excludeDates"]["x-kubernetes-list-type"] = "set"
    props["duration"]["pattern"] = DURATION_PATTERN
    props["holidays"]["properties"]["country"]["pattern"] = "^[A-Z]{2}$"
    spec["x-kubernetes-validations"] = [_rule_dict(rule) for rule in SCHEDULE_RULES]
    _with_capacity_rules(spec)
    return spec


def _calendar_spec_schema() -> Schema:
    spec = openapi_schema(CalendarSpec)
    props = spec["properties"]
    ranges = props["dateRanges"]["items"]
    for node in (
        props["dates"]["items"],
        ranges["properties"]["start"],
        ranges["properties"]["end"],
    ):
        node["pattern"] = DATE_PATTERN
        node["format"] = "date"
    props["dates"]["x-kubernetes-list-type"] = "set"
    ranges["x-kubernetes-validations"] = [_rule_dict(DATE_RANGE_RULE)]
    props["holidays"]["properties"]["country"]["pattern"] = "^[A-Z]{2}$"
    return spec


def _spa_spec_schema() -> Schema:
    spec = openapi_schema(ScheduledPodAutoscalerSpec)
    _with_lead_time_rule(spec["properties"])
    hpa = spec["properties"]["horizontalPodAutoscalerSpec"]
    hpa["x-kubernetes-validations"] = [_rule_dict(r) for r in SCHEDULED_POD_AUTOSCALER_RULES]
    _with_capacity_rules(spec)
    return spec


def _status_schema(model: type[BaseModel]) -> Schema:
    status = openapi_schema(model)
    conditions = status["properties"].get("conditions")
    if conditions is not None:
        # metav1.Condition lists are maps keyed by type, so that server-side apply merges
        # one condition at a time.
        conditions["x-kubernetes-list-type"] = "map"
        conditions["x-kubernetes-list-map-keys"] = ["type"]
    return status


def _rule_dict(rule: Rule) -> Schema:
    return {"rule": rule.rule, "message": rule.message}


def _object_schema(description: str, spec: Schema, status: Schema | None) -> Schema:
    properties: Schema = {
        "apiVersion": {"type": "string", "description": f"The API version, {GROUP}/{VERSION}."},
        "kind": {"type": "string", "description": "The kind of the object."},
        "metadata": {"type": "object"},
        "spec": spec,
    }
    if status is not None:
        properties["status"] = status
    return {
        "description": description,
        "type": "object",
        "required": ["spec"],
        "properties": properties,
    }


def crd_name(plural: str) -> str:
    return f"{plural}.{GROUP}"


def _crd(
    kind: str,
    plural: str,
    short_names: list[str],
    schema: Schema,
    columns: tuple[Column, ...],
    *,
    scope: str = "Namespaced",
) -> Schema:
    names: Schema = {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "singular": kind.lower(),
    }
    if short_names:
        names["shortNames"] = short_names
    names["categories"] = ["autoscaling"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name(plural)},
        "spec": {
            "group": GROUP,
            "names": names,
            "scope": scope,
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": _sorted(schema)},
                    **(
                        {"subresources": {"status": {}}} if "status" in schema["properties"] else {}
                    ),
                    "additionalPrinterColumns": [_column_dict(c, "jsonPath") for c in columns],
                }
            ],
        },
    }


def _sorted(node: Any) -> Any:
    # Keys in a fixed order, so that a regenerated CRD differs only where the models changed.
    if isinstance(node, dict):
        return {key: _sorted(node[key]) for key in sorted(node)}
    if isinstance(node, list):
        return [_sorted(item) for item in node]
    return node


def _column_dict(column: Column, path_key: str) -> Schema:
    out: Schema = {
        "name": column.name,
        "type": column.type,
        path_key: column.json_path,
        "description": column.description,
    }
    if column.priority:
        out["priority"] = column.priority
    return out


def scheduled_pod_autoscaler_crd() -> Schema:
    """The `apiextensions.k8s.io/v1` CRD of ScheduledPodAutoscaler."""
    schema = _object_schema(
        "Keeps a HorizontalPodAutoscaler of the same name at a base spec, with minReplicas and "
        "maxReplicas changed while its Schedules are active.",
        _spa_spec_schema(),
        _status_schema(ScheduledPodAutoscalerStatus),
    )
    return _crd(
        SCHEDULED_POD_AUTOSCALER,
        "scheduledpodautoscalers",
        ["spa"],
        schema,
        SCHEDULED_POD_AUTOSCALER_COLUMNS,
    )


def schedule_crd() -> Schema:
    """The `apiextensions.k8s.io/v1` CRD of Schedule."""
    schema = _object_schema(
        "A recurring or one-off time window during which a ScheduledPodAutoscaler in the same "
        "namespace uses other minReplicas and maxReplicas.",
        _schedule_spec_schema(),
        _status_schema(ScheduleStatus),
    )
    return _crd(SCHEDULE_KIND, "schedules", [SCHEDULE_SHORT_NAME], schema, SCHEDULE_COLUMNS)


_CALENDAR_DESCRIPTION = (
    "A named set of dates (single dates, inclusive ranges, the public holidays of a country) "
    "that Schedules refer to in spec.calendars, to skip them or to happen only on them"
)


def calendar_crd() -> Schema:
    """The `apiextensions.k8s.io/v1` CRD of Calendar (namespaced)."""
    schema = _object_schema(
        f"{_CALENDAR_DESCRIPTION}; only Schedules of its own namespace can refer to it.",
        _calendar_spec_schema(),
        None,
    )
    return _crd(CALENDAR_KIND, "calendars", [CALENDAR_SHORT_NAME], schema, CALENDAR_COLUMNS)


def cluster_calendar_crd() -> Schema:
    """The `apiextensions.k8s.io/v1` CRD of ClusterCalendar (cluster-scoped)."""
    schema = _object_schema(
        f"{_CALENDAR_DESCRIPTION}; Schedules of every namespace can refer to it.",
        _calendar_spec_schema(),
        None,
    )
    return _crd(
        CLUSTER_CALENDAR_KIND,
        "clustercalendars",
        [CLUSTER_CALENDAR_SHORT_NAME],
        schema,
        CALENDAR_COLUMNS,
        scope="Cluster",
    )


# Keywords that apiextensions.k8s.io/v1beta1 on Kubernetes 1.15 does not know.
_NOT_IN_LEGACY = frozenset(
    {"x-kubernetes-validations", "x-kubernetes-list-type", "x-kubernetes-list-map-keys"}
)


def _strip_legacy(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_legacy(v) for k, v in node.items() if k not in _NOT_IN_LEGACY}
    if isinstance(node, list):
        return [_strip_legacy(v) for v in node]
    return node


def legacy_crd(crd: Schema) -> Schema:
    """The `apiextensions.k8s.io/v1beta1` form of a v1 CRD, for clusters older than 1.16.

    Same names, schema and columns, without what 1.15 cannot enforce (CEL rules, list types):
    there the controller's own validation (a Degraded status) is the only check.
    """
    spec = crd["spec"]
    version = spec["versions"][0]
    return {
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "kind": "CustomResourceDefinition",
        "metadata": copy.deepcopy(crd["metadata"]),
        "spec": {
            "group": spec["group"],
            "names": copy.deepcopy(spec["names"]),
            "scope": spec["scope"],
            "version": version["name"],
            "versions": [{"name": version["name"], "served": version["served"], "storage": True}],
            # Prune unknown fields as v1 does (1.15 accepts this with a structural schema).
            "preserveUnknownFields": False,
            "validation": {"openAPIV3Schema": _strip_legacy(version["schema"]["openAPIV3Schema"])},
            **(
                {"subresources": copy.deepcopy(version["subresources"])}
                if "subresources" in version
                else {}
            ),
            "additionalPrinterColumns": [
                {("JSONPath" if k == "jsonPath" else k): v for k, v in column.items()}
                for column in version["additionalPrinterColumns"]
            ],
        },
    }
