"""A tiny model of the API server for one SPA, and the real Reconciler run against it.

Not a test module: tests/unit/controller/decide/test_decide.py (the rules),
tests/unit/controller/decide/test_decide_calendars.py and tests/unit/controller/test_reconciler.py
(the loop) build on it. :class:`Server` stores what it is sent, may spell values its own way, may
refuse a spec, and answers the requests of
:class:`spa.controller.actuator.Actuator` as a :class:`spa.kube.Client` does;
:meth:`Server.reconcile` runs one real reconcile of the SPA's key
(:class:`spa.controller.reconciler.Reconciler`, its actuator and fresh caches that hold what
the server holds, as after a watch caught up) and returns its final plan.
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spa.api import wire
from spa.controller.actuator import Actuator
from spa.controller.capacity import CapacityActuator
from spa.controller.decide import (
    CreateHpa,
    Final,
    Memory,
    PatchHpa,
    Plan,
    ScaleUp,
    Snapshot,
    decide,
)
from spa.controller.desired import MANAGED_BY_LABEL, owner_reference
from spa.controller.fleet import FleetIndex
from spa.controller.optional import Complete, KindCache
from spa.controller.permissions import PodAccess
from spa.controller.reconciler import Reconciler
from spa.controller.resources import SCHEDULED_POD_AUTOSCALERS, SCHEDULES
from spa.controller.watches import add_indexes, compact_codec
from spa.kube import (
    HPA_V2,
    POD,
    Conflict,
    ListResult,
    NotFound,
    PatchType,
    Resource,
    error_from_status,
)
from spa.runtime import FakeClock, Result, Store, TerminatingNamespaces, WriteSummary
from tests import builders
from tests.client_double import UnexpectedRequests

KEY = "shop/web"
UID = "uid-web"
# Monday 2026-11-16 10:30 UTC.
MONDAY_1030 = int(dt.datetime(2026, 11, 16, 10, 30, tzinfo=dt.UTC).timestamp())


def at(hour: int, minute: int = 0) -> int:
    return int(dt.datetime(2026, 11, 16, hour, minute, tzinfo=dt.UTC).timestamp())


# 1000 requests per second per pod: a quantity the API server spells its own way (`kilo`).
RPS_1000 = {
    "type": "Pods",
    "pods": {
        "metric": {"name": "rps"},
        "target": {"type": "AverageValue", "averageValue": 1000},
    },
}


def autoscaler(**metadata: Any) -> dict[str, Any]:
    """The SPA shop/web (base 3/10 on :data:`RPS_1000`) as this server stores it; `metadata`
    adds to its metadata or replaces a part."""
    stored = {"uid": UID, "generation": 1, "resourceVersion": "1", **metadata}
    return builders.autoscaler(metadata=stored, metrics=[RPS_1000])


def schedule(
    name: str,
    *,
    start: str = "10:00",
    end: str = "11:00",
    owner: dict[str, Any] | None = None,
    created: str = "2026-11-01T00:00:00Z",
    **spec: Any,
) -> dict[str, Any]:
    """The Schedule shop/`name` of web as this server stores it: Daily from `start` to `end`,
    5/20, unless `spec` says otherwise; controlled by `owner` if given."""
    stored = {
        "uid": f"uid-{name}",
        "generation": 1,
        "creationTimestamp": created,
        "ownerReferences": None if owner is None else [owner],
    }
    window = {"type": "Daily", "startTime": start, "endTime": end}
    bounds = {"minReplicas": 5, "maxReplicas": 20}
    return builders.schedule(name=name, metadata=stored, **(window | bounds | spec))


OURS: dict[str, Any] = dict(owner_reference(wire.typed(wire.ScheduledPodAutoscaler, autoscaler())))


def merged(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merged(result.get(key), value)
    return result


def kilo(spec: dict[str, Any]) -> dict[str, Any]:
    """The API server's spelling of quantities: 1000 is stored as "1k"."""
    spelled = copy.deepcopy(spec)
    for metric in spelled.get("metrics") or ():
        target = (metric.get("pods") or {}).get("target") or {}
        if target.get("averageValue") == 1000:
            target["averageValue"] = "1k"
    return spelled


# The discovery document of apps/v1, as far as the scale-up reads it.
APPS_V1 = [
    {"name": "deployments", "kind": "Deployment", "namespaced": True},
    {"name": "deployments/scale", "kind": "Scale", "namespaced": True},
]


class Recorded:
    """The Events the actuator recorded (a :class:`~spa.controller.writes.Recorder`)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def normal(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        self.events.append(("Normal", reason, message))

    def warning(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        self.events.append(("Warning", reason, message))


@dataclass
class Server(UnexpectedRequests):
    """A tiny model of the API server for one SPA (`autoscaler`, None: it does not exist), the
    Schedules that name it, its HPA and its scale target."""

    autoscaler: dict[str, Any] | None
    schedules: list[dict[str, Any]]
    hpa: dict[str, Any] | None = None
    spell: Callable[[dict[str, Any]], dict[str, Any]] = kilo
    # Refuse every write of the desired HPA (create, or patch of the whole spec) with this
    # status; the bounds alone and dry-runs pass.
    refuse: int | None = None
    # The uids of other SPAs that exist (the old owners of retargeted Schedules).
    live_owners: frozenset[str] = frozenset()
    # Refuse every change of a Schedule's ownerReferences with this status.
    refuse_owners: int | None = None
    # The SPA was deleted on the server while the caches still hold it (a watch behind).
    deleted: bool = False
    # Its namespace is being deleted or gone: every create is answered with this Status
    # (tests.builders.namespace_terminating() or namespace_gone()).
    namespace_deleted: dict[str, Any] | None = None
    # The HPA the caches hold was deleted on the server (a watch behind): a patch finds none.
    hpa_deleted: bool = False
    version: int = 100
    writes: list[str] = field(default_factory=list)
    # The scale target: its replicas. At 0 (its HPA turned off) the reconciler reads its Scale
    # after each raise of minReplicas and leaves it, so `scale_ups` lists the scale-ups asked
    # for and nothing else changes (tests/unit/controller/test_reconciler.py raises real targets).
    target_replicas: int = 0
    # The discovery document of the target's group/version, and how many writes of its Scale
    # meet a Conflict (somebody scaled in between), or are refused with this status.
    target_resources: list[dict[str, Any]] = field(default_factory=lambda: list(APPS_V1))
    scale_conflicts: int = 0
    scale_refuse: int | None = None
    # The target does not exist (its /scale answers 404).
    target_missing: bool = False
    # The target's status.readyReplicas (None: it reports none; by default, every window is
    # Ready at once), whether RBAC forbids reading
    # the target itself, and how many times it was read (docs/api.md, "status.windows").
    target_ready: int | None = 100
    target_forbidden: bool = False
    target_reads: int = 0
    # What the target object itself says besides: its spec.replicas (None: `target_replicas`),
    # status.replicas (None: left out) and the message of a True ReplicaFailure condition.
    target_spec_replicas: int | None = None
    target_created: int | None = None
    target_failure: str | None = None
    # The target's spec.selector (None: left out), its pods as the server lists them, each
    # label selector they were listed by, whether RBAC forbids listing them, and what the
    # start's access review answered of that (None: not asked).
    target_selector: dict[str, Any] | None = None
    pods: list[dict[str, Any]] = field(default_factory=list)
    pod_lists: list[str | None] = field(default_factory=list)
    pods_forbidden: bool = False
    pod_access: PodAccess | None = None
    # The HPA's status.desiredReplicas, as the HPA controller's last sync left it (None: no
    # status, the HPA controller has not synced it; a value other than `target_replicas`:
    # somebody scaled the target since).
    hpa_desired: int | None = None
    # The immediate scale-ups the reconciler performed (read the target's Scale for, or
    # patched it in one request), after a write that raised the HPA's minReplicas; the
    # replicas it wrote on the target; and every request to /scale ("get", "merge" patch,
    # "json" patch), in order.
    scale_ups: list[ScaleUp] = field(default_factory=list)
    scaled_to: list[int] = field(default_factory=list)
    scale_requests: list[str] = field(default_factory=list)
    recorded: Recorded = field(default_factory=Recorded)
    # Where the actuator counts its writes for the log (None: nowhere).
    summary: WriteSummary | None = None
    # The capacity actuator the reconciler holds node capacity with (None: not wired).
    capacity: CapacityActuator | None = None
    # The last reconcile forgot the key (its SPA is gone or going), its result and plans.
    forgotten: bool = False
    result: Result | None = None
    plans: list[Plan] = field(default_factory=list)
    # The Calendars and ClusterCalendars in the cluster (docs/schedules.md, "Shared calendars").
    calendars: list[dict[str, Any]] = field(default_factory=list)
    # The Calendar and ClusterCalendar kinds as the manager hands them to the reconciler (None:
    # both served, their caches holding `calendars`).
    calendar_kinds: tuple[KindCache, KindCache] | None = None
    # The SPA cache of the last Reconciler made (a test may put a new version of the SPA in).
    autoscaler_cache: Store | None = None
    # The fleets at each boundary the reconciler places the key in (None: not wired).
    fleet: FleetIndex | None = None

    # -- one reconcile ---------------------------------------------------------------------------

    def reconcile(
        self,
        instant: int,
        memory: Memory | None = None,
        *,
        decision: Callable[[Snapshot], Plan] = decide,
    ) -> tuple[Final, Memory, int]:
        """One reconcile of KEY at `instant` by a Reconciler that remembers `memory` (None:
        nothing, as after a restart): its final plan, the Memory it left, and how many
        decisions it took."""
        memories = {KEY: memory or Memory()}
        self.plans = []

        def watched(snapshot: Snapshot) -> Plan:
            plan = decision(snapshot)
            self.plans.append(plan)
            return plan

        reconciler = self.reconciler(instant, memories, watched)
        self.result = asyncio.run(reconciler.reconcile(KEY))
        last = self.plans[-1]
        final = last.action
        if isinstance(final, CreateHpa | PatchHpa) and final.then is not None:
            # The write changed the HPA and ended the reconcile as its step said.
            assert self.result == Result(back_of_queue=True)
            final = Final(final.then)
        if not isinstance(final, Final):
            raise AssertionError(f"no final plan in {len(self.plans)} decisions")
        self.forgotten = last.memory is None
        return final, memories.get(KEY, Memory()), len(self.plans)

    def reconciler(
        self,
        instant: int,
        memories: dict[str, Memory],
        decision: Callable[[Snapshot], Plan] = decide,
        *,
        terminating: TerminatingNamespaces | None = None,
    ) -> Reconciler:
        """A Reconciler of this server's objects, its caches as a caught-up watch fills them
        (`terminating`: the namespaces it knows to be being deleted; None: its own)."""
        # Compact, as the manager's: what the reconciler reads is decoded anew at each read.
        autoscalers, schedules, hpas = (Store(codec=compact_codec()) for _ in range(3))
        self.autoscaler_cache = autoscalers
        add_indexes(autoscalers=autoscalers, schedules=schedules)
        if self.autoscaler is not None:
            autoscalers.upsert(self.autoscaler)
        for index, uid in enumerate(sorted(self.live_owners)):
            other = {"metadata": {"name": f"owner-{index}", "namespace": "shop", "uid": uid}}
            autoscalers.upsert(other)
        for obj in self.schedules:
            schedules.upsert(obj)
        if self.hpa is not None and MANAGED_BY_LABEL in (self.hpa["metadata"].get("labels") or {}):
            hpas.upsert(copy.deepcopy(self.hpa))  # the label-filtered cache holds only ours
        actuator = Actuator(
            kube=self,
            autoscalers=autoscalers,
            schedules=schedules,
            hpas=hpas,
            hpa_resource=HPA_V2,
            recorder=self.recorded,
            summary=self.summary,
            capacity=self.capacity,
            pod_access=self.pod_access,
        )
        calendars, cluster_calendars = Store(), Store()
        for obj in self.calendars:
            (calendars if obj["metadata"].get("namespace") else cluster_calendars).upsert(obj)
        kinds = self.calendar_kinds or (Complete(calendars), Complete(cluster_calendars))
        return Reconciler(
            actuator=actuator,
            autoscalers=autoscalers,
            schedules=schedules,
            hpas=hpas,
            clock=FakeClock(instant),
            memory=memories,
            decide=decision,
            calendars=kinds[0],
            cluster_calendars=kinds[1],
            fleet=self.fleet,
            terminating=terminating,
        )

    # -- the requests the actuator sends --------------------------------------------------------

    async def get(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        subresource: str | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        if subresource == "scale":
            assert self.hpa is not None
            self.scale_requests.append("get")
            if self.target_missing:
                raise NotFound(404, "NotFound", f"deployments.apps {name!r} not found")
            minimum = self.hpa["spec"]["minReplicas"]
            self.scale_ups.append(ScaleUp(resource.api_version, resource.kind, name, minimum))
            return {
                "metadata": {"name": name, "resourceVersion": str(self.version)},
                "spec": {"replicas": self.target_replicas},
            }
        if resource.plural == "deployments":
            self.target_reads += 1
            if self.target_forbidden:
                raise _status_error(403, 'deployments.apps "web" is forbidden')
            if self.target_missing:
                raise NotFound(404, "NotFound", f"deployments.apps {name!r} not found")
            status: dict[str, Any] = (
                {} if self.target_ready is None else {"readyReplicas": self.target_ready}
            )
            if self.target_created is not None:
                status["replicas"] = self.target_created
            if self.target_failure is not None:
                status["conditions"] = [
                    {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
                    {
                        "type": "ReplicaFailure",
                        "status": "True",
                        "reason": "FailedCreate",
                        "message": self.target_failure,
                    },
                ]
            replicas = self.target_replicas
            if self.target_spec_replicas is not None:
                replicas = self.target_spec_replicas
            spec: dict[str, Any] = {"replicas": replicas}
            if self.target_selector is not None:
                spec["selector"] = self.target_selector
            return {"metadata": {"name": name}, "spec": spec, "status": status}
        if resource == HPA_V2 and self.hpa is not None:
            return copy.deepcopy(self.hpa)
        if resource == SCHEDULES:
            found = [obj for obj in self.schedules if obj["metadata"]["name"] == name]
            if found:
                return found[0]
        raise NotFound(404, "NotFound", f"{name} not found")

    async def list(
        self, resource: Resource, *, label_selector: str | None = None, **options: Any
    ) -> ListResult:
        if resource == POD:
            self.pod_lists.append(label_selector)
            if self.pods_forbidden:
                raise _status_error(403, 'pods is forbidden: cannot list resource "pods"')
            transform = options.get("transform") or (lambda item: item)
            items = [transform(copy.deepcopy(pod)) for pod in self.pods]
            return ListResult(items=items, resource_version=str(self.version))
        assert resource == SCHEDULED_POD_AUTOSCALERS
        items = [self.autoscaler] if self.autoscaler is not None and not self.deleted else []
        return ListResult(items=items, resource_version=str(self.version))

    async def api_resources(self, group_version: str) -> Sequence[dict[str, Any]]:
        return self.target_resources

    async def create(
        self,
        resource: Resource,
        namespace: str | None,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        assert resource == HPA_V2
        if self.namespace_deleted is not None:
            code = int(self.namespace_deleted["code"])
            # As spa.kube's client raises it: the answer's bytes, about the resource asked.
            raise error_from_status(
                code, json.dumps(self.namespace_deleted).encode(), resource=resource.plural
            )
        if self.hpa is not None:
            raise Conflict(409, "AlreadyExists", "the name is taken")
        if self.refuse:
            raise _status_error(self.refuse, "spec is invalid")
        self.hpa = self._store_hpa(dict(body))
        self.writes.append("create")
        return copy.deepcopy(self.hpa)

    async def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        patch_type: PatchType,
        field_manager: str,
        subresource: str | None = None,
        dry_run: bool = False,
        **_: Any,
    ) -> dict[str, Any]:
        if subresource == "scale":
            if patch_type == "json":
                assert not isinstance(body, Mapping)
                return self._scale_json(resource, name, body)
            assert isinstance(body, Mapping)
            return self._scale(name, body)
        assert isinstance(body, Mapping)
        if subresource == "status":
            return self._status(resource, name, body)
        if resource == SCHEDULES:
            return self._owners(name, body)
        assert self.hpa is not None
        if self.hpa_deleted:
            missing = f'horizontalpodautoscalers.autoscaling "{name}" not found'
            raise NotFound(404, "NotFound", missing)
        if self.refuse and "metadata" in body and not dry_run:  # the whole desired spec
            raise _status_error(self.refuse, "spec is invalid")
        if dry_run:
            self.writes.append("dry-run")
            return {"spec": self.spell(merged(self.hpa, body)["spec"])}
        # A resourceVersion in the patch is a precondition (a compare-and-swap).
        expected = (body.get("metadata") or {}).get("resourceVersion")
        if expected is not None and expected != self.hpa["metadata"].get("resourceVersion"):
            raise Conflict(409, "Conflict", "the object has been modified")
        before = self.hpa["metadata"]["resourceVersion"]
        self.hpa = self._store_hpa(merged(self.hpa, body))
        self.writes.append("patch" if self.hpa["metadata"]["resourceVersion"] != before else "noop")
        return copy.deepcopy(self.hpa)

    # -- what the server does with a write ------------------------------------------------------

    def _store_hpa(self, obj: dict[str, Any]) -> dict[str, Any]:
        stored = copy.deepcopy(obj)
        stored["spec"] = self.spell(stored["spec"])
        if self.hpa_desired is not None:
            stored["status"] = {"desiredReplicas": self.hpa_desired}
        if stored != self.hpa:
            self.version += 1
            stored["metadata"]["resourceVersion"] = str(self.version)
        return stored

    def _owners(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        if self.refuse_owners:
            raise _status_error(self.refuse_owners, "Only one controller")
        target = next(obj for obj in self.schedules if obj["metadata"]["name"] == name)
        _update(target, merged(target, body))
        self.writes.append("owner")
        return target

    def _status(self, resource: Resource, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        if resource == SCHEDULED_POD_AUTOSCALERS:
            assert self.autoscaler is not None
            obj = self.autoscaler
        else:
            obj = next(obj for obj in self.schedules if obj["metadata"]["name"] == name)
        _update(obj, merged(obj, body))
        self.writes.append(f"status {obj['kind']}")
        return obj

    def _scale_json(
        self, resource: Resource, name: str, body: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """RFC 6902 on the Scale, as far as `test` and `replace` of /spec/replicas go: a failed
        test is a 422, as the API server answers it; nothing is applied then."""
        self.scale_requests.append("json")
        if self.target_missing:
            raise NotFound(404, "NotFound", f"deployments.apps {name!r} not found")
        assert self.hpa is not None
        self.scale_ups.append(
            ScaleUp(resource.api_version, resource.kind, name, self.hpa["spec"]["minReplicas"])
        )
        replicas = self.target_replicas
        for operation in body:
            assert operation["path"] == "/spec/replicas", operation
            if operation["op"] == "test":
                if operation["value"] != replicas:
                    raise _status_error(422, "testing value /spec/replicas failed: test failed")
            else:
                assert operation["op"] == "replace", operation
                replicas = int(operation["value"])
        if self.scale_refuse:
            raise _status_error(self.scale_refuse, "no scaling here")
        self.target_replicas = replicas
        self.scaled_to.append(replicas)
        return {"metadata": {"name": name}, "spec": {"replicas": replicas}}

    def _scale(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self.scale_requests.append("merge")
        if self.scale_conflicts:
            self.scale_conflicts -= 1
            raise Conflict(409, "Conflict", "the object has been modified")
        if self.scale_refuse:
            raise _status_error(self.scale_refuse, "no scaling here")
        self.target_replicas = int(body["spec"]["replicas"])
        self.scaled_to.append(self.target_replicas)
        return {"metadata": {"name": name}, "spec": {"replicas": self.target_replicas}}


def _status_error(code: int, message: str) -> Exception:
    return error_from_status(code, {"kind": "Status", "code": code, "message": message})


def _update(obj: dict[str, Any], new: dict[str, Any]) -> None:
    """Replace `obj`'s content in place (a test holds the object itself)."""
    obj.clear()
    obj.update(new)


def hpa_writes(server: Server) -> list[str]:
    return [w for w in server.writes if w in ("create", "patch", "noop")]
