"""Client benchmark: the CPU this process spends per API request, by HTTP stack.

Why: docs/performance.md measured 2.5-3 ms of controller CPU per write, most of it in the
client's request path. This compares, against a real API server, the stacks the client can
be built on (docs/architecture.md, "The client"):

* ``urllib3``: the ``kubernetes`` package's blocking ``ApiClient`` (``param_serialize`` +
  ``call_api``, JSON decoded by us), the path of the blocking client before issue 10, with
  ``--threads`` threads;
* ``kubernetes.aio``: the same package's asyncio ``ApiClient`` (aiohttp underneath), driven
  the same raw way, ``--threads`` concurrent tasks;
* ``aiohttp``: a bare ``aiohttp.ClientSession`` with the TLS and auth settings that
  ``kubernetes.aio.config`` loaded, ``--threads`` concurrent tasks;
* ``spa.kube``: this checkout's ``spa.kube`` client, whatever it is built on.

For each: ``--patches`` JSON merge patches of ConfigMaps (CPU seconds of this process per
patch, and patches per second), then a watch that receives ``--patches`` MODIFIED events
written by a child process (so the writer's CPU is not counted): CPU per event.

    python bench/client.py                      # starts its own control plane
    python bench/client.py --kubeconfig FILE    # or uses a running one (make cluster)
    python bench/client.py --smoke              # 20 patches, one round: every stack must work
    python bench/client.py --kubeconfig FILE --stacks spa.kube --spa-src /tmp/before
                                                # spa.kube of another tree (a before/after)

`--once patch|watch` measures nothing itself: it makes `--patches` patches (or reads as many
watch events) with `spa.kube` and exits, for an instruction count of the whole process taken
from outside, where two counts (say 100 and 600) difference out the start-up:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        python bench/client.py --kubeconfig FILE --spa-src TREE --once patch --patches 600

`--loop uvloop` runs the spa.kube stack (its patches and its watch, `--once` too) on uvloop's
event loop instead of asyncio's, for the comparison of docs/performance.md, "2026-11-26:
uvloop (issue 24)"; the other stacks keep asyncio's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import aiohttp  # noqa: E402
from kubernetes import client as k8s_client  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes.aio import client as aio_client  # noqa: E402
from kubernetes.aio import config as aio_config  # noqa: E402
from kubernetes.aio.client import rest as aio_rest  # noqa: E402

from bench.measured import NOTHING_MEASURED, one_or_more_of, positive_int  # noqa: E402
from bench.plane import on_a_cluster  # noqa: E402
from bench.report import conditions, log, middle, smoke_verdict, write_json  # noqa: E402

NAMESPACE = "bench-client"
MERGE = "application/merge-patch+json"
# The stacks measure() compares (its patchers and watchers), which `--smoke` requires.
PATCH_STACKS = ("urllib3", "kubernetes.aio", "aiohttp", "spa.kube")
WATCH_STACKS = ("urllib3", "aiohttp", "spa.kube")
_T = TypeVar("_T")


def names(count: int) -> list[str]:
    return [f"cm-{index % 200}" for index in range(count)]


def patch_path(name: str) -> str:
    return f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}?fieldManager=bench"


# -- the candidates: one patch each, and one watch --------------------------------------------


def sync_api(kubeconfig: str) -> Any:
    configuration = k8s_client.Configuration()
    k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
        config_file=kubeconfig, client_configuration=configuration, persist_config=False
    )
    configuration.connection_pool_maxsize = 32
    return k8s_client.ApiClient(configuration)


def urllib3_request(api: Any, method: str, path: str, body: Any, timeout: Any = 30.0) -> Any:
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = MERGE if method == "PATCH" else "application/json"
    method_, url, header_params, serialized, post = api.param_serialize(
        method=method,
        resource_path=path,
        header_params=headers,
        body=body,
        auth_settings=["BearerToken"],
    )
    return api.call_api(
        method_,
        url,
        header_params=header_params,
        body=serialized,
        post_params=post,
        _request_timeout=timeout,
    ).response


def run_urllib3(kubeconfig: str, count: int, threads: int, offset: int = 0) -> tuple[float, float]:
    api = sync_api(kubeconfig)

    def patch(item: tuple[int, str]) -> None:
        index, name = item
        body = {"data": {"v": str(offset + index)}}
        response = urllib3_request(api, "PATCH", patch_path(name), body)
        assert response.status == 200, response.data
        json.loads(response.data)

    return _timed_threads(patch, list(enumerate(names(count))), threads, api.close)


def watch_urllib3(kubeconfig: str, count: int, start: Callable[[str], None]) -> float:
    api = sync_api(kubeconfig)
    rv = json.loads(
        urllib3_request(api, "GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps", None).data
    )["metadata"]["resourceVersion"]
    response = urllib3_request(
        api,
        "GET",
        f"/api/v1/namespaces/{NAMESPACE}/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=600",
        None,
        timeout=(10, 600),
    )
    start(rv)
    began = time.process_time()
    seen = 0
    pending = b""
    for chunk in response.stream(amt=None, decode_content=True):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.strip():
                event = json.loads(line)
                seen += event["type"] == "MODIFIED"
        if seen >= count:
            break
    used = time.process_time() - began
    response.close()
    api.close()
    return used


async def aio_config_for(kubeconfig: str) -> Any:
    configuration = aio_client.Configuration()
    await aio_config.load_kube_config(  # type: ignore[no-untyped-call]
        config_file=kubeconfig, client_configuration=configuration, persist_config=False
    )
    configuration.connection_pool_maxsize = 32
    return configuration


async def run_kubernetes_aio(kubeconfig: str, count: int, tasks: int) -> tuple[float, float]:
    api = aio_client.ApiClient(await aio_config_for(kubeconfig))

    async def patch(index: int, name: str) -> None:
        method, url, headers, body, post = await api.param_serialize(
            method="PATCH",
            resource_path=patch_path(name),
            header_params={"Accept": "application/json", "Content-Type": MERGE},
            body={"data": {"v": str(index)}},
            auth_settings=["BearerToken"],
        )
        response = await api.call_api(
            method, url, header_params=headers, body=body, post_params=post, _request_timeout=30
        )
        data = await response.read()  # type: ignore[no-untyped-call]
        assert response.status == 200, data
        json.loads(data)

    try:
        return await _timed_tasks(patch, names(count), tasks)
    finally:
        await api.close()  # type: ignore[no-untyped-call]


async def aiohttp_session(kubeconfig: str) -> tuple[aiohttp.ClientSession, Any]:
    configuration = await aio_config_for(kubeconfig)
    ssl_context = aio_rest.RESTClientObject(configuration).ssl_context
    session = aiohttp.ClientSession(
        base_url=configuration.host,
        connector=aiohttp.TCPConnector(limit=32, ssl=ssl_context),
    )
    return session, configuration


async def auth_headers(configuration: Any) -> dict[str, str]:
    settings = await configuration.auth_settings()
    token = settings.get("BearerToken")
    return {token["key"]: token["value"]} if token else {}


async def run_aiohttp(kubeconfig: str, count: int, tasks: int) -> tuple[float, float]:
    session, configuration = await aiohttp_session(kubeconfig)

    async def patch(index: int, name: str) -> None:
        headers = {"Accept": "application/json", "Content-Type": MERGE}
        headers.update(await auth_headers(configuration))
        async with session.patch(
            patch_path(name),
            data=json.dumps({"data": {"v": str(index)}}),
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=30),
        ) as response:
            data = await response.read()
            assert response.status == 200, data
            json.loads(data)

    try:
        return await _timed_tasks(patch, names(count), tasks)
    finally:
        await session.close()


async def watch_aiohttp(kubeconfig: str, count: int, start: Callable[[str], None]) -> float:
    session, configuration = await aiohttp_session(kubeconfig)
    try:
        async with session.get(
            f"/api/v1/namespaces/{NAMESPACE}/configmaps", headers=await auth_headers(configuration)
        ) as listed:
            rv = (await listed.json())["metadata"]["resourceVersion"]
        async with session.get(
            f"/api/v1/namespaces/{NAMESPACE}/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=600",
            headers=await auth_headers(configuration),
            timeout=aiohttp.ClientTimeout(total=None, sock_read=600),
        ) as response:
            start(rv)
            began = time.process_time()
            seen = 0
            pending = b""
            async for chunk in response.content.iter_any():
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        seen += json.loads(line)["type"] == "MODIFIED"
                if seen >= count:
                    break
            return time.process_time() - began
    finally:
        await session.close()


async def run_spa_kube(kubeconfig: str, count: int, tasks: int) -> tuple[float, float]:
    from spa.kube import CONFIGMAP, connect
    from spa.runtime.metrics import instrument_client

    client = await connect(kubeconfig=kubeconfig)
    instrument_client(client)  # as `spa run` does: the request metrics are on its path

    async def patch(index: int, name: str) -> None:
        await client.patch(
            CONFIGMAP,
            NAMESPACE,
            name,
            {"data": {"v": str(index)}},
            patch_type="merge",
            field_manager="bench",
        )

    try:
        return await _timed_tasks(patch, names(count), tasks)
    finally:
        await client.close()


async def watch_spa_kube(kubeconfig: str, count: int, start: Callable[[str], None]) -> float:
    from spa.kube import CONFIGMAP, connect
    from spa.runtime.metrics import instrument_client

    client = await connect(kubeconfig=kubeconfig)
    instrument_client(client)
    try:
        rv = (await client.list(CONFIGMAP, namespace=NAMESPACE)).resource_version
        async with await client.watch(
            CONFIGMAP, namespace=NAMESPACE, resource_version=rv, timeout_seconds=600
        ) as stream:
            start(rv)
            began = time.process_time()
            seen = 0
            async for event in stream:
                seen += event.type == "MODIFIED"
                if seen >= count:
                    break
            return time.process_time() - began
    finally:
        await client.close()


# -- timing -------------------------------------------------------------------------------------


def _timed_threads(
    call: Callable[[Any], None], items: list[Any], threads: int, close: Callable[[], None]
) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(call, items))
    result = time.process_time() - cpu, time.monotonic() - wall
    close()
    return result


async def _timed_tasks(
    call: Callable[[int, str], Awaitable[None]], items: list[str], tasks: int
) -> tuple[float, float]:
    queue = list(enumerate(items))
    queue.reverse()

    async def worker() -> None:
        while queue:
            index, name = queue.pop()
            await call(index, name)

    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    return time.process_time() - cpu, time.monotonic() - wall


def writer(kubeconfig: str, count: int, offset: int) -> subprocess.Popen[bytes]:
    """A child process that patches ``count`` ConfigMaps (its CPU is not ours)."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); import bench.client as b; "
        f"b.run_urllib3({kubeconfig!r}, {count}, 8, offset={offset})"
    )
    return subprocess.Popen([sys.executable, "-c", code])


def ensure_objects(kubeconfig: str, count: int) -> None:
    """The namespace and the ConfigMaps that `count` patches touch (at most 200)."""
    api = sync_api(kubeconfig)
    urllib3_request(api, "POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    for name in sorted(set(names(count))):
        urllib3_request(
            api,
            "POST",
            f"/api/v1/namespaces/{NAMESPACE}/configmaps",
            {"metadata": {"name": name}, "data": {"v": "0"}},
        )
    api.close()


def measure(
    kubeconfig: str, count: int, threads: int, rounds: int, stacks: tuple[str, ...] = PATCH_STACKS
) -> dict[str, Any]:
    ensure_objects(kubeconfig, count)
    patchers: dict[str, Callable[[], tuple[float, float]]] = {
        "urllib3": lambda: run_urllib3(kubeconfig, count, threads),
        "kubernetes.aio": lambda: asyncio.run(run_kubernetes_aio(kubeconfig, count, threads)),
        "aiohttp": lambda: asyncio.run(run_aiohttp(kubeconfig, count, threads)),
        "spa.kube": lambda: _spa_kube_patches(kubeconfig, count, threads),
    }
    watchers: dict[str, Callable[[Callable[[str], None]], float]] = {
        "urllib3": lambda start: watch_urllib3(kubeconfig, count, start),
        "aiohttp": lambda start: asyncio.run(watch_aiohttp(kubeconfig, count, start)),
        "spa.kube": lambda start: _spa_kube_watch(kubeconfig, count, start),
    }
    assert tuple(patchers) == PATCH_STACKS
    assert tuple(watchers) == WATCH_STACKS
    patchers = {name: run for name, run in patchers.items() if name in stacks}
    watchers = {name: watch for name, watch in watchers.items() if name in stacks}
    results: dict[str, Any] = {"patch": {}, "watch": {}}
    offset = 0
    for round_ in range(rounds):
        for name, run in patchers.items():
            offset += count
            try:
                cpu, wall = run()
            except Exception as error:  # e.g. spa.kube still blocking on an older checkout
                log(f"{name}: {error!r}")
                continue
            results["patch"].setdefault(name, []).append(
                {"cpu_ms_per_request": 1000 * cpu / count, "requests_per_second": count / wall}
            )
            rate = count / wall
            log(f"round {round_} {name}: {1000 * cpu / count:.2f} ms CPU/patch, {rate:.0f}/s")
        for name, watch in watchers.items():
            children: list[subprocess.Popen[bytes]] = []
            offset += count

            def start(_rv: str, offset: int = offset, children: list[Any] = children) -> None:
                children.append(writer(kubeconfig, count, offset))

            try:
                cpu = watch(start)
            except Exception as error:
                log(f"watch {name}: {error!r}")
                continue
            finally:
                for child in children:
                    child.wait()
            results["watch"].setdefault(name, []).append({"cpu_ms_per_event": 1000 * cpu / count})
            log(f"round {round_} watch {name}: {1000 * cpu / count:.3f} ms CPU/event")
    return results


# The event loop of the spa.kube stack (`--loop`): None for asyncio's default.
LOOPS = ("asyncio", "uvloop")
_spa_kube_loop: Callable[[], asyncio.AbstractEventLoop] | None = None


def use_loop(name: str) -> None:
    """The spa.kube stack runs on this event loop from now on: "asyncio" or "uvloop"."""
    global _spa_kube_loop
    if name == "uvloop":
        import uvloop

        _spa_kube_loop = uvloop.new_event_loop
    else:
        _spa_kube_loop = None


def _run_spa_kube(coroutine: Coroutine[Any, Any, _T]) -> _T:
    with asyncio.Runner(loop_factory=_spa_kube_loop) as runner:
        return runner.run(coroutine)


def _spa_kube_patches(kubeconfig: str, count: int, threads: int) -> tuple[float, float]:
    return _run_spa_kube(run_spa_kube(kubeconfig, count, threads))


def _spa_kube_watch(kubeconfig: str, count: int, start: Callable[[str], None]) -> float:
    return _run_spa_kube(watch_spa_kube(kubeconfig, count, start))


def once(kubeconfig: str, what: str, count: int, tasks: int) -> None:
    """`--once`: the patches or the watch of the spa.kube stack, nothing else."""
    if what == "patch":
        _spa_kube_patches(kubeconfig, count, tasks)
        return
    children: list[subprocess.Popen[bytes]] = []
    # Values no earlier run wrote, so that every patch is a change and makes an event.
    offset = time.time_ns() // 1000

    def start(_rv: str) -> None:
        children.append(writer(kubeconfig, count, offset))

    try:
        _spa_kube_watch(kubeconfig, count, start)
    finally:
        for child in children:
            child.wait()


def table(results: dict[str, Any]) -> str:
    """Per stack that patched: the median CPU per patch, the rate, and the watch's CPU per
    event; "nothing measured" when no stack patched (each stack's failure is logged)."""
    patched = {name: rows for name, rows in results["patch"].items() if rows}
    if not patched:
        return NOTHING_MEASURED
    lines = [
        "| stack | CPU per patch (ms, median) | patches/s | CPU per watch event (ms) |",
        "|---|---|---|---|",
    ]
    for name, rows in patched.items():
        cpu = middle(row["cpu_ms_per_request"] for row in rows)
        rate = middle(row["requests_per_second"] for row in rows)
        watch_rows = results["watch"].get(name)
        watch = f"{middle(r['cpu_ms_per_event'] for r in watch_rows):.3f}" if watch_rows else "-"
        lines.append(f"| {name} | {cpu:.2f} | {rate:.0f} | {watch} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", help="a running cluster (default: start one)")
    parser.add_argument("--patches", type=positive_int, default=2000)
    parser.add_argument("--threads", type=positive_int, default=4, help="concurrent requests")
    parser.add_argument("--rounds", type=positive_int, default=3)
    parser.add_argument("--out", help="write the raw results (JSON) here")
    parser.add_argument(
        "--stacks",
        type=one_or_more_of(PATCH_STACKS),
        default=list(PATCH_STACKS),
        help=f"comma-separated stacks to measure (default: all, {','.join(PATCH_STACKS)})",
    )
    parser.add_argument(
        "--once",
        choices=("patch", "watch"),
        help="with --kubeconfig, after one ordinary run (which creates the ConfigMaps): only "
        "--patches spa.kube patches, or as many watch events, then exit (see above)",
    )
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="asyncio",
        help="the event loop of the spa.kube stack (default asyncio; uvloop must be installed)",
    )
    parser.add_argument(
        "--spa-src",
        type=Path,
        help="import `spa` from this source tree instead of this checkout's (e.g. a worktree "
        "of the commit before a change, for a before/after in one run)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="20 patches, 2 at a time, one round; exit status 1 unless every stack measured "
        "its patches and watch (tests/bench/test_bench_smoke.py)",
    )
    arguments = parser.parse_args()
    stacks = tuple(arguments.stacks)
    if arguments.spa_src:
        # Before `spa` is first imported (the spa.kube stack imports it lazily).
        sys.path.insert(0, str(arguments.spa_src.resolve()))
    use_loop(arguments.loop)
    if arguments.once:
        if not arguments.kubeconfig:
            parser.error("--once needs --kubeconfig")
        once(arguments.kubeconfig, arguments.once, arguments.patches, arguments.threads)
        return 0
    if arguments.smoke:
        arguments.patches, arguments.threads, arguments.rounds = 20, 2, 1
        stacks = PATCH_STACKS

    def run(kubeconfig: str) -> dict[str, Any]:
        return measure(kubeconfig, arguments.patches, arguments.threads, arguments.rounds, stacks)

    results = on_a_cluster(arguments.kubeconfig, run, name="client", controller_manager=False)
    results["conditions"] = conditions(
        patches=arguments.patches,
        concurrency=arguments.threads,
        spa_src=str(arguments.spa_src or REPO),
        spa_kube_loop=arguments.loop,
    )
    write_json(arguments.out, results)
    print(table(results))
    if arguments.smoke:
        # measure() logs a stack's failure and goes on (an older checkout may lack one).
        failures = [
            f"no {kind} figure for {name}"
            for kind, stacks in (("patch", PATCH_STACKS), ("watch", WATCH_STACKS))
            for name in stacks
            if len(results[kind].get(name, ())) != arguments.rounds
        ]
        return smoke_verdict(failures, ok="every stack patched and watched")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
