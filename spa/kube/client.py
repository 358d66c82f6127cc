"""The blocking Kubernetes API client the rest of the controller uses: raw JSON dicts in and out.

Why not the generated typed API classes: their deserialisation into model objects is slow and
each resource (built-in or custom) would need its own code path. Every call here goes through
one path-based request function on top of ``ApiClient.call_api`` (which in the installed
generator always returns the undecoded urllib3 response), so lists, watches and writes behave
the same for SPAs, Schedules, HPAs, Leases and Events.

Thread safety: urllib3's pool manager is thread-safe and this class keeps no per-request state
outside locals, so one :class:`KubeClient` is shared by all worker and watch threads.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Literal, cast
from urllib.parse import urlencode

import urllib3

from spa.kube.errors import ApiError, ApiUnavailable, Gone, error_from_status
from spa.kube.ratelimit import TokenBucket
from spa.kube.resources import Resource

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "KubeClient",
    "ListResult",
    "PatchType",
    "RequestHook",
    "RequestRecord",
    "WatchEvent",
    "WatchEventType",
    "WatchStream",
]

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT = 30.0
# Page size of list calls: big enough for few round trips, small enough to keep the API
# server's memory per request bounded (client-go's pager uses 500 too).
DEFAULT_PAGE_LIMIT = 500

PatchType = Literal["merge", "json", "strategic", "apply"]
_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]
_WATCH_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"})

# Errors of the HTTP stack that mean "the server could not be talked to". Anything else
# escaping the request function is a bug and is allowed to propagate as is.
_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    urllib3.exceptions.HTTPError,
    http.client.HTTPException,
    OSError,
)


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


class WatchStream(Iterator[WatchEvent]):
    """Iterator over the events of one watch request.

    Iteration ends when the server closes the stream (its ``timeoutSeconds`` ran out).
    :meth:`close` may be called from another thread to unblock a pending read at once, which
    is how informers stop without waiting for the read timeout; the blocked iteration then
    simply ends.
    """

    def __init__(self, response: urllib3.BaseHTTPResponse, resource: Resource) -> None:
        self._response = response
        self._resource = resource
        self._lines = self._iter_lines()
        self._closed = False

    def _iter_lines(self) -> Iterator[bytes]:
        pending = b""
        for chunk in self._response.stream(amt=None, decode_content=True):
            pending += chunk
            # A chunk may hold several events, or end in the middle of one.
            *complete, pending = pending.split(b"\n")
            for line in complete:
                if line.strip():
                    yield line
        if pending.strip():
            yield pending

    def _next_line(self) -> bytes:
        if self._closed:
            raise StopIteration
        try:
            return next(self._lines)
        except StopIteration:
            self.close()
            raise
        except _TRANSPORT_ERRORS as err:
            was_closed = self._closed
            self.close()
            if was_closed:
                raise StopIteration from None
            raise ApiUnavailable(f"watch of {self._resource} broke: {err!r}") from err
        except ValueError:
            # urllib3 raises ValueError when the response was closed under the reader.
            if self._closed:
                raise StopIteration from None
            raise

    def __next__(self) -> WatchEvent:
        line = self._next_line()
        try:
            decoded = json.loads(line)
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
        """Stop the stream; safe to call from any thread, and more than once."""
        if self._closed:
            return
        self._closed = True
        # shutdown() wakes a read blocked in another thread; close() alone would not.
        with contextlib.suppress(ValueError, RuntimeError, OSError):
            self._response.shutdown()
        with contextlib.suppress(*_TRANSPORT_ERRORS):
            self._response.close()

    def __enter__(self) -> WatchStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class KubeClient:
    """Blocking, thread-safe access to the API server with raw JSON dicts.

    Build one with :func:`spa.kube.connect`. Every method raises :class:`~spa.kube.ApiError`
    (or a subclass) for error statuses and :class:`~spa.kube.ApiUnavailable` for transport
    failures.
    """

    def __init__(
        self,
        api_client: Any,
        *,
        rate_limiter: TokenBucket | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        page_limit: int = DEFAULT_PAGE_LIMIT,
    ) -> None:
        """Wrap a configured ``kubernetes.client.ApiClient`` (see :func:`spa.kube.connect`)."""
        self._api = api_client
        self._rate_limiter = rate_limiter
        self._request_timeout = request_timeout
        self._page_limit = page_limit
        self._hooks: list[RequestHook] = []
        self._discovery_cache: dict[str, bool] = {}
        self._discovery_lock = threading.Lock()
        self._closed = False

    @property
    def host(self) -> str:
        """Base URL of the API server."""
        return str(self._api.configuration.host)

    def add_request_hook(self, hook: RequestHook) -> None:
        """Call ``hook`` after every request (from the requesting thread; keep it cheap)."""
        self._hooks.append(hook)

    def close(self) -> None:
        """Close pooled connections; every later request fails with ApiUnavailable.

        Final, because a request sent after the pools were cleared (say, from a worker thread
        still finishing its job during shutdown) would open a new pool that nobody closes.
        """
        self._closed = True
        self._api.close()

    # -- reads --------------------------------------------------------------------------------

    def get(
        self, resource: Resource, namespace: str | None, name: str, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """GET one object."""
        return self._json(
            "get", resource, "GET", resource.object_path(namespace, name), timeout=timeout
        )

    def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout: float | None = None,
    ) -> ListResult:
        """List all objects (following ``continue`` pages) and the list's resourceVersion.

        Items get ``apiVersion``/``kind`` filled in (list items lack them on the wire), so they
        look exactly like objects from get and watch.
        """
        try:
            return self._list_pages(
                resource,
                namespace,
                label_selector,
                field_selector,
                limit=self._page_limit,
                timeout=timeout,
            )
        except Gone:
            # The continue token expired between pages (the list took longer than etcd's
            # compaction interval). A consistent snapshot then needs one unpaginated list.
            log.info("continue token expired while listing %s; listing unpaginated", resource)
            return self._list_pages(
                resource, namespace, label_selector, field_selector, limit=0, timeout=timeout
            )

    def first_page(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        limit: int = 1,
        timeout: float | None = None,
    ) -> ListResult:
        """At most `limit` items of a list, without following `continue`: the cheapest request
        that is allowed exactly when a list is (startup checks ask it, see
        docs/operations.md, "Exit codes")."""
        page = self._json(
            "list",
            resource,
            "GET",
            resource.collection_path(namespace),
            query={"limit": limit},
            timeout=timeout,
        )
        items = [
            {"apiVersion": resource.api_version, "kind": resource.kind, **item}
            for item in page.get("items") or []
        ]
        metadata = page.get("metadata") or {}
        return ListResult(items, str(metadata.get("resourceVersion") or ""))

    def _list_pages(
        self,
        resource: Resource,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        *,
        limit: int,
        timeout: float | None,
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
            page = self._json(
                "list",
                resource,
                "GET",
                resource.collection_path(namespace),
                query=query,
                timeout=timeout,
            )
            for item in page.get("items") or []:
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
            metadata = page.get("metadata") or {}
            continue_token = metadata.get("continue")
            if not continue_token:
                return ListResult(items, str(metadata.get("resourceVersion") or ""))

    def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int = 300,
        allow_bookmarks: bool = True,
        read_timeout: float | None = None,
    ) -> WatchStream:
        """Start a watch and return its event stream (use it as a context manager).

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
        response = self._send(
            "watch",
            resource,
            "GET",
            resource.collection_path(namespace),
            query=query,
            timeout=(min(self._request_timeout, 10.0), read_timeout),
        )
        return WatchStream(response, resource)

    def serves(self, group_version: str) -> bool:
        """Whether the server serves ``group/version`` (``v1`` for core); cached per client."""
        with self._discovery_lock:
            known = self._discovery_cache.get(group_version)
        if known is not None:
            return known
        path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
        try:
            self._json("discovery", None, "GET", path)
            served = True
        except ApiError as err:
            if err.status != 404:
                raise
            served = False
        with self._discovery_lock:
            self._discovery_cache[group_version] = served
        return served

    def readyz(self, *, timeout: float | None = None) -> None:
        """Return if ``GET /readyz`` answers 200 (the server is up and can reach etcd); raise
        :class:`~spa.kube.ApiUnavailable` or :class:`~spa.kube.ApiError` otherwise. Every
        authenticated identity may read it (the ``system:public-info-viewer`` ClusterRole)."""
        response = self._send("readyz", None, "GET", "/readyz", timeout=timeout)
        try:
            response.data  # noqa: B018  (read the body so the connection can be reused)
        except _TRANSPORT_ERRORS as err:
            raise ApiUnavailable(f"GET /readyz: reading the response failed: {err!r}") from err
        finally:
            response.release_conn()

    # -- writes -------------------------------------------------------------------------------

    def create(
        self,
        resource: Resource,
        namespace: str | None,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """POST a new object; :class:`Conflict` if it already exists."""
        query = {"fieldManager": field_manager} if field_manager else {}
        path = resource.collection_path(namespace if resource.namespaced else None)
        return self._json(
            "create", resource, "POST", path, query=query, body=dict(body), timeout=timeout
        )

    def update(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any],
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """PUT the whole object; with ``metadata.resourceVersion`` set this is a compare-and-
        swap that raises :class:`Conflict` if someone else wrote in between."""
        query = {"fieldManager": field_manager} if field_manager else {}
        path = resource.object_path(namespace, name, subresource=subresource)
        return self._json(
            "update", resource, "PUT", path, query=query, body=dict(body), timeout=timeout
        )

    def patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        patch_type: PatchType,
        field_manager: str,
        subresource: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        timeout: float | None = None,
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
        payload: Any
        if patch_type == "json":
            if isinstance(body, Mapping):
                raise TypeError("a JSON patch is a list of operations")
            payload = [dict(op) for op in body]
        else:
            if not isinstance(body, Mapping):
                raise TypeError(f"a {patch_type} patch is an object")
            payload = dict(body)
        path = resource.object_path(namespace, name, subresource=subresource)
        return self._json(
            "patch",
            resource,
            "PATCH",
            path,
            query=query,
            body=payload,
            content_type=_PATCH_CONTENT_TYPES[patch_type],
            timeout=timeout,
        )

    def delete(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        propagation_policy: Literal["Background", "Foreground", "Orphan"] | None = None,
        resource_version: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """DELETE an object; ``resource_version`` makes it conditional (precondition)."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if resource_version:
            options["preconditions"] = {"resourceVersion": resource_version}
        return self._json(
            "delete",
            resource,
            "DELETE",
            resource.object_path(namespace, name),
            body=options,
            timeout=timeout,
        )

    # -- transport ----------------------------------------------------------------------------

    def _json(
        self,
        verb: str,
        resource: Resource | None,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> dict[str, Any]:
        response = self._send(
            verb,
            resource,
            method,
            path,
            query=query,
            body=body,
            content_type=content_type,
            timeout=timeout if timeout is not None else self._request_timeout,
        )
        try:
            data = response.data
        except _TRANSPORT_ERRORS as err:
            raise ApiUnavailable(f"{method} {path}: reading the response failed: {err!r}") from err
        finally:
            response.release_conn()
        try:
            decoded = json.loads(data) if data else {}
        except ValueError as err:
            raise ApiUnavailable(f"{method} {path}: response is not JSON") from err
        if not isinstance(decoded, dict):
            raise ApiUnavailable(f"{method} {path}: response is not a JSON object")
        return decoded

    def _send(
        self,
        verb: str,
        resource: Resource | None,
        method: str,
        path: str,
        *,
        query: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | tuple[float, float] | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """Send one request; return the unread response if it succeeded (2xx)."""
        if self._closed:
            raise ApiUnavailable(f"{method} {path}: the client is closed")
        if self._rate_limiter is not None:
            self._rate_limiter.acquire()
        resource_path = f"{path}?{urlencode(query)}" if query else path
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        started = time.monotonic()
        code = 0
        try:
            method_, url, header_params, serialized_body, post_params = self._api.param_serialize(
                method=method,
                resource_path=resource_path,
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            try:
                rest_response = self._api.call_api(
                    method_,
                    url,
                    header_params=header_params,
                    body=serialized_body,
                    post_params=post_params,
                    _request_timeout=timeout if timeout is not None else self._request_timeout,
                )
            except _TRANSPORT_ERRORS as err:
                raise ApiUnavailable(f"{method} {path}: {err!r}") from err
            except Exception as err:
                # The generated client reports TLS failures as ApiException(status=0).
                if getattr(err, "status", None) == 0:
                    raise ApiUnavailable(f"{method} {path}: {err}") from err
                raise
            response: urllib3.BaseHTTPResponse = rest_response.response
            code = response.status
            if 200 <= code < 300:
                return response
            try:
                payload = response.data
            except _TRANSPORT_ERRORS:
                payload = b""
            finally:
                response.release_conn()
            raise error_from_status(code, payload, retry_after=_retry_after(response.headers))
        finally:
            record = RequestRecord(
                verb, resource.plural if resource else "", code, time.monotonic() - started
            )
            for hook in self._hooks:
                try:
                    hook(record)
                except Exception:  # a broken metrics hook must never fail a request
                    log.exception("request hook failed")
