"""A client of Prometheus's HTTP API, for the history `spa suggest` and `spa backtest` read.

The one module of spa.history that does I/O. It asks `/api/v1/query_range` (and
`/api/v1/query` for one instant), with a bearer token and TLS options as kubectl names them,
pages a long range by time (Prometheus answers at most 11,000 points per series, and a
smaller page keeps each answer small; pages are asked two at a time, the newest day
first), and turns every answer it cannot use into a PrometheusError whose message says what
went wrong, for the user: a server that cannot be reached, one that refuses the credentials
or the query, an answer that is not the API's JSON or not of the expected shape
(docs/suggest.md, "Prometheus"). It never lets an exception of the HTTP stack or of the JSON
decoder through. The standard library's HTTP client is enough for a few requests of a
command-line tool.
"""

from __future__ import annotations

import http.client
import math
import ssl
import urllib.error
import urllib.parse
import urllib.request
from array import array
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import orjson

from spa import __version__

__all__ = [
    "EXIT_BAD_QUERY",
    "EXIT_DATA",
    "EXIT_UNAUTHORIZED",
    "EXIT_UNREACHABLE",
    "MAX_POINTS",
    "Connection",
    "PrometheusError",
    "Series",
    "query_instant",
    "query_range",
]

MAX_POINTS = 11000
"""The most points per series Prometheus returns for one query_range."""
_PAGE_POINTS = 2016
"""Points per series asked in one request at most: a week at 5 minutes."""
_FIRST_PAGE_POINTS = 288
"""Points per series of the page asked first (the newest day at 5 minutes), and of the older
pages while no series has been seen."""
_PAGE_BUDGET = 200_000
"""Points in all (every series) asked in one request, after the first."""
_PARALLEL = 2
_MAX_BODY = 1 << 30
"""The largest answer read (1 GiB): beyond it the range or the number of series is too large
for one command, and the user is told so."""
_SHOWN = 200

# The exit statuses of docs/suggest.md, "Exit status" (those of docs/operations.md where they
# mean the same).
EXIT_DATA = 1
EXIT_BAD_QUERY = 2
EXIT_UNREACHABLE = 4
EXIT_UNAUTHORIZED = 5


class PrometheusError(Exception):
    """Prometheus could not give the history: `message` says why, `status` is the exit
    status."""

    def __init__(self, message: str, status: int = EXIT_UNREACHABLE) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class Connection:
    """Where Prometheus is and how to authenticate (kubectl's names for the TLS files)."""

    url: str
    token: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    insecure_skip_tls_verify: bool = False
    timeout: float = 60.0
    headers: Mapping[str, str] = field(default_factory=dict)

    def endpoint(self, path: str) -> str:
        return self.url.rstrip("/") + path


@dataclass(slots=True)
class Series:
    """One series of an answer: its labels and its points, as two arrays (8 bytes a number:
    a fleet's weeks of history are millions of points)."""

    labels: dict[str, str]
    times: array[int] = field(default_factory=lambda: array("q"))
    values: array[float] = field(default_factory=lambda: array("d"))

    @property
    def points(self) -> list[tuple[int, float]]:
        return list(zip(self.times, self.values, strict=True))


Opener = Callable[[urllib.request.Request, float], Any]
"""Sends a request and returns the response (urllib's `urlopen` with a TLS context; tests
give their own)."""


def check_url(url: str) -> str | None:
    """Why `url` cannot be Prometheus's base URL, or None."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return f"'{_shown(url)}' is not an http:// or https:// URL, such as http://prometheus:9090"
    if parsed.query or parsed.fragment:
        return f"'{_shown(url)}' has a query or fragment: give the server's base URL"
    return None


def query_range(
    connection: Connection,
    query: str,
    *,
    start: int,
    end: int,
    step: int,
    page_points: int = _PAGE_POINTS,
    opener: Opener | None = None,
    warnings: list[str] | None = None,
) -> list[Series]:
    """Every series of `query` evaluated at `start`, `start + step`, ... up to `end`, in pages
    of at most `page_points` points a series, joined by their labels (each series's points in
    the order of time).

    The newest day is asked first: it tells how many series there are. The older pages, from
    `start` on, two at a time, are each sized so that its answer holds about `_PAGE_BUDGET`
    points in all for the series seen so far (an answer is parsed whole, at about 170 bytes a
    point); while none has been seen, they are a day each. Why the newest day and not the
    first: the oldest days of a range are those a Prometheus has not kept (its retention, 15
    days by default, is shorter than the 4 weeks asked by default), and an empty first page
    sized every other as if there were one series: a week of every autoscaler in one answer.
    """
    page_points = max(1, min(page_points, MAX_POINTS))
    send = opener or _opener(connection)
    joined: dict[tuple[tuple[str, str], ...], Series] = {}
    seen: set[tuple[tuple[str, str], ...]] = set()

    def fetch(page: tuple[int, int]) -> tuple[list[Series], list[str]]:
        form = {"query": query, "start": str(page[0]), "end": str(page[1]), "step": f"{step}s"}
        answer = _request(connection, "/api/v1/query_range", form, send)
        return _matrix(answer, connection), _warnings(answer)

    def join(found: list[Series], said: list[str]) -> None:
        if warnings is not None:
            warnings.extend(said)
        for series in found:
            key = tuple(sorted(series.labels.items()))
            if key in joined:
                joined[key].times.extend(series.times)
                joined[key].values.extend(series.values)
            else:
                # A copy made here, in the thread that joins: the arrays of an answer are
                # allocated by the thread that fetched it (its own malloc arena), and growing
                # them all from here in every thread's arena cost 30 MiB more at 500 series.
                joined[key] = Series(
                    labels=series.labels,
                    times=array("q", series.times),
                    values=array("d", series.values),
                )

    def note(found: list[Series]) -> None:
        seen.update(tuple(sorted(series.labels.items())) for series in found)

    day = min(page_points, _FIRST_PAGE_POINTS)
    count = (end - start) // step + 1
    newest_start = start + max(0, count - day) * step
    newest = fetch((newest_start, end))
    note(newest[0])
    position = start
    if position < newest_start:
        pending: deque[Future[tuple[list[Series], list[str]]]] = deque()
        with ThreadPoolExecutor(max_workers=_PARALLEL) as pool:
            while position < newest_start or pending:
                while position < newest_start and len(pending) < _PARALLEL:
                    size = max(1, min(page_points, _PAGE_BUDGET // len(seen))) if seen else day
                    last = min(newest_start - step, position + (size - 1) * step)
                    pending.append(pool.submit(fetch, (position, last)))
                    position = last + step
                found, said = pending.popleft().result()
                note(found)
                join(found, said)
    join(*newest)
    return list(joined.values())


def query_instant(
    connection: Connection, query: str, *, at: int, opener: Opener | None = None
) -> list[tuple[dict[str, str], float]]:
    """The instant vector of `query` at `at`: (labels, value) for each series."""
    answer = _request(
        connection,
        "/api/v1/query",
        {"query": query, "time": str(at)},
        opener or _opener(connection),
    )
    return [
        (labels, _point(item.get("value"), f"{where}.value", connection)[1])
        for where, item, labels in _results(answer, "vector", connection)
    ]


def _opener(connection: Connection) -> Opener:
    context = _tls(connection)

    def send(request: urllib.request.Request, timeout: float) -> Any:
        return urllib.request.urlopen(request, timeout=timeout, context=context)

    return send


def _tls(connection: Connection) -> ssl.SSLContext | None:
    if not connection.url.startswith("https:"):
        return None
    try:
        context = ssl.create_default_context(cafile=connection.certificate_authority)
        if connection.client_certificate is not None:
            context.load_cert_chain(connection.client_certificate, connection.client_key)
    except (OSError, ssl.SSLError, ValueError) as error:
        raise PrometheusError(
            f"cannot load the TLS files for {connection.url}: {error}", EXIT_BAD_QUERY
        ) from None
    if connection.insecure_skip_tls_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _request(
    connection: Connection, path: str, form: Mapping[str, str], send: Opener
) -> dict[str, Any]:
    url = connection.endpoint(path)
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/x-www-form-urlencoded",
        "User-Agent": f"scheduled-pod-autoscaler/{__version__} (spa suggest)",
        **connection.headers,
    }
    if connection.token:
        headers["Authorization"] = f"Bearer {connection.token}"
    request = urllib.request.Request(
        url, data=urllib.parse.urlencode(form).encode(), headers=headers, method="POST"
    )
    status = 200
    try:
        with send(request, connection.timeout) as response:
            status = int(getattr(response, "status", 200) or 200)
            body = _read(response, connection)
    except urllib.error.HTTPError as error:
        status = error.code
        try:
            body = _read(error, connection)
        except PrometheusError:
            body = b""
        finally:
            error.close()
        return _refused(connection, status, body, form)
    except PrometheusError:
        raise
    except TimeoutError:
        raise _timed_out(connection) from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, TimeoutError):
            raise _timed_out(connection) from None
        if isinstance(reason, ssl.SSLError | ssl.CertificateError):
            raise _tls_failed(connection, reason) from None
        raise PrometheusError(f"cannot reach Prometheus at {connection.url}: {reason}") from None
    except ssl.SSLError as error:
        # TLS 1.3 tells a refused client certificate after the handshake, at the first read.
        raise _tls_failed(connection, error) from None
    except (OSError, ValueError, http.client.HTTPException) as error:
        # A connection reset or cut in the middle of an answer, a status line that is not
        # HTTP, a URL urllib cannot send.
        raise PrometheusError(f"cannot reach Prometheus at {connection.url}: {error}") from None
    if status != 200:
        return _refused(connection, status, body, form)
    return _decode(body, connection)


_CLIENT_REFUSED = ("CERTIFICATE", "UNKNOWN_CA", "ACCESS_DENIED")
"""Parts of the names of the TLS alerts a server sends when it refuses the client's
certificate (or its absence)."""


def _tls_failed(
    connection: Connection, error: ssl.SSLError | ssl.CertificateError
) -> PrometheusError:
    """The error of a TLS handshake that failed: Prometheus's certificate is not trusted (the
    CA, exit 4), or Prometheus refused the client's (exit 5, as refused credentials), or
    something else of TLS."""
    url = connection.url
    if isinstance(error, ssl.SSLCertVerificationError | ssl.CertificateError):
        said = getattr(error, "verify_message", None) or error
        return PrometheusError(
            f"TLS with Prometheus at {url} failed: its certificate is not trusted ({said}): give "
            "its CA with --certificate-authority (or --insecure-skip-tls-verify)"
        )
    reason = str(getattr(error, "reason", None) or "")
    # A server that requires a client certificate ends the handshake (TLS 1.3 often without
    # an alert Python can read: an EOF) when it has none or one it does not trust.
    if isinstance(error, ssl.SSLEOFError) or any(part in reason for part in _CLIENT_REFUSED):
        if connection.client_certificate is None:
            return PrometheusError(
                f"Prometheus at {url} ended the TLS handshake ({error}): it asks for a client "
                "certificate: give one with --client-certificate and --client-key",
                EXIT_UNAUTHORIZED,
            )
        return PrometheusError(
            f"Prometheus at {url} refused the client certificate "
            f"{connection.client_certificate} ({error}): give one of a CA it trusts",
            EXIT_UNAUTHORIZED,
        )
    return PrometheusError(f"TLS with Prometheus at {url} failed: {error}")


def _timed_out(connection: Connection) -> PrometheusError:
    return PrometheusError(
        f"Prometheus at {connection.url} did not answer within {connection.timeout:g} s"
    )


def _read(response: Any, connection: Connection) -> bytes:
    """The whole body, at most `_MAX_BODY`; PrometheusError if the connection ends before the
    length the server announced."""
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = response.read(1 << 20)
            if not chunk:
                break
            if not isinstance(chunk, bytes):
                raise _unexpected(connection, "the answer has no body")
            chunks.append(chunk)
            total += len(chunk)
            if total > _MAX_BODY:
                raise PrometheusError(
                    f"the answer of Prometheus at {connection.url} is larger than 1 GiB: ask "
                    "for fewer autoscalers at once, or a larger --step",
                    EXIT_DATA,
                )
    except (OSError, ValueError, http.client.HTTPException) as error:
        raise PrometheusError(
            f"the answer of Prometheus at {connection.url} was cut: {error}"
        ) from None
    headers = getattr(response, "headers", None)
    announced = headers.get("Content-Length") if headers is not None else None
    if isinstance(announced, str) and announced.isdigit() and int(announced) != total:
        raise PrometheusError(
            f"the answer of Prometheus at {connection.url} was cut: {total} of the "
            f"{announced} bytes announced"
        )
    return b"".join(chunks)


def _decode(body: bytes, connection: Connection) -> dict[str, Any]:
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise PrometheusError(
            f"{connection.url} answered with something other than the JSON of Prometheus's "
            f"API ({_excerpt(body)}): is it the server's base URL, such as "
            "http://prometheus:9090?"
        ) from None
    if not isinstance(answer, dict):
        raise _unexpected(connection, "the answer is not a JSON object")
    status = answer.get("status")
    if status == "error":
        raise _api_error(connection, answer, 200)
    if status != "success":
        raise _unexpected(connection, f"its status is {_shown(repr(status))}, not 'success'")
    return answer


def _refused(
    connection: Connection, status: int, body: bytes, form: Mapping[str, str]
) -> dict[str, Any]:
    """The error for an answer with a status other than 200."""
    answer: Any = None
    try:
        answer = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        answer = None
    if status in (401, 403):
        said = (
            f": {_shown(str(answer.get('error')))}"
            if isinstance(answer, dict) and answer.get("error")
            else ""
        )
        raise PrometheusError(
            f"Prometheus at {connection.url} refused the credentials ({status}){said}: give "
            "a token it accepts with --token-file, or a client certificate",
            EXIT_UNAUTHORIZED,
        )
    if isinstance(answer, dict) and answer.get("status") == "error":
        raise _api_error(connection, answer, status, form.get("query", ""))
    if status == 400 and b"HTTP request to an HTTPS server" in body:
        raise PrometheusError(
            f"Prometheus at {connection.url} answered 400 ({_excerpt(body)}): give its https:// URL"
        )
    if status == 404:
        raise PrometheusError(
            f"{connection.url} has no Prometheus API (404 for {connection.endpoint('/api/v1/')}"
            "...): give the server's base URL, such as http://prometheus:9090"
        )
    raise PrometheusError(
        f"Prometheus at {connection.url} answered {status} ({_excerpt(body)}) to "
        f"{_shown(form.get('query', ''))}"
    )


def _api_error(
    connection: Connection, answer: dict[str, Any], status: int, query: str = ""
) -> PrometheusError:
    kind = answer.get("errorType")
    text = answer.get("error")
    kind_text = kind if isinstance(kind, str) else "error"
    message = _shown(text if isinstance(text, str) else repr(text))
    if kind_text == "bad_data":
        return PrometheusError(
            # The query as asked (with what spa added around --query), for the positions.
            f"Prometheus at {connection.url} refused the query {_shown(query)}: {message}",
            EXIT_BAD_QUERY,
        )
    if kind_text in ("execution", "timeout", "canceled") or status == 422:
        return PrometheusError(
            f"Prometheus at {connection.url} could not answer the query ({kind_text}): {message}",
            EXIT_DATA,
        )
    return PrometheusError(
        f"Prometheus at {connection.url} answered {status} {kind_text}: {message}"
    )


def _warnings(answer: dict[str, Any]) -> list[str]:
    found = answer.get("warnings")
    if not isinstance(found, list):
        return []
    return [_shown(str(warning)) for warning in found]


def _results(
    answer: dict[str, Any], result_type: str, connection: Connection
) -> Iterator[tuple[str, dict[str, Any], dict[str, str]]]:
    """Each item of the answer's `data.result`, checked to be of `result_type`: where it is
    (for messages), the item, and its labels."""
    data = _field(answer, "data", dict, "data")
    kind = _field(data, "resultType", str, "data.resultType")
    if kind != result_type:
        raise _unexpected(connection, f"data.resultType is '{_shown(kind)}', not '{result_type}'")
    result = _field(data, "result", list, "data.result")
    for index, item in enumerate(result):
        where = f"data.result[{index}]"
        if not isinstance(item, dict):
            raise _unexpected(connection, f"{where} is not an object")
        yield where, item, _labels(item.get("metric"), f"{where}.metric", connection)


def _matrix(answer: dict[str, Any], connection: Connection) -> list[Series]:
    found = []
    for where, item, labels in _results(answer, "matrix", connection):
        values = item.get("values", [])
        if not isinstance(values, list):
            raise _unexpected(connection, f"{where}.values is not a list")
        series = Series(labels=labels)
        for number, pair in enumerate(values):
            instant, value = _point(pair, f"{where}.values[{number}]", connection)
            series.times.append(instant)
            series.values.append(value)
        found.append(series)
    return found


def _field(container: Any, name: str, kind: type, where: str) -> Any:
    value = container.get(name) if isinstance(container, dict) else None
    if not isinstance(value, kind):
        raise PrometheusError(
            f"unexpected answer from Prometheus: {where} is missing or not "
            f"{'a list' if kind is list else 'a string' if kind is str else 'an object'}"
        )
    return value


def _labels(found: Any, where: str, connection: Connection) -> dict[str, str]:
    if found is None:
        return {}
    if not isinstance(found, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in found.items()
    ):
        raise _unexpected(connection, f"{where} is not an object of label names and values")
    return dict(found)


def _point(pair: Any, where: str, connection: Connection) -> tuple[int, float]:
    if not (isinstance(pair, list) and len(pair) == 2):
        raise _unexpected(connection, f"{where} is not a [time, value] pair")
    instant, text = pair
    if isinstance(instant, bool) or not isinstance(instant, int | float):
        raise _unexpected(connection, f"{where}: the time {_shown(repr(instant))} is not a number")
    if not math.isfinite(instant):
        raise _unexpected(connection, f"{where}: the time is not finite")
    if not isinstance(text, str):
        raise _unexpected(connection, f"{where}: the value {_shown(repr(text))} is not a string")
    try:
        value = float(text)
    except ValueError:
        raise _unexpected(
            connection, f"{where}: the value '{_shown(text)}' is not a number"
        ) from None
    return round(instant), value


def _unexpected(connection: Connection, what: str) -> PrometheusError:
    return PrometheusError(f"unexpected answer from Prometheus at {connection.url}: {what}")


def _excerpt(body: bytes) -> str:
    text = body[:_SHOWN].decode("utf-8", "replace").strip().replace("\n", " ")
    if not text:
        return "an empty body"
    return f"'{text}{'...' if len(body) > _SHOWN else ''}'"


def _shown(text: str) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}..."
