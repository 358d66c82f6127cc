"""The SPA controller's actuator (spa/controller/actuator.py) against a scripted client: the
leadership fence, which refusals are the user's, ownerReference compare-and-swap retries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from spa.api import wire
from spa.controller.actuator import Actuator, OwnerNotChanged
from spa.controller.decide import PodsRead, PodTimes, ReadPods, ReadReadiness
from spa.controller.permissions import Permission, PodAccess
from spa.controller.resources import SCHEDULES
from spa.controller.writes import Refused, brief
from spa.kube import (
    HPA_V2,
    POD,
    ApiError,
    Conflict,
    DeadlinePassed,
    ListResult,
    Resource,
    error_from_status,
)
from spa.runtime import NotLeader, Store
from tests.builders import autoscaler, schedule
from tests.client_double import UnexpectedRequests

SPA = wire.typed(wire.ScheduledPodAutoscaler, autoscaler(metadata={"uid": "uid-web"}))


class ScriptedKube(UnexpectedRequests):
    """Answers each request the actuator sends with the next scripted outcome (an object or
    an exception)."""

    def __init__(self, *outcomes: Mapping[str, Any] | Exception) -> None:
        self.outcomes = list(outcomes)
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    async def _next(self, verb: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append((verb, args, kwargs))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return dict(outcome)

    async def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        **options: Any,
    ) -> dict[str, Any]:
        return await self._next("patch", resource, namespace, name, body, **options)

    async def get(
        self, resource: Resource, namespace: str | None, name: str, **options: Any
    ) -> dict[str, Any]:
        return await self._next("get", resource, namespace, name, **options)

    async def create(
        self, resource: Resource, namespace: str | None, body: Mapping[str, Any], **options: Any
    ) -> dict[str, Any]:
        return await self._next("create", resource, namespace, body, **options)

    async def list(self, resource: Resource, **options: Any) -> ListResult:
        items = await self._next("list", resource, **options)
        # As the client does: each item turned into what the caller keeps.
        transform = options.get("transform") or (lambda item: item)
        return ListResult(items=[transform(i) for i in items["items"]], resource_version="1")

    async def api_resources(self, group_version: str) -> Sequence[dict[str, Any]]:
        resources: Sequence[dict[str, Any]] = (await self._next("api_resources", group_version))[
            "resources"
        ]
        return resources


class Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[str, str]] = []

    def warning(self, obj: Any, reason: str, message: str) -> None:
        self.recorded.append(("Warning", reason))

    def normal(self, obj: Any, reason: str, message: str) -> None:
        self.recorded.append(("Normal", reason))


def actuator(
    kube: ScriptedKube, *, leader: bool = True, pod_access: PodAccess | None = None
) -> tuple[Actuator, Events]:
    events = Events()
    act = Actuator(
        kube=kube,
        autoscalers=Store(),
        schedules=Store(),
        hpas=Store(),
        hpa_resource=HPA_V2,
        recorder=events,
        fence=lambda: 10.0 if leader else 0.0,  # seconds left of the renew deadline
        pod_access=pod_access,
    )
    return act, events


def hpa(version: str = "1") -> wire.HorizontalPodAutoscaler:
    metadata = {"namespace": "shop", "name": "web", "resourceVersion": version}
    return wire.typed(wire.HorizontalPodAutoscaler, {"metadata": metadata})


def push(version: str, owners: list[dict[str, Any]] | None = None) -> wire.Schedule:
    """The Schedule shop/push at resourceVersion `version`."""
    metadata = {"uid": "u", "resourceVersion": version, "ownerReferences": owners}
    return wire.typed(wire.Schedule, schedule(name="push", metadata=metadata))


def status_error(code: int, message: str = "no") -> Exception:
    return error_from_status(code, {"kind": "Status", "code": code, "message": message})


async def test_a_follower_neither_writes_nor_records_events() -> None:
    kube = ScriptedKube(hpa("2"))
    act, events = actuator(kube, leader=False)
    with pytest.raises(NotLeader):
        await act.patch_hpa(hpa(), {"spec": {}})
    act.warning(SPA, "HPARejected", "x")
    assert kube.calls == []
    assert events.recorded == []


async def test_a_write_whose_deadline_passes_before_it_is_sent_is_not_leader() -> None:
    """The client refuses to send once the fence's deadline has passed (queued behind the rate
    limiter, say): for the reconciler that is the lost Lease, not an API error to back off on."""
    act, _ = actuator(ScriptedKube(DeadlinePassed("PATCH ...: not sent, its deadline passed")))
    with pytest.raises(NotLeader, match="renew deadline passed"):
        await act.patch_hpa(hpa(), {"spec": {}})


@pytest.mark.parametrize("code", [400, 403, 422])
async def test_invalid_and_forbidden_writes_are_refusals(code: int) -> None:
    act, _ = actuator(ScriptedKube(status_error(code, "spec.metrics[0]: Required value")))
    with pytest.raises(Refused) as refused:
        await act.patch_hpa(hpa(), {"spec": {}})
    assert (refused.value.status, refused.value.message) == (
        code,
        "spec.metrics[0]: Required value",
    )


@pytest.mark.parametrize("code", [409, 429, 500])
async def test_other_errors_are_not_refusals(code: int) -> None:
    act, _ = actuator(ScriptedKube(status_error(code)))
    with pytest.raises(ApiError) as raised:
        await act.patch_hpa(hpa(), {"spec": {}})
    assert raised.value.status == code


async def test_a_dry_run_is_not_recorded_in_the_cache() -> None:
    kube = ScriptedKube(hpa("2"), hpa("2"))
    act, _ = actuator(kube)
    act._hpas.upsert(dict(hpa("1")))
    await act.patch_hpa(hpa(), {"spec": {}}, dry_run=True)
    assert act._hpas.get("shop/web") == hpa("1")
    await act.patch_hpa(hpa(), {"spec": {}})
    assert act._hpas.get("shop/web") == hpa("2")
    assert [call[2]["dry_run"] for call in kube.calls] == [True, False]


async def test_adoption_is_a_compare_and_swap_retried_on_conflict() -> None:
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "c", "controller": False}
    kube = ScriptedKube(Conflict(409, "Conflict", "changed"), push("2", [other]), push("3"))
    act, _ = actuator(kube)
    adopted = await act.set_schedule_owner(push("1"), SPA)
    assert adopted == push("3")
    first, _, second = kube.calls
    assert first[1][0] is SCHEDULES
    assert first[1][3]["metadata"]["resourceVersion"] == "1"
    # The retry is based on what the server holds now, and keeps the other owner.
    references = second[1][3]["metadata"]["ownerReferences"]
    assert second[1][3]["metadata"]["resourceVersion"] == "2"
    assert [r["uid"] for r in references] == ["c", "uid-web"]


async def test_a_refused_adoption_is_an_owner_not_changed_with_the_servers_message() -> None:
    act, _ = actuator(ScriptedKube(status_error(422, "Only one reference can have Controller")))
    with pytest.raises(OwnerNotChanged) as failed:
        await act.set_schedule_owner(push("1"), SPA)
    assert (
        failed.value.message
        == "the API server refused to adopt it: Only one reference can have Controller"
    )


def test_brief_keeps_messages_short_and_on_one_line() -> None:
    assert brief("a\n  b") == "a b"
    assert len(brief("x" * 10_000)) == 400


# -- window readiness: the target's selector, and its pods' wait for a node -------------------

APPS_V1 = {
    "resources": [
        {"name": "deployments", "kind": "Deployment", "namespaced": True},
        {"name": "deployments/scale", "kind": "Scale", "namespaced": True},
    ]
}
TARGET = ("apps/v1", "Deployment", "web")


def _target(selector: object) -> dict[str, Any]:
    return {
        "metadata": {"name": "web"},
        "spec": {"replicas": 5, "selector": selector},
        "status": {"replicas": 5, "readyReplicas": 4},
    }


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({"matchLabels": {"app": "web", "tier": "front"}}, "app=web,tier=front"),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [
                    {"key": "track", "operator": "In", "values": ["stable", "canary"]},
                    {"key": "env", "operator": "NotIn", "values": ["dev"]},
                    {"key": "owner", "operator": "Exists"},
                    {"key": "legacy", "operator": "DoesNotExist"},
                ],
            },
            "app=web,track in (stable,canary),env notin (dev),owner,!legacy",
        ),
        # A custom kind's selector already in that form.
        ("app=web", "app=web"),
        # None would select every pod of the namespace: never listed.
        ({}, None),
        (None, None),
        ({"matchExpressions": [{"key": "x", "operator": "Gt", "values": ["1"]}]}, None),
    ],
)
async def test_the_read_of_a_target_gives_its_label_selector(
    selector: object, expected: str | None
) -> None:
    kube = ScriptedKube(APPS_V1, _target(selector))
    act, _ = actuator(kube)
    read = await act.read_readiness(ReadReadiness(SPA, TARGET))
    assert (read.ready, read.selector) == (4, expected)


def _pod(created: str, condition: dict[str, Any] | None, node: str | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "web-x", "creationTimestamp": created},
        "spec": {"nodeName": node} if node else {},
        "status": {"conditions": [] if condition is None else [condition]},
    }


async def test_the_pods_are_listed_by_the_selector_with_their_creation_and_binding() -> None:
    scheduled = {
        "type": "PodScheduled",
        "status": "True",
        "lastTransitionTime": "2026-11-16T09:59:46Z",
    }
    unschedulable = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "lastTransitionTime": "2026-11-16T09:59:02Z",
    }
    kube = ScriptedKube(
        {
            "items": [
                _pod("2026-11-16T09:59:01Z", scheduled, node="node-1"),
                _pod("2026-11-16T09:59:02Z", unschedulable),
                _pod("2026-11-16T09:59:03Z", None),  # not looked at by the scheduler yet
                # Bound, with no time to read: left out rather than guessed.
                _pod("2026-11-16T09:59:04Z", None, node="node-2"),
            ]
        }
    )
    act, _ = actuator(kube)
    read = await act.read_pods(ReadPods(SPA, "app=web"))
    created = 1794823141  # 2026-11-16T09:59:01Z
    assert read == PodsRead(
        pods=(
            PodTimes(created, created + 45),
            PodTimes(created + 1, None),
            PodTimes(created + 2, None),
        )
    )
    [(verb, (resource,), options)] = kube.calls
    assert (verb, resource, options["namespace"], options["label_selector"]) == (
        "list",
        POD,
        "shop",
        "app=web",
    )


async def test_pods_the_controller_may_not_list_are_not_listed_or_said_refused() -> None:
    # The start's access review said no: no request.
    denied = PodAccess((Permission("list", "pods", "", group=""),))
    act, _ = actuator(ScriptedKube(), pod_access=denied)
    read = await act.read_pods(ReadPods(SPA, "app=web"))
    assert read.forbidden
    assert read.problem == "not allowed to list pods in namespace shop"
    # Another namespace's answer does not count for this one.
    elsewhere = PodAccess((Permission("list", "pods", "payments", group=""),))
    act, _ = actuator(ScriptedKube({"items": []}), pod_access=elsewhere)
    assert await act.read_pods(ReadPods(SPA, "app=web")) == PodsRead()
    # Not asked at the start: the API server's refusal is said the same way.
    act, _ = actuator(ScriptedKube(status_error(403, 'pods is forbidden: cannot list "pods"')))
    read = await act.read_pods(ReadPods(SPA, "app=web"))
    assert read.forbidden
    # Any other error ends the reconcile (retried).
    act, _ = actuator(ScriptedKube(status_error(500)))
    with pytest.raises(ApiError):
        await act.read_pods(ReadPods(SPA, "app=web"))
