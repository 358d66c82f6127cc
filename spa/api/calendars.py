"""Which shared calendar a Schedule's reference names, and the lookup that resolves it.

Why here, in the API layer: the controller (which gathers the calendars from its caches), `spa
plan` (from its files) and `kubectl spa status` (from the cluster) must resolve a reference the
same way, and the last two may not import the controller. The rule (docs/schedules.md, "Shared
calendars"): a reference without `kind` names a Calendar; a Calendar is looked up in the
Schedule's own namespace only, a ClusterCalendar by name alone. What cannot be resolved (not
found, invalid) is said in words that `compile_schedule` addresses to `spec.calendars[i]`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from spa.api import wire
from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND, CalendarReference
from spa.api.validation.compile import CalendarLookup, calendar_dates
from spa.api.validation.messages import InvalidObject
from spa.api.validation.parse import parse_calendar
from spa.schedule import DateSet

__all__ = [
    "CalendarKey",
    "calendar_key",
    "calendar_lookup",
    "keys_of",
    "referenced_calendars",
]


class CalendarKey(NamedTuple):
    """Where a calendar is: its kind, namespace ("" for a ClusterCalendar) and name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        if self.kind == CLUSTER_CALENDAR_KIND:
            return f'{self.kind} "{self.name}"'
        return f'{self.kind} "{self.name}" in namespace {self.namespace}'


def _key(kind: object, name: object, namespace: str) -> CalendarKey:
    if kind == CLUSTER_CALENDAR_KIND:
        return CalendarKey(CLUSTER_CALENDAR_KIND, "", str(name))
    return CalendarKey(CALENDAR_KIND, namespace, str(name))


def calendar_key(document: Mapping[str, Any]) -> CalendarKey:
    """The key of a Calendar or ClusterCalendar document."""
    metadata = document.get("metadata") or {}
    return _key(document.get("kind"), metadata.get("name"), str(metadata.get("namespace") or ""))


def referenced_calendars(schedule: wire.Schedule) -> list[CalendarKey]:
    """The calendars a stored Schedule refers to, read leniently (for the controller's index:
    an invalid reference is the decision's to report)."""
    namespace = str(schedule["metadata"].get("namespace") or "")
    references = (schedule.get("spec") or {}).get("calendars")
    if not isinstance(references, list):
        return []
    return [
        _key(reference.get("kind"), reference.get("name"), namespace)
        for reference in references
        if isinstance(reference, Mapping) and isinstance(reference.get("name"), str)
    ]


def calendar_lookup(
    namespace: str,
    documents: Mapping[CalendarKey, Mapping[str, Any]],
    *,
    unserved: Mapping[str, str] | None = None,
) -> CalendarLookup:
    """The lookup `compile_schedule` takes, for a Schedule of `namespace`, over the calendars
    `documents` (by key) as stored or as read from files. `unserved` are the kinds whose CRD
    the API server does not serve, each with what a reference to it says (the controller's
    words: docs/runtime.md, "Optional kinds")."""

    def find(reference: CalendarReference) -> DateSet | str:
        kind = reference.kind.value if reference.kind is not None else CALENDAR_KIND
        if unserved and kind in unserved:
            return unserved[kind]
        key = _key(kind, reference.name, namespace)
        document = documents.get(key)
        if document is None:
            return f"{key} not found{_found_elsewhere(key, namespace, documents)}"
        try:
            return calendar_dates(parse_calendar(document))
        except InvalidObject as invalid:
            return f"{key} is invalid: {invalid}"

    return find


# How many other namespaces holding a Calendar of the name a message names.
_NAMESPACES_NAMED = 3


def _found_elsewhere(
    key: CalendarKey, namespace: str, documents: Mapping[CalendarKey, object]
) -> str:
    """Where a calendar of the name that was not found is, when that is why, for a Schedule of
    `namespace`: a ClusterCalendar referred to without `kind`, a Calendar referred to as a
    ClusterCalendar, a Calendar of another namespace (docs/schedules.md, "Shared calendars");
    nothing if there is none among `documents`."""
    if key.kind == CALENDAR_KIND:
        if CalendarKey(CLUSTER_CALENDAR_KIND, "", key.name) in documents:
            return "; a ClusterCalendar of that name exists: write kind: ClusterCalendar"
    elif CalendarKey(CALENDAR_KIND, namespace, key.name) in documents:
        return (
            f"; a Calendar of that name exists in namespace {namespace}: leave out kind "
            "(or write kind: Calendar)"
        )
    namespaces = sorted(
        {
            other.namespace
            for other in documents
            if other.kind == CALENDAR_KIND and other.name == key.name and other.namespace
        }
        - {namespace}
    )
    if not namespaces:
        return ""
    named = ", ".join(namespaces[:_NAMESPACES_NAMED])
    if len(namespaces) > _NAMESPACES_NAMED:
        named += f" and {len(namespaces) - _NAMESPACES_NAMED} more"
    where = "namespace" if len(namespaces) == 1 else "namespaces"
    return (
        f"; a Calendar of that name exists in {where} {named} (a Calendar serves the "
        "Schedules of its own namespace only)"
    )


def keys_of(documents: Iterable[Mapping[str, Any]]) -> dict[CalendarKey, Mapping[str, Any]]:
    """Calendar documents by their keys."""
    return {calendar_key(document): document for document in documents}
