"""spa.kube.KubeClient against the real API server of tests/testenv: every verb, every patch
type, error mapping, pagination, discovery, transport failures and the request hook."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from spa.kube import (
    CONFIGMAP,
    ApiUnavailable,
    Conflict,
    KubeClient,
    NotFound,
    RequestRecord,
    connect,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def kube(cluster: Any) -> Iterator[KubeClient]:
    client = connect(kubeconfig=str(cluster.kubeconfig))
    yield client
    client.close()


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_crud_and_error_mapping(kube: KubeClient, namespace: str) -> None:
    created = kube.create(CONFIGMAP, namespace, configmap("a", k="1"))
    assert created["metadata"]["namespace"] == namespace
    with pytest.raises(Conflict):
        kube.create(CONFIGMAP, namespace, configmap("a"))
    got = kube.get(CONFIGMAP, namespace, "a")
    assert got["data"] == {"k": "1"}

    # update is a compare-and-swap on resourceVersion.
    got["data"]["k"] = "2"
    updated = kube.update(CONFIGMAP, namespace, "a", got)
    got["data"]["k"] = "3"
    with pytest.raises(Conflict) as stale:
        kube.update(CONFIGMAP, namespace, "a", got)
    assert stale.value.status == 409
    assert updated["data"] == {"k": "2"}

    kube.delete(CONFIGMAP, namespace, "a")
    with pytest.raises(NotFound) as missing:
        kube.get(CONFIGMAP, namespace, "a")
    assert missing.value.reason == "NotFound"
    with pytest.raises(NotFound):
        kube.delete(CONFIGMAP, namespace, "a")


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
def test_patch_types(
    kube: KubeClient, namespace: str, patch_type: Any, body: Any, expected: dict[str, str]
) -> None:
    kube.create(CONFIGMAP, namespace, configmap("p", k="0", gone="x"))
    patched = kube.patch(
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


def test_list_follows_pagination_and_returns_a_resource_version(
    cluster: Any, namespace: str
) -> None:
    from spa.kube import KubeClient, api_client_for

    small_pages = KubeClient(api_client_for(kubeconfig=str(cluster.kubeconfig)), page_limit=2)
    records: list[RequestRecord] = []
    small_pages.add_request_hook(records.append)
    for index in range(5):
        small_pages.create(
            CONFIGMAP, namespace, configmap(f"cm-{index}", team="a" if index % 2 else "b")
        )
    records.clear()
    result = small_pages.list(CONFIGMAP, namespace=namespace)
    names = sorted(
        item["metadata"]["name"]
        for item in result.items
        if item["metadata"]["name"].startswith("cm-")
    )
    assert names == [f"cm-{i}" for i in range(5)]
    assert int(result.resource_version) > 0
    assert all(item["kind"] == "ConfigMap" and item["apiVersion"] == "v1" for item in result.items)
    assert len([r for r in records if r.verb == "list"]) >= 3  # 5+ items at 2 per page
    small_pages.close()


def test_discovery_serves(kube: KubeClient) -> None:
    assert kube.serves("v1")
    assert kube.serves("autoscaling/v2")
    assert kube.serves("coordination.k8s.io/v1")
    # v2beta2 was removed in Kubernetes 1.26; the reconciler falls back only when needed.
    assert not kube.serves("autoscaling/v2beta2")
    assert not kube.serves("no.such.group/v1")


def test_request_hook_counts_verbs_resources_and_codes(kube: KubeClient, namespace: str) -> None:
    records: list[RequestRecord] = []
    kube.add_request_hook(records.append)
    kube.create(CONFIGMAP, namespace, configmap("h"))
    with pytest.raises(NotFound):
        kube.get(CONFIGMAP, namespace, "nope")
    assert [(r.verb, r.resource, r.code) for r in records] == [
        ("create", "configmaps", 201),
        ("get", "configmaps", 404),
    ]
    assert all(r.duration >= 0 for r in records)


def test_unreachable_server_is_api_unavailable(apiserver_proxy: Any) -> None:
    client = connect(kubeconfig=str(apiserver_proxy.kubeconfig), request_timeout=5)
    records: list[RequestRecord] = []
    client.add_request_hook(records.append)
    apiserver_proxy.proxy.refuse_new()
    try:
        with pytest.raises(ApiUnavailable):
            client.list(CONFIGMAP, namespace="default")
    finally:
        apiserver_proxy.proxy.resume()
    assert records[-1].code == 0
    assert client.list(CONFIGMAP, namespace="default").resource_version
    client.close()


def test_watch_stream_delivers_events_and_close_unblocks_it(
    kube: KubeClient, namespace: str
) -> None:
    import threading

    listed = kube.list(CONFIGMAP, namespace=namespace)
    stream = kube.watch(
        CONFIGMAP, namespace=namespace, resource_version=listed.resource_version, timeout_seconds=60
    )
    kube.create(CONFIGMAP, namespace, configmap("w"))
    first = next(stream)
    assert first.type == "ADDED"
    assert first.object["metadata"]["name"] == "w"
    # close() from another thread ends a blocked iteration promptly.
    threading.Timer(0.3, stream.close).start()
    assert [e for e in stream if e.type != "BOOKMARK"] == []


def test_a_closed_client_refuses_requests_without_opening_connections(
    cluster: Any, namespace: str
) -> None:
    client = connect(kubeconfig=str(cluster.kubeconfig))
    client.create(CONFIGMAP, namespace, configmap("before-close"))
    pools = client._api.rest_client.pool_manager.pools
    assert len(pools) == 1
    client.close()
    assert len(pools) == 0
    with pytest.raises(ApiUnavailable, match="closed"):
        client.get(CONFIGMAP, namespace, "before-close")
    # A request after close used to open a new pool that nobody would ever close.
    assert len(pools) == 0


def test_connections_use_tcp_keepalive(kube: KubeClient, namespace: str) -> None:
    """So a watch on a silently dead connection ends within minutes, not at its read timeout."""
    kube.create(CONFIGMAP, namespace, configmap("keepalive"))
    pools = kube._api.rest_client.pool_manager.pools
    (key,) = pools.keys()
    pool = pools[key]
    connection = pool.pool.get_nowait()
    pool.pool.put_nowait(connection)
    sock = connection.sock
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 30
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 15
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 9
