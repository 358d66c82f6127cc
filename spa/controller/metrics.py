"""The SPA-specific Prometheus metrics (docs/operations.md lists them).

The two gauges of the original controller keep their exact names (typo included) so that
existing dashboards keep working; everything new is in the `spa_` family. Series of deleted
objects are removed, so a dashboard never shows an autoscaler that no longer exists.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from spa import __version__
from spa.controller.decide.incident import OVERRIDDEN_CONDITION, PAUSED_CONDITION
from spa.controller.decide.readiness import MissedReason
from spa.runtime import Store, split_key

__all__ = [
    "CACHED_OBJECTS",
    "SHARD_INFO",
    "SHARD_REFUSED",
    "CachedObjects",
    "ControllerMetrics",
    "ReconciledSeries",
    "ReconciledSeriesCollector",
    "add_series_labels",
]

_ORIGINAL_PREFIX = "scheduled_pod_auroscaler_controller_scheduled_pod_auroscaler"


class ReconciledSeries:
    """One gauge the reconciler sets per object (the bounds in force, whether each Schedule is
    active, the last success, capacity), kept as plain values by label values and turned into
    a family at scrape time (:class:`ReconciledSeriesCollector`).

    Why not a labelled `Gauge`: each child is an object of its own with a lock, about 740
    bytes, and an SPA with 4 Schedules had seven; a value here costs a dict entry, its label
    tuple and a float (docs/performance.md, "2026-11-26: memory per SPA (issue 24)"). The
    label values are interned: an SPA's name and namespace are labels of several series, and
    held by `ControllerMetrics` too, one string for all.
    """

    def __init__(self, name: str, documentation: str, labelnames: tuple[str, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = labelnames
        self._values: dict[tuple[str, ...], float] = {}

    def set(self, labels: tuple[str, ...], value: float) -> None:
        assert len(labels) == len(self.labelnames), labels
        self._values[tuple(sys.intern(label) for label in labels)] = value

    def remove(self, labels: tuple[str, ...]) -> None:
        """Drop the series of these label values (none: nothing to do)."""
        self._values.pop(labels, None)

    def family(self) -> GaugeMetricFamily:
        family = GaugeMetricFamily(self.name, self.documentation, labels=list(self.labelnames))
        for labels, value in list(self._values.items()):
            family.add_metric(list(labels), value)
        return family


MIN_REPLICAS = ReconciledSeries(
    f"{_ORIGINAL_PREFIX}_min_replicas",
    "minReplicas in force on the generated HPA (name kept from the original controller).",
    ("name", "namespace"),
)
MAX_REPLICAS = ReconciledSeries(
    f"{_ORIGINAL_PREFIX}_max_replicas",
    "maxReplicas in force on the generated HPA (name kept from the original controller).",
    ("name", "namespace"),
)
SCHEDULE_ACTIVE = ReconciledSeries(
    "spa_schedule_active",
    "1 while the Schedule's window is active and applied, else 0.",
    ("namespace", "name", "autoscaler"),
)
HPA_WRITES = Counter(
    "spa_hpa_writes_total",
    "Writes of generated HPAs, by operation (create, patch; noop: a patch that changed nothing).",
    ["operation"],
)
HPA_DRY_RUNS = Counter(
    "spa_hpa_dry_runs_total",
    "Dry-run patches asking the API server how it stores a desired HPA spec (after a restart).",
)
HPA_REFUSED = Counter(
    "spa_hpa_refused_total",
    "HPA writes the API server refused, by HTTP status (400, 403, 422).",
    ["code"],
)
HPA_NOT_CONVERGING = Counter(
    "spa_hpa_not_converging_total",
    "Writes withheld because the HPA still differed right after our own write (backed off).",
)
BOUNDARY_LAG = Histogram(
    "spa_boundary_lag_seconds",
    "From a window boundary to the HPA write that applies it.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
)
FLEET_BOUNDARY = Gauge(
    "spa_fleet_boundary_timestamp_seconds",
    "The last boundary whose fleet of raises was written ahead of it (Unix time).",
)
FLEET_SIZE = Gauge(
    "spa_fleet_size",
    "The SPAs with a raise due at that boundary.",
)
FLEET_FIRST_RAISE = Gauge(
    "spa_fleet_first_raise_seconds",
    "When the fleet's first raise landed, relative to its boundary (negative: before it).",
)
FLEET_LAST_RAISE = Gauge(
    "spa_fleet_last_raise_seconds",
    "When the fleet's last raise so far landed, relative to its boundary (negative: before it).",
)
FLEET_WRITE_TIME = Gauge(
    "spa_fleet_write_seconds",
    "The time one HPA write is estimated to take of the controller's throughput, from which "
    "fleets' starts are computed.",
)
CAPACITY_REQUESTED = ReconciledSeries(
    "spa_capacity_requested_pods",
    "Pods' worth of node capacity the ScheduledPodAutoscaler holds ahead of a window "
    '(its CapacityBuffer\'s replicas; docs/schedules.md, "Node capacity").',
    ("namespace", "name"),
)
CAPACITY_NOT_READY = ReconciledSeries(
    "spa_capacity_not_ready",
    "1 while the boundary of a window that orders node capacity has passed (the HPA asks for "
    "the window's minimum) and the ScheduledPodAutoscaler's CapacityReady condition is still "
    'False, else 0 (docs/schedules.md, "Node capacity").',
    ("namespace", "name"),
)
WINDOWS = Counter(
    "spa_windows_total",
    "Window starts measured, by outcome: Early (Ready by the boundary), Late (Ready after it) "
    "or Missed (not Ready before the window ended), and for Missed the reason (empty "
    'otherwise); docs/api.md, "status.windows".',
    ["outcome", "reason"],
)
# Every outcome and reason has a series from the start, for ratios (a bounded set).
for _outcome in ("Early", "Late"):
    WINDOWS.labels(_outcome, "")
for _reason in MissedReason:
    WINDOWS.labels("Missed", _reason.value)
# Ready relative to the boundary B, negative when early: the buckets span half an hour either
# side, finest around B, where an SLO ("Ready by B") draws its line (docs/operations.md).
WINDOW_READY_BUCKETS = (
    -1800.0, -900.0, -600.0, -300.0, -120.0, -60.0, -30.0, -10.0,
    0.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0,
)  # fmt: skip
WINDOW_READY = Histogram(
    "spa_window_ready_seconds",
    "When the target's readyReplicas reached a window's minimum, relative to the window's "
    "boundary (negative: early). Use the buckets: the sum mixes early and late windows.",
    buckets=WINDOW_READY_BUCKETS,
)
WINDOW_LATE = ReconciledSeries(
    "spa_window_late",
    "1 while the last measured window of the ScheduledPodAutoscaler was Late or Missed (not "
    "for a pause, nor for a target whose readiness is not measured), else 0 "
    '(docs/operations.md, "SpaWindowLate").',
    ("namespace", "name"),
)
LAST_SUCCESS = ReconciledSeries(
    "spa_last_successful_reconcile_timestamp_seconds",
    "When the ScheduledPodAutoscaler was last reconciled without error (Unix time).",
    ("namespace", "name"),
)


class ReconciledSeriesCollector(Collector):
    """Reports the :class:`ReconciledSeries` at scrape time."""

    def __init__(self, series: Iterable[ReconciledSeries]) -> None:
        self._series = tuple(series)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for series in self._series:
            yield series.family()


REGISTRY.register(
    ReconciledSeriesCollector(
        (
            MIN_REPLICAS,
            MAX_REPLICAS,
            SCHEDULE_ACTIVE,
            CAPACITY_REQUESTED,
            CAPACITY_NOT_READY,
            WINDOW_LATE,
            LAST_SUCCESS,
        )
    )
)
BUILD_INFO = Gauge(
    "spa_build_info", "Always 1; the labels say which build runs.", ["version", "python_version"]
)
BUILD_INFO.labels(__version__, platform.python_version()).set(1)
# Which shard this process is (docs/runtime.md, "Shards"): an info metric, as spa_build_info,
# rather than a `shard` label on every series. Prometheus tells every series of a process
# apart by its target labels (job, instance, pod); a label the process repeated on each series
# would duplicate them, and break every rule and dashboard written without it. The chart's
# ServiceMonitor copies the pod's shard label onto every series it scrapes (podTargetLabels);
# elsewhere `* on(instance) group_left(shard) spa_shard_info` adds it.
SHARD_INFO = Gauge(
    "spa_shard_info",
    "Always 1 in a sharded controller; the labels say which shard this process is.",
    ["shard", "mode", "selector"],
)
SHARD_REFUSED = Counter(
    "spa_shard_refused_total",
    "ScheduledPodAutoscalers and Schedules the shard's selector sent but their shard label "
    "gives to another shard or to none: left alone (counted once per object).",
    ["kind"],
)

# The labels (`Store.add_label`) the caches keep of each object for the series below: read at
# each scrape from every SPA and Schedule without decoding them (the caches are compact,
# docs/performance.md, "compact caches").
_CONDITION = "condition"
_INCIDENT = "incident"
_MIN = "min"
_MAX = "max"
_TARGET = "autoscaler"


def add_series_labels(*, autoscalers: Store, schedules: Store) -> None:
    """Have the caches keep, for each object as it is stored, what :class:`CachedObjects`
    reports of it: an SPA's condition, held incidents and integer base bounds, a Schedule's
    condition and the SPA it names."""
    autoscalers.add_label(_CONDITION, _condition)
    autoscalers.add_label(_INCIDENT, _incidents)
    autoscalers.add_label(_MIN, lambda obj: _bound(obj, "minReplicas"))
    autoscalers.add_label(_MAX, lambda obj: _bound(obj, "maxReplicas"))
    schedules.add_label(_CONDITION, _condition)
    schedules.add_label(_TARGET, _target)


class CachedObjects(Collector):
    """Series read from the informer caches at scrape time: each object's `.status.condition`
    (`spa_autoscaler_condition`, `spa_schedule_condition`: 1, labelled with the condition) and
    the base bounds of each SPA's spec (`spa_autoscaler_spec_min_replicas`, `..._max_replicas`),
    to compare with the bounds in force, and whether it is paused or overridden
    (`spa_autoscaler_incident`).

    Read from the caches rather than set by the reconciler, so the series always show what the
    API server holds (the cache holds our own writes as soon as they are answered) and need no
    bookkeeping when objects go. Every replica reports them (the followers' caches are warm
    too); the alerts take the maximum per object. Several managers in one process (the tests)
    share this one registered collector, and a series they both see is reported once. What
    each series reads of an object, its cache keeps at ingest (:func:`add_series_labels`): a
    scrape decodes nothing.
    """

    def __init__(self) -> None:
        self._sources: dict[object, tuple[Store, Store]] = {}

    def add(self, *, autoscalers: Store, schedules: Store) -> Callable[[], None]:
        """Report these caches (with :func:`add_series_labels`) from now on; the returned
        function stops it."""
        token = object()
        self._sources[token] = (autoscalers, schedules)

        def remove() -> None:
            self._sources.pop(token, None)

        return remove

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = {
            "condition": GaugeMetricFamily(
                "spa_autoscaler_condition",
                "1 for the ScheduledPodAutoscaler's .status.condition (Available, Degraded).",
                labels=["namespace", "name", "condition"],
            ),
            "min": GaugeMetricFamily(
                "spa_autoscaler_spec_min_replicas",
                "minReplicas of the ScheduledPodAutoscaler's base HPA spec.",
                labels=["namespace", "name"],
            ),
            "max": GaugeMetricFamily(
                "spa_autoscaler_spec_max_replicas",
                "maxReplicas of the ScheduledPodAutoscaler's base HPA spec.",
                labels=["namespace", "name"],
            ),
            "incident": GaugeMetricFamily(
                "spa_autoscaler_incident",
                "1 while the ScheduledPodAutoscaler is paused or overridden (its Paused or "
                "Overridden condition is True), labelled with that condition.",
                labels=["namespace", "name", "condition"],
            ),
            "schedule": GaugeMetricFamily(
                "spa_schedule_condition",
                "1 for the Schedule's .status.condition (Available, Progressing, Degraded, ...).",
                labels=["namespace", "name", "autoscaler", "condition"],
            ),
        }
        seen: set[tuple[str, ...]] = set()

        def add(family: str, labels: tuple[str, ...], value: float) -> None:
            if (family, *labels) not in seen:
                seen.add((family, *labels))
                families[family].add_metric(list(labels), value)

        for autoscalers, schedules in list(self._sources.values()):
            for key in autoscalers:
                namespace, name = _namespace_name(key)
                for condition in autoscalers.labels(key, _CONDITION):
                    add("condition", (namespace, name, condition), 1)
                for held in autoscalers.labels(key, _INCIDENT):
                    add("incident", (namespace, name, held), 1)
                for bound in (_MIN, _MAX):
                    for value in autoscalers.labels(key, bound):
                        add(bound, (namespace, name), int(value))
            for key in schedules:
                namespace, name = _namespace_name(key)
                target = "".join(schedules.labels(key, _TARGET))
                for condition in schedules.labels(key, _CONDITION):
                    add("schedule", (namespace, name, target, condition), 1)
        yield from families.values()


def _namespace_name(key: str) -> tuple[str, str]:
    namespace, name = split_key(key)
    return namespace or "", name


def _condition(obj: dict[str, Any]) -> list[str]:
    condition = (obj.get("status") or {}).get("condition")
    return [str(condition)] if condition else []


def _bound(obj: dict[str, Any], field: str) -> list[str]:
    """A base bound of an SPA's HPA spec; none where it is not an integer (an invalid spec,
    a string say, has no bound to report)."""
    hpa = (obj.get("spec") or {}).get("horizontalPodAutoscalerSpec") or {}
    value = hpa.get(field)
    return [str(value)] if type(value) is int else []


def _target(obj: dict[str, Any]) -> list[str]:
    target = ((obj.get("spec") or {}).get("scaleTargetRef") or {}).get("name")
    return [str(target or "")]


def _incidents(obj: dict[str, Any]) -> list[str]:
    """The incident conditions that hold (docs/operations.md, "Incidents"), as the status
    says: what the controller last decided, so the series needs no clock of its own."""
    conditions = (obj.get("status") or {}).get("conditions") or ()
    return [
        str(entry.get("type"))
        for entry in conditions
        if isinstance(entry, dict)
        and entry.get("type") in (PAUSED_CONDITION, OVERRIDDEN_CONDITION)
        and entry.get("status") == "True"
    ]


CACHED_OBJECTS = CachedObjects()
REGISTRY.register(CACHED_OBJECTS)


class ControllerMetrics:
    """Updates the per-object series and removes those of objects that are gone."""

    def __init__(self) -> None:
        # The Schedules each SPA reported, to remove their series when they go: a tuple of
        # interned names (the labels' strings), a few hundred bytes less per SPA than a set
        # of copies (docs/performance.md, "compact caches").
        self._schedules: dict[tuple[str, str], tuple[str, ...]] = {}

    def autoscaler(
        self,
        *,
        namespace: str,
        name: str,
        replicas: tuple[int, int] | None,
        schedules: dict[str, bool],
        reconciled_at: float,
    ) -> None:
        """Record one successful reconcile: the bounds in force (None: not ours to report) and
        whether each of its Schedules is active."""
        if replicas is None:
            self._remove_replicas(namespace, name)
        else:
            MIN_REPLICAS.set((name, namespace), replicas[0])
            MAX_REPLICAS.set((name, namespace), replicas[1])
        key = (sys.intern(namespace), sys.intern(name))
        for schedule in self._schedules.get(key, ()):
            if schedule not in schedules:
                SCHEDULE_ACTIVE.remove((namespace, schedule, name))
        for schedule, active in schedules.items():
            SCHEDULE_ACTIVE.set((namespace, schedule, name), 1 if active else 0)
        self._schedules[key] = tuple(sys.intern(schedule) for schedule in schedules)
        LAST_SUCCESS.set((namespace, name), reconciled_at)

    @staticmethod
    def capacity_requested(*, namespace: str, name: str, pods: int | None) -> None:
        """The pods' worth of node capacity an SPA holds; None: it orders none (no series)."""
        if pods is None:
            CAPACITY_REQUESTED.remove((namespace, name))
        else:
            CAPACITY_REQUESTED.set((namespace, name), pods)

    @staticmethod
    def capacity_not_ready(*, namespace: str, name: str, late: bool | None) -> None:
        """Whether an SPA's capacity is not ready past its window's boundary (None: it orders
        no capacity, no series)."""
        if late is None:
            CAPACITY_NOT_READY.remove((namespace, name))
        else:
            CAPACITY_NOT_READY.set((namespace, name), 1 if late else 0)

    @staticmethod
    def window_measured(*, outcome: str, reason: str | None, ready_seconds: int | None) -> None:
        """Count a window start once its outcome is final (Early, Late, Missed, with why),
        and when it was Ready relative to its boundary (None: never Ready)."""
        WINDOWS.labels(outcome, reason or "").inc()
        if ready_seconds is not None:
            WINDOW_READY.observe(ready_seconds)

    @staticmethod
    def window_late(*, namespace: str, name: str, late: bool | None) -> None:
        """Whether an SPA's last measured window was late (None: none measured, no series).
        Set from status.windows at each reconcile, so it survives a restart."""
        if late is None:
            WINDOW_LATE.remove((namespace, name))
        else:
            WINDOW_LATE.set((namespace, name), 1 if late else 0)

    def forget_autoscaler(self, *, namespace: str, name: str) -> None:
        self._remove_replicas(namespace, name)
        WINDOW_LATE.remove((namespace, name))
        CAPACITY_REQUESTED.remove((namespace, name))
        CAPACITY_NOT_READY.remove((namespace, name))
        for schedule in self._schedules.pop((namespace, name), ()):
            SCHEDULE_ACTIVE.remove((namespace, schedule, name))
        LAST_SUCCESS.remove((namespace, name))

    @staticmethod
    def hpa_written(operation: str) -> None:
        HPA_WRITES.labels(operation).inc()

    @staticmethod
    def hpa_dry_run() -> None:
        HPA_DRY_RUNS.inc()

    @staticmethod
    def hpa_refused(code: int) -> None:
        HPA_REFUSED.labels(str(code)).inc()

    @staticmethod
    def hpa_not_converging() -> None:
        HPA_NOT_CONVERGING.inc()

    @staticmethod
    def fleet_raised(boundary: int, fleet: int, first: float, last: float) -> None:
        """A raise of a fleet moved ahead of `boundary` landed: how early the fleet began,
        and when its last raise so far landed (docs/schedules.md, "Raises ahead of a shared
        boundary")."""
        FLEET_BOUNDARY.set(boundary)
        FLEET_SIZE.set(fleet)
        FLEET_FIRST_RAISE.set(first - boundary)
        FLEET_LAST_RAISE.set(last - boundary)

    @staticmethod
    def fleet_write_time(seconds: float) -> None:
        """The write time fleets' starts are computed from (docs/schedules.md, "Raises ahead
        of a shared boundary")."""
        FLEET_WRITE_TIME.set(seconds)

    @staticmethod
    def boundary_lag(seconds: float) -> None:
        BOUNDARY_LAG.observe(max(0.0, seconds))

    @staticmethod
    def _remove_replicas(namespace: str, name: str) -> None:
        MIN_REPLICAS.remove((name, namespace))
        MAX_REPLICAS.remove((name, namespace))
