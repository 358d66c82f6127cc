"""Prometheus metrics of the generic runtime (watches, queues, reconciles, leadership, API
requests), defined once at import so that any number of informers/queues share the series.

The SPA-specific metrics (replica gauges, schedule activity, ...) belong to ``spa.controller``;
these are the ``spa_`` family members the runtime is the only one able to observe.
"""

from __future__ import annotations

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from spa.kube import KubeClient, RequestRecord
from spa.runtime.endpoints import Response

__all__ = [
    "EVENTS_DROPPED",
    "KUBE_REQUESTS",
    "KUBE_REQUEST_DURATION",
    "LEADER",
    "NAMESPACE_TERMINATING_WRITES",
    "RECONCILE_DURATION",
    "RECONCILE_TOTAL",
    "WATCH_EVENTS",
    "WATCH_RELISTS",
    "WATCH_RESTARTS",
    "WORKQUEUE_ADDS",
    "WORKQUEUE_DEPTH",
    "WORKQUEUE_RETRIES",
    "exposition",
    "instrument_client",
]

WATCH_RESTARTS = Counter(
    "spa_watch_restarts_total",
    "Watches restarted, by resource and reason (timeout, error, gone).",
    ["resource", "reason"],
)
WATCH_RELISTS = Counter(
    "spa_watch_relists_total",
    "Full lists done by informers after the initial one (410 Gone or errors).",
    ["resource"],
)
WATCH_EVENTS = Counter(
    "spa_watch_events_total",
    "Watch events received, by resource and type.",
    ["resource", "type"],
)
EVENTS_DROPPED = Counter(
    "spa_events_dropped_total",
    "Kubernetes Events not recorded because the event queue was full.",
)
NAMESPACE_TERMINATING_WRITES = Counter(
    "spa_namespace_terminating_writes_total",
    "Writes not made because their namespace is being deleted or gone (the API server "
    "refused to create in it), by resource; not retried, not logged one by one.",
    ["resource"],
)
TASK_RESTARTS = Counter(
    "spa_task_restarts_total",
    "Long-lived tasks (informers) restarted by the supervisor after failing or ending.",
    ["task"],
)
WORKQUEUE_DEPTH = Gauge("spa_workqueue_depth", "Keys ready in the work queue.", ["name"])
WORKQUEUE_ADDS = Counter("spa_workqueue_adds_total", "Keys added to the work queue.", ["name"])
WORKQUEUE_RETRIES = Counter(
    "spa_workqueue_retries_total", "Rate-limited re-adds (failed reconciles).", ["name"]
)
RECONCILE_TOTAL = Counter(
    "spa_reconcile_total",
    "Reconciles by controller and result (success, requeue, retry, error).",
    ["controller", "result"],
)
RECONCILE_DURATION = Histogram(
    "spa_reconcile_duration_seconds",
    "Time spent in one reconcile.",
    ["controller"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
LEADER = Gauge("spa_leader", "1 while this process holds the leader lease.", ["lease"])
KUBE_REQUESTS = Counter(
    "spa_kube_requests_total",
    "Requests to the API server by verb, resource and HTTP code (0: unreachable).",
    ["verb", "resource", "code"],
)
KUBE_REQUEST_DURATION = Histogram(
    "spa_kube_request_duration_seconds",
    "Latency of API requests (for watches: until the response head).",
    ["verb"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


# The series of each (verb, resource, code), looked up once: `labels()` takes a lock and builds
# the label tuple at every call, on the path of every request (docs/performance.md,
# "2026-11-25: the request path (issue 24)"). Bounded: verbs x resources x codes seen.
_REQUEST_SERIES: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def _record(record: RequestRecord) -> None:
    key = (record.verb, record.resource, record.code)
    series = _REQUEST_SERIES.get(key)
    if series is None:
        series = _REQUEST_SERIES[key] = (
            KUBE_REQUESTS.labels(record.verb, record.resource, str(record.code)),
            KUBE_REQUEST_DURATION.labels(record.verb),
        )
    series[0].inc()
    series[1].observe(record.duration)


def instrument_client(client: KubeClient) -> None:
    """Count every request of ``client`` in ``spa_kube_requests_total``."""
    client.add_request_hook(_record)


def exposition() -> Response:
    """`/metrics`: every series of the process in Prometheus' text format."""
    return Response(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)
