"""Coordinates of the API resources the controller touches, and how to build their URLs.

Every request in :mod:`spa.kube` is built from a :class:`Resource` so that one path-based
implementation serves built-in kinds and custom resources alike (no typed client per kind).

Why a resource's scope is in its type: a request about one object of a namespaced resource
needs a namespace and one of a cluster-scoped resource must not have one, and the client's
signatures say so (spa/kube/protocol.py), so that mypy finds a scope mixed up before the API
server does. ``Resource[str]`` is namespaced, ``Resource[None]`` cluster-scoped; which one a
constant is follows from the ``namespaced`` literal it is built with. A bare ``Resource`` is
either (code that serves any resource, or one found by discovery): the path builders below
check its scope at run time, as they always have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, Literal, overload
from urllib.parse import quote

# typing's TypeVar takes a default from Python 3.13 on.
from typing_extensions import TypeVar

__all__ = [
    "CONFIGMAP",
    "EVENT",
    "HPA_V2",
    "HPA_V2BETA2",
    "LEASE",
    "POD",
    "SELF_SUBJECT_ACCESS_REVIEW",
    "SUBJECT_ACCESS_REVIEW",
    "TOKEN_REVIEW",
    "Namespace",
    "Resource",
]

Namespace = TypeVar("Namespace", bound=str | None, default=Any)
"""What a request about one object of a resource takes as its namespace: ``str`` for a
namespaced resource, ``None`` for a cluster-scoped one; Any where only the server knows."""


# What quote() leaves as it is: names and namespaces (DNS labels and subdomains) always match,
# so they skip quote() on the path of every request.
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]*").fullmatch


def _segment(value: str) -> str:
    # Names are DNS labels in practice, but quoting keeps a bad name from changing the path.
    return value if _UNRESERVED(value) else quote(value, safe="")


@dataclass(frozen=True, slots=True, init=False)
class Resource(Generic[Namespace]):
    """One REST resource: ``group`` is ``""`` for the core API (served under ``/api``)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @overload
    def __init__(
        self: Resource[str],
        group: str,
        version: str,
        plural: str,
        kind: str,
        namespaced: Literal[True],
    ) -> None: ...

    @overload
    def __init__(
        self: Resource[None],
        group: str,
        version: str,
        plural: str,
        kind: str,
        namespaced: Literal[False],
    ) -> None: ...

    @overload
    def __init__(
        self: Resource[str | None],
        group: str,
        version: str,
        plural: str,
        kind: str,
        namespaced: bool,
    ) -> None: ...

    def __init__(self, group: str, version: str, plural: str, kind: str, namespaced: bool) -> None:
        # Frozen: the fields are set as dataclasses' own __init__ sets them.
        for field, value in (
            ("group", group),
            ("version", version),
            ("plural", plural),
            ("kind", kind),
            ("namespaced", namespaced),
        ):
            object.__setattr__(self, field, value)

    @property
    def group_version(self) -> str:
        """``apps/v1`` style, or just ``v1`` for the core group (as in ``apiVersion``)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` field objects of this resource carry."""
        return self.group_version

    def base_path(self) -> str:
        """``/api/v1`` or ``/apis/<group>/<version>``."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def collection_path(self, namespace: str | None = None) -> str:
        """Path of the collection, across all namespaces when ``namespace`` is ``None``."""
        if self.namespaced and namespace is not None:
            return f"{self.base_path()}/namespaces/{_segment(namespace)}/{self.plural}"
        if not self.namespaced and namespace is not None:
            raise ValueError(f"{self.plural} is cluster-scoped; got namespace {namespace!r}")
        return f"{self.base_path()}/{self.plural}"

    def object_path(
        self, namespace: str | None, name: str, *, subresource: str | None = None
    ) -> str:
        """Path of one object (and optionally one of its subresources, e.g. ``status``)."""
        if self.namespaced and not namespace:
            raise ValueError(f"{self.plural} is namespaced; a namespace is required")
        path = f"{self.collection_path(namespace if self.namespaced else None)}/{_segment(name)}"
        return f"{path}/{_segment(subresource)}" if subresource else path

    def __str__(self) -> str:
        return f"{self.plural}.{self.group_version}" if self.group else f"{self.plural}.v1"


HPA_V2 = Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True)
# Clusters older than 1.23 only serve this version (docs/install.md).
HPA_V2BETA2 = Resource(
    "autoscaling", "v2beta2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True
)
LEASE = Resource("coordination.k8s.io", "v1", "leases", "Lease", True)
EVENT = Resource("", "v1", "events", "Event", True)
POD = Resource("", "v1", "pods", "Pod", True)
CONFIGMAP = Resource("", "v1", "configmaps", "ConfigMap", True)
# Delegated authentication and authorization, as kube-rbac-proxy and controller-runtime's
# secure metrics do it: the API server judges a bearer token and a user's access.
TOKEN_REVIEW = Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False)
SUBJECT_ACCESS_REVIEW = Resource(
    "authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False
)
# What the controller's own identity may do, asked of the API server (every authenticated
# identity may create one: the built-in role system:basic-user grants it).
SELF_SUBJECT_ACCESS_REVIEW = Resource(
    "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False
)
