"""The objects a benchmark creates, changes and waits for: namespaces, Deployments, SPAs and
their Schedules, made many at a time; the fleet of bench/load.py (which bench/original.py
measures too); the Daily window of bench/capacity.py and bench/nodes.py; and the first
instants a watch sees each object in a state.

Why one module: each benchmark made and moved its fleet with its own thread pool or
semaphore, its own retries (or none), and bench/nodes.py imported its window from
bench/capacity.py. What a benchmark measures is the controller's answer to its fleet, not how
the fleet got there. bench/report.py says why this is a flat module.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, cast
from zoneinfo import ZoneInfo

from bench.report import log
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.kube import ApiError, ApiUnavailable, BlockingKubeClient, Conflict, KubeClient, Resource
from tests.builders import autoscaler, schedule

DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)


# -- making and changing many objects -----------------------------------------------------------


def create_all(
    client: BlockingKubeClient,
    namespace: str,
    objects: list[tuple[Resource, dict[str, Any]]],
    *,
    threads: int = 16,
) -> float:
    """Create `objects` in `namespace`, `threads` at a time; one that exists already is left
    as it is, a refusal is tried again (up to 10 times, 0.5 s apart); the seconds taken."""
    began = time.monotonic()

    def create(item: tuple[Resource, dict[str, Any]]) -> None:
        resource, obj = item
        for attempt in range(10):
            try:
                client.create(resource, namespace, obj)
                return
            except ApiError as error:
                if error.status == 409:
                    return
                if attempt == 9:
                    raise
                time.sleep(0.5)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(create, objects))
    return time.monotonic() - began


def patch_all(
    client: BlockingKubeClient,
    resource: Resource,
    namespace: str,
    patches: Mapping[str, dict[str, Any]],
    *,
    threads: int = 16,
) -> None:
    """A JSON merge patch of each object named in `patches`, `threads` at a time (field
    manager "bench": an edit, as a Git commit applied by hand would make)."""
    with ThreadPoolExecutor(threads) as pool:
        list(
            pool.map(
                lambda item: client.patch(
                    resource,
                    namespace,
                    item[0],
                    item[1],
                    patch_type="merge",
                    field_manager="bench",
                ),
                patches.items(),
            )
        )


async def ensure_namespace(client: KubeClient, name: str) -> None:
    with contextlib.suppress(Conflict):
        await client.create(NAMESPACES, None, {"metadata": {"name": name}})


async def create_each(
    client: KubeClient,
    namespace: str,
    objects: Iterable[tuple[Resource, dict[str, Any]]],
    *,
    field_manager: str | None = None,
    concurrency: int = 8,
) -> None:
    """Create `objects` in `namespace`, `concurrency` at a time, leaving any that exists."""
    semaphore = asyncio.Semaphore(concurrency)

    async def create(resource: Resource, body: dict[str, Any]) -> None:
        async with semaphore:
            with contextlib.suppress(Conflict):
                await client.create(resource, namespace, body, field_manager=field_manager)

    await asyncio.gather(*(create(resource, body) for resource, body in objects))


def wait_for(check: Callable[[], bool], *, within: float, what: str, every: float = 1.0) -> bool:
    """Poll `check` every `every` s, at least once (an API server restarting in between is no
    answer); False, and a line on stderr, if it did not hold within `within` s."""
    deadline = time.monotonic() + within
    while True:
        with contextlib.suppress(ApiError, ApiUnavailable):
            if check():
                return True
        if time.monotonic() >= deadline:
            log(f"{what}: not within {within:.0f} s")
            return False
        time.sleep(every)


# -- the fleet of bench/load.py (and bench/original.py) ----------------------------------------

ZONES = [
    "Asia/Tokyo",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Sydney",
    "UTC",
    "Asia/Kolkata",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
BASE_MIN, BASE_MAX = 2, 10
ACTIVE_MIN = 3  # the Daily window that is active during the whole run
FLIP_MIN, FLIP_MAX = 6, 20  # the window that starts at the boundary
# The flipping window lasts this long (its end is the throttled boundary); longer than the
# whole fleet's transition, so that its end never mixes with the start's writes.
WINDOW_MINUTES = 5


def _local(instant: datetime, zone: str) -> datetime:
    return instant.astimezone(ZoneInfo(zone))


def flip_spec(index: int, boundary: datetime, minutes: int = WINDOW_MINUTES) -> dict[str, Any]:
    """The window of SPA `index` that starts at `boundary` (type and zone rotate) and lasts
    `minutes`."""
    zone = ZONES[index % len(ZONES)]
    start = _local(boundary, zone)
    end = _local(boundary + timedelta(minutes=minutes), zone)
    kind = ("Weekly", "Daily", "OneShot")[index % 3]
    flip: dict[str, Any] = {"type": kind, "timeZone": zone, "description": "pre-scale"}
    if kind == "OneShot":
        flip |= {
            "startTime": start.strftime("%Y-%m-%dT%H:%M"),
            "endTime": end.strftime("%Y-%m-%dT%H:%M"),
        }
    else:
        flip |= {"startTime": start.strftime("%H:%M"), "endTime": end.strftime("%H:%M")}
    if kind == "Weekly":
        flip |= {"startDayOfWeek": DAYS[start.weekday()], "endDayOfWeek": DAYS[end.weekday()]}
    return flip | {"minReplicas": FLIP_MIN, "maxReplicas": FLIP_MAX}


def schedules(
    index: int, name: str, namespace: str, boundary: datetime, now: datetime
) -> list[dict[str, Any]]:
    """Four Schedules: one starting at `boundary` (`flip_spec`), one Daily active during the
    whole run, one Weekly three days away, one OneShot next month."""

    def make(suffix: str, spec: dict[str, Any]) -> dict[str, Any]:
        return schedule(name=f"{name}-{suffix}", namespace=namespace, target=name, **spec)

    zone = ZONES[index % len(ZONES)]
    other = ZONES[(index + 1) % len(ZONES)]
    third = ZONES[(index + 2) % len(ZONES)]
    flip = flip_spec(index, boundary)
    active_from = _local(now - timedelta(hours=1), other)
    active_to = _local(now + timedelta(hours=3), other)
    later = _local(now + timedelta(days=3), third)
    next_month = _local(now + timedelta(days=30), zone)
    return [
        make("prescale", flip),
        make(
            "daytime",
            {
                "type": "Daily",
                "timeZone": other,
                "startTime": active_from.strftime("%H:%M"),
                "endTime": active_to.strftime("%H:%M"),
                "minReplicas": ACTIVE_MIN,
            },
        ),
        make(
            "weekly",
            {
                "type": "Weekly",
                "timeZone": third,
                "startDayOfWeek": DAYS[later.weekday()],
                "endDayOfWeek": DAYS[later.weekday()],
                "startTime": "09:00",
                "endTime": "17:30",
                "maxReplicas": 30,
            },
        ),
        make(
            "campaign",
            {
                "type": "OneShot",
                "timeZone": zone,
                "startTime": next_month.strftime("%Y-%m-%dT10:00"),
                "endTime": (next_month + timedelta(days=1)).strftime("%Y-%m-%dT10:00"),
                "minReplicas": 8,
                "maxReplicas": 40,
            },
        ),
    ]


def load_fleet(
    n: int, namespace: str, boundary: datetime, now: datetime
) -> tuple[list[str], list[tuple[Resource, dict[str, Any]]]]:
    """N SPAs `app-00000`... (base BASE_MIN/BASE_MAX) with their four `schedules` each: the
    names, and the objects to create."""
    names = [f"app-{i:05d}" for i in range(n)]
    objects: list[tuple[Resource, dict[str, Any]]] = []
    for i, name in enumerate(names):
        spa = autoscaler(name=name, namespace=namespace, minReplicas=BASE_MIN, maxReplicas=BASE_MAX)
        objects.append((SCHEDULED_POD_AUTOSCALERS, spa))
        objects += [(SCHEDULES, obj) for obj in schedules(i, name, namespace, boundary, now)]
    return names, objects


# -- the window of bench/capacity.py and bench/nodes.py -----------------------------------------

WINDOW_MIN = 3  # the window's minReplicas (the base's is 1)


def window(name: str, boundary: datetime) -> dict[str, Any]:
    """The Daily Schedule `<name>-peak` of SPA `name`: WINDOW_MIN from `boundary`, 10 min."""
    return schedule(
        name=f"{name}-peak",
        namespace=None,
        target=name,
        type="Daily",
        startTime=boundary.strftime("%H:%M"),
        endTime=(boundary + timedelta(minutes=10)).strftime("%H:%M"),
        minReplicas=WINDOW_MIN,
    )


def move_windows(
    client: BlockingKubeClient, namespace: str, names: Iterable[str], boundary: datetime
) -> None:
    """Every `window` of SPAs `names` moved to start at `boundary`."""
    patches = {f"{name}-peak": {"spec": window(name, boundary)["spec"]} for name in names}
    patch_all(client, SCHEDULES, namespace, patches)


def next_boundary(after: float) -> datetime:
    """The first whole minute after `after` (a wall-clock instant) and a minute."""
    instant = datetime.fromtimestamp(after, UTC)
    return (instant + timedelta(minutes=1)).replace(second=0, microsecond=0)


def ready_at_one(client: BlockingKubeClient, namespace: str) -> int:
    """How many Deployments of the namespace have their one replica Ready."""
    items = client.list(DEPLOYMENTS, namespace=namespace).items
    return sum(1 for item in items if ((item.get("status") or {}).get("readyReplicas") or 0) >= 1)


def reconciled(client: BlockingKubeClient, namespace: str) -> int:
    """How many SPAs of the namespace the controller has reconciled (status written)."""
    items = client.list(SCHEDULED_POD_AUTOSCALERS, namespace=namespace).items
    return sum(1 for item in items if (item.get("status") or {}).get("observedGeneration"))


class FirstTimes:
    """Wall-clock instants at which a watch (the kubernetes package's, in a thread of its own,
    started again when it breaks) first delivered each object of a list, first delivered it
    meeting `ready` (and `wanted`, if given), and delivered its deletion; with each object's
    labels."""

    def __init__(
        self,
        api: Any,
        list_call: Callable[..., Any],
        *args: str,
        ready: Callable[[dict[str, Any]], bool],
        wanted: Callable[[dict[str, Any]], bool] | None = None,
        label_selector: str = "",
    ) -> None:
        from kubernetes import watch

        self.seen: dict[str, float] = {}
        self.ready: dict[str, float] = {}
        self.wanted: dict[str, float] = {}
        self.deleted: dict[str, float] = {}
        self.labels: dict[str, dict[str, str]] = {}
        self._api = api
        self._list = list_call
        self._args = args
        self._predicates = [(self.ready, ready)]
        if wanted is not None:
            self._predicates.append((self.wanted, wanted))
        self._selector = label_selector
        self._watch = watch.Watch()  # type: ignore[no-untyped-call]
        self._stopped = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped:
            try:
                for event in self._watch.stream(  # type: ignore[no-untyped-call]
                    self._list, *self._args, label_selector=self._selector, timeout_seconds=300
                ):
                    received = time.time()
                    obj = cast(
                        dict[str, Any],
                        self._api.sanitize_for_serialization(event["object"]),
                    )
                    name = obj["metadata"]["name"]
                    self.seen.setdefault(name, received)
                    self.labels[name] = obj["metadata"].get("labels") or {}
                    if event["type"] == "DELETED":
                        self.deleted.setdefault(name, received)
                        continue
                    for first, predicate in self._predicates:
                        if predicate(obj):
                            first.setdefault(name, received)
            except Exception as error:  # a broken watch is started again
                if not self._stopped:
                    log(f"watch: {error!r}; watching again")

    def stop(self) -> None:
        self._stopped = True
        self._watch.stop()  # type: ignore[no-untyped-call]
