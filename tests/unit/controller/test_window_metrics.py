"""The readiness metrics of window starts (spa/controller/metrics.py, docs/operations.md):
counted by outcome, Ready relative to the boundary in a histogram, and the per-SPA series the
SpaWindowLate alert reads."""

from __future__ import annotations

from prometheus_client import REGISTRY

from spa.controller.decide.readiness import MissedReason
from spa.controller.metrics import WINDOW_READY_BUCKETS, ControllerMetrics


def _sample(metric: str, **labels: str) -> float:
    value = REGISTRY.get_sample_value(metric, labels)
    return 0.0 if value is None else value


def test_every_outcome_and_reason_has_a_series_before_any_window() -> None:
    for outcome in ("Early", "Late"):
        labels = {"outcome": outcome, "reason": ""}
        assert REGISTRY.get_sample_value("spa_windows_total", labels) is not None
    for reason in MissedReason:
        labels = {"outcome": "Missed", "reason": reason.value}
        assert REGISTRY.get_sample_value("spa_windows_total", labels) is not None


def test_a_window_is_counted_and_its_readiness_observed() -> None:
    late_before = _sample("spa_windows_total", outcome="Late", reason="")
    quota_before = _sample("spa_windows_total", outcome="Missed", reason="Quota")
    early_bucket = _sample("spa_window_ready_seconds_bucket", le="-30.0")
    late_bucket = _sample("spa_window_ready_seconds_bucket", le="60.0")
    ControllerMetrics.window_measured(outcome="Late", reason=None, ready_seconds=45)
    ControllerMetrics.window_measured(outcome="Early", reason=None, ready_seconds=-42)
    ControllerMetrics.window_measured(outcome="Missed", reason="Quota", ready_seconds=None)
    assert _sample("spa_windows_total", outcome="Late", reason="") == late_before + 1
    assert _sample("spa_windows_total", outcome="Missed", reason="Quota") == quota_before + 1
    # -42 s is in the bucket of "at most 30 s early"; both are at most 60 s late.
    assert _sample("spa_window_ready_seconds_bucket", le="-30.0") == early_bucket + 1
    assert _sample("spa_window_ready_seconds_bucket", le="60.0") == late_bucket + 2
    assert tuple(sorted(WINDOW_READY_BUCKETS)) == WINDOW_READY_BUCKETS
    assert 0.0 in WINDOW_READY_BUCKETS


def test_the_late_series_is_per_spa_and_goes_with_it() -> None:
    metrics = ControllerMetrics()
    ControllerMetrics.window_late(namespace="shop", name="web", late=True)
    assert _sample("spa_window_late", namespace="shop", name="web") == 1
    ControllerMetrics.window_late(namespace="shop", name="web", late=False)
    assert REGISTRY.get_sample_value("spa_window_late", {"namespace": "shop", "name": "web"}) == 0
    metrics.forget_autoscaler(namespace="shop", name="web")
    assert (
        REGISTRY.get_sample_value("spa_window_late", {"namespace": "shop", "name": "web"}) is None
    )
