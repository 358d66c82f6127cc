"""List-then-watch mirror of one resource into a :class:`~spa.runtime.store.Store`, with change
handlers: the Python counterpart of client-go's shared informer.

How it keeps "never lose or duplicate a change":

* each scope (all namespaces, or one namespace of a list) lists once, then watches from the
  list's resourceVersion, and remembers the newest resourceVersion it has seen (bookmarks
  included) so a broken or expired watch resumes exactly where it stopped;
* a watch the server closes (its ``timeoutSeconds`` ran out, jittered so that many clients do
  not reconnect together) is simply resumed;
* a ``410 Gone`` means the remembered version was compacted away: the scope lists again and
  emits only the differences with the store (adds, updates, and deletes of objects missing from
  the new list);
* an event carrying the resourceVersion the store already holds is skipped, and so is one
  older than the answer to our own write that a reconciler stored (it would move the cache
  back); but if that older one is another client's change, which the answer carries, the
  handlers are told of it all the same, or no reconcile would act on it;
* transport and server errors back off with jitter (0.2 s doubling to 30 s) before retrying.

What it keeps of each object is the ``transform``'s (client-go's ``SetTransform``): applied at
ingest, to each list page's items as the page arrives and to each watch event's object, before
the store and the handlers see it, so the cache never holds, and a list never accumulates, the
fields nobody reads (docs/performance.md, "2026-11-25: the request path (issue 24)").

What it keeps at all is the ``keep`` predicate's, where one is given: an object it refuses (one
of another shard, docs/runtime.md, "Shards") is dropped before the store and the handlers, from
each list and each watch event; one that stops being kept is a delete for them.

The watch streams on the event loop (no thread): each event is applied to the store and
handed to the handlers as it is read, in order.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from spa.kube import (
    ApiError,
    ApiUnavailable,
    Client,
    EventStream,
    Gone,
    Resource,
    WatchEvent,
    error_from_status,
)
from spa.runtime import metrics
from spa.runtime.backoff import Backoff
from spa.runtime.clock import Clock, SystemClock
from spa.runtime.predicates import UpdateFilter
from spa.runtime.store import (
    Codec,
    Store,
    Transform,
    object_key,
    object_resource_version,
    split_key,
)

__all__ = ["EventHandler", "Informer", "Keep", "OnAdd", "OnDelete", "OnUpdate"]

log = logging.getLogger(__name__)

OnAdd = Callable[[dict[str, Any]], None]
OnUpdate = Callable[[dict[str, Any], dict[str, Any]], None]
OnDelete = Callable[[dict[str, Any]], None]
# Whether the cache keeps an object at all (after the transform); see `Informer(keep=)`.
Keep = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class EventHandler:
    """Callbacks run on the event loop for each change of the store (keep them quick:
    typically they compute keys and add them to a work queue)."""

    on_add: OnAdd | None = None
    on_update: OnUpdate | None = None
    on_delete: OnDelete | None = None
    # Whether `on_update` is given an update (None: every one); e.g. changed_beyond_status.
    update_filter: UpdateFilter | None = None


class Informer:
    """Keeps :attr:`store` in sync with the API server for one resource.

    :param namespaces: ``None`` watches all namespaces with one list/watch; a sequence watches
        only those namespaces, with one list/watch each.
    :param watch_timeout: the server-side watch duration is drawn from this range (seconds).
    :param read_timeout_margin: how much longer than the server-side duration a read may block
        before the connection is considered dead.
    :param keep: whether an object (transformed) belongs in the cache at all: the client-side
        filter for what a label selector cannot say (a shard by namespace hash). An object it
        refuses never reaches the store or the handlers; a cached one that it refuses after
        an update is deleted from both. It must not raise.
    """

    def __init__(
        self,
        client: Client,
        resource: Resource,
        *,
        namespaces: Sequence[str] | None = None,
        label_selector: str | None = None,
        clock: Clock | None = None,
        watch_timeout: tuple[int, int] = (300, 600),
        read_timeout_margin: float = 30.0,
        backoff_initial: float = 0.2,
        backoff_max: float = 30.0,
        rng: random.Random | None = None,
        transform: Transform | None = None,
        codec: Codec | None = None,
        keep: Keep | None = None,
    ) -> None:
        if namespaces is not None and not resource.namespaced:
            raise ValueError(f"{resource} is cluster-scoped; namespaces must be None")
        self.client = client
        self.resource = resource
        # The store applies it too, to the answers of our own writes (Store.put_written);
        # `codec` keeps its objects compact at rest (Store, "compact caches").
        self.store = Store(transform=transform, codec=codec)
        self._transform = transform
        # dict.fromkeys: drop duplicate namespaces, keep the order given.
        self._scopes: list[str | None] = (
            [None] if namespaces is None else list(dict.fromkeys(namespaces))
        )
        if not self._scopes:
            raise ValueError("namespaces is empty; pass None to watch all namespaces")
        self._label_selector = label_selector
        self._keep = keep
        self._clock: Clock = clock or SystemClock()
        self._watch_timeout = watch_timeout
        self._read_timeout_margin = read_timeout_margin
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._rng = rng or random.Random()
        self._handlers: list[EventHandler] = []
        self._resource_versions: dict[str | None, str | None] = dict.fromkeys(self._scopes)
        self._synced_scopes: set[str | None] = set()
        self._synced = asyncio.Event()
        self._stopping = False
        self._streams: set[EventStream] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._label = str(resource)

    # -- public API ---------------------------------------------------------------------------

    def add_handler(
        self,
        *,
        on_add: OnAdd | None = None,
        on_update: OnUpdate | None = None,
        on_delete: OnDelete | None = None,
        update_filter: UpdateFilter | None = None,
    ) -> None:
        """Register callbacks. Objects already in the store are replayed to ``on_add`` at
        once, so a handler added after the sync misses nothing. ``update_filter(old, new)``
        says which updates ``on_update`` is given (controller-runtime's predicates): the
        store takes every update all the same, only the call is left out."""
        handler = EventHandler(on_add, on_update, on_delete, update_filter)
        self._handlers.append(handler)
        if on_add is not None:
            for obj in self.store.objects():
                self._call(on_add, obj)

    @property
    def has_synced(self) -> bool:
        """Whether every scope finished its first list (the store is then complete)."""
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        """Return once :attr:`has_synced`."""
        await self._synced.wait()

    def resource_version(self, namespace: str | None = None) -> str | None:
        """The newest resourceVersion seen in the scope of ``namespace`` (None: all)."""
        return self._resource_versions.get(namespace)

    async def run(self) -> None:
        """List and watch every scope until :meth:`stop` is called or the task is cancelled."""
        self._stopping = False
        try:
            async with asyncio.TaskGroup() as group:
                self._tasks = [
                    group.create_task(self._run_scope(scope), name=f"informer {scope or '*'}")
                    for scope in self._scopes
                ]
        finally:
            self._tasks = []
            self._close_streams()

    def stop(self) -> None:
        """Stop watching: open watches are closed at once, backoff sleeps are interrupted,
        and :meth:`run` returns."""
        self._stopping = True
        self._close_streams()
        for task in self._tasks:
            task.cancel()

    # -- one scope ----------------------------------------------------------------------------

    async def _run_scope(self, namespace: str | None) -> None:
        backoff = Backoff(initial=self._backoff_initial, maximum=self._backoff_max, rng=self._rng)
        # 410s in a row, with only a list in between: the server keeps expiring what it just
        # listed, so waiting is in order from the second one on.
        gone_in_a_row = 0
        while not self._stopping:
            if self._resource_versions[namespace] is None:
                try:
                    await self._list(namespace)
                except (ApiError, ApiUnavailable) as err:
                    delay = backoff.next_delay()
                    log.warning(
                        "listing %s in %s failed (%s); retrying in %.1fs",
                        self._label,
                        namespace or "all namespaces",
                        err,
                        delay,
                    )
                    await self._clock.sleep(delay)
                    continue
            try:
                received = await self._watch(namespace)
            except Gone:
                log.info("watch of %s expired (410 Gone); relisting", self._label)
                metrics.WATCH_RESTARTS.labels(self._label, "gone").inc()
                self._resource_versions[namespace] = None
                if gone_in_a_row:
                    # Repeated Gone right after a list: do not hammer the server. Otherwise
                    # relist at once, even after connection errors (whose backoff must not
                    # delay it): the server answered, and what we missed is in that list.
                    await self._clock.sleep(backoff.next_delay())
                gone_in_a_row += 1
                continue
            except (ApiError, ApiUnavailable) as err:
                if self._stopping:
                    break
                gone_in_a_row = 0
                delay = backoff.next_delay()
                metrics.WATCH_RESTARTS.labels(self._label, "error").inc()
                log.warning(
                    "watch of %s broke (%s); resuming from %s in %.1fs",
                    self._label,
                    err,
                    self._resource_versions[namespace],
                    delay,
                )
                await self._clock.sleep(delay)
                continue
            if received:
                backoff.reset()
                gone_in_a_row = 0
            if not self._stopping:
                metrics.WATCH_RESTARTS.labels(self._label, "timeout").inc()

    async def _list(self, namespace: str | None) -> None:
        initial = namespace not in self._synced_scopes
        result = await self.client.list(
            self.resource,
            namespace=namespace,
            label_selector=self._label_selector,
            transform=self._ingest if self._transform is not None else None,
        )
        if not initial:
            metrics.WATCH_RELISTS.labels(self._label).inc()
        items = result.items
        if self._keep is not None:
            items = [obj for obj in items if self._keep(obj)]
        self._replace(namespace, items)
        self._resource_versions[namespace] = result.resource_version
        self._synced_scopes.add(namespace)
        if len(self._synced_scopes) == len(self._scopes):
            self._synced.set()

    async def _watch(self, namespace: str | None) -> bool:
        """Run one watch to its end; return whether any event arrived."""
        low, high = self._watch_timeout
        timeout_seconds = self._rng.randint(low, max(low, high))
        stream = await self.client.watch(
            self.resource,
            namespace=namespace,
            label_selector=self._label_selector,
            resource_version=self._resource_versions[namespace],
            timeout_seconds=timeout_seconds,
            allow_bookmarks=True,
            read_timeout=timeout_seconds + self._read_timeout_margin,
        )
        self._streams.add(stream)
        if self._stopping:
            stream.close()
        received = False
        try:
            async for event in stream:
                if event.type == "ERROR":
                    raise error_from_status(500, event.object)
                received = True
                self._apply(namespace, event)
        finally:
            stream.close()
            self._streams.discard(stream)
        return received

    # -- applying changes (on the loop) --------------------------------------------------------

    def _apply(self, namespace: str | None, event: WatchEvent) -> None:
        metrics.WATCH_EVENTS.labels(self._label, event.type).inc()
        new_rv = event.resource_version
        obj = event.object
        if event.type in ("ADDED", "MODIFIED"):
            key = object_key(obj)
            # Older than the answer to our own write, already stored: not stored, but another
            # client's change in it is told to the handlers all the same.
            behind = self.store.behind_own_write(obj)
            if behind is None:
                old = self.store.get(key)
                seen = old is not None and object_resource_version(old) == new_rv
            else:
                old, seen = behind.before, not behind.theirs
            # Seen: the version stored (e.g. listed just before the watch started), or ours.
            if not seen:
                obj = self._complete(obj)
                if self._keep is not None and not self._keep(obj):
                    # Not ours (any more): gone from this cache, as if deleted. Should a later
                    # change make it ours again, the watch's event of it is an add.
                    if self.store.delete(key) is not None and old is not None:
                        self._notify(old, None, final=obj)
                else:
                    if behind is None:
                        self.store.upsert(obj, transformed=True)
                    else:
                        self.store.saw_theirs(obj)
                    self._notify(old, obj)
        elif event.type == "DELETED":
            old = self.store.delete(object_key(obj))
            if old is not None:
                self._notify(old, None, final=self._ingest(obj))
        if new_rv:
            self._resource_versions[namespace] = new_rv

    def _replace(self, namespace: str | None, items: list[dict[str, Any]]) -> None:
        listed: set[str] = set()
        for obj in items:
            key = object_key(obj)
            listed.add(key)
            old = self.store.get(key)
            if old is not None and object_resource_version(old) == object_resource_version(obj):
                continue
            self.store.upsert(obj, transformed=True)  # client.list applied the transform
            self._notify(old, obj)
        for key in self.store:  # iterates over a copy, so deleting is safe
            if key in listed or (namespace is not None and split_key(key)[0] != namespace):
                continue
            old = self.store.delete(key)
            if old is not None:
                # Deleted while we were not watching; the last state we saw is all we have.
                self._notify(old, None, final=old)

    def _notify(
        self,
        old: dict[str, Any] | None,
        new: dict[str, Any] | None,
        *,
        final: dict[str, Any] | None = None,
    ) -> None:
        for handler in self._handlers:
            if new is None:
                if handler.on_delete is not None and final is not None:
                    self._call(handler.on_delete, final)
            elif old is None:
                if handler.on_add is not None:
                    self._call(handler.on_add, new)
            elif handler.on_update is not None and self._accepts(handler, old, new):
                self._call(handler.on_update, old, new)

    def _accepts(self, handler: EventHandler, old: dict[str, Any], new: dict[str, Any]) -> bool:
        if handler.update_filter is None:
            return True
        try:
            return handler.update_filter(old, new)
        except Exception:  # a broken filter must not lose a change: deliver it
            log.exception("update filter failed for %s %s", self._label, object_key(new))
            return True

    def _call(self, callback: Callable[..., None], *objects: dict[str, Any]) -> None:
        try:
            callback(*objects)
        except Exception:  # one broken handler must not stop the informer or other handlers
            log.exception(
                "handler %s failed for %s %s",
                getattr(callback, "__qualname__", callback),
                self._label,
                object_key(objects[-1]),
            )

    # -- helpers ------------------------------------------------------------------------------

    def _complete(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A watched object as stored and handed to the handlers: with its apiVersion and kind
        (a watch event may leave them out), through the transform."""
        obj.setdefault("apiVersion", self.resource.api_version)
        obj.setdefault("kind", self.resource.kind)
        return self._ingest(obj)

    def _ingest(self, obj: dict[str, Any]) -> dict[str, Any]:
        """What the cache keeps of `obj`: the transform's result, or `obj` whole if the
        transform fails on it (a bug, or an object it did not expect: nothing is lost)."""
        if self._transform is None:
            return obj
        try:
            return self._transform(obj)
        except Exception:
            log.exception(
                "transform failed for %s %s; keeping it whole", self._label, object_key(obj)
            )
            return obj

    def _close_streams(self) -> None:
        for stream in list(self._streams):
            stream.close()
