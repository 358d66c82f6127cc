"""The fault controls of the local control plane do what reliability tests rely on.

API server restart on the same port, etcd stop/start, etcd compaction (old resourceVersions
answer 410 Gone) and the TCP proxy's cut/stall/refuse.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import urllib3
from kubernetes import client as k8s
from kubernetes import watch

from tests.testenv import ControlPlane
from tests.testenv.fixtures import ProxiedApiServer

pytestmark = pytest.mark.integration


def _configmap(name: str, **data: str) -> k8s.V1ConfigMap:
    return k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name=name), data=data)


def _stale_resource_version(core: k8s.CoreV1Api, namespace: str) -> str:
    """The resourceVersion of a ConfigMap that has been changed since."""
    created = core.create_namespaced_config_map(namespace, _configmap("cm", n="0"))
    assert created.metadata is not None
    old = created.metadata.resource_version
    assert old is not None
    for n in range(1, 4):
        core.patch_namespaced_config_map("cm", namespace, {"data": {"n": str(n)}})
    return old


def _watch_status(core: k8s.CoreV1Api, namespace: str, resource_version: str) -> int:
    """200 if a watch from resource_version is served, else the error code (410 Gone)."""
    try:
        for _ in watch.Watch().stream(  # type: ignore[no-untyped-call]
            core.list_namespaced_config_map,
            namespace,
            resource_version=resource_version,
            timeout_seconds=2,
        ):
            pass
    except k8s.ApiException as exc:
        return int(exc.status)
    return 200


def _exact_list_status(core: k8s.CoreV1Api, namespace: str, resource_version: str) -> int:
    try:
        core.list_namespaced_config_map(
            namespace, resource_version=resource_version, resource_version_match="Exact"
        )
    except k8s.ApiException as exc:
        return int(exc.status)
    return 200


def test_watch_from_before_a_compaction_is_gone(
    control_plane_factory: Callable[..., ControlPlane],
) -> None:
    # Without the watch cache every watch is served by etcd, so compaction alone expires it.
    plane = control_plane_factory(
        controller_manager=False, extra_apiserver_args=["--watch-cache=false"]
    )
    with plane.api_client() as api:
        core = k8s.CoreV1Api(api)
        old = _stale_resource_version(core, "default")
        assert _watch_status(core, "default", old) == 200
        assert plane.compact_etcd() > int(old)
        assert _watch_status(core, "default", old) == 410
        # A fresh list gives a resourceVersion to watch from again.
        fresh = core.list_namespaced_config_map("default").metadata
        assert fresh is not None
        assert fresh.resource_version is not None
        assert _watch_status(core, "default", fresh.resource_version) == 200


def test_compaction_expires_exact_lists_through_the_watch_cache(
    control_plane: ControlPlane, api_client: k8s.ApiClient, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    old = _stale_resource_version(core, namespace)
    control_plane.compact_etcd()
    # The apiserver polls the compaction revision (every 15 s) before dropping snapshots.
    deadline = time.monotonic() + 30
    while (status := _exact_list_status(core, namespace, old)) == 200:
        assert time.monotonic() < deadline, "exact list at a compacted revision still served"
        time.sleep(0.5)
    assert status == 410
    # The watch cache still holds the history: as in production, the watch is served.
    assert _watch_status(core, namespace, old) == 200


def test_expire_resource_versions_makes_old_watches_gone(
    control_plane: ControlPlane, api_client: k8s.ApiClient, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    old = _stale_resource_version(core, namespace)
    control_plane.expire_resource_versions()
    assert _watch_status(core, namespace, old) == 410


def test_apiserver_restart_keeps_data_port_and_clients(
    control_plane: ControlPlane, api_client: k8s.ApiClient, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _configmap("survivor", a="1"))
    server = control_plane.server
    pid = control_plane.apiserver.pid

    control_plane.stop_apiserver()
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        core.read_namespaced_config_map("survivor", namespace, _request_timeout=2)
    control_plane.start_apiserver()

    assert control_plane.server == server
    assert control_plane.apiserver.pid != pid
    # The same ApiClient reconnects; the object came from etcd, not from the old process.
    assert core.read_namespaced_config_map("survivor", namespace).data == {"a": "1"}


def test_etcd_crash_makes_apiserver_unready_and_start_recovers(
    control_plane: ControlPlane, api_client: k8s.ApiClient, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _configmap("kept", a="1"))
    control_plane.kill_etcd()  # a crash; stop_etcd() is the graceful (slower) variant
    try:
        deadline = time.monotonic() + 30
        while control_plane.apiserver_ready():
            assert time.monotonic() < deadline, "apiserver stayed ready without etcd"
            time.sleep(0.5)
    finally:
        control_plane.start_etcd()
    deadline = time.monotonic() + 60
    while not control_plane.apiserver_ready():
        assert time.monotonic() < deadline, "apiserver did not recover after etcd came back"
        time.sleep(0.5)
    assert core.read_namespaced_config_map("kept", namespace).data == {"a": "1"}


def test_proxy_cut_ends_an_open_watch(
    control_plane: ControlPlane, apiserver_proxy: ProxiedApiServer, namespace: str
) -> None:
    with control_plane.api_client(apiserver_proxy.kubeconfig) as api:
        core = k8s.CoreV1Api(api)
        core.list_namespaced_config_map(namespace)
        outcome: dict[str, Any] = {}
        streaming = threading.Event()

        def watch_forever() -> None:
            try:
                for _ in watch.Watch().stream(  # type: ignore[no-untyped-call]
                    core.list_namespaced_config_map, namespace, timeout_seconds=60
                ):
                    # The first event (kube-root-ca.crt's ADDED) means the response is open.
                    streaming.set()
                outcome["ended"] = "cleanly"
            except Exception as exc:
                outcome["ended"] = type(exc).__name__

        thread = threading.Thread(target=watch_forever, daemon=True)
        thread.start()
        # Cut an established stream: a cut before the response would be retried by urllib3.
        assert streaming.wait(timeout=10), "watch did not start"
        assert apiserver_proxy.proxy.cut() >= 1
        thread.join(timeout=10)
        assert not thread.is_alive(), "watch did not notice the cut connection"
        assert outcome["ended"] != "cleanly"
        # New connections go through again.
        core.list_namespaced_config_map(namespace, _request_timeout=5)


def test_proxy_refuse_and_stall_then_resume(
    control_plane: ControlPlane, apiserver_proxy: ProxiedApiServer, namespace: str
) -> None:
    proxy = apiserver_proxy.proxy
    with control_plane.api_client(apiserver_proxy.kubeconfig) as api:
        core = k8s.CoreV1Api(api)
        core.list_namespaced_config_map(namespace)

        proxy.cut()
        proxy.refuse_new()
        began = time.monotonic()
        with pytest.raises(urllib3.exceptions.MaxRetryError) as refused:
            core.list_namespaced_config_map(namespace, _request_timeout=5)
        assert "refused" in str(refused.value).lower()
        assert time.monotonic() - began < 5  # refused at once, not timed out

        proxy.resume()
        core.list_namespaced_config_map(namespace, _request_timeout=5)

        proxy.stall()
        began = time.monotonic()
        with pytest.raises(urllib3.exceptions.MaxRetryError) as hung:
            core.list_namespaced_config_map(namespace, _request_timeout=(2, 2))
        # Connected (TCP to the proxy works) but no answer: a read timeout, after retries.
        assert isinstance(hung.value.reason, urllib3.exceptions.ReadTimeoutError)
        assert time.monotonic() - began >= 2

        proxy.resume()
        proxy.cut()
        core.list_namespaced_config_map(namespace, _request_timeout=5)
