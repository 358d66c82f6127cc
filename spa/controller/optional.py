"""The kinds the controller uses only where the API server serves them, under one rule.

Only the ScheduledPodAutoscaler and Schedule CRDs are required at start. The Calendar and
ClusterCalendar CRDs (config/crd) and the CapacityBuffer CRD (a node autoscaler's) are optional
kinds, each an :class:`OptionalKind` with its discovery and the start of its informer, and all
three are handled by the same code (docs/runtime.md, "Optional kinds"):

- each is asked of discovery at the start; then, while it is not served, every `interval`
  (60 s) while a cached object refers to it (`polled`: a Schedule to a calendar kind), and by
  its users when they need it (:meth:`OptionalKind.served`, never more often than that
  interval): a controller whose objects need no missing kind asks nothing between two
  boundaries (docs/runtime.md);
- once served, its informer starts, with no restart; once that cache is complete, every SPA is
  reconciled once (`on_complete`), so those that need the kind take it up;
- until then, what needs the kind says which CRD is missing and how to install it
  (:attr:`OptionalKind.missing`), and nothing else is affected; the readiness of the
  controller does not wait for it.

Why discovery and not a watch on CustomResourceDefinitions: discovery is open to every
authenticated identity, so no install grows a cluster-wide grant (the namespaced install has
one only for ClusterCalendars), and an answer is a few hundred bytes where a CRD carries its
whole schema; a CRD is installed rarely, and a minute is a short wait for it (docs/runtime.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from spa.kube import ApiError, ApiUnavailable, Discovery, Namespace, Resource
from spa.runtime import Clock, Store

__all__ = [
    "CRD_INSTALL",
    "DISCOVERY_INTERVAL",
    "Cache",
    "Complete",
    "KindCache",
    "OptionalKind",
    "OptionalKinds",
    "discover_served",
]

log = logging.getLogger(__name__)

DISCOVERY_INTERVAL = 60.0
"""Seconds between two discoveries of a kind that is not served (docs/runtime.md)."""

CRD_INSTALL = "apply config/crd, or helm upgrade the chart (docs/install.md)"
"""How to install this project's own CRDs, said where one is missing."""


async def discover_served(
    client: Discovery, resource: Resource[Namespace]
) -> Resource[Namespace] | None:
    """`resource` where the server serves it in its group and version; None where not."""
    served = await client.api_resources(resource.group_version)
    if any(item.get("name") == resource.plural for item in served):
        return resource
    return None


class Cache(Protocol):
    """An informer's cache (:class:`spa.runtime.Informer` is one): its store is complete once
    it has listed."""

    @property
    def store(self) -> Store: ...

    @property
    def has_synced(self) -> bool: ...

    async def wait_synced(self) -> None: ...


class KindCache(Protocol):
    """What a reader needs of an optional kind: the complete cache, or why there is none."""

    @property
    def store(self) -> Store | None: ...

    @property
    def missing(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Complete:
    """A cache complete from the start, of a kind known to be served: for a caller that fills
    its own store (a test, a tool)."""

    store: Store
    missing: str = ""


class OptionalKind:
    """One optional kind: whether the API server serves it, and its cache once it does.

    :param kind: the kind, as a Schedule's reference or a message names it.
    :param crd: the CRD's name (`calendars.autoscaling.d-kuro.github.io`).
    :param install: how to install it, said after the CRD is named missing.
    :param discover: the resource, in the version to use, where the server serves it; None
        where it does not. Its errors pass through :meth:`served`.
    :param watch: starts the informer of the resource and returns its cache; None: the kind is
        used without a cache.
    :param on_complete: called once the cache of a kind served late is complete.
    :param polled: whether the registry's loop asks about the kind now, while it is not
        served: something cached refers to it. Its users ask through :meth:`served` anyway.
    """

    def __init__(
        self,
        *,
        kind: str,
        crd: str,
        install: str,
        discover: Callable[[], Awaitable[Resource | None]],
        clock: Clock,
        watch: Callable[[Resource], Cache] | None = None,
        interval: float = DISCOVERY_INTERVAL,
        on_complete: Callable[[OptionalKind], None] = lambda kind: None,
        polled: Callable[[], bool] = lambda: True,
    ) -> None:
        self.kind = kind
        self.polled = polled
        self.crd = crd
        self.install = install
        self._discover = discover
        self._clock = clock
        self._watch = watch
        self.interval = interval
        self.on_complete = on_complete
        self._resource: Resource | None = None
        self._cache: Cache | None = None
        self._asked: float | None = None
        self._announcing: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"OptionalKind({self.kind}, served={self._resource is not None})"

    @property
    def resource(self) -> Resource | None:
        """The resource, once discovery found it served; None until then."""
        return self._resource

    @property
    def store(self) -> Store | None:
        """The cache of the kind once complete; None while the kind is not served, or while its
        informer has not listed yet."""
        if self._cache is None or not self._cache.has_synced:
            return None
        return self._cache.store

    @property
    def missing(self) -> str:
        """What a reference to the kind says while it is not served."""
        return f"the {self.kind} CRD ({self.crd}) is not installed: {self.install}"

    def due_in(self) -> float:
        """Seconds until discovery may be asked about the kind again (0: now)."""
        if self._asked is None:
            return 0.0
        return max(0.0, self._asked + self.interval - self._clock.monotonic())

    async def served(self, *, announce: bool = True) -> Resource | None:
        """The resource where the server serves it. A kind not found is asked of discovery
        again only once `interval` has passed since the last question (answered or failed);
        found, its informer starts, once, and it is never asked again. `announce`: call
        `on_complete` once the cache has listed (not for a kind found at the start, whose
        cache the controller waits for before it reconciles anything)."""
        if self._resource is not None:
            return self._resource
        if self.due_in() > 0:
            return None
        self._asked = self._clock.monotonic()
        resource = await self._discover()
        if resource is None or self._resource is not None:
            return self._resource
        self._resource = resource
        log.info("the API server serves %s: watching them from now on", resource)
        if self._watch is not None:
            self._cache = self._watch(resource)
            if announce:
                self._announcing = asyncio.create_task(
                    self._announce(self._cache), name=f"{self.kind} cache complete"
                )
        return resource

    async def _announce(self, cache: Cache) -> None:
        await cache.wait_synced()
        self.on_complete(self)

    async def close(self) -> None:
        """Stop waiting for the cache (the informer is its starter's to stop)."""
        if self._announcing is not None and not self._announcing.done():
            self._announcing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._announcing


class OptionalKinds:
    """The optional kinds of a controller, by kind, asked of discovery together: once at the
    start (:meth:`discover`), then as each one's `interval` comes round while it is not served
    (:meth:`run`). `clock` is the one the kinds measure their intervals with."""

    def __init__(self, kinds: Iterable[OptionalKind], *, clock: Clock) -> None:
        self._kinds = {kind.kind: kind for kind in kinds}
        self._clock = clock

    def __getitem__(self, kind: str) -> OptionalKind:
        return self._kinds[kind]

    def __iter__(self) -> Iterator[OptionalKind]:
        return iter(self._kinds.values())

    @property
    def unserved(self) -> list[str]:
        """The kinds the server does not serve (as far as the last discovery knows)."""
        return [kind.kind for kind in self if kind.resource is None]

    async def discover(self, *, announce: bool = True, polled_only: bool = False) -> None:
        """Ask discovery about each kind not served yet whose time has come (`announce`: as
        :meth:`OptionalKind.served`; False at the start; `polled_only`: only the kinds that
        something cached refers to). An error is logged and the kind asked again after
        `interval`: an optional kind never stops the controller."""
        for kind in self:
            if kind.resource is not None or (polled_only and not kind.polled()):
                continue
            try:
                await kind.served(announce=announce)
            except (ApiUnavailable, ApiError) as error:
                log.warning(
                    "could not ask whether the API server serves %s (asked again in %.0f s): %s",
                    kind.crd,
                    kind.interval,
                    error,
                )

    async def run(self) -> None:
        """:meth:`discover` whenever a kind not served is due, until cancelled. Once every
        kind is served it only sleeps (it runs under the manager's supervisor, for which a
        task that returns has failed)."""
        while True:
            waiting = [kind for kind in self if kind.resource is None]
            due = [kind.due_in() for kind in waiting if kind.polled()]
            # Nothing refers to a missing kind: look again in an interval (a local check).
            idle = min((kind.interval for kind in waiting), default=DISCOVERY_INTERVAL)
            await self._clock.sleep(min(due, default=idle))
            await self.discover(polled_only=True)

    async def close(self) -> None:
        for kind in self:
            await kind.close()
