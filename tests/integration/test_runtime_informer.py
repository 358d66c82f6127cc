"""Informer against the real API server: list+watch, a watch cut mid-stream by the fault proxy,
and a 410 Gone after an etcd compaction.

Correctness is judged from the handler calls: every write must show up exactly once (no loss,
no duplicate), in order, whatever happened to the connection in between.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from spa.kube import CONFIGMAP, BlockingKubeClient, RequestRecord, connect, connect_blocking
from spa.runtime import Informer

pytestmark = pytest.mark.integration


class Changes:
    """Handler calls as ``(verb, name, data value)`` tuples."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, str]] = []

    def attach(self, informer: Informer) -> None:
        informer.add_handler(
            on_add=lambda o: self.log.append(("add", *self._describe(o))),
            on_update=lambda _old, new: self.log.append(("update", *self._describe(new))),
            on_delete=lambda o: self.log.append(("delete", *self._describe(o))),
        )

    @staticmethod
    def _describe(obj: dict[str, Any]) -> tuple[str, str]:
        return obj["metadata"]["name"], (obj.get("data") or {}).get("v", "")


async def eventually(condition: Callable[[], bool], within: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {within:.0f}s")
        await asyncio.sleep(0.02)


@pytest.fixture
def writer(cluster: Any) -> Iterator[BlockingKubeClient]:
    client = connect_blocking(kubeconfig=str(cluster.kubeconfig))
    yield client
    client.close()


def cm(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"v": value},
    }


def set_value(client: BlockingKubeClient, namespace: str, name: str, value: str) -> None:
    client.patch(
        CONFIGMAP, namespace, name, {"data": {"v": value}}, patch_type="merge", field_manager="test"
    )


@pytest.fixture
async def running() -> AsyncIterator[Callable[[Informer], None]]:
    started: list[tuple[Informer, asyncio.Task[None]]] = []

    def start(informer: Informer) -> None:
        started.append((informer, asyncio.create_task(informer.run())))

    yield start
    for informer, task in started:
        informer.stop()
        await asyncio.wait_for(task, timeout=10)


async def test_list_and_watch_see_adds_updates_and_deletes(
    cluster: Any, namespace: str, writer: BlockingKubeClient, running: Any
) -> None:
    writer.create(CONFIGMAP, namespace, cm("before", "0"))
    reader = await connect(kubeconfig=str(cluster.kubeconfig))
    informer = Informer(reader, CONFIGMAP, namespaces=[namespace])
    changes = Changes()
    changes.attach(informer)
    running(informer)
    await asyncio.wait_for(informer.wait_synced(), 20)
    assert informer.store.get(f"{namespace}/before") is not None

    writer.create(CONFIGMAP, namespace, cm("a", "1"))
    set_value(writer, namespace, "a", "2")
    writer.delete(CONFIGMAP, namespace, "before")
    expected = [
        ("add", "before", "0"),
        ("add", "a", "1"),
        ("update", "a", "2"),
        ("delete", "before", "0"),
    ]
    # kube-root-ca.crt is published into every namespace by the controller manager.
    relevant = lambda: [c for c in changes.log if c[1] != "kube-root-ca.crt"]  # noqa: E731
    await eventually(lambda: len(relevant()) >= len(expected))
    await asyncio.sleep(0.5)  # nothing more may arrive
    assert relevant() == expected
    assert informer.store.get(f"{namespace}/a")["data"] == {"v": "2"}  # type: ignore[index]
    assert f"{namespace}/before" not in informer.store
    await reader.close()


async def test_watch_cut_mid_stream_resumes_without_loss_or_duplicates(
    apiserver_proxy: Any,
    namespace: str,
    writer: BlockingKubeClient,
    running: Any,
) -> None:
    reader = await connect(kubeconfig=str(apiserver_proxy.kubeconfig))
    requests: list[RequestRecord] = []
    reader.add_request_hook(requests.append)
    informer = Informer(
        reader,
        CONFIGMAP,
        namespaces=[namespace],
        backoff_initial=0.05,
        backoff_max=0.5,
    )
    changes = Changes()
    changes.attach(informer)
    running(informer)
    await asyncio.wait_for(informer.wait_synced(), 20)

    expected: list[tuple[str, str, str]] = []
    cuts = 0
    for round_ in range(5):
        writer.create(CONFIGMAP, namespace, cm(f"cm-{round_}", "1"))
        expected.append(("add", f"cm-{round_}", "1"))
        key = f"{namespace}/cm-{round_}"
        await eventually(lambda key=key: informer.store.get(key) is not None)  # type: ignore[misc]
        # Break the watch, and keep it broken while more writes happen.
        apiserver_proxy.proxy.refuse_new()
        cuts += apiserver_proxy.proxy.cut()
        set_value(writer, namespace, f"cm-{round_}", "2")
        expected.append(("update", f"cm-{round_}", "2"))
        if round_ % 2:
            writer.delete(CONFIGMAP, namespace, f"cm-{round_}")
            expected.append(("delete", f"cm-{round_}", "2"))
        await asyncio.sleep(0.3)
        apiserver_proxy.proxy.resume()

    relevant = lambda: [c for c in changes.log if c[1] != "kube-root-ca.crt"]  # noqa: E731
    await eventually(lambda: len(relevant()) >= len(expected))
    await asyncio.sleep(0.5)
    assert relevant() == expected
    assert cuts >= 5
    # It resumed from its resourceVersion each time: one list, several watches.
    assert len([r for r in requests if r.verb == "list"]) == 1
    assert len([r for r in requests if r.verb == "watch"]) >= 6
    await reader.close()


async def test_gone_after_compaction_relists_and_emits_the_differences(
    control_plane_factory: Any, tmp_path: Path, running: Any
) -> None:
    from tests.testenv import TCPProxy

    # Without the watch cache a watch is served by etcd itself, so compacting etcd makes the
    # informer's remembered resourceVersion too old: the API server answers 410 Gone.
    plane = control_plane_factory(
        controller_manager=False, extra_apiserver_args=["--watch-cache=false"]
    )
    writer = connect_blocking(kubeconfig=str(plane.kubeconfig))
    namespace = "default"
    for name in ("keep", "change", "remove"):
        writer.create(CONFIGMAP, namespace, cm(name, "1"))

    with TCPProxy("127.0.0.1", plane.ports.apiserver) as proxy:
        kubeconfig = plane.admin_kubeconfig_for(proxy.url, tmp_path / "proxied.kubeconfig")
        reader = await connect(kubeconfig=str(kubeconfig))
        requests: list[RequestRecord] = []
        reader.add_request_hook(requests.append)
        informer = Informer(
            reader,
            CONFIGMAP,
            namespaces=[namespace],
            backoff_initial=0.05,
            backoff_max=0.5,
        )
        changes = Changes()
        changes.attach(informer)
        running(informer)
        await asyncio.wait_for(informer.wait_synced(), 20)
        synced_rv = informer.resource_version(namespace)
        initial = sorted(changes.log)
        assert [c for c in initial if c[1] != "kube-root-ca.crt"] == [
            ("add", "change", "1"),
            ("add", "keep", "1"),
            ("add", "remove", "1"),
        ]

        proxy.refuse_new()
        proxy.cut()
        set_value(writer, namespace, "change", "2")
        writer.delete(CONFIGMAP, namespace, "remove")
        writer.create(CONFIGMAP, namespace, cm("new", "1"))
        plane.compact_etcd()
        proxy.resume()

        await eventually(lambda: len(changes.log) >= len(initial) + 3)
        await asyncio.sleep(0.5)
        after = sorted(changes.log[len(initial) :])
        assert after == [("add", "new", "1"), ("delete", "remove", "1"), ("update", "change", "2")]
        assert len([r for r in requests if r.verb == "list"]) == 2  # the initial list + the relist
        assert informer.resource_version(namespace) != synced_rv
        await reader.close()
    writer.close()
