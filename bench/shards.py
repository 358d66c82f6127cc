"""Shards at a shared boundary: N SPAs x 4 Schedules raised at one boundary B (written ahead
of it) by S controller shards, each with its own Lease and a standby replica, beside one
process on the same control plane in the same run; and a shard's failover at B - 30 s.

Issue 38, "Past one process": when a fleet outgrows one controller process, the chart deploys
one Deployment per shard (`shards: [{name: a}, ...]`), each of two replicas campaigning for the
Lease `<id>-shard-<name>`, each replica run as `spa run --shard-name NAME` (docs/runtime.md,
"Shards"). This benchmark runs exactly those processes against one real control plane
(tests/testenv, with an audit log of the controller's ServiceAccount; no kube-controller-
manager, as bench/load.py), as that ServiceAccount with config/rbac and the shards' grant to
read each other's Leases (config/components/shards), on the fleet of bench/load.py
(bench/fleet.py: one window of each SPA flips at B, Weekly, Daily or OneShot in six time
zones), each SPA and its Schedules labelled `autoscaling.d-kuro.github.io/shard=sK`, K = its
index modulo S, each SPA with `scaleUpImmediately: false` (its target does not exist:
`without_immediate_scale_up`):

1. **one process**: `spa run` with leader election (the Lease `scheduled-pod-autoscaler-
   leader`, as installed), no shard; its cold start (every HPA and status written), then
   `--warm-ups` whole-fleet window starts and one measured one, each written ahead of B
   (`--fleet-early`, the default). It is stopped (SIGTERM: the Lease released);
2. **S shards**: 2 x S processes, `spa run --shard-name sK` with leader election, two per
   shard; their start on a fleet in sync (synced, all reconciled, its writes), `--warm-ups`
   window starts (the first after a start goes by the 5 ms default: the shards' Leases carry
   no write time yet) and one measured one;
3. **failover**: one more window start in which shard s0's active replica is SIGKILLed at B -
   `--kill-before` (30 s): when its standby took the Lease (its log, and this benchmark's
   watch of the Lease), its first write after that (the audit log), and the shard's last
   raise against B, to hold against B + that failover time.

Before each window start the windows are moved 6 h away (the raised HPAs lowered at once, as
an edit does, and the controller left quiet), then moved to start at B, the next whole minute
far enough ahead for the controller to take the move in and to start its fleet
(`fleet_advance` of the write time its Lease carries); nothing is measured of the move.
Measured at each window start: when an independent watch saw each HPA's new minReplicas (the
fleet's and each shard's first, p50, p99 and last raise against B), when the API server
received the first HPA patch and completed the last (audit log), the requests between the
move and the fleet's first write (none expected), and for each process (active and standby)
its RSS before the fleet, its peak RSS and its CPU seconds from the fleet's first write to its
last (sampled every 0.2 s from /proc).

    python bench/shards.py --sizes 20000 --shards 4 --out FILE   # make bench-fleet SHARDS=4
    python bench/shards.py --sizes 200 --shards 2                 # a small run, ~12 min
    python bench/shards.py --smoke                                # make test-bench-smoke

A Markdown summary goes to stdout, progress to stderr; `--out` writes the raw results (JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fleet import ACTIVE_MIN, FLIP_MIN, flip_spec, load_fleet, patch_all  # noqa: E402
from bench.fleet import create_all as create_fleet  # noqa: E402
from bench.load import (  # noqa: E402
    CONTROLLER_USER,
    NAMESPACE,
    Watcher,
    requests,
    window_minutes,
    writes_per_object,
)
from bench.measured import (  # noqa: E402
    NOTHING_MEASURED,
    non_negative_int,
    positive_int,
    positive_ints,
    seconds,
)
from bench.plane import (  # noqa: E402
    SA_NAME,
    SA_NAMESPACE,
    ProcessSampler,
    controller_plane,
    reconciled_count,
    start_spa_run,
    stop_process,
    synced_at,
)
from bench.report import loadavg, log, machine, smoke_verdict, summary, write_json  # noqa: E402
from spa.controller.decide.fleet import fleet_advance  # noqa: E402
from spa.controller.fleet import (  # noqa: E402
    DEFAULT_MARGIN,
    DEFAULT_MAX_ADVANCE,
    DEFAULT_WRITE_SECONDS,
    WRITE_SECONDS_ANNOTATION,
)
from spa.controller.options import DEFAULT_LEADER_ELECTION_ID  # noqa: E402
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.controller.shards import SHARD_LABEL, Shard  # noqa: E402
from spa.kube import HPA_V2, LEASE, BlockingKubeClient, Resource, connect_blocking  # noqa: E402
from tests.testenv.audit import AuditEvent, audit_policy  # noqa: E402
from tests.testenv.controlplane import ControlPlane, free_port  # noqa: E402

# The group of the unsharded process (every other group is a shard's name).
ONE = "one"
# The shards' grant to list the Leases of their namespace (docs/install.md, "Shards"), applied
# as a user applies it: each reads the pace the other shards' Leases carry.
SHARDS_RBAC = REPO / "config/components/shards/shards.yaml"
# Which shard's active replica the failover kills.
VICTIM = "s0"
# What a standby needs at most to take a Lease whose holder died: its duration (15 s) and two
# retry periods (docs/runtime.md, "LeaderElector"), and a second for the machine.
FAILOVER_BOUND = 15.0 + 2 * 2.0 + 1.0
# Resources whose objects are named after an SPA (an HPA, an SPA's status) or after one of its
# Schedules (`<spa>-<suffix>`): the writes a shard's SPAs are told apart by. Events are not.
_SPA_NAMED = frozenset({"horizontalpodautoscalers", "scheduledpodautoscalers/status"})
_SCHEDULE_NAMED = frozenset({"schedules/status"})
# The audit log is read this much at a time.
_AUDIT_CHUNK = 64 << 20
# How often the whole fleet's objects are looked over while waiting for them (at 20,000 SPAs
# each look takes tens of milliseconds of this process, on the cores the controllers share).
_LOOK = 0.5


def shard_names(count: int) -> list[str]:
    """The shards' names, `s0` to `s{count-1}`: label values, and part of each Lease's name."""
    return [f"s{index}" for index in range(count)]


def lease_name(group: str) -> str:
    """The Lease a group's replicas campaign for: the install's, or its shard's."""
    if group == ONE:
        return DEFAULT_LEADER_ELECTION_ID
    return Shard.by_label(group).lease_name(DEFAULT_LEADER_ELECTION_ID)


def label_fleet(
    objects: Iterable[tuple[Resource, dict[str, Any]]], owner: Mapping[str, str]
) -> None:
    """Each SPA and each of its Schedules labelled for the shard `owner` names for the SPA."""
    for resource, obj in objects:
        if resource == SCHEDULED_POD_AUTOSCALERS:
            spa = obj["metadata"]["name"]
        else:
            spa = obj["spec"]["scaleTargetRef"]["name"]
        obj["metadata"].setdefault("labels", {})[SHARD_LABEL] = owner[spa]


def without_immediate_scale_up(objects: Iterable[tuple[Resource, dict[str, Any]]]) -> None:
    """Each SPA with `scaleUpImmediately: false`. Its target does not exist on this plane (no
    Deployments: no nodes for their pods), so a process's first raise of each SPA reads the
    target's /scale for a 404 and a Warning, and its later raises skip it (docs/schedules.md,
    "Immediate scale-up"). The processes measured warm learned that in their warm-up; a
    standby that takes a Lease has not, and would pay a read and an Event per SPA in the very
    window its failover is measured in. Without it, every window start of every process writes
    the same: the HPAs, the statuses and the Events of the raise."""
    for resource, obj in objects:
        if resource == SCHEDULED_POD_AUTOSCALERS:
            obj["spec"]["scaleUpImmediately"] = False


def spa_of(event: AuditEvent) -> str | None:
    """The SPA a controller write is for (its HPA, its status, a status of one of its
    Schedules), None where the name does not say (an Event, a Lease)."""
    if not event.name:
        return None
    if event.resource in _SPA_NAMED:
        return event.name
    if event.resource in _SCHEDULE_NAMED:
        return event.name.rsplit("-", 1)[0]
    return None


def raise_figures(
    names: list[str], changed: Mapping[str, float], patches: list[AuditEvent], boundary: float
) -> dict[str, Any]:
    """The raises of SPAs `names` at `boundary`: as the watch saw them (`changed`, each HPA's
    first instant at its new minReplicas) and as the API server took them (their HPA
    `patches`), in seconds against B (negative: before it)."""
    watched = [changed[name] - boundary for name in names if name in changed]
    lag = summary(watched)
    first_sent = min((event.received for event in patches), default=math.nan)
    last_done = max((event.completed for event in patches), default=math.nan)
    span = last_done - min(first_sent, boundary)
    return {
        "spas": len(names),
        "raised": len(watched),
        "first_seconds": min(watched, default=math.nan),
        "p50_seconds": lag["p50"],
        "p99_seconds": lag["p99"],
        "last_seconds": lag["max"],
        "first_sent_seconds": first_sent - boundary,
        "last_hpa_audit_seconds": last_done - boundary,
        "hpa_patches": len(patches),
        "hpa_patches_per_second": len(patches) / span if span > 0 else math.nan,
    }


def failover_figures(
    *,
    kill_at: float,
    boundary: float,
    acquired_at: float,
    lease_seen_at: float,
    victim_names: list[str],
    changed: Mapping[str, float],
    writes: list[AuditEvent],
    owner: Mapping[str, str],
    victim: str,
) -> dict[str, Any]:
    """A shard's failover at one boundary: its active replica killed at `kill_at`, its
    standby's "acquired lease" at `acquired_at` (its log) and the Lease seen held by the
    standby at `lease_seen_at` (a watch), NaN if never. The standby's first write is the first
    write of the shard's objects the API server received after the acquisition: before it,
    only the killed replica wrote them (a write of its received after the kill was in flight
    at the kill). "Within" holds when the shard's last raise is no later than B plus the
    failover (kill to acquisition)."""
    after = [
        event
        for event in writes
        if event.received >= acquired_at and owner.get(spa_of(event) or "") == victim
    ]
    first_write = min((event.received for event in after), default=math.nan)
    raised = [changed[name] for name in victim_names if name in changed]
    last = max(raised, default=math.nan) - boundary
    failover = acquired_at - kill_at
    return {
        "shard": victim,
        "killed_seconds": kill_at - boundary,
        "lease_acquired_seconds": failover,
        "lease_seen_seconds": lease_seen_at - kill_at,
        "first_write_seconds": first_write - kill_at,
        "raised_before_kill": sum(1 for instant in raised if instant < kill_at),
        "raised_after_kill": sum(1 for instant in raised if instant >= kill_at),
        "spas": len(victim_names),
        "last_raise_seconds": last,
        "within_failover": bool(math.isfinite(last) and last <= failover),
    }


class AuditTail:
    """The API server's audit log read as it grows, each request once: only the lines added
    since the last read are parsed (at 20,000 SPAs the log holds a million requests, and
    tests.testenv.audit.AuditLog reads it whole at every question), and what is older than
    `forget` is dropped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.events: list[AuditEvent] = []
        self._offset = 0
        self._started: set[str] = set()  # watches: a ResponseStarted line, later a Complete

    def poll(self) -> list[AuditEvent]:
        try:
            with self.path.open("rb") as lines:
                while True:
                    lines.seek(self._offset)
                    data = lines.read(_AUDIT_CHUNK)  # a cold start of 20,000: 0.5 GB
                    end = data.rfind(b"\n")
                    if end < 0:
                        break
                    self._offset += end + 1
                    self._parse(data[: end + 1])
        except FileNotFoundError:
            pass
        return self.events

    def _parse(self, data: bytes) -> None:
        for line in data.splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            stage = entry.get("stage")
            audit_id = str(entry.get("auditID"))
            if stage == "ResponseStarted":
                self._started.add(audit_id)
            elif stage != "ResponseComplete" or audit_id in self._started:
                continue
            self.events.append(AuditEvent.from_json(entry))

    def controller(
        self, since: float, until: float = math.inf, *, leases: bool = False
    ) -> list[AuditEvent]:
        """The controller's requests received in [since, until): without its Leases' renewals
        unless `leases` (every replica's heartbeat, every 2 s whatever the fleet does)."""
        return [
            event
            for event in self.poll()
            if event.user == CONTROLLER_USER
            and since <= event.received < until
            and (leases or event.resource != "leases")
        ]

    def forget(self, before: float) -> None:
        self.events = [event for event in self.events if event.completed >= before]


@dataclass
class Replica:
    """One `spa run` process of a group (a shard, or the one process)."""

    group: str
    index: int
    log_path: Path
    process: subprocess.Popen[bytes]
    sampler: ProcessSampler
    port: int
    started: float
    killed_at: float | None = None

    @property
    def label(self) -> str:
        return f"{self.group}/{self.index}"

    def identity(self) -> str:
        """Its Lease identity, from its log ("" before it campaigns)."""
        for entry in self._log():
            message = str(entry.get("msg", ""))
            if message.startswith("campaigning for lease "):
                return message.rsplit(" as ", 1)[1]
        return ""

    def acquired_at(self, after: float) -> float:
        """When it first logged "acquired lease" after `after` (NaN if it has not)."""
        for entry in self._log():
            if str(entry.get("msg", "")).startswith("acquired lease "):
                at = _log_time(entry)
                if at >= after:
                    return at
        return math.nan

    def _log(self) -> list[dict[str, Any]]:
        entries = []
        with contextlib.suppress(OSError):
            for line in self.log_path.read_text(errors="replace").splitlines():
                with contextlib.suppress(json.JSONDecodeError):
                    entries.append(json.loads(line))
        return entries


def _log_time(entry: Mapping[str, Any]) -> float:
    return datetime.fromisoformat(str(entry["time"]).replace("Z", "+00:00")).timestamp()


@dataclass
class Observed:
    """The plane as this benchmark sees it: its admin client, the controller's kubeconfig, its
    watches and the audit log."""

    admin: BlockingKubeClient
    kubeconfig: Path
    audit: AuditTail
    hpas: Watcher
    spas: Watcher
    scheds: Watcher
    leases: Watcher


@dataclass
class Pace:
    """How fast this plane takes the fleet's edits and the controller's writes, from the
    creation and the cold start: what the boundaries are chosen by."""

    patches_per_second: float
    writes_per_second: float


class ShardRun:
    """One size: the fleet on a plane of its own, the one process, then the shards."""

    def __init__(
        self,
        n: int,
        shards: int,
        workdir: Path,
        *,
        warm_ups: int = 1,
        kill_before: float = 30.0,
        margin: float = 30.0,
    ) -> None:
        self.n = n
        self.shards = shards
        self.workdir = workdir
        self.warm_ups = warm_ups
        self.kill_before = kill_before
        self.margin = margin
        self.names = [f"app-{index:05d}" for index in range(n)]
        groups = shard_names(shards)
        # SPA -> its shard, round robin: every shard a fleet of the same size.
        self.owner = {name: groups[index % shards] for index, name in enumerate(self.names)}
        self.changed: dict[str, float] = {}  # HPA -> first instant at `wanted_min`
        self.wanted_min: int | None = None
        self.lease_events: list[tuple[float, str, str]] = []  # (received, Lease, holder)
        self._lock = threading.Lock()
        self._open = False  # the flipping windows open (raised) now
        self._last_move: float | None = None  # seconds the last move took to be taken in
        self.result: dict[str, Any] = {
            "n": n,
            "schedules": 4 * n,
            "shards": shards,
            "replicas_per_shard": 2,
            "shard_mode": "label",
            "warm_ups": warm_ups,
            "kill_before_seconds": kill_before,
            "loadavg": {"begin": loadavg()},
        }

    def members(self, group: str) -> list[str]:
        """The SPAs of a group: a shard's, or all of them for the one process."""
        return self.names if group == ONE else [n for n in self.names if self.owner[n] == group]

    # the watches' callbacks
    def _on_hpa(self, name: str, obj: dict[str, Any], received: float) -> None:
        if self.wanted_min is not None and (obj.get("spec") or {}).get("minReplicas") == (
            self.wanted_min
        ):
            with self._lock:
                self.changed.setdefault(name, received)

    def _on_lease(self, name: str, obj: dict[str, Any], received: float) -> None:
        holder = str((obj.get("spec") or {}).get("holderIdentity") or "")
        with self._lock:
            self.lease_events.append((received, name, holder))

    # -- the run ----------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        with controller_plane(
            self.workdir / "plane",
            namespaces=[NAMESPACE],
            audit_policy=audit_policy(users=[CONTROLLER_USER]),
            controller_manager=False,  # as bench/load.py: no FailedGetScale Events
        ) as plane:
            plane.run_kubectl("apply", "--server-side", "-f", str(SHARDS_RBAC), check=True)
            return self._run(plane)

    def _run(self, plane: ControlPlane) -> dict[str, Any]:
        kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
        admin = connect_blocking(kubeconfig=str(plane.kubeconfig), pool_size=32)
        now = datetime.now(UTC)
        log(f"N={self.n}, {self.shards} shards: creating {5 * self.n} objects")
        names, objects = load_fleet(self.n, NAMESPACE, self._placeholder(), now)
        assert names == self.names
        label_fleet(objects, self.owner)
        without_immediate_scale_up(objects)
        took = create_fleet(admin, NAMESPACE, objects)
        self.result["create_seconds"] = took
        log(f"created {len(objects)} objects in {took:.1f} s")
        watchers: list[Watcher] = []
        try:
            observed = Observed(
                admin=admin,
                kubeconfig=kubeconfig,
                audit=AuditTail(plane.audit_log or Path("/nonexistent")),
                hpas=self._watch(watchers, Watcher(admin, HPA_V2, self._on_hpa)),
                spas=self._watch(watchers, Watcher(admin, SCHEDULED_POD_AUTOSCALERS)),
                scheds=self._watch(watchers, Watcher(admin, SCHEDULES)),
                leases=self._watch(
                    watchers, Watcher(admin, LEASE, self._on_lease, namespace=SA_NAMESPACE)
                ),
            )
            self.result["one_process"] = self._one_process(observed)
            self.result["sharded"] = self._sharded(observed)
        finally:
            for watcher in watchers:
                watcher.stop()
            admin.close()
        self.result["loadavg"]["end"] = loadavg()
        return self.result

    @staticmethod
    def _watch(started: list[Watcher], watcher: Watcher) -> Watcher:
        started.append(watcher.start())
        return watcher

    def _placeholder(self) -> datetime:
        """Where the windows wait between window starts: 6 h from now, at a whole minute."""
        return (datetime.now(UTC) + timedelta(hours=6)).replace(second=0, microsecond=0)

    def _start(self, observed: Observed, group: str, index: int) -> Replica:
        port = free_port()
        logfile = self.workdir / f"spa-{group}-{index}.log"
        extra = [
            "--enable-leader-election",
            f"--leader-election-namespace={SA_NAMESPACE}",
            f"--leader-election-id={DEFAULT_LEADER_ELECTION_ID}",
        ]
        if group != ONE:
            extra.append(f"--shard-name={group}")  # as the chart's `shards` renders it
        started = time.time()
        process = start_spa_run(
            observed.kubeconfig, NAMESPACE, logfile, metrics_port=port, extra=extra
        )
        return Replica(group, index, logfile, process, ProcessSampler(process.pid), port, started)

    def _active(self, observed: Observed, replicas: list[Replica], group: str) -> Replica | None:
        """The replica of `group` that holds its Lease, if one does."""
        lease = observed.leases.objects.get(lease_name(group)) or {}
        holder = (lease.get("spec") or {}).get("holderIdentity")
        for replica in replicas:
            if (
                replica.group == group
                and replica.killed_at is None
                and holder
                and replica.identity() == holder
            ):
                return replica
        return None

    def _wait_reconciled(
        self, observed: Observed, replicas: list[Replica], groups: list[str], timeout: float
    ) -> float:
        """Wait until each group's Lease is held by one of its replicas, every replica has
        synced its caches, and the holders have reconciled every SPA (their metrics); the
        wall time then."""
        deadline = time.time() + timeout
        while True:
            for replica in replicas:
                if replica.process.poll() is not None:
                    raise RuntimeError(f"spa run {replica.label} exited: {replica.log_path}")
            actives = [self._active(observed, replicas, group) for group in groups]
            if all(synced_at(r.log_path) for r in replicas) and all(actives):
                done = sum(reconciled_count(a.port) for a in actives if a is not None)
                if done >= self.n:
                    return time.time()
            if time.time() > deadline:
                raise RuntimeError(f"not every SPA reconciled within {timeout:.0f} s")
            time.sleep(1.0)  # each read of the metrics is a page of a line per SPA

    def _pace(self) -> Pace:
        cold = self.result["one_process"]["cold_start"]
        return Pace(
            patches_per_second=5 * self.n / self.result["create_seconds"],
            # The cold start's write rate (bench/load.py caps it at 100/s, from the days when
            # it was that; 293/s at 10,000 SPAs on 2026-11-29): the first move is given 1.5
            # times its two status writes per SPA at that rate, every later one 1.5 times the
            # last one's time.
            writes_per_second=max(1.0, cold["writes"] / cold["ready_seconds"]),
        )

    # -- one process --------------------------------------------------------------------------

    def _one_process(self, observed: Observed) -> dict[str, Any]:
        log("one process: cold start")
        replica = self._start(observed, ONE, 0)
        replicas = [replica]
        result: dict[str, Any] = {}
        try:
            ready = self._wait_cold(observed, replica, timeout=3600 + self.n)
            time.sleep(2)  # its last writes into the audit log
            writes = observed.audit.controller(replica.started, ready + 1)
            replica.sampler.sample()
            result["cold_start"] = {
                "synced_seconds": synced_at(replica.log_path) - replica.started,
                "ready_seconds": ready - replica.started,
                "writes": sum(1 for event in writes if event.is_write),
                "requests": requests(writes),
                "rss_mib": replica.sampler.rss_mib,
                "cpu_seconds": replica.sampler.cpu,
            }
            self.result["one_process"] = result
            log(f"one process: cold start {result['cold_start']}")
            self.result["loadavg"]["one_process_ready"] = loadavg()
            result["transitions"] = [
                self._transition(observed, replicas, [ONE], f"one process, warm-up #{k + 1}")
                for k in range(self.warm_ups)
            ]
            result["transitions"].append(self._transition(observed, replicas, [ONE], "one process"))
            self.result["loadavg"]["one_process"] = loadavg()
        finally:
            stop_process(replica.process)
            replica.sampler.stop()
        result["processes"] = [self._process_totals(replica)]
        return result

    def _wait_cold(self, observed: Observed, replica: Replica, timeout: float) -> float:
        """Wait until every SPA and Schedule has its status for its generation and every SPA
        its HPA (the watches); the wall time then."""
        deadline = time.time() + timeout
        while True:
            if replica.process.poll() is not None:
                raise RuntimeError(f"spa run exited: {replica.log_path}")
            if len(observed.hpas.objects) >= self.n and all(
                _observed(obj)
                for watcher in (observed.spas, observed.scheds)
                for obj in list(watcher.objects.values())
            ):
                return time.time()
            if time.time() > deadline:
                raise RuntimeError(f"cold start not reconciled within {timeout:.0f} s")
            time.sleep(_LOOK)

    # -- shards -------------------------------------------------------------------------------

    def _sharded(self, observed: Observed) -> dict[str, Any]:
        groups = shard_names(self.shards)
        log(f"{self.shards} shards, 2 replicas each: start")
        began = time.time()
        replicas = [self._start(observed, group, index) for group in groups for index in (0, 1)]
        result: dict[str, Any] = {}
        try:
            ready = self._wait_reconciled(observed, replicas, groups, timeout=1800 + self.n)
            time.sleep(2)
            writes = observed.audit.controller(began, ready + 1)
            result["start"] = {
                "synced_seconds": max(synced_at(r.log_path) for r in replicas) - began,
                "ready_seconds": ready - began,
                "writes": sum(1 for event in writes if event.is_write),
                "requests": requests(writes),
            }
            log(f"shards: started {result['start']}")
            self.result["sharded"] = result
            self.result["loadavg"]["shards_ready"] = loadavg()
            result["transitions"] = [
                self._transition(
                    observed, replicas, groups, f"{self.shards} shards, warm-up #{k + 1}"
                )
                for k in range(self.warm_ups)
            ]
            result["transitions"].append(
                self._transition(observed, replicas, groups, f"{self.shards} shards")
            )
            self.result["loadavg"]["shards"] = loadavg()
            result["failover"] = self._transition(
                observed, replicas, groups, f"{self.shards} shards, {VICTIM} killed", kill=VICTIM
            )
            self.result["loadavg"]["failover"] = loadavg()
        finally:
            for replica in replicas:
                stop_process(replica.process)
                replica.sampler.stop()
        result["processes"] = [self._process_totals(replica) for replica in replicas]
        return result

    @staticmethod
    def _process_totals(replica: Replica) -> dict[str, Any]:
        return {
            "process": replica.label,
            "group": replica.group,
            "peak_rss_mib": replica.sampler.hwm_mib,  # VmHWM: the process's whole life
            "cpu_seconds": replica.sampler.cpu,
            "killed": replica.killed_at is not None,
        }

    # -- one window start ---------------------------------------------------------------------

    def _reset(self, observed: Observed) -> None:
        """The windows moved 6 h away, the HPAs lowered, the controller quiet."""
        if not self._open:
            return
        with self._lock:
            self.wanted_min = None
        placeholder = self._placeholder()
        moved = time.time()
        self._move(observed.admin, placeholder, 30)
        pace = self._pace()
        timeout = self.n / pace.patches_per_second + 9 * self.n / pace.writes_per_second + 120
        deadline = moved + timeout

        def lowered() -> bool:
            return all(
                (obj.get("spec") or {}).get("minReplicas") == ACTIVE_MIN
                for obj in list(observed.hpas.objects.values())
            ) and not any(_flipped(observed, name) for name in self.names)

        while not lowered():
            if time.time() > deadline:
                raise RuntimeError(f"the windows moved away not taken in within {timeout:.0f} s")
            time.sleep(_LOOK)
        while observed.audit.controller(time.time() - 2.0):  # quiet for 2 s
            if time.time() > deadline:
                break
            time.sleep(0.5)
        self._open = False
        log(f"windows moved away and taken in after {time.time() - moved:.1f} s")

    def _move(self, admin: BlockingKubeClient, start: datetime, minutes: int) -> None:
        patches = {
            f"{name}-prescale": {"spec": flip_spec(index, start, minutes)}
            for index, name in enumerate(self.names)
        }
        patch_all(admin, SCHEDULES, NAMESPACE, patches)

    def _expected_advance(self, observed: Observed, groups: list[str]) -> int:
        """How far ahead of B the earliest group starts its fleet: `fleet_advance` of its
        SPAs and the write time its Lease carries (its leader's, renewed every 2 s), else the
        default (docs/schedules.md, "Raises ahead of a shared boundary")."""
        advances = [0]
        for group in groups:
            lease = observed.leases.objects.get(lease_name(group)) or {}
            carried = ((lease.get("metadata") or {}).get("annotations") or {}).get(
                WRITE_SECONDS_ANNOTATION
            )
            write_seconds = float(carried) if carried else DEFAULT_WRITE_SECONDS
            advances.append(
                fleet_advance(
                    len(self.members(group)),
                    write_seconds,
                    margin=DEFAULT_MARGIN,
                    max_advance=DEFAULT_MAX_ADVANCE,
                )
            )
        return max(advances)

    def _transition(
        self,
        observed: Observed,
        replicas: list[Replica],
        groups: list[str],
        label: str,
        *,
        kill: str | None = None,
    ) -> dict[str, Any]:
        """One whole-fleet window start at a real minute boundary B, written ahead of it by
        the processes of `groups`; with `kill`, that shard's active replica SIGKILLed at B -
        `kill_before`."""
        self._reset(observed)
        observed.audit.forget(time.time() - 60)
        pace = self._pace()
        advance = self._expected_advance(observed, groups)
        # The move's time: 1.5 times the last one's; the first by the creation's rate and the
        # cold start's (two status writes per SPA), as bench/load.py.
        move = (
            1.5 * self._last_move
            if self._last_move is not None
            else self.n / pace.patches_per_second + 1.5 * 2 * self.n / pace.writes_per_second
        )
        ahead = move + self.margin + 1.5 * advance + (self.kill_before if kill else 0.0)
        boundary_time = (datetime.now(UTC) + timedelta(seconds=ahead + 59)).replace(
            second=0, microsecond=0
        )
        boundary = boundary_time.timestamp()
        with self._lock:
            self.changed.clear()
            self.wanted_min = FLIP_MIN
        log(f"{label}: boundary {boundary_time:%H:%M:%S} (advance expected {advance} s)")
        moved = time.time()
        self._move(observed.admin, boundary_time, max(30, 3 * window_minutes(self.n)))
        self._open = True
        expected = boundary_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        while not all(
            _next_transition(observed.spas, name) == expected
            and _next_transition(observed.scheds, f"{name}-prescale") == expected
            for name in self.names
        ):
            if time.time() > boundary - advance - 5:
                log(f"{label}: the moved windows were not all taken in before the fleet")
                break
            time.sleep(_LOOK)
        settled = time.time()
        self._last_move = settled - moved
        log(f"{label}: windows moved and taken in after {settled - moved:.1f} s")

        killed: Replica | None = None
        standby: Replica | None = None
        if kill is not None:
            kill_at = boundary - self.kill_before
            time.sleep(max(0.0, kill_at - time.time()))
            killed = self._active(observed, replicas, kill)
            if killed is None:
                raise RuntimeError(f"{label}: no replica of {kill} holds its Lease")
            standby = next(r for r in replicas if r.group == kill and r is not killed)
            killed.killed_at = time.time()
            killed.process.kill()
            killed.process.wait()
            log(f"{label}: SIGKILLed {killed.label} at B{killed.killed_at - boundary:+.1f} s")

        timeout = window_minutes(self.n) * 60 + 9 * self.n / pace.writes_per_second
        while time.time() < boundary + timeout:
            if self._done(observed):
                break
            with self._lock:  # the raises to the watch's 50 ms, the statuses to _LOOK
                raising = len(self.changed) < self.n
            time.sleep(0.05 if raising else _LOOK)
        done = time.time()
        time.sleep(3)  # stragglers (statuses, Events) into the audit log
        return self._figures(
            label,
            observed,
            replicas,
            groups,
            boundary=boundary,
            advance=advance,
            moved=moved,
            settled=settled,
            done=done,
            killed=killed,
            standby=standby,
        )

    def _done(self, observed: Observed) -> bool:
        with self._lock:
            if len(self.changed) < self.n:
                return False
        return all(_flipped(observed, name) for name in self.names)

    def _figures(
        self,
        label: str,
        observed: Observed,
        replicas: list[Replica],
        groups: list[str],
        *,
        boundary: float,
        advance: int,
        moved: float,
        settled: float,
        done: float,
        killed: Replica | None,
        standby: Replica | None,
    ) -> dict[str, Any]:
        with self._lock:
            changed = dict(self.changed)
        events = observed.audit.controller(moved, done + 3)
        writes = [event for event in events if event.is_write]
        patches = [
            event
            for event in writes
            if event.verb == "patch" and event.resource == "horizontalpodautoscalers"
        ]
        fleet = [event for event in patches if event.received >= settled]
        first_sent = min((event.received for event in fleet), default=boundary)
        # Idle: from a little after the move was taken in to just before the fleet's first
        # write (or the kill): the controller had nothing to do.
        idle_to = min(first_sent, boundary) - 0.5
        if killed is not None and killed.killed_at is not None:
            idle_to = min(idle_to, killed.killed_at)
        idle = [event for event in events if settled + 3 <= event.received < idle_to]
        window = [event for event in writes if event.received >= min(first_sent, boundary) - 1]
        last_write = max((event.completed for event in window), default=done)
        since = min(first_sent, boundary) - 1
        by_group: dict[str, list[AuditEvent]] = {group: [] for group in groups}
        for event in fleet:
            group = ONE if groups == [ONE] else self.owner.get(event.name or "", "")
            by_group.setdefault(group, []).append(event)
        result: dict[str, Any] = {
            "label": label,
            "boundary": datetime.fromtimestamp(boundary, UTC).isoformat(),
            "expected_advance_seconds": advance,
            "move_seconds": settled - moved,
            "fleet": raise_figures(self.names, changed, fleet, boundary),
            "groups": {
                group: raise_figures(self.members(group), changed, by_group[group], boundary)
                for group in groups
            },
            "complete": len(changed) == self.n,
            "all_statuses_seconds": done - boundary,
            "idle": {
                "seconds": idle_to - settled - 3,
                "requests": requests(idle),
                "writes": sum(1 for event in idle if event.is_write),
            },
            "requests": requests([event for event in events if event.received >= since]),
            "writes": len(window),
            "writes_per_object": writes_per_object(window),
            "processes": [
                self._process_window(replica, since, last_write, window) for replica in replicas
            ],
            "loadavg": loadavg(),
        }
        if killed is not None and standby is not None and killed.killed_at is not None:
            acquired = standby.acquired_at(killed.killed_at)
            seen = min(
                (
                    received
                    for received, name, holder in list(self.lease_events)
                    if name == lease_name(killed.group)
                    and received >= killed.killed_at
                    and holder
                    and holder == standby.identity()
                ),
                default=math.nan,
            )
            result["failover"] = failover_figures(
                kill_at=killed.killed_at,
                boundary=boundary,
                acquired_at=acquired,
                lease_seen_at=seen,
                victim_names=self.members(killed.group),
                changed=changed,
                writes=writes,
                owner=self.owner,
                victim=killed.group,
            ) | {"killed": killed.label, "standby": standby.label}
        fleet_figures = result["fleet"]
        log(
            f"{label}: {fleet_figures['raised']}/{self.n} raised; first "
            f"{fleet_figures['first_seconds']:+.2f} s, last {fleet_figures['last_seconds']:+.2f} s "
            f"(audit {fleet_figures['last_hpa_audit_seconds']:+.2f} s) against B; idle "
            f"{result['idle']['requests'] or 'no requests'}"
            + (f"; failover {result['failover']}" if "failover" in result else "")
        )
        return result

    def _process_window(
        self, replica: Replica, since: float, until: float, writes: list[AuditEvent]
    ) -> dict[str, Any]:
        """One process over a transition: RSS before it, its peak in it, its CPU from the
        fleet's first write to its last, the writes of its group's SPAs."""
        sampler = replica.sampler
        before_at, cpu_before = sampler.cpu_before(since)
        _, cpu_after = sampler.cpu_at(until)
        rss_before = [rss for at, rss in list(sampler.rss_history) if at < since]
        group_writes = sum(
            1
            for event in writes
            if replica.group == ONE or self.owner.get(spa_of(event) or "") == replica.group
        )
        cpu = cpu_after - cpu_before
        return {
            "process": replica.label,
            "group": replica.group,
            "spas": len(self.members(replica.group)),
            "active": (
                replica.killed_at is None
                and bool(replica.identity())
                and replica.identity() == self._holder_now(replica.group)
            ),
            "killed": replica.killed_at is not None,
            "rss_before_mib": rss_before[-1] if rss_before else math.nan,
            "rss_peak_mib": sampler.rss_peak(since, until),
            "cpu_seconds": cpu,
            "group_writes": group_writes,
            "ms_per_group_write": 1000 * cpu / group_writes if group_writes else math.nan,
            "from": before_at - since,
            "to": until - since,
        }

    def _holder_now(self, group: str) -> str:
        with self._lock:
            held = [holder for _, name, holder in self.lease_events if name == lease_name(group)]
        return held[-1] if held else ""


def _observed(obj: Mapping[str, Any]) -> bool:
    status = obj.get("status") or {}
    return bool(status.get("observedGeneration") == (obj.get("metadata") or {}).get("generation"))


def _next_transition(watcher: Watcher, name: str) -> object:
    return ((watcher.objects.get(name) or {}).get("status") or {}).get("nextTransitionTime")


def _flipped(observed: Observed, name: str) -> bool:
    """SPA `name`'s flipping window in force by its statuses: in its activeSchedules, and its
    Schedule Progressing."""
    status = (observed.spas.objects.get(name) or {}).get("status") or {}
    schedule = (observed.scheds.objects.get(f"{name}-prescale") or {}).get("status") or {}
    return f"{name}-prescale" in (status.get("activeSchedules") or []) and (
        schedule.get("condition") == "Progressing"
    )


# -- report -------------------------------------------------------------------------------------


def _s(value: float) -> str:
    return f"{value:+.2f} s" if math.isfinite(value) else "-"


def _mib(value: float) -> str:
    return f"{value:.0f}" if math.isfinite(value) else "-"


def markdown(results: list[dict[str, Any]]) -> str:
    if not results:
        return NOTHING_MEASURED
    lines: list[str] = []
    for r in results:
        one, sharded = r["one_process"], r["sharded"]
        lines += [
            f"N = {r['n']:,} SPAs ({r['schedules']:,} Schedules), {r['shards']} shards by label, "
            "2 replicas each:",
            "",
            "| run | SPAs per process | first | p50 | p99 | last (watch) | last (audit) "
            "| first sent | HPA writes/s | CPU, all processes |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        transitions = [*one["transitions"], *sharded["transitions"], sharded["failover"]]
        for t in transitions:
            f = t["fleet"]
            per = r["n"] if t["label"].startswith("one") else math.ceil(r["n"] / r["shards"])
            cpu = sum(p["cpu_seconds"] for p in t["processes"])
            lines.append(
                f"| {t['label']} | {per:,} | {_s(f['first_seconds'])} | {_s(f['p50_seconds'])} "
                f"| {_s(f['p99_seconds'])} | {_s(f['last_seconds'])} "
                f"| {_s(f['last_hpa_audit_seconds'])} | {_s(f['first_sent_seconds'])} "
                f"| {f['hpa_patches_per_second']:.0f} | {cpu:.2f} s |"
            )
        lines += [
            "",
            "| run | process | SPAs | active | RSS before (MiB) | RSS peak (MiB) | CPU in the "
            "transition | ms per write of its SPAs | its SPAs' last raise |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for t in (one["transitions"][-1], sharded["transitions"][-1], sharded["failover"]):
            for p in t["processes"]:
                group = t["groups"].get(p["group"]) or {}
                lines.append(
                    f"| {t['label']} | {p['process']} | {p['spas']:,} "
                    f"| {'killed' if p['killed'] else 'yes' if p['active'] else 'standby'} "
                    f"| {_mib(p['rss_before_mib'])} | {_mib(p['rss_peak_mib'])} "
                    f"| {p['cpu_seconds']:.2f} s | {p['ms_per_group_write']:.2f} "
                    f"| {_s(group.get('last_seconds', math.nan))} |"
                )
        cold, start = one["cold_start"], sharded["start"]
        lines += [
            "",
            f"* objects created in {r['create_seconds']:.1f} s",
            f"* one process, cold start: synced {cold['synced_seconds']:.1f} s, all reconciled "
            f"{cold['ready_seconds']:.1f} s, {cold['writes']:,} writes",
            f"* shards started on the fleet in sync: synced {start['synced_seconds']:.1f} s, "
            f"all reconciled {start['ready_seconds']:.1f} s, {start['writes']} writes",
            "* peak RSS over each process's life (VmHWM): "
            + ", ".join(
                f"{p['process']} {p['peak_rss_mib']:.0f} MiB"
                for p in [*one["processes"], *sharded["processes"]]
            ),
        ]
        for t in transitions:
            lines.append(
                f"* {t['label']} at {t['boundary'][11:19]}: advance expected "
                f"{t['expected_advance_seconds']} s; idle {t['idle']['seconds']:.0f} s: "
                f"{sum(t['idle']['requests'].values())} requests; writes per object "
                f"{t['writes_per_object']}; by shard, last raise: "
                + ", ".join(
                    f"{group} {_s(g['last_seconds'])}" for group, g in sorted(t["groups"].items())
                )
            )
        f = sharded["failover"]["failover"]
        lines.append(
            f"* failover: {f['killed']} SIGKILLed at B{f['killed_seconds']:+.1f} s; "
            f"{f['standby']} acquired the Lease {f['lease_acquired_seconds']:.2f} s later "
            f"(seen by a watch after {f['lease_seen_seconds']:.2f} s), first write after "
            f"{f['first_write_seconds']:.2f} s; {f['raised_before_kill']} of {f['spas']} raised "
            f"before the kill, {f['raised_after_kill']} after; the shard's last raise "
            f"{_s(f['last_raise_seconds'])} against B: within B + the failover: "
            f"{'yes' if f['within_failover'] else 'NO'}"
        )
        lines.append(f"* load average (1, 5, 15 min) by stage: {r['loadavg']}")
        lines.append("")
    return "\n".join(lines)


def smoke_failures(result: dict[str, Any]) -> list[str]:
    """What the run shows wrong, as sentences: every HPA raised at each window start, no
    write between the move and the fleet, each HPA written once (but at the failover), no
    write when the shards start on a fleet in sync; the victim's Lease taken by its standby
    within the bound of leader election, which then wrote, and the shard raised by B + the
    failover."""
    n = result["n"]
    failures = []
    sharded = result["sharded"]
    transitions = [*result["one_process"]["transitions"], *sharded["transitions"]]
    for t in [*transitions, sharded["failover"]]:
        label = f"N={n}, {t['label']}"
        if not t["complete"]:
            failures.append(f"{label}: {t['fleet']['raised']} of {n} HPAs raised")
        if t["idle"]["writes"]:
            failures.append(f"{label}: writes between the move and the fleet: {t['idle']}")
    for t in transitions:
        once = t["writes_per_object"].get("patch horizontalpodautoscalers")
        if once != {1: n}:
            failures.append(f"N={n}, {t['label']}: HPA patches per HPA {once}, not once each")
    if sharded["start"]["writes"]:
        failures.append(f"N={n}: {sharded['start']['writes']} writes as the shards started")
    f = sharded["failover"]["failover"]
    if not f["lease_acquired_seconds"] <= FAILOVER_BOUND:
        failures.append(
            f"N={n}: the standby took the Lease {f['lease_acquired_seconds']} s after the kill "
            f"(bound {FAILOVER_BOUND:.0f} s)"
        )
    if not math.isfinite(f["first_write_seconds"]):
        failures.append(f"N={n}: the standby wrote nothing after taking the Lease")
    if not f["within_failover"]:
        failures.append(
            f"N={n}: shard {f['shard']}'s last raise {f['last_raise_seconds']} s after B, "
            f"later than the failover ({f['lease_acquired_seconds']} s)"
        )
    return failures


# `--smoke`: the whole scenario for a few SPAs in 2 shards, without warm-ups (3 boundaries).
SMOKE_SPAS = 6
SMOKE_SHARDS = 2
SMOKE_MARGIN = 12.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=positive_ints, default=[1000], help="comma-separated SPA counts"
    )
    parser.add_argument(
        "--shards", type=positive_int, default=4, help="controller shards, 2 or more (default 4)"
    )
    parser.add_argument(
        "--warm-ups",
        type=non_negative_int,
        default=1,
        help="window starts before the measured one, for the one process and for the shards "
        "(their Leases then carry a write time of their own; default 1)",
    )
    parser.add_argument(
        "--kill-before",
        type=seconds,
        default=30.0,
        help="the failover: seconds before B at which shard s0's active replica is SIGKILLed "
        "(default 30)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the raw results (JSON)")
    parser.add_argument("--keep", action="store_true", help="keep the work directories")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"a tiny run that checks itself ({SMOKE_SPAS} SPAs, {SMOKE_SHARDS} shards, no "
        f"warm-up, {SMOKE_MARGIN:.0f} s of margin): exit status 1 if a check fails "
        "(tests/bench/test_bench_smoke.py)",
    )
    args = parser.parse_args()
    if args.shards < 2:
        parser.error("--shards: 2 or more (one process is measured beside them anyway)")
    if args.smoke:
        args.sizes, args.shards, args.warm_ups = [SMOKE_SPAS], SMOKE_SHARDS, 0
    if min(args.sizes) < args.shards:
        parser.error(f"--sizes: at least one SPA per shard ({args.shards})")
    results = []
    for n in args.sizes:
        workdir = Path(tempfile.mkdtemp(prefix=f"spa-shards-{n}-"))
        try:
            results.append(
                ShardRun(
                    n,
                    args.shards,
                    workdir,
                    warm_ups=args.warm_ups,
                    kill_before=args.kill_before,
                    margin=SMOKE_MARGIN if args.smoke else 30.0,
                ).run()
            )
        except BaseException:
            # A failed run of two hours is worth its logs (every replica's, the plane's, the
            # audit log); etcd's data is not, and is gigabytes at 20,000 SPAs.
            if not args.keep:
                shutil.rmtree(workdir / "plane" / "etcd", ignore_errors=True)
            log(f"failed; its logs are kept in {workdir}")
            raise
        else:
            if args.keep:
                log(f"kept {workdir}")
            else:
                shutil.rmtree(workdir, ignore_errors=True)
    report = {"machine": machine(), "argv": sys.argv[1:], "results": results}
    write_json(args.out, report)
    print(json.dumps(report["machine"]))
    print(markdown(results))
    if args.smoke:
        failures = [failure for result in results for failure in smoke_failures(result)]
        return smoke_verdict(failures, ok=f"{len(results)} size(s), every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
