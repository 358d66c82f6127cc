"""The HTTP endpoints served on the event loop (spa/runtime/endpoints.py), over real loopback
sockets: answers, timeouts, the connection cap, and 500 half-open connections."""

from __future__ import annotations

import asyncio
import ssl
import threading
import time

from spa.runtime import Response, serve, server_context

ROUTES = {"/healthz": lambda: Response(200, b"ok"), "/readyz": lambda: Response(503, b"no")}


async def request(port: int, head: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=5)
    writer.close()
    return answer


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """The server closed the connection without an answer (an orderly FIN, or a reset when
    it closed with our request unread)."""
    try:
        return await asyncio.wait_for(reader.read(), timeout=5) == b""
    except ConnectionResetError:
        return True


async def test_known_paths_answer_and_others_do_not() -> None:
    server = await serve("127.0.0.1", 0, ROUTES)
    try:
        ok = await request(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200 OK\r\n")
        assert ok.endswith(b"\r\n\r\nok")
        assert b"503 Service Unavailable" in await request(
            server.port, b"GET /readyz HTTP/1.0\r\n\r\n"
        )
        assert b" 404 " in await request(server.port, b"GET /nope HTTP/1.1\r\n\r\n")
        assert b" 405 " in await request(server.port, b"POST /healthz HTTP/1.1\r\n\r\n")
        head_only = await request(server.port, b"HEAD /healthz?x=1 HTTP/1.1\r\n\r\n")
        assert head_only.startswith(b"HTTP/1.1 200")
        assert head_only.endswith(b"\r\n\r\n")
    finally:
        await server.close()


async def test_a_silent_client_is_closed_after_the_read_timeout() -> None:
    server = await serve("127.0.0.1", 0, ROUTES, read_timeout=0.2)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        started = time.monotonic()
        assert await closed_by_server(reader)
        assert 0.15 < time.monotonic() - started < 3
        writer.close()
    finally:
        await server.close()


async def test_500_half_open_connections_cost_no_thread_and_the_probe_still_answers() -> None:
    server = await serve("127.0.0.1", 0, ROUTES, read_timeout=30, max_connections=64)
    threads = threading.active_count()
    held = []
    try:
        for _ in range(500):
            held.append(await asyncio.open_connection("127.0.0.1", server.port))
            held[-1][1].write(b"GET /healthz HTTP/1.1\r\n")  # the head never ends
        await asyncio.sleep(0.2)
        assert threading.active_count() == threads
        # Beyond the cap new connections are closed at once; the probe is one of them or
        # answered: with the cap full it is closed, so free a slot the way a timeout would.
        for _, writer in held[:64]:
            writer.close()
        await asyncio.sleep(0.1)
        started = time.monotonic()
        answer = await request(server.port, b"GET /healthz HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200")
        assert time.monotonic() - started < 1.0
        # Connections over the cap were closed by the server: reading them ends at once.
        assert await closed_by_server(held[-1][0])
    finally:
        for _, writer in held:
            writer.close()
        await server.close()


async def test_a_stalled_loop_fails_the_probe_and_a_free_one_passes_it() -> None:
    """/healthz is answered on the event loop, so a loop stalled by blocking code (a bug, a
    deadlock) fails the kubelet's probe by its timeout, as liveness should."""
    server = await serve("127.0.0.1", 0, ROUTES)

    def probe(timeout: float) -> bytes | None:
        import socket

        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
                return sock.recv(1024)
        except TimeoutError:
            return None

    try:
        answer = await asyncio.to_thread(probe, 1.0)
        assert answer is not None
        assert answer.startswith(b"HTTP/1.1 200")
        loop = asyncio.get_running_loop()

        def probe_during_the_stall() -> bytes | None:
            time.sleep(0.2)
            return probe(0.5)

        probed = loop.run_in_executor(None, probe_during_the_stall)
        time.sleep(1.5)  # noqa: ASYNC251 -- the point: the loop stalls, nothing on it runs
        assert await probed is None
        # The timed-out probe's connection is served now that the loop runs again; let it
        # finish before the server closes.
        await asyncio.sleep(0.2)
    finally:
        await server.close()


async def test_secure_endpoints_speak_tls_and_ask_about_the_bearer_token() -> None:
    seen: list[str | None] = []

    async def authorize(token: str | None) -> int:
        seen.append(token)
        return {None: 401, "good": 200}.get(token, 403)

    server = await serve("127.0.0.1", 0, ROUTES, tls=server_context(None), authorize=authorize)
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE

    async def get(head: bytes) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port, ssl=client)
        writer.write(head)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=5)
        writer.close()
        return answer

    try:
        ok = await get(b"GET /healthz HTTP/1.1\r\nAuthorization: Bearer good\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200 OK")
        assert ok.endswith(b"ok")
        denied = await get(b"GET /healthz HTTP/1.1\r\nauthorization: bearer other\r\n\r\n")
        assert denied.startswith(b"HTTP/1.1 403 Forbidden")
        assert denied.endswith(b"\r\n\r\n")
        anonymous = await get(b"GET /healthz HTTP/1.1\r\n\r\n")
        assert anonymous.startswith(b"HTTP/1.1 401 Unauthorized")
        assert seen == ["good", "other", None]
        # Plain HTTP to the TLS port gets nothing.
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /healthz HTTP/1.1\r\n\r\n")
        assert await closed_by_server(reader)
        writer.close()
    finally:
        await server.close()
