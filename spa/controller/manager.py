"""Wiring of `spa run`: informers, indexes, the work queue, the reconciler, leader election,
the probe and metrics endpoints, and an orderly shutdown.

Every replica keeps warm caches; only the leader runs the reconcile workers, so a failover
only has to win the Lease, not relist the cluster. Losing the Lease ends the process at once
(non-zero exit): Kubernetes restarts it as a follower, and no write can slip out meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spa.api.resources import CALENDAR_KIND, CLUSTER_CALENDAR_KIND
from spa.controller import watches
from spa.controller.actuator import Actuator
from spa.controller.capacity import (
    CAPACITY_BUFFER_KIND,
    DEPLOYMENTS,
    PLACEHOLDER_NAMESPACE,
    PLACEHOLDER_SELECTOR,
    CapacityActuator,
    capacity_buffer_kind,
    placeholder_keys,
)
from spa.controller.desired import MANAGED_BY_SELECTOR
from spa.controller.fleet import (
    DEFAULT_MAX_ADVANCE,
    FleetIndex,
    WriteTime,
)
from spa.controller.metrics import (
    CACHED_OBJECTS,
    SHARD_INFO,
    SHARD_REFUSED,
    ControllerMetrics,
    add_series_labels,
)
from spa.controller.optional import (
    CRD_INSTALL,
    DISCOVERY_INTERVAL,
    OptionalKind,
    OptionalKinds,
    discover_served,
)
from spa.controller.permissions import PlaceholderAccess, PodAccess, placeholder_access, pod_access
from spa.controller.reconciler import Reconciler
from spa.controller.resources import (
    CALENDARS,
    CLUSTER_CALENDARS,
    SCHEDULED_POD_AUTOSCALERS,
    SCHEDULES,
)
from spa.controller.shards import SHARD_LABEL, Shard, ShardFilter
from spa.kube import ApiError, KubeClient, Resource, discover_hpa
from spa.runtime import (
    AccessReview,
    Clock,
    Controller,
    EventRecorder,
    Informer,
    Keep,
    LeaderElector,
    Response,
    Server,
    SiblingLeases,
    Store,
    Supervisor,
    SystemClock,
    TerminatingNamespaces,
    Transform,
    WorkQueue,
    WriteSummary,
    exposition,
    instrument_client,
    serve,
    server_context,
)

__all__ = ["LeaderElection", "Manager", "parse_address"]

log = logging.getLogger(__name__)

QUEUE_NAME = "scheduledpodautoscaler"
# A reconcile makes a few requests of at most 30 s each (the client's timeout); one that runs
# longer than this is stuck, and is cancelled and retried with backoff (docs/runtime.md).
RECONCILE_TIMEOUT = 120.0
# A shard reads the other shards' Leases this often: what they carry changes once a boundary,
# and a boundary's fleet is placed and planned minutes before it (docs/runtime.md, "Shards").
SIBLINGS_PERIOD = 15.0


@dataclass(frozen=True, slots=True)
class LeaderElection:
    namespace: str
    name: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    # The other shards' Leases are the others whose names start with this (a shard's only;
    # docs/runtime.md, "Shards"): what they measured of the shared API server is read.
    siblings_prefix: str | None = None


def parse_address(address: str) -> tuple[str, int]:
    """`host:port` or `:port` (all interfaces), as in the original controller's flags."""
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"'{address}' is not an address such as :8080 or 127.0.0.1:8080")
    return host.strip("[]") or "0.0.0.0", int(port)


@dataclass(frozen=True, slots=True)
class _Wired:
    """What `Manager._run` starts and, at the end, stops."""

    controller: Controller
    recorder: EventRecorder
    summary: WriteSummary
    optional: OptionalKinds
    autoscalers: Informer
    schedules: Informer
    hpas: Informer
    fleet: FleetIndex


@dataclass
class Manager:
    """Runs the controller until stopped. Build it, then `await manager.run()`."""

    client: KubeClient
    namespaces: Sequence[str] | None = None
    clock: Clock = field(default_factory=SystemClock)
    workers: int = 4
    resync_period: float = 600.0
    leader_election: LeaderElection | None = None
    metrics_address: str | None = ":8080"
    # HTTPS and delegated authentication/authorization for /metrics (docs/operations.md).
    metrics_secure: bool = False
    metrics_cert_dir: Path | None = None
    probe_address: str | None = ":9090"
    hpa_resource: Resource | None = None
    # `gc.freeze()` once the caches are synced (`spa run` sets it; docs/performance.md,
    # "2026-11-26: memory per SPA (issue 24)"): what is alive then (the modules, the caches as
    # listed) is left out of every later collection, so a full collection at a boundary does
    # not walk the whole fleet again. Off by default: it is per process, and tests run several
    # managers in one.
    freeze_after_sync: bool = False
    # How often a kind whose CRD is not served is asked of discovery again (docs/runtime.md,
    # "Optional kinds"); the tests shorten it.
    discovery_interval: float = DISCOVERY_INTERVAL
    # This process is one shard of several (docs/runtime.md, "Shards"): it caches, and so
    # writes for, only the SPAs and Schedules the shard owns. None: the whole fleet.
    shard: Shard | None = None
    # Where the placeholder Deployments of node capacity are (docs/install.md, "Placeholder
    # pods"): the controller's namespace, where its Role lets it write Deployments.
    capacity_namespace: str = PLACEHOLDER_NAMESPACE
    # Raises ahead of a shared boundary (docs/schedules.md): on or off, a fixed write time
    # instead of the measured one, and the most any raise is written early; the client's rate
    # limit, which no write can beat.
    fleet_early: bool = True
    fleet_write_seconds: float | None = None
    fleet_max_advance: int = DEFAULT_MAX_ADVANCE
    kube_api_qps: float | None = None

    def __post_init__(self) -> None:
        self._stopping = asyncio.Event()
        self._elector: LeaderElector | None = None
        self.ready = False
        self.lost_leadership = False
        self.probe_port: int | None = None
        self.metrics_port: int | None = None
        self.informers: list[Informer] = []
        # The informers run under it: one that fails is restarted, and not ready meanwhile.
        self._supervisor = Supervisor(clock=SystemClock())

    def stop(self) -> None:
        """Ask `run` to finish (what SIGTERM does)."""
        self._stopping.set()

    async def run(self) -> int:
        """Run until `stop` or a lost Lease; the exit status for the process."""
        instrument_client(self.client)
        if self.shard is not None:
            SHARD_INFO.labels(self.shard.name, self.shard.mode, self.shard.selector or "").set(1)
        if self.hpa_resource is None:
            self.hpa_resource = await discover_hpa(self.client)
            log.info("managing HorizontalPodAutoscalers as %s", self.hpa_resource.api_version)
        return await self._run(self.hpa_resource)

    async def _run(self, hpa_resource: Resource) -> int:
        # What placeholder pods may do, said once (spa/controller/permissions.py).
        access = await placeholder_access(
            self.client, namespaces=self.namespaces, placeholder_namespace=self.capacity_namespace
        )
        # And whether the pods' wait for nodes is measured (the same option's grant).
        pods = await pod_access(self.client, namespaces=self.namespaces)
        wired = self._wire(hpa_resource, access, pods)
        servers = await self._start_endpoints(self.client)
        for informer in self.informers:
            self._supervisor.start(f"informer {informer.resource}", informer.run)
        # The optional kinds served now start with the others, and the caches waited for
        # include theirs; the others are asked about again while the controller runs.
        await wired.optional.discover(announce=False)
        self._supervisor.start("discovery of optional kinds", wired.optional.run)
        siblings = self._siblings(wired.fleet)
        if siblings is not None:
            self._supervisor.start("the other shards' Leases", siblings.run)
        stopping = asyncio.create_task(self._stopping.wait(), name="stop")
        stop_reporting = CACHED_OBJECTS.add(
            autoscalers=wired.autoscalers.store, schedules=wired.schedules.store
        )
        try:
            return await self._sync_then_lead(wired, stopping)
        finally:
            wired.summary.flush()
            stop_reporting()
            stopping.cancel()
            await self._supervisor.close()
            await wired.optional.close()
            for informer in self.informers:
                informer.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(wired.recorder.close(), timeout=2)
            for server in servers:
                await server.close()

    async def _sync_then_lead(self, wired: _Wired, stopping: asyncio.Task[Any]) -> int:
        """Wait for the caches, then run the workers (as the leader, with an election) until
        `stopping` or a lost Lease; the exit status."""
        synced = asyncio.create_task(self._wait_synced(), name="sync")
        first, _ = await asyncio.wait({stopping, synced}, return_when=asyncio.FIRST_COMPLETED)
        if stopping in first:
            synced.cancel()
            return 0
        self.ready = True
        if self.freeze_after_sync:
            gc.collect()
            gc.freeze()
        log.info(
            "caches synced: %d ScheduledPodAutoscalers, %d Schedules, %d HPAs",
            len(wired.autoscalers.store),
            len(wired.schedules.store),
            len(wired.hpas.store),
        )
        work = asyncio.create_task(
            self._lead(wired.controller, wired.fleet.write_time), name="lead"
        )
        done, _ = await asyncio.wait({stopping, work}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            work.result()
            return 1 if self.lost_leadership else 0
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        return 0

    def _cache(
        self,
        resource: Resource,
        *,
        transform: Transform,
        label_selector: str | None = None,
        keep: Keep | None = None,
        namespaces: Sequence[str] | None = None,
    ) -> Informer:
        """An informer of `resource` in the watched namespaces, keeping only what the
        reconciler reads, compact at rest where a fleet has one object or more per SPA
        (docs/performance.md, memory; watches.compact_codec); of this shard's objects only
        where `keep` says which."""
        return Informer(
            self.client,
            resource,
            namespaces=namespaces or self.namespaces,
            label_selector=label_selector,
            transform=transform,
            codec=watches.compact_codec(),
            keep=keep,
        )

    def _sharded(self, kind: str) -> dict[str, Any]:
        """The informer arguments of a shard's SPAs or Schedules (`kind`): its selector on the
        list and watch in label mode, and its `keep` (docs/runtime.md, "Shards")."""
        if self.shard is None:
            return {}
        keep = ShardFilter(self.shard, kind, refused=lambda k: SHARD_REFUSED.labels(k).inc())
        return {"label_selector": self.shard.selector, "keep": keep}

    def _hpa_selector(self) -> str:
        """The generated HPAs this process caches: ours, and in label mode only those labelled
        for its shard (desired_hpa copies the SPA's shard label), so that a shard is not sent
        the other shards' HPA events (docs/runtime.md, "Shards"). An HPA written before it
        carried the label is found by the create's 409 and labelled then."""
        if self.shard is None or self.shard.mode != "label":
            return MANAGED_BY_SELECTOR
        return f"{MANAGED_BY_SELECTOR},{SHARD_LABEL}={self.shard.name}"

    def _in_shard_namespaces(self) -> Keep | None:
        """The `keep` of the other namespaced caches (HPAs, capacity objects, Calendars): the
        shard's namespaces in namespace-hash mode, everything otherwise (in label mode the HPAs
        are selected by their shard label, :meth:`_hpa_selector`; the others carry none, and
        each is looked up by its SPA's key)."""
        if self.shard is None or self.shard.mode != "namespace-hash":
            return None
        return self.shard.owns

    def _placeholders_in_shard(self) -> Keep | None:
        """The `keep` of the placeholder Deployments, all in the controller's namespace: in
        namespace-hash mode, those of the SPAs in the shard's namespaces (the namespace their
        label names). In label mode every shard sees them all (a placeholder carries no shard
        label); a shard reconciling the key of an SPA it does not own asks the API server
        before it deletes anything (CapacityActuator.release)."""
        if self.shard is None or self.shard.mode != "namespace-hash":
            return None
        shard = self.shard
        return lambda obj: any(
            shard.owns({"metadata": {"namespace": key.partition("/")[0]}})
            for key in placeholder_keys(obj)
        )

    def _wire(
        self,
        hpa_resource: Resource,
        access: PlaceholderAccess | None = None,
        pods: PodAccess | None = None,
    ) -> _Wired:
        """The caches, the writers and the controller of `spa run`, connected; none runs yet."""
        system_clock = SystemClock()
        autoscalers = self._cache(
            SCHEDULED_POD_AUTOSCALERS,
            transform=watches.cached_object,
            **self._sharded(SCHEDULED_POD_AUTOSCALERS.kind),
        )
        schedules = self._cache(
            SCHEDULES, transform=watches.cached_object, **self._sharded(SCHEDULES.kind)
        )
        hpas = self._cache(
            hpa_resource,
            label_selector=self._hpa_selector(),
            transform=watches.cached_hpa,
            keep=self._in_shard_namespaces(),
        )
        # Node capacity (docs/schedules.md, "Node capacity"): the placeholder Deployments the
        # controller made, selected by its labels (a few hundred bytes each, one per SPA at
        # most), so that what each SPA holds is compared with what it wants at every reconcile;
        # the CapacityBuffers likewise, an optional kind (below). The placeholders are in the
        # controller's namespace, whatever namespaces it watches.
        # Not where it may not list them (an install without the Role of
        # config/rbac/capacity_role.yaml): an informer refused would keep the controller from
        # ever being ready; the capacity writer then goes by what it wrote itself.
        placeholders = (
            self._cache(
                DEPLOYMENTS,
                label_selector=PLACEHOLDER_SELECTOR,
                transform=watches.cached_capacity,
                namespaces=[self.capacity_namespace],
                keep=self._placeholders_in_shard(),
            )
            if access is None or access.may_cache
            else None
        )
        # A namespace being deleted is said once, whichever writer the API server refused
        # first (docs/operations.md, "Namespaces being deleted").
        terminating = TerminatingNamespaces(clock=system_clock)
        recorder = EventRecorder(
            self.client, clock=system_clock, fence=self._write_fence, terminating=terminating
        )
        self.informers = [autoscalers, schedules, hpas]
        if placeholders is not None:
            self.informers.append(placeholders)
        queue = WorkQueue(name=QUEUE_NAME, clock=self.clock)
        optional = self._optional_kinds(
            autoscalers=autoscalers.store, schedules=schedules.store, enqueue=queue.add
        )
        watches.add_indexes(autoscalers=autoscalers.store, schedules=schedules.store)
        add_series_labels(autoscalers=autoscalers.store, schedules=schedules.store)
        # One INFO line per burst of writes (a boundary), the per-write lines at DEBUG.
        summary = WriteSummary(
            clock=system_clock, logger=logging.getLogger("spa.controller.writes")
        )
        fleet = FleetIndex(
            write_time=WriteTime(
                workers=self.workers,
                fixed=self.fleet_write_seconds,
                # No write beats the client's rate limit, whatever a burst measured.
                floor=1 / self.kube_api_qps if self.kube_api_qps else 0.0,
            ),
            clock=self.clock,
            wake=queue.add_at,
            max_advance=self.fleet_max_advance,
            enabled=self.fleet_early,
            observed=ControllerMetrics.fleet_raised,
            estimated=ControllerMetrics.fleet_write_time,
            backlog=lambda: len(queue),
            sharded=self.shard is not None,
        )
        reconciler = Reconciler(
            actuator=Actuator(
                kube=self.client,
                autoscalers=autoscalers.store,
                schedules=schedules.store,
                hpas=hpas.store,
                hpa_resource=hpa_resource,
                recorder=recorder,
                fence=self._write_fence,
                summary=summary,
                capacity=CapacityActuator(
                    kube=self.client,
                    recorder=recorder,
                    clock=self.clock,
                    fence=self._write_fence,
                    placeholders=None if placeholders is None else placeholders.store,
                    placeholder_namespace=self.capacity_namespace,
                    placeholders_denied=None if access is None else access.denied,
                    buffers=optional[CAPACITY_BUFFER_KIND],
                ),
                access=access,
                pod_access=pods,
            ),
            autoscalers=autoscalers.store,
            schedules=schedules.store,
            hpas=hpas.store,
            clock=self.clock,
            metrics=ControllerMetrics(),
            calendars=optional[CALENDAR_KIND],
            cluster_calendars=optional[CLUSTER_CALENDAR_KIND],
            terminating=terminating,
            fleet=fleet,
        )
        watches.watch(
            autoscalers=autoscalers,
            schedules=schedules,
            hpas=hpas,
            enqueue=queue.add,
            schedule_deleted=lambda obj: reconciler.forget_schedule(
                str((obj.get("metadata") or {}).get("uid"))
            ),
            owned=[] if placeholders is None else [placeholders],
        )
        return _Wired(
            fleet=fleet,
            controller=self._controller(queue, reconciler, autoscalers.store, schedules.store),
            recorder=recorder,
            summary=summary,
            optional=optional,
            autoscalers=autoscalers,
            schedules=schedules,
            hpas=hpas,
        )

    def _controller(
        self, queue: WorkQueue, reconciler: Reconciler, autoscalers: Store, schedules: Store
    ) -> Controller:
        """The workers: each key of `queue` reconciled, every key again each resync period."""

        async def api_ready() -> None:
            try:
                await self.client.readyz(request_timeout=5.0)
            except ApiError as error:
                # /readyz is readable by every identity by default; where a cluster forbids it
                # (or lacks it), an answer at all is the best sign of recovery we can get.
                if error.status not in (401, 403, 404):
                    raise

        return Controller(
            name=QUEUE_NAME,
            queue=queue,
            reconcile=reconciler.reconcile,
            workers=self.workers,
            list_keys=lambda: watches.all_keys(autoscalers=autoscalers, schedules=schedules),
            resync_period=self.resync_period,
            clock=self.clock,
            # After an outage, failed keys are retried as soon as the API answers again.
            probe=api_ready,
            reconcile_timeout=RECONCILE_TIMEOUT,
        )

    def _optional_kinds(
        self, *, autoscalers: Store, schedules: Store, enqueue: Callable[[str], None]
    ) -> OptionalKinds:
        """The Calendar, ClusterCalendar and CapacityBuffer kinds, each watched from the
        moment the API server serves it (docs/runtime.md, "Optional kinds")."""
        clock = SystemClock()

        def start(informer: Informer) -> Informer:
            self.informers.append(informer)
            self._supervisor.start(f"informer {informer.resource}", informer.run)
            return informer

        def watch_calendars(resource: Resource) -> Informer:
            # Calendars where the Schedules are, ClusterCalendars cluster-wide (also for a
            # controller that watches some namespaces: docs/install.md).
            informer = Informer(
                self.client,
                resource,
                namespaces=self.namespaces if resource.namespaced else None,
                transform=watches.cached_object,
                keep=self._in_shard_namespaces() if resource.namespaced else None,
            )
            watches.watch_calendars(
                informer, autoscalers=autoscalers, schedules=schedules, enqueue=enqueue
            )
            return start(informer)

        def watch_buffers(resource: Resource) -> Informer:
            informer = self._cache(
                resource,
                label_selector=MANAGED_BY_SELECTOR,
                transform=watches.cached_capacity,
                keep=self._in_shard_namespaces(),
            )
            watches.watch_owned(informer, enqueue=enqueue)
            return start(informer)

        def complete(kind: OptionalKind) -> None:
            # Every SPA once, as a resync would: those that need the kind take it up now.
            keys = watches.all_keys(autoscalers=autoscalers, schedules=schedules)
            log.info("the cache of %s is complete: reconciling %d SPAs", kind.crd, len(keys))
            for key in keys:
                enqueue(key)

        def calendar_kind(resource: Resource) -> OptionalKind:
            return OptionalKind(
                kind=resource.kind,
                crd=f"{resource.plural}.{resource.group}",
                install=CRD_INSTALL,
                discover=lambda: discover_served(self.client, resource),
                clock=clock,
                watch=watch_calendars,
                interval=self.discovery_interval,
                on_complete=complete,
                polled=lambda: referred_to(resource.kind),
            )

        def referred_to(kind: str) -> bool:
            # A Schedule refers to a calendar of that kind (CALENDAR_INDEX: `Kind/ns/name`).
            prefix = f"{kind}/"
            return any(v.startswith(prefix) for v in schedules.index_values(watches.CALENDAR_INDEX))

        # The capacity writer asks for CapacityBuffers when it reconciles an SPA that could use
        # them (at its boundaries): never between them, where `Auto` holds placeholders.
        buffers = capacity_buffer_kind(
            self.client,
            clock=clock,
            watch=watch_buffers,
            interval=self.discovery_interval,
            on_complete=complete,
            polled=lambda: False,
        )
        return OptionalKinds(
            [calendar_kind(CALENDARS), calendar_kind(CLUSTER_CALENDARS), buffers], clock=clock
        )

    async def _wait_synced(self) -> None:
        await asyncio.gather(*(informer.wait_synced() for informer in self.informers))

    async def _lead(self, controller: Controller, write_time: WriteTime) -> None:
        """Run the workers: at once, or only while holding the Lease."""
        if self.leader_election is None:
            await controller.run()
            return
        election = self.leader_election
        lost = asyncio.Event()

        def stopped_leading() -> None:
            # Runs as soon as the Lease is lost: writes stop here, before anything else.
            self.lost_leadership = True
            lost.set()

        def started_leading() -> Awaitable[None]:
            # The Lease as acquired carries what the last leader measured.
            assert self._elector is not None
            write_time.inherit_from(self._elector.annotations)
            return controller.run()

        self._elector = LeaderElector(
            self.client,
            namespace=election.namespace,
            name=election.name,
            lease_duration=election.lease_duration,
            renew_deadline=election.renew_deadline,
            retry_period=election.retry_period,
            on_started_leading=started_leading,
            on_stopped_leading=stopped_leading,
            # What the fleets' write time measured outlives this process on the Lease.
            memo=write_time.memo,
        )

        await self._elector.run()

    def _siblings(self, fleet: FleetIndex) -> SiblingLeases | None:
        """The reader of the other shards' Leases, whose paces this shard's fleets plan by
        (:meth:`FleetIndex.hold_siblings`); None outside a shard with leader election."""
        election = self.leader_election
        if election is None or election.siblings_prefix is None:
            return None
        return SiblingLeases(
            self.client,
            namespace=election.namespace,
            prefix=election.siblings_prefix,
            own=election.name,
            period=SIBLINGS_PERIOD,
            clock=self.clock,
            on_read=fleet.hold_siblings,
            grant="the Role scheduled-pod-autoscaler-shards grants it: the chart's with shards "
            'or shardCount, config/components/shards (docs/install.md, "Shards")',
        )

    def _write_fence(self) -> float | None:
        return None if self._elector is None else self._elector.write_time_left()

    async def _start_endpoints(self, kube: KubeClient) -> list[Server]:
        servers: list[Server] = []
        if self.metrics_address is not None:
            host, port = parse_address(self.metrics_address)
            tls, authorize = None, None
            if self.metrics_secure:
                tls = server_context(self.metrics_cert_dir)

                async def create(resource: Resource, body: Mapping[str, Any]) -> dict[str, Any]:
                    return await kube.create(resource, None, body)

                authorize = AccessReview(create, path="/metrics")
            routes = {"/metrics": exposition}
            servers.append(await serve(host, port, routes, tls=tls, authorize=authorize))
            self.metrics_port = servers[-1].port
        if self.probe_address is not None:
            host, port = parse_address(self.probe_address)
            probes = {"/healthz": self._healthz, "/readyz": self._readyz}
            servers.append(await serve(host, port, probes))
            self.probe_port = servers[-1].port
        return servers

    def _healthz(self) -> Response:
        # Answered on the event loop: a wedged loop does not answer, and the probe fails.
        return Response(200, b"ok")

    def _readyz(self) -> Response:
        if not self.ready:
            return Response(503, b"caches not synced")
        if not self._supervisor.healthy:
            down = ", ".join(sorted(self._supervisor.down))
            return Response(503, f"restarting after a failure: {down}".encode())
        return Response(200, b"ok")


def install_signal_handlers(manager: Manager) -> None:
    """SIGTERM and SIGINT stop the manager gracefully (the Lease is handed back)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, manager.stop)


def pod_namespace(default: str = "default") -> str:
    """The namespace this pod runs in, from the service account mount or $POD_NAMESPACE;
    `default` outside a pod."""
    path = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as mounted:
        return mounted.read().strip()
    return os.environ.get("POD_NAMESPACE", default)
