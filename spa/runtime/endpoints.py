"""The process's HTTP endpoints (`/healthz`, `/readyz`, `/metrics`), served on the event loop.

Why on the loop and not in a thread: `/healthz` must say whether the loop that does all the work
answers; a server thread would answer while the loop is wedged. A loop that does not answer
within the kubelet's probe timeout fails the liveness probe, which is the point.

Why bounded: every connection is a small coroutine (no thread), a request must arrive within
`read_timeout` or the connection is closed, and beyond `max_connections` open at once a new one
is closed at once. 500 half-open connections cost 500 idle sockets for a few seconds, not 500
threads forever (as `http.server.ThreadingHTTPServer` did).

Why hand-written on asyncio streams rather than an HTTP framework: these are three GETs with
fixed answers, and the bounds above (a deadline for the request head, a cap on connections) are
exactly what matters here; each is one line on a stream server and needs no dependency.
Requests other than `GET`/`HEAD` of a known path get 405/404; bodies are never read.

Optionally (secure metrics) the server speaks TLS and asks `authorize` about the request's
bearer token before answering (spa/runtime/access.py); a refusal is a 401 or 403 with no body.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

__all__ = ["Authorize", "Endpoint", "Response", "Server", "serve"]

log = logging.getLogger(__name__)

# Enough for any probe or scraper's request head; a longer one is refused.
_MAX_HEAD = 16 * 1024


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


Endpoint = Callable[[], Response]
"""Computes the answer to a GET of one path (on the loop: keep it quick)."""

Authorize = Callable[[str | None], Awaitable[int]]
"""Given the request's bearer token (None: none), the status to answer with: 200 to serve."""

_REASONS = {
    200: "OK",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    503: "Service Unavailable",
}


class Server:
    """A running endpoint server; `port` is the bound port (useful with port 0)."""

    def __init__(self, server: asyncio.Server, connections: set[asyncio.Task[None]]) -> None:
        self._server = server
        self._connections = connections
        self.port: int = server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), timeout=2)


async def serve(
    host: str,
    port: int,
    routes: Mapping[str, Endpoint],
    *,
    read_timeout: float = 5.0,
    max_connections: int = 64,
    tls: ssl.SSLContext | None = None,
    authorize: Authorize | None = None,
) -> Server:
    """Serve `routes` (path -> endpoint) on `host:port` until the returned server is closed;
    over TLS with `tls`, and only to requests `authorize` allows."""
    connections: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(connections) >= max_connections:
            writer.close()
            return
        connections.add(task)
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=read_timeout)
            response, method = _answer(head, routes)
            if authorize is not None and response.status != 404:
                try:
                    allowed = await asyncio.wait_for(
                        authorize(_bearer_token(head)), timeout=read_timeout
                    )
                except TimeoutError:
                    allowed = 503  # the API server did not judge in time
                if allowed != 200:
                    response = Response(allowed, b"")
            writer.write(_encode(response, with_body=method != "HEAD"))
            await asyncio.wait_for(writer.drain(), timeout=read_timeout)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass  # a slow, silent or vanished client: just close
        except Exception:
            log.exception("endpoint failed")
        finally:
            connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), timeout=1)

    if tls is None:
        server = await asyncio.start_server(handle, host, port, limit=_MAX_HEAD)
    else:
        # A TLS handshake gets the same deadline as a request head.
        server = await asyncio.start_server(
            handle, host, port, limit=_MAX_HEAD, ssl=tls, ssl_handshake_timeout=read_timeout
        )
    return Server(server, connections)


def _answer(head: bytes, routes: Mapping[str, Endpoint]) -> tuple[Response, str]:
    request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = request_line.split(" ")
    if len(parts) != 3:
        return Response(405, b"bad request line\n"), "GET"
    method, target, _version = parts
    path = target.split("?", 1)[0]
    endpoint = routes.get(path)
    if endpoint is None:
        return Response(404, b"not found\n"), method
    if method not in ("GET", "HEAD"):
        return Response(405, b"only GET\n"), method
    return endpoint(), method


def _bearer_token(head: bytes) -> str | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "authorization":
            scheme, _, token = value.strip().partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def _encode(response: Response, *, with_body: bool) -> bytes:
    reason = _REASONS.get(response.status, "Error")
    head = (
        f"HTTP/1.1 {response.status} {reason}\r\n"
        f"Content-Type: {response.content_type}\r\n"
        f"Content-Length: {len(response.body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("latin-1")
    return head + response.body if with_body else head
