"""Memory benchmark: what one SPA (with its Schedules and its HPA) costs in the running
controller at steady state, by structure.

Why: issue 24 asks for ≤ 20 KiB per SPA; the RSS slope of bench/original.py says how much,
not where. This runs the controller's `Manager` in this process (as tests/integration/
harness.py does) against a real control plane, with two fleet sizes one after the other
(the second fleet added while it runs), waits each time until every SPA is reconciled and the
work queue is idle, and measures:

* the RSS (VmRSS) after a full collection;
* the bytes reachable from each structure of the controller: each informer's store (its
  objects, its indexes), each attribute of the reconciler (compiled windows, per-key
  `Memory`, parsed SPAs, ...), of the work queue, the event recorder, the actuators, the
  controller, and the metric families of spa.controller.metrics and spa.runtime.metrics.
  `sys.getsizeof` over the objects reachable from each, each object counted once, for the
  first structure that reaches it (the caches come first: their strings are theirs);
* for each cache of SPAs, Schedules and HPAs, per object: its JSON's bytes and orjson's
  decode, and for a compact cache (`Store(codec=)`) the bytes at rest and the µs of its
  codec's decode (each read) and encode (each ingest);
* with ``--boundary`` (the controller on a clock set just before midnight UTC), the fleet is
  then moved across one boundary (the first Schedule of each SPA starts): the decodes and
  encodes of each compact cache and the controller's writes meanwhile;
* with ``--trim``, the RSS again after glibc's ``malloc_trim(0)``: how much of it is memory
  freed but kept by the allocator, which a controller that trims would give back;
* with ``--trace``, `tracemalloc` started after the first size: what the second fleet
  allocated and still holds, by file:line (tracemalloc's own memory inflates the RSS then,
  so the RSS slope is only reported without it).

The difference between the sizes, divided by the SPAs added, is the cost of one SPA.

    python bench/memory.py                       # starts its own control plane; 100 then 600 SPAs
    python bench/memory.py --sizes 100,1100 --schedules 4 --trace
    python bench/memory.py --kubeconfig FILE --namespace other   # a running control plane
    python bench/memory.py --kubeconfig FILE --namespace before --src ../before  # another tree
    python bench/memory.py --sizes 20,100 --boundary   # the caches' reads at one boundary
    python bench/memory.py --smoke               # 5 then 15 SPAs: exit status 1 unless each
                                                 # SPA costs something and less than 200 KiB
                                                 # (tests/bench/test_bench_smoke.py)
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import math
import os
import sys
import time
import tracemalloc
import types
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]


def _source() -> Path:
    """The tree whose `spa` (and tests/builders) is measured: `--src DIR`, else this one.
    Read before the imports, so that one copy of this benchmark measures another commit (a
    worktree of it) in the same run."""
    if "--src" in sys.argv:
        return Path(sys.argv[sys.argv.index("--src") + 1]).resolve()
    return REPO


sys.path.insert(0, str(_source()))
sys.path.append(str(REPO))  # bench.plane from this tree, whichever tree is measured

from bench.fleet import DEPLOYMENTS, create_each, ensure_namespace  # noqa: E402
from bench.measured import non_negative_int, positive_ints  # noqa: E402
from bench.plane import on_a_cluster  # noqa: E402
from bench.report import conditions, log, smoke_verdict, write_json  # noqa: E402
from spa.controller import metrics as controller_metrics  # noqa: E402
from spa.controller.actuator import Actuator  # noqa: E402
from spa.controller.capacity import CapacityActuator  # noqa: E402
from spa.controller.manager import Manager  # noqa: E402
from spa.controller.reconciler import Reconciler  # noqa: E402
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES  # noqa: E402
from spa.kube import KubeClient, RequestRecord, Resource, connect  # noqa: E402
from spa.runtime import (  # noqa: E402
    Controller,
    EventRecorder,
    FakeClock,
    Store,
    WorkQueue,
    WriteSummary,
)
from spa.runtime import metrics as runtime_metrics  # noqa: E402
from tests.builders import DAILY_NOON, autoscaler, deployment, schedule  # noqa: E402

# Never walked into: code and types are shared by everything, not per SPA.
_OPAQUE = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.CodeType,
    types.FrameType,
    asyncio.AbstractEventLoop,
)


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def malloc_trim() -> bool:
    """glibc's ``malloc_trim(0)``: the free pages inside the heap given back to the system.
    False where the C library has none (not glibc)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is None:
        return False
    trim(0)
    return True


def deep_size(root: object, seen: set[int]) -> int:
    """The bytes of the objects reachable from `root` not yet in `seen` (which it fills)."""
    total = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _OPAQUE):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def _instances(kind: type) -> list[Any]:
    return [obj for obj in gc.get_objects() if isinstance(obj, kind)]


def _queues_idle() -> bool:
    """Whether every work queue of the process is empty and working on nothing."""
    return all(not q._queue and not q._processing for q in _instances(WorkQueue))


def structures(manager: Manager) -> dict[str, int]:
    """Bytes reachable from each structure of the running controller (see the module doc)."""
    gc.collect()
    components: list[tuple[str, object]] = [
        (f"store {informer.resource.plural}", informer.store) for informer in manager.informers
    ]
    components += [(f"informer {i.resource.plural}", i) for i in manager.informers]
    for label, kind in (
        ("reconciler", Reconciler),
        ("queue", WorkQueue),
        ("recorder", EventRecorder),
        ("summary", WriteSummary),
        ("actuator", Actuator),
        ("capacity", CapacityActuator),
        ("controller", Controller),
    ):
        components += [(label, obj) for obj in _instances(kind)]
    # The components themselves, the manager, the client and the loop are boundaries: each
    # attribute is walked on its own, and nothing walks from one component into another.
    seen = {id(obj) for _, obj in components}
    seen |= {id(manager), id(manager.client), id(asyncio.get_running_loop())}
    sizes: dict[str, int] = {}
    for label, obj in components:
        for attribute, value in vars(obj).items():
            name = f"{label}.{attribute}"
            sizes[name] = sizes.get(name, 0) + deep_size(value, seen)
    for module in (controller_metrics, runtime_metrics):
        for attribute, value in vars(module).items():
            if attribute.startswith("__") or isinstance(value, _OPAQUE):
                continue
            name = f"metrics {module.__name__.rsplit('.', 2)[-2]}.{attribute}"
            sizes[name] = deep_size(value, seen)
    return sizes


def group(sizes: dict[str, int]) -> dict[str, int]:
    """The structures issue 24 names, from the attribute-level sizes."""
    groups: dict[str, int] = {}

    def add(name: str, value: int) -> None:
        groups[name] = groups.get(name, 0) + value

    for name, value in sizes.items():
        label, _, attribute = name.partition(".")
        if label.startswith("store "):
            what = "objects" if attribute == "_objects" else "indexes"
            add(f"{label[6:]} cache ({what})", value)
        elif label == "reconciler":
            add(f"reconciler {attribute}", value)
        elif label.startswith("metrics"):
            add("metrics", value)
        else:
            add(label.split()[0], value)
    return groups


async def create_fleet(
    client: KubeClient, namespace: str, first: int, count: int, schedules: int
) -> None:
    """SPAs `web-<first>`... with their Deployments (0 replicas) and `schedules` Schedules."""
    objects: list[tuple[Resource, dict[str, Any]]] = []
    for index in range(first, first + count):
        name = f"web-{index}"
        objects.append((DEPLOYMENTS, deployment(name=name, namespace=namespace, replicas=0)))
        objects.append((SCHEDULED_POD_AUTOSCALERS, autoscaler(name=name, namespace=namespace)))
        for hour in range(schedules):
            window = {**DAILY_NOON, "startTime": f"{hour:02}:00", "endTime": f"{hour:02}:30"}
            body = schedule(
                name=f"{name}-{hour}",
                namespace=namespace,
                target=name,
                **window,
                minReplicas=5,
                maxReplicas=20,
            )
            objects.append((SCHEDULES, body))
    await create_each(client, namespace, objects)


def _each(store: Store) -> Iterable[dict[str, Any]]:
    """A store's objects one at a time where it can (`Store.objects`; a tree from before has
    only `list`): a list of a compact store's objects decoded all at once, every 0.5 s, would
    be a peak of the whole cache decoded, which the RSS measured afterwards keeps in part."""
    objects = getattr(store, "objects", None)
    return store.list() if objects is None else objects()


async def settled(manager: Manager, spas: int, schedules: int, within: float) -> float:
    """Wait until the caches hold the fleet, every SPA, Schedule and HPA has a status, and the
    work queue has been idle for 3 s; the seconds it took."""
    began = time.monotonic()
    idle_since: float | None = None
    while True:
        # The manager makes its informers once it runs.
        autoscalers, schedule_store, hpas = (
            [informer.store for informer in manager.informers[:3]]
            if len(manager.informers) >= 3
            else [Store(), Store(), Store()]
        )
        complete = (
            len(autoscalers) == spas
            and len(schedule_store) == spas * schedules
            and len(hpas) == spas
            and all("status" in obj for obj in _each(autoscalers))
            and all("status" in obj for obj in _each(schedule_store))
            and all("status" in obj for obj in _each(hpas))
        )
        idle = _queues_idle()
        now = time.monotonic()
        if complete and idle:
            idle_since = idle_since or now
            if now - idle_since >= 3:
                return now - began
        else:
            idle_since = None
        if now - began > within:
            raise TimeoutError(
                f"not settled in {within:.0f}s: {len(autoscalers)} SPAs, "
                f"{len(schedule_store)} Schedules, {len(hpas)} HPAs"
            )
        await asyncio.sleep(0.5)


def full_collections() -> dict[str, float]:
    """What a full collection costs with everything tracked, and after `gc.freeze()` (the
    objects then alive moved to the permanent generation, which collections skip)."""

    def timed() -> float:
        began = time.perf_counter()
        gc.collect()
        return (time.perf_counter() - began) * 1000

    tracked = len(gc.get_objects())
    before = min(timed() for _ in range(5))
    gc.freeze()
    try:
        after = min(timed() for _ in range(5))
    finally:
        gc.unfreeze()
    return {"tracked_objects": tracked, "full_collection_ms": before, "frozen_ms": after}


def _best_per_item(function: Callable[[Any], object], items: list[Any], rounds: int = 5) -> float:
    """µs per item of `function` applied to each of `items`, the best of `rounds`."""
    best = math.inf
    for _ in range(rounds):
        began = time.perf_counter()
        for item in items:
            function(item)
        best = min(best, time.perf_counter() - began)
    return best / max(len(items), 1) * 1e6


def codec_costs(manager: Manager) -> dict[str, dict[str, float]]:
    """What each cache of the SPAs, Schedules and HPAs costs per object, on the objects it
    holds (docs/performance.md, "compact caches"): its JSON's bytes and orjson's decode of
    it; the transform at ingest (on the decoded JSON); and, for a compact store, the bytes at
    rest and its codec's decode (each read) and encode (each ingest). Best of 5 rounds over
    all the objects, on the event loop's thread while the controller idles."""
    costs: dict[str, dict[str, float]] = {}
    for informer in manager.informers[:3]:
        store = informer.store
        objects = store.list()
        if not objects:
            continue
        count = len(objects)
        texts = [orjson.dumps(obj) for obj in objects]
        entry: dict[str, float] = {
            "objects": count,
            "json_bytes": sum(map(len, texts)) / count,
            "json_decode_us": _best_per_item(orjson.loads, texts),
        }
        transform = getattr(informer, "_transform", None)
        if transform is not None:
            decoded = [orjson.loads(text) for text in texts]
            entry["transform_us"] = _best_per_item(transform, decoded)
        codec = getattr(store, "_codec", None)
        if codec is not None:
            stored = [*store._objects.values()]
            entry["at_rest_bytes"] = sum(map(len, stored)) / count
            entry["decode_us"] = _best_per_item(codec.decode, stored)
            entry["encode_us"] = _best_per_item(codec.encode, objects)
        costs[informer.resource.plural] = entry
    return costs


# `--boundary`: the controller's clock just before midnight UTC, when the first Schedule of
# every SPA (Daily, 00:00-00:30) starts.
_BEFORE_BOUNDARY = datetime(2026, 11, 16, 23, 59, 30, tzinfo=UTC).timestamp()
_WRITES = ("create", "patch", "update", "delete")


class _Counting:
    """A store's codec, counting its decodes (reads) and encodes (ingests) into `tally`."""

    def __init__(self, codec: Any, tally: dict[str, int]) -> None:
        self._codec = codec
        self._tally = tally

    def encode(self, obj: dict[str, Any]) -> bytes:
        self._tally["encodes"] += 1
        encoded: bytes = self._codec.encode(obj)
        return encoded

    def decode(self, data: bytes) -> dict[str, Any]:
        self._tally["decodes"] += 1
        decoded: dict[str, Any] = self._codec.decode(data)
        return decoded


async def boundary_reads(
    manager: Manager, client: KubeClient, admin: KubeClient, clock: FakeClock, namespace: str
) -> dict[str, Any]:
    """The decodes and encodes of each compact cache, and the controller's writes, while the
    whole fleet crosses one boundary (its clock moved to midnight, where the first Schedule of
    each SPA starts): what a compact cache costs per SPA and per write, with the codec's µs
    (docs/performance.md, "compact caches"). Done once every HPA has the window's minimum (5)
    and the work queue has been idle for 3 s."""
    tallies: dict[str, dict[str, int]] = {}
    for informer in manager.informers[:3]:
        codec = getattr(informer.store, "_codec", None)
        if codec is not None:
            tally = tallies[informer.resource.plural] = {"decodes": 0, "encodes": 0}
            informer.store._codec = _Counting(codec, tally)
    writes = 0

    def count(request: RequestRecord) -> None:
        nonlocal writes
        writes += request.verb in _WRITES

    client.add_request_hook(count)
    clock.set(_BEFORE_BOUNDARY + 30)
    began = time.monotonic()
    idle_since: float | None = None
    assert manager.hpa_resource is not None
    spas = len(manager.informers[0].store)
    while True:
        await asyncio.sleep(0.5)
        hpas = (await admin.list(manager.hpa_resource, namespace=namespace)).items
        moved = sum(1 for hpa in hpas if hpa["spec"].get("minReplicas") == 5)
        idle = _queues_idle()
        now = time.monotonic()
        idle_since = (idle_since or now) if moved == spas and idle else None
        if idle_since is not None and now - idle_since >= 3:
            break
        if now - began > 120 + spas * 0.2:
            raise TimeoutError(f"the boundary not done: {moved} of {spas} HPAs moved")
    log(f"boundary done in {now - began:.1f}s, {writes} writes")
    decodes = sum(tally["decodes"] for tally in tallies.values())
    return {
        "spas": spas,
        "writes": writes,
        "caches": tallies,
        "decodes_per_spa": decodes / spas,
        "decodes_per_write": decodes / max(writes, 1),
    }


def top_lines(snapshot: tracemalloc.Snapshot, per: int, limit: int) -> list[dict[str, Any]]:
    stats = snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)]).statistics(
        "lineno"
    )
    rows = []
    for stat in stats[:limit]:
        frame = stat.traceback[0]
        where = (
            os.path.relpath(frame.filename, REPO)
            if frame.filename.startswith(str(REPO))
            else ("/".join(Path(frame.filename).parts[-2:]))
        )
        rows.append({"where": f"{where}:{frame.lineno}", "bytes_per_spa": stat.size / per})
    return rows


async def measure(
    kubeconfig: str,
    namespace: str,
    sizes: list[int],
    schedules: int,
    trace: bool,
    freeze: bool = False,
    boundary: bool = False,
    trim: bool = False,
) -> dict[str, Any]:
    admin = await connect(kubeconfig=kubeconfig)
    client = await connect(kubeconfig=kubeconfig)
    clock = FakeClock(_BEFORE_BOUNDARY) if boundary else None
    manager = Manager(
        client=client,
        namespaces=[namespace],
        workers=4,
        resync_period=86400,
        metrics_address=None,
        probe_address=None,
    )
    if clock is not None:
        manager.clock = clock
    if freeze:  # as `spa run` does; a tree from before the option has none to set
        manager.freeze_after_sync = True
    task: asyncio.Task[int] | None = None
    points: list[dict[str, Any]] = []
    try:
        await ensure_namespace(admin, namespace)
        created = 0
        for index, size in enumerate(sizes):
            log(f"creating SPAs {created} to {size - 1}")
            await create_fleet(admin, namespace, created, size - created, schedules)
            created = size
            if task is None:
                task = asyncio.create_task(manager.run())
            took = await settled(manager, size, schedules, within=120 + size * 0.5)
            if trace and index == len(sizes) - 1:
                snapshot = tracemalloc.take_snapshot()
                tracemalloc.stop()
            gc.collect()
            point: dict[str, Any] = {
                "spas": size,
                "settled_seconds": took,
                "rss_bytes": rss_bytes(),
                "structures": structures(manager),
            }
            if trim and malloc_trim():
                point["rss_trimmed_bytes"] = rss_bytes()
            points.append(point)
            log(f"{size} SPAs settled in {took:.1f}s; RSS {point['rss_bytes'] / 2**20:.1f} MiB")
            if trace and index == len(sizes) - 2:
                tracemalloc.start(1)
        codecs = codec_costs(manager)
        crossed = (
            None
            if clock is None
            else await boundary_reads(manager, client, admin, clock, namespace)
        )
    finally:
        manager.stop()
        if task is not None:
            await asyncio.wait_for(task, timeout=30)
        await client.close()
        await admin.close()
    first, last = points[0], points[-1]
    last["gc"] = full_collections()
    added = last["spas"] - first["spas"]
    result: dict[str, Any] = {
        "points": points,
        "per_spa": {
            "rss": (last["rss_bytes"] - first["rss_bytes"]) / added,
            "structures": {
                name: (value - first["structures"].get(name, 0)) / added
                for name, value in last["structures"].items()
            },
        },
        "codecs": codecs,
    }
    if "rss_trimmed_bytes" in last:
        result["per_spa"]["rss_trimmed"] = (
            last["rss_trimmed_bytes"] - first["rss_trimmed_bytes"]
        ) / added
    if crossed is not None:
        result["boundary"] = crossed
    if trace:
        result["per_spa"]["tracemalloc_total"] = (
            sum(stat.size for stat in snapshot.statistics("filename")) / added
        )
        result["per_spa"]["tracemalloc_lines"] = top_lines(snapshot, added, 40)
    return result


def report(result: dict[str, Any]) -> None:
    per = result["per_spa"]
    grouped = group(per["structures"])
    print(f"RSS per SPA: {per['rss']:.0f} B ({per['rss'] / 1024:.1f} KiB)")
    first, last = result["points"][0], result["points"][-1]
    gc_figures = last["gc"]
    print(
        f"at {last['spas']} SPAs: RSS {last['rss_bytes'] / 2**20:.1f} MiB, "
        f"{gc_figures['tracked_objects']} objects tracked by the gc, full collection "
        f"{gc_figures['full_collection_ms']:.1f} ms, {gc_figures['frozen_ms']:.1f} ms after "
        f"gc.freeze() (first size: RSS {first['rss_bytes'] / 2**20:.1f} MiB)"
    )
    if "rss_trimmed" in per:
        print(
            f"after malloc_trim(0): RSS per SPA {per['rss_trimmed']:.0f} B "
            f"({per['rss_trimmed'] / 1024:.1f} KiB); at {last['spas']} SPAs "
            f"{last['rss_trimmed_bytes'] / 2**20:.1f} MiB, at {first['spas']} "
            f"{first['rss_trimmed_bytes'] / 2**20:.1f} MiB"
        )
    if "tracemalloc_total" in per:
        print(f"tracemalloc, still allocated per SPA: {per['tracemalloc_total']:.0f} B")
    print("| structure | bytes per SPA |")
    print("|---|---|")
    for name, value in sorted(grouped.items(), key=lambda item: -item[1]):
        if abs(value) >= 16:
            print(f"| {name} | {value:.0f} |")
    print(f"| **sum of the structures** | {sum(grouped.values()):.0f} |")
    print("| cache, per object | JSON bytes | at rest | JSON decode µs | decode µs | encode µs |")
    print("|---|---|---|---|---|---|")
    for name, cost in result["codecs"].items():
        cells = [
            "—"
            if field not in cost
            else f"{cost[field]:.0f}"
            if field.endswith("bytes")
            else f"{cost[field]:.2f}"
            for field in ("json_bytes", "at_rest_bytes", "json_decode_us", "decode_us", "encode_us")
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    if "boundary" in result:
        crossed = result["boundary"]
        print(
            f"one boundary of {crossed['spas']} SPAs: {crossed['writes']} writes, "
            f"{crossed['decodes_per_spa']:.1f} decodes per SPA "
            f"({crossed['decodes_per_write']:.1f} per write); by cache: {crossed['caches']}"
        )
    for row in per.get("tracemalloc_lines", [])[:25]:
        print(f"  {row['bytes_per_spa']:8.0f} B  {row['where']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", help="a running control plane (with CRDs installed)")
    parser.add_argument("--namespace", default="bench-memory")
    parser.add_argument(
        "--sizes", type=positive_ints, default=[100, 600], help="fleet sizes, ascending"
    )
    parser.add_argument("--schedules", type=non_negative_int, default=4, help="Schedules per SPA")
    parser.add_argument("--src", help="measure the spa package of this tree (a worktree)")
    parser.add_argument(
        "--freeze", action="store_true", help="gc.freeze() after the first sync, as spa run"
    )
    parser.add_argument("--trace", action="store_true", help="tracemalloc by file:line")
    parser.add_argument(
        "--trim", action="store_true", help="also the RSS after glibc's malloc_trim(0)"
    )
    parser.add_argument(
        "--boundary",
        action="store_true",
        help="then move the fleet across one boundary and count the caches' decodes",
    )
    parser.add_argument("--out", help="write the raw results (JSON) here")
    parser.add_argument("--smoke", action="store_true", help="5 then 15 SPAs (see above)")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.sizes = [5, 15]
    sizes = arguments.sizes
    if len(sizes) < 2 or sizes != sorted(set(sizes)):
        # The cost per SPA is the growth from the first size to the last.
        parser.error(f"--sizes must be two or more fleet sizes, ascending, not {sizes}")

    def run(kubeconfig: str) -> dict[str, Any]:
        return asyncio.run(
            measure(
                kubeconfig,
                arguments.namespace,
                sizes,
                arguments.schedules,
                arguments.trace,
                arguments.freeze,
                arguments.boundary,
                arguments.trim,
            )
        )

    result = on_a_cluster(arguments.kubeconfig, run, name="memory", crds=True, nodes=0)
    result["conditions"] = conditions(
        src=str(_source()),
        sizes=sizes,
        schedules_per_spa=arguments.schedules,
        trace=arguments.trace,
        freeze=arguments.freeze,
        trim=arguments.trim,
    )
    write_json(arguments.out, result)
    report(result)
    if arguments.smoke:
        structures_sum = sum(result["per_spa"]["structures"].values())
        failures = []
        if not 0 < structures_sum < 200 * 1024:
            failures.append(f"{structures_sum:.0f} B per SPA in the structures")
        return smoke_verdict(failures, ok="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
