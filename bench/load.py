"""Load benchmark: `spa run` against a real control plane, with a real wall-clock boundary.

For each size N it starts a fresh control plane (tests/testenv: etcd and kube-apiserver, with
an audit log of the controller's ServiceAccount; no kube-controller-manager, see
Scenario.run), creates N ScheduledPodAutoscalers with 4 Schedules each (Weekly, Daily and
OneShot in six time zones), and runs `spa run` as a subprocess with its own ServiceAccount:

1. cold start (nothing reconciled yet: every Schedule needs its ownerReference and a status):
   process start -> caches synced (its log) -> every object reconciled (every SPA has
   status.observedGeneration and an HPA, every Schedule has status.observedGeneration);
2. restart (everything in sync: the usual start): synced and all reconciled (its metrics);
3. one Schedule of every SPA is moved to start at the same wall-clock minute B, chosen so that
   the controller takes the edit in and then idles for 20 s or more; the audit log shows the
   idle period's requests;
4. at B, an independent watch on the HPAs in this process records when each HPA's minReplicas
   changed (lag p50/p99/max); the audit log gives the time the API server completed each patch,
   the requests by verb and resource, the writes per object, and the order of the writes
   (issue 24's "capacity first": the last capacity write, HPA or /scale, done before the first
   status patch or Event of the fleet is sent; `capacity_order`);
5. steps 3 and 4 are repeated for `--transitions` (3) whole-fleet transitions: the windows
   start at B1, their end is moved to the next usable minute B2, then they are moved to start
   again at B3. Moving the windows rather than waiting for them makes three real boundaries of
   the whole fleet cost three or four minutes, not three windows' length (and the smoke
   stays within its few minutes);
6. A/B/A: the API server's capacity for those HPA writes is measured before the first
   transition and after each one (`CapacityProbe`: N HPAs of its own in a namespace the
   controller does not watch, patched in one burst through the controller's own request path,
   body, field manager, identity and concurrency, while the controller runs and sends nothing,
   which the audit log checks); each transition's last HPA is put against the mean of the
   two probes around it;
7. peak RSS (VmHWM) and CPU seconds (utime+stime) of the controller process, sampled every
   0.2 s; each transition's own CPU is read from the last sample before B to the first sample
   after the last write the audit log shows, and divided by those writes.

With `--throttled N` the N-SPA scenario continues: the controller is restarted with
`--kube-api-qps/--kube-api-burst` and the windows opened at the last transition end (5 min
after it, more for fleets above 2,000: `window_minutes`), so the throttled controller handles
a whole-fleet transition. `--spa-src DIR` runs the controller
from another source tree (a worktree of an older commit) for before/after comparisons, with
`--spa-python` that tree's own interpreter (its venv). `--pin` puts the control plane and
this benchmark's watches on CPU 0 and the controller and the capacity probe on CPU 1: the API
server with a core of its own, as on a cluster, instead of all of them sharing both.

    python bench/load.py --sizes 1,100          # make bench
    python bench/load.py --sizes 1,100,1000,5000 --throttled 1000   # make bench FULL=1

A Markdown summary goes to stdout, progress to stderr; `--out` writes the raw results (JSON),
`--plot` an SVG of lag and memory against N.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fleet import (  # noqa: E402
    ACTIVE_MIN,
    BASE_MAX,
    FLIP_MAX,
    FLIP_MIN,
    WINDOW_MINUTES,
    flip_spec,
    load_fleet,
    patch_all,
)
from bench.fleet import create_all as create_fleet  # noqa: E402
from bench.measured import NOTHING_MEASURED, positive_int, positive_ints  # noqa: E402
from bench.plane import (  # noqa: E402
    SA_NAME,
    SA_NAMESPACE,
    ProcessSampler,
    controller_plane,
    reconciled_count,
    start_spa_run,
    synced_at,
)
from bench.report import loadavg, log, machine, smoke_verdict, summary, write_json  # noqa: E402
from spa.api import wire  # noqa: E402
from spa.controller.decide import ParsedAutoscaler  # noqa: E402
from spa.controller.decide.fleet import fleet_advance  # noqa: E402
from spa.controller.desired import FIELD_MANAGER, hpa_patch  # noqa: E402
from spa.controller.fleet import (  # noqa: E402
    DEFAULT_MARGIN,
    DEFAULT_MAX_ADVANCE,
    DEFAULT_WRITE_SECONDS,
    WRITE_SECONDS_ANNOTATION,
)
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.kube import (  # noqa: E402
    HPA_V2,
    LEASE,
    ApiError,
    BlockingKubeClient,
    KubeClient,
    Resource,
    connect,
    connect_blocking,
)
from spa.schedule import State  # noqa: E402
from tests.testenv.audit import (  # noqa: E402
    AuditEvent,
    AuditLog,
    audit_policy,
    count_by_verb_and_resource,
    service_account_user,
)
from tests.testenv.controlplane import ControlPlane, free_port  # noqa: E402

NAMESPACE = "bench"
# The capacity probe's HPAs (CapacityProbe): a namespace `spa run --namespace bench` does not
# watch, so that none of their writes reaches its caches or wakes a reconcile.
PROBE_NAMESPACE = "bench-probe"
CONTROLLER_USER = service_account_user(SA_NAMESPACE, SA_NAME)
# The controller's Lease under `--early` (leader election on, as installed).
LEASE_NAME = "scheduled-pod-autoscaler-leader"
# Issue 24's "capacity first": at a boundary every capacity write (the HPA, a scale target's
# /scale) goes out before any of these writes of the fleet (and any Event).
STATUS_RESOURCES = frozenset({"scheduledpodautoscalers/status", "schedules/status"})

_T = TypeVar("_T")

# `--pin`: the CPU of the control plane (etcd, kube-apiserver) and of this benchmark's watches,
# and the CPU of the controller and the capacity probe (its stand-in for the API server's
# capacity), as on a cluster whose API server has cores of its own (issue 24).
SERVER_CPUS = frozenset({0})
CONTROLLER_CPUS = frozenset({1})


def pin(pid: int, cpus: frozenset[int]) -> None:
    """Every thread of process `pid` onto `cpus` (the threads it starts later inherit it)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(task.name), cpus)


def window_minutes(n: int) -> int:
    """How long the flipping window of an N-SPA fleet lasts: 5 min, and 1 min more per 400
    SPAs above 2,000 (at load 10 on this machine the controller writes about 65 times per
    second, so 5,000 SPAs' 20,000 transition writes take about 5 min)."""
    return max(WINDOW_MINUTES, math.ceil(n / 400))


# -- observing ----------------------------------------------------------------------------------


class Watcher:
    """List+watch one resource in `namespace` (the bench namespace by default); keeps the
    latest objects and calls `on_event(name, obj, received_at)` for each (from the watch
    thread)."""

    def __init__(
        self,
        client: BlockingKubeClient,
        resource: Resource,
        on_event: Callable[[str, dict[str, Any], float], None] | None = None,
        *,
        namespace: str = NAMESPACE,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.objects: dict[str, dict[str, Any]] = {}
        self.on_event = on_event
        self._stop = threading.Event()
        self._stream: Any = None
        self._thread = threading.Thread(target=self._run, daemon=True, name=str(resource))

    def start(self) -> Watcher:
        listed = self.client.list(self.resource, namespace=self.namespace)
        for item in listed.items:
            self.objects[item["metadata"]["name"]] = item
        self._version = listed.resource_version
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with self.client.watch(
                    self.resource,
                    namespace=self.namespace,
                    resource_version=self._version,
                    timeout_seconds=3600,
                ) as stream:
                    self._stream = stream
                    for event in stream:
                        received = time.time()
                        version = event.resource_version
                        if version:
                            self._version = version
                        if event.type == "BOOKMARK":
                            continue
                        name = event.object["metadata"]["name"]
                        if event.type == "DELETED":
                            self.objects.pop(name, None)
                        else:
                            self.objects[name] = event.object
                        if self.on_event is not None:
                            self.on_event(name, event.object, received)
            except Exception as error:
                if not self._stop.is_set():
                    log(f"watch {self.resource}: {error!r}; again")
                    time.sleep(0.5)

    def stop(self) -> None:
        self._stop.set()
        if self._stream is not None:
            self._stream.close()


class CapacityProbe:
    """The API server's capacity for the fleet's HPA patches, measured as the controller sends
    them (issue 24): N probe HPAs (one per SPA, every size) in PROBE_NAMESPACE, which `spa run
    --namespace bench` neither watches nor writes, patched in one burst through the
    controller's own request path: spa.kube's async KubeClient from `spa.kube.connect` with the
    controller's ServiceAccount (its authentication, RBAC and audit cost), on one event loop of
    its own, `workers` requests at a time as `spa run --workers` reconciles, each the JSON merge
    patch the controller sends at a boundary (spa.controller.desired.hpa_patch of the HPA as
    last stored and the desired HPA of the SPA's new bounds: metadata, spec hash and whole
    spec) with its field manager. Each burst flips every probe HPA between the window's bounds
    and the base's, as a fleet transition does, so that every patch is a real write.

    The bodies are built before the burst is timed: its seconds are the server's (and the
    client's request path), not the decision's."""

    def __init__(
        self,
        kubeconfig: Path,
        autoscalers: list[dict[str, Any]],
        workers: int,
        *,
        cpus: frozenset[int] | None = None,
    ) -> None:
        self.workers = workers
        self._cpus = cpus
        self._parsed = [
            ParsedAutoscaler(wire.typed(wire.ScheduledPodAutoscaler, spa)) for spa in autoscalers
        ]
        self._current: list[dict[str, Any]] = []
        self._raised = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="probe")
        self._thread.start()
        self._client: KubeClient = self._call(connect(kubeconfig=str(kubeconfig)))

    def _serve(self) -> None:
        if self._cpus is not None:
            os.sched_setaffinity(0, self._cpus)  # this thread only, on Linux
        self._loop.run_forever()

    def _call(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _desired(self, index: int, raised: bool) -> wire.NewHorizontalPodAutoscaler:
        bounds = (FLIP_MIN, FLIP_MAX) if raised else (ACTIVE_MIN, BASE_MAX)
        return self._parsed[index].desired_hpa(
            State(*bounds, active=()), api_version=HPA_V2.api_version
        )

    def create(self, admin: BlockingKubeClient) -> None:
        """Create the probe HPAs in PROBE_NAMESPACE (which must exist) as the controller would,
        at the base's bounds, 16 at a time."""

        def create(index: int) -> dict[str, Any]:
            desired = copy.deepcopy(self._desired(index, raised=False))
            desired["metadata"]["namespace"] = PROBE_NAMESPACE
            return admin.create(HPA_V2, PROBE_NAMESPACE, desired, field_manager=FIELD_MANAGER)

        with ThreadPoolExecutor(16) as pool:
            self._current = list(pool.map(create, range(len(self._parsed))))
        # Warm connections, as the controller's are at a boundary (its watches and earlier
        # writes): one read from each concurrent request.
        first = self._current[0]["metadata"]["name"]

        async def warm() -> None:
            await asyncio.gather(
                *(self._client.get(HPA_V2, PROBE_NAMESPACE, first) for _ in range(self.workers))
            )

        self._call(warm())

    def burst(self) -> dict[str, Any]:
        """Patch every probe HPA once (to the other bounds); wall times of the burst."""
        self._raised = not self._raised
        bodies = [
            hpa_patch(
                wire.typed(wire.HorizontalPodAutoscaler, current),
                self._desired(index, self._raised),
            )
            for index, current in enumerate(self._current)
        ]
        return self._call(self._burst(bodies))

    async def _burst(self, bodies: list[dict[str, Any]]) -> dict[str, Any]:
        pending = iter(range(len(bodies)))
        failures: Counter[str] = Counter()

        async def worker() -> None:
            for index in pending:  # shared: each index taken once, as a work queue's key
                name = self._current[index]["metadata"]["name"]
                try:
                    self._current[index] = await self._client.patch(
                        HPA_V2,
                        PROBE_NAMESPACE,
                        name,
                        bodies[index],
                        patch_type="merge",
                        field_manager=FIELD_MANAGER,
                    )
                except ApiError as error:
                    failures[str(error.status)] += 1

        began, wall = time.perf_counter(), time.time()
        await asyncio.gather(*(worker() for _ in range(self.workers)))
        seconds = time.perf_counter() - began
        return {
            "began": wall,
            "ended": wall + seconds,
            "seconds": seconds,
            "patches": len(bodies),
            "raised": self._raised,
            "failures": dict(failures),
        }

    def close(self) -> None:
        self._call(self._client.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)


def requests(events: list[AuditEvent]) -> dict[str, int]:
    return {
        f"{verb} {resource}": count
        for (verb, resource), count in sorted(count_by_verb_and_resource(events).items())
    }


def writes_per_object(events: list[AuditEvent]) -> dict[str, dict[int, int]]:
    """For each written resource: how many objects got 1, 2, ... writes."""
    per: dict[str, Counter[str]] = {}
    for event in events:
        if event.is_write and event.name:
            per.setdefault(f"{event.verb} {event.resource}", Counter())[event.name] += 1
    return {kind: dict(Counter(counter.values())) for kind, counter in per.items()}


def controller_events(audit: AuditLog, **filters: Any) -> list[AuditEvent]:
    """The controller's requests: its ServiceAccount's, less the capacity probe's (which runs
    as that ServiceAccount, for the same authentication and authorization, in
    PROBE_NAMESPACE), and less the leader election's Lease renewals under `--early` (its
    heartbeat, every 2 s whatever the fleet does: docs/runtime.md, "LeaderElector")."""
    return [
        event
        for event in audit.select(user=CONTROLLER_USER, **filters)
        if event.namespace != PROBE_NAMESPACE and event.resource != "leases"
    ]


def wait_quiet(audit: AuditLog, *, seconds: float, timeout: float) -> bool:
    """Wait until the controller has sent nothing for `seconds` (by the audit log), at most
    `timeout`; whether it is quiet."""
    deadline = time.time() + timeout
    while True:
        now = time.time()
        if not controller_events(audit, since=now - seconds):
            return True
        if now > deadline:
            return False
        time.sleep(0.5)


def capacity_order(events: list[AuditEvent], boundary: float) -> dict[str, Any]:
    """Issue 24's "capacity first" at one boundary, from the controller's requests: when the
    last capacity write (HPA, a scale target's /scale) completed, when the first status patch
    (scheduledpodautoscalers/status, schedules/status) and the first Event write were
    received (seconds from the boundary), and how many of those went out before the last
    capacity write was done. `capacity_first` when none did (issue 24: every capacity write
    of the fleet before any status or Event, so not while the last one is still in flight)."""
    writes = [event for event in events if event.is_write]
    capacity = [
        event
        for event in writes
        if event.resource == "horizontalpodautoscalers" or event.resource.endswith("/scale")
    ]
    statuses = [event for event in writes if event.resource in STATUS_RESOURCES]
    records = [event for event in writes if event.resource == "events"]
    last = max((event.completed for event in capacity), default=math.nan)
    early = [event for event in statuses + records if event.received < last]
    # The weaker order, for comparison: sent (received by the server) before the last
    # capacity write was sent, while it may still be in flight.
    last_sent = max((event.received for event in capacity), default=math.nan)
    return {
        "capacity_writes": len(capacity),
        "status_writes": len(statuses),
        "event_writes": len(records),
        "last_capacity_write": last - boundary,
        "first_status_write": min((e.received for e in statuses), default=math.nan) - boundary,
        "first_event": min((e.received for e in records), default=math.nan) - boundary,
        "writes_before_last_capacity": len(early),
        "early": requests(early),
        "writes_before_last_capacity_sent": sum(
            1 for event in statuses + records if event.received < last_sent
        ),
        "capacity_first": bool(capacity) and not early,
    }


# -- one scenario -------------------------------------------------------------------------------


class Scenario:
    def __init__(
        self,
        n: int,
        workdir: Path,
        *,
        throttle: tuple[float, int] | None,
        spa_src: Path | None = None,
        spa_python: Path | None = None,
        workers: int | None = None,
        margin: float = 30.0,
        transitions: int = 3,
        pinned: bool = False,
        early: bool = False,
    ) -> None:
        self.n = n
        # `--early`: the first window start with raises written at B (as before issue 38),
        # the last one with them written ahead of B (docs/schedules.md, "Raises ahead of a
        # shared boundary"), side by side on this plane; without it, every run at B.
        self.early = early
        self.controller_early = False
        self.pinned = pinned
        self.margin = margin
        self.transitions = transitions
        self.spa_src = spa_src
        self.spa_python = spa_python
        self.workers = workers
        self.workdir = workdir
        self.throttle = throttle
        self.result: dict[str, Any] = {
            "n": n,
            "schedules": 4 * n,
            "spa_src": str(spa_src or REPO),
            "spa_python": str(spa_python or sys.executable),
            "workers": workers or 4,
            "pinned": (
                {"server_cpus": sorted(SERVER_CPUS), "controller_cpus": sorted(CONTROLLER_CPUS)}
                if pinned
                else None
            ),
            # The probe's HPAs are watched as the fleet's are (see _run).
            "probe_watched": True,
            "loadavg": {"begin": loadavg()},
            "early": early,
        }
        self.hpa_changed: dict[str, float] = {}  # name -> first time minReplicas == wanted
        self.wanted_min = FLIP_MIN
        self._lock = threading.Lock()

    # the watch on HPAs: when did each HPA reach the wanted minReplicas
    def _on_hpa(self, name: str, obj: dict[str, Any], received: float) -> None:
        if (obj.get("spec") or {}).get("minReplicas") == self.wanted_min:
            with self._lock:
                self.hpa_changed.setdefault(name, received)

    def run(self) -> dict[str, Any]:
        with controller_plane(
            self.workdir / "plane",
            namespaces=[NAMESPACE, PROBE_NAMESPACE],
            audit_policy=audit_policy(users=[CONTROLLER_USER]),
            # No kube-controller-manager: the HPAs' Deployments do not exist, so its HPA
            # controller would write a FailedGetScale Event for every HPA at every sync, a load
            # on the shared API server that a real cluster (where the targets exist) lacks.
            # Nothing here needs its garbage collector.
            controller_manager=False,
        ) as plane:
            return self._run(plane)

    def _run(self, plane: ControlPlane) -> dict[str, Any]:
        n = self.n
        kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
        admin = connect_blocking(kubeconfig=str(plane.kubeconfig), pool_size=32)
        audit = AuditLog(plane.audit_log or Path("/nonexistent"))

        # The flipping windows are first created 6 h ahead; the real boundary is chosen once
        # the controller has started (see _measure) and written into them then.
        now = datetime.now(UTC)
        placeholder = (now + timedelta(hours=6)).replace(second=0, microsecond=0)
        log(f"N={n}: creating {5 * n} objects")

        names, objects = load_fleet(n, NAMESPACE, placeholder, now)
        took = create_fleet(admin, NAMESPACE, objects)
        self.result["create_seconds"] = took
        log(f"created {len(objects)} objects in {took:.1f} s ({len(objects) / took:.0f}/s)")

        hpas = Watcher(admin, HPA_V2, self._on_hpa).start()
        spas = Watcher(admin, SCHEDULED_POD_AUTOSCALERS).start()
        scheds = Watcher(admin, SCHEDULES).start()
        try:
            # The capacity probe's HPAs, before the controller starts (it never sees them).
            probe = CapacityProbe(
                kubeconfig,
                [spas.objects[name] for name in names],
                self.result["workers"],
                cpus=CONTROLLER_CPUS if self.pinned else None,
            )
            try:
                probe.create(admin)
                # The benchmark's watch of the fleet's HPAs (the lag) makes the API server send
                # every HPA patch of the controller to one more watcher; one on the probe's
                # HPAs makes it do the same for the probe's patches, so that the capacity is
                # measured with the same fan-out (since 2026-11-26, late evening).
                probe_hpas = Watcher(admin, HPA_V2, namespace=PROBE_NAMESPACE).start()
                try:
                    return self._measure(admin, kubeconfig, audit, names, hpas, spas, scheds, probe)
                finally:
                    probe_hpas.stop()
            finally:
                probe.close()
        finally:
            for watcher in (hpas, spas, scheds):
                watcher.stop()
            admin.close()

    def _move_windows(
        self, admin: BlockingKubeClient, names: list[str], start: datetime, minutes: int
    ) -> None:
        """Every flipping window moved to start at `start` and last `minutes`."""
        patches = {
            f"{name}-prescale": {"spec": flip_spec(index, start, minutes)}
            for index, name in enumerate(names)
        }
        patch_all(admin, SCHEDULES, NAMESPACE, patches)

    def _start_controller(
        self,
        kubeconfig: Path,
        logfile: Path,
        throttle: tuple[float, int] | None,
        metrics_port: int = 0,
    ) -> subprocess.Popen[bytes]:
        extra: list[str] = []
        if throttle is not None:
            extra = ["--kube-api-qps", str(throttle[0]), "--kube-api-burst", str(throttle[1])]
        if self.workers is not None:
            extra += ["--workers", str(self.workers)]
        if self.spa_src is None:
            # This tree's controller: its raises at B unless this run writes them ahead.
            extra += ["--fleet-early" if self.controller_early else "--no-fleet-early"]
        if self.early:
            # As installed: the Lease carries the write time the controller measured to the
            # restarted one (docs/schedules.md, "Raises ahead of a shared boundary").
            extra += [
                "--enable-leader-election",
                f"--leader-election-namespace={SA_NAMESPACE}",
                f"--leader-election-id={LEASE_NAME}",
            ]
        process = start_spa_run(
            kubeconfig,
            NAMESPACE,
            logfile,
            spa_src=self.spa_src,
            python=self.spa_python,
            metrics_port=metrics_port,
            extra=extra,
        )
        if self.pinned:
            pin(process.pid, CONTROLLER_CPUS)
        return process

    def _wait_ready(
        self,
        process: subprocess.Popen[bytes],
        names: list[str],
        hpas: Watcher,
        spas: Watcher,
        scheds: Watcher,
        deadline: float,
    ) -> float | None:
        """Wall time when every object is reconciled; None if not by `deadline`."""
        while time.time() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"spa run exited with {process.returncode}")
            if self._all_reconciled(names, hpas, spas, scheds):
                return time.time()
            time.sleep(0.1)
        return None

    def _all_reconciled(
        self, names: list[str], hpas: Watcher, spas: Watcher, scheds: Watcher
    ) -> bool:
        if len(hpas.objects) < len(names) or len(spas.objects) < len(names):
            return False
        for spa in list(spas.objects.values()):
            status = spa.get("status") or {}
            if status.get("observedGeneration") != spa["metadata"].get("generation"):
                return False
        for sched in list(scheds.objects.values()):
            status = sched.get("status") or {}
            if status.get("observedGeneration") != sched["metadata"].get("generation"):
                return False
        return True

    def _transition_done(
        self, names: list[str], spas: Watcher, scheds: Watcher, active: bool
    ) -> bool:
        with self._lock:
            if len(self.hpa_changed) < len(names):
                return False
        for name in names:
            status = (spas.objects.get(name) or {}).get("status") or {}
            flipped = f"{name}-prescale" in (status.get("activeSchedules") or [])
            if flipped != active:
                return False
            schedule_status = (scheds.objects.get(f"{name}-prescale") or {}).get("status") or {}
            condition = schedule_status.get("condition")
            if (condition == "Progressing") != active:
                return False
        return True

    def _boundary(
        self,
        label: str,
        audit: AuditLog,
        names: list[str],
        boundary: float,
        spas: Watcher,
        scheds: Watcher,
        active: bool,
        timeout: float,
        lookback: float = 1.0,
    ) -> dict[str, Any]:
        """Wait for the whole fleet's transition at `boundary`; lags and requests (from
        `lookback` seconds before it: a fleet's raises written ahead of it)."""
        while time.time() < boundary + timeout:
            if self._transition_done(names, spas, scheds, active):
                break
            time.sleep(0.05)
        done = time.time()
        time.sleep(3)  # let stragglers (events) land in the audit log
        with self._lock:
            changed = dict(self.hpa_changed)
        watched = [changed[name] - boundary for name in names if name in changed]
        events = controller_events(audit, since=boundary - lookback, until=done + 3)
        patches = [
            event
            for event in events
            if event.verb == "patch" and event.resource == "horizontalpodautoscalers"
        ]
        writes = [event for event in events if event.is_write]
        last_patch = max((event.completed for event in patches), default=math.nan)
        first_patch = min((event.received for event in patches), default=math.nan)
        ahead = first_patch < boundary
        result: dict[str, Any] = {
            "label": label,
            "complete": len(watched) == len(names),
            "hpa_lag_watch": summary(watched),
            "hpa_lag_audit": summary([event.completed - boundary for event in patches]),
            # The fleet's HPA write rate: its HPA patches over the time from the boundary to
            # the last one's completion (what the last SPA's lag is made of).
            "hpa_patches_per_second": len(patches)
            / ((last_patch - first_patch) if ahead else (last_patch - boundary)),
            # The first and the last HPA changed, as the watch saw them, against B (negative:
            # before it), and the time the fleet's HPA writes took, first sent to last done.
            "first_hpa_seconds": min(watched, default=math.nan),
            "last_hpa_watch_seconds": max(watched, default=math.nan),
            "first_hpa_sent_seconds": first_patch - boundary,
            "fleet_write_seconds": last_patch - min(first_patch, boundary),
            # The last HPA written, by the API server's clock: what issue 24 holds against the
            # time the server needs for as many patches (the capacity probe).
            "last_hpa_seconds": last_patch - boundary,
            "order": capacity_order(events, boundary),
            "writes": len(writes),
            "last_write_completed": max((event.completed for event in writes), default=math.nan),
            "all_statuses_seconds": done - boundary,
            "requests": requests(events),
            "writes_per_object": writes_per_object(events),
        }
        lag = result["hpa_lag_watch"]
        log(
            f"{label}: {len(watched)}/{len(names)} HPAs changed; lag p50 {lag['p50']:.3f} s, "
            f"p99 {lag['p99']:.3f} s, max {lag['max']:.3f} s; statuses done after "
            f"{done - boundary:.1f} s"
        )
        return result

    def _transition(
        self,
        label: str,
        admin: BlockingKubeClient,
        audit: AuditLog,
        names: list[str],
        spas: Watcher,
        scheds: Watcher,
        sampler: ProcessSampler,
        *,
        opens_at: datetime | None,
        minutes: int,
    ) -> dict[str, Any]:
        """One whole-fleet transition at a real minute boundary B: every flipping window moved
        (an edit of the Schedules, as a Git commit would make) so that it starts at B and lasts
        `minutes` (`opens_at` None) or, having started at `opens_at` for `minutes`, ends at B
        instead; the controller takes that in and idles for 20 s or more; then B. Its figures:
        the move, the idle period, `_boundary`'s, and the controller's CPU per write."""
        n = len(names)
        # B: the next minute far enough ahead to move every window, let the controller take
        # that in (two status writes per SPA) and then watch it idle.
        rate = 5 * n / self.result["create_seconds"]
        # The controller's two status writes per SPA go at its cold start's write rate (100/s on
        # a quiet machine, 65/s or less at load 10), with half as much to spare.
        write_rate = min(100.0, self.result["startup_writes"] / self.result["ready_seconds"])
        ahead = n / rate + 1.5 * 2 * n / write_rate + self.margin
        boundary_time = (datetime.now(UTC) + timedelta(seconds=ahead + 59)).replace(
            second=0, microsecond=0
        )
        boundary = boundary_time.timestamp()
        opens = opens_at is None
        start = boundary_time if opens_at is None else opens_at
        if opens_at is not None:
            if boundary_time >= opens_at + timedelta(minutes=minutes):
                raise RuntimeError(
                    f"{label}: the windows opened at {opens_at:%H:%M} end by themselves before "
                    f"{boundary_time:%H:%M}, the first minute their end can be moved to"
                )
            minutes = round((boundary_time - opens_at).total_seconds() / 60)
        with self._lock:
            self.hpa_changed.clear()
            self.wanted_min = FLIP_MIN if opens else ACTIVE_MIN
        log(f"{label}: boundary {boundary_time:%H:%M:%S}; moving the windows")
        moved = time.time()
        self._move_windows(admin, names, start, minutes)
        expected = boundary_time.strftime("%Y-%m-%dT%H:%M:%SZ")

        def next_transition(watcher: Watcher, name: str) -> object:
            return ((watcher.objects.get(name) or {}).get("status") or {}).get("nextTransitionTime")

        # Taken in: the SPA's status and that of its moved Schedule (written after the SPA's)
        # both show B; otherwise the last Schedule writes land in the idle period.
        while not all(
            next_transition(spas, name) == expected
            and next_transition(scheds, f"{name}-prescale") == expected
            for name in names
        ):
            if time.time() > boundary - 5:
                log("the moved windows were not all taken in before the boundary")
                break
            time.sleep(0.1)
        settled = time.time()
        moving = controller_events(audit, since=moved, until=settled + 1)
        move = {"seconds": settled - moved, "requests": requests(moving)}
        log(f"windows moved and taken in after {settled - moved:.1f} s")

        # Idle: from a little after that to a little before the boundary (before the fleet's
        # start, for a controller that writes its raises ahead of it).
        advance = self._expected_advance(n, admin) if self.controller_early and opens else 0
        idle_from = settled + 3
        idle_to = boundary - 3 - advance
        cpu_before_idle = sampler.cpu
        time.sleep(max(0.0, idle_to - time.time()))
        sampler.sample()
        idle_events = controller_events(audit, since=idle_from, until=idle_to)
        idle = {
            "seconds": idle_to - idle_from,
            "requests": requests(idle_events),
            "writes": sum(1 for event in idle_events if event.is_write),
            "cpu_seconds": sampler.cpu - cpu_before_idle,
        }
        log(f"idle {idle_to - idle_from:.0f} s: {requests(idle_events) or 'no requests'}")

        cpu_before = sampler.cpu
        result = self._boundary(
            label,
            audit,
            names,
            boundary,
            spas,
            scheds,
            opens,
            timeout=window_minutes(n) * 60 - 30,
            lookback=1.0 + 2 * advance,
        )
        result["controller_early"] = self.controller_early
        result["expected_advance_seconds"] = advance
        sampler.sample()
        result |= {
            "boundary": boundary_time.isoformat(),
            "window": {"start": start.isoformat(), "minutes": minutes},
            "move": move,
            "idle": idle,
            "cpu_seconds": sampler.cpu - cpu_before,
        }
        # The transition's own CPU: from the last sample before B to the first sample after
        # the last write the audit log shows (the sampler keeps every sample's time; read back
        # afterwards, since reading the idle period's audit log can outlast B).
        before_b, cpu_before_b = sampler.cpu_before(boundary)
        after_last, cpu_after_last = sampler.cpu_at(result["last_write_completed"])
        result["transition_cpu"] = {
            "from": before_b - boundary,
            "to": after_last - boundary,
            "last_write": result["last_write_completed"] - boundary,
            "cpu_seconds": cpu_after_last - cpu_before_b,
            "writes": result["writes"],
            "ms_per_write": 1000 * (cpu_after_last - cpu_before_b) / max(1, result["writes"]),
        }
        # Of it, the capacity phase: from B to the last capacity write (the HPAs, and /scale
        # where immediate scale-up applies), with the reads that phase makes, per capacity
        # write: what the controller spends while the API server could take the next HPA.
        order = result["order"]
        _, cpu_after_capacity = sampler.cpu_at(boundary + order["last_capacity_write"])
        result["transition_cpu"]["capacity_phase"] = {
            "cpu_seconds": cpu_after_capacity - cpu_before_b,
            "capacity_writes": order["capacity_writes"],
            "ms_per_capacity_write": 1000
            * (cpu_after_capacity - cpu_before_b)
            / max(1, order["capacity_writes"]),
        }
        log(f"{label}: transition CPU {result['transition_cpu']}")
        return result

    def _expected_advance(self, n: int, admin: BlockingKubeClient) -> int:
        """How far ahead of B a restarted controller starts n raises: it has written no HPA
        since its start, so it goes by the write time its Lease carries, else by the default
        (docs/schedules.md, "Raises ahead of a shared boundary")."""
        seconds = DEFAULT_WRITE_SECONDS
        if self.early:
            lease = admin.get(LEASE, SA_NAMESPACE, LEASE_NAME)
            carried = (lease["metadata"].get("annotations") or {}).get(WRITE_SECONDS_ANNOTATION)
            seconds = float(carried) if carried else DEFAULT_WRITE_SECONDS
            log(f"write time on the Lease: {carried or 'none'}")
        return fleet_advance(n, seconds, margin=DEFAULT_MARGIN, max_advance=DEFAULT_MAX_ADVANCE)

    def _restart(
        self, kubeconfig: Path, logfile: Path, names: list[str]
    ) -> tuple[subprocess.Popen[bytes], ProcessSampler]:
        """A controller started anew (everything in sync), once it has reconciled every SPA."""
        port = free_port()
        started = time.time()
        process = self._start_controller(kubeconfig, logfile, None, metrics_port=port)
        sampler = ProcessSampler(process.pid)
        while reconciled_count(port) < len(names):
            if process.poll() is not None:
                raise RuntimeError(f"spa run exited with {process.returncode}")
            if time.time() > started + 1800:
                raise RuntimeError("restarted controller not ready within 30 min")
            time.sleep(0.1)
        log(
            f"controller restarted (fleet early: {self.controller_early}) in "
            f"{time.time() - started:.1f} s"
        )
        return process, sampler

    def _probe(self, probe: CapacityProbe, audit: AuditLog, label: str) -> dict[str, Any]:
        """One burst of the capacity probe once the controller is quiet; with what the audit
        log shows of it: its own patches (all N must have landed) and the controller's
        requests meanwhile (there must be none: the probe measures the API server, not a
        server shared with a transition)."""
        wait_quiet(audit, seconds=2.0, timeout=60.0)
        burst = probe.burst()
        time.sleep(1)  # the audit log's last lines
        during = controller_events(audit, since=burst["began"], until=burst["ended"])
        own = [
            event
            for event in audit.select(
                user=CONTROLLER_USER,
                namespace=PROBE_NAMESPACE,
                since=burst["began"] - 0.5,
                until=burst["ended"] + 0.5,
            )
            if event.verb == "patch"
        ]
        burst |= {
            "label": label,
            "controller_requests": requests(during),
            "audited_patches": len(own),
            # The same burst as the API server saw it: first received to last completed.
            "server_seconds": (
                max(event.completed for event in own) - min(event.received for event in own)
                if own
                else math.nan
            ),
        }
        log(
            f"capacity probe {label}: {burst['patches']} HPA patches, {probe.workers} at a time, "
            f"in {burst['seconds']:.2f} s (server {burst['server_seconds']:.2f} s); controller "
            f"requests meanwhile: {burst['controller_requests'] or 'none'}"
        )
        return burst

    def _measure(
        self,
        admin: BlockingKubeClient,
        kubeconfig: Path,
        audit: AuditLog,
        names: list[str],
        hpas: Watcher,
        spas: Watcher,
        scheds: Watcher,
        probe: CapacityProbe,
    ) -> dict[str, Any]:
        boundary = math.inf  # chosen after the start
        logfile = self.workdir / "spa-run.log"
        started = time.time()
        process = self._start_controller(kubeconfig, logfile, None)
        sampler = ProcessSampler(process.pid)
        try:
            ready = self._wait_ready(process, names, hpas, spas, scheds, time.time() + 3600)
            if ready is None:
                raise RuntimeError("not reconciled within an hour")
            sampler.sample()
            self.result["synced_seconds"] = synced_at(logfile) - started
            self.result["ready_seconds"] = ready - started
            self.result["cpu_ready_seconds"] = sampler.cpu
            startup = controller_events(audit, since=started, until=ready + 1)
            self.result["startup_requests"] = requests(startup)
            self.result["startup_writes"] = sum(1 for event in startup if event.is_write)
            time.sleep(2)
            sampler.stop()
            self.result["cold_peak_rss_mib"] = sampler.hwm_mib
            self.result["loadavg"]["cold_start"] = loadavg()
            log(
                f"cold start: synced {self.result['synced_seconds']:.1f} s, all reconciled "
                f"{self.result['ready_seconds']:.1f} s, {self.result['startup_writes']} writes, "
                f"peak RSS {sampler.hwm_mib:.0f} MiB, CPU {sampler.cpu:.1f} s"
            )

            # A restart finds everything in sync: the usual start (rollout, rescheduled pod).
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            port = free_port()
            logfile = self.workdir / "spa-run-warm.log"
            started = time.time()
            process = self._start_controller(kubeconfig, logfile, None, metrics_port=port)
            sampler = ProcessSampler(process.pid)
            while reconciled_count(port) < len(names):
                if process.poll() is not None:
                    raise RuntimeError(f"spa run exited with {process.returncode}")
                if time.time() > started + 1800:
                    raise RuntimeError("restarted controller not ready within 30 min")
                time.sleep(0.1)
            ready = time.time()
            sampler.sample()
            restart = controller_events(audit, since=started, until=ready + 1)
            self.result["warm"] = {
                "synced_seconds": synced_at(logfile) - started,
                "ready_seconds": ready - started,
                "requests": requests(restart),
                "writes": sum(1 for event in restart if event.is_write),
                "cpu_seconds": sampler.cpu,
                "rss_mib": sampler.rss_mib,
            }
            log(f"warm start: {self.result['warm']}")

            # A/B/A: the capacity probe (A) before the first transition (B) and after each,
            # with the controller running and idle (docs/performance.md, "Method").
            probes = [self._probe(probe, audit, "before the first transition")]
            transitions: list[dict[str, Any]] = []
            opened, length = datetime.now(UTC), window_minutes(len(names))
            for k in range(self.transitions):
                opens = k % 2 == 0
                if self.early and opens and k == self.transitions - 1 and k > 0:
                    # The same plane, the same fleet: the last window start with its raises
                    # written ahead of B, against the first, written at B.
                    process.send_signal(signal.SIGTERM)
                    process.wait(timeout=30)
                    sampler.stop()
                    self.controller_early = True
                    process, sampler = self._restart(
                        kubeconfig, self.workdir / "spa-run-early.log", names
                    )
                if opens:
                    # A window whose end is moved next lasts 3 times as long, so that it cannot
                    # end by itself before its move (a transition, a probe and the move's own
                    # margin: 6 min at 5,000 SPAs under load); the last one lasts
                    # `window_minutes`, which the throttled run waits for.
                    last = k == self.transitions - 1
                    length = window_minutes(len(names)) * (1 if last else 3)
                label = ("window start", "window end")[k % 2]
                label += f" #{k // 2 + 1}" if k > 1 else ""
                transition = self._transition(
                    label,
                    admin,
                    audit,
                    names,
                    spas,
                    scheds,
                    sampler,
                    opens_at=None if opens else opened,
                    minutes=length,
                )
                if opens:
                    opened = datetime.fromisoformat(transition["boundary"])
                probes.append(self._probe(probe, audit, f"after the {label}"))
                around = [probes[k]["seconds"], probes[k + 1]["seconds"]]
                capacity = statistics.fmean(around)
                transition["capacity"] = {
                    "probe_seconds": around,
                    "capacity_seconds": capacity,
                    "last_hpa_seconds": transition["last_hpa_seconds"],
                    "ratio": transition["last_hpa_seconds"] / capacity,
                }
                log(f"{label}: last HPA / capacity {transition['capacity']}")
                transitions.append(transition)
            self.result["transitions"] = transitions
            self.result["probes"] = probes
            if self.early:
                self.result["fleet_early"] = early_comparison(transitions)
            self.result["start"] = transitions[0]
            self.result["move"] = transitions[0]["move"]
            self.result["idle"] = transitions[0]["idle"]
            self.result["loadavg"]["transition"] = loadavg()
            ratios = [t["capacity"]["ratio"] for t in transitions]
            self.result["capacity"] = {
                "workers": probe.workers,
                "probe_seconds": [p["seconds"] for p in probes],
                "ratios": ratios,
                "ratio_max": max(ratios),
                "ratio_mean": statistics.fmean(ratios),
            }
            self.result["boundary"] = transitions[0]["boundary"]
            boundary = opened.timestamp()  # the last window start: the throttled run ends it

            if self.throttle is not None:
                # Same fleet, a steady-state controller with a throttled client: restart it
                # (the new process finds everything in sync: no writes) and let the windows end.
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
                sampler.stop()
                self.result["peak_rss_mib"] = sampler.hwm_mib
                self.result["cpu_total_seconds"] = sampler.cpu
                qps, burst = self.throttle
                end = boundary + window_minutes(len(names)) * 60
                with self._lock:
                    self.hpa_changed.clear()
                    self.wanted_min = ACTIVE_MIN
                started = time.time()
                process = self._start_controller(
                    kubeconfig, self.workdir / "spa-run-throttled.log", self.throttle
                )
                sampler = ProcessSampler(process.pid)
                while synced_at(self.workdir / "spa-run-throttled.log") == 0:
                    time.sleep(0.1)
                    if time.time() > end - 5:
                        raise RuntimeError("throttled controller not synced before the boundary")
                restart = controller_events(audit, since=started, until=end - 2)
                self.result["throttled"] = {
                    "qps": qps,
                    "burst": burst,
                    "restart_requests": requests(restart),
                }
                time.sleep(max(0.0, end - 2 - time.time()))
                result = self._boundary(
                    f"window end, throttled {qps:g}/{burst}",
                    audit,
                    names,
                    end,
                    spas,
                    scheds,
                    False,
                    timeout=900,
                )
                self.result["throttled"].update(result)
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
            sampler.stop()
        if self.throttle is None:
            self.result["peak_rss_mib"] = sampler.hwm_mib
            self.result["cpu_total_seconds"] = sampler.cpu
        log(f"peak RSS {self.result['peak_rss_mib']:.0f} MiB")
        self.result["loadavg"]["end"] = loadavg()
        return self.result


def early_comparison(transitions: list[dict[str, Any]]) -> dict[str, Any]:
    """The first window start (raises at B) beside the last (raises ahead of B): first, p99
    and last HPA changed against B, and how early the fleet began against what it needed
    (the time the raises took when written at B)."""
    at_b, ahead = transitions[0], transitions[-1]

    def figures(transition: dict[str, Any]) -> dict[str, Any]:
        lag = transition["hpa_lag_watch"]
        return {
            "boundary": transition["boundary"],
            "controller_early": transition["controller_early"],
            "first_seconds": transition["first_hpa_seconds"],
            "p50_seconds": lag["p50"],
            "p99_seconds": lag["p99"],
            "last_seconds": lag["max"],
            "last_hpa_audit_seconds": transition["last_hpa_seconds"],
            "first_hpa_sent_seconds": transition["first_hpa_sent_seconds"],
            "fleet_write_seconds": transition["fleet_write_seconds"],
            "hpa_patches_per_second": transition["hpa_patches_per_second"],
            "expected_advance_seconds": transition["expected_advance_seconds"],
            "idle_requests": transition["idle"]["requests"],
        }

    off, on = figures(at_b), figures(ahead)
    # What the fleet needed: its raises' time when written at B (the last against B).
    need = max(off["last_hpa_audit_seconds"], 1e-9)
    on["earliness_over_need"] = -on["first_hpa_sent_seconds"] / need
    on["all_before_b"] = on["last_seconds"] <= 0 and on["last_hpa_audit_seconds"] <= 0
    return {"at_boundary": off, "ahead": on, "need_seconds": need}


def early_markdown(result: dict[str, Any]) -> str:
    """The side-by-side table of `--early`."""
    comparison = result["fleet_early"]
    rows = [
        "| run | first | p50 | p99 | last (watch) | last (audit) | first sent | HPA writes/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, key in (("at B (before)", "at_boundary"), ("ahead of B", "ahead")):
        f = comparison[key]
        rows.append(
            f"| {label} | {f['first_seconds']:+.2f} s | {f['p50_seconds']:+.2f} s | "
            f"{f['p99_seconds']:+.2f} s | {f['last_seconds']:+.2f} s | "
            f"{f['last_hpa_audit_seconds']:+.2f} s | {f['first_hpa_sent_seconds']:+.2f} s | "
            f"{f['hpa_patches_per_second']:.0f} |"
        )
    ahead = comparison["ahead"]
    rows.append("")
    rows.append(
        f"N={result['n']}: the fleet began {-ahead['first_hpa_sent_seconds']:.2f} s before B, "
        f"{ahead['earliness_over_need']:.2f} x what it needed at B "
        f"({comparison['need_seconds']:.2f} s); every HPA before B: {ahead['all_before_b']}"
    )
    return "\n".join(rows)


# -- report -------------------------------------------------------------------------------------


def markdown(results: list[dict[str, Any]]) -> str:
    if not results:
        return NOTHING_MEASURED
    lines = [
        "| N SPAs (Schedules) | cold start: all reconciled (writes) | cold peak RSS "
        "| restart: synced / all reconciled (writes) | steady peak RSS | CPU (restart to end) "
        "| lag p50 | lag p99 | lag max | statuses done | idle requests |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lag = r["start"]["hpa_lag_watch"]
        warm = r["warm"]
        lines.append(
            f"| {r['n']:,} ({r['schedules']:,}) | {r['ready_seconds']:.1f} s "
            f"({r['startup_writes']:,}) | {r['cold_peak_rss_mib']:.0f} MiB "
            f"| {warm['synced_seconds']:.1f} s / {warm['ready_seconds']:.1f} s ({warm['writes']}) "
            f"| {r['peak_rss_mib']:.0f} MiB | {r['cpu_total_seconds']:.1f} s "
            f"| {lag['p50'] * 1000:.0f} ms | {lag['p99'] * 1000:.0f} ms "
            f"| {lag['max'] * 1000:.0f} ms | {r['start']['all_statuses_seconds']:.1f} s "
            f"| {sum(r['idle']['requests'].values())} in {r['idle']['seconds']:.0f} s |"
        )
    for r in results:
        lines += ["", f"N = {r['n']:,}:", ""]
        lines.append(f"* objects created in {r['create_seconds']:.1f} s")
        lines.append(f"* load average (1, 5, 15 min) by stage: {r['loadavg']}")
        lines.append(f"* cold start requests: {r['startup_requests']}")
        lines.append(f"* restart requests: {r['warm']['requests']}")
        lines.append(
            f"* windows moved to the boundary: taken in after {r['move']['seconds']:.1f} s, "
            f"requests {r['move']['requests']}"
        )
        lines.append(f"* idle requests ({r['idle']['seconds']:.0f} s): {r['idle']['requests']}")
        lines.append(f"* transition requests: {r['start']['requests']}")
        lines.append(f"* writes per object at the transition: {r['start']['writes_per_object']}")
        audit_lag = r["start"]["hpa_lag_audit"]
        lines.append(
            f"* lag by the audit log (patch completed): p50 {audit_lag['p50'] * 1000:.0f} ms, "
            f"p99 {audit_lag['p99'] * 1000:.0f} ms, max {audit_lag['max'] * 1000:.0f} ms"
        )
        probes = r["probes"]
        lines.append(
            f"* capacity probe ({r['n']:,} HPA patches, {r['capacity']['workers']} at a time, "
            "the controller's body, field manager, client and identity, the controller running): "
            + ", ".join(
                f"{p['seconds']:.2f} s (server {p['server_seconds']:.2f} s)" for p in probes
            )
        )
        for t in r["transitions"]:
            c, o, lag, cpu = t["capacity"], t["order"], t["hpa_lag_watch"], t["transition_cpu"]
            lines.append(
                f"* {t['label']} at {t['boundary'][11:19]}: last HPA at "
                f"{c['last_hpa_seconds']:.2f} s = {c['ratio']:.2f} x the probes around it "
                f"({c['probe_seconds'][0]:.2f} s, {c['probe_seconds'][1]:.2f} s); HPA lag p50 "
                f"{lag['p50'] * 1000:.0f} ms, p99 {lag['p99'] * 1000:.0f} ms; capacity first: "
                f"{'yes' if o['capacity_first'] else 'NO'} (last capacity write "
                f"{o['last_capacity_write']:+.2f} s, first status {o['first_status_write']:+.2f} s,"
                f" first Event {o['first_event']:+.2f} s, {o['writes_before_last_capacity']} "
                f"before the last capacity write was done, "
                f"{o['writes_before_last_capacity_sent']} before it was sent); "
                f"CPU {cpu['cpu_seconds']:.2f} s for "
                f"{cpu['writes']:,} writes, {cpu['ms_per_write']:.2f} ms per write, of it "
                f"{cpu['capacity_phase']['cpu_seconds']:.2f} s up to the last capacity write "
                f"({cpu['capacity_phase']['ms_per_capacity_write']:.2f} ms per capacity write)"
            )
        cap = r["capacity"]
        lines.append(
            f"* last HPA / capacity over {len(cap['ratios'])} transitions: max "
            f"{cap['ratio_max']:.2f}, mean {cap['ratio_mean']:.2f}"
        )
        lines.append(
            f"* RSS after the restart: {r['warm']['rss_mib']:.1f} MiB; "
            f"CPU of the restart: {r['warm']['cpu_seconds']:.2f} s"
        )
        if "throttled" in r:
            t = r["throttled"]
            lag = t["hpa_lag_watch"]
            lines.append(
                f"* throttled {t['qps']:g} qps / burst {t['burst']}: restart requests "
                f"{t['restart_requests']}; lag p50 {lag['p50']:.1f} s, p99 {lag['p99']:.1f} s, "
                f"max {lag['max']:.1f} s; statuses done after {t['all_statuses_seconds']:.1f} s; "
                f"requests {t['requests']}"
            )
    return "\n".join(lines)


def svg_plot(results: list[dict[str, Any]], path: Path) -> None:
    """Two panels, log-scaled N: HPA lag (p50, p99, max) and peak RSS; no dependencies.
    Without results, no plot is written."""
    if not results:
        return
    width, height, pad = 760, 320, 60
    panel = (width - 3 * pad) / 2
    ns = [r["n"] for r in results]
    xmin, xmax = math.log10(min(ns)), math.log10(max(ns)) if max(ns) > min(ns) else 1

    def x(n: int, left: float) -> float:
        span = (xmax - xmin) or 1
        return left + (math.log10(n) - xmin) / span * panel

    def series(
        values: list[float], top: float, left: float, color: str, label: str, row: int
    ) -> str:
        ymax = top or 1
        xy = [
            (x(n, left), height - pad - v / ymax * (height - 2 * pad))
            for n, v in zip(ns, values, strict=True)
        ]
        points = " ".join(f"{px:.1f},{py:.1f}" for px, py in xy)
        dots = "".join(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{color}"/>' for px, py in xy
        )
        legend = (
            f'<text x="{left + 10}" y="{pad + 14 * row}" fill="{color}" font-size="11">'
            f"{label}</text>"
        )
        line = f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{points}"/>'
        return line + dots + legend

    def axes(left: float, title: str, top: float, unit: str) -> str:
        parts = [
            f'<text x="{left + panel / 2}" y="{pad - 25}" text-anchor="middle" font-size="13">'
            f"{title}</text>",
            f'<line x1="{left}" y1="{height - pad}" x2="{left + panel}" y2="{height - pad}" '
            'stroke="black"/>',
            f'<line x1="{left}" y1="{pad}" x2="{left}" y2="{height - pad}" stroke="black"/>',
        ]
        for n in ns:
            parts.append(
                f'<text x="{x(n, left):.1f}" y="{height - pad + 15}" text-anchor="middle" '
                f'font-size="10">{n:,}</text>'
            )
        for k in range(5):
            value = top * k / 4
            y = height - pad - k / 4 * (height - 2 * pad)
            parts.append(
                f'<text x="{left - 5}" y="{y + 3:.1f}" text-anchor="end" font-size="10">'
                f"{value:.3g}</text>"
            )
            parts.append(
                f'<line x1="{left}" y1="{y:.1f}" x2="{left + panel}" y2="{y:.1f}" stroke="#ddd"/>'
            )
        parts.append(
            f'<text x="{left + panel / 2}" y="{height - 15}" text-anchor="middle" '
            f'font-size="11">N ScheduledPodAutoscalers (4 Schedules each), {unit}</text>'
        )
        return "".join(parts)

    p50 = [r["start"]["hpa_lag_watch"]["p50"] for r in results]
    p99 = [r["start"]["hpa_lag_watch"]["p99"] for r in results]
    worst = [r["start"]["hpa_lag_watch"]["max"] for r in results]
    rss = [r["peak_rss_mib"] for r in results]
    lag_top = max(worst) * 1.1 or 1
    rss_top = max(rss) * 1.1 or 1
    left2 = 2 * pad + panel
    body = (
        axes(pad, "Boundary lag (s): HPA patched after the boundary", lag_top, "seconds")
        + series(p50, lag_top, pad, "#1f77b4", "p50", 1)
        + series(p99, lag_top, pad, "#ff7f0e", "p99", 2)
        + series(worst, lag_top, pad, "#d62728", "max", 3)
        + axes(left2, "Controller peak RSS (MiB)", rss_top, "MiB")
        + series(rss, rss_top, left2, "#2ca02c", "VmHWM", 1)
    )
    path.write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>{body}</svg>\n',
        encoding="utf-8",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=positive_ints, default=[1, 100, 1000], help="comma-separated SPA counts"
    )
    parser.add_argument(
        "--throttled",
        type=int,
        default=None,
        metavar="N",
        help="for this size, also restart the controller throttled for the window's end",
    )
    parser.add_argument("--qps", type=float, default=20.0)
    parser.add_argument("--burst", type=positive_int, default=30)
    parser.add_argument("--out", type=Path, default=None, help="write the raw results (JSON)")
    parser.add_argument("--plot", type=Path, default=None, help="write an SVG plot here")
    parser.add_argument("--keep", action="store_true", help="keep the work directories")
    parser.add_argument(
        "--spa-src",
        type=Path,
        default=None,
        help="run the controller from this source tree (e.g. a worktree of an older commit)",
    )
    parser.add_argument(
        "--spa-python",
        type=Path,
        default=None,
        help="with --spa-src: the Python to run it with (e.g. that tree's .venv/bin/python)",
    )
    parser.add_argument("--workers", type=positive_int, default=None, help="spa run --workers")
    parser.add_argument(
        "--transitions",
        type=int,
        default=3,
        help="whole-fleet transitions, each between two capacity probes (odd, so that the "
        "windows are open at the end for --throttled to close them; default 3)",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the control plane and this benchmark's watches on CPU 0, the controller and the "
        "capacity probe on CPU 1: an API server with a core of its own (needs CPUs 0 and 1)",
    )
    parser.add_argument(
        "--early",
        action="store_true",
        help="the first window start with raises written at B, the last written ahead of B "
        "(docs/schedules.md, 'Raises ahead of a shared boundary'), side by side; needs 3 "
        "transitions or more (make bench-fleet)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run that checks itself ({SMOKE_SPAS} SPAs, no throttled run, "
        f"{SMOKE_MARGIN:.0f} s of margin before the boundary instead of 30): exit status 1 if "
        "a check fails (tests/bench/test_bench_smoke.py)",
    )
    args = parser.parse_args()
    if args.transitions < 1 or args.transitions % 2 == 0:
        parser.error("--transitions must be odd (1, 3, 5, ...)")
    if args.smoke:
        args.sizes, args.throttled = [SMOKE_SPAS], None
    if args.early and args.transitions < 3:
        parser.error("--early needs --transitions 3 or more")
    if args.early and args.spa_src is not None:
        parser.error("--early runs this tree's controller: no --spa-src")

    if args.pin:
        if not (SERVER_CPUS | CONTROLLER_CPUS).issubset(os.sched_getaffinity(0)):
            parser.error(f"--pin needs CPUs {sorted(SERVER_CPUS | CONTROLLER_CPUS)}")
        # This thread's CPUs, inherited by the threads and processes it starts (the control
        # plane, the watches); the controller and the probe's thread are moved to theirs.
        os.sched_setaffinity(0, SERVER_CPUS)
    sizes = args.sizes
    results = []
    for n in sizes:
        workdir = Path(tempfile.mkdtemp(prefix=f"spa-load-{n}-"))
        throttle = (args.qps, args.burst) if args.throttled == n else None
        try:
            scenario = Scenario(
                n,
                workdir,
                throttle=throttle,
                spa_src=args.spa_src,
                spa_python=args.spa_python,
                workers=args.workers,
                margin=SMOKE_MARGIN if args.smoke else 30.0,
                transitions=args.transitions,
                pinned=args.pin,
                early=args.early,
            )
            results.append(scenario.run())
        finally:
            if not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
            else:
                log(f"kept {workdir}")
    report = {"machine": machine(), "results": results}
    write_json(args.out, report)
    if args.plot is not None:
        svg_plot(results, args.plot)
    print(json.dumps(report["machine"]))
    print(markdown(results))
    for result in results:
        if "fleet_early" in result:
            print(early_markdown(result))
    if args.smoke:
        failures = [failure for result in results for failure in smoke_failures(result)]
        return smoke_verdict(failures, ok=f"{len(results)} size(s), every check passed")
    return 0


# `--smoke`: the whole scenario for a few SPAs (one of each kind of flipping window), with a
# margin before the boundary long enough for them (the controller takes the moved windows in
# within a second or two, and idles for a few seconds then).
SMOKE_SPAS = 3
SMOKE_MARGIN = 12.0


def smoke_failures(result: dict[str, Any]) -> list[str]:
    """What the run shows wrong, as sentences: the claims of docs/performance.md that hold at
    any size (every HPA moved at each boundary, its capacity writes before any status or Event,
    no writes at a restart in sync, no request at all between boundaries, none during a
    capacity probe) and figures that must exist."""
    n = result["n"]
    failures = []
    for t in result["transitions"]:
        label = f"N={n}, {t['label']}"
        if not t["complete"]:
            changed = t["hpa_lag_watch"]["count"]
            failures.append(f"{label}: {changed} of {n} HPAs reached their new minReplicas")
        if not math.isfinite(t["hpa_lag_watch"]["max"]):
            failures.append(f"{label}: no lag measured at the boundary")
        if t["idle"]["requests"]:  # not even a read (docs/performance.md)
            failures.append(f"{label}: requests between boundaries: {t['idle']['requests']}")
        order = t["order"]
        if not order["capacity_first"]:
            failures.append(
                f"{label}: not capacity first: {order['writes_before_last_capacity']} status or "
                f"Event writes before the last capacity write ({order['early']})"
            )
    if result["startup_writes"] < n:
        failures.append(f"N={n}: {result['startup_writes']} writes at the cold start (< {n})")
    if result["warm"]["writes"]:
        failures.append(f"N={n}: {result['warm']['writes']} writes at a restart in sync")
    for p in result["probes"]:
        if p["failures"] or p["audited_patches"] != n or not p["seconds"] > 0:
            failures.append(
                f"N={n}: capacity probe {p['label']}: {p['audited_patches']} of {n} patches "
                f"audited, failures {p['failures']}, {p['seconds']} s"
            )
        if p["controller_requests"]:
            failures.append(
                f"N={n}: the controller sent requests during the capacity probe {p['label']}: "
                f"{p['controller_requests']}"
            )
    return failures


if __name__ == "__main__":
    sys.exit(main())
