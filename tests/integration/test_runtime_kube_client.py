"""spa.kube.KubeClient against the real API server of tests/testenv: every verb, every patch
type, error mapping, pagination, discovery, transport failures and the request hook."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Mapping
from typing import Any

import pytest

from spa.kube import (
    CONFIGMAP,
    ApiError,
    ApiUnavailable,
    Conflict,
    DeadlinePassed,
    KubeClient,
    NotFound,
    RequestRecord,
    connect,
    deadline,
)

pytestmark = pytest.mark.integration


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def test_crud_and_error_mapping(kube_client: KubeClient, namespace: str) -> None:
    created = await kube_client.create(CONFIGMAP, namespace, configmap("a", k="1"))
    assert created["metadata"]["namespace"] == namespace
    with pytest.raises(Conflict):
        await kube_client.create(CONFIGMAP, namespace, configmap("a"))
    got = await kube_client.get(CONFIGMAP, namespace, "a")
    assert got["data"] == {"k": "1"}

    # update is a compare-and-swap on resourceVersion.
    got["data"]["k"] = "2"
    updated = await kube_client.update(CONFIGMAP, namespace, "a", got)
    got["data"]["k"] = "3"
    with pytest.raises(Conflict) as stale:
        await kube_client.update(CONFIGMAP, namespace, "a", got)
    assert stale.value.status == 409
    assert updated["data"] == {"k": "2"}

    await kube_client.delete(CONFIGMAP, namespace, "a")
    with pytest.raises(NotFound) as missing:
        await kube_client.get(CONFIGMAP, namespace, "a")
    assert missing.value.reason == "NotFound"
    with pytest.raises(NotFound):
        await kube_client.delete(CONFIGMAP, namespace, "a")


async def test_delete_preconditions(kube_client: KubeClient, namespace: str) -> None:
    """A uid precondition holds across updates of the object and fails only for another object
    under its name; a resourceVersion precondition fails after any update (what made the
    capacity actuator's deletes fail on a status write: docs/schedules.md, "Node capacity")."""
    first = await kube_client.create(CONFIGMAP, namespace, configmap("d", k="1"))
    read = first["metadata"]
    await kube_client.patch(
        CONFIGMAP, namespace, "d", {"data": {"k": "2"}}, patch_type="merge", field_manager="t"
    )
    with pytest.raises(Conflict):
        await kube_client.delete(
            CONFIGMAP, namespace, "d", resource_version=read["resourceVersion"]
        )
    await kube_client.delete(CONFIGMAP, namespace, "d", uid=read["uid"])
    second = await kube_client.create(CONFIGMAP, namespace, configmap("d", k="3"))
    with pytest.raises(Conflict):
        await kube_client.delete(CONFIGMAP, namespace, "d", uid=read["uid"])
    assert (await kube_client.get(CONFIGMAP, namespace, "d"))["data"] == {"k": "3"}
    await kube_client.delete(CONFIGMAP, namespace, "d", uid=second["metadata"]["uid"])


@pytest.mark.parametrize(
    ("patch_type", "body", "expected"),
    [
        ("merge", {"data": {"k": "m", "gone": None}}, {"k": "m"}),
        ("strategic", {"data": {"k": "s"}}, {"k": "s", "gone": "x"}),
        ("json", [{"op": "replace", "path": "/data/k", "value": "j"}], {"k": "j", "gone": "x"}),
        (
            "apply",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "p"},
                "data": {"k": "a"},
            },
            {"k": "a", "gone": "x"},
        ),
    ],
)
async def test_patch_types(
    kube_client: KubeClient, namespace: str, patch_type: Any, body: Any, expected: dict[str, str]
) -> None:
    await kube_client.create(CONFIGMAP, namespace, configmap("p", k="0", gone="x"))
    patched = await kube_client.patch(
        CONFIGMAP,
        namespace,
        "p",
        body,
        patch_type=patch_type,
        field_manager="scheduled-pod-autoscaler",
        force=patch_type == "apply",
    )
    assert patched["data"] == expected
    managers = {entry["manager"] for entry in patched["metadata"]["managedFields"]}
    assert "scheduled-pod-autoscaler" in managers


async def test_list_follows_pagination_and_returns_a_resource_version(
    cluster: Any, namespace: str
) -> None:
    small_pages = await connect(kubeconfig=str(cluster.kubeconfig), page_limit=2)
    records: list[RequestRecord] = []
    small_pages.add_request_hook(records.append)
    for index in range(5):
        await small_pages.create(
            CONFIGMAP, namespace, configmap(f"cm-{index}", team="a" if index % 2 else "b")
        )
    records.clear()
    result = await small_pages.list(CONFIGMAP, namespace=namespace)
    names = sorted(
        item["metadata"]["name"]
        for item in result.items
        if item["metadata"]["name"].startswith("cm-")
    )
    assert names == [f"cm-{i}" for i in range(5)]
    assert int(result.resource_version) > 0
    assert all(item["kind"] == "ConfigMap" and item["apiVersion"] == "v1" for item in result.items)
    assert len([r for r in records if r.verb == "list"]) >= 3  # 5+ items at 2 per page
    await small_pages.close()


async def test_list_transforms_each_page_as_it_arrives(cluster: Any, namespace: str) -> None:
    """A list keeps what the transform returns, and transforms a page's items before it asks
    for the next page: a long list never holds every raw item at once."""
    small_pages = await connect(kubeconfig=str(cluster.kubeconfig), page_limit=2)
    for index in range(5):
        await small_pages.create(CONFIGMAP, namespace, configmap(f"cm-{index}", big="x" * 100))
    pages_requested: list[RequestRecord] = []
    small_pages.add_request_hook(pages_requested.append)
    # For each item transformed: how many pages had been answered by then.
    answered_before: list[int] = []

    def keep_name(item: dict[str, Any]) -> dict[str, Any]:
        answered_before.append(len(pages_requested))
        return {"kind": item["kind"], "metadata": {"name": item["metadata"]["name"]}}

    try:
        result = await small_pages.list(CONFIGMAP, namespace=namespace, transform=keep_name)
    finally:
        await small_pages.close()
    names = [item["metadata"]["name"] for item in result.items]
    assert {f"cm-{index}" for index in range(5)} <= set(names)
    assert result.items == [{"kind": "ConfigMap", "metadata": {"name": name}} for name in names]
    # The items of page n are transformed once n pages are answered, not all at the end.
    assert answered_before == [1 + index // 2 for index in range(len(names))]
    assert len(pages_requested) == (len(names) + 1) // 2


async def test_a_new_token_is_sent_from_the_next_request_on(cluster: Any, namespace: str) -> None:
    """The client builds its headers once per mapping the credentials hand out: a refreshed
    token is used at once, a revoked one fails at once."""
    server, ca = cluster.server_and_ca()
    good = cluster.service_account_token(namespace, "reader")

    class Rotating:
        current: Mapping[str, str] = {"Authorization": f"Bearer {good}"}

        async def headers(self) -> Mapping[str, str]:
            return self.current

    credentials = Rotating()
    client = KubeClient(
        server, credentials=credentials, ssl_context=ssl.create_default_context(cafile=str(ca))
    )
    try:
        await client.readyz()
        credentials.current = {"Authorization": "Bearer not-a-token"}
        with pytest.raises(ApiError) as refused:
            await client.readyz()
        assert refused.value.status == 401
        credentials.current = {"Authorization": f"Bearer {good}"}
        await client.readyz()
    finally:
        await client.close()


async def test_discovery_serves(kube_client: KubeClient) -> None:
    assert await kube_client.serves("v1")
    assert await kube_client.serves("autoscaling/v2")
    assert await kube_client.serves("coordination.k8s.io/v1")
    # v2beta2 was removed in Kubernetes 1.26; the reconciler falls back only when needed.
    assert not await kube_client.serves("autoscaling/v2beta2")
    assert not await kube_client.serves("no.such.group/v1")


async def test_request_hook_counts_verbs_resources_and_codes(
    kube_client: KubeClient, namespace: str
) -> None:
    records: list[RequestRecord] = []
    kube_client.add_request_hook(records.append)
    await kube_client.create(CONFIGMAP, namespace, configmap("h"))
    with pytest.raises(NotFound):
        await kube_client.get(CONFIGMAP, namespace, "nope")
    assert [(r.verb, r.resource, r.code) for r in records] == [
        ("create", "configmaps", 201),
        ("get", "configmaps", 404),
    ]
    assert all(r.duration >= 0 for r in records)


async def test_unreachable_server_is_api_unavailable(apiserver_proxy: Any) -> None:
    client = await connect(kubeconfig=str(apiserver_proxy.kubeconfig), request_timeout=5)
    records: list[RequestRecord] = []
    client.add_request_hook(records.append)
    apiserver_proxy.proxy.refuse_new()
    try:
        with pytest.raises(ApiUnavailable):
            await client.list(CONFIGMAP, namespace="default")
    finally:
        apiserver_proxy.proxy.resume()
    assert records[-1].code == 0
    assert (await client.list(CONFIGMAP, namespace="default")).resource_version
    await client.close()


async def test_watch_stream_delivers_events_and_close_unblocks_it(
    kube_client: KubeClient, namespace: str
) -> None:
    listed = await kube_client.list(CONFIGMAP, namespace=namespace)
    stream = await kube_client.watch(
        CONFIGMAP, namespace=namespace, resource_version=listed.resource_version, timeout_seconds=60
    )
    await kube_client.create(CONFIGMAP, namespace, configmap("w"))

    def ours(event: Any) -> bool:
        # The namespace is new: kube-controller-manager may add its kube-root-ca.crt meanwhile.
        return bool(event.type != "BOOKMARK" and event.object["metadata"]["name"] == "w")

    first = await anext(event async for event in stream if ours(event))
    assert first.type == "ADDED"
    # close() from another task ends a pending read promptly.
    asyncio.get_running_loop().call_later(0.3, stream.close)
    assert [event async for event in stream if ours(event)] == []


async def test_a_closed_client_refuses_requests_without_opening_connections(
    cluster: Any, namespace: str
) -> None:
    client = await connect(kubeconfig=str(cluster.kubeconfig))
    await client.create(CONFIGMAP, namespace, configmap("before-close"))
    pools = client.connector._conns  # idle pooled connections, by host
    assert len(pools) == 1
    await client.close()
    assert len(pools) == 0
    with pytest.raises(ApiUnavailable, match="closed"):
        await client.get(CONFIGMAP, namespace, "before-close")
    # A request after close used to open a new pool that nobody would ever close.
    assert len(pools) == 0


async def test_connections_use_tcp_keepalive(kube_client: KubeClient, namespace: str) -> None:
    """So a watch on a silently dead connection ends within minutes, not at its read timeout."""
    await kube_client.create(CONFIGMAP, namespace, configmap("keepalive"))
    (pool,) = kube_client.connector._conns.values()  # idle pooled connections, by host
    protocol, _ = pool[0]
    assert protocol.transport is not None  # an idle pooled connection is open
    sock = protocol.transport.get_extra_info("socket")
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 30
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 15
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 9


async def test_writes_under_a_deadline_carry_it_to_the_server_and_end_with_it(
    apiserver_proxy: Any, namespace: str
) -> None:
    """The leader's write fence (spa/runtime/fence.py) on the real API server: it accepts the
    `timeout` a deadline adds (it answers 400 to one it cannot parse); a request stuck on the
    way ends at the deadline, not at the 30 s request timeout; and once the deadline has passed
    nothing is sent."""
    client = await connect(kubeconfig=str(apiserver_proxy.kubeconfig))
    records: list[RequestRecord] = []
    client.add_request_hook(records.append)
    try:
        with deadline(5.0):
            await client.create(CONFIGMAP, namespace, configmap("fenced", step="1"))
            patched = await client.patch(
                CONFIGMAP,
                namespace,
                "fenced",
                {"data": {"step": "2"}},
                patch_type="merge",
                field_manager="test",
            )
        assert patched["data"] == {"step": "2"}
        apiserver_proxy.proxy.stall()
        started = asyncio.get_running_loop().time()
        with deadline(1.5), pytest.raises(ApiUnavailable):
            await client.patch(
                CONFIGMAP,
                namespace,
                "fenced",
                {"data": {"step": "3"}},
                patch_type="merge",
                field_manager="test",
            )
        assert asyncio.get_running_loop().time() - started < 5
        apiserver_proxy.proxy.resume()
        sent = len(records)
        with deadline(0.01):
            await asyncio.sleep(0.05)
            with pytest.raises(DeadlinePassed):
                await client.get(CONFIGMAP, namespace, "fenced")
        assert len(records) == sent
    finally:
        apiserver_proxy.proxy.resume()
        await client.close()
