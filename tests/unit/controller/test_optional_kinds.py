"""The optional kinds (spa/controller/optional.py; docs/runtime.md, "Optional kinds"): one rule
for the Calendar, ClusterCalendar and CapacityBuffer CRDs. Asked of discovery at the start and,
while not served, again once the interval has passed (never sooner, on an injected clock); once
served, the informer starts once and every SPA is reconciled when its cache is complete; a
Schedule that refers to a calendar kind not served is Degraded with the CRD named, the SPA's
other Schedules apply, and the Schedule applies once the kind is served, with no restart. The
controller on the real API server: tests/integration/test_optional_crds.py."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import pytest

from spa.api.calendars import calendar_lookup
from spa.api.resources import (
    CALENDAR_KIND,
    CLUSTER_CALENDAR_KIND,
    CalendarKind,
    CalendarReference,
)
from spa.controller.capacity import CAPACITY_BUFFER_KIND, capacity_buffer_kind
from spa.controller.decide import Memory
from spa.controller.optional import (
    CRD_INSTALL,
    DISCOVERY_INTERVAL,
    OptionalKind,
    OptionalKinds,
    discover_served,
)
from spa.controller.resources import CALENDARS, CLUSTER_CALENDARS
from spa.kube import ApiUnavailable, Resource
from spa.runtime import FakeClock, Store
from tests.builders import calendar
from tests.client_double import UnexpectedRequests
from tests.unit.spa_model import KEY, OURS, Server, at, autoscaler, schedule


@dataclass
class Listed:
    """An informer's cache as the kind's `watch` returns it: complete once `synced` is set."""

    store: Store = field(default_factory=Store)
    synced: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def has_synced(self) -> bool:
        return self.synced.is_set()

    async def wait_synced(self) -> None:
        await self.synced.wait()


@dataclass
class Discovery:
    """The API server's discovery: the resources served, and every question asked."""

    served: set[Resource] = field(default_factory=set)
    failing: bool = False
    asked: list[str] = field(default_factory=list)

    async def discover(self, resource: Resource) -> Resource | None:
        self.asked.append(resource.kind)
        if self.failing:
            raise ApiUnavailable("connection refused")
        return resource if resource in self.served else None


@dataclass
class Kinds:
    """The two calendar kinds of a controller, on `clock`: the caches their `watch` started,
    and the kinds whose cache was announced complete."""

    clock: FakeClock
    discovery: Discovery = field(default_factory=Discovery)
    started: dict[str, Listed] = field(default_factory=dict)
    completed: list[str] = field(default_factory=list)

    def kind(self, resource: Resource) -> OptionalKind:
        def watch(served: Resource) -> Listed:
            assert served == resource
            self.started[resource.kind] = Listed()
            return self.started[resource.kind]

        return OptionalKind(
            kind=resource.kind,
            crd=f"{resource.plural}.{resource.group}",
            install=CRD_INSTALL,
            discover=lambda: self.discovery.discover(resource),
            clock=self.clock,
            watch=watch,
            on_complete=lambda kind: self.completed.append(kind.kind),
        )

    def registry(self) -> OptionalKinds:
        return OptionalKinds([self.kind(CALENDARS), self.kind(CLUSTER_CALENDARS)], clock=self.clock)


def test_a_kind_not_served_is_asked_again_only_once_the_interval_has_passed() -> None:
    async def scenario() -> None:
        kinds = Kinds(FakeClock())
        kind = kinds.kind(CALENDARS)
        assert await kind.served() is None
        assert (kind.resource, kind.store) == (None, None)
        # Asked again at once, or just before the interval: no question to the server.
        assert await kind.served() is None
        kinds.clock.advance(DISCOVERY_INTERVAL - 1)
        kinds.discovery.served.add(CALENDARS)
        assert await kind.served() is None
        assert kinds.discovery.asked == ["Calendar"]
        # The interval has passed: asked, found, and its informer started, once.
        kinds.clock.advance(1)
        assert await kind.served() == CALENDARS
        assert list(kinds.started) == ["Calendar"]
        # Its cache counts only once it has listed, and only then is every SPA reconciled.
        assert kind.store is None
        await asyncio.sleep(0)
        assert kinds.completed == []
        kinds.started["Calendar"].synced.set()
        await asyncio.sleep(0)
        assert kind.store is kinds.started["Calendar"].store
        assert kinds.completed == ["Calendar"]
        # Served for good: never asked again, never started again.
        kinds.clock.advance(10 * DISCOVERY_INTERVAL)
        assert await kind.served() == CALENDARS
        assert kinds.discovery.asked == ["Calendar", "Calendar"]
        assert list(kinds.started) == ["Calendar"]
        await kind.close()

    asyncio.run(scenario())


def test_the_registry_asks_each_kind_not_served_at_its_interval_and_survives_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        kinds = Kinds(FakeClock())
        kinds.discovery.served.add(CLUSTER_CALENDARS)
        registry = kinds.registry()
        # The start: both asked, the ClusterCalendar found and watched; the controller waits
        # for its cache before it reconciles, so its completion reconciles nothing more.
        await registry.discover(announce=False)
        assert kinds.discovery.asked == ["Calendar", "ClusterCalendar"]
        assert registry.unserved == [CALENDAR_KIND]
        assert list(kinds.started) == [CLUSTER_CALENDAR_KIND]
        kinds.started[CLUSTER_CALENDAR_KIND].synced.set()
        running = asyncio.create_task(registry.run())
        await kinds.clock.settle()
        # Nothing before the interval; at it, only the kind not served is asked (and fails:
        # logged, asked again an interval later, the loop still running).
        kinds.discovery.failing = True
        kinds.clock.advance(DISCOVERY_INTERVAL - 1)
        await kinds.clock.settle()
        assert len(kinds.discovery.asked) == 2
        with caplog.at_level(logging.WARNING, logger="spa.controller.optional"):
            kinds.clock.advance(1)
            await kinds.clock.settle()
        assert kinds.discovery.asked[2:] == ["Calendar"]
        assert "could not ask whether the API server serves calendars." in caplog.text
        assert not running.done()
        # The CRD is installed: found at the next interval, its informer started.
        kinds.discovery.failing = False
        kinds.discovery.served.add(CALENDARS)
        kinds.clock.advance(DISCOVERY_INTERVAL)
        await kinds.clock.settle()
        assert kinds.discovery.asked[2:] == ["Calendar", "Calendar"]
        assert registry.unserved == []
        assert sorted(kinds.started) == [CALENDAR_KIND, CLUSTER_CALENDAR_KIND]
        kinds.started[CALENDAR_KIND].synced.set()
        await kinds.clock.settle()
        assert kinds.completed == [CALENDAR_KIND]
        # Every kind served: no more questions.
        kinds.clock.advance(10 * DISCOVERY_INTERVAL)
        await kinds.clock.settle()
        assert len(kinds.discovery.asked) == 4
        running.cancel()
        await registry.close()

    asyncio.run(scenario())


@dataclass
class Served(UnexpectedRequests):
    """A discovery client: the resources it lists per group/version."""

    resources: dict[str, list[str]]

    async def api_resources(self, group_version: str) -> list[dict[str, str]]:
        return [{"name": name} for name in self.resources.get(group_version, [])]


def test_a_calendar_kind_is_served_where_its_group_version_lists_it() -> None:
    group_version = CALENDARS.group_version
    only_spas = Served({group_version: ["scheduledpodautoscalers", "schedules"]})
    assert asyncio.run(discover_served(only_spas, CALENDARS)) is None
    both = Served({group_version: ["calendars", "clustercalendars"]})
    assert asyncio.run(discover_served(both, CALENDARS)) == CALENDARS
    assert asyncio.run(discover_served(Served({}), CLUSTER_CALENDARS)) is None


def test_the_three_kinds_say_the_same_way_which_crd_is_missing_and_how_to_install_it() -> None:
    kinds = Kinds(FakeClock())
    assert kinds.kind(CALENDARS).missing == (
        "the Calendar CRD (calendars.autoscaling.d-kuro.github.io) is not installed: apply "
        "config/crd, or helm upgrade the chart (docs/install.md)"
    )
    assert kinds.kind(CLUSTER_CALENDARS).missing.startswith(
        "the ClusterCalendar CRD (clustercalendars.autoscaling.d-kuro.github.io) is not installed: "
    )
    buffers = capacity_buffer_kind(Served({}), clock=FakeClock())
    assert buffers.kind == CAPACITY_BUFFER_KIND
    assert buffers.missing.startswith(
        "the CapacityBuffer CRD (capacitybuffers.autoscaling.x-k8s.io) is not installed: "
    )


def test_the_lookup_names_the_missing_crd_for_a_kind_not_served() -> None:
    lookup = calendar_lookup("shop", {}, unserved={CLUSTER_CALENDAR_KIND: "not installed"})
    assert lookup(CalendarReference(name="freeze")) == (
        'Calendar "freeze" in namespace shop not found'
    )
    reference = CalendarReference(kind=CalendarKind.ClusterCalendar, name="peak")
    assert lookup(reference) == "not installed"


def test_a_schedule_on_a_calendar_kind_not_served_is_degraded_and_applies_once_it_is() -> None:
    async def scenario() -> None:
        kinds = Kinds(FakeClock())
        calendars, cluster_calendars = kinds.kind(CALENDARS), kinds.kind(CLUSTER_CALENDARS)
        plain = schedule("plain", owner=OURS, minReplicas=4, maxReplicas=12)
        peak = schedule(
            "peak", owner=OURS, minReplicas=6, maxReplicas=20, calendars=[{"name": "freeze"}]
        )
        server = Server(autoscaler(), [plain, peak], calendar_kinds=(calendars, cluster_calendars))
        # One process throughout: what it compiled while the kind was not served is not kept.
        reconciler = server.reconciler(at(10, 30), {KEY: Memory()})
        await calendars.served()
        await reconciler.reconcile(KEY)
        await reconciler.reconcile(KEY)
        statuses = {s["metadata"]["name"]: s["status"] for s in server.schedules}
        assert statuses["plain"]["condition"] == "Progressing"
        assert statuses["peak"]["condition"] == "Degraded"
        assert statuses["peak"]["message"] == f"spec.calendars[0]: {calendars.missing}"
        assert server.hpa is not None
        assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (4, 12)
        warnings = [(r, m) for kind, r, m in server.recorded.events if kind == "Warning"]
        assert warnings == [("InvalidSchedule", f"spec.calendars[0]: {calendars.missing}")]
        # The CRD is installed and the Calendar created: once the cache has listed, the
        # Schedule applies (its Skip calendar does not hold today).
        kinds.discovery.served.add(CALENDARS)
        kinds.clock.advance(DISCOVERY_INTERVAL)
        assert await calendars.served() == CALENDARS
        listed = kinds.started[CALENDAR_KIND]
        listed.store.upsert(
            calendar(name="freeze", namespace="shop", dates=["2026-12-24"])
            | {"metadata": {"name": "freeze", "namespace": "shop", "resourceVersion": "7"}}
        )
        await reconciler.reconcile(KEY)
        assert server.schedules[1]["status"]["condition"] == "Degraded", "read before listed"
        listed.synced.set()
        await reconciler.reconcile(KEY)
        await reconciler.reconcile(KEY)
        statuses = {s["metadata"]["name"]: s["status"] for s in server.schedules}
        assert statuses["peak"]["condition"] == "Progressing"
        assert not statuses["peak"].get("message")
        assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (6, 20)
        await calendars.close()

    asyncio.run(scenario())


def test_the_registry_asks_only_about_a_missing_kind_something_refers_to() -> None:
    # Quiet between boundaries (docs/runtime.md, "Optional kinds"): a controller whose
    # Schedules refer to no Calendar asks nothing about the missing Calendar CRD; once one
    # does, the kind is asked at its interval. Its users may still ask (served()).
    async def scenario() -> None:
        kinds = Kinds(FakeClock())
        referred = False
        kind = kinds.kind(CALENDARS)
        kind.polled = lambda: referred
        registry = OptionalKinds([kind], clock=kinds.clock)
        await registry.discover(announce=False)
        assert kinds.discovery.asked == ["Calendar"]
        running = asyncio.create_task(registry.run())
        await kinds.clock.settle()
        kinds.clock.advance(5 * DISCOVERY_INTERVAL)
        await kinds.clock.settle()
        assert kinds.discovery.asked == ["Calendar"]
        referred = True
        kinds.clock.advance(DISCOVERY_INTERVAL)
        await kinds.clock.settle()
        assert kinds.discovery.asked == ["Calendar", "Calendar"]
        running.cancel()
        await registry.close()

    asyncio.run(scenario())
