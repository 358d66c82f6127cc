"""Informer logic (resume, dedupe, relist differences, per-namespace scopes) against a scripted
stand-in for KubeClient. The real API server is exercised in
tests/integration/test_runtime_informer.py; this covers the edge cases deterministically."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from spa.kube import (
    CONFIGMAP,
    ApiUnavailable,
    Gone,
    ItemTransform,
    ListResult,
    Resource,
    WatchEvent,
    WatchEventType,
)
from spa.runtime import DeflateCodec, FakeClock, Informer
from tests.client_double import UnexpectedRequests

Script = list[WatchEvent | Exception]


def cm(name: str, rv: str, namespace: str = "ns", data: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv},
        "data": {"v": data},
    }


def event(kind: WatchEventType, obj: dict[str, Any]) -> WatchEvent:
    return WatchEvent(kind, obj)


def bookmark(rv: str) -> WatchEvent:
    return WatchEvent("BOOKMARK", {"kind": "ConfigMap", "metadata": {"resourceVersion": rv}})


class _Stream:
    """A watch that plays its script, then idles until closed (like a quiet real watch)."""

    def __init__(self, script: Script, idle: bool) -> None:
        self._script = list(script)
        self._idle = idle
        self._closed = asyncio.Event()

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self

    async def __anext__(self) -> WatchEvent:
        if self._script:
            item = self._script.pop(0)
            if isinstance(item, Exception):
                raise item
            return item
        if self._idle:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed.wait(), 5)
        raise StopAsyncIteration

    def close(self) -> None:
        self._closed.set()


class ScriptedClient(UnexpectedRequests):
    """list() answers from ``lists`` (per namespace), watch() plays ``watches`` in order."""

    def __init__(self) -> None:
        self.lists: dict[str | None, list[ListResult]] = {}
        self.watches: dict[str | None, list[Script]] = {}
        self.list_calls: list[str | None] = []
        self.watch_calls: list[tuple[str | None, str | None]] = []
        self.lock = threading.Lock()

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        transform: ItemTransform | None = None,
        **_: Any,
    ) -> ListResult:
        with self.lock:
            self.list_calls.append(namespace)
            results = self.lists[namespace]
            result = results.pop(0) if len(results) > 1 else results[0]
        if transform is None:
            return result
        # As KubeClient.list: each item transformed (there, as its page arrives).
        return ListResult([transform(item) for item in result.items], result.resource_version)

    async def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        resource_version: str | None = None,
        **_: Any,
    ) -> _Stream:
        with self.lock:
            self.watch_calls.append((namespace, resource_version))
            scripts = self.watches.get(namespace) or []
            if scripts:
                return _Stream(scripts.pop(0), idle=False)
        return _Stream([], idle=True)


class Seen:
    def __init__(self) -> None:
        self.changes: list[tuple[str, str, str]] = []

    def on_add(self, obj: dict[str, Any]) -> None:
        self.changes.append(("add", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.changes.append(("update", new["metadata"]["name"], new["metadata"]["resourceVersion"]))

    def on_delete(self, obj: dict[str, Any]) -> None:
        self.changes.append(("delete", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))


async def eventually(condition: Callable[[], bool], within: float = 3.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)


def start(
    client: ScriptedClient, clock: FakeClock | None = None, **kw: Any
) -> tuple[Informer, Seen, asyncio.Task[None]]:
    informer = Informer(client, CONFIGMAP, clock=clock or FakeClock(), **kw)
    seen = Seen()
    informer.add_handler(on_add=seen.on_add, on_update=seen.on_update, on_delete=seen.on_delete)
    return informer, seen, asyncio.create_task(informer.run())


async def finish(informer: Informer, task: asyncio.Task[None]) -> None:
    informer.stop()
    await asyncio.wait_for(task, timeout=5)


@pytest.mark.parametrize("compact", [False, True])
async def test_list_then_watch_applies_events_and_resumes_from_the_last_bookmark(
    compact: bool,
) -> None:
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1"), cm("b", "2")], "2")]
    client.watches[None] = [
        [
            event("ADDED", cm("a", "1")),  # replay of what the list already had: skipped
            event("MODIFIED", cm("a", "5", data="x")),
            event("ADDED", cm("c", "6")),
            event("DELETED", cm("b", "7")),
            bookmark("9"),
        ]
    ]
    informer, seen, task = start(client, codec=DeflateCodec() if compact else None)
    assert informer.store.compact is compact
    await asyncio.wait_for(informer.wait_synced(), 3)
    await eventually(lambda: len(client.watch_calls) >= 2)
    assert seen.changes == [
        ("add", "a", "1"),
        ("add", "b", "2"),
        ("update", "a", "5"),
        ("add", "c", "6"),
        ("delete", "b", "7"),
    ]
    # First watch from the list's version, the next from the bookmark: no relist.
    assert client.watch_calls[:2] == [(None, "2"), (None, "9")]
    assert client.list_calls == [None]
    assert sorted(informer.store.keys()) == ["ns/a", "ns/c"]
    assert informer.store.get("ns/a")["data"] == {"v": "x"}  # type: ignore[index]
    await finish(informer, task)


@pytest.mark.parametrize("compact", [False, True])
async def test_gone_relists_and_emits_only_the_differences(compact: bool) -> None:
    client = ScriptedClient()
    client.lists[None] = [
        ListResult([cm("a", "1"), cm("b", "2"), cm("d", "3")], "3"),
        # After the 410: a changed, b vanished, c appeared, d unchanged.
        ListResult([cm("a", "10"), cm("c", "11"), cm("d", "3")], "12"),
    ]
    client.watches[None] = [[Gone(410, "Expired", "too old resource version")]]
    informer, seen, task = start(client, codec=DeflateCodec() if compact else None)
    await eventually(lambda: len(client.watch_calls) >= 2)
    assert seen.changes == [
        ("add", "a", "1"),
        ("add", "b", "2"),
        ("add", "d", "3"),
        ("update", "a", "10"),
        ("add", "c", "11"),
        ("delete", "b", "2"),
    ]
    assert client.list_calls == [None, None]
    assert client.watch_calls[1] == (None, "12")
    await finish(informer, task)


async def test_transport_error_backs_off_on_the_clock_and_resumes_without_relisting() -> None:
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1")], "1")]
    client.watches[None] = [
        [event("MODIFIED", cm("a", "4")), ApiUnavailable("connection reset")],
        [event("MODIFIED", cm("a", "4")), event("MODIFIED", cm("a", "6"))],  # 4 again: dup
    ]
    clock = FakeClock()
    informer, seen, task = start(client, clock=clock, backoff_initial=0.2)
    await eventually(lambda: clock.pending_timers == 1)  # sleeping in the backoff
    assert len(client.watch_calls) == 1
    clock.advance(0.2)
    await eventually(lambda: len(client.watch_calls) >= 3)
    assert client.watch_calls[1] == (None, "4")
    assert client.list_calls == [None]
    assert seen.changes == [("add", "a", "1"), ("update", "a", "4"), ("update", "a", "6")]
    await finish(informer, task)


async def test_list_errors_are_retried_and_sync_waits_for_success() -> None:
    class FlakyList(ScriptedClient):
        failures = 2

        async def list(self, resource: Any, **kw: Any) -> ListResult:
            if self.failures:
                self.failures -= 1
                raise ApiUnavailable("refused")
            return await super().list(resource, **kw)

    client = FlakyList()
    client.lists[None] = [ListResult([cm("a", "1")], "1")]
    clock = FakeClock()
    informer, _seen, task = start(client, clock=clock)
    for _ in range(2):
        await eventually(lambda: clock.pending_timers == 1)
        assert not informer.has_synced
        clock.advance(60)
    await asyncio.wait_for(informer.wait_synced(), 3)
    assert informer.store.keys() == ["ns/a"]
    await finish(informer, task)


async def test_each_namespace_has_its_own_list_watch_and_relist_scope() -> None:
    client = ScriptedClient()
    client.lists["one"] = [
        ListResult([cm("a", "1", "one")], "1"),
        ListResult([], "20"),  # after a 410 in "one": a is gone
    ]
    client.lists["two"] = [ListResult([cm("b", "2", "two")], "2")]
    client.watches["one"] = [[Gone(410, "Expired", "")]]
    informer, seen, task = start(client, namespaces=["one", "two", "one"])
    await asyncio.wait_for(informer.wait_synced(), 3)
    await eventually(lambda: ("one", "20") in client.watch_calls)
    assert sorted(client.list_calls, key=str) == ["one", "one", "two"]
    # The relist of "one" deleted only what was in "one".
    assert informer.store.keys() == ["two/b"]
    assert ("delete", "a", "1") in seen.changes
    assert informer.resource_version("two") == "2"
    await finish(informer, task)


async def test_handler_added_after_sync_gets_existing_objects_and_bad_handler_is_contained() -> (
    None
):
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1"), cm("b", "1")], "1")]
    informer, seen, task = start(client)
    await asyncio.wait_for(informer.wait_synced(), 3)

    def broken(obj: dict[str, Any]) -> None:
        raise RuntimeError("handler bug")

    late = Seen()
    informer.add_handler(on_add=broken)
    informer.add_handler(on_add=late.on_add)
    assert late.changes == [("add", "a", "1"), ("add", "b", "1")]
    assert len(seen.changes) == 2
    await finish(informer, task)


def test_cluster_scoped_resource_rejects_namespaces() -> None:
    from spa.kube import Resource

    nodes = Resource("", "v1", "nodes", "Node", False)
    with pytest.raises(ValueError, match="cluster-scoped"):
        Informer(ScriptedClient(), nodes, namespaces=["x"])


async def test_stop_interrupts_a_backoff_sleep() -> None:
    class DownClient(ScriptedClient):
        async def list(self, resource: Any, **kw: Any) -> ListResult:
            raise ApiUnavailable("refused")

    clock = FakeClock()
    informer, _seen, task = start(DownClient(), clock=clock)
    await eventually(lambda: clock.pending_timers == 1)
    informer.stop()  # the fake clock is never advanced: only stop() can end the sleep
    await asyncio.wait_for(task, timeout=2)
    assert not informer.has_synced


async def test_gone_after_connection_errors_relists_at_once() -> None:
    """After an outage (watch errors with a grown backoff) the reconnecting watch gets 410:
    the relist must not wait for yet another backoff step, the missed changes are in it."""
    client = ScriptedClient()
    client.lists[None] = [
        ListResult([cm("a", "1")], "1"),
        ListResult([cm("a", "9", data="changed while away")], "9"),
    ]
    down = ApiUnavailable("connection refused")
    client.watches[None] = [[down], [down], [down], [Gone(410, "Expired", "too old")]]
    clock = FakeClock()
    informer, seen, task = start(client, clock=clock, backoff_initial=0.2)
    for _ in range(3):
        await eventually(lambda: clock.pending_timers == 1)  # sleeping in the backoff
        clock.advance(30)
    await eventually(lambda: len(client.list_calls) == 2)
    assert seen.changes == [("add", "a", "1"), ("update", "a", "9")]
    await finish(informer, task)


async def test_repeated_gone_right_after_a_list_backs_off() -> None:
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1")], "1")]
    expired = Gone(410, "Expired", "too old")
    client.watches[None] = [[expired], [expired]]
    clock = FakeClock()
    informer, _seen, task = start(client, clock=clock, backoff_initial=0.2)
    await eventually(lambda: clock.pending_timers == 1)  # the second 410 waits
    assert len(client.list_calls) == 2
    clock.advance(1)
    await eventually(lambda: len(client.list_calls) == 3)
    await finish(informer, task)


@pytest.mark.parametrize("compact", [False, True])
async def test_a_resumed_watch_does_not_move_the_cache_back_behind_our_own_write(
    compact: bool,
) -> None:
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1")], "1")]
    client.watches[None] = [
        [ApiUnavailable("connection reset")],
        # Replayed after the break: our first write (2), someone else's change (3) from
        # before our second write (5), then that write itself, then a later change (6).
        [
            event("MODIFIED", cm("a", "2", data="ours")),
            event("MODIFIED", cm("a", "3", data="theirs")),
            event("MODIFIED", cm("a", "5", data="ours again")),
            event("MODIFIED", cm("a", "6", data="later")),
        ],
    ]
    clock = FakeClock()
    informer, seen, task = start(
        client, clock=clock, backoff_initial=0.2, codec=DeflateCodec() if compact else None
    )
    cached: list[tuple[str, str, str]] = []  # (old, new, what the cache held) at each update

    def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
        held = informer.store.get("ns/a")
        assert held is not None
        cached.append((old["data"]["v"], new["data"]["v"], held["data"]["v"]))

    informer.add_handler(on_update=on_update)
    await eventually(lambda: clock.pending_timers == 1)  # the watch broke; backing off
    assert informer.store.put_written(cm("a", "2", data="ours"), based_on=cm("a", "1"))
    assert informer.store.put_written(cm("a", "5", data="ours again"), based_on=cm("a", "2"))

    clock.advance(0.2)
    await eventually(lambda: len(client.watch_calls) >= 3)
    # Our 2 and 5 were already there; version 3, someone else's, reached the handlers (from
    # our 2, the version before it) but never replaced our 5; 6 is the watch's again.
    assert seen.changes == [("add", "a", "1"), ("update", "a", "3"), ("update", "a", "6")]
    assert cached == [("ours", "theirs", "ours again"), ("ours again", "later", "later")]
    await finish(informer, task)


@pytest.mark.parametrize("compact", [False, True])
async def test_someone_elses_change_during_our_status_write_reaches_the_handlers(
    compact: bool,
) -> None:
    """Our status write, based on 1, was answered with 5, which carries another client's
    change made at 3: the handlers still hear of 3, though the answer is stored (3 older
    than our write, then 5 seen already)."""
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1")], "1")]
    client.watches[None] = [
        [ApiUnavailable("connection reset")],
        [
            event("MODIFIED", cm("a", "3", data="theirs")),
            event("MODIFIED", {**cm("a", "5", data="theirs"), "status": {"ours": "yes"}}),
        ],
    ]
    clock = FakeClock()
    informer, seen, task = start(
        client, clock=clock, backoff_initial=0.2, codec=DeflateCodec() if compact else None
    )
    await eventually(lambda: clock.pending_timers == 1)  # the watch broke; backing off
    answer = {**cm("a", "5", data="theirs"), "status": {"ours": "yes"}}
    assert informer.store.put_written(answer, based_on=informer.store.get("ns/a"))

    clock.advance(0.2)
    await eventually(lambda: len(client.watch_calls) >= 3)
    assert seen.changes == [("add", "a", "1"), ("update", "a", "3")]
    assert informer.store.get("ns/a") == answer
    await finish(informer, task)


async def test_someone_elses_change_that_moves_an_object_out_is_a_delete() -> None:
    """Another shard's label put on while our write was on its way: the object leaves this
    cache at that change's event, though our answer (which carries the label) was stored."""
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1")], "1")]
    moved = {**cm("a", "3"), "metadata": {**cm("a", "3")["metadata"], "labels": {"shard": "b"}}}
    answer = {**moved, "metadata": {**moved["metadata"], "resourceVersion": "5"}}
    client.watches[None] = [
        [ApiUnavailable("connection reset")],
        [event("MODIFIED", moved), event("MODIFIED", answer)],
    ]
    clock = FakeClock()
    informer, seen, task = start(
        client,
        clock=clock,
        backoff_initial=0.2,
        keep=lambda o: (o["metadata"].get("labels") or {}).get("shard") != "b",
    )
    await eventually(lambda: clock.pending_timers == 1)  # the watch broke; backing off
    assert informer.store.put_written(answer, based_on=informer.store.get("ns/a"))

    clock.advance(0.2)
    await eventually(lambda: len(client.watch_calls) >= 3)
    assert seen.changes == [("add", "a", "1"), ("delete", "a", "3")]
    assert informer.store.get("ns/a") is None
    await finish(informer, task)


async def test_an_update_filter_leaves_out_the_call_but_not_the_store() -> None:
    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1")], "1")]
    client.watches[None] = [
        [
            event("MODIFIED", cm("a", "2")),  # same data: the filter says no
            event("MODIFIED", cm("a", "3", data="x")),
        ]
    ]
    informer = Informer(client, CONFIGMAP, clock=FakeClock())
    seen = Seen()
    informer.add_handler(
        on_update=seen.on_update, update_filter=lambda old, new: old.get("data") != new.get("data")
    )
    broken = Seen()

    def fails(old: dict[str, Any], new: dict[str, Any]) -> bool:
        raise RuntimeError("a bug")

    informer.add_handler(on_update=broken.on_update, update_filter=fails)
    task = asyncio.create_task(informer.run())
    await eventually(lambda: len(client.watch_calls) >= 2)
    assert seen.changes == [("update", "a", "3")]
    # A filter that fails delivers the update rather than lose it.
    assert broken.changes == [("update", "a", "2"), ("update", "a", "3")]
    assert informer.store.get("ns/a")["metadata"]["resourceVersion"] == "3"  # type: ignore[index]
    await finish(informer, task)


async def test_the_transform_shapes_what_the_store_and_the_handlers_get() -> None:
    """Listed and watched objects, deletions included, reach the store and the handlers as
    the transform made them; one it fails on is kept whole and the informer goes on."""

    def without_data(obj: dict[str, Any]) -> dict[str, Any]:
        if obj["metadata"]["name"] == "bad":
            raise ValueError("a transform that fails on one object")
        return {key: value for key, value in obj.items() if key != "data"}

    client = ScriptedClient()
    client.lists[None] = [ListResult([cm("a", "1", data="x")], "1")]
    client.watches[None] = [
        [
            event("MODIFIED", cm("a", "2", data="y")),
            event("ADDED", cm("bad", "3", data="z")),
            event("ADDED", cm("b", "4", data="w")),
            event("DELETED", cm("b", "5", data="w")),
        ]
    ]
    informer = Informer(client, CONFIGMAP, clock=FakeClock(), transform=without_data)
    handed: list[tuple[str, dict[str, Any]]] = []
    informer.add_handler(
        on_add=lambda obj: handed.append(("add", obj)),
        on_update=lambda old, new: handed.append(("update", new)),
        on_delete=lambda obj: handed.append(("delete", obj)),
    )
    task = asyncio.create_task(informer.run())
    await eventually(lambda: informer.resource_version() == "5")
    await finish(informer, task)
    a, bad = informer.store.get("ns/a"), informer.store.get("ns/bad")
    assert a is not None
    assert "data" not in a
    assert a["metadata"]["resourceVersion"] == "2"
    assert bad is not None
    assert bad["data"] == {"v": "z"}
    assert [(kind, "data" in obj) for kind, obj in handed] == [
        ("add", False),  # a, listed
        ("update", False),  # a, watched
        ("add", True),  # bad
        ("add", False),  # b
        ("delete", False),  # b
    ]


@pytest.mark.parametrize("compact", [False, True])
async def test_keep_drops_the_objects_it_refuses_before_the_store_and_the_handlers(
    compact: bool,
) -> None:
    """Another shard's objects (here: namespace `other`) never reach the store or a handler,
    listed, watched or relisted after a 410; one that stops being kept (its label changed) is
    a delete; one that becomes kept is an add."""

    def ours(obj: dict[str, Any]) -> bool:
        metadata = obj["metadata"]
        return bool(metadata["namespace"] == "ns" and (obj.get("data") or {}).get("v") != "away")

    client = ScriptedClient()
    client.lists[None] = [
        ListResult([cm("a", "1"), cm("x", "2", namespace="other")], "2"),
        ListResult([cm("a", "1"), cm("c", "9"), cm("y", "10", namespace="other")], "10"),
    ]
    client.watches[None] = [
        [
            event("ADDED", cm("b", "3")),
            event("ADDED", cm("z", "4", namespace="other")),
            event("MODIFIED", cm("x", "5", namespace="other")),
            event("DELETED", cm("x", "6", namespace="other")),
            event("MODIFIED", cm("b", "7", data="away")),  # leaves this shard
            event("MODIFIED", cm("c", "8")),  # comes in
            Gone(410, "Expired", "too old resource version"),
        ]
    ]
    informer, seen, task = start(client, keep=ours, codec=DeflateCodec() if compact else None)
    await eventually(lambda: len(client.watch_calls) >= 2)
    await finish(informer, task)
    assert seen.changes == [
        ("add", "a", "1"),
        ("add", "b", "3"),
        ("delete", "b", "7"),
        ("add", "c", "8"),
        ("update", "c", "9"),
    ]
    assert sorted(informer.store.keys()) == ["ns/a", "ns/c"]
    # The watch went on from the refused events' versions: nothing was listed again for them.
    assert client.list_calls == [None, None]
