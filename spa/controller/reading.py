"""What one decision reads of a key, gathered from the caches: the :class:`Snapshot`.

Why a module of its own: the reconciler is a loop (docs/architecture.md, "Decide, then act"),
and building its snapshot is a job of its own, with the state it needs: the informers' stores,
the optional calendar kinds, what is derived from the objects (`Derived`), and the few places
where a cache cannot answer and the API server is asked (an HPA of the SPA's name that our
label-filtered cache does not see). The caches hold raw JSON; this is where it becomes typed
for the decision. Nothing here decides anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spa.api import wire
from spa.api.calendars import CalendarKey, referenced_calendars
from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND
from spa.controller.actuator import Act
from spa.controller.decide import (
    Attempts,
    ForeignHpaGone,
    Memory,
    Snapshot,
    absorb,
    dying,
)
from spa.controller.derived import Derived
from spa.controller.desired import controller_owner_uid
from spa.controller.fleet import FleetIndex
from spa.controller.optional import KindCache
from spa.controller.watches import TARGET_INDEX, UID_INDEX
from spa.kube import NotFound
from spa.runtime import Store, split_key

__all__ = ["SnapshotReader"]


class SnapshotReader:
    """Builds the :class:`Snapshot` of a key from the caches (see the reconciler's parameters
    for what each one is)."""

    def __init__(
        self,
        *,
        actuator: Act,
        autoscalers: Store,
        schedules: Store,
        hpas: Store,
        derived: Derived,
        max_schedules: int,
        calendars: KindCache | None = None,
        cluster_calendars: KindCache | None = None,
        fleet: FleetIndex | None = None,
    ) -> None:
        self._act = actuator
        self._autoscalers = autoscalers
        self._schedules = schedules
        self._hpas = hpas
        self._derived = derived
        self._max_schedules = max_schedules
        kinds = ((CALENDAR_KIND, calendars), (CLUSTER_CALENDAR_KIND, cluster_calendars))
        self._calendar_kinds: Mapping[str, KindCache] = {
            kind: cache for kind, cache in kinds if cache is not None
        }
        self._fleet = fleet

    async def read(
        self,
        key: str,
        *,
        instant: int,
        memory: Memory,
        attempts: Attempts,
        fetched: wire.HorizontalPodAutoscaler | None,
    ) -> Snapshot:
        """The snapshot of `key` at `instant`; `fetched`: the HPA read from the API server
        when its name is taken by one the cache does not hold."""
        namespace, name = split_key(key)
        assert namespace is not None
        autoscaler = wire.typed_optional(wire.ScheduledPodAutoscaler, self._autoscalers.get(key))
        schedules = wire.typed_list(wire.Schedule, self._schedules.by_index(TARGET_INDEX, key))
        hpa = fetched or wire.typed_optional(wire.HorizontalPodAutoscaler, self._hpas.get(key))
        if hpa is None and memory.foreign_hpa and autoscaler is not None and not dying(autoscaler):
            # Somebody else's HPA has the name; our label-filtered cache cannot see it go.
            try:
                hpa = await self._act.get_hpa(namespace, name)
            except NotFound:
                memory = absorb(memory, ForeignHpaGone())
        calendars = self._gather_calendars(schedules)
        unserved = {
            kind: cache.missing
            for kind, cache in self._calendar_kinds.items()
            if cache.store is None
        }
        return Snapshot(
            key=key,
            instant=instant,
            autoscaler=autoscaler,
            schedules=schedules,
            hpa=hpa,
            live_owners=frozenset() if autoscaler is not None else self._live_owners(schedules),
            hpa_api_version=self._act.hpa_resource.api_version,
            derived=self._derived.derive(autoscaler, schedules, calendars, unserved=unserved),
            memory=memory,
            attempts=attempts,
            max_schedules=self._max_schedules,
            calendars=calendars,
            capacity=None if autoscaler is None else self._act.capacity_view(autoscaler),
            orphaned_capacity=autoscaler is None and self._act.orphaned_capacity(namespace, name),
            fleet=None if self._fleet is None else self._fleet.raise_for(key),
            fleet_horizon=0 if self._fleet is None else self._fleet.horizon,
            statuses_at_boundary=self._fleet is not None and self._fleet.statuses_at_boundary,
        )

    def _live_owners(self, schedules: list[wire.Schedule]) -> frozenset[str]:
        """The uids, among the controllers of `schedules`, of SPAs that exist and are not being
        deleted (asked only when the key's own SPA does not exist)."""
        owners = {controller_owner_uid(schedule) for schedule in schedules}
        return frozenset(
            uid
            for uid in owners
            if uid is not None
            and (found := self._autoscalers.by_index(UID_INDEX, uid))
            and not any(
                dying(owner) for owner in wire.typed_list(wire.ScheduledPodAutoscaler, found)
            )
        )

    def _gather_calendars(
        self, schedules: list[wire.Schedule]
    ) -> dict[CalendarKey, dict[str, Any]]:
        """The cached calendars the Schedules refer to. A missing one is left out, and the
        calendars of its name are gathered instead, of either kind and in any namespace: the
        "not found" then says where one is, as `spa plan` says it (docs/schedules.md, "Shared
        calendars")."""
        found: dict[CalendarKey, dict[str, Any]] = {}
        for schedule in schedules:
            for key in referenced_calendars(schedule):
                document = self._cached_calendar(key)
                if document is not None:
                    found[key] = document
                    continue
                for namesake in self._namesakes(key.name):
                    if (elsewhere := self._cached_calendar(namesake)) is not None:
                        found[namesake] = elsewhere
        return found

    def _cached_calendar(self, key: CalendarKey) -> dict[str, Any] | None:
        cache = self._calendar_kinds.get(key.kind)
        store = None if cache is None else cache.store
        cluster = key.kind == CLUSTER_CALENDAR_KIND
        name = key.name if cluster else f"{key.namespace}/{key.name}"
        return None if store is None else store.get(name)

    def _namesakes(self, name: str) -> list[CalendarKey]:
        """The keys of the cached calendars named `name`: the ClusterCalendar, and the Calendars
        of every namespace (found by the stores' keys; asked only for a reference that is not
        found)."""
        keys = []
        for kind, cache in self._calendar_kinds.items():
            store = cache.store
            if store is None:
                continue
            if kind == CLUSTER_CALENDAR_KIND:
                if name in store:
                    keys.append(CalendarKey(kind, "", name))
                continue
            keys += [
                CalendarKey(kind, namespace, name)
                for namespace, _, stored in (key.partition("/") for key in store)
                if stored == name
            ]
        return keys
