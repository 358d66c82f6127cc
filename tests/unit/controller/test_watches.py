"""Which SPA keys each event wakes (spa/controller/watches.py), without an API server."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import orjson

from spa.api import wire
from spa.controller.capacity import DEPLOYMENTS
from spa.controller.decide.scaleup import able_to_scale
from spa.controller.resources import (
    CALENDARS,
    CLUSTER_CALENDARS,
    SCHEDULED_POD_AUTOSCALERS,
    SCHEDULES,
)
from spa.controller.watches import (
    add_indexes,
    all_keys,
    cached_capacity,
    cached_hpa,
    cached_object,
    compact_codec,
    owner_keys,
    target_keys,
    watch,
)
from spa.kube import HPA_V2, Resource
from spa.runtime import Informer, Store, object_key
from tests.builders import autoscaler, calendar, owner, schedule
from tests.client_double import UnexpectedRequests

SPA_UID = "uid-web"


class FakeInformer(Informer):
    """An Informer of `resource` that is never run: `watch` uses its store and its handlers,
    which :meth:`fire` calls as a running one would."""

    def __init__(self, resource: Resource) -> None:
        # Compact, as the SPAs' and Schedules'.
        super().__init__(UnexpectedRequests(), resource, codec=compact_codec())
        self.handlers: list[dict[str, Callable[..., Any] | None]] = []

    def add_handler(self, **handlers: Callable[..., Any] | None) -> None:
        self.handlers.append(handlers)

    def fire(self, kind: str, *objects: dict[str, Any]) -> None:
        for handler in self.handlers:
            callback = handler[f"on_{kind}"]
            assert callback is not None
            accepts = handler.get("update_filter")
            if kind == "update" and accepts is not None and not accepts(*objects):
                continue  # as the Informer leaves it out
            callback(*objects)


# The SPA shop/web and its Schedule push: not owned, or controlled by web.
_autoscaler = partial(autoscaler, metadata={"uid": SPA_UID})
_schedule = partial(schedule, name="push", metadata={"uid": "uid-push"})
_owned = partial(
    schedule, name="push", metadata={"uid": "uid-push", "ownerReferences": [owner(uid=SPA_UID)]}
)


def wired(
    *calendars: FakeInformer, owned: tuple[FakeInformer, ...] = ()
) -> tuple[FakeInformer, FakeInformer, FakeInformer, list[str], list[str]]:
    """The informers wired as the manager wires them (with `calendars`, those of Calendars and
    ClusterCalendars, and `owned`, those of CapacityBuffers and placeholder Deployments), the
    SPA shop/web in its cache; the keys woken, the uids forgotten."""
    autoscalers = FakeInformer(SCHEDULED_POD_AUTOSCALERS)
    schedules, hpas = FakeInformer(SCHEDULES), FakeInformer(HPA_V2)
    add_indexes(autoscalers=autoscalers.store, schedules=schedules.store)
    woken: list[str] = []
    forgotten: list[str] = []
    watch(
        autoscalers=autoscalers,
        schedules=schedules,
        hpas=hpas,
        enqueue=woken.append,
        schedule_deleted=lambda obj: forgotten.append(obj["metadata"]["uid"]),
        calendars=calendars,
        owned=owned,
    )
    autoscalers.store.upsert(_autoscaler())
    return autoscalers, schedules, hpas, woken, forgotten


def test_an_spa_and_its_hpa_wake_their_own_key() -> None:
    autoscalers, _, hpas, woken, _ = wired()
    autoscalers.fire("add", _autoscaler())
    hpas.fire("update", _autoscaler(), _autoscaler(minReplicas=1))
    hpas.fire("delete", _autoscaler())
    assert woken == ["shop/web"] * 3


def _hpa(**metadata: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "1", **metadata},
        "spec": {"minReplicas": 3, "maxReplicas": 10},
        "status": {"currentReplicas": 3, "desiredReplicas": 3},
    }


def test_an_hpa_status_written_by_the_hpa_controller_wakes_nothing() -> None:
    _, _, hpas, woken, _ = wired()
    synced = _hpa(resourceVersion="2", managedFields=[{"manager": "kube-controller-manager"}])
    synced["status"] = {"currentReplicas": 3, "desiredReplicas": 5}
    hpas.fire("update", _hpa(), synced)
    assert woken == []


def test_an_hpa_spec_or_metadata_change_wakes_its_key() -> None:
    _, _, hpas, woken, _ = wired()
    edited = _hpa(resourceVersion="2")
    edited["spec"]["minReplicas"] = 1
    hpas.fire("update", _hpa(), edited)
    hpas.fire("update", _hpa(), _hpa(resourceVersion="3", labels={"team": "shop"}))
    hpas.fire("update", _hpa(), _hpa(resourceVersion="4", ownerReferences=[owner(uid="x")]))
    assert woken == ["shop/web"] * 3


def test_a_schedule_wakes_the_spa_it_names_and_the_one_that_controls_it() -> None:
    _, schedules, _, woken, _ = wired()
    schedules.fire("add", _schedule(target="web"))
    assert woken == ["shop/web"]
    woken.clear()
    # Retargeted from web (which controls it) to api: both must look again.
    schedules.fire("update", _owned(target="web"), _owned(target="api"))
    assert woken == ["shop/api", "shop/web"]


def test_a_deleted_schedule_is_forgotten_and_wakes_its_spa() -> None:
    _, schedules, _, woken, forgotten = wired()
    schedules.fire("delete", _owned(target="web"))
    assert forgotten == ["uid-push"]
    assert woken == ["shop/web"]


def test_resync_covers_spas_and_the_missing_ones_schedules_name() -> None:
    autoscalers, schedules, _, _, _ = wired()
    schedules.store.upsert(_schedule(target="missing"))
    assert all_keys(autoscalers=autoscalers.store, schedules=schedules.store) == [
        "shop/missing",
        "shop/web",
    ]


def test_a_calendar_wakes_the_spas_of_the_schedules_that_refer_to_it() -> None:
    calendars, cluster_calendars = FakeInformer(CALENDARS), FakeInformer(CLUSTER_CALENDARS)
    _, schedules, _, woken, _ = wired(calendars, cluster_calendars)
    peak = [{"kind": "ClusterCalendar", "name": "black-friday", "mode": "Only"}]
    schedules.store.upsert(_schedule(calendars=peak))
    schedules.store.upsert(
        schedule(name="api", namespace="pay", target="api", calendars=[*peak, {"name": "freeze"}])
    )
    schedules.store.upsert(schedule(name="quiet", namespace="shop", target="other"))
    cluster_calendars.fire("add", calendar(dates=["2026-11-27"]))
    assert sorted(woken) == ["pay/api", "shop/web"]
    woken.clear()
    # A Calendar is its namespace's: the one of `shop` is not the one `pay/api` refers to.
    calendars.fire(
        "update",
        calendar(name="freeze", namespace="shop"),
        calendar(name="freeze", namespace="shop"),
    )
    assert woken == []
    calendars.fire("delete", calendar(name="freeze", namespace="pay"))
    assert woken == ["pay/api"]
    woken.clear()
    cluster_calendars.fire("delete", calendar(name="other"))
    assert woken == []


def _synced_hpa() -> dict[str, Any]:
    """An HPA as the API server returns it after kube-controller-manager's sync."""
    hpa = _hpa(managedFields=[{"manager": "kube-controller-manager", "fieldsV1": {}}])
    hpa["status"] = {
        "currentReplicas": 3,
        "desiredReplicas": 5,
        "lastScaleTime": "2026-11-25T10:00:00Z",
        "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu"}}],
        "conditions": [
            {
                "type": "AbleToScale",
                "status": "True",
                "lastTransitionTime": "2026-11-25T09:00:00Z",
                "reason": "SucceededRescale",
                "message": "the HPA controller was able to update the target scale to 5",
            },
            {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound"},
        ],
    }
    return hpa


def test_the_hpa_cache_keeps_only_the_status_the_reconcile_reads() -> None:
    synced = _synced_hpa()
    kept = cached_hpa(synced)
    assert kept["status"] == {
        "currentReplicas": 3,
        "desiredReplicas": 5,
        "conditions": [
            {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-11-25T09:00:00Z"}
        ],
    }
    assert able_to_scale(kept) == able_to_scale(synced) == ("True", "2026-11-25T09:00:00Z")
    assert "managedFields" not in kept["metadata"]
    assert kept["spec"] == synced["spec"]
    assert synced["status"]["currentMetrics"]  # the caller's object is left alone
    assert cached_hpa(kept) is kept  # applied again (an answer to our write): nothing more
    assert cached_hpa({"metadata": {"name": "new"}}) == {"metadata": {"name": "new"}}


def test_spas_and_schedules_are_cached_without_bookkeeping_only() -> None:
    spa = autoscaler(
        metadata={"managedFields": [{"manager": "kubectl"}]}, status={"condition": "Available"}
    )
    kept = cached_object(spa)
    assert "managedFields" not in kept["metadata"]
    assert kept["status"] == {"condition": "Available"}
    assert kept["spec"] == spa["spec"]


def test_the_compact_caches_give_back_what_the_transforms_kept() -> None:
    """Kept deflated (`compact_codec`), an SPA, a Schedule and an HPA read back as the
    transform left them; the Schedule's index value is the SPA's own key string, one for the
    store, the index and the queue."""
    spa = orjson.loads(orjson.dumps(autoscaler(name="web")))
    noon = orjson.loads(orjson.dumps(schedule(name="noon", target="web")))
    hpa = orjson.loads(orjson.dumps(_synced_hpa()))
    for transform, whole in ((cached_object, spa), (cached_object, noon), (cached_hpa, hpa)):
        store = Store(transform=transform, codec=compact_codec())
        store.upsert(whole)
        (kept,) = store.list()
        assert kept == transform(whole)
    assert "currentMetrics" not in kept["status"]
    assert target_keys(wire.typed(wire.Schedule, noon))[0] is object_key(spa)


# -- CapacityBuffers and placeholder Deployments (controller-runtime's `Owns`) -----------------


def _capacity(replicas: int = 2, **metadata: Any) -> dict[str, Any]:
    """The placeholder Deployment (or CapacityBuffer) web-capacity of the SPA shop/web."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web-capacity",
            "namespace": "shop",
            "uid": "uid-capacity",
            "resourceVersion": "1",
            "labels": {"app.kubernetes.io/managed-by": "scheduled-pod-autoscaler"},
            "ownerReferences": [owner(uid=SPA_UID)],
            "managedFields": [{"manager": "scheduled-pod-autoscaler"}],
            **metadata,
        },
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "pause"}]}}},
        "status": {"readyReplicas": 1},
    }


def test_a_capacity_object_wakes_the_autoscaler_that_controls_it() -> None:
    owned = FakeInformer(DEPLOYMENTS)
    *_, woken, _ = wired(owned=(owned,))
    owned.fire("add", _capacity())
    owned.fire("delete", _capacity())
    # Edited by hand: its owner must put it back.
    owned.fire("update", _capacity(), _capacity(replicas=5, resourceVersion="2"))
    assert woken == ["shop/web"] * 3
    # The Deployment controller's status writes wake nothing while pods are still coming ...
    progress = _capacity(replicas=3, resourceVersion="3")
    progress["status"] = {"readyReplicas": 2}
    owned.fire("update", _capacity(replicas=3), progress)
    # ... nor once they all stand.
    stood = _capacity(resourceVersion="4")
    stood["status"] = {"readyReplicas": 2}
    later = _capacity(resourceVersion="5")
    later["status"] = {"readyReplicas": 2, "availableReplicas": 2}
    owned.fire("update", stood, later)
    # Nor does an object no SPA controls.
    owned.fire("add", _capacity(ownerReferences=[]))
    assert woken == ["shop/web"] * 3


def test_the_status_write_that_makes_every_placeholder_ready_wakes_its_autoscaler() -> None:
    """The nodes for a window's capacity stand when every placeholder pod is Ready: that one
    status write wakes the SPA, to record its nodesReadyAt (docs/api.md, "status.windows")."""
    owned = FakeInformer(DEPLOYMENTS)
    *_, woken, _ = wired(owned=(owned,))
    stood = _capacity(replicas=3, resourceVersion="2")
    stood["status"] = {"readyReplicas": 3}
    owned.fire("update", _capacity(replicas=3), stood)
    assert woken == ["shop/web"]
    # Scaled down to what stands: a spec change, which wakes it anyway, once.
    fewer = _capacity(replicas=2, resourceVersion="3")
    fewer["status"] = {"readyReplicas": 3}
    owned.fire("update", stood, fewer)
    assert woken == ["shop/web"] * 2


def test_the_capacity_cache_keeps_the_owner_and_the_replicas_only() -> None:
    whole = _capacity(replicas=4)
    kept = cached_capacity(whole)
    metadata = {key: value for key, value in whole["metadata"].items() if key != "managedFields"}
    assert kept == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {"replicas": 4},
        "status": {"readyReplicas": 1},
    }
    assert cached_capacity(kept) == kept
    assert owner_keys(kept) == ["shop/web"]


def test_a_placeholder_in_the_controllers_namespace_wakes_the_autoscaler_its_labels_name() -> None:
    """A placeholder Deployment is in the controller's namespace, where no ownerReference can
    name the SPA (docs/schedules.md, "Node capacity"): its labels say whose it is."""
    owned = FakeInformer(DEPLOYMENTS)
    *_, woken, _ = wired(owned=(owned,))
    labels = {
        "app.kubernetes.io/managed-by": "scheduled-pod-autoscaler",
        "autoscaling.d-kuro.github.io/capacity-for-namespace": "shop",
        "autoscaling.d-kuro.github.io/capacity-for": "web",
    }
    placeholder = _capacity(
        name="shop-web-capacity",
        namespace="scheduled-pod-autoscaler",
        labels=labels,
        ownerReferences=[],
    )
    owned.fire("add", placeholder)
    owned.fire("delete", placeholder)
    assert woken == ["shop/web"] * 2
    assert owner_keys(cached_capacity(placeholder)) == ["shop/web"]
