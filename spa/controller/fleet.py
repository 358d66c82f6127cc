"""The fleets at each upcoming boundary, and the controller's own write time.

Why runtime state: how early a fleet's raises start depends on how many SPAs share the
boundary and on how fast this API server takes this controller's writes, neither of which a
decision can know. :class:`FleetIndex` keeps, for each upcoming raise instant, the SPAs whose
next raise falls there (each reconcile says its own, `Final.raise_at`: no scan of the fleet),
and :class:`WriteTime`, the time a raise takes of the throughput in a burst. Together
they give each snapshot a plain :class:`~spa.controller.decide.fleet.FleetRaise`; the rule of
what may be written early is the decision's (spa/controller/decide/fleet.py). When the writes
turn out slower than estimated, the fleets still to come start sooner: their start is
recomputed, and the keys woken earlier (docs/schedules.md, "Raises ahead of a shared
boundary").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from spa.controller.decide.fleet import FleetRaise, fleet_advance
from spa.runtime import Clock

__all__ = [
    "DEFAULT_MARGIN",
    "DEFAULT_MAX_ADVANCE",
    "DEFAULT_WRITE_SECONDS",
    "WRITE_RAISES_ANNOTATION",
    "WRITE_SECONDS_ANNOTATION",
    "FleetIndex",
    "WriteTime",
]

log = logging.getLogger(__name__)

# The write time assumed before one is measured: one HPA write every 5 ms of the controller's
# throughput (about 200 a second; docs/performance.md measured 322 on the test plane).
DEFAULT_WRITE_SECONDS = 0.005
# The estimate is multiplied by this: the fleet is started 1.5 times its estimated need early.
DEFAULT_MARGIN = 1.5
# Nobody's raise is written more than this many seconds before its boundary.
DEFAULT_MAX_ADVANCE = 120
# Where the leader keeps what it measured, on its Lease, for the next leader: a restart or a
# failover would otherwise go back to the default at the next shared boundary, which at 5,000
# SPAs was 1.5 times too short (docs/schedules.md, "Raises ahead of a shared boundary").
WRITE_SECONDS_ANNOTATION = "autoscaling.d-kuro.github.io/fleet-write-seconds"
# ... and, when that is a burst's pace, how many raises it was measured over: the next leader
# holds it against smaller bursts as this one would (:meth:`WriteTime.observe_pace`).
WRITE_RAISES_ANNOTATION = "autoscaling.d-kuro.github.io/fleet-write-raises"
# An inherited write time above this is not a measurement of ours: ignored.
_MOST_INHERITED = 1.0
# Weight of the latest write in the EWMA.
_ALPHA = 0.1
# The fleets' starts are recomputed from a new estimate at most this often.
_REFRESH_SECONDS = 1.0
# A burst's pace counts once this many of its raises have landed.
_PACE_RAISES = 20
# ... and while it took at most this many reconciles a raise: a raise's own, the one its HPA's
# watch event brings, its statuses' pass, and one to spare. A burst of other work (a restart's
# resync of a fleet whose HPAs stand, a few of them written) would give a pace per raise that
# is the time of the many reconciles between.
_RECONCILES_PER_RAISE = 4
# A later burst's pace replaces the one the estimate came from once the later burst has
# landed half as many raises, or this many: 1,000 raises written at a boundary measured the
# pace 10,000 did (2.1 against 2.2 ms a raise, docs/performance.md, "1,000, 5,000 and 10,000
# SPAs in one run"); a burst of 30 says little of a fleet of 10,000 (the watch events and
# reconciles its last raises bring fall after it, and one pause of the loop moves its pace
# by half).
_PACE_ENOUGH_RAISES = 1000


class WriteTime:
    """The time one raise takes of the controller's throughput: the pace of the latest burst
    of raises, once one is measured; before it, the time each HPA write takes.

    A burst's pace (:meth:`observe_pace`, fed by :class:`FleetIndex`) is the time between its
    first raise and its latest over the raises between, measured while keys waited for every
    worker: the end-to-end time a raise takes of the fleet's, every part included (its
    reconcile, the HPA write, an immediate scale-up's request, the reconciles its own watch
    events bring). Once measured it *is* the estimate, and what the next leader inherits. A
    write's latency over the writes in flight with it is no measure of a raise, either way: it
    leaves out the rest of the raise, and it counts the wait for this process's event loop
    while it is sampled only when all the workers are writing, so that where the loop is what
    limits (a large fleet) it says more than a raise takes. At 5,000 SPAs the Lease carried
    about 3 ms from it (the EWMA of the window end's writes, the last burst before the
    restart) where the boundary's raises had landed every 2.2 ms, and the next fleet began
    2.08 times its need early, over issue 38's 2 times (docs/performance.md, "1,000, 5,000
    and 10,000 SPAs in one run").

    A pace replaces the one before it only from a burst at least half as large, or of
    :data:`_PACE_ENOUGH_RAISES`: a burst of 30 raises is not the pace of a fleet of 10,000
    (and the fleets that matter, the large ones, measure their own each time they are
    written). The number of raises rides on the Lease with the pace.

    Before any pace (a fresh start whose creates gave none, with no Lease): an EWMA of each
    HPA write's latency divided by the HPA writes in flight with it, over the writes made
    while all `workers` were writing (a boundary's burst, when the API server's rate is what
    limits). A write made alone is left out: its latency says how fast the server answers
    one request, not how many it takes a second, and would make the next fleet's estimate too
    short. :data:`DEFAULT_WRITE_SECONDS` until a burst is measured; `fixed` replaces the
    measurement (tests, benchmarks).

    In a shard, the slowest pace the other shards' Leases carry is the least the estimate is
    (:meth:`hold_siblings`): they share the API server. What this process measured is still
    what its own Lease carries, or the slowest would be each shard's for good.

    `floor` is the least a write can take of the throughput whatever was measured: 1 /
    `--kube-api-qps` under a client rate limit. A burst the limiter's saved-up tokens let
    through at the server's own speed measures less than that, but a fleet larger than the
    burst is written at the limiter's rate (docs/schedules.md, "Raises ahead of a shared
    boundary")."""

    def __init__(
        self,
        *,
        workers: int,
        default: float = DEFAULT_WRITE_SECONDS,
        fixed: float | None = None,
        floor: float = 0.0,
    ) -> None:
        self._workers = max(1, workers)
        self._measured: float | None = None
        self._default = default
        self._fixed = fixed
        self._floor = floor
        self._pace: float | None = None
        self._pace_raises = 0  # how many raises the pace was measured over
        self._siblings: float | None = None  # the slowest pace of the other shards' Leases

    def observe(self, seconds: float, *, in_flight: int) -> None:
        """One HPA write took `seconds` from request to answer, `in_flight` HPA writes (itself
        included) being made at its end: the EWMA, the estimate until a burst's pace."""
        if in_flight < self._workers:
            return
        each = max(0.0, seconds) / in_flight
        if self._measured is None:
            self._measured = each
        else:
            self._measured += _ALPHA * (each - self._measured)

    def observe_pace(self, seconds: float, *, raises: int) -> None:
        """A burst has had one raise land every `seconds` over its `raises`, every part of a
        raise included: the estimate from now on, unless the pace it has came from a burst
        more than twice as large and this one has fewer than :data:`_PACE_ENOUGH_RAISES`."""
        if self._pace is not None and not self._large_enough(raises):
            return
        self._pace = max(0.0, seconds)
        self._pace_raises = raises

    def _large_enough(self, raises: int) -> bool:
        """Whether a burst of `raises` says as much as the one the pace came from: at least
        half as large, or :data:`_PACE_ENOUGH_RAISES`."""
        return raises >= min(self._pace_raises // 2, _PACE_ENOUGH_RAISES)

    @property
    def learned(self) -> float | None:
        """What was measured (the latest burst's pace, or before any the writes' EWMA), None
        before either: what the next leader inherits."""
        return self._measured if self._pace is None else self._pace

    def inherit(self, seconds: float, *, raises: int | None = None) -> bool:
        """Start from what a previous leader learned, unless this process has measured its
        own: a burst's pace over `raises` raises, which stands until a burst of this process
        replaces it; without `raises` (the last leader had measured no pace, or an older
        version's Lease), the writes' EWMA, which this process's writes then move. False when
        refused."""
        if self.learned is not None or not _a_measurement(seconds):
            return False
        if raises is None:
            self._measured = seconds
        else:
            self._pace = seconds
            self._pace_raises = raises
        return True

    def memo(self) -> dict[str, str]:
        """The annotations that carry :attr:`learned` on the Lease, with the raises a pace was
        measured over (nothing before it)."""
        learned = self.learned
        if learned is None or learned <= 0.0:  # a write measured at 0 s (an injected clock)
            return {}
        memo = {WRITE_SECONDS_ANNOTATION: f"{learned:.6f}"}
        if self._pace is not None:
            memo[WRITE_RAISES_ANNOTATION] = str(self._pace_raises)
        return memo

    def inherit_from(self, annotations: Mapping[str, str]) -> None:
        """:meth:`inherit` what the Lease's annotations carry, if they carry a number (the
        raises, if not a whole number of at least :data:`_PACE_RAISES`, are left out: the
        number is then taken as an EWMA)."""
        text = annotations.get(WRITE_SECONDS_ANNOTATION)
        if text is None:
            return
        seconds, raises = _on_lease(annotations)
        if self.inherit(seconds, raises=raises):
            log.info(
                "fleet write time %.1f ms, as the last leader measured it%s",
                seconds * 1000,
                "" if raises is None else f" (the pace of {raises:,} raises)",
            )
        else:
            log.info("fleet write time on the Lease not taken: %r", text)

    def hold_siblings(self, leases: Mapping[str, Mapping[str, str]]) -> None:
        """The paces the other shards' Leases carry (`leases`: their annotations by Lease
        name): the slowest is the least this write time is from now on, of a burst at least
        as large as one this process's pace would give way to (:meth:`observe_pace`).

        Why: the shards share one API server, and a shard that wrote its last burst alone,
        after the others had finished, measured a pace it does not have when they all write
        at once. At 20,000 SPAs in 4 shards the last one planned 5,000 raises from 2 ms a
        raise, began 14.7 s ahead while the others still wrote, and raised its fleet 16.8 s
        after the boundary (docs/performance.md, "20,000 SPAs in 4 shards, from a fresh
        clone"). A sibling's EWMA, or a pace of too small a burst, is left out."""
        slowest: tuple[float, str] | None = None
        for name, carried in leases.items():
            seconds, raises = _on_lease(carried)
            if raises is None or not self._large_enough(raises) or not _a_measurement(seconds):
                continue
            if slowest is None or seconds > slowest[0]:
                slowest = (seconds, name)
        held = None if slowest is None else slowest[0]
        if held != self._siblings and slowest is not None:
            # Said at INFO when it is what the estimate goes by (slower than this process's).
            governs = slowest[0] > self._own_seconds()
            log.log(
                logging.INFO if governs else logging.DEBUG,
                "fleet write time at least %.1f ms, the pace the Lease %s carries (this "
                "process measured %s)",
                slowest[0] * 1000,
                slowest[1],
                "none" if self.learned is None else f"{self.learned * 1000:.1f} ms",
            )
        self._siblings = held

    @property
    def seconds(self) -> float:
        if self._fixed is not None:
            return self._fixed
        return max(self._own_seconds(), self._siblings or 0.0)

    def _own_seconds(self) -> float:
        """The estimate from what this process measured (or inherited), no sibling's."""
        if self._pace is not None:
            return max(self._floor, self._pace)
        measured = self._default if self._measured is None else self._measured
        return max(self._floor, measured)


def _a_measurement(seconds: float) -> bool:
    """Whether a write time read from a Lease can be one this controller measured."""
    return 0.0 < seconds <= _MOST_INHERITED


def _on_lease(annotations: Mapping[str, str]) -> tuple[float, int | None]:
    """The write time a Lease's annotations carry (-1 when it is not a number) and the raises
    its pace was measured over (None: not a pace)."""
    try:
        seconds = float(annotations.get(WRITE_SECONDS_ANNOTATION, "-1"))
    except ValueError:
        seconds = -1.0
    return seconds, _raises(annotations.get(WRITE_RAISES_ANNOTATION))


def _raises(text: str | None) -> int | None:
    """The raises a pace on the Lease was measured over; None if `text` says no such number."""
    if text is None or not text.isdecimal():
        return None
    raises = int(text)
    return raises if raises >= _PACE_RAISES else None


@dataclass
class _Burst:
    """The raises landed while the work queue held keys ready to be handed out: every worker
    busy, so the time between them is what the fleet's throughput gives a raise."""

    first: float | None = None  # the first raise landed in it (None: no burst under way)
    last: float = 0.0
    raises: int = 0
    reconciles: int = 0  # those ended since its first raise

    def pace(self) -> float | None:
        """Seconds a raise, every part included; None until it says enough."""
        if self.first is None or self.raises < _PACE_RAISES:
            return None
        if self.reconciles > _RECONCILES_PER_RAISE * self.raises:
            return None
        return (self.last - self.first) / (self.raises - 1)


@dataclass
class _Fleet:
    keys: dict[str, None] = field(default_factory=dict)  # in the order they were placed
    # The SPAs with a raise due at the boundary, as counted before it: from the boundary on,
    # each key leaves for its next raise as it is reconciled, but the fleet was this large.
    size: int = 0
    start: int | None = None  # when its keys were woken (None: not moved)
    first: float | None = None  # the first and last raise written for it
    last: float | None = None
    raised: int = 0  # the raises written for it from its start


class FleetIndex:
    """The SPAs by the instant of their next raise, and when each fleet starts.

    :param wake: queues a key at an instant (the work queue's `add_at`: earlier wins).
    :param observed: called with (boundary, fleet, first, last) after each raise written for
        a moved fleet (the metrics).
    :param estimated: called with the write time whenever the fleets' starts are recomputed
        from it (at most once a second; the metrics).
    :param backlog: the keys ready in the work queue, not yet handed out (its length): raises
        that land while there are any are a burst, whose pace the write time takes (None: no
        burst is measured).
    :param sharded: this process is one shard of several sharing the API server: the statuses
        of an SPA raised ahead wait for its boundary (:attr:`statuses_at_boundary`).
    """

    def __init__(
        self,
        *,
        write_time: WriteTime,
        clock: Clock,
        wake: Callable[[str, float], None] | None = None,
        margin: float = DEFAULT_MARGIN,
        max_advance: int = DEFAULT_MAX_ADVANCE,
        enabled: bool = True,
        observed: Callable[[int, int, float, float], None] | None = None,
        estimated: Callable[[float], None] | None = None,
        backlog: Callable[[], int] | None = None,
        sharded: bool = False,
    ) -> None:
        self.write_time = write_time
        self._sharded = sharded
        self._backlog = backlog
        self._burst = _Burst()
        self._clock = clock
        self._wake = wake
        self._margin = margin
        self._max_advance = max_advance
        self._enabled = enabled
        self._observed = observed
        self._estimated = estimated
        self._fleets: dict[int, _Fleet] = {}
        self._boundary: dict[str, int] = {}
        self._refreshed = 0.0

    @property
    def horizon(self) -> int:
        """How far ahead of its boundary a raise may have been written, by this process or a
        previous leader (early raises off or not: one written before is kept all the same)."""
        return self._max_advance

    @property
    def statuses_at_boundary(self) -> bool:
        """The statuses of an SPA raised ahead are written at its boundary, not right after
        the raise: in a shard, which cannot see the other shards' raises. Within one process
        the statuses already wait for every raise in flight (docs/architecture.md, "Capacity
        first"); across shards nothing orders them, and at 20,000 SPAs in 4 shards the
        shards done early wrote a status per SPA while the last shard still raised its fleet,
        at 71 HPAs a second (docs/schedules.md, "Raises ahead of a shared boundary")."""
        return self._sharded

    def connect(self, wake: Callable[[str, float], None]) -> None:
        """Wake keys through `wake` (the queue is made after the reconciler)."""
        self._wake = wake

    def raise_for(self, key: str) -> FleetRaise | None:
        """The advance of `key`'s next raise as last placed (None: none known)."""
        boundary = self._boundary.get(key)
        if boundary is None or not self._enabled:
            return None
        fleet = self._fleets[boundary]
        advance = self._advance(len(fleet.keys))
        if fleet.start is not None:
            # Never later than the keys were woken for: a key reconciled after its fleet
            # started is written early like the others.
            advance = max(advance, boundary - fleet.start)
        if advance <= 0:
            return None  # a quiet boundary: written at B, as ever
        return FleetRaise(boundary, advance, len(fleet.keys))

    def place(self, key: str, boundary: int | None) -> None:
        """`key`'s next raise is at `boundary` (None: it has none coming)."""
        previous = self._boundary.get(key)
        if previous == boundary:
            return
        if previous is not None:
            self._remove(key, previous)
        if boundary is None:
            return
        self._boundary[key] = boundary
        fleet = self._fleets.setdefault(boundary, _Fleet())
        fleet.keys[key] = None
        self._count(boundary, fleet)
        if self._enabled:
            self._schedule(boundary, fleet, key)

    def forget(self, key: str) -> None:
        self.place(key, None)

    def reconciled(self) -> None:
        """A reconcile ended (of any key, whatever it wrote): counted in the burst under way,
        which ends when no key is left ready."""
        if self._burst.first is None:
            return
        self._burst.reconciles += 1
        if not self._busy():
            self._burst = _Burst()

    def _busy(self) -> bool:
        return self._backlog is not None and self._backlog() > 0

    def _in_burst(self, at: float) -> None:
        """A raise landed at `at`: the burst's pace, once it says enough, is the write time
        (the first fleet after a start goes by the start's own writes: a fresh install
        creates every HPA in one burst)."""
        if not self._busy():
            self._burst = _Burst()
            return
        burst = self._burst
        if burst.first is None:
            burst.first = at
        burst.last = max(burst.last, at)
        burst.raises += 1
        pace = burst.pace()
        if pace is not None:
            self.write_time.observe_pace(pace, raises=burst.raises)

    def written(self, key: str, at: float, *, raised: bool = True) -> None:
        """A write changed `key`'s HPA at `at`: the metrics of its fleet, the pace of the burst
        it landed in if it `raised` the HPA (a removal's write is cheaper, with no immediate
        scale-up, and is never written ahead), and, as the write time may have changed, the
        fleets still to come started sooner when they must."""
        if raised:
            self._in_burst(at)
        boundary = self._boundary.get(key)
        if boundary is not None:
            fleet = self._fleets[boundary]
            # A fleet's raises count from its start, or from its boundary when it was written
            # there (not moved, or early raises off): its pace is measured either way.
            if at >= (boundary if fleet.start is None else fleet.start):
                fleet.first = at if fleet.first is None else min(fleet.first, at)
                fleet.last = at if fleet.last is None else max(fleet.last, at)
                fleet.raised += 1
                if self._observed is not None and fleet.start is not None:
                    self._observed(boundary, fleet.size, fleet.first, fleet.last)
        if at - self._refreshed >= _REFRESH_SECONDS:
            self._refreshed = at
            self._replan(at)

    def hold_siblings(self, leases: Mapping[str, Mapping[str, str]]) -> None:
        """The other shards' Leases as last read (:meth:`WriteTime.hold_siblings`): a slower
        pace among them starts sooner the fleets still to come."""
        before = self.write_time.seconds
        self.write_time.hold_siblings(leases)
        if self.write_time.seconds > before:
            self._replan(self._clock.now())

    def _replan(self, now: float) -> None:
        """The write time may have changed: report it, and start sooner the fleets it moves
        earlier."""
        if self._estimated is not None:
            self._estimated(self.write_time.seconds)
        self.refresh(now)

    def refresh(self, now: float) -> None:
        """Start sooner each fleet still to come whose start moved earlier (the writes are
        slower than estimated); a fleet already started has every key due."""
        if not self._enabled:
            return
        for boundary, fleet in list(self._fleets.items()):
            if boundary <= now or (fleet.start is not None and fleet.start <= now):
                continue
            self._schedule(boundary, fleet, None)

    def _advance(self, size: int) -> int:
        return fleet_advance(
            size, self.write_time.seconds, margin=self._margin, max_advance=self._max_advance
        )

    def _schedule(self, boundary: int, fleet: _Fleet, key: str | None) -> None:
        """Wake the fleet's keys at its start: all of them, in the order they were placed,
        when the start moved earlier; else only the new `key`."""
        advance = self._advance(len(fleet.keys))
        if advance <= 0 or self._wake is None:
            return
        start = boundary - advance
        if fleet.start is None or start < fleet.start:
            fleet.start = start
            for each in fleet.keys:
                self._wake(each, start)
        elif key is not None:
            self._wake(key, fleet.start)

    def _remove(self, key: str, boundary: int) -> None:
        del self._boundary[key]
        fleet = self._fleets[boundary]
        fleet.keys.pop(key, None)
        if not fleet.keys:
            del self._fleets[boundary]
        else:
            self._count(boundary, fleet)

    def _count(self, boundary: int, fleet: _Fleet) -> None:
        """The fleet's size, while its boundary is still to come."""
        if self._clock.now() < boundary:
            fleet.size = len(fleet.keys)

    def __len__(self) -> int:
        return len(self._fleets)
