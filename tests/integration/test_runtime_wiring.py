"""The runtime's pieces wired together the way spa.controller does it, against the real API
server: Informer -> WorkQueue -> Controller, behind a LeaderElector, with Events.

The toy reconciler mirrors each ConfigMap labelled ``role=source`` into ``<name>-mirror`` and
asks to be called again at an absolute instant (``Result(requeue_at=...)``), as the SPA
reconciler does at a schedule boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from spa.kube import CONFIGMAP, Conflict, NotFound, connect
from spa.runtime import (
    Controller,
    EventRecorder,
    Informer,
    LeaderElector,
    Result,
    SystemClock,
    WorkQueue,
    instrument_client,
    object_key,
    split_key,
)

pytestmark = pytest.mark.integration


async def test_informer_queue_controller_and_leader_election_together(
    cluster: Any, namespace: str
) -> None:
    client = await connect(kubeconfig=str(cluster.kubeconfig))
    instrument_client(client)
    kube = client
    clock = SystemClock()
    sources = Informer(client, CONFIGMAP, namespaces=[namespace], label_selector="role=source")
    queue = WorkQueue(name="wiring-test", clock=clock)
    sources.add_handler(
        on_add=lambda obj: queue.add(object_key(obj)),
        on_update=lambda _old, new: queue.add(object_key(new)),
        on_delete=lambda obj: queue.add(object_key(obj)),
    )
    recorder = EventRecorder(client)
    calls: list[tuple[str, float]] = []
    boundary = clock.now() + 3.0

    async def reconcile(key: str) -> Result:
        calls.append((key, clock.now()))
        source = sources.store.get(key)
        ns, name = split_key(key)
        assert ns is not None
        if source is None:
            with contextlib.suppress(NotFound):
                await kube.delete(CONFIGMAP, ns, f"{name}-mirror")
            return Result()
        mirror = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-mirror"},
            "data": source.get("data") or {},
        }
        try:
            await kube.create(CONFIGMAP, ns, mirror)
            recorder.normal(source, "Mirrored", f"created {name}-mirror")
        except Conflict:
            await kube.patch(
                CONFIGMAP,
                ns,
                f"{name}-mirror",
                {"data": mirror["data"]},
                patch_type="merge",
                field_manager="wiring-test",
            )
        return Result(requeue_at=boundary) if clock.now() < boundary else Result()

    controller = Controller(
        name="wiring-test",
        queue=queue,
        reconcile=reconcile,
        workers=2,
        list_keys=sources.store.keys,
    )
    informer_task = asyncio.create_task(sources.run())
    await asyncio.wait_for(sources.wait_synced(), 20)
    elector = LeaderElector(
        client,
        namespace=namespace,
        name="wiring-test",
        on_started_leading=controller.run,
    )
    elector_task = asyncio.create_task(elector.run())
    try:
        source = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "app", "labels": {"role": "source"}},
            "data": {"greeting": "hello"},
        }
        await kube.create(CONFIGMAP, namespace, source)

        async def mirror_data() -> dict[str, str] | None:
            try:
                got = await kube.get(CONFIGMAP, namespace, "app-mirror")
            except NotFound:
                return None
            return dict(got.get("data") or {})

        deadline = time.monotonic() + 20
        while await mirror_data() != {"greeting": "hello"}:
            assert time.monotonic() < deadline, "mirror never appeared"
            await asyncio.sleep(0.1)
        assert elector.is_leader

        # The requeue_at instant is honoured: one more reconcile at (not before) the boundary.
        deadline = time.monotonic() + 10
        while not any(t >= boundary for _, t in calls):
            assert time.monotonic() < deadline, "requeue_at never fired"
            await asyncio.sleep(0.05)
        assert all(t < boundary or t - boundary < 1.0 for _, t in calls)

        await kube.delete(CONFIGMAP, namespace, "app")
        deadline = time.monotonic() + 20
        while await mirror_data() is not None:
            assert time.monotonic() < deadline, "mirror never deleted"
            await asyncio.sleep(0.1)
        await recorder.flush()
    finally:
        elector_task.cancel()
        await asyncio.gather(elector_task, return_exceptions=True)
        sources.stop()
        await asyncio.wait_for(informer_task, 10)
        await recorder.close()
        await client.close()
    assert queue.shutting_down  # losing leadership stopped the controller
