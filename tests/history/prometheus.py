"""A real Prometheus holding a corpus's history (Debian's `prometheus` package: the server and
`promtool`; `hack/system/install.sh test` installs it).

The corpus is written as OpenMetrics, turned into TSDB blocks by `promtool tsdb
create-blocks-from openmetrics` (the way to load weeks of history without weeks of scraping),
and served by `prometheus` with no scrape target, on a free port of 127.0.0.1 (or the one
given), until stopped; with a web configuration file (`--web.config.file`: TLS, client
certificates) when one is given. Used by tests/integration/test_suggest_prometheus.py and
bench/suggest.py, and to try the commands of docs/suggest.md, "An example", by hand:

    .venv/bin/python -m tests.history.prometheus --port 9090   # the standard corpus, until Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import IO

from tests.testenv.controlplane import free_port
from tests.testenv.processes import ManagedProcess

__all__ = [
    "MISSING",
    "RealPrometheus",
    "load_blocks",
    "running_prometheus",
    "serving",
    "tools",
]

MISSING = (
    "prometheus and promtool are not installed: apt-get install -y prometheus "
    "(hack/system/install.sh test)"
)


def tools() -> tuple[str, str] | None:
    """The paths of `prometheus` and `promtool`, or None where either is missing."""
    server, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if server is None or promtool is None:
        return None
    return server, promtool


def load_blocks(lines: Iterable[str], directory: Path) -> Path:
    """The TSDB blocks of the OpenMetrics `lines`, in `directory`/data.

    promtool reads its whole input once per 2-hour block it writes, so four weeks in one file
    take minutes; the samples are split by UTC day (blocks never straddle one) and each day is
    converted on its own, a few at a time, which takes seconds.
    """
    found = tools()
    if found is None:
        raise RuntimeError(MISSING)
    directory.mkdir(parents=True, exist_ok=True)
    data = directory / "data"
    days = directory / "days"
    days.mkdir(exist_ok=True)
    files: dict[int, IO[str]] = {}
    typed: dict[int, str] = {}
    family = ""
    try:
        for line in lines:
            if line.startswith("# TYPE "):
                family = line
                continue
            if line.startswith("#"):
                continue
            day = int(line.rsplit(" ", 1)[1]) // 86400
            file = files.get(day)
            if file is None:
                file = files[day] = (days / f"{day}.om").open("w", encoding="utf-8")
            if typed.get(day) != family:
                file.write(family + "\n")
                typed[day] = family
            file.write(line + "\n")
    finally:
        for file in files.values():
            file.write("# EOF\n")
            file.close()
    sources = sorted(days.glob("*.om"))

    def convert(source: Path) -> str:
        result = subprocess.run(
            [found[1], "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(source),
             str(data)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        return "" if result.returncode == 0 else f"{source.name}: {result.stdout}{result.stderr}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [failure for failure in pool.map(convert, sources) if failure]
    if failures:
        raise RuntimeError("promtool failed: " + "\n".join(failures))
    shutil.rmtree(days)
    return data


class RealPrometheus:
    """A Prometheus server on the blocks of `data`, without scrape targets."""

    def __init__(
        self, data: Path, workdir: Path, *, port: int | None = None, web_config: Path | None = None
    ) -> None:
        found = tools()
        if found is None:
            raise RuntimeError(MISSING)
        self.port = port or free_port()
        scheme = "https" if web_config is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        config = workdir / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
        web = [f"--web.config.file={web_config}"] if web_config is not None else []
        self.process = ManagedProcess(
            "prometheus",
            [
                found[0],
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=100y",
                *web,
            ],
            workdir / "prometheus.log",
        )
        self.context: ssl.SSLContext | None = None
        """How to reach a TLS server (`--web.config.file`): the test's own certificates."""

    def start(self, *, within: float = 60) -> None:
        self.process.start()
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if not self.process.running:
                raise RuntimeError(f"prometheus exited:\n{self.process.log_tail()}")
            if http_ok(f"{self.url}/-/ready", self.context):
                return
            time.sleep(0.2)
        raise RuntimeError(f"prometheus not ready within {within} s:\n{self.process.log_tail()}")

    def stop(self) -> None:
        self.process.stop()


@contextlib.contextmanager
def running_prometheus(
    lines: Iterable[str], workdir: Path, *, port: int | None = None
) -> Iterator[RealPrometheus]:
    """A Prometheus serving the OpenMetrics `lines`, stopped at the end."""
    data = load_blocks(lines, workdir)
    with serving(data, workdir, port=port) as server:
        yield server


@contextlib.contextmanager
def serving(
    data: Path,
    workdir: Path,
    *,
    port: int | None = None,
    web_config: Path | None = None,
    context: ssl.SSLContext | None = None,
) -> Iterator[RealPrometheus]:
    """A Prometheus on the blocks of `data` (loaded by `load_blocks`), stopped at the end;
    with `web_config`, `context` is how its readiness is asked."""
    server = RealPrometheus(data, workdir, port=port, web_config=web_config)
    server.context = context
    server.start()
    try:
        yield server
    finally:
        server.stop()


def http_ok(url: str, context: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as answer:
            return bool(answer.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def main() -> None:
    """Serve the standard corpus (tests/history/corpus.py) until interrupted."""
    import tempfile

    from tests.history.corpus import openmetrics, standard_corpus

    parser = argparse.ArgumentParser(description="A real Prometheus holding the standard corpus.")
    parser.add_argument("--port", type=int, default=9090, help="on 127.0.0.1 (default 9090)")
    arguments = parser.parse_args()

    def interrupted(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    # Ctrl-C or a kill stops the server and removes its blocks (even where the shell that
    # started it in the background ignores SIGINT).
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    with tempfile.TemporaryDirectory(prefix="spa-corpus-") as workdir:
        print("loading four weeks of history with promtool...", flush=True)
        with running_prometheus(
            openmetrics(standard_corpus()), Path(workdir), port=arguments.port
        ) as server:
            print(f"Prometheus at {server.url} (Ctrl-C stops it)", flush=True)
            try:
                while server.process.running:
                    time.sleep(1)
            except KeyboardInterrupt:
                pass


if __name__ == "__main__":
    main()
