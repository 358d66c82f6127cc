"""The ScheduledPodAutoscaler reconciler: one key in, the cluster made to match, next wake-up out.

Level-triggered, as a controller-runtime `Reconcile` with its client: a loop of snapshot,
decide, perform the step, absorb its outcome, until the final plan (docs/architecture.md,
"Decide, then act"). The snapshot is the SPA, its Schedules and its HPA from the informer
caches, what is derived from them (spa/controller/derived.py), what the caches show of its
node capacity and what the key remembers; :func:`spa.controller.decide.decide` says what to do
next; the actuator (:class:`~spa.controller.actuator.Act`) performs it
(spa/controller/perform.py), and what happened comes back as an outcome (data: what it means
for the next decision is :func:`~spa.controller.decide.absorb`'s and
:func:`~spa.controller.decide.attempted`'s to say). It owns, and alone writes, the SPA's
status, the generated HPA, the status of every Schedule whose `scaleTargetRef` names the SPA,
those Schedules' controller ownerReferences and the SPA's node capacity. The key of a missing
SPA is reconciled too: that is where Schedules created before their SPA are marked Degraded.

What stays here is the loop and the key's Memory: reading the snapshot is
spa/controller/reading.py's, performing steps and the final plan spa/controller/perform.py's.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, MutableMapping

from spa.api import wire
from spa.controller.actuator import Act
from spa.controller.decide import (
    MAX_SCHEDULES_PER_AUTOSCALER,
    Attempts,
    AutoscalerGone,
    BackOfQueue,
    BoundsWritten,
    CreateHpa,
    Final,
    HpaNameTaken,
    HpaWritten,
    Memory,
    Outcome,
    PatchHpa,
    Plan,
    Requeue,
    Snapshot,
    WakeUp,
    absorb,
    attempted,
    decide,
    ends_after,
)
from spa.controller.derived import Derived
from spa.controller.fleet import FleetIndex
from spa.controller.metrics import ControllerMetrics
from spa.controller.optional import KindCache
from spa.controller.perform import Performer
from spa.controller.reading import SnapshotReader
from spa.kube import NamespaceDeleted, NotFound
from spa.runtime import (
    Clock,
    ObjectLogger,
    Result,
    Store,
    TerminatingNamespaces,
    UrgentWrites,
    object_logger,
    split_key,
)

__all__ = ["MAX_SCHEDULES_PER_AUTOSCALER", "Act", "Reconciler"]

log = logging.getLogger(__name__)

# The most decisions one reconcile makes. The longest sequence the rules make is twelve
# decisions and one read: adopt, create, read the HPA whose name was taken, ask the server,
# patch, patch the bounds after a refusal, then node capacity's read of the target, its question
# whether a CapacityBuffer API is served, its hold and its release of the other mode, the read
# of the target's readiness for status.windows and the list of its pods (a window just measured
# whose nodes were not), and finish. More
# means the caches keep contradicting our own writes, and the key is retried with backoff
# instead of spinning.
_MAX_STEPS = 14


class Reconciler:
    """Reconciles ScheduledPodAutoscaler keys (`namespace/name`).

    :param actuator: performs every request (the caches it records writes in are `autoscalers`,
        `schedules` and `hpas`, which the reconciler reads), node capacity's included.
    :param memory: what is remembered of each key between reconciles (empty at the start of
        a process); a test may hand in its own.
    :param decide: the decision; a test may wrap :func:`spa.controller.decide.decide` to see
        each plan.
    :param calendars: the Calendar kind, and `cluster_calendars` the ClusterCalendar kind
        (optional kinds, spa/controller/optional.py): the calendars the Schedules refer to are
        gathered from their caches into the snapshot, and while one has none (its CRD not
        served) a reference to it says so. None: not watched, so every reference to one is
        unresolved.
    :param fleet: the fleets at each upcoming boundary, whose raises are written ahead of it
        (None: every raise at its boundary).
    :param terminating: where a create refused because the SPA's namespace is being deleted
        (or is gone) is reported (the manager shares one with the Event recorder); an SPA found
        gone before its HPA's creation in a namespace said there is logged at DEBUG only.
    """

    def __init__(
        self,
        *,
        actuator: Act,
        autoscalers: Store,
        schedules: Store,
        hpas: Store,
        clock: Clock,
        metrics: ControllerMetrics | None = None,
        max_schedules: int = MAX_SCHEDULES_PER_AUTOSCALER,
        memory: MutableMapping[str, Memory] | None = None,
        decide: Callable[[Snapshot], Plan] = decide,
        calendars: KindCache | None = None,
        cluster_calendars: KindCache | None = None,
        urgent: UrgentWrites | None = None,
        terminating: TerminatingNamespaces | None = None,
        fleet: FleetIndex | None = None,
    ) -> None:
        self._autoscalers = autoscalers
        self._terminating = terminating or TerminatingNamespaces()
        self._act = actuator
        self._clock = clock
        self._metrics = metrics or ControllerMetrics()
        self._decide = decide
        # Capacity first, fleet-wide: the HPA and /scale writes are urgent, and the statuses
        # and Events wait until none is in flight (docs/architecture.md, "Capacity first").
        self._urgent = urgent or UrgentWrites(clock=clock)
        # The fleets at each upcoming boundary (docs/schedules.md, "Raises ahead of a shared
        # boundary"); None: every raise is written at its boundary.
        self._fleet = fleet
        self._performer = Performer(
            actuator=actuator,
            autoscalers=autoscalers,
            metrics=self._metrics,
            urgent=self._urgent,
            clock=clock,
            fleet=fleet,
            terminating=self._terminating,
        )
        # The validated SPAs, compiled Schedules and capacity Timelines, memoised.
        self._derived = Derived()
        self._reader = SnapshotReader(
            actuator=actuator,
            autoscalers=autoscalers,
            schedules=schedules,
            hpas=hpas,
            derived=self._derived,
            max_schedules=max_schedules,
            calendars=calendars,
            cluster_calendars=cluster_calendars,
            fleet=fleet,
        )
        self._memory: MutableMapping[str, Memory] = {} if memory is None else memory

    # -- entry points ---------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        result: Result | None = None
        try:
            result = await self._reconcile(key)
            return result
        except NamespaceDeleted as error:
            # The namespace is being deleted (or is gone), and the SPA with it: the API server
            # creates nothing there any more, so the SPA is left alone, without a status, an
            # Event or a line of its own (docs/operations.md, "Namespaces being deleted"). Its
            # deletion event, or the resync, brings the next reconcile.
            namespace, _ = split_key(key)
            self._terminating.refused(namespace or "", error)
            result = Result()
            return result
        except NotFound as error:
            # An object read from a cache (the HPA, a capacity object) or just before was
            # deleted meanwhile: a race, not a failure. Its deletion event, or this retry,
            # brings a reconcile that sees it gone.
            logger = object_logger(log, *split_key(key))
            logger.debug("%s; deleted meanwhile, retrying", error)
            result = Result(retry=True)
            return result
        finally:
            self._derived.done(key, kept=result is not None and result.back_of_queue)
            if self._fleet is not None:
                self._fleet.reconciled()

    async def _reconcile(self, key: str) -> Result:
        now = self._clock.now()
        namespace, name = split_key(key)
        assert namespace is not None
        logger = object_logger(log, namespace, name)
        attempts = Attempts()
        fetched: wire.HorizontalPodAutoscaler | None = None
        for _step in range(_MAX_STEPS):
            snapshot = await self._reader.read(
                key,
                instant=math.floor(now),
                memory=self._memory.get(key, Memory()),
                attempts=attempts,
                fetched=fetched,
            )
            plan = self._decide(snapshot)
            self._remember(key, plan)
            if isinstance(plan.action, Final):
                return await self._finish(key, plan.action, now, logger)
            expected = self._memory.get(key, Memory()).expected_boundary
            outcome = await self._performer.perform(
                key, plan.action, now, logger, expected_boundary=expected
            )
            self._absorb(key, outcome)
            attempts = attempted(attempts, outcome)
            match outcome:
                case AutoscalerGone():
                    return Result()
                case HpaNameTaken():
                    # The name is taken by an HPA our label-filtered cache does not see: read
                    # it, and decide on it until a write of ours is in the cache.
                    fetched = await self._act.get_hpa(namespace, name)
                case HpaWritten() | BoundsWritten():
                    fetched = None
            if isinstance(plan.action, CreateHpa | PatchHpa) and attempts.hpa_written:
                scale_up = plan.action.scale_up
                done = await self._performer.scale_up(key, scale_up, math.floor(now), logger)
                if done is not None:
                    self._absorb(key, done)
            then = ends_after(plan.action, outcome)
            if then is not None:
                return _result(then)
        logger.error("no final decision after %d steps; retrying with backoff", _MAX_STEPS)
        return Result(retry=True)

    def forget_schedule(self, uid: str) -> None:
        """Drop what was derived of a deleted Schedule."""
        self._derived.forget_schedule(uid)

    # -- remembering ----------------------------------------------------------------------------

    def _remember(self, key: str, plan: Plan) -> None:
        """Keep the Memory a decision left (or forget the key: its SPA is gone or going, and
        its node capacity with it, by its ownerReference)."""
        if plan.memory is None:
            namespace, name = split_key(key)
            assert namespace is not None
            self._metrics.forget_autoscaler(namespace=namespace, name=name)
            self._memory.pop(key, None)
            if self._fleet is not None:
                self._fleet.forget(key)
        else:
            self._memory[key] = plan.memory

    def _absorb(self, key: str, outcome: Outcome) -> None:
        """Keep what an outcome means for the key's Memory (decided by `absorb`); a key just
        forgotten stays so when the outcome means nothing for it."""
        memory = self._memory.get(key, Memory())
        absorbed = absorb(memory, outcome)
        if absorbed is not memory:
            self._memory[key] = absorbed

    # -- acting ---------------------------------------------------------------------------------

    async def _finish(self, key: str, final: Final, now: float, logger: ObjectLogger) -> Result:
        """Perform the final plan, place the key's next raise among its fleet, and say when to
        run again."""
        if self._fleet is not None:
            self._fleet.place(key, final.raise_at)
        await self._performer.finish(key, final, now, logger)
        return _result(final.requeue)


def _result(requeue: Requeue) -> Result:
    """The runtime's Result for a plan's Requeue."""
    match requeue:
        case BackOfQueue():
            # The statuses wait for every key already due: HPAs first, fleet-wide.
            return Result(back_of_queue=True)
        case WakeUp(at, recheck_after, backoff):
            return Result(requeue_at=at, requeue_after=recheck_after, retry=backoff)
