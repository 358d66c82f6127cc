"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's ``leaderelection``
semantics.

Why: several replicas may run for availability, but only one may write HPAs and statuses, or
they would fight. The holder renews the Lease every ``retry_period``; if it cannot renew for
``renew_deadline`` it stops leading (and the process exits, so Kubernetes restarts it clean).

Why expiry is judged by observation, never by the timestamps in the Lease: the Lease's
``renewTime`` is the holder's wall clock, and comparing it with ours makes two leaders as soon
as the clocks disagree or one of them is stepped. As client-go does, a replica notes *on its
own monotonic clock* when it last saw the Lease record change, and considers the holder gone
only once ``leaseDurationSeconds`` have passed on that clock without a change. The holder
likewise stops writing ``renew_deadline`` after it *sent* its last successful renewal, on its
own monotonic clock. Since ``renew_deadline < lease_duration`` and the follower's observation
comes after the renewal was sent, the old leader has stopped before anyone else can start,
whatever the wall clocks say. The price: a failover takes up to ``lease_duration`` plus two
``retry_period``s (the follower sees the last renewal up to one retry period late). The
renewTime written is still the wall clock, for people and other tools.

What a leader learned can outlive it: ``memo`` gives annotations that each acquire and renewal
writes into the Lease's metadata (in the same update, so it costs no request), and
:attr:`annotations` shows the next leader what the last one wrote. Annotations, because the
Lease's spec is client-go's record and other tools read it.

On graceful shutdown the leader releases the Lease so failover is immediate. All writes are
compare-and-swap updates on ``metadata.resourceVersion``: two candidates racing for an expired
Lease cannot both win.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from spa.kube import LEASE, ApiError, ApiUnavailable, Client, Conflict, NotFound
from spa.runtime import metrics
from spa.runtime.clock import Clock, SystemClock

__all__ = ["LeaderElector", "default_identity", "format_micro_time", "parse_micro_time"]

log = logging.getLogger(__name__)


def default_identity() -> str:
    """``<hostname>_<uuid4>``: the pod name for humans, and unique across restarts."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def format_micro_time(epoch: float) -> str:
    """``metav1.MicroTime`` wire format, e.g. ``2026-01-01T00:00:00.000000Z``."""
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(value: str) -> float:
    """Parse MicroTime (or a plain RFC 3339 time, as other clients may write) to epoch secs."""
    text = value.replace("Z", "+00:00")
    return datetime.fromisoformat(text).timestamp()


class LeaderElector:
    """Campaign for a Lease and keep it.

    :param on_started_leading: called once the Lease is acquired. If it returns an awaitable,
        that is run as a task and cancelled as soon as leadership ends; if that task ends on
        its own (e.g. crashes), the Lease is released and :meth:`run` returns.
    :param on_stopped_leading: called once when leadership ends (lost or released).
    :param release_on_cancel: when :meth:`run` is cancelled while leading, hand the Lease back
        (``holderIdentity`` empty, duration 1 s) so another replica takes over at once.
    :param memo: annotations to write into the Lease at every acquire and renewal (merged over
        those it has; a key left out keeps the value the last leader wrote).
    """

    def __init__(
        self,
        client: Client,
        *,
        namespace: str,
        name: str,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callable[[], Awaitable[None] | None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        release_on_cancel: bool = True,
        memo: Callable[[], Mapping[str, str]] | None = None,
        clock: Clock | None = None,
    ) -> None:
        if not retry_period < renew_deadline < lease_duration:
            raise ValueError("need retry_period < renew_deadline < lease_duration")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._release_on_cancel = release_on_cancel
        self._memo = memo
        self._clock: Clock = clock or SystemClock()
        self._leading = False
        # When the last successful acquire or renew was sent (our monotonic clock).
        self._renewed_at: float | None = None
        # The Lease record (holder, times, duration, transitions) as last seen, and when it was
        # first seen like that (our monotonic clock): expiry is judged from this alone.
        self._observed: tuple[object, ...] | None = None
        self._observed_at = 0.0
        self._lease: dict[str, Any] | None = None  # last Lease read or written by us
        self._leader_task: asyncio.Task[None] | None = None
        self._gauge = metrics.LEADER.labels(f"{namespace}/{name}")

    @property
    def is_leader(self) -> bool:
        """True from acquiring the Lease until leadership ends, and only while the last
        successful renewal is less than ``renew_deadline`` old.

        The second condition matters when the process was frozen (a stopped container, a VM
        pause, a long GC): on waking up, queued work may run before the renew loop notices
        that the Lease ran out and another replica took over; it must not write meanwhile.
        """
        return self.write_time_left() > 0

    def write_time_left(self) -> float:
        """Seconds until :attr:`is_leader` turns false by itself (0 when not leading): this
        replica's write fence (:mod:`spa.runtime.fence`). No other replica can acquire the
        Lease before then, since it waits ``lease_duration`` from when it saw our renewal."""
        if not self._leading or self._renewed_at is None:
            return 0.0
        return max(0.0, self._renewed_at + self.renew_deadline - self._clock.monotonic())

    @property
    def observed_holder(self) -> str | None:
        """The holder in the last Lease we read (``None`` before the first read)."""
        if self._lease is None:
            return None
        return str((self._lease.get("spec") or {}).get("holderIdentity") or "")

    @property
    def annotations(self) -> dict[str, str]:
        """The Lease's annotations as last read or written by this replica: on becoming leader,
        what the previous leaders' ``memo`` left there (and ours, once written)."""
        if self._lease is None:
            return {}
        return dict((self._lease.get("metadata") or {}).get("annotations") or {})

    def _annotated(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """`metadata` with the memo's annotations merged in."""
        if self._memo is None:
            return dict(metadata)
        memo = self._memo()
        if not memo:
            return dict(metadata)
        return {**metadata, "annotations": {**(metadata.get("annotations") or {}), **memo}}

    async def run(self) -> None:
        """Acquire the Lease (waiting as long as needed), lead, and return when leadership is
        lost. Cancelling it while leading releases the Lease (see ``release_on_cancel``)."""
        await self._acquire()
        self._become_leader()
        try:
            if await self._renew_until_lost() == "work finished":
                # The leading work ended (or crashed): holding the Lease without doing the
                # work would stall the cluster, so hand it over.
                await self._release_quietly()
        except asyncio.CancelledError:
            if self._release_on_cancel:
                await asyncio.shield(self._release_quietly())
            raise
        finally:
            self._stop_leading()

    async def release(self) -> None:
        """Give up the Lease now if we hold it (idempotent)."""
        if self._leading:
            await self._release_quietly()
            self._stop_leading()

    # -- campaign -----------------------------------------------------------------------------

    async def _acquire(self) -> None:
        log.info("campaigning for lease %s/%s as %s", self.namespace, self.name, self.identity)
        last_holder: str | None = None
        while True:
            if await self._try_acquire_or_renew(request_timeout=self.renew_deadline):
                log.info("acquired lease %s/%s", self.namespace, self.name)
                return
            holder = self.observed_holder
            if holder != last_holder:
                log.info("lease %s/%s is held by %s", self.namespace, self.name, holder)
                last_holder = holder
            await self._clock.sleep(self.retry_period)

    async def _renew_until_lost(self) -> str:
        last_renew = self._renewed_at if self._renewed_at is not None else self._clock.monotonic()
        while True:
            await self._clock.sleep(self.retry_period)
            if self._leader_task is not None and self._leader_task.done():
                log.error(
                    "the leading work stopped; giving up lease %s/%s", self.namespace, self.name
                )
                return "work finished"
            while True:
                remaining = last_renew + self.renew_deadline - self._clock.monotonic()
                if remaining <= 0:
                    log.error(
                        "could not renew lease %s/%s within %.0fs; stopping leading",
                        self.namespace,
                        self.name,
                        self.renew_deadline,
                    )
                    return "lost"
                if await self._try_acquire_or_renew(request_timeout=remaining):
                    assert self._renewed_at is not None
                    last_renew = self._renewed_at
                    break
                holder = self.observed_holder
                if holder and holder != self.identity:
                    log.error("lease %s/%s was taken by %s", self.namespace, self.name, holder)
                    return "lost"
                await self._clock.sleep(min(self.retry_period, max(0.0, remaining)))

    async def _try_acquire_or_renew(self, *, request_timeout: float) -> bool:
        now = self._clock.now()  # only written into the Lease, for people and other tools
        sent = self._clock.monotonic()
        try:
            lease = await self.client.get(
                LEASE, self.namespace, self.name, request_timeout=request_timeout
            )
        except NotFound:
            return await self._create(now, sent, request_timeout=request_timeout)
        except (ApiError, ApiUnavailable) as err:
            log.warning("reading lease %s/%s failed: %s", self.namespace, self.name, err)
            return False
        self._lease = lease
        spec: dict[str, Any] = dict(lease.get("spec") or {})
        self._observe(spec, self._clock.monotonic())
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.identity and not self._expired(spec):
            return False
        transitions = int(spec.get("leaseTransitions") or 0)
        if holder != self.identity:
            spec["acquireTime"] = format_micro_time(now)
            transitions += 1
        spec.update(
            holderIdentity=self.identity,
            leaseDurationSeconds=int(self.lease_duration),
            renewTime=format_micro_time(now),
            leaseTransitions=transitions,
        )
        updated = {**lease, "metadata": self._annotated(lease.get("metadata") or {}), "spec": spec}
        try:
            self._lease = await self.client.update(
                LEASE,
                self.namespace,
                self.name,
                updated,
                request_timeout=request_timeout,
            )
        except Conflict:
            return False  # someone else wrote first; re-read on the next attempt
        except (ApiError, ApiUnavailable) as err:
            log.warning("updating lease %s/%s failed: %s", self.namespace, self.name, err)
            return False
        self._renewed(sent)
        return True

    async def _create(self, now: float, sent: float, *, request_timeout: float) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": self._annotated({"name": self.name, "namespace": self.namespace}),
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(self.lease_duration),
                "acquireTime": format_micro_time(now),
                "renewTime": format_micro_time(now),
                "leaseTransitions": 0,
            },
        }
        try:
            self._lease = await self.client.create(
                LEASE, self.namespace, body, request_timeout=request_timeout
            )
        except Conflict:
            return False  # created by another candidate in the meantime
        except (ApiError, ApiUnavailable) as err:
            log.warning("creating lease %s/%s failed: %s", self.namespace, self.name, err)
            return False
        self._renewed(sent)
        return True

    def _renewed(self, sent: float) -> None:
        """Our write of the Lease succeeded: we lead until `sent + renew_deadline`, and what we
        wrote is the record others will see (observed as of when it was sent)."""
        self._renewed_at = sent
        assert self._lease is not None
        self._observe(dict(self._lease.get("spec") or {}), sent)

    def _observe(self, spec: dict[str, Any], at: float) -> None:
        record = tuple(
            spec.get(field)
            for field in (
                "holderIdentity",
                "renewTime",
                "acquireTime",
                "leaseDurationSeconds",
                "leaseTransitions",
            )
        )
        if record != self._observed:
            self._observed, self._observed_at = record, at

    def _expired(self, spec: dict[str, Any]) -> bool:
        """The holder has not renewed for its lease duration, as this replica saw it."""
        try:
            duration = float(spec.get("leaseDurationSeconds") or 0)
        except (TypeError, ValueError):
            duration = 0.0
        return self._clock.monotonic() >= self._observed_at + duration

    # -- leading ------------------------------------------------------------------------------

    def _become_leader(self) -> None:
        self._leading = True
        self._gauge.set(1)
        if self._on_started is None:
            return
        outcome = self._on_started()
        if inspect.isawaitable(outcome):
            self._leader_task = asyncio.ensure_future(outcome)
            self._leader_task.add_done_callback(_log_failure)

    def _stop_leading(self) -> None:
        if not self._leading:
            return
        self._leading = False
        self._gauge.set(0)
        if self._leader_task is not None:
            self._leader_task.cancel()
            self._leader_task = None
        if self._on_stopped is not None:
            try:
                self._on_stopped()
            except Exception:
                log.exception("on_stopped_leading failed")

    async def _release_quietly(self) -> None:
        lease = self._lease
        if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
            return
        now = format_micro_time(self._clock.now())
        spec = {
            **(lease.get("spec") or {}),
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
        }
        try:
            self._lease = await self.client.update(
                LEASE,
                self.namespace,
                self.name,
                {**lease, "metadata": self._annotated(lease.get("metadata") or {}), "spec": spec},
                request_timeout=self.retry_period,
            )
            log.info("released lease %s/%s", self.namespace, self.name)
        except (ApiError, ApiUnavailable) as err:
            # Not fatal: the others wait out the lease duration instead.
            log.warning("releasing lease %s/%s failed: %s", self.namespace, self.name, err)


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("on_started_leading failed", exc_info=task.exception())
