"""The series the reconciler sets per SPA (spa/controller/metrics.py, `ReconciledSeries`):
scraped as the labelled gauges were, gone with their object, and about 200 bytes each."""

from __future__ import annotations

import gc
import tracemalloc

from prometheus_client import REGISTRY, generate_latest

from spa.controller.metrics import ControllerMetrics

MIN = "scheduled_pod_auroscaler_controller_scheduled_pod_auroscaler_min_replicas"
MAX = "scheduled_pod_auroscaler_controller_scheduled_pod_auroscaler_max_replicas"


def _record(metrics: ControllerMetrics, name: str, namespace: str = "series-test") -> None:
    metrics.autoscaler(
        namespace=namespace,
        name=name,
        replicas=(3, 10),
        schedules={f"{name}-{hour}": hour == 0 for hour in range(4)},
        reconciled_at=1_700_000_000.0,
    )


def test_the_series_are_scraped_by_their_labels_and_go_with_their_spa() -> None:
    metrics = ControllerMetrics()
    _record(metrics, "web")
    labels = {"namespace": "series-test", "name": "web"}
    assert REGISTRY.get_sample_value(MIN, labels) == 3
    assert REGISTRY.get_sample_value(MAX, labels) == 10
    active = {"namespace": "series-test", "autoscaler": "web"}
    assert REGISTRY.get_sample_value("spa_schedule_active", {**active, "name": "web-0"}) == 1
    assert REGISTRY.get_sample_value("spa_schedule_active", {**active, "name": "web-3"}) == 0
    last = "spa_last_successful_reconcile_timestamp_seconds"
    assert REGISTRY.get_sample_value(last, labels) == 1_700_000_000.0
    text = generate_latest(REGISTRY).decode()
    assert f"# TYPE {MIN} gauge" in text
    # One Schedule fewer: its series goes; the SPA gone: all of them.
    metrics.autoscaler(
        namespace="series-test",
        name="web",
        replicas=None,
        schedules={"web-0": True},
        reconciled_at=1_700_000_001.0,
    )
    assert REGISTRY.get_sample_value("spa_schedule_active", {**active, "name": "web-3"}) is None
    assert REGISTRY.get_sample_value(MIN, labels) is None
    metrics.forget_autoscaler(namespace="series-test", name="web")
    assert REGISTRY.get_sample_value("spa_schedule_active", {**active, "name": "web-0"}) is None
    assert REGISTRY.get_sample_value(last, labels) is None


def test_an_spa_with_four_schedules_costs_less_than_3000_bytes_of_series() -> None:
    """Seven series per SPA: as labelled Gauge children they took about 5 KiB."""
    metrics = ControllerMetrics()
    names = [f"web-{index}" for index in range(1000)]
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for name in names:
            _record(metrics, name, namespace="series-size")
        per_spa = (tracemalloc.get_traced_memory()[0] - base) / len(names)
    finally:
        tracemalloc.stop()
        for name in names:
            metrics.forget_autoscaler(namespace="series-size", name=name)
    assert per_spa < 3000, per_spa
