"""The only package that imports ``kubernetes``: a thin asyncio API client that speaks raw JSON
dicts (see :class:`KubeClient`; :class:`BlockingKubeClient` is its blocking face for
``kubectl spa``'s reads, the tests and the benchmarks), the one interface the rest types its
client as (:class:`Client`, spa/kube/protocol.py), the resource coordinates the controller
uses, which HPA version the server speaks (:func:`discover_hpa`), and the errors it raises.
Everything above it (``spa.runtime``, ``spa.controller``, ``spa.cli``) goes through here,
which keeps the generated client's types and exceptions out of the rest.
"""

# First, for its effect: the config loader without the generated client (its docstring).
import spa.kube._kubernetes  # noqa: F401
from spa.kube.blocking import BlockingKubeClient, BlockingWatchStream, connect_blocking
from spa.kube.client import (
    Credentials,
    ItemTransform,
    KubeClient,
    ListResult,
    PatchType,
    RequestHook,
    RequestRecord,
    WatchEvent,
    WatchEventType,
    WatchStream,
    deadline,
)
from spa.kube.config import ConfigError, connect, context_names, default_namespace
from spa.kube.discovery import discover_hpa
from spa.kube.errors import (
    ApiError,
    ApiUnavailable,
    Conflict,
    DeadlinePassed,
    Forbidden,
    Gone,
    KubeError,
    NamespaceDeleted,
    NamespaceGone,
    NamespaceTerminating,
    NotFound,
    TooManyRequests,
    error_from_status,
)
from spa.kube.protocol import Client, Discovery, EventStream
from spa.kube.ratelimit import TokenBucket
from spa.kube.resources import (
    CONFIGMAP,
    EVENT,
    HPA_V2,
    HPA_V2BETA2,
    LEASE,
    POD,
    SELF_SUBJECT_ACCESS_REVIEW,
    SUBJECT_ACCESS_REVIEW,
    TOKEN_REVIEW,
    Namespace,
    Resource,
)

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
    "ApiError",
    "ApiUnavailable",
    "BlockingKubeClient",
    "BlockingWatchStream",
    "Client",
    "ConfigError",
    "Conflict",
    "Credentials",
    "DeadlinePassed",
    "Discovery",
    "EventStream",
    "Forbidden",
    "Gone",
    "ItemTransform",
    "KubeClient",
    "KubeError",
    "ListResult",
    "Namespace",
    "NamespaceDeleted",
    "NamespaceGone",
    "NamespaceTerminating",
    "NotFound",
    "PatchType",
    "RequestHook",
    "RequestRecord",
    "Resource",
    "TokenBucket",
    "TooManyRequests",
    "WatchEvent",
    "WatchEventType",
    "WatchStream",
    "connect",
    "connect_blocking",
    "context_names",
    "deadline",
    "default_namespace",
    "discover_hpa",
    "error_from_status",
]
