"""An HTTPS proxy in front of the API server that answers a share of requests with errors.

The TCPProxy (proxy.py) breaks connections but cannot touch what flows through them, because
TLS passes through it. This proxy terminates TLS with the API server's own serving certificate
(issued by the testenv CA for 127.0.0.1, so clients verify it exactly as they verify the API
server), reads each HTTP/1.1 request and either forwards it to the real API server over a new
TLS connection or answers it itself with a fault:

- `500`: an InternalError Status, as an apiserver whose etcd request failed would send;
- `429`: a TooManyRequests Status with a `Retry-After` header and `details.retryAfterSeconds`,
  which is how API Priority and Fairness rejects a request;
- `timeout`: no answer at all until the client gives up (or `hold` seconds pass);
- `latency`: a share of the requests that match a pattern (`PATCH .*/horizontalpodautoscalers/`)
  forwarded only after a delay, the way API Priority and Fairness queues a request before it
  runs: the API server is slower than it was, nothing fails.

Forwarded requests keep their `Authorization` header, so a client authenticating with a bearer
token (a ServiceAccount kubeconfig) keeps its identity and RBAC; client certificates cannot
pass a TLS-terminating proxy, so they are not supported. Responses are streamed, so watches
work through the proxy (and are themselves subject to faults when they start).
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import json
import random
import re
import select
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
}


@dataclass
class Faults:
    """Shares (0..1) of requests answered with each fault; the rest are forwarded."""

    error_500: float = 0.0
    throttle_429: float = 0.0
    timeout: float = 0.0
    retry_after: int = 1
    hold: float = 60.0
    # Watches are long-lived; whether their start may fail too.
    watches: bool = True
    # The next this many requests (not watches) get no answer, whatever the shares say.
    timeout_next: int = 0
    # Seconds that a `latency_share` of the requests matching `latency_match` (a regular
    # expression searched in "METHOD /path?query") wait before they are forwarded.
    latency: float = 0.0
    latency_share: float = 1.0
    latency_match: str = ""
    # The 500, 429 and timeout shares apply only to the requests matching this ("": all).
    faults_match: str = ""


@dataclass(frozen=True)
class Request:
    at: float  # time.monotonic()
    method: str
    path: str
    outcome: str  # "forwarded", "500", "429", "timeout", "error"
    code: int
    # A create's object name (from its body): POSTs of different objects share a path.
    name: str = ""
    # Seconds it was held back by the `latency` fault before it was forwarded.
    delayed: float = 0.0
    # When it arrived (time.monotonic()); `at` is when it was answered.
    received: float = 0.0


@dataclass
class _State:
    faults: Faults = field(default_factory=Faults)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rng: random.Random = field(default_factory=lambda: random.Random(7))


class HTTPFaultProxy:
    """Listen on 127.0.0.1:<port> with TLS, forward to https://target_host:target_port."""

    def __init__(
        self,
        target_host: str,
        target_port: int,
        *,
        ca_cert: Path,
        serving_cert: Path,
        serving_key: Path,
    ) -> None:
        self.target = (target_host, target_port)
        self._state = _State()
        self._server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._server_context.load_cert_chain(str(serving_cert), str(serving_key))
        self._client_context = ssl.create_default_context(cafile=str(ca_cert))
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"https://127.0.0.1:{self._server.server_address[1]}"

    @property
    def faults(self) -> Faults:
        return self._state.faults

    def set_faults(self, faults: Faults) -> None:
        """Change the fault plan for requests from now on."""
        self._state.faults = faults

    def requests(self, since: float = 0.0, until: float = float("inf")) -> list[Request]:
        with self._state.lock:
            return [r for r in self._state.requests if since <= r.at < until]

    def start(self) -> HTTPFaultProxy:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.proxy_state = self._state
        server.target = self.target
        server.server_context = self._server_context
        server.client_context = self._client_context
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="httpfaultproxy", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server.close_all()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> HTTPFaultProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    proxy_state: _State
    target: tuple[str, int]
    server_context: ssl.SSLContext
    client_context: ssl.SSLContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = self.socket.accept()
        wrapped = self.server_context.wrap_socket(
            sock, server_side=True, do_handshake_on_connect=False
        )
        with self._open_lock:
            self._open.add(wrapped)
        return wrapped, address

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_all(self) -> None:
        with self._open_lock:
            sockets = list(self._open)
            self._open.clear()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()


def _created_name(body: bytes | None) -> str:
    """The name in a create's body (metadata.name, else generateName), or ""."""
    try:
        metadata = json.loads(body or b"{}").get("metadata") or {}
    except (ValueError, AttributeError):
        return ""
    return str(metadata.get("name") or metadata.get("generateName") or "")


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    _name = ""
    _delayed = 0.0
    _received = 0.0

    def setup(self) -> None:
        self.request.settimeout(120)
        try:
            self.request.do_handshake()
        except (OSError, ssl.SSLError):
            self.close_connection = True
        self._upstream: http.client.HTTPSConnection | None = None
        super().setup()

    def finish(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            super().finish()
        if self._upstream is not None:
            self._upstream.close()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._proxy()

    def do_POST(self) -> None:
        self._proxy()

    def do_PUT(self) -> None:
        self._proxy()

    def do_PATCH(self) -> None:
        self._proxy()

    def do_DELETE(self) -> None:
        self._proxy()

    def _record(self, outcome: str, code: int) -> None:
        state = self.server.proxy_state
        request = Request(
            time.monotonic(),
            self.command,
            self.path,
            outcome,
            code,
            self._name,
            delayed=self._delayed,
            received=self._received,
        )
        with state.lock:
            state.requests.append(request)

    def _proxy(self) -> None:
        self._received = time.monotonic()
        self._delayed = 0.0
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        self._name = _created_name(body) if self.command == "POST" else ""
        state = self.server.proxy_state
        faults = state.faults
        is_watch = "watch=" in self.path
        forced_timeout = False
        with state.lock:
            draw = state.rng.random()
            if faults.timeout_next and not is_watch:
                faults.timeout_next -= 1
                forced_timeout = True
        if is_watch and not faults.watches:
            draw = 1.0
        if faults.faults_match and not re.search(faults.faults_match, self._line()):
            draw = 1.0
        if forced_timeout:
            self._record("timeout", 0)
            self._hold(faults.hold)
            return
        if draw < faults.error_500:
            self._record("500", 500)
            self._status(500, "InternalError", "injected fault: etcdserver: request timed out")
            return
        draw -= faults.error_500
        if draw < faults.throttle_429:
            self._record("429", 429)
            self._status(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
                retry_after=faults.retry_after,
            )
            return
        draw -= faults.throttle_429
        if draw < faults.timeout:
            self._record("timeout", 0)
            self._hold(faults.hold)
            return
        if faults.latency > 0 and not is_watch and self._slowed(faults):
            self._delayed = faults.latency
            time.sleep(faults.latency)
        self._forward(body, is_watch)

    def _line(self) -> str:
        """What the patterns of the faults are searched in: "METHOD /path?query"."""
        return f"{self.command} {self.path}"

    def _slowed(self, faults: Faults) -> bool:
        """Whether the latency fault holds this request back (drawn only when it matches, so
        that the other faults' draws stay as they were)."""
        if not re.search(faults.latency_match, self._line()):
            return False
        state = self.server.proxy_state
        with state.lock:
            return state.rng.random() < faults.latency_share

    def _status(self, code: int, reason: str, message: str, retry_after: int | None = None) -> None:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
        if retry_after is not None:
            status["details"] = {"retryAfterSeconds": retry_after}
        payload = json.dumps(status).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if retry_after is not None:
            self.send_header("Retry-After", str(retry_after))
        self.end_headers()
        self.wfile.write(payload)

    def _hold(self, seconds: float) -> None:
        """Answer nothing until the client closes the connection or `seconds` pass."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.request], [], [], 0.5)
            if not readable:
                continue
            # The client sends nothing while it waits for the answer: readable means it closed.
            try:
                if not self.request.recv(4096):
                    break
            except (OSError, ssl.SSLError, ValueError):
                break
        self.close_connection = True

    def _connection(self) -> http.client.HTTPSConnection:
        if self._upstream is None:
            host, port = self.server.target
            self._upstream = http.client.HTTPSConnection(
                host, port, context=self.server.client_context, timeout=120
            )
        return self._upstream

    def _forward(self, body: bytes | None, is_watch: bool) -> None:
        headers = {
            key: value for key, value in self.headers.items() if key.lower() not in _HOP_BY_HOP
        }
        if body is not None:
            headers["Content-Length"] = str(len(body))
        try:
            upstream = self._connection()
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
        except (OSError, http.client.HTTPException):
            if self._upstream is not None:
                self._upstream.close()
                self._upstream = None
            self._record("error", 502)
            self._status(503, "ServiceUnavailable", "proxy: the API server is unreachable")
            return
        self._record("forwarded", response.status)
        try:
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in _HOP_BY_HOP:
                    self.send_header(key, value)
            if response.chunked or response.length is None:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            else:
                payload = response.read()
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            self.wfile.flush()
        except (OSError, http.client.HTTPException, ssl.SSLError):
            # The client went away (or the upstream broke mid-stream): drop both sides.
            self.close_connection = True
            if self._upstream is not None:
                self._upstream.close()
                self._upstream = None
        if (response.will_close or self.close_connection) and self._upstream is not None:
            self._upstream.close()
            self._upstream = None
