"""The objects tests and benchmarks give the code or the API server, built in one place:
ScheduledPodAutoscalers, Schedules, shared calendars, the owner reference an SPA puts on what
it controls, and Deployments for the pods of tests/testenv (docs/development.md, "Where the
test helpers live"); `manifests` writes them as the YAML file a user would.

Each builder returns a new dict shaped as the API server's JSON, sharing nothing with its
arguments or with other results (a test may change it). Every parameter is keyword-only.
The builder's own parameters (`name`, `namespace`, `target`, `metadata`, `status`, ...) are
snake_case; the rest are the manifest's fields, camelCase as in YAML, and a None among them
leaves that field out. A module that builds many objects with the same values binds them once
with :func:`functools.partial`, under a module-private name (a case can still override a value,
or drop it with None):

    _weekly = partial(schedule, type="Weekly", startDayOfWeek="Monday", endDayOfWeek="Friday")
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import yaml

from spa.api import API_VERSION, SCHEDULE_KIND, SCHEDULED_POD_AUTOSCALER
from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND, ScheduledPodAutoscalerSpec
from tests.testenv.kwok import START_DELAY_ANNOTATION

CPU_70: dict[str, Any] = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
}
"""The metric of the README's example: 70 % of the pods' CPU requests."""

DAILY_NOON: dict[str, Any] = {"type": "Daily", "startTime": "12:00", "endTime": "13:00"}
"""The window most tests use: every day 12:00-13:00 (UTC unless the Schedule sets timeZone)."""

OFFICE_HOURS: dict[str, Any] = {
    "type": "Daily",
    "startTime": "09:00",
    "endTime": "17:00",
    "timeZone": "Europe/Berlin",
}
"""The window of the plan's examples (`spa plan` and its pages): every day 09:00-17:00 in Berlin."""

# The fields of the SPA's own spec (leadTime, scaleUpImmediately, ...): the rest of
# `autoscaler`'s fields belong to the HPA spec inside it.
_SPA_SPEC_FIELDS = frozenset(
    field.alias or name
    for name, field in ScheduledPodAutoscalerSpec.model_fields.items()
    if name != "horizontal_pod_autoscaler_spec"
)


def _present(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def _metadata(name: str, namespace: str | None, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    return _present({"name": name, "namespace": namespace, **(extra or {})})


def autoscaler(
    *,
    name: str = "web",
    namespace: str | None = "shop",
    target: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A ScheduledPodAutoscaler of the Deployment `target` (default: the SPA's own name), with
    base bounds 3 to 10 on :data:`CPU_70`.

    `fields` are camelCase: those of the SPA's own spec (leadTime, scaleUpImmediately) go
    there, every other one (minReplicas, maxReplicas, metrics, behavior, ...) into its
    horizontalPodAutoscalerSpec. `metadata` adds to name and namespace (a None namespace
    leaves it out); `status` is left out unless given.
    """
    hpa: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target or name},
        "minReplicas": 3,
        "maxReplicas": 10,
        "metrics": [CPU_70],
    }
    own: dict[str, Any] = {}
    for key, value in fields.items():
        (own if key in _SPA_SPEC_FIELDS else hpa)[key] = value
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": SCHEDULED_POD_AUTOSCALER,
        "metadata": _metadata(name, namespace, metadata),
        "spec": {"horizontalPodAutoscalerSpec": _present(hpa), **_present(own)},
    }
    if status is not None:
        document["status"] = status
    return copy.deepcopy(document)


def schedule(
    *,
    name: str = "noon",
    namespace: str | None = "shop",
    target: str = "web",
    metadata: Mapping[str, Any] | None = None,
    status: Mapping[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Schedule of the SPA `target`, with the camelCase fields of `spec` and no others: the
    window is the caller's to state (``**DAILY_NOON`` for the common one). `metadata` and
    `status` as in :func:`autoscaler`."""
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": SCHEDULE_KIND,
        "metadata": _metadata(name, namespace, metadata),
        "spec": _present({"scaleTargetRef": {"name": target}, **spec}),
    }
    if status is not None:
        document["status"] = status
    return copy.deepcopy(document)


def calendar(
    *,
    name: str = "black-friday",
    namespace: str | None = None,
    kind: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A shared calendar with the camelCase fields of `spec` (dates, dateRanges, holidays,
    description): a ClusterCalendar without `namespace`, a Calendar of that namespace with one
    (`kind` overrides, for a wrong object)."""
    chosen = kind or (CALENDAR_KIND if namespace is not None else CLUSTER_CALENDAR_KIND)
    return copy.deepcopy(
        {
            "apiVersion": API_VERSION,
            "kind": chosen,
            "metadata": _metadata(name, namespace, metadata),
            "spec": _present(spec),
        }
    )


class _Quoting(yaml.SafeDumper):
    """Quotes a string that starts with a digit or holds a colon (09:00, 2026-11-25T19:00, 1h),
    as a user writes them: not every YAML reader takes them for the strings they are."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if value[:1].isdigit() or ":" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Quoting.add_representer(str, _string)


def manifests(*objects: Mapping[str, Any]) -> str:
    """`objects` as the multi-document YAML a user hands `spa plan -f` or kubectl, in order."""
    return yaml.dump_all([dict(document) for document in objects], Dumper=_Quoting, sort_keys=False)


def owner(*, name: str = "web", uid: str = "uid-web") -> dict[str, Any]:
    """The ownerReference of the SPA `name` as the controller of an HPA or a Schedule."""
    return {
        "apiVersion": API_VERSION,
        "kind": SCHEDULED_POD_AUTOSCALER,
        "name": name,
        "uid": uid,
        "controller": True,
    }


def deployment(
    *,
    name: str = "web",
    namespace: str | None = "shop",
    replicas: int = 1,
    start_delay: str | None = None,
    requests: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Deployment of one container `app` whose pods are labelled app=`name`.

    `start_delay` (such as "3s") is how long tests/testenv's kwok keeps each new pod from
    being ready; `requests` are the container's resource requests; `node_selector` the pods'
    nodeSelector (a Karpenter node pool's, tests/testenv/karpenter.py). Each is left out
    unless given.
    """
    container: dict[str, Any] = {"name": "app", "image": "registry.example/app:1"}
    if requests is not None:
        container["resources"] = {"requests": dict(requests)}
    template_metadata: dict[str, Any] = {"labels": {"app": name}}
    if start_delay is not None:
        template_metadata["annotations"] = {START_DELAY_ANNOTATION: start_delay}
    pod_spec: dict[str, Any] = {"containers": [container]}
    if node_selector is not None:
        pod_spec["nodeSelector"] = dict(node_selector)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(name, namespace, None),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": template_metadata, "spec": pod_spec},
        },
    }


def namespace_terminating(
    *,
    resource: str = "horizontalpodautoscalers",
    group: str = "autoscaling",
    name: str = "web",
    namespace: str = "shop",
) -> dict[str, Any]:
    """The Status the API server answers (HTTP 403) to a create of `resource` `name` in
    `namespace` while that namespace is being deleted, byte for byte as kube-apiserver sends
    it (tests/integration/test_namespace_terminating.py checks it against the real one). Give
    it to :func:`spa.kube.error_from_status`, as spa.kube's client does with the answer."""
    qualified = f"{resource}.{group}" if group else resource
    details: dict[str, Any] = {"name": name, "group": group, "kind": resource}
    if not group:
        del details["group"]
    details["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is forbidden: unable to create new content in '
        f"namespace {namespace} because it is being terminated",
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }


def namespace_gone(*, namespace: str = "shop") -> dict[str, Any]:
    """The Status the API server answers (HTTP 404) to a create in `namespace` once that
    namespace is gone, as kube-apiserver sends it (tests/integration/
    test_namespace_terminating.py checks it against the real one)."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'namespaces "{namespace}" not found',
        "reason": "NotFound",
        "details": {"name": namespace, "kind": "namespaces"},
        "code": 404,
    }
