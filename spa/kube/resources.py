"""Coordinates of the API resources the controller touches, and how to build their URLs.

Every request in :mod:`spa.kube` is built from a :class:`Resource` so that one path-based
implementation serves built-in kinds and custom resources alike (no typed client per kind).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

__all__ = [
    "CONFIGMAP",
    "EVENT",
    "HPA_V2",
    "HPA_V2BETA2",
    "LEASE",
    "SUBJECT_ACCESS_REVIEW",
    "TOKEN_REVIEW",
    "Resource",
]


# What quote() leaves as it is: names and namespaces (DNS labels and subdomains) always match,
# so they skip quote() on the path of every request.
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]*").fullmatch


def _segment(value: str) -> str:
    # Names are DNS labels in practice, but quoting keeps a bad name from changing the path.
    return value if _UNRESERVED(value) else quote(value, safe="")


@dataclass(frozen=True, slots=True)
class Resource:
    """One REST resource: ``group`` is ``""`` for the core API (served under ``/api``)."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

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
CONFIGMAP = Resource("", "v1", "configmaps", "ConfigMap", True)
# Delegated authentication and authorization, as kube-rbac-proxy and controller-runtime's
# secure metrics do it: the API server judges a bearer token and a user's access.
TOKEN_REVIEW = Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False)
SUBJECT_ACCESS_REVIEW = Resource(
    "authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False
)
