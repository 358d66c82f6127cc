"""Awaitable versions of the :class:`spa.kube.KubeClient` calls, for reconcilers.

A reconcile runs on the event loop and must never block it; each call here runs the blocking
client call in the runtime's dedicated executor (see :func:`spa.runtime.new_executor`). The
signatures mirror ``KubeClient`` one to one (except that its ``timeout``, the HTTP request
timeout, is called ``request_timeout`` here: a thread cannot be cancelled, so an
``asyncio.timeout`` around the call would not stop the request), and the errors
(``NotFound``, ``Conflict``, ...) are the same.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any, Literal, ParamSpec, TypeVar

from spa.kube import KubeClient, ListResult, PatchType, Resource

__all__ = ["AsyncKubeClient"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


class AsyncKubeClient:
    """``await client.get(...)`` etc.; ``sync`` is the wrapped blocking client."""

    def __init__(self, client: KubeClient, executor: Executor) -> None:
        self.sync = client
        self.executor = executor

    async def run(self, function: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """Run any blocking call in the executor (for what the methods below do not cover)."""
        return await asyncio.get_running_loop().run_in_executor(
            self.executor, functools.partial(function, *args, **kwargs)
        )

    async def get(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`KubeClient.get`."""
        return await self.run(self.sync.get, resource, namespace, name, timeout=request_timeout)

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        request_timeout: float | None = None,
    ) -> ListResult:
        """See :meth:`KubeClient.list`."""
        return await self.run(
            self.sync.list,
            resource,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            timeout=request_timeout,
        )

    async def create(
        self,
        resource: Resource,
        namespace: str | None,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`KubeClient.create`."""
        return await self.run(
            self.sync.create,
            resource,
            namespace,
            body,
            field_manager=field_manager,
            timeout=request_timeout,
        )

    async def update(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any],
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`KubeClient.update`."""
        return await self.run(
            self.sync.update,
            resource,
            namespace,
            name,
            body,
            subresource=subresource,
            field_manager=field_manager,
            timeout=request_timeout,
        )

    async def patch(
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
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`KubeClient.patch`."""
        return await self.run(
            self.sync.patch,
            resource,
            namespace,
            name,
            body,
            patch_type=patch_type,
            field_manager=field_manager,
            subresource=subresource,
            force=force,
            dry_run=dry_run,
            timeout=request_timeout,
        )

    async def delete(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        propagation_policy: Literal["Background", "Foreground", "Orphan"] | None = None,
        resource_version: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        """See :meth:`KubeClient.delete`."""
        return await self.run(
            self.sync.delete,
            resource,
            namespace,
            name,
            propagation_policy=propagation_policy,
            resource_version=resource_version,
            timeout=request_timeout,
        )

    async def serves(self, group_version: str) -> bool:
        """See :meth:`KubeClient.serves`."""
        return await self.run(self.sync.serves, group_version)
