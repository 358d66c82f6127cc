"""What the controller may do for placeholder pods, asked of the API server once at the start.

Why: placeholder pods (docs/schedules.md, "Node capacity") need two grants that the default
install does not give together (docs/install.md, "Placeholder pods"): `get` on the scale
targets' Deployments, StatefulSets and ReplicaSets, to copy their pod templates (only when the
install enables placeholders: every pod template of the cluster, env values included), and the
writes of the placeholder Deployments in the controller's own namespace. The controller asks
with SelfSubjectAccessReviews (open to every authenticated identity) rather than finding out
from a refusal at a window's capacity lead: one log line and the gauge
`spa_capacity_placeholders_permitted` say at the start what it may do, and an SPA that would
need placeholders without the grants gets its CapacityReady condition False, naming the
missing permission, with no request that would be refused.

The placeholder option grants one more read, asked about the same way and said in its own log
line and gauge (`spa_pod_waits_permitted`): `list` on pods, by which the controller measures how
long a window's pods waited for nodes (docs/api.md, "status.windows", podsWaitedSeconds). Without
it that wait is not measured, and nothing else changes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from prometheus_client import Gauge

from spa.kube import SELF_SUBJECT_ACCESS_REVIEW, ApiError, ApiUnavailable, Client

__all__ = [
    "ENABLE",
    "PLACEHOLDERS_PERMITTED",
    "PLACEHOLDER_WRITES",
    "POD_WAITS_PERMITTED",
    "TEMPLATE_KINDS",
    "Permission",
    "PlaceholderAccess",
    "PodAccess",
    "allowed",
    "placeholder_access",
    "pod_access",
]

log = logging.getLogger(__name__)

# The kinds whose pod template a placeholder copies (spa/controller/capacity.py).
TEMPLATE_KINDS = ("deployments", "statefulsets", "replicasets")
# What the placeholder Deployments take, in the controller's namespace: the cache (list,
# watch), the read before each change (get), and the writes.
PLACEHOLDER_WRITES = ("get", "list", "watch", "create", "patch", "delete")
# Where to read how to grant them, said with what is missing.
ENABLE = (
    "enable placeholder pods: Helm value capacity.placeholders.enabled=true, or the kustomize "
    'component config/components/placeholders (docs/install.md, "Placeholder pods")'
)

PLACEHOLDERS_PERMITTED = Gauge(
    "spa_capacity_placeholders_permitted",
    "1 when the controller may read the scale targets' pod templates and write placeholder "
    "Deployments (asked at the start), 0 when it may not, absent when it could not ask.",
)
POD_WAITS_PERMITTED = Gauge(
    "spa_pod_waits_permitted",
    "1 when the controller may list pods (asked at the start), so that it measures how long "
    "a window's pods waited for nodes (status.windows[].podsWaitedSeconds), 0 when it may "
    "not, absent when it could not ask.",
)


@dataclass(frozen=True, slots=True, order=True)
class Permission:
    """One verb on one resource of `group` (`apps` unless said; "": the core group), in a
    namespace ("": all)."""

    verb: str
    resource: str
    namespace: str = ""
    group: str = "apps"

    def __str__(self) -> str:
        where = f"in namespace {self.namespace}" if self.namespace else "in all namespaces"
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        return f"{self.verb} {resource} {where}"


@dataclass(frozen=True, slots=True)
class PlaceholderAccess:
    """What a SelfSubjectAccessReview answered no to (nothing: placeholders may be used)."""

    missing: tuple[Permission, ...] = ()

    @property
    def permitted(self) -> bool:
        return not self.missing

    @property
    def may_cache(self) -> bool:
        """Whether the placeholder Deployments may be listed and watched (their cache)."""
        return not any(
            p.resource == "deployments" and p.verb in ("list", "watch") and p.namespace
            for p in self.missing
        )

    def may_get(self, resource: str, namespace: str) -> bool:
        """Whether a `get` of the apps/v1 `resource` in `namespace` was allowed (one asked
        about, TEMPLATE_KINDS; the answer for all namespaces counts for each). Window
        readiness goes by it so as to make no request that would be refused
        (docs/install.md, "Window readiness")."""
        return not any(
            p.verb == "get" and p.resource == resource and p.namespace in ("", namespace)
            for p in self.missing
        )

    @property
    def denied(self) -> str | None:
        """Why placeholder pods cannot be held, naming what is missing; None when they can."""
        if not self.missing:
            return None
        listed = ", ".join(str(permission) for permission in self.missing)
        return f"the controller is not allowed to {listed}: {ENABLE}"


async def allowed(client: Client, permission: Permission) -> bool:
    """Whether the controller's own identity may do `permission` (a SelfSubjectAccessReview)."""
    review = await client.create(
        SELF_SUBJECT_ACCESS_REVIEW,
        None,
        {
            "apiVersion": SELF_SUBJECT_ACCESS_REVIEW.api_version,
            "kind": SELF_SUBJECT_ACCESS_REVIEW.kind,
            "spec": {
                "resourceAttributes": {
                    "group": permission.group,
                    "resource": permission.resource,
                    "verb": permission.verb,
                    "namespace": permission.namespace,
                }
            },
        },
    )
    return bool((review.get("status") or {}).get("allowed"))


async def placeholder_access(
    client: Client, *, namespaces: Sequence[str] | None, placeholder_namespace: str
) -> PlaceholderAccess | None:
    """Whether the controller may read the templates of the scale targets (in each watched
    namespace; None: all) and write the placeholder Deployments in `placeholder_namespace`,
    said in one log line and the gauge. None when the API server could not be asked (logged,
    gauge absent): the capacity writer then tries, and a refusal says what it lacks."""
    wanted = [
        Permission("get", kind, namespace)
        for namespace in (namespaces or [""])
        for kind in TEMPLATE_KINDS
    ] + [Permission(verb, "deployments", placeholder_namespace) for verb in PLACEHOLDER_WRITES]
    try:
        missing = tuple(sorted([p for p in wanted if not await allowed(client, p)]))
    except (ApiError, ApiUnavailable) as error:
        log.warning("could not ask what placeholder pods may do (tried at need): %s", error)
        return None
    access = PlaceholderAccess(missing)
    PLACEHOLDERS_PERMITTED.set(1 if access.permitted else 0)
    if access.permitted:
        log.info(
            "placeholder pods permitted: pod templates readable, placeholder Deployments in "
            "namespace %s",
            placeholder_namespace,
        )
    else:
        log.info("placeholder pods not permitted (CapacityBuffers only): %s", access.denied)
    return access


@dataclass(frozen=True, slots=True)
class PodAccess:
    """Whether the controller may list pods: what a SelfSubjectAccessReview answered no to
    (nothing: everywhere it watches)."""

    missing: tuple[Permission, ...] = ()

    def may_list(self, namespace: str) -> bool:
        """Whether pods may be listed in `namespace` (the answer for all namespaces counts
        for each). The pods' wait for nodes goes by it so as to make no request that would
        be refused (docs/install.md, "Window readiness")."""
        return not any(p.namespace in ("", namespace) for p in self.missing)


async def pod_access(client: Client, *, namespaces: Sequence[str] | None) -> PodAccess | None:
    """Whether the controller may list pods in each watched namespace (None: all), which the
    placeholder option grants for the pods' wait for nodes (docs/api.md, "status.windows",
    podsWaitedSeconds), said in one log line and the gauge. None when the API server could not
    be asked (logged, gauge absent): the list is then tried, and a refusal leaves the wait
    unmeasured."""
    wanted = [Permission("list", "pods", namespace, group="") for namespace in namespaces or [""]]
    try:
        missing = tuple(sorted([p for p in wanted if not await allowed(client, p)]))
    except (ApiError, ApiUnavailable) as error:
        log.warning("could not ask whether pods may be listed (tried at need): %s", error)
        return None
    access = PodAccess(missing)
    POD_WAITS_PERMITTED.set(0 if missing else 1)
    if missing:
        listed = ", ".join(str(permission) for permission in missing)
        log.info(
            "pods' wait for nodes not measured (status.windows[].podsWaitedSeconds): the "
            "controller is not allowed to %s: %s",
            listed,
            ENABLE,
        )
    else:
        log.info(
            "pods' wait for nodes measured (status.windows[].podsWaitedSeconds): the "
            "controller may list pods"
        )
    return access
