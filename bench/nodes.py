"""Nodes benchmark: from a real minute boundary until every pod of a window that needs new
nodes is Ready (docs/performance.md, "Nodes before the peak (issue 25)").

Why a benchmark of its own: bench/capacity.py measures pods on nodes that are already there;
here the window's pods need nodes that a real node autoscaler has to make first, which on a
cloud takes about a minute, and only a real one can show whether `capacity.leadTime`
(docs/schedules.md, "Node capacity") orders them in time.

One private control plane (tests/testenv) with kube-scheduler, kwok and kube-controller-manager
at the default HPA sync period of 15 s, and **Karpenter's kwok provider**
(tests/testenv/karpenter.py): its NodeClaims become Nodes `--node-delay` seconds later, like a
VM booting. The controller is `spa run` as a subprocess, with its own ServiceAccount
(config/rbac) and the real clock.

Each round creates, in a fresh namespace, for each mode, N Deployments at 1 replica, each with
an SPA (base 1) and a Daily Schedule raising minReplicas to 3. The pods of a mode select a
NodePool of its own, pinned to one instance type (2 CPU) that holds exactly one of these pods
(1.5 CPU): every pod of a window needs a node of its own that does not exist yet, and no
mode's nodes serve another's. Once every Deployment is Ready at 1 (on nodes made quickly), the
pools' delay is set to `--node-delay`, and the windows are moved to start at the next real
minute boundary B that leaves the longest lead and 20 s of set-up. Watches record when each
new pod is first seen and first Ready, and when each new node can first take pods; each
instant minus B is the lag (negative: before the boundary). Modes:

- `hpa`: no lead, `scaleUpImmediately: false`: the HPA controller raises the target after B;
- `pod-lead`: `leadTime` (`--pod-lead`, 60 s): the pods are requested before B, and Pending
  until the nodes that Karpenter orders only for Pending pods arrive;
- `node-lead`: the same `leadTime`, and `capacity.leadTime` = node delay + pod lead: the
  controller holds a CapacityBuffer from then, Karpenter makes the nodes with no pod pending,
  and at the pod lead the pods land on them. Afterwards no CapacityBuffer or placeholder
  Deployment may be left.

    python bench/nodes.py                           # N = 1 and 20, node delay 60 s
    python bench/nodes.py --sizes 1                 # a quick look
    python bench/nodes.py --smoke                   # N = 1, node delay 10 s, checked

Needs Karpenter's kwok provider built (`make testenv-karpenter`). A Markdown table goes to
stdout, progress to stderr; `--out` writes the raw results (JSON).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kubernetes import client as k8s  # noqa: E402

from bench.fleet import (  # noqa: E402
    DEPLOYMENTS,
    WINDOW_MIN,
    FirstTimes,
    create_all,
    move_windows,
    next_boundary,
    ready_at_one,
    reconciled,
    wait_for,
    window,
)
from bench.measured import NOTHING_MEASURED, non_negative_int, one_or_more_of, positive_ints  # noqa: E402
from bench.plane import HPA_SYNC_SECONDS, SA_NAME, SA_NAMESPACE, controller_plane  # noqa: E402
from bench.report import log, machine, smoke_verdict, summary, write_json  # noqa: E402
from spa.controller.capacity import (  # noqa: E402
    CAPACITY_BUFFER_GROUP,
    CAPACITY_BUFFER_PLURAL,
    PLACEHOLDER_LABEL,
    PLACEHOLDER_NAMESPACE,
    PLACEHOLDER_NAMESPACE_LABEL,
    buffer_name,
)
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.kube import BlockingKubeClient, Resource, connect_blocking  # noqa: E402
from tests.builders import autoscaler, deployment  # noqa: E402
from tests.integration.processes import spa_run  # noqa: E402
from tests.testenv.binaries import find_karpenter  # noqa: E402
from tests.testenv.karpenter import (  # noqa: E402
    NODE_POOL_LABEL,
    Karpenter,
    NodePool,
    running_karpenter,
    schedulable,
    served_version,
)

PODS = Resource("", "v1", "pods", "Pod", True)
NODES = Resource("", "v1", "nodes", "Node", False)
MODES = ("hpa", "pod-lead", "node-lead")
# One pod per node: kwok's c-2x instance has 2 CPU, 1.9 allocatable after Karpenter's
# kube-reserved; a pod of 1.5 CPU fills it, so every pod of a window needs a new node.
INSTANCE_TYPE = "c-2x-amd64-linux"
REQUESTS = {"cpu": "1500m", "memory": "1Gi"}
# The pods' start (kwok keeps each new pod unready this long after it is bound).
POD_START_SECONDS = 5
# The pools' delay while the fleet's first pods get their nodes: set-up, not measured.
SETUP_NODE_DELAY_SECONDS = 1
# How long after the fleet is set up the earliest lead may start, at the least.
SETUP_SECONDS = 20
# How long the buffers may take to go once every pod is Ready.
LEFT_OVER_SECONDS = 60


@dataclass(frozen=True)
class Leads:
    """The node delay of the rounds and the leads of the modes that have them."""

    node_delay: int
    pod_lead: int

    @property
    def capacity_lead(self) -> int:
        """The node lead: a node's delay and the pod lead, so that the nodes are there when
        the pods are requested (the issue's "node lead >= node delay + pod start")."""
        return self.node_delay + self.pod_lead

    def longest(self, modes: list[str]) -> int:
        return max(
            self.capacity_lead
            if mode == "node-lead"
            else self.pod_lead
            if mode == "pod-lead"
            else 0
            for mode in modes
        )


def nodes_autoscaler(name: str, mode: str, leads: Leads) -> dict[str, Any]:
    """SPA `name` (base 1/10) of the group `mode` (see the module's docstring)."""
    if mode == "hpa":
        return autoscaler(
            name=name, namespace=None, minReplicas=1, metrics=None, scaleUpImmediately=False
        )
    more: dict[str, Any] = {"leadTime": f"{leads.pod_lead}s"}
    if mode == "node-lead":
        more["capacity"] = {"leadTime": f"{leads.capacity_lead}s"}
    return autoscaler(name=name, namespace=None, minReplicas=1, metrics=None, **more)


def apply_pool(
    karpenter: Karpenter, name: str, node_delay: int, *, consolidate_after: str = "30s"
) -> NodePool:
    """A KWOKNodeClass and a NodePool `name` of the one instance type that holds exactly one pod
    of REQUESTS, nodes `node_delay` late, empty ones removed `consolidate_after` later. Applied
    server-side, so that a second call changes the delay."""
    return karpenter.add_node_pool(
        name,
        node_delay_seconds=node_delay,
        consolidate_after=consolidate_after,
        cpu_limit="2000",
        instance_types=[INSTANCE_TYPE],
    )


def pod_ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return not pod["metadata"].get("deletionTimestamp") and any(
        c["type"] == "Ready" and c["status"] == "True" for c in conditions
    )


def left_over(karpenter: Karpenter, admin: BlockingKubeClient, namespace: str) -> dict[str, int]:
    """The capacity objects the controller holds in `namespace`, by SPA name: CapacityBuffers
    named for an SPA and placeholder Deployments labelled for one."""
    held: dict[str, int] = {}
    with karpenter.plane.api_client() as api:
        version = served_version(api, CAPACITY_BUFFER_GROUP)
        if version is not None:
            listed = k8s.CustomObjectsApi(api).list_namespaced_custom_object(
                CAPACITY_BUFFER_GROUP, version, namespace, CAPACITY_BUFFER_PLURAL
            )
            for item in cast(dict[str, Any], listed)["items"]:
                name = str(item["metadata"]["name"]).removesuffix(buffer_name(""))
                held[name] = held.get(name, 0) + 1
    # In the controller's namespace, labelled with the SPA's (docs/schedules.md).
    placeholders = admin.list(
        DEPLOYMENTS,
        namespace=PLACEHOLDER_NAMESPACE,
        label_selector=f"{PLACEHOLDER_LABEL},{PLACEHOLDER_NAMESPACE_LABEL}={namespace}",
    )
    for item in placeholders.items:
        name = item["metadata"]["labels"][PLACEHOLDER_LABEL]
        held[name] = held.get(name, 0) + 1
    return held


def brief(lags: list[float]) -> str:
    """p50/max of lags from the boundary, for the progress log."""
    figures = summary(lags)
    return f"{figures['count']:.0f}, p50 {figures['p50']:+.1f} s, max {figures['max']:+.1f} s"


def run_round(
    karpenter: Karpenter,
    admin: BlockingKubeClient,
    label: str,
    n: int,
    modes: list[str],
    leads: Leads,
    setup_seconds: float = SETUP_SECONDS,
) -> list[dict[str, Any]]:
    plane = karpenter.plane
    namespace = f"nodes-{label}"
    plane.run_kubectl("create", "namespace", namespace, check=True)
    # Placeholder Deployments are in the controller's namespace (docs/install.md,
    # "Placeholder pods"); made once per plane (an error: it exists).
    plane.run_kubectl("create", "namespace", PLACEHOLDER_NAMESPACE)
    pools = {mode: f"{label}-{mode}" for mode in modes}
    for name in pools.values():
        apply_pool(karpenter, name, SETUP_NODE_DELAY_SECONDS)
    # The windows are created half a day ahead and moved to the real boundary once the fleet
    # is set up (as bench/capacity.py does): no lead may start during the set-up.
    far = next_boundary(time.time() + 12 * 3600)
    groups = {mode: [f"{mode}-{i:03d}" for i in range(n)] for mode in modes}
    objects: list[tuple[Any, dict[str, Any]]] = []
    for mode, names in groups.items():
        for name in names:
            target = deployment(
                name=name,
                namespace=None,
                start_delay=f"{POD_START_SECONDS}s",
                requests=REQUESTS,
                node_selector={NODE_POOL_LABEL: pools[mode]},
            )
            objects.append((DEPLOYMENTS, target))
            objects.append((SCHEDULED_POD_AUTOSCALERS, nodes_autoscaler(name, mode, leads)))
            objects.append((SCHEDULES, window(name, far)))
    began = time.monotonic()
    create_all(admin, namespace, objects)
    total = n * len(modes)
    wait_for(
        lambda: ready_at_one(admin, namespace) >= total and reconciled(admin, namespace) >= total,
        within=600,
        what=f"{label}: {total} Deployments Ready at 1 and reconciled",
    )
    pods_before = {p["metadata"]["name"] for p in admin.list(PODS, namespace=namespace).items}
    nodes_before = {
        n["metadata"]["name"] for n in admin.list(NODES, label_selector=NODE_POOL_LABEL).items
    }
    for name in pools.values():
        apply_pool(karpenter, name, leads.node_delay)
    boundary = next_boundary(time.time() + leads.longest(modes) + setup_seconds)
    b = boundary.timestamp()
    with plane.api_client() as api:
        core = k8s.CoreV1Api(api)
        pods = FirstTimes(api, core.list_namespaced_pod, namespace, ready=pod_ready)
        nodes = FirstTimes(api, core.list_node, ready=schedulable, label_selector=NODE_POOL_LABEL)
        version = served_version(api, CAPACITY_BUFFER_GROUP)
        if version is None:  # Karpenter runs with its CapacityBuffer feature gate
            raise RuntimeError(f"the API server serves no {CAPACITY_BUFFER_GROUP}")
        buffers = FirstTimes(
            api,
            k8s.CustomObjectsApi(api).list_namespaced_custom_object,
            CAPACITY_BUFFER_GROUP,
            version,
            namespace,
            CAPACITY_BUFFER_PLURAL,
            ready=lambda _: True,
        )
        try:
            move_windows(
                admin, namespace, [name for names in groups.values() for name in names], boundary
            )
            log(
                f"{label}: set up in {time.monotonic() - began:.0f} s; boundary {boundary:%H:%M:%S}"
            )
            window_pods = total * (WINDOW_MIN - 1)

            def all_ready() -> bool:
                return len(set(pods.ready) - pods_before) >= window_pods

            deadline = b + leads.node_delay + 2 * HPA_SYNC_SECONDS + 120
            wait_for(
                all_ready,
                within=deadline - time.time(),
                what=f"{label}: {window_pods} window pods Ready",
            )
            wait_for(
                lambda: not left_over(karpenter, admin, namespace),
                within=LEFT_OVER_SECONDS,
                what=f"{label}: no capacity left",
            )
            held = left_over(karpenter, admin, namespace)
        finally:
            pods.stop()
            nodes.stop()
            buffers.stop()
    rows = []
    for mode, names in groups.items():
        apps = set(names)
        mine = [p for p in pods.seen if p not in pods_before and pods.labels[p].get("app") in apps]
        ready = [pods.ready[p] - b for p in mine if p in pods.ready]
        created = [pods.seen[p] - b for p in mine]
        new_nodes = [
            name
            for name in nodes.seen
            if name not in nodes_before and nodes.labels[name].get(NODE_POOL_LABEL) == pools[mode]
        ]
        node_ready = [nodes.ready[name] - b for name in new_nodes if name in nodes.ready]
        held_for = [buffer_name(name) for name in names if buffer_name(name) in buffers.seen]
        rows.append(
            {
                "n": n,
                "mode": mode,
                "node_delay": leads.node_delay,
                "pod_lead": leads.pod_lead if mode != "hpa" else 0,
                "capacity_lead": leads.capacity_lead if mode == "node-lead" else 0,
                "pods": n * (WINDOW_MIN - 1),
                "ready": summary(ready),
                "created": summary(created),
                "nodes": summary(node_ready),
                "buffers": len(held_for),
                "buffer_created": summary([buffers.seen[name] - b for name in held_for]),
                "buffer_deleted": summary(
                    [buffers.deleted[name] - b for name in held_for if name in buffers.deleted]
                ),
                "not_ready": n * (WINDOW_MIN - 1) - len(ready),
                "left": sum(held.get(name, 0) for name in names),
            }
        )
        log(
            f"{label}: {mode}: pods Ready {brief(ready)}; new nodes Ready {brief(node_ready)}; "
            f"{len(held_for)} CapacityBuffers"
        )
    plane.run_kubectl("delete", "namespace", namespace, "--timeout=300s", check=True, timeout=330)
    # Karpenter removes a deleted pool's nodes: the next round's plane is not loaded by them.
    plane.run_kubectl("delete", "nodepools", *pools.values(), "--wait=false", check=True)
    return rows


def rounds(sizes: list[int], modes: list[str]) -> Iterator[tuple[str, int, list[str]]]:
    """One round per size with every mode (one pool each) while a round's Deployments stay
    at most 60; beyond, one round per mode."""
    for n in sizes:
        if n * len(modes) <= 60:
            yield f"n{n}", n, modes
        else:
            for mode in modes:
                yield f"n{n}-{mode}", n, [mode]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=positive_ints, default=[1, 20], help="numbers of SPAs per mode (N)"
    )
    parser.add_argument("--modes", type=one_or_more_of(MODES), default=list(MODES))
    parser.add_argument(
        "--node-delay",
        type=non_negative_int,
        default=60,
        help="seconds from a NodeClaim to its Node",
    )
    parser.add_argument(
        "--pod-lead", type=non_negative_int, default=60, help="leadTime of the lead modes (s)"
    )
    parser.add_argument("--out", type=Path, help="write the raw results (JSON) here")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"N = 1, node delay {SMOKE_NODE_DELAY} s, pod lead {SMOKE_POD_LEAD} s, every mode; "
        "exit status 1 if a pod was not Ready, a node-lead pod or node was not Ready before B, "
        "or a CapacityBuffer or placeholder was left (tests/bench/test_bench_smoke.py)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.modes = [1], list(MODES)
        args.node_delay, args.pod_lead = SMOKE_NODE_DELAY, SMOKE_POD_LEAD
    setup_seconds = SMOKE_SETUP_SECONDS if args.smoke else SETUP_SECONDS
    sizes, modes = args.sizes, args.modes
    leads = Leads(node_delay=args.node_delay, pod_lead=args.pod_lead)
    binaries = find_karpenter()  # the `make testenv-karpenter` message, before any plane starts
    workdir = Path(tempfile.mkdtemp(prefix="spa-bench-nodes-"))
    log(f"control plane and Karpenter in {workdir}")
    results: list[dict[str, Any]] = []
    with controller_plane(
        workdir / "plane",
        # One static node: kube-scheduler and kwok run; the pods select Karpenter's pools.
        nodes=1,
        extra_controller_manager_args=[
            f"--horizontal-pod-autoscaler-sync-period={HPA_SYNC_SECONDS}s"
        ],
    ) as plane:
        kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
        with (
            running_karpenter(plane, binaries=binaries, node_delay_seconds=leads.node_delay) as k,
            spa_run(Path(kubeconfig), None, log=workdir / "spa-run.log"),
        ):
            log(f"Karpenter {k.version} ready in {k.startup_seconds:.1f} s")
            admin = connect_blocking(kubeconfig=str(plane.kubeconfig), pool_size=32)
            try:
                for label, n, round_modes in rounds(sizes, modes):
                    results += run_round(k, admin, label, n, round_modes, leads, setup_seconds)
            finally:
                admin.close()
    print(table(results))
    settings = {
        "node_delay": leads.node_delay,
        "pod_lead": leads.pod_lead,
        "capacity_lead": leads.capacity_lead,
        "pod_start": POD_START_SECONDS,
        "instance_type": INSTANCE_TYPE,
        "requests": REQUESTS,
        "window_min": WINDOW_MIN,
        "hpa_sync": HPA_SYNC_SECONDS,
    }
    write_json(args.out, {"machine": machine(), "plane": settings, "results": results})
    if not args.smoke:
        return 0
    return smoke_verdict(
        smoke_failures(results),
        ok=f"{len(results)} modes, node-lead pods and nodes Ready before B",
        workdir=workdir,
        logs="spa-run.log, the plane's and Karpenter's logs",
    )


# `--smoke`: nodes 10 s late, a pod lead of 20 s (capacity lead 30 s).
SMOKE_NODE_DELAY = 10
SMOKE_POD_LEAD = 20
SMOKE_SETUP_SECONDS = 5.0


def smoke_failures(results: list[dict[str, Any]]) -> list[str]:
    """What the rows show wrong: a mode missing, a pod of a window not Ready by the deadline, a
    capacity object left, or a node-lead pod or new node not Ready before the boundary."""
    failures = [
        f"{row['mode']}: {row['not_ready']} of {row['pods']} pods not Ready"
        for row in results
        if row["not_ready"]
    ]
    failures += [
        f"{row['mode']}: {row['left']} CapacityBuffer or placeholder left"
        for row in results
        if row["left"]
    ]
    missing = set(MODES) - {row["mode"] for row in results}
    if missing:
        failures.append(f"no rows for {', '.join(sorted(missing))}")
    for row in results:
        if row["mode"] != "node-lead":
            continue
        if not row["ready"]["max"] < 0:
            failures.append(f"node-lead: pods Ready up to {row['ready']['max']:+.1f} s from B")
        if row["buffers"] < row["n"]:
            failures.append(f"node-lead: {row['buffers']} CapacityBuffers for {row['n']} SPAs")
        if row["nodes"]["count"] < row["pods"] or not row["nodes"]["max"] < 0:
            failures.append(
                f"node-lead: {row['nodes']['count']} new nodes, Ready up to "
                f"{row['nodes']['max']:+.1f} s from B"
            )
    return failures


def table(results: list[dict[str, Any]]) -> str:
    def seconds(value: float) -> str:
        return "-" if math.isnan(value) else f"{value:+.1f}"

    if not results:
        return NOTHING_MEASURED
    lines = [
        "| N | mode | pods | created p50 | ready p50 | ready p99 | ready max | new nodes | "
        "nodes ready p50 | nodes ready max | buffers | buffer created p50 | buffer gone p50 | "
        "not ready | left |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in sorted(results, key=lambda r: (r["n"], MODES.index(r["mode"]))):
        ready, nodes = row["ready"], row["nodes"]
        lines.append(
            f"| {row['n']} | {row['mode']} | {row['pods']} | {seconds(row['created']['p50'])} | "
            f"{seconds(ready['p50'])} | {seconds(ready['p99'])} | {seconds(ready['max'])} | "
            f"{nodes['count']} | {seconds(nodes['p50'])} | {seconds(nodes['max'])} | "
            f"{row['buffers']} | {seconds(row['buffer_created']['p50'])} | "
            f"{seconds(row['buffer_deleted']['p50'])} | {row['not_ready']} | {row['left']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
