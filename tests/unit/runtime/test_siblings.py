"""SiblingLeases: the other Leases of a group read every period, whatever a list meets."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from spa.kube import (
    LEASE,
    ApiUnavailable,
    Forbidden,
    ItemTransform,
    ListResult,
    Namespace,
    Resource,
)
from spa.runtime import FakeClock, SiblingLeases
from tests.client_double import UnexpectedRequests

PERIOD = 15.0


def lease(name: str, holder: str = "a-pod", **annotations: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "spa", "annotations": annotations},
        "spec": {"holderIdentity": holder},
    }


class Leases(UnexpectedRequests):
    """Answers each list of Leases with the next of `answers` (a list or an error)."""

    def __init__(self, *answers: list[dict[str, Any]] | Exception) -> None:
        self.answers = list(answers)
        self.lists: list[str | None] = []

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
        assert resource is LEASE
        self.lists.append(namespace)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ListResult(items=answer, resource_version="1")


def siblings(client: Leases, clock: FakeClock) -> tuple[SiblingLeases, list[dict[str, Any]]]:
    read: list[dict[str, Any]] = []

    def on_read(leases: Mapping[str, Mapping[str, str]]) -> None:
        read.append({name: dict(annotations) for name, annotations in leases.items()})

    reader = SiblingLeases(
        client,
        namespace="spa",
        prefix="spa-leader-shard-",
        own="spa-leader-shard-a",
        period=PERIOD,
        clock=clock,
        on_read=on_read,
    )
    return reader, read


async def test_the_other_leases_of_the_group_are_read_every_period_through_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    forbidden = Forbidden(403, "Forbidden", 'leases is forbidden: cannot list resource "leases"')
    client = Leases(
        [
            lease("spa-leader-shard-a", pace="1"),  # its own
            lease("spa-leader-shard-b", pace="2"),
            lease("spa-leader-shard-c", holder="", pace="5"),  # released: a shard removed
            lease("spa-leader", pace="3"),  # the install without shards: no sibling
            lease("other-controller", pace="4"),
        ],
        ApiUnavailable("connection refused"),
        forbidden,
        forbidden,
        [],
    )
    clock = FakeClock()
    reader, read = siblings(client, clock)
    caplog.set_level(logging.DEBUG, logger="spa.runtime.siblings")
    task = asyncio.create_task(reader.run())
    try:
        await clock.settle()
        assert read == [{"spa-leader-shard-b": {"pace": "2"}}]
        for _ in range(4):
            clock.advance(PERIOD)
            await clock.settle()
        assert client.lists == ["spa"] * 5
        # A failed list hands nothing on; the next one, when it comes, everything it found.
        assert read == [{"spa-leader-shard-b": {"pace": "2"}}, {}]
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert [r.getMessage().split(":")[0] for r in warnings] == [
            "cannot list the Leases in spa, so the other Leases spa-leader-shard-* are not read"
        ]
        assert not task.done()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
