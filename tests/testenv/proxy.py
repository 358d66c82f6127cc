"""A loopback TCP proxy that can break the network between a client and the API server.

Reliability tests need the failures a real network produces: connections reset mid-watch,
connections that hang without closing, and a server that refuses new connections. The proxy
forwards raw bytes (TLS passes through untouched, so certificates and identities are those of
the real API server) and offers `cut()`, `stall()`, `refuse_new()` and `resume()`.

Threads rather than asyncio so sync and async tests can drive it alike from any thread.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from types import TracebackType


class TCPProxy:
    """Forward 127.0.0.1:<port> to target_host:target_port until closed."""

    def __init__(self, target_host: str, target_port: int, listen_port: int = 0) -> None:
        self.target = (target_host, target_port)
        self._requested_port = listen_port
        self.port = 0
        self._lock = threading.Lock()
        self._pairs: set[_Pair] = set()
        # Set while bytes may flow; cleared by stall().
        self._flowing = threading.Event()
        self._flowing.set()
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._closed = False
        self.accepted = 0

    @property
    def url(self) -> str:
        """The https URL a client uses instead of the API server's."""
        return f"https://127.0.0.1:{self.port}"

    @property
    def connection_count(self) -> int:
        with self._lock:
            return len(self._pairs)

    def start(self) -> TCPProxy:
        self._listen()
        return self

    def close(self) -> None:
        self._closed = True
        self._stop_listening()
        self.cut()
        self._flowing.set()

    def __enter__(self) -> TCPProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def cut(self) -> int:
        """Reset every open connection (the client sees ECONNRESET); return how many."""
        with self._lock:
            pairs = list(self._pairs)
            self._pairs.clear()
        for pair in pairs:
            pair.reset()
        return len(pairs)

    def stall(self) -> None:
        """Keep connections open but forward nothing, in either direction (a black hole)."""
        self._flowing.clear()

    def refuse_new(self) -> None:
        """Close the listening socket: new connections get ECONNREFUSED, open ones live on."""
        self._stop_listening()

    def resume(self) -> None:
        """Undo stall() and refuse_new()."""
        self._flowing.set()
        if self._listener is None and not self._closed:
            self._listen()

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # The same port after refuse_new()/resume(), so clients' URLs stay valid.
        listener.bind(("127.0.0.1", self.port or self._requested_port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._accept_thread = threading.Thread(
            target=self._accept_loop,
            args=(listener,),
            name=f"tcpproxy-accept-{self.port}",
            daemon=True,
        )
        self._accept_thread.start()

    def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is None:
            return
        # shutdown() wakes the thread blocked in accept(); close() alone does not on Linux.
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
            self._accept_thread = None

    def _accept_loop(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # listener closed
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            pair = _Pair(client, upstream, self._flowing, self._forget)
            with self._lock:
                self._pairs.add(pair)
                self.accepted += 1
            pair.start()

    def _forget(self, pair: _Pair) -> None:
        with self._lock:
            self._pairs.discard(pair)


class _Pair:
    """One client connection and its upstream twin, pumped by two threads."""

    def __init__(
        self,
        client: socket.socket,
        upstream: socket.socket,
        flowing: threading.Event,
        on_done: Callable[[_Pair], None],
    ) -> None:
        self.client = client
        self.upstream = upstream
        self._flowing = flowing
        self._on_done = on_done
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._eof_count = 0

    def start(self) -> None:
        for src, dst in ((self.client, self.upstream), (self.upstream, self.client)):
            threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if self._done.is_set():
                    return
                if not data:
                    break
                # A stalled proxy holds what it has read: nothing reaches the other side.
                while not self._flowing.wait(timeout=0.2):
                    if self._done.is_set():
                        return
                dst.sendall(data)
            # Orderly end of one direction: pass the FIN on, keep the other direction going.
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            self.reset()
            return
        with self._lock:
            self._eof_count += 1
            both = self._eof_count == 2
        if both and not self._done.is_set():
            self._done.set()
            self.client.close()
            self.upstream.close()
            self._on_done(self)

    def reset(self) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._done.set()
        _reset(self.client)
        _reset(self.upstream)
        self._on_done(self)


def _reset(sock: socket.socket) -> None:
    """Close with RST (not FIN), waking a thread blocked in recv() on it."""
    try:
        # SO_LINGER with a zero timeout makes the close send RST.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # SHUT_RD wakes a blocked recv() without sending anything (SHUT_WR would send FIN).
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    sock.close()
