"""Reading a live cluster for `kubectl spa status` and `kubectl spa plan --from-cluster`.

Only list calls, never a write: these commands are safe to run with a read-only role (the
`view` ClusterRole, which config/rbac extends to both kinds). The flags are kubectl's own
(`--kubeconfig`, `--context`, `-n`, `-A`), so `kubectl spa ...` as a plugin behaves like the
rest of kubectl. What cannot be read becomes a one-line error and the exit statuses of
docs/operations.md, "Exit codes", shared with `spa run`.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from spa.api import API_VERSION, wire
from spa.api.calendars import referenced_calendars
from spa.api.resources import CLUSTER_CALENDAR_KIND
from spa.controller.exitcodes import EXIT_CONFIG, EXIT_FORBIDDEN, EXIT_NO_CRDS, EXIT_USAGE
from spa.controller.failures import ClusterFailure, explain
from spa.controller.resources import (
    CALENDARS,
    CLUSTER_CALENDARS,
    SCHEDULED_POD_AUTOSCALERS,
    SCHEDULES,
)
from spa.kube import (
    EVENT,
    HPA_V2,
    ApiError,
    ApiUnavailable,
    BlockingKubeClient,
    ConfigError,
    Resource,
    connect_blocking,
    default_namespace,
)
from spa.plan import Document, Plan, build_plan

__all__ = [
    "ClusterObjects",
    "Scope",
    "cluster_plan",
    "connected",
    "documents",
    "object_name",
    "object_namespace",
    "read_cluster",
    "schedule_target",
]

# A person waits for the answer: fail within seconds rather than the client's 30 s default.
REQUEST_TIMEOUT = 15.0


@dataclass(frozen=True, slots=True)
class Scope:
    """Where to read: one namespace, or all of them (None)."""

    client: BlockingKubeClient
    namespace: str | None

    @property
    def server(self) -> str:
        return self.client.host


@contextmanager
def connected(
    arguments: argparse.Namespace, *, request_timeout: float = REQUEST_TIMEOUT
) -> Iterator[Scope]:
    """A client for the cluster and namespace the kubectl flags choose; closed afterwards.
    Shell completion passes a shorter `request_timeout` (spa/cli/completion.py)."""
    try:
        client = connect_blocking(
            kubeconfig=arguments.kubeconfig,
            context=arguments.context,
            request_timeout=request_timeout,
            pool_size=4,
            in_cluster_first=False,
        )
        if arguments.all_namespaces:
            namespace = None
        else:
            namespace = arguments.namespace or default_namespace(
                kubeconfig=arguments.kubeconfig, context=arguments.context
            )
    except ConfigError as error:
        raise ClusterFailure(EXIT_CONFIG, str(error)) from error
    try:
        yield Scope(client, namespace)
    finally:
        client.close()


@dataclass(slots=True)
class ClusterObjects:
    """What was read, as the API server returned it."""

    server: str
    autoscalers: list[dict[str, Any]]
    schedules: list[dict[str, Any]]
    hpas: list[dict[str, Any]] | None = None
    """None when they could not be read (not allowed)."""
    events: list[dict[str, Any]] | None = None
    """Events about SPAs and Schedules; None when they could not be read (not allowed)."""
    problems: list[str] = field(default_factory=list)
    """What could not be read and is left out (an HPA or event list that is forbidden)."""
    calendars: list[dict[str, Any]] = field(default_factory=list)
    """The Calendars and ClusterCalendars the Schedules refer to (docs/schedules.md, "Shared
    calendars"), read only when some Schedule refers to one."""


def read_cluster(scope: Scope, *, everything: bool, selector: str | None = None) -> ClusterObjects:
    """The SPAs and Schedules in scope; `everything` adds the HPAs and the Events about both
    kinds, which `status` shows and may do without. `selector` (`status -l`) is a label
    selector on the SPAs, applied by the API server (docs/status.md)."""
    objects = ClusterObjects(
        server=scope.server,
        autoscalers=_autoscalers(scope, selector),
        schedules=_list(scope, SCHEDULES),
    )
    _read_calendars(scope, objects)
    if not everything:
        return objects
    try:
        hpa = scope.client.discover_hpa()
        objects.hpas = _list(scope, hpa)
    except ClusterFailure as error:
        if error.status != EXIT_FORBIDDEN:
            raise
        objects.problems.append(error.message)
    except (ApiUnavailable, ApiError) as error:
        raise explain(scope.server, error, HPA_V2, action="discover") from error
    try:
        # One list for both kinds: the Events the controller records name our API version.
        objects.events = _list(
            scope, EVENT, field_selector=f"involvedObject.apiVersion={API_VERSION}"
        )
    except ClusterFailure as error:
        if error.status != EXIT_FORBIDDEN:
            raise
        objects.problems.append(error.message)
    return objects


def _read_calendars(scope: Scope, objects: ClusterObjects) -> None:
    """The shared calendars the Schedules refer to, by kind, so that the plan resolves them as
    the controller does. One that may not be listed, or whose CRD is not installed (an
    optional kind: docs/runtime.md), is a problem said, and its references read as unresolved
    (the controller itself reads them: its status has the last word)."""
    kinds = {
        key.kind
        for schedule in wire.typed_list(wire.Schedule, objects.schedules)
        for key in referenced_calendars(schedule)
    }
    # Either scope: the namespace is the Calendars' alone.
    calendar_kinds: tuple[Resource, ...] = (CALENDARS, CLUSTER_CALENDARS)
    for resource in calendar_kinds:
        if resource.kind not in kinds:
            continue
        cluster_scoped = resource.kind == CLUSTER_CALENDAR_KIND
        try:
            found = scope.client.list(
                resource, namespace=None if cluster_scoped else scope.namespace
            ).items
        except (ApiUnavailable, ApiError) as error:
            failure = explain(scope.server, error, resource)
            if failure.status not in (EXIT_FORBIDDEN, EXIT_NO_CRDS):
                raise failure from error
            objects.problems.append(
                f"{failure.message}: the Schedules' references to {resource.kind}s are shown "
                "as not found"
            )
            continue
        objects.calendars.extend(found)


def _autoscalers(scope: Scope, selector: str | None) -> list[Any]:
    try:
        return _list(scope, SCHEDULED_POD_AUTOSCALERS, label_selector=selector)
    except ClusterFailure as failure:
        cause = failure.__cause__
        if selector is not None and isinstance(cause, ApiError) and cause.status == 400:
            # The API server parses selectors (kubectl leaves that to it too); its 400 is the
            # user's typo, not a broken server: say which flag and why, as bad arguments.
            shown = selector if len(selector) <= 100 else f"{selector[:100]}..."
            raise ClusterFailure(
                EXIT_USAGE,
                f"-l/--selector: {shown!r} is not a valid label selector: {cause.message}",
            ) from cause
        raise


def _list(
    scope: Scope,
    resource: Resource,
    *,
    label_selector: str | None = None,
    field_selector: str | None = None,
) -> list[Any]:
    try:
        return scope.client.list(
            resource,
            namespace=scope.namespace,
            label_selector=label_selector,
            field_selector=field_selector,
        ).items
    except (ApiUnavailable, ApiError) as error:
        raise explain(scope.server, error, resource) from error


def documents(objects: ClusterObjects) -> list[Document]:
    """The live objects as the plan's input documents, named after the server they came from
    (errors then read `https://...: Schedule shop/x: spec.timeZone: ...`). The status is the
    controller's, not the user's input, and is left out, as the API server leaves it out of
    what a user writes; but for an SPA's status.windows, which its Auto lead times are
    learned from (docs/schedules.md, "Auto lead times")."""
    bodies = [*objects.autoscalers, *objects.schedules, *objects.calendars]
    return [Document(objects.server, index, _input(body)) for index, body in enumerate(bodies, 1)]


def _input(body: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in body.items() if k != "status"}
    status = body.get("status")
    if isinstance(status, dict) and isinstance(status.get("windows"), list):
        kept["status"] = {"windows": status["windows"]}
    return kept


def cluster_plan(objects: ClusterObjects, *, at: int, until: int) -> Plan:
    """The plan of the live objects, exactly as `spa plan` makes it from files; errors name
    the server and the object, there being no file or document number."""
    plan = build_plan(documents(objects), [], at=at, until=until)
    autoscalers = {(object_namespace(o), object_name(o)) for o in objects.autoscalers}
    missing = {
        (object_namespace(s), object_name(s)): target
        for s in objects.schedules
        if (object_namespace(s), target := schedule_target(s)) not in autoscalers
    }
    errors = []
    for error in plan.errors:
        error = dataclasses.replace(error, document=None)
        where = (error.namespace, error.name)
        if error.kind == SCHEDULES.kind and error.field == _TARGET_FIELD and where in missing:
            # The plan's words are about manifests; here the SPA is missing from the cluster.
            error = dataclasses.replace(
                error,
                message=f"ScheduledPodAutoscaler {error.namespace}/{missing[where]} does not "
                "exist (the Schedule is Degraded until it does)",
            )
        errors.append(error)
    plan.errors = errors
    plan.warnings = [dataclasses.replace(found, document=None) for found in plan.warnings]
    return plan


_TARGET_FIELD = "spec.scaleTargetRef.name"


def object_namespace(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def object_name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def schedule_target(schedule: Mapping[str, Any]) -> str:
    """The name of the SPA a Schedule wants (its `spec.scaleTargetRef.name`)."""
    reference = (schedule.get("spec") or {}).get("scaleTargetRef") or {}
    return str(reference.get("name") or "")
