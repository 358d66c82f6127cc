"""Which version of a built-in API the server speaks, asked once for everybody.

Why a module of its own: the HorizontalPodAutoscaler is served as `autoscaling/v2` from
Kubernetes 1.23 and only as `autoscaling/v2beta2` before (docs/install.md), and the controller's
start-up check, the manager and `kubectl spa status` all need the same answer. The choice was
written three times; here it is one function, next to the client that alone talks to the API.
"""

from __future__ import annotations

from spa.kube.protocol import Discovery
from spa.kube.resources import HPA_V2, HPA_V2BETA2, Resource

__all__ = ["discover_hpa"]


async def discover_hpa(client: Discovery) -> Resource:
    """`autoscaling/v2` where the server serves it, else `autoscaling/v2beta2`. The client's
    errors (`ApiUnavailable`, `ApiError`) pass through: each caller explains them its way."""
    return HPA_V2 if await client.serves(HPA_V2.group_version) else HPA_V2BETA2
