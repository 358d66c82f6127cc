"""The series the reconciler sets per SPA (spa/controller/metrics.py, `ReconciledSeries`):
scraped as the labelled gauges were, gone with their object, and about 200 bytes each."""

from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc
from pathlib import Path

from prometheus_client import REGISTRY, generate_latest

from spa.controller.metrics import ControllerMetrics

REPO = Path(__file__).resolve().parents[3]
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
    """Seven series per SPA: as labelled Gauge children they took about 5 KiB.

    Measured in a fresh interpreter, as in a controller that starts: the series live in
    process-wide gauges, which the tests before this one leave at any size, and the growth of
    a gauge's table is counted in the SPAs that cause it (with 5,000 series left over, about
    3,300 bytes each)."""
    done = subprocess.run(
        [sys.executable, "-c", f"from {__name__} import bytes_per_spa; print(bytes_per_spa())"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    per_spa = float(done.stdout)
    assert per_spa < 3000, per_spa


def bytes_per_spa() -> float:
    """What the series of 1,000 SPAs of four Schedules take per SPA, forgotten afterwards."""
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
    return per_spa


def test_the_schedules_recorded_per_spa_are_a_tuple_of_the_labels_own_strings() -> None:
    """Each reconcile hands in the names as decoded anew (the caches are compact): what is
    kept to remove their series later holds the labels' interned strings, in a tuple (72
    bytes for 4, a set 216), not the copies of the last reconcile."""
    metrics = ControllerMetrics()
    for reconciled_at in (1.0, 2.0):
        fresh = {"".join(("web-", str(hour))): hour == 0 for hour in range(4)}
        metrics.autoscaler(
            namespace="series-intern",
            name="web",
            replicas=(3, 10),
            schedules=fresh,
            reconciled_at=reconciled_at,
        )
    recorded = metrics._schedules[("series-intern", "web")]
    assert type(recorded) is tuple
    assert recorded == ("web-0", "web-1", "web-2", "web-3")
    assert all(name is sys.intern(name) for name in recorded)
    assert all(name is not fresh_name for name, fresh_name in zip(recorded, fresh, strict=True))
    metrics.forget_autoscaler(namespace="series-intern", name="web")
