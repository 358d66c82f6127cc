"""Exceptions raised by :class:`spa.kube.KubeClient`.

Callers branch on the HTTP meaning (not found, conflict, gone, ...) without ever seeing the
``kubernetes`` package's exception types, which stay inside :mod:`spa.kube`.
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = [
    "ApiError",
    "ApiUnavailable",
    "Conflict",
    "DeadlinePassed",
    "Forbidden",
    "Gone",
    "KubeError",
    "NamespaceDeleted",
    "NamespaceGone",
    "NamespaceTerminating",
    "NotFound",
    "TooManyRequests",
    "error_from_status",
]


class KubeError(Exception):
    """Base class of everything :mod:`spa.kube` raises about a request."""


class ApiUnavailable(KubeError):
    """The API server could not be reached or the connection broke (refused, reset, timed out).

    Nothing is known about whether a write took effect; reads are safe to retry.
    """

    @property
    def cause(self) -> str:
        """The innermost reason, such as `[Errno 111] Connection refused` or `certificate
        verify failed`: what a person can act on, without the HTTP stack's wrappers."""
        error: BaseException = self
        seen: set[int] = set()
        while id(error) not in seen:
            seen.add(id(error))
            reason = getattr(error, "reason", None)  # urllib3's MaxRetryError holds it there
            inner = reason if isinstance(reason, BaseException) else None
            inner = inner or error.__cause__ or error.__context__
            if inner is None:
                break
            error = inner
        if (type(error) is OSError or isinstance(error, ConnectionError)) and error.errno:
            # asyncio says "Connect call failed ('10.0.0.1', 443)": the errno says why. (Not
            # for its subclasses with messages of their own: TLS errors, name resolution.)
            return f"[Errno {error.errno}] {os.strerror(error.errno)}"
        return str(error) or type(error).__name__


class DeadlinePassed(KubeError):
    """The request was not sent: the deadline it was made under (:func:`spa.kube.deadline`)
    had already passed when its turn came."""


class ApiError(KubeError):
    """The API server answered with an error status (a ``metav1.Status`` when it could)."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        *,
        retry_after: float | None = None,
        details: dict[str, Any] | None = None,
        resource: str = "",
    ) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        # Seconds the server asked us to wait (Retry-After header or Status details).
        self.retry_after = retry_after
        self.details = details or {}
        # The resource (plural) the request was about, as spa_kube_requests_total names it;
        # empty when not known.
        self.resource = resource


class NotFound(ApiError):
    """404: the object (or the resource type) does not exist."""


class NamespaceDeleted(ApiError):
    """The request's namespace is being deleted (:class:`NamespaceTerminating`) or is gone
    (:class:`NamespaceGone`): the API server creates nothing in it any more, and all it holds
    is going. A normal state, not a failure to report (docs/operations.md, "Namespaces being
    deleted")."""


class Conflict(ApiError):
    """409: stale resourceVersion on update, or the object already exists on create."""


class Gone(ApiError):
    """410: the requested resourceVersion (or continue token) is too old; relist."""


class Forbidden(ApiError):
    """403: RBAC does not allow the request."""


class NamespaceTerminating(Forbidden, NamespaceDeleted):
    """403 for a create in a namespace that is being deleted. Known by the Status cause the
    API server gives it (`details.causes[].reason` `NamespaceTerminating`), never by its
    message."""


class NamespaceGone(NotFound, NamespaceDeleted):
    """404 for a create in a namespace that does not exist (any more), as once a namespace
    being deleted is gone. Known by the Status details, which name the namespace
    (`details.kind` `namespaces`), not the object."""


class TooManyRequests(ApiError):
    """429: throttled by API priority and fairness; honour ``retry_after``."""


_BY_STATUS: dict[int, type[ApiError]] = {
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    429: TooManyRequests,
}


# The Status cause of a create refused in a namespace being deleted (metav1 StatusCause, whose
# type is spelled `reason` on the wire).
_NAMESPACE_TERMINATING = "NamespaceTerminating"


def _has_cause(details: dict[str, Any], cause: str) -> bool:
    causes = details.get("causes") if isinstance(details, dict) else None
    return isinstance(causes, list) and any(
        isinstance(entry, dict) and entry.get("reason") == cause for entry in causes
    )


def error_from_status(
    status: int,
    body: bytes | dict[str, Any] | None,
    *,
    retry_after: float | None = None,
    resource: str | None = None,
) -> ApiError:
    """Build the most specific :class:`ApiError` for an HTTP status and its body, about a
    request of `resource` (a plural; None: the Status details' kind, as far as they say).

    ``body`` is either the raw response bytes or an already-decoded ``metav1.Status`` (as found
    in a watch ERROR event). The Status ``code`` wins over the HTTP status, because a watch
    reports 410 inside a 200 stream.
    """
    reason = ""
    message = ""
    details: dict[str, Any] = {}
    decoded: Any = body
    if isinstance(body, bytes):
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = None
            message = body[:500].decode("utf-8", errors="replace")
    if isinstance(decoded, dict) and decoded.get("kind") == "Status":
        status = int(decoded.get("code") or status)
        reason = str(decoded.get("reason") or "")
        message = str(decoded.get("message") or "")
        details = decoded.get("details") or {}
        if retry_after is None and details.get("retryAfterSeconds"):
            retry_after = float(details["retryAfterSeconds"])
    cls = _BY_STATUS.get(status, ApiError)
    if cls is Forbidden and _has_cause(details, _NAMESPACE_TERMINATING):
        cls = NamespaceTerminating
    elif cls is NotFound and details.get("kind") == "namespaces" and not details.get("group"):
        cls = NamespaceGone
    if resource is None:
        resource = str(details.get("kind") or "") if cls is not NamespaceGone else ""
    return cls(status, reason, message, retry_after=retry_after, details=details, resource=resource)
