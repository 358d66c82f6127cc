"""A blocking face of :class:`spa.kube.KubeClient`, for code that is not on an event loop.

Who needs it: `kubectl spa status` and `kubectl spa plan --from-cluster`, whose reads
(spa/cli/cluster.py) are plain functions, and the test harness and the benchmarks, which drive
the cluster from plain functions and threads while the controller under test runs elsewhere.
The controller itself never uses it. There is no second HTTP implementation: every call is the
asyncio client's, run on a private event loop in one daemon thread and waited for. Calls from
several threads are fine (they are serialised onto that loop, where they run concurrently).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Literal, TypeVar

from spa.kube.client import (
    KubeClient,
    ListResult,
    PatchType,
    RequestHook,
    WatchEvent,
    WatchStream,
)
from spa.kube.config import connect
from spa.kube.discovery import discover_hpa
from spa.kube.resources import Namespace, Resource

__all__ = ["BlockingKubeClient", "BlockingWatchStream", "connect_blocking"]

_T = TypeVar("_T")


class _LoopThread:
    """An event loop running forever in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="spa-kube-blocking", daemon=True
        )
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("a blocking call from the client's own loop would deadlock")
        future: Future[_T] = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        return future.result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


class BlockingWatchStream(Iterator[WatchEvent]):
    """A :class:`~spa.kube.WatchStream` read by blocking iteration; :meth:`close` may be
    called from any thread and ends a blocked ``next()`` at once."""

    def __init__(self, stream: WatchStream, runner: _LoopThread) -> None:
        self._stream = stream
        self._runner = runner

    def __next__(self) -> WatchEvent:
        try:
            return self._runner.run(self._stream.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Stop the stream (safe from any thread, and more than once)."""
        self._runner.loop.call_soon_threadsafe(self._stream.close)

    def __enter__(self) -> BlockingWatchStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class BlockingKubeClient:
    """The methods of :class:`~spa.kube.KubeClient`, blocking; see there for each."""

    def __init__(self, runner: _LoopThread, client: KubeClient) -> None:
        self._runner = runner
        #: The asyncio client underneath (its loop is this object's private one).
        self.client = client

    @property
    def host(self) -> str:
        return self.client.host

    def add_request_hook(self, hook: RequestHook) -> None:
        # Hooks run on the private loop's thread.
        self.client.add_request_hook(hook)

    def close(self) -> None:
        """Close the connections and stop the private loop; later calls fail."""
        try:
            self._runner.run(self.client.close())
        finally:
            self._runner.stop()

    def get(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        *,
        request_timeout: float | None = None,
    ) -> dict[str, Any]:
        return self._runner.run(
            self.client.get(resource, namespace, name, request_timeout=request_timeout)
        )

    def list(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        **options: Any,
    ) -> ListResult:
        return self._runner.run(self.client.list(resource, namespace=namespace, **options))

    def watch(
        self,
        resource: Resource[Namespace],
        *,
        namespace: Namespace | None = None,
        **options: Any,
    ) -> BlockingWatchStream:
        return BlockingWatchStream(
            self._runner.run(self.client.watch(resource, namespace=namespace, **options)),
            self._runner,
        )

    def serves(self, group_version: str) -> bool:
        return self._runner.run(self.client.serves(group_version))

    def discover_hpa(self) -> Resource:
        """The HPA version the server speaks (:func:`spa.kube.discover_hpa`)."""
        return self._runner.run(discover_hpa(self.client))

    def readyz(self, *, request_timeout: float | None = None) -> None:
        self._runner.run(self.client.readyz(request_timeout=request_timeout))

    def create(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        body: Mapping[str, Any],
        **options: Any,
    ) -> dict[str, Any]:
        return self._runner.run(self.client.create(resource, namespace, body, **options))

    def update(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        body: Mapping[str, Any],
        **options: Any,
    ) -> dict[str, Any]:
        return self._runner.run(self.client.update(resource, namespace, name, body, **options))

    def patch(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        body: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        patch_type: PatchType,
        field_manager: str,
        **options: Any,
    ) -> dict[str, Any]:
        return self._runner.run(
            self.client.patch(
                resource,
                namespace,
                name,
                body,
                patch_type=patch_type,
                field_manager=field_manager,
                **options,
            )
        )

    def delete(
        self,
        resource: Resource[Namespace],
        namespace: Namespace,
        name: str,
        *,
        propagation_policy: Literal["Background", "Foreground", "Orphan"] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        return self._runner.run(
            self.client.delete(
                resource, namespace, name, propagation_policy=propagation_policy, **options
            )
        )


def connect_blocking(**options: Any) -> BlockingKubeClient:
    """:func:`spa.kube.connect` for blocking callers (same options)."""
    runner = _LoopThread()
    try:
        client = runner.run(connect(**options))
    except BaseException:
        runner.stop()
        raise
    return BlockingKubeClient(runner, client)
