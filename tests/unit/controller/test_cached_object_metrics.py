"""The per-object series read from the informer caches at scrape time (docs/operations.md),
from what the caches keep of each object at ingest, without decoding it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest

from spa.controller.metrics import CachedObjects, add_series_labels
from spa.controller.watches import compact_codec
from spa.runtime import DeflateCodec, Store
from tests.builders import autoscaler, schedule


def _caches(
    autoscalers: Iterable[dict[str, Any]] = (), schedules: Iterable[dict[str, Any]] = ()
) -> tuple[Store, Store]:
    """Compact caches with the series' labels, as the manager's, holding these objects."""
    stores = Store(codec=compact_codec()), Store(codec=compact_codec())
    add_series_labels(autoscalers=stores[0], schedules=stores[1])
    for store, objects in zip(stores, (autoscalers, schedules), strict=True):
        for obj in objects:
            store.upsert(obj)
    return stores


def _samples(collector: CachedObjects) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in collector.collect()
        for sample in family.samples
    }


def test_conditions_and_base_bounds_of_what_the_caches_hold() -> None:
    collector = CachedObjects()
    autoscalers, schedules = _caches(
        [
            autoscaler(minReplicas=3, maxReplicas=10, status={"condition": "Degraded"}),
            # Not reconciled yet (no status), and an invalid bound the CRD let through.
            autoscaler(name="new", minReplicas="three", maxReplicas=4),
        ],
        [schedule(name="lunch", status={"condition": "Progressing"})],
    )
    collector.add(autoscalers=autoscalers, schedules=schedules)
    assert _samples(collector) == {
        (
            "spa_autoscaler_condition",
            (("condition", "Degraded"), ("name", "web"), ("namespace", "shop")),
        ): 1,
        ("spa_autoscaler_spec_min_replicas", (("name", "web"), ("namespace", "shop"))): 3,
        ("spa_autoscaler_spec_max_replicas", (("name", "web"), ("namespace", "shop"))): 10,
        ("spa_autoscaler_spec_max_replicas", (("name", "new"), ("namespace", "shop"))): 4,
        (
            "spa_schedule_condition",
            (
                ("autoscaler", "web"),
                ("condition", "Progressing"),
                ("name", "lunch"),
                ("namespace", "shop"),
            ),
        ): 1,
    }
    # A change in the cache shows at the next scrape; a deleted object is gone with no call.
    autoscalers.upsert(autoscaler(minReplicas=3, maxReplicas=10, status={"condition": "Available"}))
    schedules.delete("shop/lunch")
    samples = _samples(collector)
    assert (
        "spa_autoscaler_condition",
        (("condition", "Available"), ("name", "web"), ("namespace", "shop")),
    ) in samples
    assert not [key for key in samples if key[0] == "spa_schedule_condition"]
    assert not [key for key in samples if ("condition", "Degraded") in key[1]]


def test_two_managers_seeing_one_object_report_it_once_and_stop_when_removed() -> None:
    collector = CachedObjects()
    registry = CollectorRegistry()
    registry.register(collector)
    seen = [autoscaler(minReplicas=1, maxReplicas=2, status={"condition": "Available"})]
    remove_first = collector.add(autoscalers=_caches(seen)[0], schedules=Store())
    remove_second = collector.add(autoscalers=_caches(seen)[0], schedules=Store())
    # A duplicate series would make the exposition invalid; the registry text has each once.
    text = generate_latest(registry).decode()
    assert text.count('spa_autoscaler_condition{condition="Available"') == 1
    remove_first()
    assert 'name="web"' in generate_latest(registry).decode()
    remove_second()
    assert 'name="web"' not in generate_latest(registry).decode()


def test_paused_and_overridden_autoscalers_as_their_conditions_say() -> None:
    collector = CachedObjects()
    paused = autoscaler(
        minReplicas=1,
        maxReplicas=2,
        status={
            "condition": "Available",
            "conditions": [
                {"type": "Paused", "status": "True", "reason": "Paused"},
                {"type": "Overridden", "status": "False", "reason": "OverrideExpired"},
                {"type": "Ready", "status": "True", "reason": "Applied"},
            ],
        },
    )
    overridden = autoscaler(
        name="api",
        minReplicas=1,
        maxReplicas=2,
        status={
            "condition": "Available",
            "conditions": [{"type": "Overridden", "status": "True", "reason": "Overridden"}],
        },
    )
    collector.add(autoscalers=_caches([paused, overridden])[0], schedules=Store())
    incidents = {
        labels: value
        for (name, labels), value in _samples(collector).items()
        if name == "spa_autoscaler_incident"
    }
    assert incidents == {
        (("condition", "Paused"), ("name", "web"), ("namespace", "shop")): 1,
        (("condition", "Overridden"), ("name", "api"), ("namespace", "shop")): 1,
    }


def test_a_scrape_decodes_no_cached_object() -> None:
    """At 5,000 SPAs a scrape decoding every SPA and Schedule took 0.6 s of the event loop
    (docs/performance.md, "compact caches"): what it reports was kept at ingest."""

    class Undecodable(DeflateCodec):
        def decode(self, data: bytes) -> dict[str, Any]:
            raise AssertionError("a scrape decoded a cached object")

    autoscalers, schedules = Store(codec=Undecodable()), Store(codec=Undecodable())
    add_series_labels(autoscalers=autoscalers, schedules=schedules)
    autoscalers.upsert(autoscaler(minReplicas=2, maxReplicas=5, status={"condition": "Available"}))
    schedules.upsert(schedule(name="lunch", status={"condition": "Available"}))
    collector = CachedObjects()
    collector.add(autoscalers=autoscalers, schedules=schedules)
    samples = _samples(collector)
    assert (
        samples[("spa_autoscaler_spec_max_replicas", (("name", "web"), ("namespace", "shop")))] == 5
    )
    assert len(samples) == 4
