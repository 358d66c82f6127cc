"""Soak with an oracle: two `spa run` replicas, hundreds of SPAs whose windows open and close
every minute, random faults, and a check of every HPA write against the engine.

1. A private control plane (tests/testenv: etcd and kube-apiserver; no kube-controller-manager,
   as in bench/load.py) with an audit policy that records the controller's HPA writes with
   their bodies (RequestResponse) and its other requests at Metadata level.
2. N ScheduledPodAutoscalers (base 2/10), each with Schedules of 1-4 minute windows at random
   minutes of the run, in five time zones (UTC, Europe/Berlin, America/New_York, Asia/Kolkata,
   Australia/Lord_Howe), mostly Daily, some Weekly and OneShot, setting min, max or both (a few
   min-only ones above the base max, so max is raised to min). A share of the SPAs (`--shared`,
   a quarter) have one more window that raises them at one instant in the middle of the run,
   a shared boundary: the replicas write a fleet's raises ahead of it (docs/schedules.md,
   "Raises ahead of a shared boundary"), with a write time set (`--fleet-write-seconds`) so
   that this fleet of tens starts seconds early, as one of thousands would on a real API
   server, and at most `FLEET_MAX_ADVANCE_S` early. Another share (`--auto`, a quarter) have
   `leadTime: Auto`, with one of AUTO_BOUNDS each.
3. Two replicas of `spa run` with leader election, each as its own ServiceAccount (so the audit
   log says which replica sent what) through its own TCP proxy (so its connections can be cut),
   started through bench/steppedclock.py (so its wall clock can be stepped).
4. From a seeded RNG, a fault every 20-60 s, each logged with its time: connections cut
   (one replica or both), API server restart, every resourceVersion expired (etcd compaction
   and an API server restart: watches get 410 Gone), SIGKILL of a random replica, SIGKILL of
   the leader (the killed one is started again a few seconds later, as a kubelet would), and
   a wall-clock step of one replica (±10-40 s, undone 60-120 s later). Every 5 s: RSS, threads
   and open file descriptors of each replica from /proc.
5. The oracle: `spa.plan.build_plan` (the engine `spa plan` and the controller use) on the
   very manifests created gives every HPA's min/max at every instant, each Auto lead the one
   the controller published (leads_in_force), which is checked against the engine's
   (auto_report). The truth: the audit
   log's HPA writes (each with its time, its author and the object the server stored), and the
   HPAs listed at the end. Reported: transitions never applied (missed), writes that changed
   nothing (duplicates), writes of values the oracle never held around that time (wrong; a
   raise written ahead of its boundary by the rule and within `FLEET_MAX_ADVANCE_S` is not,
   and is counted apart; a removal before its boundary is),
   writes by a replica that was not the last to write the Lease (two leaders), writes that
   reached the server after their writer's renew deadline (the fence), and the lag
   from each transition to the write that applied it (p50/p99/max; all, near a fault, quiet).

    python bench/soak.py                     # `make soak`: 30 minutes, 200 SPAs
    SOAK_MINUTES=5 python bench/soak.py      # a quick run
    python bench/soak.py --smoke             # 2-3 minutes: 8 SPAs, 1 minute of windows

Progress goes to stderr, a Markdown summary to stdout, everything measured to soak.json in the
work directory (kept, and printed; `--out` writes a copy).
Exit status 1 if any transition was missed, any write was wrong or duplicated, two replicas
wrote as leaders, a write reached the server after its writer's renew deadline, an HPA was
wrong at the end, or an Auto lead published was not the engine's or changed. `--smoke`
(tests/bench/test_bench_smoke.py): the same run and checks at the smallest scale that still has
faults (see SMOKE below); it also fails when nothing was measured (no transition, no HPA write,
no fault, no HPA compared at the end, no transition of an Auto SPA), and removes its work
directory when it passes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fleet import DAYS, create_all, wait_for  # noqa: E402
from bench.measured import NOTHING_MEASURED, NothingMeasured, one_or_more_of, positive_int, seconds  # noqa: E402
from bench.plane import SA_NAME, SA_NAMESPACE, controller_plane  # noqa: E402
from bench.report import log, percentile, write_json  # noqa: E402
from spa.api import InvalidObject, parse_scheduled_pod_autoscaler  # noqa: E402
from spa.api.validation.leads import autoscaler_leads  # noqa: E402
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.kube import (  # noqa: E402
    HPA_V2,
    LEASE,
    ApiError,
    ApiUnavailable,
    BlockingKubeClient,
    connect_blocking,
)
from spa.plan import Document, build_plan  # noqa: E402
from tests.builders import autoscaler, schedule  # noqa: E402
from tests.testenv.audit import service_account_user  # noqa: E402
from tests.testenv.controlplane import ControlPlane  # noqa: E402
from tests.testenv.processes import ManagedProcess  # noqa: E402
from tests.testenv.proxy import TCPProxy  # noqa: E402

NAMESPACE = "soak"
LEASE_NAME = "spa-soak"
REPLICAS = {"a": SA_NAME, "b": "spa-soak-replica-b"}
USERS = {service_account_user(SA_NAMESPACE, sa): replica for replica, sa in REPLICAS.items()}
PYTHON = Path(sys.executable)
ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]
BASE_MIN, BASE_MAX = 2, 10
FAULTS = {  # name: weight
    "cut": 3,
    "apiserver-restart": 1,
    "expire-410": 1,
    "kill-replica": 1,
    "kill-leader": 1,
    "clock-step": 1,
}
# A write may have been decided just before a boundary and landed just after it.
BOUNDARY_RACE_S = 2.0
# The replicas' --fleet-max-advance: no raise is written earlier than this before its boundary
# (docs/schedules.md, "Raises ahead of a shared boundary"); the oracle accepts no earlier one.
FLEET_MAX_ADVANCE_S = 30
# `spa run`'s renew deadline: a leader stops writing this long after it sent its last successful
# renewal (docs/runtime.md), so no write of it may reach the server later than that.
RENEW_DEADLINE_S = 10.0
# A transition counts as "near a fault" if a fault began this long before it or while it waited,
# or if it fell while a replica's clock was stepped.
FAULT_SHADOW_S = 30.0
# Seconds between two reads of the Auto SPAs' status.leadTime during the run.
LEAD_SAMPLE_S = 15.0
# The Auto lead times of the mix (`--auto`, docs/schedules.md, "Auto lead times"): each Auto SPA
# gets one of these leadTimeBounds (None: none). The soak's targets are never Ready (no
# kube-controller-manager, and the controller may not read them), so every window is recorded
# Missed and Auto keeps its default (2m), clamped to the bounds: 2m, 45s and 150s in force.
AUTO_BOUNDS: tuple[dict[str, str] | None, ...] = (None, {"max": "45s"}, {"min": "150s"})
# `--smoke`: 8 SPAs, windows in 1 minute that begins 15-75 s after the start; every kind of
# fault once (in a seeded order), 3-6 s apart, from 3 s after its first boundary until 10 s
# before its last; clock steps undone after 10-20 s; the HPAs listed 30 s after the last
# boundary (time for a killed leader's successor to take the Lease and catch up).
SMOKE = {
    "spas": 8,
    "minutes": 1,
    "lead": 15.0,
    "settle": 30.0,
    "fault_gap": (3.0, 6.0),
    "fault_window": (3.0, 10.0),
    "clock_undo": (10.0, 20.0),
    "each_kind_once": True,
    # Half the SPAs share one boundary, with a write time that starts those 4 about 3 s ahead.
    "shared": 0.5,
    "fleet_write_seconds": 0.5,
    # A quarter (2) with leadTime: Auto, bounded to 10 s so that their raises fall in the
    # smoke's minute (the first window is `lead` + 10 s after the start).
    "auto": 0.25,
    "auto_bounds": ({"max": "10s"},),
}


# -- the fleet ------------------------------------------------------------------------------------


def window(rng: random.Random, start: datetime, minutes: int) -> dict[str, Any]:
    """A Schedule spec for [start, start + minutes) in a random zone and type."""
    zone = rng.choice(ZONES)
    begin = start.astimezone(ZoneInfo(zone))
    end = (start + timedelta(minutes=minutes)).astimezone(ZoneInfo(zone))
    kind = rng.choices(["Daily", "Weekly", "OneShot"], weights=[6, 2, 2])[0]
    spec: dict[str, Any] = {"type": kind, "timeZone": zone}
    if kind == "OneShot":
        spec |= {"startTime": f"{begin:%Y-%m-%dT%H:%M}", "endTime": f"{end:%Y-%m-%dT%H:%M}"}
    else:
        spec |= {"startTime": f"{begin:%H:%M}", "endTime": f"{end:%H:%M}"}
    if kind == "Weekly":
        # The window belongs to the day it starts on (docs/schedules.md).
        spec |= {"startDayOfWeek": DAYS[begin.weekday()], "endDayOfWeek": DAYS[begin.weekday()]}
    bounds = rng.choices(["min", "max", "both", "min-over-max"], weights=[4, 3, 4, 1])[0]
    if bounds == "min":
        spec["minReplicas"] = rng.randint(3, 8)
    elif bounds == "max":
        spec["maxReplicas"] = rng.randint(11, 20)
    elif bounds == "both":
        spec |= {"minReplicas": rng.randint(3, 6), "maxReplicas": rng.randint(11, 15)}
    else:
        spec["minReplicas"] = rng.randint(BASE_MAX + 1, BASE_MAX + 4)
    return spec


def fleet(
    rng: random.Random,
    spas: int,
    first: datetime,
    minutes: int,
    shared: float = 0.0,
    auto: float = 0.0,
    auto_bounds: tuple[dict[str, str] | None, ...] = AUTO_BOUNDS,
) -> list[dict[str, Any]]:
    """The SPAs and their Schedules: about one window per 4 minutes of run per SPA, starting
    at random minutes in [first, first + minutes), lasting 1-4 minutes; then, for a `shared`
    share of the SPAs, one more window (`-fleet`) that raises them at the run's middle minute;
    then an `auto` share of the SPAs (rounded) with `leadTime: Auto` and one of `auto_bounds`
    each. Each part is drawn after the ones before, so that those are a run's without it."""
    objects: list[dict[str, Any]] = []
    per_spa = max(2, minutes // 4)
    for index in range(spas):
        name = f"app-{index:03d}"
        objects.append(
            autoscaler(name=name, namespace=NAMESPACE, minReplicas=BASE_MIN, maxReplicas=BASE_MAX)
        )
        for number in range(per_spa):
            start = first + timedelta(minutes=rng.randrange(minutes))
            objects.append(
                schedule(
                    name=f"{name}-w{number}",
                    namespace=NAMESPACE,
                    target=name,
                    **window(rng, start, rng.randint(1, 4)),
                )
            )
    shared_start = first + timedelta(minutes=minutes // 2)
    for index in range(spas):
        if rng.random() >= shared:
            continue
        spec = window(rng, shared_start, rng.randint(1, 3))
        # A raise at its start, whatever else is in force: min above the base, and max.
        spec |= {"minReplicas": rng.randint(3, 8), "maxReplicas": rng.randint(11, 16)}
        name = f"app-{index:03d}"
        objects.append(schedule(name=f"{name}-fleet", namespace=NAMESPACE, target=name, **spec))
    autoscalers = [obj for obj in objects if obj["kind"] != "Schedule"]
    for index in sorted(rng.sample(range(spas), round(auto * spas))):
        spec = autoscalers[index]["spec"]
        spec["leadTime"] = "Auto"
        if (bounds := rng.choice(auto_bounds)) is not None:
            spec["leadTimeBounds"] = dict(bounds)
    return objects


def is_auto_autoscaler(obj: dict[str, Any]) -> bool:
    return obj["kind"] != "Schedule" and bool(obj["spec"].get("leadTime") == "Auto")


def engine_lead(obj: dict[str, Any]) -> tuple[int, str]:
    """What the engine says is an Auto SPA's pod lead in force, seconds and source, from its
    spec and the status.windows it carries (none: the default, clamped to its bounds): the
    value `spa plan -f` and `spa plan --from-cluster` give, and the controller must use."""
    body = {key: obj[key] for key in ("apiVersion", "kind", "metadata", "spec")}
    windows = (obj.get("status") or {}).get("windows")
    if windows:
        body["status"] = {"windows": windows}
    try:
        lead = autoscaler_leads(parse_scheduled_pod_autoscaler(body)).pods
    except InvalidObject as invalid:
        raise RuntimeError(f"the soak's SPA does not parse: {invalid.errors[:3]}") from None
    return lead.seconds, lead.source.value


def longest_auto_lead(auto_bounds: tuple[dict[str, str] | None, ...]) -> int:
    """The longest lead an Auto SPA of the mix starts with: the run's first window comes that
    much later, so that every raise falls after the fleet was created."""
    spa = autoscaler(name="probe", namespace=NAMESPACE, leadTime="Auto")
    return max(
        engine_lead(spa | {"spec": spa["spec"] | ({"leadTimeBounds": b} if b else {})})[0]
        for b in auto_bounds
    )


# -- the replicas -----------------------------------------------------------------------------


class Replica:
    """One `spa run` process (restartable), its proxy and its wall-clock offset file."""

    def __init__(
        self, name: str, plane: ControlPlane, workdir: Path, fleet_write_seconds: float = 0.0
    ) -> None:
        self.name = name
        self.proxy = TCPProxy("127.0.0.1", plane.ports.apiserver).start()
        kubeconfig = plane.service_account_kubeconfig(
            SA_NAMESPACE,
            REPLICAS[name],
            path=workdir / f"replica-{name}.kubeconfig",
            server=self.proxy.url,
            create=False,
        )
        self.clock_file = workdir / f"replica-{name}.clock-offset"
        self.clock_file.write_text("0\n")
        self.offset = 0.0
        self.log_path = workdir / f"replica-{name}.log"
        self.process = ManagedProcess(
            f"spa-{name}",
            [
                str(PYTHON),
                str(REPO / "bench" / "steppedclock.py"),
                "run",
                "--kubeconfig",
                str(kubeconfig),
                "--namespace",
                NAMESPACE,
                "--metrics-addr",
                "127.0.0.1:0",
                "--probe-addr",
                "127.0.0.1:0",
                "--enable-leader-election",
                "--leader-election-namespace",
                SA_NAMESPACE,
                "--leader-election-id",
                LEASE_NAME,
                "--fleet-max-advance",
                str(FLEET_MAX_ADVANCE_S),
                *(
                    ["--fleet-write-seconds", str(fleet_write_seconds)]
                    if fleet_write_seconds
                    else []
                ),
            ],
            self.log_path,
            env={
                **os.environ,
                "KUBECONFIG": "",
                "SPA_STEPPED_CLOCK_FILE": str(self.clock_file),
                "PYTHONPATH": str(REPO),
            },
        )
        self.starts: list[float] = []

    def start(self) -> None:
        self.process.start()
        self.starts.append(time.time())

    def kill(self) -> None:
        self.process.kill()

    def step_clock(self, offset: float) -> None:
        self.offset = offset
        self.clock_file.write_text(f"{offset}\n")

    def identity(self) -> str:
        """The Lease identity of the running process ("" before it campaigns)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        marker = text.rfind("\n=== ")  # ManagedProcess marks each start
        for line in text[marker:].splitlines():
            if "campaigning for lease" in line:
                try:
                    return str(json.loads(line)["msg"]).rsplit(" as ", 1)[1]
                except (ValueError, KeyError, IndexError):
                    continue
        return ""

    def close(self) -> None:
        self.process.stop(timeout=10)
        self.proxy.close()


# -- observing ----------------------------------------------------------------------------------


class Sampler:
    """RSS, threads and open file descriptors of each replica every `period` s, from /proc."""

    def __init__(self, replicas: dict[str, Replica], period: float = 5.0) -> None:
        self.replicas = replicas
        self.period = period
        self.samples: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="sampler")

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            load = Path("/proc/loadavg").read_text().split()[0]
            for name, replica in self.replicas.items():
                pid = replica.process.pid
                if pid is None or not replica.process.running:
                    continue
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    fds = len(os.listdir(f"/proc/{pid}/fd"))
                except OSError:
                    continue
                fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
                self.samples.append(
                    {
                        "time": time.time(),
                        "replica": name,
                        "pid": pid,
                        "rss_mib": int(fields["VmRSS"].split()[0]) / 1024,
                        "threads": int(fields["Threads"]),
                        "fds": fds,
                        "load1": float(load),
                    }
                )

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


@dataclass
class Fault:
    kind: str
    began: float
    ended: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)


class Faults:
    """Injects a random fault every `gap` (20-60) s from `first` to `last` (seeded)."""

    def __init__(
        self,
        seed: int,
        plane: ControlPlane,
        replicas: dict[str, Replica],
        admin: BlockingKubeClient,
        journal: Path,
        gap: tuple[float, float],
        kinds: list[str],
        clock_undo: tuple[float, float] = (60.0, 120.0),
        each_once: bool = False,
    ) -> None:
        self.rng = random.Random(seed)
        self.gap = gap
        self.kinds = kinds
        self.clock_undo = clock_undo
        self.each_once = each_once
        self.plane = plane
        self.replicas = replicas
        self.admin = admin
        self.journal = journal
        self.done: list[Fault] = []
        self._stop = threading.Event()
        self._pending: list[tuple[float, str, Any]] = []  # (when, what, replica) to undo
        # Held by this thread while it kills or restarts a replica and changes `_pending`, and
        # by the run's loop while it restarts a replica that exited by itself: without it, that
        # loop could see a replica just killed by a fault before its restart was pending, start
        # it, and this thread's own restart then failed ("already running"), ending the faults.
        self.lock = threading.Lock()
        self._stepped_at: dict[str, float] = {}
        self._thread = threading.Thread(target=self._run, daemon=True, name="faults")
        self._first = 0.0
        self._last = 0.0

    def start(self, first: float, last: float) -> Faults:
        self._first, self._last = first, last
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=300)

    def _record(self, fault: Fault) -> None:
        self.done.append(fault)
        entry = {"kind": fault.kind, "began": fault.began, "ended": fault.ended, **fault.detail}
        with self.journal.open("a") as out:
            out.write(json.dumps(entry) + "\n")
        at = datetime.fromtimestamp(fault.began, UTC).strftime("%H:%M:%S.%f")[:-3]
        log(f"fault {fault.kind} at {at} ({fault.ended - fault.began:.1f} s) {fault.detail}")

    def _leader(self) -> str | None:
        try:
            lease = self.admin.get(LEASE, SA_NAMESPACE, LEASE_NAME, request_timeout=10)
        except (ApiError, ApiUnavailable):
            return None
        holder = (lease.get("spec") or {}).get("holderIdentity") or ""
        for name, replica in self.replicas.items():
            if replica.process.running and holder and replica.identity() == holder:
                return name
        return None

    def _run(self) -> None:
        if self._stop.wait(max(0.0, self._first - time.time())):
            return
        # each_once (the smoke): every kind once, in a seeded order; one that was skipped (a
        # leader killed before this one's successor took the Lease) comes again later.
        queue = self.rng.sample(self.kinds, len(self.kinds)) if self.each_once else []
        while not self._stop.is_set() and (queue or not self.each_once):
            due = time.time() + self.rng.uniform(*self.gap)
            if due > self._last:
                break
            if self._wait_undoing(due):
                break
            if self.each_once:
                kind = queue.pop(0)
            else:
                kind = self.rng.choices(self.kinds, weights=[FAULTS[k] for k in self.kinds])[0]
            self._inject(kind)
            if self.each_once and "skipped" in self.done[-1].detail:
                queue.append(kind)
        # Everything undone before the quiet tail.
        while self._pending and not self._stop.is_set():
            self._wait_undoing(min(self._pending)[0])

    def _wait_undoing(self, until: float) -> bool:
        """Wait until `until`, restarting killed replicas and undoing clock steps when each is
        due; True if stopped."""
        while True:
            self._undo_due()
            now = time.time()
            if now >= until:
                return False
            wake = min([until, *(when for when, _, _ in self._pending)])
            if self._stop.wait(max(0.0, wake - now)):
                return True

    def _undo_due(self) -> None:
        now = time.time()
        due = [item for item in self._pending if item[0] <= now]
        for item in due:
            _, what, name = item
            replica = self.replicas[name]
            fault = Fault(what, time.time(), detail={"replica": name})
            if what == "restart":
                with self.lock:
                    self._pending.remove(item)
                    replica.start()
            elif what == "clock-back":
                self._pending.remove(item)
                began = self._stepped_at.pop(name)
                fault.detail |= {"stepped_at": began, "offset_was": replica.offset}
                replica.step_clock(0.0)
            fault.ended = time.time()
            self._record(fault)

    def _inject(self, kind: str) -> None:
        rng = self.rng
        fault = Fault(kind, time.time())
        if kind == "cut":
            target = rng.choice(["a", "b", "both"])
            names = ["a", "b"] if target == "both" else [target]
            fault.detail = {
                "replica": target,
                "connections": sum(self.replicas[n].proxy.cut() for n in names),
            }
        elif kind == "apiserver-restart":
            self.plane.restart_apiserver(timeout=120)
        elif kind == "expire-410":
            fault.detail = {"compacted_revision": self.plane.expire_resource_versions(timeout=120)}
        elif kind in ("kill-replica", "kill-leader"):
            name = rng.choice(["a", "b"]) if kind == "kill-replica" else self._leader()
            if name is None or not self.replicas[name].process.running:
                fault.detail = {"skipped": "no running leader" if name is None else "not running"}
            else:
                delay = rng.uniform(2, 8)
                with self.lock:
                    self.replicas[name].kill()
                    self._pending.append((time.time() + delay, "restart", name))
                fault.detail = {"replica": name, "restart_after_s": round(delay, 1)}
        elif kind == "clock-step":
            name = rng.choice(["a", "b"])
            replica = self.replicas[name]
            if replica.offset:
                fault.detail = {"skipped": f"replica {name} already stepped"}
            else:
                offset = rng.choice([-1, 1]) * rng.uniform(10, 40)
                replica.step_clock(round(offset, 1))
                self._stepped_at[name] = time.time()
                undo = rng.uniform(*self.clock_undo)
                self._pending.append((time.time() + undo, "clock-back", name))
                fault.detail = {
                    "replica": name,
                    "leader": self._leader(),
                    "offset_s": replica.offset,
                    "undo_after_s": round(undo, 1),
                }
        fault.ended = time.time()
        self._record(fault)


# -- the truth: the audit log -------------------------------------------------------------------


def audit_policy_for_soak(users_by_name: dict[str, str] | None = None) -> dict[str, Any]:
    """HPA writes with their bodies, every other request at Metadata level, of `users_by_name`
    (user name: replica; the soak's two replicas by default; tests/upgrade passes its own)."""
    users = list(USERS if users_by_name is None else users_by_name)
    return {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Policy",
        "omitStages": ["RequestReceived"],
        "rules": [
            {
                "level": "RequestResponse",
                "users": users,
                "verbs": ["create", "update", "patch"],
                "resources": [{"group": "autoscaling", "resources": ["horizontalpodautoscalers"]}],
            },
            {"level": "Metadata", "users": users},
            {"level": "None"},
        ],
    }


def _instant(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True)
class Write:
    hpa: str
    replica: str
    verb: str
    received: float
    completed: float
    version: int
    bounds: tuple[int, int]


@dataclass
class Truth:
    writes: list[Write]  # successful HPA writes, in resourceVersion order per HPA
    lease_writes: list[tuple[float, float, str]]  # (received, completed, replica), 2xx only
    requests: Counter[tuple[str, str, str, int]]  # (replica, verb, resource, code)


def read_audit(
    path: Path, users: dict[str, str] | None = None, lease_name: str = LEASE_NAME
) -> Truth:
    """What `users` (user name: replica; the soak's by default) wrote, from the audit log."""
    replicas = USERS if users is None else users
    writes: list[Write] = []
    lease: list[tuple[float, float, str]] = []
    requests: Counter[tuple[str, str, str, int]] = Counter()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("stage") != "ResponseComplete":
                continue
            replica = replicas.get((entry.get("user") or {}).get("username", ""))
            if replica is None:
                continue
            ref = entry.get("objectRef") or {}
            resource = str(ref.get("resource") or "-")
            if ref.get("subresource"):
                resource += "/" + ref["subresource"]
            code = int((entry.get("responseStatus") or {}).get("code") or 0)
            verb = str(entry.get("verb"))
            requests[(replica, verb, resource, code)] += 1
            ok = 200 <= code < 300 and "dryRun=" not in str(entry.get("requestURI"))
            if not ok or verb not in ("create", "update", "patch"):
                continue
            received = _instant(entry["requestReceivedTimestamp"])
            completed = _instant(entry["stageTimestamp"])
            if resource == "leases" and ref.get("name") == lease_name:
                lease.append((received, completed, replica))
            elif resource == "horizontalpodautoscalers":
                stored = entry.get("responseObject") or {}
                spec = stored.get("spec") or {}
                writes.append(
                    Write(
                        hpa=str(ref.get("name")),
                        replica=replica,
                        verb=verb,
                        received=received,
                        completed=completed,
                        version=int(stored["metadata"]["resourceVersion"]),
                        bounds=(int(spec.get("minReplicas") or 1), int(spec["maxReplicas"])),
                    )
                )
    writes.sort(key=lambda write: (write.hpa, write.version))
    lease.sort()
    return Truth(writes, lease, requests)


# -- the oracle and the comparison --------------------------------------------------------------


def leads_in_force(
    objects: list[dict[str, Any]], statuses: dict[str, dict[str, Any]]
) -> dict[str, int]:
    """The lead in force of each Auto SPA and of each of its Schedules, in seconds, by name,
    as the controller published it in the SPA's status (`statuses`: by SPA name, as listed at
    the end): a Schedule's from its window's status.windows entry (`lead`, the lead in force
    for that window start), any other (a max-only window is not recorded) the SPA's
    status.leadTime; without either, what the engine says (engine_lead)."""
    leads: dict[str, int] = {}
    for obj in objects:
        if not is_auto_autoscaler(obj):
            continue
        name = obj["metadata"]["name"]
        status = statuses.get(name) or {}
        published = (status.get("leadTime") or {}).get("seconds")
        leads[name] = int(published) if published is not None else engine_lead(obj)[0]
        for entry in status.get("windows") or []:  # newest first: the newest of a Schedule
            seconds = (entry.get("lead") or {}).get("seconds")
            if seconds is not None and entry.get("schedule"):
                leads.setdefault(str(entry["schedule"]), int(seconds))
    return leads


def with_leads(objects: list[dict[str, Any]], leads: dict[str, int]) -> list[dict[str, Any]]:
    """The manifests with each lead of `leads` (by object name) written as a duration in
    place of Auto (an SPA's bounds dropped: they bound Auto only)."""
    written = []
    for obj in objects:
        seconds = leads.get(obj["metadata"]["name"])
        if seconds is None:
            written.append(obj)
            continue
        spec = {key: value for key, value in obj["spec"].items() if key != "leadTimeBounds"}
        written.append(obj | {"spec": spec | {"leadTime": f"{seconds}s"}})
    return written


class Oracle:
    """Every HPA's min/max at every instant, from the engine on the created manifests, with
    each Auto lead the one in force (`leads`, leads_in_force: what the controller published;
    an Auto lead not given there is planned as `spa plan -f` plans it, at its default)."""

    def __init__(
        self,
        objects: list[dict[str, Any]],
        at: int,
        until: int,
        leads: dict[str, int] | None = None,
    ) -> None:
        leads = leads or {}
        objects = with_leads(objects, leads)
        # Per HPA: the longest lead of the SPA and its Schedules (its raises come that much
        # before the first window's boundary).
        self.leads: dict[str, int] = {}
        for obj in objects:
            spec, name = obj["spec"], obj["metadata"]["name"]
            hpa = spec["scaleTargetRef"]["name"] if obj["kind"] == "Schedule" else name
            if name in leads:
                self.leads[hpa] = max(self.leads.get(hpa, 0), leads[name])
        documents = [
            Document(file="soak", index=number + 1, body=obj) for number, obj in enumerate(objects)
        ]
        plan = build_plan(documents, [], at=at, until=until)
        if plan.errors:
            raise RuntimeError(f"the soak's own manifests do not plan: {plan.errors[:3]}")
        self.at = at
        # Per HPA: [(instant, (min, max))], the first at `at`; only changes of min/max (a
        # transition that only changes the set of active Schedules does not touch the HPA).
        self.steps: dict[str, list[tuple[float, tuple[int, int]]]] = {}
        self.max_raised = 0
        for entry in plan.autoscalers:
            steps = [(float(at), (entry.state.min_replicas, entry.state.max_replicas))]
            for instant, state in entry.transitions:
                bounds = (state.min_replicas, state.max_replicas)
                self.max_raised += state.max_raised
                if bounds != steps[-1][1]:
                    steps.append((float(instant), bounds))
            self.steps[entry.name] = steps

    def at_instant(self, hpa: str, instant: float) -> tuple[int, int]:
        current = self.steps[hpa][0][1]
        for when, bounds in self.steps[hpa]:
            if when > instant:
                break
            current = bounds
        return current

    def held_between(self, hpa: str, low: float, high: float) -> set[tuple[int, int]]:
        held = {self.at_instant(hpa, low)}
        held.update(bounds for when, bounds in self.steps[hpa] if low < when <= high)
        return held

    def raised_ahead(
        self, hpa: str, bounds: tuple[int, int], low: float, high: float
    ) -> float | None:
        """How many seconds before its boundary a write of `bounds`, decided in [low, high],
        raised the HPA by the rule of raises ahead of a shared boundary (docs/schedules.md):
        each bound the higher of the one in force and the next boundary's, adding capacity,
        at most FLEET_MAX_ADVANCE_S before it. None: no such raise (a removal before its
        boundary never is one)."""
        for decided in (low, high):
            now = self.at_instant(hpa, decided)
            upcoming = next(((w, b) for w, b in self.steps[hpa] if w > decided), None)
            if upcoming is None or upcoming[0] - decided > FLEET_MAX_ADVANCE_S:
                continue
            ahead = upcoming[1]
            merged = (max(now[0], ahead[0]), max(now[1], ahead[1]))
            if merged == bounds and merged != now:
                return upcoming[0] - high
        return None


def distribution(values: list[float]) -> dict[str, float]:
    return {
        "count": len(values),
        "p50_s": round(percentile(values, 50), 3),
        "p99_s": round(percentile(values, 99), 3),
        "max_s": round(max(values), 3) if values else math.nan,
    }


def compare(
    oracle: Oracle,
    truth: Truth,
    fault_starts: list[float],
    clock_steps: list[tuple[str, float, float, float]],
    first: float,
    last: float,
    settle_end: float,
    auto: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The run's truth against the oracle; `auto`: the HPAs of the Auto SPAs, whose
    transitions and lag are also counted apart."""
    by_hpa: dict[str, list[Write]] = {}
    for write in truth.writes:
        by_hpa.setdefault(write.hpa, []).append(write)

    def stepped_offset(replica: str, instant: float) -> float:
        for name, began, ended, offset in clock_steps:
            if name == replica and began <= instant <= ended:
                return offset
        return 0.0

    missed: list[dict[str, Any]] = []
    lags_all: list[float] = []
    lags_fault: list[float] = []
    lags_quiet: list[float] = []
    lags_auto: list[float] = []
    slowest: list[tuple[float, str, float]] = []
    transitions = transitions_auto = 0
    for hpa, steps in oracle.steps.items():
        history = by_hpa.get(hpa, [])
        # An Auto SPA's raises come its lead before their boundaries (from `first` on).
        since = first - oracle.leads.get(hpa, 0)
        for number, (instant, bounds) in enumerate(steps):
            if instant < since or instant > last:
                continue
            transitions += 1
            transitions_auto += hpa in auto
            until = steps[number + 1][0] if number + 1 < len(steps) else settle_end
            held = [w for w in history if w.completed <= instant]
            if held and held[-1].bounds == bounds:
                reached: float | None = instant  # written early (a stepped clock)
            else:
                reached = next(
                    (
                        w.completed
                        for w in history
                        if instant < w.completed < until and w.bounds == bounds
                    ),
                    None,
                )
            if reached is None:
                missed.append(
                    {"hpa": hpa, "at": instant, "bounds": bounds, "next_transition": until}
                )
                continue
            lag = reached - instant
            lags_all.append(lag)
            if hpa in auto:
                lags_auto.append(lag)
            near = any(
                instant - FAULT_SHADOW_S <= began <= reached for began in fault_starts
            ) or any(began <= instant <= ended for _, began, ended, _ in clock_steps)
            (lags_fault if near else lags_quiet).append(lag)
            slowest.append((lag, hpa, instant))

    duplicates: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    clock_consistent: list[dict[str, Any]] = []
    early: list[dict[str, Any]] = []
    for hpa, history in by_hpa.items():
        previous: tuple[int, int] | None = None
        for write in history:
            described = {
                "hpa": hpa,
                "replica": write.replica,
                "verb": write.verb,
                "received": write.received,
                "completed": write.completed,
                "bounds": write.bounds,
            }
            low, high = write.received - BOUNDARY_RACE_S, write.completed
            offset = stepped_offset(write.replica, write.received)
            if write.bounds == previous:
                duplicates.append(described)
            elif write.bounds not in oracle.held_between(hpa, low, high):
                ahead = oracle.raised_ahead(hpa, write.bounds, low, high)
                if ahead is not None:
                    early.append(described | {"before_boundary_s": round(ahead, 3)})
                elif offset and (
                    write.bounds in oracle.held_between(hpa, low + offset, high + offset)
                    or oracle.raised_ahead(hpa, write.bounds, low + offset, high + offset)
                    is not None
                ):
                    clock_consistent.append(described | {"clock_offset_s": offset})
                else:
                    wrong.append(
                        described
                        | {
                            "expected": oracle.at_instant(hpa, write.completed),
                            "clock_offset_s": offset,
                        }
                    )
            previous = write.bounds

    # Two leaders: an HPA write by a replica that was not the last to write the Lease.
    not_leader: list[dict[str, Any]] = []
    for write in truth.writes:
        before = [entry for entry in truth.lease_writes if entry[1] <= write.received]
        if before and before[-1][2] != write.replica:
            not_leader.append(
                {
                    "hpa": write.hpa,
                    "replica": write.replica,
                    "received": write.received,
                    "lease_last_written_by": before[-1][2],
                    "lease_written_at": before[-1][1],
                }
            )

    # Fencing: an HPA write received more than the renew deadline after its writer's last
    # successful Lease write was received (the renewal was sent no later than that, so the
    # writer's own deadline had certainly passed).
    after_deadline: list[dict[str, Any]] = []
    for write in truth.writes:
        own = [entry for entry in truth.lease_writes if entry[2] == write.replica]
        renewed = [received for received, _, _ in own if received <= write.received]
        if renewed and write.received - renewed[-1] > RENEW_DEADLINE_S:
            after_deadline.append(
                {
                    "hpa": write.hpa,
                    "replica": write.replica,
                    "received": write.received,
                    "completed": write.completed,
                    "last_renewal_received": renewed[-1],
                    "seconds_after_renewal": round(write.received - renewed[-1], 3),
                }
            )

    slowest.sort(reverse=True)
    return {
        "transitions": transitions,
        "transitions_auto": transitions_auto,
        "hpa_writes": len(truth.writes),
        "hpa_writes_by_replica": dict(Counter(write.replica for write in truth.writes)),
        "missed": missed,
        "duplicates": duplicates,
        "wrong": wrong,
        "clock_consistent": clock_consistent,
        "raised_ahead": early,
        "not_leader": not_leader,
        "after_renew_deadline": after_deadline,
        "lag_all": distribution(lags_all),
        "lag_near_fault": distribution(lags_fault),
        "lag_quiet": distribution(lags_quiet),
        "lag_auto": distribution(lags_auto),
        "slowest": [
            {"lag_s": round(lag, 3), "hpa": hpa, "at": instant}
            for lag, hpa, instant in slowest[:10]
        ],
    }


def resources_summary(samples: list[dict[str, Any]], after: float) -> list[dict[str, Any]]:
    """Per process (replica and pid): first and last sample after `after`, and the extremes."""
    rows: list[dict[str, Any]] = []
    keys = sorted({(s["replica"], s["pid"]) for s in samples}, key=lambda k: k[1])
    for replica, pid in keys:
        mine = [s for s in samples if s["pid"] == pid and s["time"] >= after]
        if len(mine) < 2:
            continue
        row: dict[str, Any] = {
            "replica": replica,
            "pid": pid,
            "minutes": round((mine[-1]["time"] - mine[0]["time"]) / 60, 1),
        }
        for metric in ("rss_mib", "threads", "fds"):
            values = [s[metric] for s in mine]
            row[metric] = {
                "first": round(values[0], 1),
                "min": round(min(values), 1),
                "max": round(max(values), 1),
                "last": round(values[-1], 1),
            }
        rows.append(row)
    return rows


# -- the run ------------------------------------------------------------------------------------


def setup_rbac(plane: ControlPlane) -> None:
    """The project's roles (config/rbac, replica a's) bound to replica b's ServiceAccount."""
    account = f"--serviceaccount={SA_NAMESPACE}:{REPLICAS['b']}"
    election_role = "--role=scheduled-pod-autoscaler-leader-election"
    commands = [
        ["create", "serviceaccount", REPLICAS["b"], "-n", SA_NAMESPACE],
        ["create", "clusterrolebinding", REPLICAS["b"], "--clusterrole=scheduled-pod-autoscaler"],
        ["create", "rolebinding", REPLICAS["b"], "-n", SA_NAMESPACE, election_role],
    ]
    for command in commands:
        binding = command[1] in ("clusterrolebinding", "rolebinding")
        plane.run_kubectl(*command, *([account] if binding else []), check=True)


def run(args: argparse.Namespace, workdir: Path) -> None:
    """The run itself; everything observed goes to `workdir` for analyze()."""
    with controller_plane(
        workdir / "plane",
        namespaces=[NAMESPACE],
        start_timeout=120,
        audit_policy=audit_policy_for_soak(),
        controller_manager=False,
    ) as plane:
        setup_rbac(plane)
        _run(args, workdir, plane)


def _run(args: argparse.Namespace, workdir: Path, plane: ControlPlane) -> None:
    rng = random.Random(args.seed)
    replicas: dict[str, Replica] = {}
    sampler: Sampler | None = None
    faults: Faults | None = None
    admin = connect_blocking(kubeconfig=str(plane.kubeconfig), pool_size=16)
    try:
        began = datetime.now(UTC)
        auto_lead = longest_auto_lead(args.auto_bounds) if args.auto else 0
        first_dt = began + timedelta(seconds=args.lead + auto_lead)
        first_dt = first_dt.replace(second=0, microsecond=0) + timedelta(minutes=1)
        first = first_dt.timestamp()
        last = first + args.minutes * 60
        objects = fleet(
            rng, args.spas, first_dt, args.minutes, args.shared, args.auto, args.auto_bounds
        )
        auto_names = {obj["metadata"]["name"] for obj in objects if is_auto_autoscaler(obj)}
        (workdir / "manifests.json").write_text(json.dumps(objects))
        log(f"creating {len(objects)} objects; windows {first_dt:%H:%M} + {args.minutes} min")
        create_all(
            admin,
            NAMESPACE,
            [
                (SCHEDULED_POD_AUTOSCALERS if obj["kind"] != "Schedule" else SCHEDULES, obj)
                for obj in objects
            ],
            threads=8,
        )
        for name in REPLICAS:
            replicas[name] = Replica(name, plane, workdir, args.fleet_write_seconds)
            replicas[name].start()
        sampler = Sampler(replicas).start()
        started = time.time()
        if wait_for(
            lambda: len(admin.list(HPA_V2, namespace=NAMESPACE).items) == args.spas,
            within=max(60.0, first - time.time() - 5),
            what="every HPA created (the first transitions will show it as lag)",
        ):
            log(f"{args.spas} HPAs after {time.time() - started:.1f} s")
        faults = Faults(
            args.seed,
            plane,
            replicas,
            admin,
            workdir / "faults.jsonl",
            args.fault_gap,
            args.kinds,
            args.clock_undo,
            args.each_kind_once,
        )
        faults.start(first + args.fault_window[0], last - args.fault_window[1])
        settle_end = last + args.settle
        exits: list[dict[str, Any]] = []
        lead_samples: list[list[Any]] = []
        sampled = 0.0
        while time.time() < settle_end:
            time.sleep(5)
            if auto_names and time.time() - sampled >= LEAD_SAMPLE_S:
                sampled = time.time()
                lead_samples += sample_leads(admin, auto_names)
            for name, replica in replicas.items():
                with faults.lock:
                    pending = any(item[2] == name for item in faults._pending)
                    if replica.process.running or pending or not replica.starts:
                        continue
                    code = replica.process.returncode
                    log(f"replica {name} exited ({code}); starting it again")
                    exits.append({"replica": name, "at": time.time(), "code": code})
                    replica.start()
        faults.stop()
        sampler.stop()
        listed_at = time.time()
        final = {
            hpa["metadata"]["name"]: (hpa["spec"].get("minReplicas", 1), hpa["spec"]["maxReplicas"])
            for hpa in admin.list(HPA_V2, namespace=NAMESPACE).items
        }
        auto_status = {
            spa["metadata"]["name"]: {
                key: (spa.get("status") or {}).get(key) for key in ("leadTime", "windows")
            }
            for spa in admin.list(SCHEDULED_POD_AUTOSCALERS, namespace=NAMESPACE).items
            if spa["metadata"]["name"] in auto_names
        }
        record = {
            "seed": args.seed,
            "spas": args.spas,
            "minutes": args.minutes,
            "first": first,
            "last": last,
            "started": started,
            "settle_end": settle_end,
            "listed_at": listed_at,
            "final": final,
            "auto_status": auto_status,
            "auto_samples": lead_samples,
            "exits": exits,
            "samples": sampler.samples,
            "loadavg_end": Path("/proc/loadavg").read_text().strip(),
        }
        (workdir / "record.json").write_text(json.dumps(record))
    finally:
        if faults is not None:
            faults.stop()
        if sampler is not None:
            sampler.stop()
        for replica in replicas.values():
            replica.close()
        admin.close()


def sample_leads(admin: BlockingKubeClient, names: set[str]) -> list[list[Any]]:
    """The status.leadTime of the SPAs `names` now: [time, name, seconds, source] each (none
    while the API server does not answer: a fault)."""
    try:
        listed = admin.list(SCHEDULED_POD_AUTOSCALERS, namespace=NAMESPACE, request_timeout=10)
    except (ApiError, ApiUnavailable):
        return []
    now = time.time()
    samples = []
    for spa in listed.items:
        lead = (spa.get("status") or {}).get("leadTime") or {}
        if spa["metadata"]["name"] in names and lead:
            samples.append([now, spa["metadata"]["name"], lead.get("seconds"), lead.get("source")])
    return samples


def crashes(workdir: Path) -> list[dict[str, str]]:
    """The uncaught exceptions that ended a replica: a traceback printed at the start of a line
    of its log (the controller's own log lines are JSON, their tracebacks inside a string).
    Leaving on purpose (a leader that cannot renew exits 1 with a log line) is not one of
    these; a bug, or a library's (uvloop's "File descriptor N is used by transport", found
    by the soak of 2026-11-26), is."""
    found = []
    for name in REPLICAS:
        path = workdir / f"replica-{name}.log"
        if not path.exists():
            continue
        lines = path.read_text(errors="replace").splitlines()
        for at, line in enumerate(lines):
            if not line.startswith("Traceback (most recent call last):"):
                continue
            # The exception is the first line after the traceback's indented frames.
            last = next((text for text in lines[at + 1 :] if text and not text.startswith(" ")), "")
            found.append({"replica": name, "exception": last[:300]})
    return found


def read_faults(journal: Path) -> list[dict[str, Any]]:
    """The faults a run injected, in order: none when it wrote no journal, as a run too short
    for any fault to fire does."""
    if not journal.exists():
        return []
    return [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]


def analyze(workdir: Path) -> dict[str, Any]:
    """Compare what the run recorded in `workdir` with the oracle; NothingMeasured when the
    run did not leave its record (it did not finish, or `workdir` is no soak's)."""
    for needed in ("record.json", "manifests.json", "plane/audit.log"):
        if not (workdir / needed).exists():
            raise NothingMeasured(f"{workdir} holds no {needed} (the run did not finish)")
    record = json.loads((workdir / "record.json").read_text())
    objects = json.loads((workdir / "manifests.json").read_text())
    faults = read_faults(workdir / "faults.jsonl")
    truth = read_audit(workdir / "plane" / "audit.log")
    statuses = record.get("auto_status", {})
    oracle = Oracle(
        objects,
        at=int(record["started"]),
        until=int(record["settle_end"]) + 1,
        leads=leads_in_force(objects, statuses),
    )
    auto = frozenset(obj["metadata"]["name"] for obj in objects if is_auto_autoscaler(obj))
    clock_steps = [
        (entry["replica"], entry["stepped_at"], entry["ended"], entry["offset_was"])
        for entry in faults
        if entry["kind"] == "clock-back"
    ]
    injected = [entry for entry in faults if "skipped" not in entry and entry["kind"] != "restart"]
    result = compare(
        oracle,
        truth,
        [entry["began"] for entry in injected],
        clock_steps,
        record["first"],
        record["last"],
        record["settle_end"],
        auto,
    )
    # The HPAs as listed at the end, against the oracle then; an HPA whose bounds changed in the
    # 30 s before the listing is left out (its write may not have landed yet).
    listed_at = record.get("listed_at", record["settle_end"])
    expected_end = {name: oracle.at_instant(name, listed_at) for name in oracle.steps}
    last_written = {write.hpa: write.bounds for write in truth.writes}
    final = {
        name: tuple(bounds)
        for name, bounds in record["final"].items()
        if oracle.held_between(name, listed_at - 30, listed_at) == {expected_end[name]}
    }
    first_dt = datetime.fromtimestamp(record["first"], UTC)
    result.update(auto_report(objects, statuses, record.get("auto_samples", []), result))
    return result | {
        "seed": record["seed"],
        "spas": record["spas"],
        "schedules": len(objects) - record["spas"],
        "minutes": record["minutes"],
        "first_window": first_dt.isoformat(),
        "max_raised_transitions": oracle.max_raised,
        "faults": Counter(entry["kind"] for entry in injected).most_common(),
        "fault_log": faults,
        "exits": record["exits"],
        "crashes": crashes(workdir),
        "end_state_compared": len(final),
        "end_state_wrong": sorted(n for n, b in final.items() if expected_end.get(n) != b),
        "end_state_not_as_audited": sorted(n for n, b in final.items() if last_written.get(n) != b),
        "requests": [
            [*key, count] for key, count in sorted(truth.requests.items(), key=lambda kv: -kv[1])
        ],
        "resources": resources_summary(record["samples"], record["started"] + 60),
        "samples": record["samples"],
        "loadavg_end": record["loadavg_end"],
    }


def auto_report(
    objects: list[dict[str, Any]],
    statuses: dict[str, dict[str, Any]],
    samples: list[list[Any]],
    result: dict[str, Any],
) -> dict[str, Any]:
    """The Auto SPAs apart: how many, the lead each published (status.leadTime) and what each
    window start recorded, and every lead published that is not the one the engine derives
    from the SPA's spec and status.windows (for a window's entry, from the entries older than
    it), or that changed during the run (every sample and the end)."""
    autos = [obj for obj in objects if is_auto_autoscaler(obj)]
    names = {obj["metadata"]["name"] for obj in autos}
    mismatches: list[dict[str, Any]] = []
    in_force: Counter[str] = Counter()
    windows: Counter[str] = Counter()
    seen: dict[str, set[tuple[Any, Any]]] = {}
    for obj in autos:
        name = obj["metadata"]["name"]
        status = statuses.get(name) or {}
        entries = status.get("windows") or []
        published = status.get("leadTime") or {}
        checks = [("status.leadTime", published, entries)]
        checks += [
            (
                f"status.windows {entry.get('schedule')} {entry.get('boundary')}",
                entry.get("lead"),
                entries[number + 1 :],
            )
            for number, entry in enumerate(entries)
        ]
        for what, lead, older in checks:
            got = ((lead or {}).get("seconds"), (lead or {}).get("source"))
            expected = engine_lead(obj | {"status": {"windows": older}})
            if got != expected:
                mismatches.append({"spa": name, "what": what, "published": got, "engine": expected})
        if published:
            in_force[f"{published.get('seconds')} s {published.get('source')}"] += 1
            seen.setdefault(name, set()).add((published.get("seconds"), published.get("source")))
        for entry in entries:
            windows[" ".join(filter(None, (entry.get("outcome"), entry.get("reason"))))] += 1
    for _, name, lead_seconds, source in samples:
        seen.setdefault(name, set()).add((lead_seconds, source))

    def apart(key: str) -> list[dict[str, Any]]:
        return [item for item in result[key] if item["hpa"] in names]

    return {
        "auto_spas": len(autos),
        "auto_published": sum(bool((statuses.get(n) or {}).get("leadTime")) for n in names),
        "auto_leads_in_force": in_force.most_common(),
        "auto_windows": windows.most_common(),
        "auto_lead_samples": len(samples),
        "auto_lead_mismatches": mismatches,
        "auto_lead_changes": [
            {"spa": name, "leads": sorted(leads, key=str)}
            for name, leads in sorted(seen.items())
            if len(leads) > 1
        ],
        "auto_missed": apart("missed"),
        "auto_duplicates": apart("duplicates"),
        "auto_wrong": apart("wrong"),
    }


def markdown(result: dict[str, Any]) -> str:
    load = [s["load1"] for s in result["samples"]]
    lines = [
        f"Soak: {result['spas']} SPAs, {result['schedules']} Schedules, {result['minutes']} min "
        f"from {result['first_window']}, seed {result['seed']}",
        f"load average (1 min) during the run: median {percentile(load, 50):.1f}, "
        f"max {max(load, default=math.nan):.1f}",
        f"faults: {', '.join(f'{kind} {n}' for kind, n in result['faults']) or '0 (none fired)'}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| HPA transitions due | {result['transitions']} |",
        f"| missed | {len(result['missed'])} |",
        f"| duplicated writes | {len(result['duplicates'])} |",
        f"| wrong values | {len(result['wrong'])} |",
        f"| writes by a replica not holding the Lease | {len(result['not_leader'])} |",
        f"| writes received > {RENEW_DEADLINE_S:.0f} s after the writer's last renewal | "
        f"{len(result['after_renew_deadline'])} |",
        f"| writes early/late by a stepped clock | {len(result['clock_consistent'])} |",
        f"| raises written ahead of their boundary (the earliest, s before it) | "
        f"{len(result['raised_ahead'])} "
        f"({max((w['before_boundary_s'] for w in result['raised_ahead']), default=0)}) |",
        f"| HPA writes (by replica) | {result['hpa_writes']} {result['hpa_writes_by_replica']} |",
        f"| HPAs wrong at the end | {len(result['end_state_wrong'])} of "
        f"{result['end_state_compared']} compared |",
        f"| replica exits besides the kills / of them crashes (uncaught exceptions) | "
        f"{len(result['exits'])} / {len(result['crashes'])} |",
    ]
    if result.get("auto_spas"):

        def listed(pairs: list[tuple[str, int]]) -> str:
            return ", ".join(f"{what}: {count}" for what, count in pairs) or "none"

        lines += [
            f"| SPAs with leadTime: Auto / their transitions due | {result['auto_spas']} / "
            f"{result['transitions_auto']} |",
            f"| Auto: missed / duplicated / wrong | {len(result['auto_missed'])} / "
            f"{len(result['auto_duplicates'])} / {len(result['auto_wrong'])} |",
            f"| Auto: lead in force at the end (status.leadTime) | "
            f"{listed(result['auto_leads_in_force'])} |",
            f"| Auto: window starts recorded (status.windows) | {listed(result['auto_windows'])} |",
            f"| Auto: leads published not as the engine derives them / changed during the run "
            f"({result['auto_lead_samples']} samples) | {len(result['auto_lead_mismatches'])} / "
            f"{len(result['auto_lead_changes'])} |",
        ]
    for label, key in (
        ("all", "lag_all"),
        ("near a fault", "lag_near_fault"),
        ("quiet", "lag_quiet"),
        ("Auto SPAs", "lag_auto"),
    ):
        if key not in result:  # a run analyzed before it was measured
            continue
        lag = result[key]
        lines.append(
            f"| lag {label} (n={lag['count']}) | p50 {lag['p50_s']} s, p99 {lag['p99_s']} s, "
            f"max {lag['max_s']} s |"
        )
    lines += ["", "| replica | pid | minutes | RSS MiB first/max/last | threads | fds |"]
    lines.append("|---|---|---|---|---|---|")
    for row in result["resources"]:
        rss, threads, fds = row["rss_mib"], row["threads"], row["fds"]
        lines.append(
            f"| {row['replica']} | {row['pid']} | {row['minutes']} | "
            f"{rss['first']}/{rss['max']}/{rss['last']} | "
            f"{threads['first']}/{threads['max']}/{threads['last']} | "
            f"{fds['first']}/{fds['max']}/{fds['last']} |"
        )
    return "\n".join(lines)


def seconds_pair(text: str) -> tuple[float, float]:
    low, high = (float(part) for part in text.split(","))
    return low, high


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--minutes", type=positive_int, default=int(os.environ.get("SOAK_MINUTES", "30"))
    )
    parser.add_argument(
        "--spas", type=positive_int, default=int(os.environ.get("SOAK_SPAS", "200"))
    )
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", "1")))
    parser.add_argument(
        "--lead", type=seconds, default=150.0, help="seconds from start to the first window"
    )
    parser.add_argument(
        "--settle",
        type=seconds,
        default=30.0,
        help="seconds after the last minute of windows (not a multiple of 60: the HPAs are "
        "listed then, best not at a boundary)",
    )
    parser.add_argument(
        "--fault-gap",
        type=seconds_pair,
        default=(20.0, 60.0),
        metavar="LOW,HIGH",
        help="seconds between faults, drawn uniformly (default 20,60)",
    )
    parser.add_argument(
        "--fault-window",
        type=seconds_pair,
        default=(20.0, 90.0),
        metavar="AFTER,BEFORE",
        help="faults from AFTER seconds after the first window's start until BEFORE seconds "
        "before the last minute's end (default 20,90)",
    )
    parser.add_argument(
        "--faults",
        type=one_or_more_of(tuple(FAULTS)),
        default=list(FAULTS),
        help=f"the kinds of fault to inject, comma-separated (default: all of {', '.join(FAULTS)})",
    )
    parser.add_argument(
        "--shared",
        type=float,
        default=0.25,
        help="the share of SPAs raised at one boundary in the middle of the run (default 0.25)",
    )
    parser.add_argument(
        "--fleet-write-seconds",
        type=float,
        default=0.05,
        help="the replicas' --fleet-write-seconds, so that the shared boundary's fleet is "
        "written seconds ahead of it (default 0.05; 0: measured)",
    )
    parser.add_argument(
        "--auto",
        type=float,
        default=0.25,
        help="the share of SPAs with leadTime: Auto, each with one of AUTO_BOUNDS (default 0.25)",
    )
    parser.add_argument(
        "--analyze", type=Path, metavar="DIR", help="only compare a kept run's work directory"
    )
    parser.add_argument("--out", type=Path, help="also write the results (JSON) here")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="the smallest run that still has faults, checked (see SMOKE in the source); "
        "--seed and --faults apply, the sizes and times are SMOKE's",
    )
    args = parser.parse_args()
    args.clock_undo, args.each_kind_once, args.auto_bounds = (60.0, 120.0), False, AUTO_BOUNDS
    if args.smoke:
        for name, value in SMOKE.items():
            setattr(args, name, value)
    args.kinds = args.faults
    if args.analyze is not None:
        workdir = args.analyze
    else:
        workdir = Path(tempfile.mkdtemp(prefix="spa-soak-"))
        log(f"work directory {workdir} (replica logs, audit log, faults.jsonl)")
        run(args, workdir)
        shutil.rmtree(workdir / "plane" / "etcd", ignore_errors=True)
    log("comparing the audit log with the oracle")
    try:
        result = analyze(workdir)
    except NothingMeasured as nothing:
        print(f"{NOTHING_MEASURED}: {nothing}")
        return 1
    write_json(workdir / "soak.json", result)
    write_json(args.out, result)
    print(markdown(result))
    failures = [
        f"{len(result[key])} {label}"
        for key, label in (
            ("missed", "transitions missed"),
            ("wrong", "writes of wrong values"),
            ("duplicates", "duplicated writes"),
            ("not_leader", "writes by a replica not holding the Lease"),
            ("after_renew_deadline", "writes after the writer's renew deadline"),
            ("end_state_wrong", "HPAs wrong at the end"),
            ("crashes", "replicas ended by an uncaught exception"),
            ("auto_lead_mismatches", "Auto leads published not as the engine derives them"),
            ("auto_lead_changes", "Auto SPAs whose lead changed (nothing is measured here)"),
        )
        if result[key]
    ]
    if args.smoke:
        failures += smoke_failures(result, args.kinds, auto=bool(args.auto))
    for failure in failures:
        print(f"{'smoke ' if args.smoke else ''}check failed: {failure}")
    if args.smoke and not failures and args.analyze is None:
        shutil.rmtree(workdir, ignore_errors=True)
        log(f"smoke passed: removed {workdir}")
    else:
        log(f"details in {workdir / 'soak.json'}")
    if failures:
        return 1
    print(f"{'smoke: ' if args.smoke else ''}ok (every check passed)")
    return 0


def smoke_failures(result: dict[str, Any], kinds: list[str], *, auto: bool = False) -> list[str]:
    """What a smoke run must have measured for its zeros to mean anything: transitions,
    writes, and each kind of fault asked for; with `auto`, transitions of Auto SPAs and the
    lead each published."""
    counts = {
        "transitions due": result["transitions"],
        "HPA writes": result["hpa_writes"],
        "HPAs compared at the end": result["end_state_compared"],
        "resource samples": len(result["samples"]),
        "raises written ahead of a boundary": len(result["raised_ahead"]),
    }
    if auto:
        counts["transitions of Auto SPAs"] = result["transitions_auto"]
        counts["leads published by Auto SPAs"] = result["auto_published"]
    failures = [f"no {what}" for what, count in counts.items() if not count]
    injected = {kind for kind, _ in result["faults"]}
    if missing := [kind for kind in kinds if kind not in injected]:
        failures.append(f"faults not injected: {', '.join(missing)}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
