"""What the SPA controller watches and which keys a change wakes: the store indexes and the
event-to-key mappings (controller-runtime's `Watches` with `EnqueueRequestsFromMapFunc`).

Kept apart from the reconciler, which only reads the indexes, and from the manager, which only
wires: the one question "which SPAs must look again when this object changes?" is answered
here, in one place, and tested without an API server.

- An SPA's own events wake its key (`namespace/name`).
- An HPA's events wake the key of the same name (one HPA per SPA, same name), except the
  updates that change nothing but its status (kube-controller-manager's writes at each HPA
  sync): the reconcile reads the HPA's spec and metadata, and its status only when it runs
  for another reason (immediate scale-up's expected replicas and whether a missing target
  appeared, docs/schedules.md), which the cache keeps current all the same.
- A Schedule's events wake the SPA it names (`spec.scaleTargetRef.name`), and the SPA that
  controls it now: a retargeted Schedule must leave its old SPA too. An update wakes both the
  old and the new object's SPAs.
- A CapacityBuffer's or placeholder Deployment's events (docs/schedules.md, "Node capacity")
  wake the SPA that controls it (a buffer's controller ownerReference; a placeholder's labels,
  since it is in the controller's namespace and cannot name the SPA as its owner), except the
  updates that change
  nothing but its status (the node autoscaler's, the Deployment controller's): a buffer
  deleted or edited by hand is put right at once (controller-runtime's `Owns`).
- A Calendar's or ClusterCalendar's events wake the SPAs of the Schedules that refer to it
  (found through `CALENDAR_INDEX`), so that an edited, created or deleted calendar applies at
  once, with no edit of the Schedules (docs/schedules.md, "Shared calendars").

What the caches keep of each object is decided here too (the informers' transforms): what the
reconciler reads, nothing else (docs/performance.md, "2026-11-25: the request path (issue
24)"); and how they keep it (`compact_codec`): the objects of which a fleet has one or more
per SPA are kept deflated at rest and decoded at each read (docs/performance.md, "compact
caches").
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from spa.api import wire
from spa.api.calendars import CalendarKey, calendar_key, referenced_calendars
from spa.api.membership import controller_owner_name
from spa.controller.capacity import placeholder_keys
from spa.controller.desired import controller_owner_uid
from spa.runtime import (
    Codec,
    DeflateCodec,
    Informer,
    Store,
    changed_beyond_status,
    drop_bookkeeping,
    object_key,
)

__all__ = [
    "CALENDAR_INDEX",
    "HPA_STATUS_READ",
    "OWNER_INDEX",
    "TARGET_INDEX",
    "UID_INDEX",
    "add_indexes",
    "all_keys",
    "cached_capacity",
    "cached_hpa",
    "cached_object",
    "calendar_index_value",
    "compact_codec",
    "owned_changed",
    "owner_keys",
    "target_keys",
    "watch",
    "watch_calendars",
    "watch_owned",
]

CALENDAR_INDEX = "calendar"
OWNER_INDEX = "owner-uid"
TARGET_INDEX = "target"
UID_INDEX = "uid"


# Of an HPA's status, what the reconcile reads (immediate scale-up, spa/controller/decide/
# scaleup.py): the replicas the HPA controller last left on the target, and its AbleToScale
# condition's status and transition time. The rest (currentMetrics, the other conditions and
# their messages, lastScaleTime) changes at every HPA sync and is never read.
HPA_STATUS_READ = ("desiredReplicas", "currentReplicas")
_CONDITION_READ = ("type", "status", "lastTransitionTime")


def compact_codec() -> Codec:
    """How the caches of the SPAs, Schedules, HPAs and capacity objects keep them at rest: as
    their JSON deflated against the first one's (`DeflateCodec`), one codec per cache. A
    fleet has one or more of each per SPA, and decoded JSON is most of what a cached SPA
    costs: 13.4 KB for the SPA, its 4 Schedules and its HPA decoded, 1.7 KB deflated
    (docs/performance.md, "compact caches"). Each read decodes again, a few µs an object.
    The calendars, few and read by many SPAs, are kept as they are."""
    return DeflateCodec()


def cached_object(obj: dict[str, Any]) -> dict[str, Any]:
    """An SPA, a Schedule or a calendar as its cache keeps it: everything but the bookkeeping.
    The whole rest is read: the spec, the metadata (annotations, owners, creationTimestamp for
    the Schedules' order) and the status, which a status write is compared with."""
    return drop_bookkeeping(obj)


def cached_hpa(obj: dict[str, Any]) -> dict[str, Any]:
    """An HPA as its cache keeps it: no bookkeeping, and of its status only
    :data:`HPA_STATUS_READ` and the AbleToScale condition's type, status and
    lastTransitionTime. Leaves `obj` as it is; applied twice, it changes nothing more."""
    obj = drop_bookkeeping(obj)
    status = obj.get("status")
    if not isinstance(status, dict):
        return obj
    kept: dict[str, Any] = {key: status[key] for key in HPA_STATUS_READ if key in status}
    conditions = [
        {key: condition[key] for key in _CONDITION_READ if key in condition}
        for condition in status.get("conditions") or ()
        if isinstance(condition, dict) and condition.get("type") == "AbleToScale"
    ]
    if conditions:
        kept["conditions"] = conditions
    return obj if kept == status else {**obj, "status": kept}


# Of a CapacityBuffer's or placeholder Deployment's metadata, what the reconcile and the event
# mapping read; of its spec, the replicas; of a placeholder's status, its ready pods (when the
# capacity stood on nodes: docs/api.md, "status.windows"). Nothing else is kept: each is a few
# hundred bytes.
_CAPACITY_METADATA = ("name", "namespace", "uid", "resourceVersion", "labels", "ownerReferences")


def cached_capacity(obj: dict[str, Any]) -> dict[str, Any]:
    """A CapacityBuffer or placeholder Deployment as its cache keeps it: its name, namespace,
    uid, resourceVersion, labels and ownerReferences, `spec.replicas` and
    `status.readyReplicas`."""
    metadata = obj.get("metadata") or {}
    kept: dict[str, Any] = {
        "metadata": {key: metadata[key] for key in _CAPACITY_METADATA if key in metadata}
    }
    for key in ("apiVersion", "kind"):
        if key in obj:
            kept[key] = obj[key]
    spec = obj.get("spec")
    if isinstance(spec, dict) and "replicas" in spec:
        kept["spec"] = {"replicas": spec["replicas"]}
    status = obj.get("status")
    if isinstance(status, dict) and "readyReplicas" in status:
        kept["status"] = {"readyReplicas": status["readyReplicas"]}
    return kept


def _stands(obj: dict[str, Any]) -> bool:
    """Whether a placeholder Deployment has every pod it asks for Ready (on a node)."""
    wanted = (obj.get("spec") or {}).get("replicas")
    ready = (obj.get("status") or {}).get("readyReplicas")
    return isinstance(wanted, int) and isinstance(ready, int) and 0 < wanted <= ready


def owned_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether an update of a CapacityBuffer or placeholder Deployment wakes its SPA: a change
    beyond its status, or the status write that makes every placeholder pod Ready (the nodes
    for the window's capacity stand: its nodesReadyAt). The other status writes (each pod's
    progress, a buffer's conditions) wake nothing."""
    return changed_beyond_status(old, new) or (_stands(new) and not _stands(old))


def owner_keys(obj: dict[str, Any]) -> list[str]:
    """The key of the SPA that controls a CapacityBuffer (its controller ownerReference) or
    that a placeholder Deployment is for (its labels: it is in the controller's namespace,
    where no ownerReference to the SPA can be); none if no SPA does."""
    labelled = placeholder_keys(obj)
    if labelled:
        return labelled
    name = controller_owner_name(wire.typed(wire.HorizontalPodAutoscaler, obj))
    namespace = (obj.get("metadata") or {}).get("namespace")
    return [f"{namespace}/{name}"] if name and namespace else []


def target_keys(schedule: wire.Schedule) -> list[str]:
    """The key of the SPA a Schedule names (none if it names nothing usable)."""
    target = ((schedule.get("spec") or {}).get("scaleTargetRef") or {}).get("name")
    namespace = (schedule.get("metadata") or {}).get("namespace")
    if not (isinstance(target, str) and target and namespace):
        return []
    return [sys.intern(f"{namespace}/{target}")]  # as object_key: one string for every holder


# The index functions get the store's raw dicts: this is where they become typed.


def _target_index(obj: dict[str, Any]) -> list[str]:
    return target_keys(wire.typed(wire.Schedule, obj))


def _owner_uid(obj: dict[str, Any]) -> list[str]:
    uid = controller_owner_uid(wire.typed(wire.Schedule, obj))
    return [uid] if uid else []


def calendar_index_value(key: CalendarKey) -> str:
    """How `CALENDAR_INDEX` spells a calendar: `Kind/namespace/name`."""
    return "/".join(key)


def _calendar_index(obj: dict[str, Any]) -> list[str]:
    keys = referenced_calendars(wire.typed(wire.Schedule, obj))
    return sorted({calendar_index_value(key) for key in keys})


def _uid(obj: dict[str, Any]) -> list[str]:
    autoscaler = wire.typed(wire.ScheduledPodAutoscaler, obj)
    uid = (autoscaler.get("metadata") or {}).get("uid")
    return [str(uid)] if uid else []


def add_indexes(*, autoscalers: Store, schedules: Store) -> None:
    """Schedules by the uid of the SPA that controls them, by the SPA they name and by the
    calendars they refer to; SPAs by uid (UIDs, not names: a re-created SPA, or one of the
    same name elsewhere, is another)."""
    schedules.add_indexer(OWNER_INDEX, _owner_uid)
    schedules.add_indexer(CALENDAR_INDEX, _calendar_index)
    schedules.add_indexer(TARGET_INDEX, _target_index)
    autoscalers.add_indexer(UID_INDEX, _uid)


def _schedule_keys(obj: dict[str, Any], autoscalers: Store) -> set[str]:
    schedule = wire.typed(wire.Schedule, obj)  # from an informer or its store
    keys = set(target_keys(schedule))
    owner = controller_owner_uid(schedule)
    if owner:  # the keys alone: a compact store would decode each SPA
        keys.update(autoscalers.keys_by_index(UID_INDEX, owner))
    return keys


def watch_owned(informer: Informer, *, enqueue: Callable[[str], None]) -> None:
    """Wake the SPAs that own what `informer` caches (a CapacityBuffer or placeholder
    Deployment) at every change but a status write, and at the one that makes all of a
    placeholder's pods Ready (:func:`owned_changed`); also for an informer started after the
    others (a CapacityBuffer CRD installed later: spa/controller/optional.py)."""

    def wake(keys: Iterable[str]) -> None:
        for key in sorted(keys):
            enqueue(key)

    informer.add_handler(
        on_add=lambda obj: wake(owner_keys(obj)),
        on_update=lambda old, new: wake(set(owner_keys(old)) | set(owner_keys(new))),
        on_delete=lambda obj: wake(owner_keys(obj)),
        update_filter=owned_changed,
    )


def watch(
    *,
    autoscalers: Informer,
    schedules: Informer,
    hpas: Informer,
    enqueue: Callable[[str], None],
    schedule_deleted: Callable[[dict[str, Any]], None] = lambda obj: None,
    calendars: Iterable[Informer] = (),
    owned: Iterable[Informer] = (),
) -> None:
    """Register the handlers that turn every event into the keys it wakes; `calendars` are
    the informers of Calendars and ClusterCalendars, `owned` those of the CapacityBuffers and
    placeholder Deployments."""

    def wake(keys: Iterable[str]) -> None:
        for key in sorted(keys):
            enqueue(key)

    autoscalers.add_handler(
        on_add=lambda obj: enqueue(object_key(obj)),
        on_update=lambda old, new: enqueue(object_key(new)),
        on_delete=lambda obj: enqueue(object_key(obj)),
    )
    hpas.add_handler(
        on_add=lambda obj: enqueue(object_key(obj)),
        on_update=lambda old, new: enqueue(object_key(new)),
        on_delete=lambda obj: enqueue(object_key(obj)),
        update_filter=changed_beyond_status,
    )

    for informer in owned:
        watch_owned(informer, enqueue=enqueue)

    def deleted(obj: dict[str, Any]) -> None:
        schedule_deleted(obj)
        wake(_schedule_keys(obj, autoscalers.store))

    schedules.add_handler(
        on_add=lambda obj: wake(_schedule_keys(obj, autoscalers.store)),
        on_update=lambda old, new: wake(
            _schedule_keys(old, autoscalers.store) | _schedule_keys(new, autoscalers.store)
        ),
        on_delete=deleted,
    )

    for informer in calendars:
        watch_calendars(
            informer, autoscalers=autoscalers.store, schedules=schedules.store, enqueue=enqueue
        )


def watch_calendars(
    informer: Informer, *, autoscalers: Store, schedules: Store, enqueue: Callable[[str], None]
) -> None:
    """Wake the SPAs of the Schedules that refer to a Calendar or ClusterCalendar that
    `informer` caches, at each of its changes; also for an informer started after the others
    (a calendar CRD installed later: spa/controller/optional.py)."""

    def referring(obj: dict[str, Any]) -> list[str]:
        """The SPAs of the Schedules that refer to the calendar `obj`, in order."""
        value = calendar_index_value(calendar_key(obj))
        keys: set[str] = set()
        for schedule in schedules.by_index(CALENDAR_INDEX, value):
            keys |= _schedule_keys(schedule, autoscalers)
        return sorted(keys)

    def wake(obj: dict[str, Any]) -> None:
        for key in referring(obj):
            enqueue(key)

    informer.add_handler(on_add=wake, on_update=lambda old, new: wake(new), on_delete=wake)


def all_keys(*, autoscalers: Store, schedules: Store) -> list[str]:
    """Every key worth a periodic resync: each SPA, and each SPA some Schedule names or is
    controlled by (a missing SPA's key marks its Schedules Degraded)."""
    keys = set(autoscalers.keys())
    for schedule in schedules.objects():  # one decoded at a time
        keys.update(_schedule_keys(schedule, autoscalers))
    return sorted(keys)
