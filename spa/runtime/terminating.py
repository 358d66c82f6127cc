"""Writes refused because their namespace is being deleted: counted, and said once per
namespace instead of once per write.

Why: a namespace being deleted is a normal state. Until the namespace controller has removed
what it holds, the objects in it are still watched and reconciled, and the API server answers
every create there (an HPA, an Event, a CapacityBuffer) with a 403 whose Status cause is
`NamespaceTerminating`, and with a 404 naming the namespace once it is gone
(:class:`spa.kube.NamespaceDeleted`). At 1,000 SPAs in one such
namespace that was thousands of warnings and tracebacks in a minute, each about an object that
was going anyway. The writers leave such objects alone and report the refusal here: one INFO
line per namespace, and `spa_namespace_terminating_writes_total` (docs/operations.md,
"Namespaces being deleted").
"""

from __future__ import annotations

import collections
import logging

from spa.kube import NamespaceDeleted, NamespaceGone
from spa.runtime.clock import Clock, SystemClock
from spa.runtime.metrics import NAMESPACE_TERMINATING_WRITES

__all__ = ["TerminatingNamespaces"]

log = logging.getLogger(__name__)


class TerminatingNamespaces:
    """Where the writers report a create refused because its namespace is being deleted.

    :param clock: the clock `quiet` is measured on (a real one in production: the log's pace
        is about when requests were made).
    :param quiet: a namespace already said to be terminating is said again only after this
        many seconds (one that stays Terminating for hours, held by a finalizer, gets a line
        per `quiet`, not one per write; one deleted again after it was recreated gets its
        own line).
    :param max_remembered: the most namespaces remembered at once (the oldest are forgotten).
    """

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        quiet: float = 600.0,
        max_remembered: int = 1024,
    ) -> None:
        self._clock: Clock = clock or SystemClock()
        self._quiet = quiet
        self._max_remembered = max_remembered
        # When each namespace was last said to be terminating (the clock's monotonic time).
        self._said: collections.OrderedDict[str, float] = collections.OrderedDict()

    def refused(
        self, namespace: str, error: NamespaceDeleted, *, resource: str | None = None
    ) -> None:
        """Count a write of `resource` (a plural, as `spa_kube_requests_total` names it; None:
        the one the error names) that the API server refused in `namespace` because the
        namespace is being deleted or is gone, and say so if this namespace was not said to be
        within `quiet` seconds."""
        NAMESPACE_TERMINATING_WRITES.labels(resource or error.resource or "unknown").inc()
        now = self._clock.monotonic()
        if self._said_since(namespace, now):
            return
        self._said[namespace] = now
        self._said.move_to_end(namespace)
        while len(self._said) > self._max_remembered:
            self._said.popitem(last=False)
        log.info(
            "namespace %s %s: its objects are left alone, and the writes the API server "
            "refuses there are counted in spa_namespace_terminating_writes_total, not logged "
            "(first: %s)",
            namespace,
            "is gone" if isinstance(error, NamespaceGone) else "is being deleted",
            error.message,
        )

    def said(self, namespace: str) -> bool:
        """Whether `namespace` was said to be being deleted (or gone) within `quiet` seconds.

        Why: that line stands for every object of the namespace. A writer that finds one of
        them gone before its write, rather than refused by the API server (the namespace
        controller deletes an SPA while our cache still holds it), asks here whether the
        namespace was said, and then says nothing of its own above DEBUG (docs/operations.md,
        "Namespaces being deleted"). Before the namespace was said, or `quiet` seconds after,
        the writer's line stays as it is: nothing here tells such a deletion from any other.
        """
        return self._said_since(namespace, self._clock.monotonic())

    def _said_since(self, namespace: str, now: float) -> bool:
        said = self._said.get(namespace)
        return said is not None and now - said < self._quiet
