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
        said = self._said.get(namespace)
        if said is not None and now - said < self._quiet:
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
