"""How the SPA controller writes, for each of its writers: the HPA's (spa/controller/actuator.py)
and node capacity's (spa/controller/capacity.py).

Why a module of its own: both write the same way, and neither borrows it from the other.
Every write runs under this replica's write fence (spa.runtime.fence), so a replica that lost
the Lease sends nothing more and none of its writes lands after its renew deadline. The
refusals of the API server that are the user's to fix (400, 403, 422) are raised as
:class:`Refused`, for the reconciler to report, rather than as errors to back off on; a create
refused because its namespace is being deleted or gone (:class:`~spa.kube.NamespaceDeleted`)
is nobody's to fix, and is raised as it is, for the reconciler to leave the SPA alone. An
Event is recorded only while this replica may write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ParamSpec, Protocol, TypeVar

from spa.kube import ApiError, NamespaceDeleted
from spa.runtime import WriteFence, may_write, write_fenced

__all__ = ["REFUSALS", "FencedRecorder", "Recorder", "Refused", "brief", "refusable"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

REFUSALS = frozenset({400, 403, 422})
"""Statuses of a refusal the user must fix (an invalid object, a forbidden one): retrying now
cannot help."""

# How much of an API server's message a status or an Event repeats.
_MESSAGE_LIMIT = 400


class Refused(Exception):
    """The API server refused a write for a reason the user must fix."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def brief(message: str) -> str:
    """A server message short enough for a status and an Event."""
    message = " ".join(message.split())
    return message if len(message) <= _MESSAGE_LIMIT else message[: _MESSAGE_LIMIT - 1] + "…"


async def refusable(
    fence: WriteFence, call: Callable[_P, Awaitable[_T]], *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    """`call` under the write `fence`; a refusal the user must fix as :class:`Refused`."""
    try:
        return await write_fenced(fence, call, *args, **kwargs)
    except NamespaceDeleted:
        raise
    except ApiError as error:
        if error.status in REFUSALS:
            raise Refused(error.status, brief(error.message)) from error
        raise


class Recorder(Protocol):
    """Where Events go (:class:`spa.runtime.EventRecorder` is the real recorder)."""

    def normal(self, obj: Mapping[str, Any], reason: str, message: str) -> None: ...

    def warning(self, obj: Mapping[str, Any], reason: str, message: str) -> None: ...


class FencedRecorder:
    """A :class:`Recorder` that records only while the `fence` lets this replica write."""

    def __init__(self, recorder: Recorder, fence: WriteFence) -> None:
        self._recorder = recorder
        self._fence = fence

    def normal(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        if may_write(self._fence):
            self._recorder.normal(obj, reason, message)

    def warning(self, obj: Mapping[str, Any], reason: str, message: str) -> None:
        if may_write(self._fence):
            self._recorder.warning(obj, reason, message)
