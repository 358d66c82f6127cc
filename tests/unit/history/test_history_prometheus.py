"""The Prometheus client of `spa suggest` against a fake server (a thread with http.server):
paging by time, credentials, and for every answer, however malformed, either the history or a
PrometheusError that says what went wrong, never a traceback (docs/suggest.md, "Prometheus")."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spa.cli import main
from spa.history.prometheus import (
    EXIT_BAD_QUERY,
    EXIT_DATA,
    EXIT_UNAUTHORIZED,
    EXIT_UNREACHABLE,
    Connection,
    PrometheusError,
    query_range,
)
from spa.history.source import Selection, Source, label_matchers, read_histories


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0
    cut: bool = False
    """Close the connection in the middle of the body."""


@dataclass
class Fake:
    url: str
    answer: Callable[[dict[str, str], str], Answer]
    requests: list[tuple[str, dict[str, str], dict[str, str]]] = field(default_factory=list)


class _QuietServer(ThreadingHTTPServer):
    """The fake server, silent when a client hangs up mid-answer: `spa suggest` stops reading
    the pages still under way once one fails, and socketserver would print that broken pipe's
    traceback on the standard error the tests read as the command's."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@pytest.fixture
def fake() -> Iterator[Fake]:
    state = Fake(url="", answer=lambda form, path: Answer(body=_matrix([])))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
            state.requests.append((self.path, form, dict(self.headers)))
            answer = state.answer(form, self.path)
            if answer.delay:
                time.sleep(answer.delay)
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body) + (100 if answer.cut else 0)))
            self.end_headers()
            self.wfile.write(answer.body)
            if answer.cut:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = _QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _matrix(result: list[dict[str, Any]]) -> bytes:
    return json.dumps(
        {"status": "success", "data": {"resultType": "matrix", "result": result}}
    ).encode()


def _series(labels: dict[str, str], points: list[tuple[int, str]]) -> dict[str, Any]:
    return {"metric": labels, "values": [[t, v] for t, v in points]}


def _in_range(form: dict[str, str]) -> list[tuple[int, str]]:
    start, end = int(form["start"]), int(form["end"])
    step = int(form["step"].rstrip("s"))
    return [(t, "3") for t in range(start, end + 1, step)]


def test_a_long_range_is_asked_in_pages_that_join(fake: Fake) -> None:
    fake.answer = lambda form, path: Answer(body=_matrix([_series({"a": "1"}, _in_range(form))]))
    connection = Connection(url=fake.url + "/", token="s3cret")
    [series] = query_range(connection, "up", start=300, end=300 * 100, step=300, page_points=30)
    assert [t for t, _ in series.points] == list(range(300, 300 * 101, 300))
    pages = [(int(form["start"]), int(form["end"])) for _, form, _ in fake.requests]
    # The newest page first (it tells how many series there are), then the older ones.
    assert pages[0] == (21300, 30000)
    assert sorted(pages) == [(300, 9000), (9300, 18000), (18300, 21000), (21300, 30000)]
    for path, form, headers in fake.requests:
        assert (path, form["query"], form["step"]) == ("/api/v1/query_range", "up", "300s")
        assert headers["Authorization"] == "Bearer s3cret"


_DAY = 86400


@pytest.mark.parametrize(
    ("kept", "label"),
    [
        # Prometheus kept the last 4 days of the 14 asked (its retention).
        ((10 * _DAY, 14 * _DAY), "retention"),
        # Autoscalers deleted since: the newest day has no series.
        ((3 * _DAY, 5 * _DAY), "deleted"),
    ],
)
def test_pages_stay_small_when_the_oldest_or_newest_days_are_empty(
    fake: Fake, monkeypatch: pytest.MonkeyPatch, kept: tuple[int, int], label: str
) -> None:
    """Every answer holds at most the budget of points, or a day of every series, wherever
    the history starts: an empty first day does not size the pages as if there were one
    series (docs/suggest.md, "Prometheus", "Pages")."""
    budget, series_count = 2000, 20
    monkeypatch.setattr("spa.history.prometheus._PAGE_BUDGET", budget)
    sizes: list[int] = []

    def answer(form: dict[str, str], path: str) -> Answer:
        points = [(t, v) for t, v in _in_range(form) if kept[0] <= t < kept[1]]
        result = [_series({"hpa": str(n)}, points) for n in range(series_count)] if points else []
        sizes.append(len(points) * len(result))
        return Answer(body=_matrix(result))

    fake.answer = answer
    found = query_range(
        Connection(url=fake.url), "up", start=300, end=14 * _DAY, step=300, page_points=2016
    )
    assert len(found) == series_count, label
    for series in found:
        assert list(series.times) == list(range(kept[0], kept[1], 300)), label
    a_day = 288 * series_count
    assert max(sizes) <= max(budget, a_day), (label, sizes)


def _error(kind: str, message: str) -> bytes:
    return json.dumps({"status": "error", "errorType": kind, "error": message}).encode()


@pytest.mark.parametrize(
    ("answer", "status", "message"),
    [
        (Answer(401, b"Unauthorized"), EXIT_UNAUTHORIZED, "refused the credentials (401)"),
        (Answer(403, _error("forbidden", "no")), EXIT_UNAUTHORIZED,
         "refused the credentials (403): no"),
        (Answer(400, _error("bad_data", "1:5: parse error")), EXIT_BAD_QUERY,
         "refused the query up: 1:5: parse error"),
        (Answer(422, _error("execution", "too many samples")), EXIT_DATA,
         "could not answer the query (execution): too many samples"),
        (Answer(503, _error("unavailable", "shutting down")), EXIT_UNREACHABLE,
         "answered 503 unavailable: shutting down"),
        (Answer(502, b"<html>bad gateway</html>", "text/html"), EXIT_UNREACHABLE,
         "answered 502 ('<html>bad gateway</html>') to up"),
        (Answer(404, b"404 page not found", "text/plain"), EXIT_UNREACHABLE,
         "has no Prometheus API (404"),
        (Answer(200, b"<html>Grafana</html>", "text/html"), EXIT_UNREACHABLE,
         "something other than the JSON of Prometheus's API ('<html>Grafana</html>')"),
        (Answer(200, b'{"status": "success", "data": {"resultType": "vector", "result": []}}'),
         EXIT_UNREACHABLE, "data.resultType is 'vector', not 'matrix'"),
        (Answer(200, _matrix([{"metric": {}, "values": [[1, 2]]}])), EXIT_UNREACHABLE,
         "data.result[0].values[0]: the value 2 is not a string"),
        (Answer(200, _matrix([{"metric": {"a": 1}, "values": []}])), EXIT_UNREACHABLE,
         "data.result[0].metric is not an object of label names and values"),
        (Answer(200, _matrix([{"metric": {}, "values": [["x", "1"]]}])), EXIT_UNREACHABLE,
         "the time 'x' is not a number"),
        (Answer(200, _matrix([{"metric": {}, "values": [[1, "many"]]}])), EXIT_UNREACHABLE,
         "the value 'many' is not a number"),
        (Answer(200, b'{"status": "error", "errorType": "timeout", "error": "query timed out"}'),
         EXIT_DATA, "could not answer the query (timeout): query timed out"),
        (Answer(200, b'{"status": "maybe"}'), EXIT_UNREACHABLE,
         "its status is 'maybe', not 'success'"),
        (Answer(200, b"[]"), EXIT_UNREACHABLE, "the answer is not a JSON object"),
        (Answer(200, b'{"status": "success"}'), EXIT_UNREACHABLE,
         "data is missing or not an object"),
        (Answer(200, _matrix([])[:20], cut=True), EXIT_UNREACHABLE, "was cut"),
        (Answer(200, _matrix([]), delay=3), EXIT_UNREACHABLE, "did not answer within 1 s"),
    ],
)  # fmt: skip
def test_every_wrong_answer_is_one_clear_error(
    fake: Fake, answer: Answer, status: int, message: str
) -> None:
    fake.answer = lambda form, path: answer
    with pytest.raises(PrometheusError) as raised:
        query_range(Connection(url=fake.url, timeout=1), "up", start=0, end=600, step=300)
    assert raised.value.status == status
    assert message in raised.value.message, raised.value.message
    assert "\n" not in raised.value.message


def test_a_server_that_is_not_there() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PrometheusError) as raised:
        query_range(Connection(url=f"http://127.0.0.1:{port}"), "up", start=0, end=600, step=300)
    assert raised.value.status == EXIT_UNREACHABLE
    assert "cannot reach Prometheus at http://127.0.0.1:" in raised.value.message


def test_tls_files_that_cannot_be_read_are_an_argument_error() -> None:
    connection = Connection(url="https://127.0.0.1:1", certificate_authority="/nonexistent/ca.pem")
    with pytest.raises(PrometheusError) as raised:
        query_range(connection, "up", start=0, end=600, step=300)
    assert raised.value.status == EXIT_BAD_QUERY
    assert raised.value.message.startswith("cannot load the TLS files for https://127.0.0.1:1")


def test_series_are_matched_to_autoscalers_and_gaps_said(fake: Fake) -> None:
    def answer(form: dict[str, str], path: str) -> Answer:
        if path == "/api/v1/query":
            vector = [
                {
                    "metric": {"namespace": "shop", "horizontalpodautoscaler": "web"},
                    "value": [1, "2"],
                }
            ]
            return Answer(
                body=json.dumps(
                    {"status": "success", "data": {"resultType": "vector", "result": vector}}
                ).encode()
            )
        points = [(t, "4") for t, _ in _in_range(form) if not 30000 <= t < 50000]
        return Answer(
            body=_matrix([_series({"namespace": "shop", "horizontalpodautoscaler": "web"}, points)])
        )

    fake.answer = answer
    found = read_histories(
        Connection(url=fake.url),
        Selection(everything=True),
        Source(),
        start=0,
        until=86400 * 2,
        step=300,
    )
    assert list(found.needs) == [("shop", "web")]
    assert found.bases == {("shop", "web"): 2}
    assert found.notes[("shop", "web")] == [
        "No data from 1970-01-01T08:15:00Z to 1970-01-01T13:50:00Z (5 h 35 min): left out."
    ]


def test_label_selectors_become_kube_state_metrics_matchers() -> None:
    assert label_matchers(
        "team=shop, tier!=batch,env in (a, b),!canary,app.kubernetes.io/part-of"
    ) == [
        'label_team="shop"',
        'label_tier!="batch"',
        'label_env=~"a|b"',
        'label_canary=""',
        'label_app_kubernetes_io_part_of!=""',
    ]


# Answers built from the API's shape with parts replaced by anything JSON can hold.
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
_POINT = st.one_of(
    st.tuples(st.integers(0, 2000), st.sampled_from(["3", "NaN", "+Inf", "-1", "1e400", "x"])).map(
        list
    ),
    _JSON,
)
_SERIES = st.fixed_dictionaries(
    {"metric": st.one_of(st.just({"namespace": "shop", "horizontalpodautoscaler": "web"}), _JSON),
     "values": st.one_of(st.lists(_POINT, max_size=4), _JSON)}
)  # fmt: skip
_ITEM = st.one_of(_SERIES, _SERIES, _JSON)
_BODY = st.one_of(
    st.builds(_matrix, st.lists(_ITEM, max_size=3)),
    st.builds(
        lambda status, kind, result: json.dumps(
            {"status": status, "data": {"resultType": kind, "result": result}}
        ).encode(),
        st.sampled_from(["success", "success", "error", "x"]),
        st.one_of(st.sampled_from(["matrix", "vector", "scalar"]), _JSON),
        st.one_of(st.lists(_ITEM, max_size=3), _JSON),
    ),
    st.builds(
        lambda kind, message: json.dumps(
            {"status": "error", "errorType": kind, "error": message}
        ).encode(),
        st.one_of(st.sampled_from(["bad_data", "execution", "timeout"]), _JSON),
        _JSON,
    ),
    st.builds(lambda value: json.dumps(value).encode(), _JSON),
    st.binary(max_size=40),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(status=st.sampled_from([200, 200, 200, 400, 401, 404, 422, 500, 503]), body=_BODY)
def test_any_answer_is_the_history_or_a_clean_error(fake: Fake, status: int, body: bytes) -> None:
    fake.answer = lambda form, path: Answer(status, body)
    failed: PrometheusError | None = None
    try:
        query_range(Connection(url=fake.url, timeout=5), "up", start=0, end=1200, step=300)
    except PrometheusError as error:
        failed = error
    if failed is not None:
        assert failed.message
        assert "\n" not in failed.message
        assert failed.status in (EXIT_DATA, EXIT_BAD_QUERY, EXIT_UNREACHABLE, EXIT_UNAUTHORIZED)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    status=st.sampled_from([200, 200, 400, 401, 500]),
    body=_BODY,
    output=st.sampled_from(["yaml", "json"]),
)
def test_spa_suggest_never_shows_a_traceback(
    fake: Fake, capsys: pytest.CaptureFixture[str], status: int, body: bytes, output: str
) -> None:
    fake.answer = lambda form, path: Answer(status, body)
    code = main(["suggest", "--prometheus", fake.url, "-A", "--until", "1970-01-02T00:00:00Z",
                 "--weeks", "1", "--request-timeout", "5", "-o", output])  # fmt: skip
    err = capsys.readouterr().err
    assert code in (0, EXIT_DATA, EXIT_BAD_QUERY, EXIT_UNREACHABLE, EXIT_UNAUTHORIZED)
    assert "Traceback" not in err
    if code:
        assert err.startswith("error: ") or "\nerror: " in err, err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--time-zone", "Mars/Olympus"], "error: --time-zone: "),
        (["--holidays", "XX"], "error: --holidays: "),
    ],
)
@pytest.mark.parametrize("command", ["suggest", "backtest"])
def test_a_bad_zone_or_calendar_is_named_before_prometheus_is_asked(
    fake: Fake,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
    command: str,
    flags: list[str],
    said: str,
) -> None:
    (tmp_path / "spa.yaml").write_text(
        "apiVersion: autoscaling.d-kuro.github.io/v1\nkind: ScheduledPodAutoscaler\n"
        "metadata: {name: web}\nspec:\n  horizontalPodAutoscalerSpec:\n"
        "    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
        "    maxReplicas: 5\n"
    )
    chosen = ["-A"] if command == "suggest" else ["-f", str(tmp_path)]
    code = main([command, "--prometheus", fake.url, *chosen, *flags])
    assert code == EXIT_BAD_QUERY
    assert capsys.readouterr().err.startswith(said)
    assert fake.requests == []


def test_the_token_file_is_sent_as_a_bearer_token(
    fake: Fake, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    """--token-file as kubectl's: the file's token (without its newline) on every request; a
    token the server refuses is exit 5, an empty file an argument error before any request."""

    def answer(form: dict[str, str], path: str) -> Answer:
        if fake.requests[-1][2].get("Authorization") != "Bearer s3cret":
            return Answer(401, b"Unauthorized", "text/plain")
        return Answer(body=_matrix([]))

    fake.answer = answer
    until = ["--until", "1970-01-15T00:00:00Z", "--weeks", "1"]
    token = tmp_path / "token"
    for text, status, said in [
        ("s3cret\n", 1, "error: the query returned no series between"),
        ("wrong\n", 5, f"error: Prometheus at {fake.url} refused the credentials (401): give a "
                       "token it accepts with --token-file"),
        ("\n", 2, f"error: --token-file: {token} is empty"),
    ]:  # fmt: skip
        token.write_text(text)
        asked = len(fake.requests)
        code = main(["suggest", "--prometheus", fake.url, "-A", "--token-file", str(token), *until])
        err = capsys.readouterr().err
        assert (code, err.startswith(said)) == (status, True), err
        sent = {headers.get("Authorization") for _, _, headers in fake.requests[asked:]}
        assert sent == ({f"Bearer {text.strip()}"} if text.strip() else set()), sent


_SPA_AND_SCHEDULE = """\
apiVersion: autoscaling.d-kuro.github.io/v1
kind: ScheduledPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 1
    maxReplicas: 20
---
apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {name: morning, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: autoscaling.d-kuro.github.io/v1, kind: ScheduledPodAutoscaler,
                   name: web}
  type: Daily
  startTime: "09:00"
  endTime: "12:00"
  minReplicas: 10
"""
_WEB = {"namespace": "shop", "horizontalpodautoscaler": "web"}


def _four_weeks(
    value_at: Callable[[int], str], base: str = "1"
) -> Callable[[dict[str, str], str], Answer]:
    """A fake Prometheus with a history of shop/web whose value at each instant is
    `value_at(instant)`, and `base` as its HPA's minReplicas."""

    def answer(form: dict[str, str], path: str) -> Answer:
        if path == "/api/v1/query":
            vector = [{"metric": _WEB, "value": [1, base]}]
            body = {"status": "success", "data": {"resultType": "vector", "result": vector}}
            return Answer(body=json.dumps(body).encode())
        points = [(t, value_at(t)) for t, _ in _in_range(form)]
        return Answer(body=_matrix([_series(_WEB, points)]))

    return answer


def _morning(instant: int) -> str:
    """10 replicas from 09:00 to 12:00 UTC every day, 1 otherwise."""
    return "10" if 9 <= instant // 3600 % 24 < 12 else "1"


def _run_on(fake: Fake, tmp_path: Any, command: str, *flags: str) -> int:
    manifests = tmp_path / "spa.yaml"
    manifests.write_text(_SPA_AND_SCHEDULE)
    chosen = ["-A"] if command == "suggest" else ["-f", str(manifests)]
    return main([command, "--prometheus", fake.url, *chosen, "--until", "1970-01-29T00:00:00Z",
                 "--weeks", "4", "--request-timeout", "5", *flags])  # fmt: skip


@pytest.mark.parametrize("output", ["json", "html"])
@pytest.mark.parametrize("command", ["suggest", "backtest"])
@pytest.mark.parametrize("value", ["1.7976931348623157e308", "3e9"])
def test_a_value_beyond_any_count_of_replicas_is_a_clean_error(
    fake: Fake,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
    value: str,
    command: str,
    output: str,
) -> None:
    """One step of the history above what Kubernetes can count (int32): the autoscaler's
    history is refused with its reason, as a negative value is (the largest float made an
    integer the analysis could not make a float again: an OverflowError)."""
    fake.answer = _four_weeks(lambda t: value if t == 20 * 86400 + 9 * 3600 else _morning(t))
    code = _run_on(fake, tmp_path, command, "-o", output)
    err = capsys.readouterr().err
    assert code == EXIT_DATA, err
    assert err.startswith(
        f"error: shop/web: a value of {float(value):g} at 1970-01-21T09:00:00Z needs more "
        "replicas than Kubernetes counts (2147483647): if the query is a load, give what one "
        "replica serves with --per-pod"
    ), err


@pytest.mark.parametrize("command", ["suggest", "backtest"])
@pytest.mark.parametrize("base", ["+Inf", "NaN", "1e300", "-1"])
def test_a_min_replicas_no_hpa_can_have_is_no_base(
    fake: Fake, capsys: pytest.CaptureFixture[str], tmp_path: Any, base: str, command: str
) -> None:
    fake.answer = _four_weeks(_morning, base=base)
    code = _run_on(fake, tmp_path, command, "-o", "json")
    out, err = capsys.readouterr()
    assert code == 0, err
    if command == "suggest":
        [web] = json.loads(out)["autoscalers"]
        assert web["minReplicas"] == 1
        assert [s["manifest"]["spec"]["minReplicas"] for s in web["schedules"]] == [10]


_ODD = ["0", "0.5", "7.25", "1e9", "3e9", "1e300", "1.7976931348623157e308", "NaN", "+Inf",
        "-Inf", "-2"]  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 1 << 20),
    odd=st.lists(st.sampled_from(_ODD), min_size=1, max_size=3),
    command=st.sampled_from(["suggest", "backtest"]),
    output=st.sampled_from(["json", "html"]),
)
def test_any_values_of_a_whole_history_are_a_result_or_a_clean_error(
    fake: Fake,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    odd: list[str],
    command: str,
    output: str,
) -> None:
    """A history long enough to be analysed (four weeks of a daily peak), with odd values at
    random steps: both commands print a result or one error line per autoscaler, whatever
    the values (the fuzzing above never gets past the parser's checks)."""

    def value_at(instant: int) -> str:
        draw = random.Random(seed * 1_000_003 + instant)
        return odd[draw.randrange(len(odd))] if draw.random() < 0.2 else _morning(instant)

    fake.answer = _four_weeks(value_at, base=odd[0])
    code = _run_on(fake, tmp_path_factory.mktemp("manifests"), command, "-o", output)
    err = capsys.readouterr().err
    assert code in (0, EXIT_DATA), err
    if code:
        assert err.startswith("error: shop/web: "), err
