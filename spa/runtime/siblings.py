"""What the sibling Leases say: the annotations of the other Leases of one group, read now and
then.

Why: processes that each hold a Lease of their own (the shards of one install) share one API
server, but each measures only its own writes. What one learned and keeps on its Lease
(:class:`~spa.runtime.leaderelection.LeaderElector`'s ``memo``) is what the others need when
their own measurement was made in other conditions: a shard that wrote its burst alone, after
the others had finished, measured a pace it will not have when they all write together
(docs/runtime.md, "Shards").

Why a list every `period` and not a watch: the holders renew their Leases every two seconds,
so a watch would bring each sibling's renewal, 30 events a minute for each, to learn a number
that changes once a boundary. A list of the namespace's Leases, filtered here by the group's
name prefix (a Lease's name cannot be selected on server-side by prefix), costs one request
a period. Without the grant to list Leases (an install from before shards read each other),
it says so once and goes on trying: the caller keeps what it measured itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from spa.kube import LEASE, ApiError, ApiUnavailable, Client, Forbidden
from spa.runtime.clock import Clock

__all__ = ["SiblingLeases"]

log = logging.getLogger(__name__)


class SiblingLeases:
    """Every `period`, the annotations of the Leases in `namespace` whose names start with
    `prefix`, other than `own` and those no one holds, handed to `on_read` by Lease name (an
    empty mapping when there are none).

    :param on_read: called after each list that succeeded, on the event loop.
    :param grant: where the grant to list Leases comes from, said with a refusal.
    """

    def __init__(
        self,
        client: Client,
        *,
        namespace: str,
        prefix: str,
        own: str,
        period: float,
        clock: Clock,
        on_read: Callable[[Mapping[str, Mapping[str, str]]], None],
        grant: str = "",
    ) -> None:
        self._client = client
        self._namespace = namespace
        self._prefix = prefix
        self._own = own
        self._period = period
        self._clock = clock
        self._on_read = on_read
        self._grant = grant
        self._forbidden_said = False

    async def run(self) -> None:
        """Read, then wait `period`, until cancelled."""
        while True:
            await self.read()
            await self._clock.sleep(self._period)

    async def read(self) -> None:
        """One list of the namespace's Leases, handed to `on_read`; a failure is logged (once
        at WARNING when the list is forbidden) and nothing is handed on."""
        try:
            listed = await self._client.list(LEASE, namespace=self._namespace)
        except Forbidden as error:
            level = logging.DEBUG if self._forbidden_said else logging.WARNING
            self._forbidden_said = True
            log.log(
                level,
                "cannot list the Leases in %s, so the other Leases %s* are not read: %s%s",
                self._namespace,
                self._prefix,
                error,
                f" ({self._grant})" if self._grant else "",
            )
            return
        except (ApiError, ApiUnavailable) as error:
            log.debug("listing the Leases in %s failed: %s", self._namespace, error)
            return
        siblings: dict[str, Mapping[str, str]] = {}
        for lease in listed.items:
            metadata = lease.get("metadata") or {}
            name = str(metadata.get("name") or "")
            if not name.startswith(self._prefix) or name == self._own:
                continue
            # A Lease nobody holds was released: its holders were stopped, for good when
            # the shard was removed, and what it carries is no sibling's now.
            if (lease.get("spec") or {}).get("holderIdentity"):
                siblings[name] = dict(metadata.get("annotations") or {})
        self._on_read(siblings)
