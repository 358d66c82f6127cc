"""The thread pool that runs the blocking :class:`spa.kube.KubeClient` calls.

Why a dedicated pool: every informer scope keeps one thread busy for the whole life of its
watch, and asyncio's default executor has only ``cpu_count + 4`` threads (6 on a 2-core
machine), so watches could starve the reconcile workers and leader election of threads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

__all__ = ["new_executor"]


def new_executor(*, watches: int, workers: int, spare: int = 4) -> ThreadPoolExecutor:
    """A pool with one thread per long-lived watch, one per concurrent worker call, and
    ``spare`` for lists, leader election and events."""
    return ThreadPoolExecutor(
        max_workers=max(1, watches + workers + spare), thread_name_prefix="spa-kube"
    )
