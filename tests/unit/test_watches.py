"""Which SPA keys each event wakes (spa/controller/watches.py), without an API server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spa.controller.watches import add_indexes, all_keys, watch
from spa.runtime import Store

SPA_UID = "uid-web"


class FakeInformer:
    """The two things `watch` uses of an Informer: its store and its handlers."""

    def __init__(self) -> None:
        self.store = Store()
        self.handlers: list[dict[str, Callable[..., None] | None]] = []

    def add_handler(self, **handlers: Callable[..., None] | None) -> None:
        self.handlers.append(handlers)

    def fire(self, kind: str, *objects: dict[str, Any]) -> None:
        for handler in self.handlers:
            callback = handler[f"on_{kind}"]
            assert callback is not None
            callback(*objects)


def spa(name: str = "web", uid: str = SPA_UID) -> dict[str, Any]:
    return {"metadata": {"namespace": "shop", "name": name, "uid": uid}}


def schedule(target: str, owner_uid: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"namespace": "shop", "name": "push", "uid": "uid-push"}
    if owner_uid:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "autoscaling.d-kuro.github.io/v1",
                "kind": "ScheduledPodAutoscaler",
                "name": "web",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    return {"metadata": metadata, "spec": {"scaleTargetRef": {"name": target}}}


def wired() -> tuple[FakeInformer, FakeInformer, FakeInformer, list[str], list[str]]:
    autoscalers, schedules, hpas = FakeInformer(), FakeInformer(), FakeInformer()
    add_indexes(autoscalers=autoscalers.store, schedules=schedules.store)
    woken: list[str] = []
    forgotten: list[str] = []
    watch(
        autoscalers=autoscalers,  # type: ignore[arg-type]
        schedules=schedules,  # type: ignore[arg-type]
        hpas=hpas,  # type: ignore[arg-type]
        enqueue=woken.append,
        schedule_deleted=lambda obj: forgotten.append(obj["metadata"]["uid"]),
    )
    autoscalers.store.upsert(spa())
    return autoscalers, schedules, hpas, woken, forgotten


def test_an_spa_and_its_hpa_wake_their_own_key() -> None:
    autoscalers, _, hpas, woken, _ = wired()
    autoscalers.fire("add", spa())
    hpas.fire("update", spa(), spa())
    hpas.fire("delete", spa())
    assert woken == ["shop/web"] * 3


def test_a_schedule_wakes_the_spa_it_names_and_the_one_that_controls_it() -> None:
    _, schedules, _, woken, _ = wired()
    schedules.fire("add", schedule("web"))
    assert woken == ["shop/web"]
    woken.clear()
    # Retargeted from web (which controls it) to api: both must look again.
    schedules.fire("update", schedule("web", SPA_UID), schedule("api", SPA_UID))
    assert woken == ["shop/api", "shop/web"]


def test_a_deleted_schedule_is_forgotten_and_wakes_its_spa() -> None:
    _, schedules, _, woken, forgotten = wired()
    schedules.fire("delete", schedule("web", SPA_UID))
    assert forgotten == ["uid-push"]
    assert woken == ["shop/web"]


def test_resync_covers_spas_and_the_missing_ones_schedules_name() -> None:
    autoscalers, schedules, _, _, _ = wired()
    schedules.store.upsert(schedule("missing"))
    assert all_keys(autoscalers=autoscalers.store, schedules=schedules.store) == [
        "shop/missing",
        "shop/web",
    ]
