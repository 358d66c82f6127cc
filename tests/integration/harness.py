"""Running the controller in-process against the real control plane, on a fake clock.

Tests move "now" across window boundaries with `clock.set(...)` and then wait (in real time,
seconds at most) until the API server shows the expected state; nothing waits for wall-clock
minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from spa.controller.manager import LeaderElection, Manager
from spa.controller.optional import DISCOVERY_INTERVAL
from spa.controller.resources import (
    CALENDARS,
    CLUSTER_CALENDARS,
    SCHEDULED_POD_AUTOSCALERS,
    SCHEDULES,
)
from spa.kube import (
    HPA_V2,
    BlockingKubeClient,
    Namespace,
    NotFound,
    Resource,
    connect,
    connect_blocking,
)
from spa.runtime import FakeClock
from tests.builders import DAILY_NOON, autoscaler, schedule

REPO = Path(__file__).resolve().parents[2]
_T = TypeVar("_T")


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


async def eventually(
    check: Callable[[], _T | Awaitable[_T]], within: float = 15.0, what: str = "condition"
) -> _T:
    """Poll `check` (which may raise AssertionError) until it returns a truthy value.

    A plain function runs in a thread: its blocking calls (the API server, the controller's
    own endpoints) never stall the event loop that the in-process controller runs on, so a
    test observes the controller without slowing it. A coroutine function runs on the loop.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    last: BaseException | None = None
    while True:
        try:
            outcome: _T | Awaitable[_T]
            if inspect.iscoroutinefunction(check):
                outcome = check()
            else:
                outcome = await asyncio.to_thread(check)
            result: _T = await outcome if inspect.isawaitable(outcome) else outcome
            if result:
                return result
        except (AssertionError, NotFound) as error:
            last = error
        if loop.time() > deadline:
            raise AssertionError(f"{what} not reached within {within:.0f}s; last: {last!r}")
        await asyncio.sleep(0.05)


async def condition_becomes(
    kube: Kube, resource: Resource, namespace: str, name: str, condition: str, within: float = 15.0
) -> dict[str, Any]:
    """The object's status, once its `.status.condition` is `condition`."""

    def reached() -> dict[str, Any]:
        status = kube.status(resource, namespace, name)
        return status if status.get("condition") == condition else {}

    return await eventually(reached, within=within, what=f"{name} {condition}")


def create_noon_fleet(kube: Kube, namespace: str, names: list[str]) -> None:
    """An SPA (base 3/10) per name, each with a Schedule `<name>-noon`: Daily 12:00-13:00 UTC
    raising it to 5/20, the fleet that flips at one instant in the fault and ordering tests."""
    for name in names:
        kube.create(autoscaler(name=name, namespace=namespace))
        kube.create(
            schedule(
                name=f"{name}-noon",
                namespace=namespace,
                target=name,
                **DAILY_NOON,
                minReplicas=5,
                maxReplicas=20,
            )
        )


@dataclass
class Kube:
    """Blocking admin calls, for tests (they are quick against the local API server)."""

    client: BlockingKubeClient

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        resource = _resource_of(obj)
        return self.client.create(resource, obj["metadata"].get("namespace"), obj)

    def get(self, resource: Resource[Namespace], namespace: Namespace, name: str) -> dict[str, Any]:
        return self.client.get(resource, namespace, name)

    def hpa(self, namespace: str, name: str) -> dict[str, Any]:
        return self.client.get(HPA_V2, namespace, name)

    def bounds(self, namespace: str, name: str) -> tuple[int, int]:
        spec = self.hpa(namespace, name)["spec"]
        return spec.get("minReplicas"), spec["maxReplicas"]

    def status(
        self, resource: Resource[Namespace], namespace: Namespace, name: str
    ) -> dict[str, Any]:
        return self.client.get(resource, namespace, name).get("status") or {}

    def merge(
        self, resource: Resource[Namespace], namespace: Namespace, name: str, patch: dict[str, Any]
    ) -> dict[str, Any]:
        return self.client.patch(
            resource, namespace, name, patch, patch_type="merge", field_manager="test"
        )

    def delete(self, resource: Resource[Namespace], namespace: Namespace, name: str) -> None:
        with contextlib.suppress(NotFound):
            self.client.delete(resource, namespace, name)

    def events(self, namespace: str) -> list[dict[str, Any]]:
        from spa.kube import EVENT

        return self.client.list(EVENT, namespace=namespace).items


@dataclass
class InNamespace:
    """One test's namespace through :class:`Kube`: the SPAs and Schedules a test creates there
    and what it waits for, each call naming the object and what differs (the builders' defaults
    otherwise: the SPA `web`, base 3/10; the Schedule `noon` of `web`, fields as given)."""

    kube: Kube
    namespace: str

    def autoscaler(self, *, name: str = "web", **fields: Any) -> dict[str, Any]:
        return self.kube.create(autoscaler(name=name, namespace=self.namespace, **fields))

    def schedule(self, *, name: str = "noon", **fields: Any) -> dict[str, Any]:
        return self.kube.create(schedule(name=name, namespace=self.namespace, **fields))

    def get(self, resource: Resource[str], name: str = "web") -> dict[str, Any]:
        return self.kube.get(resource, self.namespace, name)

    def status(self, resource: Resource[str], name: str = "web") -> dict[str, Any]:
        return self.kube.status(resource, self.namespace, name)

    def spa_status(self, name: str = "web") -> dict[str, Any]:
        return self.status(SCHEDULED_POD_AUTOSCALERS, name)

    def schedule_status(self, name: str = "noon") -> dict[str, Any]:
        return self.status(SCHEDULES, name)

    def hpa(self, name: str = "web") -> dict[str, Any]:
        return self.kube.hpa(self.namespace, name)

    def bounds(self, name: str = "web") -> tuple[int, int]:
        return self.kube.bounds(self.namespace, name)

    def merge(self, resource: Resource[str], name: str, patch: dict[str, Any]) -> dict[str, Any]:
        return self.kube.merge(resource, self.namespace, name, patch)

    def delete(self, resource: Resource[str], name: str = "web") -> None:
        self.kube.delete(resource, self.namespace, name)

    def events(self) -> list[dict[str, Any]]:
        return self.kube.events(self.namespace)

    def reasons(self) -> set[str]:
        """The reasons of the namespace's Events."""
        return {event["reason"] for event in self.events()}

    async def bounds_become(self, expected: tuple[int, int], *, name: str = "web") -> None:
        await eventually(lambda: self.bounds(name) == expected, what=f"{name}'s bounds {expected}")

    async def spa_condition_becomes(self, condition: str, *, name: str = "web") -> dict[str, Any]:
        return await condition_becomes(
            self.kube, SCHEDULED_POD_AUTOSCALERS, self.namespace, name, condition
        )

    async def schedule_condition_becomes(
        self, condition: str, *, name: str = "noon"
    ) -> dict[str, Any]:
        return await condition_becomes(self.kube, SCHEDULES, self.namespace, name, condition)


# By kind, of either scope: the object's own namespace (None for a ClusterCalendar) is sent.
_RESOURCES: dict[str, Resource] = {
    "ScheduledPodAutoscaler": SCHEDULED_POD_AUTOSCALERS,
    "Schedule": SCHEDULES,
    "Calendar": CALENDARS,
    "ClusterCalendar": CLUSTER_CALENDARS,
    "HorizontalPodAutoscaler": HPA_V2,
}


def _resource_of(obj: dict[str, Any]) -> Resource:
    return _RESOURCES[obj["kind"]]


CRD_NAMES = (
    "scheduledpodautoscalers.autoscaling.d-kuro.github.io",
    "schedules.autoscaling.d-kuro.github.io",
    "calendars.autoscaling.d-kuro.github.io",
    "clustercalendars.autoscaling.d-kuro.github.io",
)


def install_crds(cluster: Any) -> None:
    """Apply config/crd as a user would (server-side, the real kubectl) and wait until the API
    server serves every kind."""
    cluster.run_kubectl("apply", "--server-side", "-k", str(REPO / "config" / "crd"), check=True)
    cluster.run_kubectl(
        "wait",
        "--for=condition=Established",
        *(f"crd/{name}" for name in CRD_NAMES),
        "--timeout=60s",
        check=True,
    )


@contextlib.contextmanager
def admin(cluster: Any) -> Iterator[Kube]:
    """A :class:`Kube` with the cluster's admin credentials, closed afterwards."""
    client = connect_blocking(kubeconfig=str(cluster.kubeconfig))
    try:
        yield Kube(client)
    finally:
        client.close()


@dataclass
class Running:
    manager: Manager
    clock: FakeClock
    task: asyncio.Task[int]

    async def stop(self) -> int:
        self.manager.stop()
        return await asyncio.wait_for(self.task, timeout=20)


@contextlib.asynccontextmanager
async def running_controller(
    kubeconfig: Path,
    namespaces: list[str],
    *,
    start: float,
    leader_election: LeaderElection | None = None,
    clock: FakeClock | None = None,
    discovery_interval: float = DISCOVERY_INTERVAL,
    workers: int = 2,
    **options: Any,
) -> AsyncIterator[Running]:
    """The controller in this process; `options` are more of the Manager's fields."""
    client = await connect(kubeconfig=str(kubeconfig))
    clock = clock or FakeClock(start)
    manager = Manager(
        client=client,
        namespaces=namespaces,
        clock=clock,
        workers=workers,
        resync_period=86400,
        leader_election=leader_election,
        metrics_address="127.0.0.1:0",
        probe_address="127.0.0.1:0",
        discovery_interval=discovery_interval,
        **options,
    )
    task = asyncio.create_task(manager.run())
    running = Running(manager, clock, task)
    try:
        await eventually(lambda: manager.ready or task.done(), what="controller ready")
        if task.done():
            task.result()
        yield running
    finally:
        if not task.done():
            await running.stop()
        await client.close()
