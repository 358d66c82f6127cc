"""Capacity benchmark: from a real minute boundary until every Deployment has its window's
minimum of Ready pods (docs/performance.md, "Capacity at the boundary").

One private control plane (tests/testenv) with kube-scheduler and kwok's fake nodes, and
kube-controller-manager at the **default HPA sync period of 15 s**, so the HPA-only figures are
what a real cluster does. The controller is `spa run` as a subprocess, with its own
ServiceAccount (config/rbac) and the real clock.

Each round creates, in a fresh namespace, for each of its modes and start-up delays D (all of
them for small N, one of each for large N: see `rounds`), N Deployments at 1 replica whose pods
become Ready D seconds after they are bound (kwok), each with an SPA (base 1..10) and a Daily
Schedule raising minReplicas to 3. Once every Deployment is Ready at 1
replica and the controller has reconciled every SPA, the windows are moved to start at the next
real minute boundary B that leaves 20 s before the earliest effective start. A watch on the
Deployments records when each first wants (`spec.replicas`) and first has (`readyReplicas`) 3.
The lag is that instant minus B; negative means before the boundary. Modes:

- `hpa`: `scaleUpImmediately: false`, only the HPA controller raises the target (next sync);
- `immediate`: the default, the controller raises the target through /scale at B;
- `lead`: immediate, with `leadTime` = D + 10 s.

    python bench/capacity.py                        # N = 1 and 100, D = 0 and 20 s
    python bench/capacity.py --sizes 1 --delays 0   # a quick look
    python bench/capacity.py --smoke                # N = 1, D = 0, every mode, checked

A Markdown table goes to stdout, progress to stderr; `--out` writes the raw results (JSON).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Iterator
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
    move_windows,
    next_boundary,
    ready_at_one,
    reconciled,
    window,
)
from bench.measured import (  # noqa: E402
    NOTHING_MEASURED,
    non_negative_int,
    non_negative_ints,
    one_or_more_of,
    positive_ints,
)
from bench.plane import HPA_SYNC_SECONDS, SA_NAME, SA_NAMESPACE, controller_plane  # noqa: E402
from bench.report import log, machine, smoke_verdict, summary, write_json  # noqa: E402
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.kube import Resource, connect_blocking  # noqa: E402
from tests.builders import autoscaler, deployment  # noqa: E402
from tests.integration.processes import spa_run  # noqa: E402
from tests.testenv.controlplane import ControlPlane  # noqa: E402
from tests.testenv.kwok import NODE_CAPACITY  # noqa: E402

MODES = ("hpa", "immediate", "lead")
LEAD_MARGIN_SECONDS = 10
# How long after the fleet is set up (created, reconciled, Ready at 1 replica) its earliest
# effective start may come, at the least: the controller takes the moved windows in.
SETUP_SECONDS = 20


def fleet_autoscaler(name: str, mode: str, delay: int) -> dict[str, Any]:
    """SPA `name` (base 1/10) of the group `mode`: hpa leaves raising the target to the HPA
    controller, immediate raises it at the start, lead also starts the window a start-up delay
    and a margin early."""
    lead = f"{delay + LEAD_MARGIN_SECONDS}s" if mode == "lead" else None
    return autoscaler(
        name=name,
        namespace=None,
        minReplicas=1,
        metrics=None,
        scaleUpImmediately=mode != "hpa",
        leadTime=lead,
    )


def run_round(
    plane: ControlPlane,
    label: str,
    n: int,
    delays: list[int],
    modes: list[str],
    setup_seconds: float = SETUP_SECONDS,
) -> list[dict[str, Any]]:
    namespace = f"capacity-{label}"
    plane.run_kubectl("create", "namespace", namespace, check=True)
    # The windows are created half a day ahead, and moved to the real boundary once the controller
    # has reconciled every SPA: a lead must not start while the controller is still busy with
    # the fleet's first reconcile (with 200 SPAs on a loaded machine it took over a minute).
    boundary = next_boundary(time.time() + 12 * 3600)
    groups = {
        (mode, delay): [f"{mode}-d{delay}-{i:03d}" for i in range(n)]
        for mode in modes
        for delay in delays
    }
    objects: list[tuple[Resource, dict[str, Any]]] = []
    for (mode, delay), names in groups.items():
        for name in names:
            objects.append(
                (
                    DEPLOYMENTS,
                    deployment(
                        name=name,
                        namespace=None,
                        start_delay=f"{delay}s",
                        requests={"cpu": "10m", "memory": "16Mi"},
                    ),
                )
            )
            objects.append((SCHEDULED_POD_AUTOSCALERS, fleet_autoscaler(name, mode, delay)))
            objects.append((SCHEDULES, window(name, boundary)))
    admin = connect_blocking(kubeconfig=str(plane.kubeconfig), pool_size=32)
    began = time.monotonic()
    took = create_all(admin, namespace, objects)
    log(f"{label}: created {len(objects)} objects in {took:.1f} s")
    total = sum(len(names) for names in groups.values())
    setup_deadline = time.time() + 600
    while time.time() < setup_deadline and (
        ready_at_one(admin, namespace) < total or reconciled(admin, namespace) < total
    ):
        time.sleep(1)
    lead = max(delays) + LEAD_MARGIN_SECONDS if "lead" in modes else 0
    boundary = next_boundary(time.time() + lead + setup_seconds)
    b = boundary.timestamp()
    move_windows(admin, namespace, [name for names in groups.values() for name in names], boundary)
    log(f"{label}: set up in {time.monotonic() - began:.0f} s; boundary {boundary:%H:%M:%S}")
    deadline = b + max(delays) + 2 * HPA_SYNC_SECONDS + 30
    with plane.api_client() as api:
        times = FirstTimes(
            api,
            k8s.AppsV1Api(api).list_namespaced_deployment,
            namespace,
            ready=lambda obj: ((obj.get("status") or {}).get("readyReplicas") or 0) >= WINDOW_MIN,
            wanted=lambda obj: ((obj.get("spec") or {}).get("replicas") or 0) >= WINDOW_MIN,
        )
        try:
            while time.time() < deadline and len(times.ready) < total:
                time.sleep(0.5)
        finally:
            times.stop()
    rows = []
    for (mode, delay), names in groups.items():
        ready = [times.ready[name] - b for name in names if name in times.ready]
        wanted = [times.wanted[name] - b for name in names if name in times.wanted]
        rows.append(
            {
                "n": n,
                "delay": delay,
                "mode": mode,
                "ready": summary(ready),
                "wanted": summary(wanted),
                "not_ready": len(names) - len(ready),
            }
        )
        log(f"{label}: {mode} D={delay}: ready {summary(ready)}")
    admin.close()
    # Waited for: the next round's pods need the nodes this round's pods still hold.
    plane.run_kubectl("delete", "namespace", namespace, "--timeout=300s", check=True, timeout=330)
    return rows


def rounds(
    sizes: list[int], modes: list[str], delays: list[int]
) -> Iterator[tuple[str, int, list[str], list[int]]]:
    """One round holds every mode and delay for small N; for large N one mode and one delay per
    round, so that exactly N Deployments are raised at the round's boundary, the pods of a
    round fit the nodes, and the rounds do not load the machine together."""
    for n in sizes:
        if n * len(modes) * len(delays) <= 60:
            yield f"n{n}", n, modes, delays
        else:
            for mode in modes:
                for delay in delays:
                    yield f"n{n}-{mode}-d{delay}", n, [mode], [delay]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=positive_ints, default=[1, 100], help="numbers of Deployments (N)"
    )
    parser.add_argument(
        "--delays",
        type=non_negative_ints,
        default=[0, 20],
        help="pod start-up delays in seconds (D)",
    )
    parser.add_argument("--modes", type=one_or_more_of(MODES), default=list(MODES))
    parser.add_argument(
        "--controller-manager-qps",
        type=non_negative_int,
        default=0,
        help="kube-controller-manager's --kube-api-qps (burst twice that); 0: its default, 20",
    )
    parser.add_argument("--out", type=Path, help="write the raw results (JSON) here")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"N = 1, D = 0, every mode, {SMOKE_SETUP_SECONDS:.0f} s instead of "
        f"{SETUP_SECONDS} s for the controller to take the moved windows in; exit status 1 "
        "if a Deployment did not get its pods or a lead did not raise its target before B "
        "(tests/bench/test_bench_smoke.py)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.delays, args.modes = [1], [0], list(MODES)
    setup_seconds = SMOKE_SETUP_SECONDS if args.smoke else SETUP_SECONDS
    sizes, delays, modes = args.sizes, args.delays, args.modes
    most_pods = max(
        n * len(round_delays) * len(round_modes) * WINDOW_MIN
        for _, n, round_modes, round_delays in rounds(sizes, modes, delays)
    )
    nodes = max(3, math.ceil(most_pods / (int(NODE_CAPACITY["pods"]) - 10)))
    workdir = Path(tempfile.mkdtemp(prefix="spa-bench-capacity-"))
    log(f"control plane with {nodes} nodes in {workdir}")
    results: list[dict[str, Any]] = []
    with controller_plane(
        workdir / "plane",
        nodes=nodes,
        # A real cluster's HPA sync period: the HPA-only mode measures what users get today.
        extra_controller_manager_args=[
            f"--horizontal-pod-autoscaler-sync-period={HPA_SYNC_SECONDS}s",
            *qps_args(args.controller_manager_qps),
        ],
    ) as plane:
        kubeconfig = plane.service_account_kubeconfig(SA_NAMESPACE, SA_NAME, create=False)
        with spa_run(Path(kubeconfig), None, log=workdir / "spa-run.log"):
            for label, n, round_modes, round_delays in rounds(sizes, modes, delays):
                results += run_round(plane, label, n, round_delays, round_modes, setup_seconds)
    print(table(results))
    settings = {"controller_manager_qps": args.controller_manager_qps or 20}
    write_json(args.out, {"machine": machine(), "plane": settings, "results": results})
    if not args.smoke:
        return 0
    return smoke_verdict(
        smoke_failures(results),
        ok=f"{len(results)} modes, every Deployment Ready at {WINDOW_MIN}",
        workdir=workdir,
        logs="spa-run.log, the plane's logs",
    )


# `--smoke`: a fleet of one Deployment per mode takes its moved window in within a second or two.
SMOKE_SETUP_SECONDS = 5.0


def smoke_failures(results: list[dict[str, Any]]) -> list[str]:
    """What the rows show wrong: a Deployment without its window's pods by the deadline, a
    mode missing, or a lead whose target was not raised before the boundary."""
    failures = [
        f"{row['mode']} D={row['delay']}: {row['not_ready']} of {row['n']} Deployments not Ready "
        f"at {WINDOW_MIN}"
        for row in results
        if row["not_ready"] or row["ready"]["count"] != row["n"]
    ]
    missing = set(MODES) - {row["mode"] for row in results}
    if missing:
        failures.append(f"no rows for {', '.join(sorted(missing))}")
    failures += [
        f"lead D={row['delay']}: target raised {row['wanted']['max']:+.1f} s from B, not before"
        for row in results
        if row["mode"] == "lead" and not row["wanted"]["max"] < 0
    ]
    return failures


def qps_args(qps: int) -> list[str]:
    """kube-controller-manager's client rate limit. At its default (20 requests/s, burst 30)
    the ReplicaSet controller creates about 10 pods/s (each pod's create and its Event share
    the limit), which is what bounds a large fleet's scale-up on this plane
    (docs/performance.md, "Capacity at the boundary")."""
    return [f"--kube-api-qps={qps}", f"--kube-api-burst={2 * qps}"] if qps else []


def table(results: list[dict[str, Any]]) -> str:
    def seconds(value: float) -> str:
        return "-" if math.isnan(value) else f"{value:+.1f}"

    if not results:
        return NOTHING_MEASURED
    lines = [
        "| N | D | mode | ready p50 | ready p99 | ready max | wanted p99 | not ready |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in sorted(results, key=lambda r: (r["n"], r["delay"], MODES.index(r["mode"]))):
        ready, wanted = row["ready"], row["wanted"]
        lines.append(
            f"| {row['n']} | {row['delay']} s | {row['mode']} | {seconds(ready['p50'])} | "
            f"{seconds(ready['p99'])} | {seconds(ready['max'])} | {seconds(wanted['p99'])} | "
            f"{row['not_ready']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
