"""Kubernetes Events about the objects the controller manages (what ``kubectl describe``
shows), recorded fire-and-forget.

Why aggregation: a reconciler that keeps hitting the same problem (an HPA it does not own,
min > max) would otherwise create a new Event per attempt. As client-go's correlator does, a
repeat of the same object + type + reason + message within ``aggregation_window`` bumps
``count`` and ``lastTimestamp`` of the existing Event with a PATCH instead.

Why fire-and-forget: an Event is a courtesy to the operator; failing to write one must never
fail or slow a reconcile. :meth:`EventRecorder.event` only queues; one background task sends
in order (so a repeat always finds the Event its first occurrence created), and failures are
logged, never raised.

Why drops are summed up: the queue is bounded (``max_queued``, client-go's 1,000), and a
whole-fleet boundary of a few thousand SPAs queues an Event each faster than one sender writes
them. What does not fit is dropped, as client-go's broadcaster does; the log says so once when
the queue fills and once, with the count, when it has drained (not once per Event: at least
1,340 warning lines at one 5,000-SPA boundary before), and ``spa_events_dropped_total``
counts them.

Why an Event refused in a namespace being deleted (or gone) is not a warning: the API server
creates nothing there any more, and the object the Event is about is going too. It is counted,
and said once per namespace (spa.runtime.terminating). Any other answer of the API server is one
line; a traceback only for a bug.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import logging
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from spa.kube import EVENT, Client, KubeError, NamespaceDeleted, NotFound
from spa.runtime.clock import Clock, SystemClock
from spa.runtime.fence import NotLeader, WriteFence, unfenced, write_fenced
from spa.runtime.metrics import EVENTS_DROPPED
from spa.runtime.terminating import TerminatingNamespaces

__all__ = ["COMPONENT", "EventRecorder", "EventType", "bounded_name", "event_name"]

log = logging.getLogger(__name__)

COMPONENT = "scheduled-pod-autoscaler"
EventType = Literal["Normal", "Warning"]
# The API server rejects longer messages in events.k8s.io; keep core Events within it too.
_MAX_MESSAGE = 1024

_AggregationKey = tuple[str, str, str, str, str, str, str]


@dataclass(slots=True)
class _Recorded:
    name: str
    namespace: str
    count: int
    last_seen: float


@dataclass(frozen=True, slots=True)
class _Pending:
    involved: dict[str, Any]
    type: EventType
    reason: str
    message: str
    at: float


def _time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class EventRecorder:
    """Records core/v1 Events from ``component`` (``reportingInstance``: ``instance``).

    :param aggregation_window: repeats within this many seconds of the last occurrence are
        folded into the existing Event.
    :param fence: each Event is sent under it (:mod:`spa.runtime.fence`): Events queued
        while this replica led are dropped once it may no longer write, and none is sent, or
        applied, after its renew deadline.
    :param terminating: where an Event refused because its namespace is being deleted is
        reported (shared with the controller's other writers, so that a namespace is said
        once in all).
    """

    def __init__(
        self,
        client: Client,
        *,
        component: str = COMPONENT,
        instance: str | None = None,
        clock: Clock | None = None,
        aggregation_window: float = 600.0,
        max_remembered: int = 4096,
        max_queued: int = 1000,
        fence: WriteFence = unfenced,
        terminating: TerminatingNamespaces | None = None,
    ) -> None:
        self.client = client
        self._fence = fence
        self._terminating = terminating or TerminatingNamespaces()
        self.component = component
        self.instance = instance or socket.gethostname()
        self._clock: Clock = clock or SystemClock()
        self._window = aggregation_window
        self._max_remembered = max_remembered
        self._max_queued = max_queued
        self._recorded: collections.OrderedDict[_AggregationKey, _Recorded] = (
            collections.OrderedDict()
        )
        self._queue: asyncio.Queue[_Pending] | None = None
        self._sender: asyncio.Task[None] | None = None
        # Events dropped since the queue last filled up; logged when it has drained.
        self._dropped = 0

    def event(
        self, obj: Mapping[str, Any], event_type: EventType, reason: str, message: str
    ) -> None:
        """Queue an Event about ``obj`` (a full object dict with ``metadata``). Never raises;
        must be called on the event loop."""
        try:
            self._enqueue(obj, event_type, reason, message)
        except Exception:
            log.exception("could not queue event %s for %s", reason, _describe(obj))

    def normal(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        """Queue a Normal Event."""
        self.event(obj, "Normal", reason, message)

    def warning(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        """Queue a Warning Event."""
        self.event(obj, "Warning", reason, message)

    async def flush(self) -> None:
        """Wait until every Event queued so far was sent (or failed)."""
        if self._queue is not None:
            await self._queue.join()

    async def close(self) -> None:
        """Send what is queued, then stop the background sender."""
        await self.flush()
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
            self._sender = None

    # -- internals ----------------------------------------------------------------------------

    def _enqueue(
        self, obj: Mapping[str, Any], event_type: EventType, reason: str, message: str
    ) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue(self._max_queued)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(
                self._send_forever(), name="event-recorder"
            )
        metadata = obj.get("metadata") or {}
        involved = {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "name": metadata.get("name", ""),
            "namespace": metadata.get("namespace", ""),
            "uid": metadata.get("uid", ""),
            "resourceVersion": metadata.get("resourceVersion", ""),
        }
        pending = _Pending(involved, event_type, reason, message[:_MAX_MESSAGE], self._clock.now())
        try:
            self._queue.put_nowait(pending)
        except asyncio.QueueFull:
            if not self._dropped:
                log.warning(
                    "event queue full (%d waiting): dropping Events until it has drained",
                    self._max_queued,
                )
            self._dropped += 1
            EVENTS_DROPPED.inc()

    async def _send_forever(self) -> None:
        assert self._queue is not None
        while True:
            pending = await self._queue.get()
            try:
                await write_fenced(self._fence, self._send, pending)
            except NotLeader:
                log.debug("not sending %s event %s: may not write", pending.type, pending.reason)
            except NamespaceDeleted as error:
                self._terminating.refused(
                    pending.involved["namespace"] or "default", error, resource=EVENT.plural
                )
            except KubeError as error:  # an answer of the API server, or none: one line
                log.warning(
                    "could not record %s event %s for %s/%s: %s",
                    pending.type,
                    pending.reason,
                    pending.involved["namespace"],
                    pending.involved["name"],
                    error,
                )
            except Exception:  # a bug: its traceback, and never propagate
                log.exception(
                    "could not record %s event %s for %s/%s",
                    pending.type,
                    pending.reason,
                    pending.involved["namespace"],
                    pending.involved["name"],
                )
            finally:
                self._queue.task_done()
                if self._dropped and self._queue.empty():
                    log.warning("dropped %d Events while the event queue was full", self._dropped)
                    self._dropped = 0

    async def _send(self, pending: _Pending) -> None:
        involved = pending.involved
        namespace = involved["namespace"] or "default"
        key: _AggregationKey = (
            namespace,
            involved["kind"],
            involved["name"],
            involved["uid"],
            pending.type,
            pending.reason,
            pending.message,
        )
        previous = self._recorded.get(key)
        if previous is not None and pending.at - previous.last_seen <= self._window:
            count = previous.count + 1
            try:
                await self.client.patch(
                    EVENT,
                    previous.namespace,
                    previous.name,
                    {"count": count, "lastTimestamp": _time(pending.at)},
                    patch_type="merge",
                    field_manager=self.component,
                )
            except NotFound:
                pass  # the Event expired (the API server's event TTL): create a fresh one
            else:
                previous.count = count
                previous.last_seen = pending.at
                self._recorded.move_to_end(key)
                return
        stamp = _time(pending.at)
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": event_name(involved["name"], pending.at),
                "namespace": namespace,
            },
            "involvedObject": {k: v for k, v in involved.items() if v},
            "type": pending.type,
            "reason": pending.reason,
            "message": pending.message,
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        created = await self.client.create(EVENT, namespace, body)
        name = str((created.get("metadata") or {}).get("name") or "")
        self._recorded[key] = _Recorded(name, namespace, 1, pending.at)
        self._recorded.move_to_end(key)
        while len(self._recorded) > self._max_remembered:
            self._recorded.popitem(last=False)


# An Event's name is a DNS subdomain (at most 253 characters).
_MAX_NAME = 253


def event_name(involved_name: str, at: float) -> str:
    """client-go's naming, object name plus a unique hex timestamp, kept a valid name
    (:func:`bounded_name`)."""
    return bounded_name(involved_name, f".{int(at * 1e9):x}", limit=_MAX_NAME)


def bounded_name(base: str, suffix: str, *, limit: int) -> str:
    """`base` + `suffix` in at most `limit` characters: a long `base` is cut and a hash of the
    whole of it added, so that two long names that share a prefix still differ."""
    if len(base) + len(suffix) <= limit:
        return base + suffix
    digest = hashlib.sha256(base.encode()).hexdigest()[:10]
    keep = limit - len(suffix) - len(digest) - 1
    return f"{base[:keep].rstrip('.-')}-{digest}{suffix}"


def _describe(obj: Any) -> str:
    if not isinstance(obj, dict):
        return repr(obj)
    metadata = obj.get("metadata") or {}
    return f"{obj.get('kind', '?')} {metadata.get('namespace', '')}/{metadata.get('name', '')}"
