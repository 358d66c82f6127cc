"""What the unit tests build their fakes of the API server on: a whole :class:`spa.kube.Client`
whose every request fails the test, so that a fake serves only the requests its test expects
(it overrides their methods) and mypy still checks that it is a client like any other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NoReturn

from spa.kube import Client, EventStream, ItemTransform, ListResult, Namespace, PatchType, Resource

__all__ = ["UnexpectedRequests"]


def _unexpected(verb: str, *about: object) -> NoReturn:
    raise AssertionError(f"a request the test did not expect: {verb} {about}")


class UnexpectedRequests(Client):
    """Fails the test at every request; a fake overrides the ones it answers."""

    host = "https://unexpected.invalid"

    async def serves(self, group_version: str) -> bool:
        _unexpected("serves", group_version)

    async def api_resources(self, group_version: str) -> Sequence[dict[str, Any]]:
        _unexpected("api_resources", group_version)

    async def preferred_version(self, group: str) -> str | None:
        _unexpected("preferred_version", group)

    async def get(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        *,
        subresource: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        _unexpected("get", resource, namespace, name, subresource)

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
        _unexpected("list", resource, namespace)

    async def first_page(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        limit: int = 1,
        request_timeout: float | None = None,
    ) -> ListResult:
        _unexpected("first_page", resource, namespace)

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
    ) -> EventStream:
        _unexpected("watch", resource, namespace)

    async def create(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        _unexpected("create", resource, namespace)

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
        _unexpected("update", resource, namespace, name, subresource)

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
        _unexpected("patch", resource, namespace, name, subresource)

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
        _unexpected("delete", resource, namespace, name)
