"""The one interface of the API client: what the controller's code types its client as.

Why a Protocol, as controller-runtime's `client.Client` is an interface: the actuators, the
Event recorder, leader election and the informers all talk to the API server through it, so
a unit test hands each one a small fake of the same interface, and mypy checks that the fake
and :class:`~spa.kube.KubeClient` (the real client) both have it. It is written once, here:
what a caller needs of the client is never written again beside that caller.

A resource's scope is in its type (spa/kube/resources.py): a request about one object takes
a namespace (``str``) for a ``Resource[str]`` and None for a ``Resource[None]``, so a
cluster-scoped object named with a namespace, or a namespaced one without, is a type error.

:class:`Discovery` is the part that asks what the server serves; a function that needs only
that takes a :class:`Discovery`, which every :class:`Client` is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal, Protocol

from spa.kube.client import ItemTransform, ListResult, PatchType, WatchEvent
from spa.kube.resources import Namespace, Resource

__all__ = ["Client", "Discovery", "EventStream"]


class Discovery(Protocol):
    """What the server serves (``v1`` is the core group's version)."""

    async def serves(self, group_version: str) -> bool: ...

    async def api_resources(self, group_version: str) -> Sequence[dict[str, Any]]: ...

    async def preferred_version(self, group: str) -> str | None: ...


class EventStream(Protocol):
    """The events of one watch (``async for``); :meth:`close` ends it, also a pending read."""

    def __aiter__(self) -> AsyncIterator[WatchEvent]: ...

    async def __anext__(self) -> WatchEvent: ...

    def close(self) -> None: ...


class Client(Discovery, Protocol):
    """Every request of the controller (:class:`spa.kube.KubeClient` documents each)."""

    @property
    def host(self) -> str:
        """The API server's base URL (for messages)."""
        ...

    async def get(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        *,
        subresource: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]: ...

    async def list(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        request_timeout: float | None = None,
        transform: ItemTransform | None = None,
    ) -> ListResult: ...

    async def first_page(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        limit: int = 1,
        request_timeout: float | None = None,
    ) -> ListResult: ...

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
    ) -> EventStream: ...

    async def create(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]: ...

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
    ) -> dict[str, Any]: ...

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
    ) -> dict[str, Any]: ...

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
    ) -> dict[str, Any]: ...
