"""HPA version discovery: one function picks `autoscaling/v2` or `v2beta2` for every caller."""

from __future__ import annotations

import pytest

from spa.kube import HPA_V2, HPA_V2BETA2, ApiError, discover_hpa
from tests.client_double import UnexpectedRequests


class _Server(UnexpectedRequests):
    """Answers discovery for the group versions it serves, and records what was asked."""

    def __init__(self, *served: str, error: Exception | None = None) -> None:
        self.served = set(served)
        self.error = error
        self.asked: list[str] = []

    async def serves(self, group_version: str) -> bool:
        self.asked.append(group_version)
        if self.error is not None:
            raise self.error
        return group_version in self.served


async def test_v2_where_served() -> None:
    server = _Server("autoscaling/v2", "autoscaling/v2beta2")
    assert await discover_hpa(server) is HPA_V2
    assert server.asked == ["autoscaling/v2"]


async def test_v2beta2_before_kubernetes_1_23() -> None:
    server = _Server("autoscaling/v2beta2")
    assert await discover_hpa(server) is HPA_V2BETA2
    assert server.asked == ["autoscaling/v2"]


async def test_an_error_passes_through_for_the_caller_to_explain() -> None:
    error = ApiError(500, "InternalError", "etcd is down")
    with pytest.raises(ApiError):
        await discover_hpa(_Server(error=error))
