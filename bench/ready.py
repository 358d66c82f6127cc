"""Ready benchmark: window after window, is the target Ready before its boundary B with
`leadTime: Auto` and `capacity.leadTime: Auto` learned from no history, and after the nodes
got slower (docs/performance.md, "Ready before the peak (issue 37)").

Why a benchmark of its own: bench/nodes.py measures one window with leads written by hand;
Auto leads (docs/schedules.md, "Auto lead times") are learned from the windows before, so only
a sequence of real windows, with nodes from a real node autoscaler, shows that they converge,
follow a slower node pool and do not drift when nothing changes. It reuses bench/nodes.py's
plane: kube-scheduler, kwok with a pod start delay (tests/testenv/kwok.py's stage, the
`--pod-start` annotation), kube-controller-manager at the default HPA sync period, Karpenter's
kwok provider with its NodePools of one pod per node, and `spa run` as a subprocess with its
own ServiceAccount (config/rbac) and the placeholder option (config/components/placeholders):
the SPAs order capacity with `capacity.mode: Placeholder`, the mode whose nodes' standing is
measured (`nodesReadyAt`; a CapacityBuffer's is not, docs/schedules.md).

Per size N, in a fresh namespace: N Deployments at 1 replica (pods of 1.5 CPU, each needing a
node of its own), each with an SPA (base 1 to 1) whose `leadTime` and `capacity.leadTime` are
`Auto`. Then windows one after another, each a OneShot Schedule per SPA raising min and max to
3 from a real minute boundary B: the first B that leaves the largest capacity lead in force
(status.capacityLeadTime) and the set-up. Once every SPA's status.windows entry for it is
measured (Early, Late or Missed), the Schedules are deleted (the peak is over), the targets go
back to 1 at once (maxReplicas 1) and the next window waits until Karpenter has removed the
emptied nodes and the placeholders are gone: each window's pods need new nodes. The pool's
delay is `--node-delays` (60 s, then 120 s), `--windows` windows each.

For each window: Ready relative to B (status.windows[].readySeconds, and the bench's own watch
of the new pods), the pod lead and the capacity lead in force for it (status.windows[].lead and
.capacityLead: seconds and explanation), when capacity was held and stood on nodes, the
outcome. The margin of an Early window is B minus Ready: with nothing changing it must not
grow (the `drift` of the JSON and of stderr).

    python bench/ready.py                            # N = 1 and 20, nodes 60 s then 120 s
    python bench/ready.py --sizes 1 --windows 3,2    # shorter
    python bench/ready.py --smoke                    # N = 1, short delays, 2 windows, checked

Needs Karpenter's kwok provider built (`make testenv-karpenter`). A Markdown table goes to
stdout, progress to stderr; `--out` writes the raw results (JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubernetes import client as k8s  # noqa: E402

from bench.fleet import (  # noqa: E402
    DEPLOYMENTS,
    WINDOW_MIN,
    FirstTimes,
    create_all,
    next_boundary,
    ready_at_one,
    reconciled,
    wait_for,
)
from bench.measured import NOTHING_MEASURED, non_negative_int, positive_ints  # noqa: E402
from bench.nodes import (  # noqa: E402
    NODES,
    PODS,
    REQUESTS,
    apply_pool,
    left_over,
    pod_ready,
)
from bench.plane import HPA_SYNC_SECONDS, SA_NAME, SA_NAMESPACE, controller_plane  # noqa: E402
from bench.report import log, machine, smoke_verdict, summary, write_json  # noqa: E402
from spa.controller.capacity import PLACEHOLDER_NAMESPACE  # noqa: E402
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.kube import BlockingKubeClient, connect_blocking  # noqa: E402
from spa.schedule.learned_lead import DEFAULT_NODE_LEAD_SECONDS  # noqa: E402
from tests.builders import autoscaler, deployment, schedule  # noqa: E402
from tests.integration.processes import spa_run  # noqa: E402
from tests.testenv.binaries import find_karpenter  # noqa: E402
from tests.testenv.karpenter import NODE_POOL_LABEL, Karpenter, running_karpenter, schedulable  # noqa: E402

# The install's PriorityClass of placeholder pods and the placeholder option's RBAC
# (docs/install.md, "Placeholder pods"), applied as a user applies them.
PRIORITY_CLASS = REPO / "config/install/manager/capacity_priority_class.yaml"
PLACEHOLDER_RBAC = REPO / "config/components/placeholders/placeholders.yaml"
# The pools' delay while the fleet's first pods get their nodes: set-up, not measured.
SETUP_NODE_DELAY_SECONDS = 1
# Emptied nodes go this soon, so that the next window's pods need new ones; not sooner: between
# the placeholders' hand-over and the window's pods being bound the new nodes are empty a few
# seconds, and must stay.
CONSOLIDATE_AFTER = "20s"
# A window's length: long enough for a late window to be Ready in it (Missed otherwise, and
# a missed window teaches Auto nothing); it is ended earlier, once measured.
WINDOW_MINUTES = 5
# Seconds between the decision of a window's B and the earliest lead, at the least.
SETUP_SECONDS = 15
# How long the emptied nodes and the placeholders may take to go between windows.
QUIET_SECONDS = 300


def ready_autoscaler(
    name: str, bounds: dict[str, str], capacity_bounds: dict[str, str]
) -> dict[str, Any]:
    """SPA `name`: base 1 to 1, both leads Auto, placeholder capacity (`bounds`: leadTimeBounds
    of each lead, none when empty)."""
    capacity: dict[str, Any] = {"leadTime": "Auto", "mode": "Placeholder"}
    if capacity_bounds:
        capacity["leadTimeBounds"] = capacity_bounds
    more: dict[str, Any] = {"leadTime": "Auto", "capacity": capacity}
    if bounds:
        more["leadTimeBounds"] = bounds
    return autoscaler(name=name, namespace=None, minReplicas=1, maxReplicas=1, metrics=None, **more)


def window_schedule(name: str, index: int, boundary: datetime) -> dict[str, Any]:
    """The OneShot Schedule `<name>-w<index>` of SPA `name`: WINDOW_MIN replicas from
    `boundary` for WINDOW_MINUTES."""
    end = boundary + timedelta(minutes=WINDOW_MINUTES)
    return schedule(
        name=f"{name}-w{index}",
        namespace=None,
        target=name,
        type="OneShot",
        timeZone="UTC",
        startTime=boundary.strftime("%Y-%m-%dT%H:%M"),
        endTime=end.strftime("%Y-%m-%dT%H:%M"),
        minReplicas=WINDOW_MIN,
        maxReplicas=WINDOW_MIN,
    )


def _instant(text: str | None) -> float | None:
    return None if text is None else datetime.fromisoformat(text).timestamp()


def entries(admin: BlockingKubeClient, namespace: str, index: int) -> dict[str, dict[str, Any]]:
    """Each SPA's status.windows entry for window `index`, by SPA name."""
    found: dict[str, dict[str, Any]] = {}
    for spa in admin.list(SCHEDULED_POD_AUTOSCALERS, namespace=namespace).items:
        name = spa["metadata"]["name"]
        for entry in (spa.get("status") or {}).get("windows") or []:
            if entry.get("schedule") == f"{name}-w{index}":
                found[name] = entry
    return found


def leads_in_force(admin: BlockingKubeClient, namespace: str) -> int:
    """The largest capacity lead in force now among the namespace's SPAs (status), the
    default before any status says one."""
    seconds = [
        int(((spa.get("status") or {}).get("capacityLeadTime") or {}).get("seconds") or 0)
        for spa in admin.list(SCHEDULED_POD_AUTOSCALERS, namespace=namespace).items
    ]
    return max([*seconds, 0]) or DEFAULT_NODE_LEAD_SECONDS


def _lead(entries_: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The leads `key` ("lead" or "capacityLead") in force for a window: their summary, the
    sources seen, and the explanation of the largest."""
    leads = [entry[key] for entry in entries_ if entry.get(key)]
    if not leads:
        return {"seconds": summary([]), "sources": [], "explanation": None}
    largest = max(leads, key=lambda lead: int(lead.get("seconds") or 0))
    return {
        "seconds": summary([float(lead.get("seconds") or 0) for lead in leads]),
        "sources": sorted({str(lead.get("source")) for lead in leads}),
        "explanation": largest.get("explanation"),
    }


def measure_window(
    found: dict[str, dict[str, Any]], b: float, watched: dict[str, float]
) -> dict[str, Any]:
    """One window's figures from the SPAs' entries (`found`) and the watched instants at which
    each SPA's new pods were all Ready (`watched`), relative to B."""
    measured = list(found.values())

    def since_b(key: str) -> list[float]:
        return [
            instant - b for entry in measured if (instant := _instant(entry.get(key))) is not None
        ]

    def between(start: str, stop: str) -> list[float]:
        return [
            end - begin
            for entry in measured
            if (begin := _instant(entry.get(start))) is not None
            and (end := _instant(entry.get(stop))) is not None
        ]

    outcomes: dict[str, int] = {}
    for entry in measured:
        outcomes[str(entry.get("outcome"))] = outcomes.get(str(entry.get("outcome")), 0) + 1
    return {
        "outcomes": outcomes,
        "ready": summary(
            [float(entry["readySeconds"]) for entry in measured if "readySeconds" in entry]
        ),
        "ready_watched": summary([instant - b for instant in watched.values()]),
        "pod_lead": _lead(measured, "lead"),
        "capacity_lead": _lead(measured, "capacityLead"),
        "held": summary(since_b("capacityHeldAt")),
        "nodes_ready": summary(since_b("nodesReadyAt")),
        "released": summary(since_b("capacityReleasedAt")),
        "raised": summary(since_b("raisedAt")),
        "node_need": summary(between("capacityHeldAt", "nodesReadyAt")),
        # Where the nodes were not measured standing: how long the pods waited for them.
        "pods_waited": summary(
            [float(e["podsWaitedSeconds"]) for e in measured if "podsWaitedSeconds" in e]
        ),
        "pod_need": summary(between("raisedAt", "readyAt")),
        "entries": found,
    }


class Fleet:
    """The N Deployments and SPAs of one size, their pool and the watches of their pods and
    nodes."""

    def __init__(self, karpenter: Karpenter, admin: BlockingKubeClient, n: int, args: Any):
        self.karpenter, self.admin, self.n = karpenter, admin, n
        self.namespace = self.pool = f"ready-n{n}"
        self.names = [f"app-{i:03d}" for i in range(n)]
        plane = karpenter.plane
        plane.run_kubectl("create", "namespace", self.namespace, check=True)
        apply_pool(
            karpenter, self.pool, SETUP_NODE_DELAY_SECONDS, consolidate_after=CONSOLIDATE_AFTER
        )
        objects: list[tuple[Any, dict[str, Any]]] = []
        for name in self.names:
            target = deployment(
                name=name,
                namespace=None,
                start_delay=f"{args.pod_start}s",
                requests=REQUESTS,
                node_selector={NODE_POOL_LABEL: self.pool},
            )
            objects.append((DEPLOYMENTS, target))
            objects.append(
                (
                    SCHEDULED_POD_AUTOSCALERS,
                    ready_autoscaler(name, args.bounds, args.capacity_bounds),
                )
            )
        create_all(admin, self.namespace, objects)
        wait_for(
            lambda: (
                ready_at_one(admin, self.namespace) >= n and reconciled(admin, self.namespace) >= n
            ),
            within=600,
            what=f"n{n}: {n} Deployments Ready at 1 and reconciled",
        )
        # The watches' client is open as long as the fleet.
        self._api = contextlib.ExitStack()
        api = self._api.enter_context(plane.api_client())
        core = k8s.CoreV1Api(api)
        self.pods = FirstTimes(api, core.list_namespaced_pod, self.namespace, ready=pod_ready)
        self.nodes = FirstTimes(
            api,
            core.list_node,
            ready=schedulable,
            label_selector=f"{NODE_POOL_LABEL}={self.pool}",
        )
        # The fleet's own pods and nodes seen first: they are not a window's.
        wait_for(
            lambda: len(self.pods.seen) >= n and len(self.nodes.seen) >= n,
            within=60,
            what=f"n{n}: the fleet's pods and nodes watched",
        )

    def quiet(self) -> bool:
        """One pod per Deployment, one node per pod, no placeholder: the next window's pods
        need new nodes."""
        pods = self.admin.list(PODS, namespace=self.namespace).items
        nodes = self.admin.list(NODES, label_selector=f"{NODE_POOL_LABEL}={self.pool}").items
        return (
            len(pods) <= self.n
            and len(nodes) <= self.n
            and not left_over(self.karpenter, self.admin, self.namespace)
        )

    def run_window(self, index: int, node_delay: int, setup: float) -> dict[str, Any]:
        wait_for(self.quiet, within=QUIET_SECONDS, what=f"n{self.n}: window {index}: quiet")
        lead = leads_in_force(self.admin, self.namespace)
        boundary = next_boundary(time.time() + lead + setup)
        b = boundary.timestamp()
        pods_before, nodes_before = set(self.pods.seen), set(self.nodes.seen)
        create_all(
            self.admin,
            self.namespace,
            [(SCHEDULES, window_schedule(name, index, boundary)) for name in self.names],
        )
        log(
            f"n{self.n}: window {index}: B {boundary:%H:%M:%S}, capacity lead {lead} s, "
            f"nodes {node_delay} s late"
        )

        def measured() -> bool:
            found = entries(self.admin, self.namespace, index)
            return len(found) >= self.n and all(
                e.get("outcome") != "Pending" for e in found.values()
            )

        wait_for(
            measured,
            within=b - time.time() + WINDOW_MINUTES * 60 + 60,
            what=f"n{self.n}: window {index} measured",
        )
        found = entries(self.admin, self.namespace, index)
        watched: dict[str, float] = {}
        for name in self.names:
            mine = [
                p
                for p in self.pods.seen
                if p not in pods_before and self.pods.labels[p].get("app") == name
            ]
            ready = [self.pods.ready[p] for p in mine if p in self.pods.ready]
            if len(ready) >= WINDOW_MIN - 1:
                watched[name] = max(ready)
        new_nodes = [name for name in self.nodes.seen if name not in nodes_before]
        for name in self.names:  # the peak is over: back to 1 (maxReplicas 1) at once
            self.admin.delete(SCHEDULES, self.namespace, f"{name}-w{index}")
        row = {
            "n": self.n,
            "window": index,
            "node_delay": node_delay,
            "boundary": boundary.isoformat(),
            "spas": self.n,
            "not_measured": self.n - len(found),
            "new_nodes": len(new_nodes),
            "new_nodes_ready": summary(
                [self.nodes.ready[name] - b for name in new_nodes if name in self.nodes.ready]
            ),
            **measure_window(found, b, watched),
        }
        log(
            f"n{self.n}: window {index}: {row['outcomes']}, Ready {row['ready']['max']:+.0f} s "
            f"from B (watched {row['ready_watched']['max']:+.1f} s); pod lead "
            f"{row['pod_lead']['explanation']}; capacity lead {row['capacity_lead']['explanation']}"
        )
        return row

    def close(self) -> None:
        self.pods.stop()
        self.nodes.stop()
        self._api.close()
        plane = self.karpenter.plane
        plane.run_kubectl(
            "delete", "namespace", self.namespace, "--timeout=300s", check=True, timeout=330
        )
        plane.run_kubectl("delete", "nodepools", self.pool, "--wait=false", check=True)


def drift(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per size and node delay, from the first Early window on (nothing changes after it):
    how much the capacity lead and the early margin (B - Ready) grew from window to window, at
    most (0 or less: no drift)."""
    found = []
    for n in sorted({row["n"] for row in rows}):
        for delay in dict.fromkeys(row["node_delay"] for row in rows if row["n"] == n):
            phase = [row for row in rows if row["n"] == n and row["node_delay"] == delay]
            first = next(
                (i for i, row in enumerate(phase) if set(row["outcomes"]) == {"Early"}), None
            )
            settled = [] if first is None else phase[first:]
            leads = [row["capacity_lead"]["seconds"]["max"] for row in settled]
            margins = [-row["ready"]["max"] for row in settled]
            found.append(
                {
                    "n": n,
                    "node_delay": delay,
                    "windows": len(phase),
                    "late_before_early": len(phase) if first is None else first,
                    "capacity_leads": leads,
                    "margins": margins,
                    "lead_growth": max((b - a for a, b in itertools.pairwise(leads)), default=0.0),
                    "margin_growth": max(
                        (b - a for a, b in itertools.pairwise(margins)), default=0.0
                    ),
                }
            )
    return found


def table(rows: list[dict[str, Any]]) -> str:
    def seconds(value: float) -> str:
        return "-" if math.isnan(value) else f"{value:+.0f}"

    def lead(figures: dict[str, Any]) -> str:
        values = figures["seconds"]
        if not values["count"]:
            return "-"
        span = f"{values['max']:.0f} s"
        if values["p50"] != values["max"]:
            span = f"{values['p50']:.0f}-{span}"
        return f"{span} ({figures['explanation']})"

    if not rows:
        return NOTHING_MEASURED
    lines = [
        "| N | window | node delay | outcomes | Ready vs B p50 | Ready vs B max | pods Ready "
        "(watched) max | pod lead in force | capacity lead in force | held | nodes stood | "
        "new nodes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        outcomes = ", ".join(f"{count} {what}" for what, count in sorted(row["outcomes"].items()))
        lines.append(
            f"| {row['n']} | {row['window']} | {row['node_delay']} s | {outcomes or '-'} | "
            f"{seconds(row['ready']['p50'])} | {seconds(row['ready']['max'])} | "
            f"{seconds(row['ready_watched']['max'])} | {lead(row['pod_lead'])} | "
            f"{lead(row['capacity_lead'])} | {seconds(row['held']['p50'])} | "
            f"{seconds(row['nodes_ready']['max'])} | {row['new_nodes']} |"
        )
    return "\n".join(lines)


def _bounds(seconds: int) -> dict[str, str]:
    """`--lead-max 60` as a leadTimeBounds object (empty for 0: none)."""
    return {"max": f"{seconds}s"} if seconds else {}


# `--smoke`: nodes 10 s late, pods 5 s to start, two windows, Auto leads bounded (the
# defaults, 2m and 3m, would make it long).
SMOKE_NODE_DELAY = 10
SMOKE_POD_START = 5
SMOKE_WINDOWS = 2
SMOKE_LEAD_MAX = 30
SMOKE_CAPACITY_LEAD_MAX = 60
SMOKE_SETUP_SECONDS = 5.0


def smoke_failures(rows: list[dict[str, Any]], left: int) -> list[str]:
    """What the rows show wrong: a window not measured, window 2 not Early for every SPA or
    not on learned leads, placeholders left."""
    failures = [
        f"window {row['window']}: {row['not_measured']} SPAs with no entry"
        for row in rows
        if row["not_measured"]
    ]
    second = next((row for row in rows if row["window"] == 2), None)
    if second is None:
        failures.append("no window 2")
    else:
        if second["outcomes"] != {"Early": second["spas"]}:
            failures.append(f"window 2: {second['outcomes']}, not every SPA Early")
        for key in ("pod_lead", "capacity_lead"):
            if second[key]["sources"] != ["Learned"]:
                failures.append(f"window 2: {key} from {second[key]['sources']}, not Learned")
    if left:
        failures.append(f"{left} placeholder Deployments left")
    return failures


def raw(
    args: Any,
    rows: list[dict[str, Any]],
    left: int,
    started: dict[str, str],
    *,
    complete: bool = False,
) -> dict[str, Any]:
    """The raw results (`--out`): the machine at the start and now (its load), the settings,
    each window's row, the drift, and whether the run is complete."""
    settings = {
        "node_delays": args.node_delays,
        "windows": args.windows,
        "pod_start": args.pod_start,
        "lead_time_bounds": args.bounds,
        "capacity_lead_time_bounds": args.capacity_bounds,
        "window_min": WINDOW_MIN,
        "window_minutes": WINDOW_MINUTES,
        "consolidate_after": CONSOLIDATE_AFTER,
        "requests": REQUESTS,
        "hpa_sync": HPA_SYNC_SECONDS,
    }
    return {
        "command": " ".join(sys.argv),
        "machine": started,
        "machine_now": machine(),
        "plane": settings,
        "complete": complete,
        "results": rows,
        "drift": drift(rows),
        "left": left,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=positive_ints, default=[1, 20], help="numbers of SPAs (N)")
    parser.add_argument(
        "--node-delays",
        type=positive_ints,
        default=[60, 120],
        help="seconds from a NodeClaim to its Node, one phase of windows each",
    )
    parser.add_argument(
        "--windows", type=positive_ints, default=[3, 3], help="windows of each node delay"
    )
    parser.add_argument(
        "--pod-start",
        type=non_negative_int,
        default=20,
        help="seconds kwok keeps a new pod unready",
    )
    parser.add_argument(
        "--lead-max",
        type=non_negative_int,
        default=0,
        help="leadTimeBounds.max in seconds (0, the default: none)",
    )
    parser.add_argument(
        "--capacity-lead-max",
        type=non_negative_int,
        default=0,
        help="capacity.leadTimeBounds.max in seconds (0, the default: none)",
    )
    parser.add_argument("--out", type=Path, help="write the raw results (JSON) here")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"N = 1, nodes {SMOKE_NODE_DELAY} s late, pods {SMOKE_POD_START} s to start, "
        f"{SMOKE_WINDOWS} windows, leads at most {SMOKE_LEAD_MAX} s and "
        f"{SMOKE_CAPACITY_LEAD_MAX} s; exit status 1 unless window 2 is Early on learned leads "
        "(tests/bench/test_bench_smoke.py)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.node_delays, args.windows = [1], [SMOKE_NODE_DELAY], [SMOKE_WINDOWS]
        args.pod_start = SMOKE_POD_START
        args.lead_max, args.capacity_lead_max = SMOKE_LEAD_MAX, SMOKE_CAPACITY_LEAD_MAX
    if len(args.windows) != len(args.node_delays):
        parser.error("--windows needs one count per --node-delays")
    args.bounds, args.capacity_bounds = _bounds(args.lead_max), _bounds(args.capacity_lead_max)
    setup = SMOKE_SETUP_SECONDS if args.smoke else SETUP_SECONDS
    binaries = find_karpenter()  # the `make testenv-karpenter` message, before any plane starts
    workdir = Path(tempfile.mkdtemp(prefix="spa-bench-ready-"))
    log(f"control plane and Karpenter in {workdir}")
    rows: list[dict[str, Any]] = []
    left = 0
    started = machine()
    with controller_plane(
        workdir / "plane",
        nodes=1,  # kube-scheduler and kwok run; the pods select Karpenter's pool
        extra_controller_manager_args=[
            f"--horizontal-pod-autoscaler-sync-period={HPA_SYNC_SECONDS}s"
        ],
    ) as plane:
        plane.run_kubectl("apply", "--server-side", "-f", str(PRIORITY_CLASS), check=True)
        plane.run_kubectl("apply", "--server-side", "-f", str(PLACEHOLDER_RBAC), check=True)
        plane.run_kubectl("create", "namespace", PLACEHOLDER_NAMESPACE)  # an error: it exists
        kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
        with (
            running_karpenter(
                plane, binaries=binaries, node_delay_seconds=args.node_delays[0]
            ) as k,
            spa_run(Path(kubeconfig), None, log=workdir / "spa-run.log"),
        ):
            log(f"Karpenter {k.version} ready in {k.startup_seconds:.1f} s")
            admin = connect_blocking(kubeconfig=str(plane.kubeconfig), pool_size=32)
            try:
                for n in args.sizes:
                    fleet = Fleet(k, admin, n, args)
                    try:
                        index = 0
                        for delay, count in zip(args.node_delays, args.windows, strict=True):
                            apply_pool(k, fleet.pool, delay, consolidate_after=CONSOLIDATE_AFTER)
                            for _ in range(count):
                                index += 1
                                rows.append(fleet.run_window(index, delay, setup))
                                # Each window kept at once: a run stopped early keeps its own.
                                write_json(args.out, raw(args, rows, left, started))
                        wait_for(fleet.quiet, within=QUIET_SECONDS, what=f"n{n}: quiet at the end")
                        left += sum(left_over(k, admin, fleet.namespace).values())
                    finally:
                        fleet.close()
            finally:
                admin.close()
    print(table(rows))
    for figure in drift(rows):
        log(
            f"n{figure['n']}, nodes {figure['node_delay']} s: {figure['late_before_early']} "
            f"window(s) before the first all-Early one; then capacity leads "
            f"{figure['capacity_leads']}, margins {figure['margins']}"
        )
    write_json(args.out, raw(args, rows, left, started, complete=True))
    if not args.smoke:
        return 0
    return smoke_verdict(
        smoke_failures(rows, left),
        ok=f"{len(rows)} windows, window 2 Early on learned leads",
        workdir=workdir,
        logs="spa-run.log, the plane's and Karpenter's logs",
    )


if __name__ == "__main__":
    sys.exit(main())
