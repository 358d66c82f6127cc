"""The SPA-specific Prometheus metrics (docs/operations.md lists them).

The two gauges of the original controller keep their exact names (typo included) so that
existing dashboards keep working; everything new is in the `spa_` family. Series of deleted
objects are removed, so a dashboard never shows an autoscaler that no longer exists.
"""

from __future__ import annotations

import contextlib
import platform

from prometheus_client import Counter, Gauge, Histogram

from spa import __version__

__all__ = ["ControllerMetrics"]

_ORIGINAL_PREFIX = "scheduled_pod_auroscaler_controller_scheduled_pod_auroscaler"

MIN_REPLICAS = Gauge(
    f"{_ORIGINAL_PREFIX}_min_replicas",
    "minReplicas in force on the generated HPA (name kept from the original controller).",
    ["name", "namespace"],
)
MAX_REPLICAS = Gauge(
    f"{_ORIGINAL_PREFIX}_max_replicas",
    "maxReplicas in force on the generated HPA (name kept from the original controller).",
    ["name", "namespace"],
)
SCHEDULE_ACTIVE = Gauge(
    "spa_schedule_active",
    "1 while the Schedule's window is active and applied, else 0.",
    ["namespace", "name", "autoscaler"],
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
LAST_SUCCESS = Gauge(
    "spa_last_successful_reconcile_timestamp_seconds",
    "When the ScheduledPodAutoscaler was last reconciled without error (Unix time).",
    ["namespace", "name"],
)
BUILD_INFO = Gauge(
    "spa_build_info", "Always 1; the labels say which build runs.", ["version", "python_version"]
)
BUILD_INFO.labels(__version__, platform.python_version()).set(1)


class ControllerMetrics:
    """Updates the per-object series and removes those of objects that are gone."""

    def __init__(self) -> None:
        self._schedules: dict[tuple[str, str], set[str]] = {}

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
            MIN_REPLICAS.labels(name, namespace).set(replicas[0])
            MAX_REPLICAS.labels(name, namespace).set(replicas[1])
        previous = self._schedules.get((namespace, name), set())
        for schedule in previous - schedules.keys():
            _remove(SCHEDULE_ACTIVE, namespace, schedule, name)
        for schedule, active in schedules.items():
            SCHEDULE_ACTIVE.labels(namespace, schedule, name).set(1 if active else 0)
        self._schedules[(namespace, name)] = set(schedules)
        LAST_SUCCESS.labels(namespace, name).set(reconciled_at)

    def forget_autoscaler(self, *, namespace: str, name: str) -> None:
        self._remove_replicas(namespace, name)
        for schedule in self._schedules.pop((namespace, name), set()):
            _remove(SCHEDULE_ACTIVE, namespace, schedule, name)
        _remove(LAST_SUCCESS, namespace, name)

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
    def boundary_lag(seconds: float) -> None:
        BOUNDARY_LAG.observe(max(0.0, seconds))

    @staticmethod
    def _remove_replicas(namespace: str, name: str) -> None:
        _remove(MIN_REPLICAS, name, namespace)
        _remove(MAX_REPLICAS, name, namespace)


def _remove(metric: Gauge, *labels: str) -> None:
    with contextlib.suppress(KeyError):  # never set: nothing to remove
        metric.remove(*labels)
