"""Cache benchmark: the memory an informer keeps per HPA, and the peak of the list that fills it.

Why: the controller's memory grows with what its caches hold (docs/performance.md, "What
limits the numbers"), and an HPA as the API server returns it after kube-controller-manager's
syncs carries a status (metrics, conditions and their messages) of which the reconcile reads
three fields. This lists real HPAs, with the status kube-controller-manager wrote, through
`spa.kube.KubeClient.list` and measures with `tracemalloc`, for each way of caching them:

* ``raw``: every field kept;
* ``bookkeeping``: `spa.runtime.drop_bookkeeping` applied after the whole list (the cache of
  2026-11-23: no managedFields, the status whole);
* ``read``: `spa.controller.watches.cached_hpa` applied to each page as it arrives (the
  informer's transform at ingest, issue 24).

For each: the bytes still allocated per HPA once the list is stored (what a cache keeps), and
the peak while listing (what a restart needs on top).

    python bench/cache.py                      # starts its own control plane (1,000 HPAs)
    python bench/cache.py --kubeconfig FILE    # or uses a running one with a controller manager
    python bench/cache.py --smoke              # 10 HPAs, one round: exit status 1 unless each
                                               # way keeps less than the one before it
                                               # (tests/bench/test_bench_smoke.py)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.fleet import DEPLOYMENTS, create_each, ensure_namespace  # noqa: E402
from bench.measured import positive_int  # noqa: E402
from bench.plane import on_a_cluster  # noqa: E402
from bench.report import conditions, log, middle, smoke_verdict, write_json  # noqa: E402
from spa.api import parse_scheduled_pod_autoscaler, wire  # noqa: E402
from spa.controller.desired import FIELD_MANAGER, MANAGED_BY_SELECTOR, desired_hpa  # noqa: E402
from spa.controller.watches import cached_hpa  # noqa: E402
from spa.kube import HPA_V2, ItemTransform, KubeClient, connect  # noqa: E402
from spa.runtime import Store, drop_bookkeeping  # noqa: E402
from spa.schedule import State  # noqa: E402
from tests.builders import autoscaler, deployment  # noqa: E402

NAMESPACE = "bench-cache"


def hpa(name: str) -> dict[str, Any]:
    """The HPA the controller generates for the SPA `name` of tests/builders (CPU at 70 %, 3 to
    10), without its ownerReference: no such SPA exists, and the garbage collector would
    delete the HPA."""
    spa = autoscaler(name=name, namespace=NAMESPACE, metadata={"uid": f"uid-{name}"})
    desired = desired_hpa(
        wire.typed(wire.ScheduledPodAutoscaler, spa),
        parse_scheduled_pod_autoscaler(spa),
        State(3, 10, ()),
        api_version=HPA_V2.api_version,
    )
    body = dict(desired)
    body["metadata"] = {k: v for k, v in desired["metadata"].items() if k != "ownerReferences"}
    return body


async def ensure_hpas(client: KubeClient, count: int) -> None:
    """`count` Deployments (0 replicas: no pods to schedule, kube-controller-manager's writes
    are the HPAs') and their HPAs, and wait until kube-controller-manager has written every
    HPA's status (its conditions)."""
    log(f"creating {count} Deployments and their HPAs")
    await ensure_namespace(client, NAMESPACE)
    names = [f"web-{index}" for index in range(count)]
    targets = [
        (DEPLOYMENTS, deployment(name=name, namespace=NAMESPACE, replicas=0)) for name in names
    ]
    await create_each(client, NAMESPACE, targets, field_manager=FIELD_MANAGER)
    hpas = [(HPA_V2, hpa(name)) for name in names]
    await create_each(client, NAMESPACE, hpas, field_manager=FIELD_MANAGER)
    log(f"{count} HPAs created; waiting for their status")
    began = time.monotonic()
    said = began
    while True:
        listed = await client.list(HPA_V2, namespace=NAMESPACE, label_selector=MANAGED_BY_SELECTOR)
        synced = sum(bool((item.get("status") or {}).get("conditions")) for item in listed.items)
        if synced >= count:
            log(f"{count} HPAs have a status after {time.monotonic() - began:.0f} s")
            return
        if time.monotonic() > began + 300:
            raise TimeoutError(f"only {synced} of {count} HPAs have a status")
        if time.monotonic() > said + 30:
            # So that a run stopped while waiting says how far kube-controller-manager got.
            said = time.monotonic()
            log(f"{synced} of {count} HPAs have a status after {said - began:.0f} s")
        await asyncio.sleep(2)


async def measure_one(
    client: KubeClient, *, per_page: ItemTransform | None, after: ItemTransform | None
) -> dict[str, float]:
    """List the HPAs into a Store; the bytes kept per HPA and the list's peak."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = await client.list(
        HPA_V2, namespace=NAMESPACE, label_selector=MANAGED_BY_SELECTOR, transform=per_page
    )
    store = Store()
    for item in result.items:
        store.upsert(item if after is None else after(item))
    del result
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    count = len(store)
    return {
        "hpas": count,
        "kept_bytes_per_hpa": (kept - base) / count,
        "list_peak_bytes_per_hpa": (peak - base) / count,
    }


async def measure(kubeconfig: str, count: int, rounds: int, page_limit: int) -> dict[str, Any]:
    client = await connect(kubeconfig=kubeconfig, page_limit=page_limit)
    try:
        await ensure_hpas(client, count)
        sample = (
            await client.list(HPA_V2, namespace=NAMESPACE, label_selector=MANAGED_BY_SELECTOR)
        ).items[0]
        ways: dict[str, tuple[ItemTransform | None, ItemTransform | None]] = {
            "raw": (None, None),
            "bookkeeping": (None, drop_bookkeeping),
            "read": (cached_hpa, None),
        }
        results: dict[str, list[dict[str, float]]] = {name: [] for name in ways}
        for round_ in range(rounds):
            for name, (per_page, after) in ways.items():
                figures = await measure_one(client, per_page=per_page, after=after)
                results[name].append(figures)
                log(
                    f"round {round_} {name}: {figures['kept_bytes_per_hpa']:.0f} B kept, "
                    f"{figures['list_peak_bytes_per_hpa']:.0f} B peak per HPA"
                )
        return {
            "ways": results,
            "sample_json_bytes": {
                "raw": len(json.dumps(sample)),
                "bookkeeping": len(json.dumps(drop_bookkeeping(sample))),
                "read": len(json.dumps(cached_hpa(sample))),
            },
        }
    finally:
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", help="a running cluster with kube-controller-manager")
    parser.add_argument("--hpas", type=positive_int, default=1000)
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--page-limit", type=positive_int, default=500, help="items per list page")
    parser.add_argument("--out", help="write the raw results (JSON) here")
    parser.add_argument("--smoke", action="store_true", help="10 HPAs, one round (see above)")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.hpas, arguments.rounds = 10, 1

    def run(kubeconfig: str) -> dict[str, Any]:
        return asyncio.run(
            measure(kubeconfig, arguments.hpas, arguments.rounds, arguments.page_limit)
        )

    results = on_a_cluster(arguments.kubeconfig, run, name="cache", nodes=0)
    results["conditions"] = conditions(hpas=arguments.hpas, page_limit=arguments.page_limit)
    write_json(arguments.out, results)
    print("| cache | bytes kept per HPA (median) | list peak per HPA (median) | JSON of one HPA |")
    print("|---|---|---|---|")
    for name, rows in results["ways"].items():
        kept = middle(row["kept_bytes_per_hpa"] for row in rows)
        peak = middle(row["list_peak_bytes_per_hpa"] for row in rows)
        size = results["sample_json_bytes"][name]
        print(f"| {name} | {kept:.0f} | {peak:.0f} | {size} |")
    if arguments.smoke:
        kept_by = {name: rows[0]["kept_bytes_per_hpa"] for name, rows in results["ways"].items()}
        failures = []
        if not kept_by["read"] < kept_by["bookkeeping"] < kept_by["raw"]:
            failures.append(f"bytes kept per HPA {kept_by}")
        return smoke_verdict(failures, ok="each way keeps less than the one before it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
