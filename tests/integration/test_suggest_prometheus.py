"""`spa suggest` against a real Prometheus loaded with four weeks of a corpus with known truth
(tests/history/corpus.py): the targets of docs/suggest.md, "How it is tested", and a clean
error for every way the history can be wrong.

The Prometheus is Debian's (`hack/system/install.sh test` installs it), its history written by
`promtool tsdb create-blocks-from openmetrics` (tests/history/prometheus.py); no control plane.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from spa.cli import main
from spa.schedule import format_instant, to_instant
from tests.history.corpus import PER_POD, Corpus, Workload, openmetrics, standard_corpus
from tests.history.pages import self_contained
from tests.history.prometheus import MISSING, RealPrometheus, load_blocks, serving, tools
from tests.history.targets import measure, occurrences
from tests.testenv.controlplane import free_port
from tests.testenv.pki import Pki, ensure_pki

pytestmark = pytest.mark.integration

SPA = Path(sys.executable).parent / "spa"
CORPUS = standard_corpus()
UNTIL = format_instant(CORPUS.until)
ZONE = "America/New_York"
BY = "namespace, horizontalpodautoscaler"


@pytest.fixture(scope="module")
def blocks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus's history as TSDB blocks, before any server opens them."""
    if tools() is None:
        pytest.fail(MISSING, pytrace=False)
    data = load_blocks(openmetrics(CORPUS), tmp_path_factory.mktemp("blocks"))
    # A copy for the TLS server of test_tls_options_as_kubectl_names_them (a TSDB has one
    # server).
    shutil.copytree(data, data.parent / "copy")
    return data


@pytest.fixture(scope="module")
def prometheus(blocks: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealPrometheus]:
    with serving(blocks, tmp_path_factory.mktemp("prometheus")) as server:
        yield server


def _run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    status = main(["suggest", *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _workload(key: str) -> Workload:
    [found] = [w for w in CORPUS.workloads if w.key == key]
    return found


def _one_offs(corpus: Corpus, workload: Workload) -> list[tuple[int, int]]:
    return [
        (to_instant(b.start, corpus.zone), to_instant(b.end, corpus.zone))
        for b in [*workload.spikes, *workload.monthly]
    ]


def _suggested(document: dict[str, Any], key: str) -> dict[str, Any]:
    autoscalers: list[dict[str, Any]] = document["autoscalers"]
    [found] = [a for a in autoscalers if f"{a['namespace']}/{a['name']}" == key]
    return found


@pytest.fixture(scope="module")
def suggestion(prometheus: RealPrometheus) -> dict[str, Any]:
    """`spa suggest -A -o json` on the corpus, as the console script runs it."""
    result = subprocess.run(
        [str(SPA), "suggest", "--prometheus", prometheus.url, "-A", "--time-zone", ZONE,
         "--until", UNTIL, "-o", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.mark.parametrize("key", ["shop/web", "batch/importer"])
def test_the_suggestion_meets_the_targets(suggestion: dict[str, Any], key: str) -> None:
    workload = _workload(key)
    found = _suggested(suggestion, key)
    manifests = [s["manifest"] for s in found["schedules"]]
    measured = measure(
        workload.manifests(),
        [*workload.manifests(schedules=False), *manifests],
        namespace=workload.namespace,
        name=workload.name,
        base=workload.base,
        start=CORPUS.start,
        until=CORPUS.until,
        one_offs=_one_offs(CORPUS, workload),
    )
    assert measured.starts_missed == [], [format_instant(s) for s in measured.starts_missed]
    assert measured.coverage >= 0.95, measured
    assert measured.added <= 0.10, measured
    assert measured.on_one_offs == [], measured
    # As few windows as the truth needs.
    assert len(manifests) == len(workload.schedules), manifests
    # Each one-off peak is reported, at its time.
    reported = [(o["start"], o["end"]) for o in found["oneOffs"]]
    for start, end in _one_offs(CORPUS, workload):
        assert any(
            a <= format_instant(start) < b or format_instant(start) <= a < format_instant(end)
            for a, b in reported
        ), (
            format_instant(start),
            reported,
        )


def test_a_holiday_dip_becomes_holidays_of_the_country(suggestion: dict[str, Any]) -> None:
    web = _suggested(suggestion, "shop/web")
    [office] = [
        s
        for s in web["schedules"]
        if s["manifest"]["spec"]["type"] == "Weekly"
        and s["manifest"]["spec"]["startDayOfWeek"] == "Monday"
    ]
    assert office["manifest"]["spec"]["holidays"] == {"country": "US"}
    assert office["dips"] == [{"date": "2026-10-12", "holiday": "Columbus Day"}]
    assert web["unexplainedDips"] == []


def test_an_autoscaler_without_peaks_gets_no_schedule(suggestion: dict[str, Any]) -> None:
    quiet = _suggested(suggestion, "shop/quiet")
    assert quiet["schedules"] == []
    assert quiet["oneOffs"] == []


def test_the_yaml_is_valid_schedules_with_their_comments(
    prometheus: RealPrometheus, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run(capsys, "--prometheus", prometheus.url, "--autoscaler", "shop/web",
                            "--time-zone", ZONE, "--until", UNTIL)  # fmt: skip
    assert status == 0, err
    documents = [d for d in yaml.safe_load_all(out) if d is not None]
    assert {d["kind"] for d in documents} == {"Schedule"}
    assert "# Mon-Fri 08:00-18:00 America/New_York: from the weeks of 2026-10-12" in out
    assert "# holidays US: the peak did not come on 2026-10-12 (Columbus Day)" in out
    assert "Not scheduled, seen once: Thu 2026-10-29 03:00 EDT to 03:30, up to 30 replicas." in out
    # The same manifests plan without an error next to the SPA.
    web = _workload("shop/web")
    measure(web.manifests(), [*web.manifests(schedules=False), *documents], namespace="shop",
            name="web", base=web.base, start=CORPUS.start, until=CORPUS.until)  # fmt: skip


def test_a_label_selector_picks_the_hpas_by_their_labels(
    prometheus: RealPrometheus, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run(capsys, "--prometheus", prometheus.url, "-l", "team=data",
                            "--time-zone", ZONE, "--until", UNTIL, "-o", "json")  # fmt: skip
    assert status == 0, err
    assert [a["name"] for a in json.loads(out)["autoscalers"]] == ["importer"]


def test_a_load_with_restarts_read_through_its_rate(
    prometheus: RealPrometheus, capsys: pytest.CaptureFixture[str]
) -> None:
    query = f"sum by ({BY}) (rate(http_requests_total[5m]))"
    status, out, err = _run(
        capsys, "--prometheus", prometheus.url, "--autoscaler", "shop/web", "--autoscaler",
        "batch/importer", "--query", query, "--per-pod", str(PER_POD), "--time-zone", ZONE,
        "--until", UNTIL, "-o", "json",
    )  # fmt: skip
    assert status == 0, err
    document = json.loads(out)
    for key in ("shop/web", "batch/importer"):
        workload = _workload(key)
        found = _suggested(document, key)
        measured = measure(
            workload.manifests(),
            [*workload.manifests(schedules=False), *(s["manifest"] for s in found["schedules"])],
            namespace=workload.namespace, name=workload.name, base=workload.base,
            start=CORPUS.start, until=CORPUS.until,
        )  # fmt: skip
        assert measured.starts_missed == [], key
        assert measured.coverage >= 0.95, (key, measured)


DESIRED = "kube_horizontalpodautoscaler_status_desired_replicas"
NO_SERIES = "the query returned no series between"
WRONG = [
    (["--autoscaler", "shop/web", "--query", f"sum by ({BY}) (http_requests_total)"], 1,
     "shop/web: the series looks like a counter (it only grows, and falls back at 3 restart(s))"),
    (["--autoscaler", "shop/web", "--query", f"sum by (namespace) ({DESIRED})"], 1,
     'shop/web: the query returned 2 series for it ({namespace="batch"}; {namespace="shop"})'),
    (["-A", "--query", f"sum({DESIRED})"], 2,
     "a series of the answer has no namespace and horizontalpodautoscaler labels ({})"),
    (["--autoscaler", "shop/web", "--autoscaler", "shop/nothing"], 1,
     "error: shop/nothing: no history between 2026-10-12T05:00:00Z and 2026-11-09T05:00:00Z"),
    (["--autoscaler", "shop/nothing"], 1, NO_SERIES),
    (["-l", "team=nobody"], 1, NO_SERIES),
    (["-A", "--query", "sum(("], 2,
     "refused the query max_over_time((sum(()[300s:60s]): 1:21: parse error"),
    (["--autoscaler", "shop/web", "--until", "2026-09-01T00:00:00Z"], 1, NO_SERIES),
]  # fmt: skip


@pytest.mark.parametrize(("arguments", "status", "message"), WRONG)
def test_every_wrong_history_is_a_clean_error(
    prometheus: RealPrometheus,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    status: int,
    message: str,
) -> None:
    until = ["--until", UNTIL] if "--until" not in arguments else []
    found, _, err = _run(
        capsys, "--prometheus", prometheus.url, "--time-zone", ZONE, *until, *arguments
    )
    assert (found, "Traceback" in err) == (status, False), err
    assert message in err, err


def test_an_unreachable_server_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    status, _, err = _run(capsys, "--prometheus", url, "-A")
    assert status == 4
    assert err.startswith(
        f"error: cannot reach Prometheus at {url}: [Errno 111] Connection refused"
    )


# --- spa backtest ---------------------------------------------------------------------------


def _manifests_file(path: Path, *, schedules: bool) -> Path:
    bodies = [m for w in CORPUS.workloads for m in w.manifests(schedules=schedules)]
    path.write_text(yaml.safe_dump_all(bodies, sort_keys=False))
    return path


def _backtest(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    status = main(["backtest", "--time-zone", ZONE, "--until", UNTIL, *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_true_schedules_replay_without_shortfall(
    prometheus: RealPrometheus, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    truth = _manifests_file(tmp_path / "truth.yaml", schedules=True)
    status, out, err = _backtest(
        capsys, "-f", str(truth), "--prometheus", prometheus.url, "-o", "json"
    )
    assert status == 0, err
    found = {a["name"]: a for a in json.loads(out)["autoscalers"]}
    for name in ("web", "importer"):
        assert found[name]["shortfallMinutes"] == 0, name
        assert found[name]["held"] == found[name]["recurringPeaks"] > 0, name
        assert not any(s["neverNeeded"] for s in found[name]["schedules"]), name


def _utc(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def test_no_schedule_replays_every_peak_short(
    prometheus: RealPrometheus, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    empty = _manifests_file(tmp_path / "empty.yaml", schedules=False)
    status, out, err = _backtest(
        capsys, "-f", str(empty), "--prometheus", prometheus.url, "-o", "json"
    )
    assert status == 0, err
    for autoscaler in json.loads(out)["autoscalers"]:
        recurring = [p for p in autoscaler["peaks"] if not p["oneOff"]]
        if autoscaler["name"] == "quiet":
            assert recurring == []
            continue
        assert len(recurring) >= 24
        assert all(p["raisedBefore"] is None and p["shortfallMinutes"] > 0 for p in recurring)
        assert autoscaler["held"] == 0
        # Every true window that came (not on a holiday, not in a gap) is in a peak reported,
        # and every one-off peak is reported as one.
        workload = _workload(f"{autoscaler['namespace']}/{autoscaler['name']}")
        # (A one-off peak on top of a recurring one, the monthly batch after the nightly
        # import, is that peak's one-off minutes.)
        spans = [(_utc(p["start"]), _utc(p["end"]), p["oneOff"],
                  p["oneOff"] or p["oneOffShortfallMinutes"] > 0)
                 for p in autoscaler["peaks"]]  # fmt: skip
        gaps = [(to_instant(a, CORPUS.zone), to_instant(b, CORPUS.zone)) for a, b in workload.gaps]
        windows = occurrences(workload.manifests(), namespace=workload.namespace,
                              name=workload.name, start=CORPUS.start,
                              until=CORPUS.until)  # fmt: skip
        assert windows
        for start, end in windows:
            if any(a <= start and end <= b for a, b in gaps):
                continue
            assert any(a < end and start < b and not one_off for a, b, one_off, _ in spans), (
                format_instant(start), autoscaler["name"])  # fmt: skip
        for start, end in _one_offs(CORPUS, workload):
            assert any(a < end and start < b and short for a, b, _, short in spans), (
                format_instant(start), autoscaler["name"])  # fmt: skip


def test_compare_the_branch_with_a_git_revision(
    prometheus: RealPrometheus,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def git(*arguments: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *arguments],
                       cwd=tmp_path, check=True, capture_output=True)  # fmt: skip

    git("init", "-q")
    _manifests_file(tmp_path / "deploy.yaml", schedules=False)
    git("add", "deploy.yaml")
    git("commit", "-qm", "no schedule")
    _manifests_file(tmp_path / "deploy.yaml", schedules=True)
    monkeypatch.chdir(tmp_path)
    status, out, err = _backtest(capsys, "-f", "deploy.yaml", "--prometheus", prometheus.url,
                                 "--compare", "git:HEAD")  # fmt: skip
    assert status == 0, err
    assert "--- old: git:HEAD\n+++ new: deploy.yaml" in out
    web = out[out.index("shop/web") :]
    assert "  recurring peaks held                   0 of 24     24 of 24" in web
    assert "  under-provisioned at recurring peaks   " in web
    status, _, err = _backtest(capsys, "-f", "deploy.yaml", "--prometheus", prometheus.url,
                               "--compare", "git:no-such-branch")  # fmt: skip
    assert status == 2
    assert "error: --compare git:no-such-branch: unknown revision 'no-such-branch'" in err


def test_with_manifests_the_suggestion_is_shown_as_a_plan_diff(
    prometheus: RealPrometheus, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The true Schedules, whose zone (America/New_York) is the autoscalers' without a flag:
    # for shop/web the suggestion moves no transition, it only names the Schedules its way.
    truth = _manifests_file(tmp_path / "truth.yaml", schedules=True)
    status, out, err = _run(capsys, "--prometheus", prometheus.url, "-f", str(truth),
                            "--until", UNTIL)  # fmt: skip
    assert status == 0, err
    assert out.startswith(
        f"Plan diff from {UNTIL} until 2026-11-16T05:00:00Z (times in UTC)\n"
        f"--- old: {truth}\n+++ new: spa suggest\n"
    )
    assert "shop/web: changed: transitions 20 changed\n" in out
    assert "!   2026-11-09T12:55:00Z   12    60    office -> web-mon-fri-0800 " in out
    # shop/web's windows are the true ones (batch/importer's nightly window starts a step
    # early: its demand comes up to 4 minutes before 01:00).
    web = out[out.index("shop/web:") :]
    changes = [line for line in web.splitlines() if line[:1] in "+-!" and line[1:2] == " "]
    assert changes
    assert all(line.startswith("!") and " -> " in line for line in changes), changes
    # Without Schedules, every window is added.
    empty = _manifests_file(tmp_path / "empty.yaml", schedules=False)
    status, out, err = _run(capsys, "--prometheus", prometheus.url, "-f", str(empty),
                            "--time-zone", ZONE, "--until", UNTIL)  # fmt: skip
    assert status == 0, err
    assert "shop/web: changed: transitions 26 added" in out
    assert "batch/importer: changed: transitions 14 added" in out


# --- TLS and client certificates, as kubectl names them --------------------------------------


@pytest.fixture(scope="module")
def tls_prometheus(
    blocks: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RealPrometheus, Pki]]:
    """The same history behind TLS that asks for a client certificate of its CA (Prometheus's
    `--web.config.file`)."""
    directory = tmp_path_factory.mktemp("tls")
    pki = ensure_pki(directory / "pki")
    config = directory / "web.yml"
    config.write_text(
        "tls_server_config:\n"
        f"  cert_file: {pki.serving_cert}\n"
        f"  key_file: {pki.serving_key}\n"
        "  client_auth_type: RequireAndVerifyClientCert\n"
        f"  client_ca_file: {pki.ca_cert}\n"
    )
    context = ssl.create_default_context(cafile=str(pki.ca_cert))
    context.load_cert_chain(str(pki.admin.cert), str(pki.admin.key))
    with serving(blocks.parent / "copy", directory, web_config=config, context=context) as server:
        yield server, pki


def _tls_flags(pki: Pki, *names: str) -> list[str]:
    given = {
        "ca": ["--certificate-authority", str(pki.ca_cert)],
        "cert": ["--client-certificate", str(pki.admin.cert), "--client-key", str(pki.admin.key)],
        "insecure": ["--insecure-skip-tls-verify"],
    }
    return [flag for name in names for flag in given[name]]


@pytest.mark.parametrize("trust", ["ca", "insecure"])
def test_tls_options_as_kubectl_names_them(
    tls_prometheus: tuple[RealPrometheus, Pki], capsys: pytest.CaptureFixture[str], trust: str
) -> None:
    server, pki = tls_prometheus
    assert server.url.startswith("https://")
    status, out, err = _run(capsys, "--prometheus", server.url, *_tls_flags(pki, trust, "cert"),
                            "--autoscaler", "shop/web", "--time-zone", ZONE, "--until", UNTIL,
                            "-o", "json")  # fmt: skip
    assert status == 0, err
    [web] = json.loads(out)["autoscalers"]
    assert len(web["schedules"]) == 4


def test_tls_that_fails_is_a_clean_error(
    tls_prometheus: tuple[RealPrometheus, Pki],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    server, pki = tls_prometheus
    other = ensure_pki(tmp_path / "other")
    cases = [
        # Prometheus's certificate is of a CA the client does not trust.
        (_tls_flags(pki, "cert"), 4,
         f"TLS with Prometheus at {server.url} failed: its certificate is not trusted "
         "(unable to get local issuer certificate): give its CA with --certificate-authority"),
        (["--certificate-authority", str(other.ca_cert), *_tls_flags(pki, "cert")], 4,
         "its certificate is not trusted (certificate signature failure)"),
        # The client has no certificate, or one of another CA: Prometheus refuses it (with an
        # alert, or, as TLS 1.3 may, by closing the connection: an EOF).
        (_tls_flags(pki, "ca"), 5, f"Prometheus at {server.url} ended the TLS handshake ("),
        (_tls_flags(pki, "ca"), 5,
         "): it asks for a client certificate: give one with --client-certificate and "
         "--client-key"),
        (["--client-certificate", str(other.admin.cert), "--client-key", str(other.admin.key),
          *_tls_flags(pki, "ca")], 5,
         f"Prometheus at {server.url} refused the client certificate {other.admin.cert} ("),
        # Plain HTTP to a TLS port.
        ([], 4, "('Client sent an HTTP request to an HTTPS server.'): give its https:// URL"),
    ]  # fmt: skip
    found = []
    for flags, _, _ in cases:
        url = server.url if flags else server.url.replace("https://", "http://")
        status, _, err = _run(capsys, "--prometheus", url, *flags, "--autoscaler", "shop/web",
                              "--until", UNTIL)  # fmt: skip
        found.append((status, err))
    for (_, expected, message), (status, err) in zip(cases, found, strict=True):
        assert (status, "Traceback" in err, err.count("\n")) == (expected, False, 1), found
        assert err.startswith("error: "), found
        assert message in err, found


# --- docs/suggest.md's example, as a new user runs it ------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "suggest.md"
DOCS_URL = "http://127.0.0.1:9090"


def _example_blocks() -> list[tuple[list[str], list[str]]]:
    """Each `$ spa ...` block of docs/suggest.md's "An example": the command's words and the
    output lines shown."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## An example") :]
    section = section[: section.index("\n## ", 1)]
    found = []
    for block in re.findall(r"\n```\n(.*?)\n```", section, re.S):
        lines = block.split("\n")
        if not lines[0].startswith("$ spa "):
            continue
        command = lines.pop(0)
        while command.endswith("\\"):
            command = command[:-1] + lines.pop(0)
        found.append((shlex.split(command[len("$ spa ") :]), lines))
    return found


def _shows(shown: list[str], out: str) -> str | None:
    """Why the output `out` is not what the docs show, or None: each line shown is the next
    line of the output; `...` (a line of its own, or within a line) stands for anything."""
    position, skipping = 0, False
    for line in shown:
        if line.strip() == "...":
            skipping = True
            continue
        if "..." in line:
            parts = [part.strip() for part in line.split("...")]
            pattern = re.compile(".*?".join(re.escape(part) for part in parts), re.S)
            match = pattern.search(out, position)
            if match is None or (not skipping and match.start() != position):
                return f"no output matches {line!r} after {out[position : position + 200]!r}"
            position = out.find("\n", match.end()) + 1 or len(out)
            skipping = True
            continue
        at = out.find(line + "\n", position) if skipping else position
        while skipping and at > 0 and out[at - 1] != "\n":
            at = out.find(line + "\n", at + 1)
        if at < 0 or not out.startswith(line + "\n", at):
            return f"expected {line!r}, found {out[position : position + 200]!r}"
        position, skipping = at + len(line) + 1, False
    return None


def test_the_docs_example_is_what_the_commands_print(
    prometheus: RealPrometheus,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/suggest.md's example, run as shown (the URL of the corpus's Prometheus
    replaced): `spa suggest` prints what the docs show; its Schedules and the SPA in deploy/,
    `spa backtest` too."""
    [(suggest, suggested), (backtest, replayed)] = _example_blocks()
    assert suggest[0] == "suggest"
    assert backtest[0] == "backtest"
    assert DOCS_URL in suggest
    assert DOCS_URL in backtest
    monkeypatch.chdir(tmp_path)

    def run(words: list[str], shown: list[str]) -> str:
        status = main([prometheus.url if word == DOCS_URL else word for word in words])
        out, err = capsys.readouterr()
        assert status == 0, err
        problem = _shows(shown, out)
        assert problem is None, problem
        return out

    schedules = run(suggest, suggested)
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "schedules.yaml").write_text(schedules)
    (deploy / "spa.yaml").write_text(yaml.safe_dump_all(_workload("shop/web").manifests(
        schedules=False)))  # fmt: skip
    run(backtest, replayed)


def test_the_pages_of_both_commands_from_the_real_history(
    prometheus: RealPrometheus, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`-o html` of `spa suggest -A` and of `spa backtest --compare`, as the commands print
    them from the real Prometheus: self-contained pages with a chart per weekday of each
    autoscaler, and a timeline per autoscaler with both floors (tests/browser renders the
    same renderers' pages in Chromium)."""
    status, page, err = _run(capsys, "--prometheus", prometheus.url, "-A", "--time-zone", ZONE,
                             "--until", UNTIL, "-o", "html")  # fmt: skip
    assert status == 0, err
    self_contained(page)
    for key in ("shop/web", "batch/importer", "shop/quiet"):
        assert f'data-autoscaler="{key}"' in page, key
    assert page.count('<svg class="weekday"') == 7 * 3
    truth = _manifests_file(tmp_path / "truth.yaml", schedules=True)
    empty = _manifests_file(tmp_path / "empty.yaml", schedules=False)
    status, page, err = _backtest(capsys, "-f", str(truth), "--compare", str(empty),
                                  "--prometheus", prometheus.url, "-o", "html")  # fmt: skip
    assert status == 0, err
    self_contained(page)
    assert page.count('<section class="backtest"') == 3
    assert 'class="old-floor"' in page
    assert "old: held 0 of 24" in page
