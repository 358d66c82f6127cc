"""Which SPA keys each event wakes (spa/controller/watches.py), without an API server."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from spa.controller.watches import add_indexes, all_keys, watch
from spa.runtime import Store
from tests.builders import autoscaler, owner, schedule

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


# The SPA shop/web and its Schedule push: not owned, or controlled by web.
_autoscaler = partial(autoscaler, metadata={"uid": SPA_UID})
_schedule = partial(schedule, name="push", metadata={"uid": "uid-push"})
_owned = partial(
    schedule, name="push", metadata={"uid": "uid-push", "ownerReferences": [owner(uid=SPA_UID)]}
)


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
    autoscalers.store.upsert(_autoscaler())
    return autoscalers, schedules, hpas, woken, forgotten


def test_an_spa_and_its_hpa_wake_their_own_key() -> None:
    autoscalers, _, hpas, woken, _ = wired()
    autoscalers.fire("add", _autoscaler())
    hpas.fire("update", _autoscaler(), _autoscaler())
    hpas.fire("delete", _autoscaler())
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
