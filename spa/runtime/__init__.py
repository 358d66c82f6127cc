"""Generic controller runtime (the Python counterpart of client-go / controller-runtime):
informers with indexed caches, a rate-limited delaying work queue, a worker runner, Lease
leader election, an Event recorder, an injectable clock, structured logging and the HTTP
endpoints (probes, metrics) served on the event loop.

It knows nothing about ScheduledPodAutoscalers: it talks to the API server only through
:mod:`spa.kube`, and ``spa.controller`` builds the SPA reconciler on top of it. Everything here
runs on one asyncio event loop, which owns all state, and so do the API calls (no thread
pool). See docs/runtime.md.
"""

from spa.runtime.access import AccessReview
from spa.runtime.backoff import Backoff
from spa.runtime.clock import Clock, FakeClock, SystemClock, TimerHandle
from spa.runtime.endpoints import Endpoint, Response, Server, serve
from spa.runtime.events import COMPONENT, EventRecorder, EventType, bounded_name
from spa.runtime.fence import NotLeader, WriteFence, may_write, unfenced, write_fenced
from spa.runtime.informer import EventHandler, Informer, Keep, OnAdd, OnDelete, OnUpdate
from spa.runtime.leaderelection import LeaderElector, default_identity
from spa.runtime.logging import (
    JsonFormatter,
    LogFormat,
    ObjectLogger,
    TextFormatter,
    configure_logging,
    object_logger,
)
from spa.runtime.metrics import exposition, instrument_client
from spa.runtime.predicates import UpdateFilter, changed_beyond_status
from spa.runtime.runner import Controller, Reconcile, Result
from spa.runtime.siblings import SiblingLeases
from spa.runtime.store import (
    Behind,
    Codec,
    DeflateCodec,
    IndexFunc,
    JsonCodec,
    Store,
    Transform,
    compare_resource_versions,
    drop_bookkeeping,
    object_key,
    split_key,
)
from spa.runtime.summary import WriteSummary
from spa.runtime.supervisor import Supervisor
from spa.runtime.terminating import TerminatingNamespaces
from spa.runtime.tls import server_context
from spa.runtime.urgent import UrgentWrites
from spa.runtime.workqueue import QueueShutDown, WorkQueue

__all__ = [
    "COMPONENT",
    "AccessReview",
    "Backoff",
    "Behind",
    "Clock",
    "Codec",
    "Controller",
    "DeflateCodec",
    "Endpoint",
    "EventHandler",
    "EventRecorder",
    "EventType",
    "FakeClock",
    "IndexFunc",
    "Informer",
    "JsonCodec",
    "JsonFormatter",
    "Keep",
    "LeaderElector",
    "LogFormat",
    "NotLeader",
    "ObjectLogger",
    "OnAdd",
    "OnDelete",
    "OnUpdate",
    "QueueShutDown",
    "Reconcile",
    "Response",
    "Result",
    "Server",
    "SiblingLeases",
    "Store",
    "Supervisor",
    "SystemClock",
    "TerminatingNamespaces",
    "TextFormatter",
    "TimerHandle",
    "Transform",
    "UpdateFilter",
    "UrgentWrites",
    "WorkQueue",
    "WriteFence",
    "WriteSummary",
    "bounded_name",
    "changed_beyond_status",
    "compare_resource_versions",
    "configure_logging",
    "default_identity",
    "drop_bookkeeping",
    "exposition",
    "instrument_client",
    "may_write",
    "object_key",
    "object_logger",
    "serve",
    "server_context",
    "split_key",
    "unfenced",
    "write_fenced",
]
