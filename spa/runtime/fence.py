"""The write fence: how long this replica may still write, and calls made under it.

Why a duration rather than a yes/no: with leader election, "am I the leader?" checked before a
write is check-then-act. A request sent a moment before the renew deadline could still be in
flight, or queued behind the rate limiter, when another replica takes the Lease, and land
after it (the soak saw writes land 13 s after their writer's last renewal). So every write of
the controller and of the Event recorder runs under :func:`spa.kube.deadline` set to the time
this replica may still write: it is not sent once that has passed, and the API server is told
to abandon it at that time. The Lease cannot change hands before then (docs/runtime.md,
"Leader election"), so no write of an old leader lands after the new one acquired.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from spa.kube import DeadlinePassed, deadline

__all__ = ["NotLeader", "WriteFence", "may_write", "unfenced", "write_fenced"]

WriteFence = Callable[[], float | None]
"""Seconds this process may still write for; None when nothing fences it (no leader
election), 0 or less once it may not write."""

_P = ParamSpec("_P")
_T = TypeVar("_T")


class NotLeader(RuntimeError):
    """Raised instead of writing when this process may no longer write (lost the Lease, or
    its renew deadline passed)."""


def unfenced() -> float | None:
    """The fence of a process without leader election: it may always write."""
    return None


def may_write(fence: WriteFence) -> bool:
    """Whether a write may start now."""
    left = fence()
    return left is None or left > 0


async def write_fenced(
    fence: WriteFence, call: Callable[_P, Awaitable[_T]], *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    """Run `call` (requests through :mod:`spa.kube`) so that none of its requests is sent, or
    applied by the API server, after the fence closes. :class:`NotLeader` if it is closed."""
    left = fence()
    if left is None:
        return await call(*args, **kwargs)
    if left <= 0:
        raise NotLeader("not the leader: not writing")
    try:
        with deadline(left):
            return await call(*args, **kwargs)
    except DeadlinePassed as passed:
        raise NotLeader(f"the renew deadline passed before the write was sent: {passed}") from None
