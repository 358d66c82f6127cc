"""The Kubernetes API client the controller uses: asyncio, raw JSON dicts in and out.

Built on a bare ``aiohttp`` session with the TLS and credentials that the ``kubernetes``
package's own asyncio config loader (``kubernetes.aio.config``) found; see
:mod:`spa.kube.config`. Why not that package's generated ``ApiClient`` (sync or asyncio): its
per-request serialisation and model machinery costs more CPU than the request itself
(``bench/client.py``; docs/architecture.md, "The client"), and each resource would need its own
typed code path. Every call here goes through one path-based request function, so lists,
watches and writes behave the same for SPAs, Schedules, HPAs, Leases and Events.

Every call runs on the event loop (no thread pool) and is cancellable: cancelling the task
that awaits a call closes its connection, so no request outlives its caller.

A caller can also put its calls under a deadline (:func:`deadline`): the leader's writes must
not land after its renew deadline (docs/runtime.md, "Leader election"). Cancelling on our side
is not enough for that, since a request already sent may still be applied, so the remaining
time also goes to the API server as the request's `timeout` parameter, as client-go sends it:
the server abandons the request, its storage write included, when that time is up.
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Any, Literal, Protocol, cast
from urllib.parse import urlencode

import aiohttp
import orjson
from multidict import CIMultiDict
from yarl import URL

from spa.kube.errors import ApiError, ApiUnavailable, DeadlinePassed, Gone, error_from_status
from spa.kube.ratelimit import TokenBucket
from spa.kube.resources import Namespace, Resource

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "Credentials",
    "ItemTransform",
    "KubeClient",
    "ListResult",
    "PatchType",
    "RequestHook",
    "RequestRecord",
    "WatchEvent",
    "WatchEventType",
    "WatchStream",
    "deadline",
]

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT = 30.0
# Page size of list calls: big enough for few round trips, small enough to keep the API
# server's memory per request bounded (client-go's pager uses 500 too).
DEFAULT_PAGE_LIMIT = 500
# Watches each hold a pooled connection for minutes, so the pool must be larger than the
# number of watches plus the concurrent workers.
DEFAULT_POOL_SIZE = 32
# TCP keepalive with client-go's timings (see docs/runtime.md, Informer): a peer that vanished
# without FIN or RST is noticed within 30 s + 9 x 15 s instead of at the read timeout.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 30, 15, 9

PatchType = Literal["merge", "json", "strategic", "apply"]
_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]
_WATCH_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"})

# The time.monotonic() instant after which no request of the current task may reach the API
# server (see deadline()); a context variable, so it follows the task and its awaits only.
_DEADLINE: ContextVar[float | None] = ContextVar("spa_kube_deadline", default=None)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within this block, requests of the current task are sent only if fewer than `seconds`
    (from now) have passed, wait for their answer only until then, and tell the API server to
    give up at that time too (the `timeout` parameter). Nested deadlines: the earliest wins.
    A request whose deadline passed before it was sent raises :class:`DeadlinePassed`."""
    at = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(at if outer is None else min(at, outer))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _within_deadline(
    method: str,
    path: str,
    query: Mapping[str, str | int] | None,
    timeouts: aiohttp.ClientTimeout,
) -> tuple[Mapping[str, str | int] | None, aiohttp.ClientTimeout]:
    """The query and timeouts of a request about to be sent, bounded by the current deadline."""
    at = _DEADLINE.get()
    if at is None:
        return query, timeouts
    left = at - time.monotonic()
    if left <= 0:
        raise DeadlinePassed(f"{method} {path}: not sent, its deadline passed")
    total = left if timeouts.total is None else min(timeouts.total, left)
    # Whole milliseconds, rounded down: Go's time.ParseDuration reads "2.345s".
    query = {**(query or {}), "timeout": f"{int(left * 1000) / 1000:.3f}s"}
    return query, aiohttp.ClientTimeout(total=total)


def _json_default(value: object) -> object:
    """What orjson cannot encode by itself: mappings that are not dicts (a body may be any
    Mapping); anything else is a caller's bug."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _encode(body: object) -> bytes:
    """A request body as compact JSON (orjson: docs/performance.md, "2026-11-25: the request
    path (issue 24)")."""
    return orjson.dumps(body, default=_json_default)


@lru_cache(maxsize=256)
def _query_string(items: tuple[tuple[str, str | int], ...]) -> str:
    """A query, encoded; most requests repeat a few (e.g. `fieldManager=...` of every write),
    so each is quoted once."""
    return urlencode(items)


# Errors of the HTTP stack that mean "the server could not be talked to". Anything else
# escaping the request function is a bug and is allowed to propagate as is.
_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (aiohttp.ClientError, OSError, TimeoutError)


class Credentials(Protocol):
    """Where the client gets the headers that authenticate a request (a bearer token that
    may be refreshed: in-cluster tokens are re-read, exec plugins re-run when they expire).

    :meth:`headers` returns a new mapping when the headers change, never the same one changed:
    the client builds each request's headers once per mapping it is given."""

    async def headers(self) -> Mapping[str, str]: ...


@dataclass(frozen=True, slots=True)
class ListResult:
    """Items of a (fully paginated) list and the list's resourceVersion to watch from."""

    items: list[dict[str, Any]]
    resource_version: str


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One line of a watch stream; ``object`` is the object (or a Status for ERROR)."""

    type: WatchEventType
    object: dict[str, Any]

    @property
    def resource_version(self) -> str | None:
        """The ``metadata.resourceVersion`` carried by the event, if any."""
        rv = self.object.get("metadata", {}).get("resourceVersion")
        return str(rv) if rv else None


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """What a request hook learns about each finished request (for metrics).

    ``code`` is the HTTP status, or 0 when the server could not be reached. For a watch it is
    the status of the response head; the stream's duration is not included.
    """

    verb: str  # list, watch, get, create, patch, update, delete, discovery
    resource: str  # plural, e.g. "horizontalpodautoscalers"; "" for discovery
    code: int
    duration: float


RequestHook = Callable[[RequestRecord], None]

ItemTransform = Callable[[dict[str, Any]], dict[str, Any]]
"""What :meth:`KubeClient.list` keeps of each item, applied as its page arrives (so a long list
never holds every item whole at once)."""


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _keepalive_socket(addr_info: Any) -> socket.socket:
    family, type_, proto, _, _ = addr_info
    sock = socket.socket(family=family, type=type_, proto=proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    if hasattr(socket, "TCP_KEEPIDLE"):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, KEEPALIVE_IDLE)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, KEEPALIVE_INTERVAL)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, KEEPALIVE_COUNT)
    return sock


def _abort(response: aiohttp.ClientResponse) -> None:
    """Drop a response's connection at once: the rest is never read, so it cannot go back to
    the pool. Aborted rather than closed, because a TLS close waits for the server's reply
    (up to 30 s), and a connection still closing when its loop ends is leaked. It also wakes
    a read pending in another task."""
    connection = response.connection
    if connection is not None and connection.transport is not None:
        connection.transport.abort()
    response.close()


class WatchStream(AsyncIterator[WatchEvent]):
    """Async iterator over the events of one watch request (``async for event in stream``).

    Iteration ends when the server closes the stream (its ``timeoutSeconds`` ran out) or
    after :meth:`close`, which also ends a pending read at once: that is how informers stop
    without waiting for the read timeout.
    """

    def __init__(self, response: aiohttp.ClientResponse, resource: Resource) -> None:
        self._response = response
        self._resource = resource
        self._lines: deque[bytes] = deque()
        self._pending = b""
        self._closed = False
        self._ended = False

    async def _next_line(self) -> bytes:
        while not self._lines:
            if self._closed or self._ended:
                raise StopAsyncIteration
            try:
                chunk = await self._response.content.readany()
            except _TRANSPORT_ERRORS as err:
                was_closed = self._closed
                self.close()
                if was_closed:
                    raise StopAsyncIteration from None
                raise ApiUnavailable(f"watch of {self._resource} broke: {err!r}") from err
            if not chunk:
                # End of the stream: a last line without its newline still counts.
                self._ended = True
                if self._pending.strip():
                    self._lines.append(self._pending)
                self._pending = b""
                self.close()
                continue
            # A chunk may hold several events, or end in the middle of one.
            *complete, self._pending = (self._pending + chunk).split(b"\n")
            self._lines.extend(line for line in complete if line.strip())
        return self._lines.popleft()

    async def __anext__(self) -> WatchEvent:
        line = await self._next_line()
        try:
            decoded = orjson.loads(line)
            event_type = decoded["type"]
            obj = decoded["object"]
        except (ValueError, KeyError, TypeError) as err:
            self.close()
            raise ApiUnavailable(f"watch of {self._resource} sent a malformed line") from err
        if event_type not in _WATCH_EVENT_TYPES or not isinstance(obj, dict):
            self.close()
            raise ApiUnavailable(f"watch of {self._resource} sent unknown type {event_type!r}")
        if event_type == "ERROR":
            error = error_from_status(500, obj)
            if isinstance(error, Gone):
                # 410 is raised, not yielded: the only fix is to relist, and a caller that
                # forgot to check the event type must not carry on from a stale version.
                self.close()
                raise error
        return WatchEvent(cast(WatchEventType, event_type), obj)

    def close(self) -> None:
        """Stop the stream and drop its connection; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        self._lines.clear()
        _abort(self._response)

    async def __aenter__(self) -> WatchStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()


class KubeClient:
    """Asyncio access to the API server with raw JSON dicts.

    Build one with :func:`spa.kube.connect`, inside the event loop that will use it (the
    connection pool belongs to that loop). Every method raises :class:`~spa.kube.ApiError` (or
    a subclass) for error statuses and :class:`~spa.kube.ApiUnavailable` for transport
    failures.
    """

    def __init__(
        self,
        host: str,
        *,
        credentials: Credentials,
        ssl_context: ssl.SSLContext,
        tls_server_name: str | None = None,
        proxy: str | None = None,
        user_agent: str | None = None,
        rate_limiter: TokenBucket | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        page_limit: int = DEFAULT_PAGE_LIMIT,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self._host = host.rstrip("/")
        self._credentials = credentials
        self._rate_limiter = rate_limiter
        self._request_timeout = request_timeout
        self._page_limit = page_limit
        self._hooks: list[RequestHook] = []
        self._discovery_cache: dict[str, bool] = {}
        self._closed = False
        # Built once, not per request (docs/performance.md, "2026-11-25: the request path"):
        # the headers of each content type for the credentials' current headers, and the
        # timeouts of each duration.
        self._auth_headers: Mapping[str, str] | None = None
        self._headers: dict[str | None, CIMultiDict[str]] = {}
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._request_options: dict[str, Any] = {}
        if tls_server_name:
            self._request_options["server_hostname"] = tls_server_name
        if proxy:
            self._request_options["proxy"] = proxy
        self._base_headers = {"Accept": "application/json"}
        if user_agent:
            self._base_headers["User-Agent"] = user_agent
        self.connector = aiohttp.TCPConnector(
            limit=pool_size, ssl=ssl_context, socket_factory=_keepalive_socket
        )
        self._session = aiohttp.ClientSession(
            connector=self.connector,
            # Nothing here needs cookies (the API server sets none, client-go keeps no jar),
            # and a jar is searched at every request.
            cookie_jar=aiohttp.DummyCookieJar(),
            # Watch lines hold whole objects; aiohttp's default 64 KiB buffer is small.
            read_bufsize=2**20,
            # The proxy comes from the kubeconfig (proxy-url), like client-go, not from
            # $HTTPS_PROXY.
            trust_env=False,
        )

    @property
    def host(self) -> str:
        """Base URL of the API server."""
        return self._host

    def add_request_hook(self, hook: RequestHook) -> None:
        """Call ``hook`` after every request (on the loop; keep it cheap)."""
        self._hooks.append(hook)

    async def close(self) -> None:
        """Close pooled connections; every later request fails with ApiUnavailable."""
        self._closed = True
        await self._session.close()

    # -- reads --------------------------------------------------------------------------------

    async def get(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        *,
        subresource: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """GET one object (or one of its subresources, e.g. ``scale``)."""
        return await self._json(
            "get",
            resource,
            "GET",
            resource.object_path(namespace, name, subresource=subresource),
            request_timeout=request_timeout,
        )

    async def list(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        request_timeout: float | None = None,
        transform: ItemTransform | None = None,
    ) -> ListResult:
        """List all objects (following ``continue`` pages) and the list's resourceVersion.

        Items get ``apiVersion``/``kind`` filled in (list items lack them on the wire), so they
        look exactly like objects from get and watch; then ``transform``, if given, turns each
        into what the caller keeps, page by page.
        """
        try:
            return await self._list_pages(
                resource,
                namespace,
                label_selector,
                field_selector,
                limit=self._page_limit,
                request_timeout=request_timeout,
                transform=transform,
            )
        except Gone:
            # The continue token expired between pages (the list took longer than etcd's
            # compaction interval). A consistent snapshot then needs one unpaginated list.
            log.info("continue token expired while listing %s; listing unpaginated", resource)
            return await self._list_pages(
                resource,
                namespace,
                label_selector,
                field_selector,
                limit=0,
                request_timeout=request_timeout,
                transform=transform,
            )

    async def first_page(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        limit: int = 1,
        request_timeout: float | None = None,
    ) -> ListResult:
        """At most `limit` items of a list, without following `continue`: the cheapest request
        that is allowed exactly when a list is (startup checks ask it, see
        docs/operations.md, "Exit codes")."""
        page = await self._json(
            "list",
            resource,
            "GET",
            resource.collection_path(namespace),
            query={"limit": limit},
            request_timeout=request_timeout,
        )
        items = [
            {"apiVersion": resource.api_version, "kind": resource.kind, **item}
            for item in page.get("items") or []
        ]
        metadata = page.get("metadata") or {}
        return ListResult(items, str(metadata.get("resourceVersion") or ""))

    async def _list_pages(
        self,
        resource: Resource,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        *,
        limit: int,
        request_timeout: float | None,
        transform: ItemTransform | None,
    ) -> ListResult:
        items: list[dict[str, Any]] = []
        continue_token: str | None = None
        while True:
            query: dict[str, str | int] = {}
            if limit:
                query["limit"] = limit
            if continue_token:
                query["continue"] = continue_token
            if label_selector:
                query["labelSelector"] = label_selector
            if field_selector:
                query["fieldSelector"] = field_selector
            page = await self._json(
                "list",
                resource,
                "GET",
                resource.collection_path(namespace),
                query=query,
                request_timeout=request_timeout,
            )
            for item in page.get("items") or []:
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item if transform is None else transform(item))
            page.pop("items", None)  # the raw items go now, not when the next page is in
            metadata = page.get("metadata") or {}
            continue_token = metadata.get("continue")
            if not continue_token:
                return ListResult(items, str(metadata.get("resourceVersion") or ""))

    async def watch(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        label_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int = 300,
        allow_bookmarks: bool = True,
        read_timeout: float | None = None,
    ) -> WatchStream:
        """Start a watch and return its event stream (use it as an async context manager).

        ``timeout_seconds`` is the server-side duration of the watch; ``read_timeout`` bounds
        the wait for any byte (so a silently dead connection is noticed). It defaults to the
        server timeout plus a margin, since bookmarks are not guaranteed to arrive more often.
        Raises :class:`Gone` if ``resource_version`` is already compacted away.
        """
        query: dict[str, str | int] = {"watch": 1, "timeoutSeconds": timeout_seconds}
        if resource_version:
            query["resourceVersion"] = resource_version
        if allow_bookmarks:
            query["allowWatchBookmarks"] = "true"
        if label_selector:
            query["labelSelector"] = label_selector
        if read_timeout is None:
            read_timeout = timeout_seconds + 30.0
        timeouts = aiohttp.ClientTimeout(
            total=None, connect=min(self._request_timeout, 10.0), sock_read=read_timeout
        )
        response = await self._send(
            "watch",
            resource,
            "GET",
            resource.collection_path(namespace),
            query=query,
            timeouts=timeouts,
        )
        return WatchStream(response, resource)

    async def serves(self, group_version: str) -> bool:
        """Whether the server serves ``group/version`` (``v1`` for core); cached per client."""
        known = self._discovery_cache.get(group_version)
        if known is not None:
            return known
        path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        try:
            await self._json("discovery", None, "GET", path)
            served = True
        except ApiError as err:
            if err.status != 404:
                raise
            served = False
        self._discovery_cache[group_version] = served
        return served

    async def api_resources(self, group_version: str) -> Sequence[dict[str, Any]]:
        """The resources the server serves in ``group/version`` (``v1`` for core), as its
        discovery document lists them (``name`` is the plural, ``deployments/scale`` a
        subresource); empty when it serves no such group/version. Not cached: the caller
        knows how long an answer may be kept (custom resources come and go)."""
        path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        try:
            document = await self._json("discovery", None, "GET", path)
        except ApiError as err:
            if err.status != 404:
                raise
            return []
        return [item for item in document.get("resources") or () if isinstance(item, dict)]

    async def preferred_version(self, group: str) -> str | None:
        """The version of the API group ``group`` the server prefers (``GET /apis/<group>``),
        or None when it serves no such group. Not cached, as ``api_resources``."""
        try:
            document = await self._json("discovery", None, "GET", f"/apis/{group}")
        except ApiError as err:
            if err.status != 404:
                raise
            return None
        preferred = document.get("preferredVersion") or {}
        version = preferred.get("version") if isinstance(preferred, dict) else None
        return str(version) if version else None

    async def readyz(self, *, request_timeout: float | None = None) -> None:
        """Return if ``GET /readyz`` answers 200 (the server is up and can reach etcd); raise
        :class:`~spa.kube.ApiUnavailable` or :class:`~spa.kube.ApiError` otherwise. Every
        authenticated identity may read it (the ``system:public-info-viewer`` ClusterRole)."""
        await self._body("readyz", None, "GET", "/readyz", request_timeout=request_timeout)

    # -- writes -------------------------------------------------------------------------------

    async def create(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """POST a new object; :class:`Conflict` if it already exists."""
        query = {"fieldManager": field_manager} if field_manager else {}
        path = resource.collection_path(namespace if resource.namespaced else None)
        return await self._json(
            "create",
            resource,
            "POST",
            path,
            query=query,
            body=body,
            request_timeout=request_timeout,
        )

    async def update(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        body: Mapping[str, Any],
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """PUT the whole object; with ``metadata.resourceVersion`` set this is a compare-and-
        swap that raises :class:`Conflict` if someone else wrote in between."""
        query = {"fieldManager": field_manager} if field_manager else {}
        path = resource.object_path(namespace, name, subresource=subresource)
        return await self._json(
            "update", resource, "PUT", path, query=query, body=body, request_timeout=request_timeout
        )

    async def patch(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        body: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        patch_type: PatchType,
        field_manager: str,
        subresource: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """PATCH an object (``json`` takes a list of operations, the others an object).

        ``force`` only applies to server-side apply (``patch_type="apply"``), where it takes
        over fields owned by other managers. ``dry_run`` asks the server for the object it
        would store (defaults, admission and all) without storing it.
        """
        query: dict[str, str | int] = {"fieldManager": field_manager}
        if dry_run:
            query["dryRun"] = "All"
        if force:
            if patch_type != "apply":
                raise ValueError("force is only meaningful for patch_type='apply'")
            query["force"] = "true"
        if patch_type == "json":
            if isinstance(body, Mapping):
                raise TypeError("a JSON patch is a list of operations")
        elif not isinstance(body, Mapping):
            raise TypeError(f"a {patch_type} patch is an object")
        path = resource.object_path(namespace, name, subresource=subresource)
        return await self._json(
            "patch",
            resource,
            "PATCH",
            path,
            query=query,
            body=body,
            content_type=_PATCH_CONTENT_TYPES[patch_type],
            request_timeout=request_timeout,
        )

    async def delete(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        *,
        propagation_policy: Literal["Background", "Foreground", "Orphan"] | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """DELETE an object; ``uid`` and ``resource_version`` make it conditional (the
        server's preconditions, :class:`Conflict` when one does not hold). ``uid`` deletes
        only that very object, not one created since under its name, and holds across every
        update of it; ``resource_version`` deletes it only as it was read, and any write since
        (a controller's status update too) makes it fail."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        preconditions = {
            key: value
            for key, value in (("uid", uid), ("resourceVersion", resource_version))
            if value
        }
        if preconditions:
            options["preconditions"] = preconditions
        return await self._json(
            "delete",
            resource,
            "DELETE",
            resource.object_path(namespace, name),
            body=options,
            request_timeout=request_timeout,
        )

    # -- transport ----------------------------------------------------------------------------

    async def _json(
        self,
        verb: str,
        resource: Resource | None,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        data = await self._body(
            verb,
            resource,
            method,
            path,
            query=query,
            body=body,
            content_type=content_type,
            request_timeout=request_timeout,
        )
        try:
            decoded = orjson.loads(data) if data else {}
        except ValueError as err:
            raise ApiUnavailable(f"{method} {path}: response is not JSON") from err
        if not isinstance(decoded, dict):
            raise ApiUnavailable(f"{method} {path}: response is not a JSON object")
        return decoded

    async def _body(
        self,
        verb: str,
        resource: Resource | None,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        request_timeout: float | None = None,
    ) -> bytes:
        seconds = request_timeout if request_timeout is not None else self._request_timeout
        response = await self._send(
            verb,
            resource,
            method,
            path,
            query=query,
            body=body,
            content_type=content_type,
            timeouts=self._timeout(seconds),
        )
        try:
            return await response.read()
        except _TRANSPORT_ERRORS as err:
            raise ApiUnavailable(f"{method} {path}: reading the response failed: {err!r}") from err
        finally:
            response.release()

    def _timeout(self, seconds: float) -> aiohttp.ClientTimeout:
        timeout = self._timeouts.get(seconds)
        if timeout is None:
            timeout = self._timeouts[seconds] = aiohttp.ClientTimeout(total=seconds)
        return timeout

    async def _request_headers(self, content_type: str | None) -> CIMultiDict[str]:
        """The headers of a request with this body type (None: no body); rebuilt only when
        the credentials hand out other headers (a refreshed token)."""
        auth = await self._credentials.headers()
        if auth is not self._auth_headers:
            self._auth_headers = auth
            self._headers.clear()
        headers = self._headers.get(content_type)
        if headers is None:
            headers = CIMultiDict(self._base_headers)
            headers.update(auth)
            if content_type is not None:
                headers["Content-Type"] = content_type
            headers = self._headers[content_type] = headers
        return headers

    async def _send(
        self,
        verb: str,
        resource: Resource | None,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeouts: aiohttp.ClientTimeout,
    ) -> aiohttp.ClientResponse:
        """Send one request; return the unread response if it succeeded (2xx)."""
        if self._closed:
            raise ApiUnavailable(f"{method} {path}: the client is closed")
        if self._rate_limiter is not None:
            await self._rate_limiter.wait()
        headers = await self._request_headers(None if body is None else content_type)
        query, timeouts = _within_deadline(method, path, query, timeouts)
        # Already encoded: the path's segments are quoted (spa.kube.resources) and the query
        # by urlencode, so yarl need not parse and re-quote it.
        url = URL(
            f"{self._host}{path}?{_query_string(tuple(query.items()))}"
            if query
            else f"{self._host}{path}",
            encoded=True,
        )
        data = None if body is None else _encode(body)
        started = time.monotonic()
        code = 0
        try:
            try:
                response = await self._session.request(
                    method,
                    url,
                    data=data,
                    headers=headers,
                    timeout=timeouts,
                    **self._request_options,
                )
            except _TRANSPORT_ERRORS as err:
                raise ApiUnavailable(f"{method} {path}: {err!r}") from err
            code = response.status
            if 200 <= code < 300:
                return response
            try:
                payload = await response.read()
            except _TRANSPORT_ERRORS:
                payload = b""
            finally:
                response.release()
            raise error_from_status(
                code,
                payload,
                retry_after=_retry_after(response.headers),
                resource=resource.plural if resource is not None else "",
            )
        finally:
            record = RequestRecord(
                verb, resource.plural if resource else "", code, time.monotonic() - started
            )
            for hook in self._hooks:
                try:
                    hook(record)
                except Exception:  # a broken metrics hook must never fail a request
                    log.exception("request hook failed")
