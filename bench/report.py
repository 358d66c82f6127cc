"""What every benchmark of bench/ says when it is done, in one shape: progress on stderr, the
conditions it ran under, the raw results as JSON (`--out`), the percentiles of its figures,
and the verdict of its `--smoke`.

Why one module: each entry point had its own copy of these (five `log`s, two percentiles that
disagreed on the scale of `q`, eight ways to write the same JSON, eight smoke verdicts), and a
benchmark should read as its measurement. The shared scaffolding of bench/ is three flat
modules beside the entry points rather than a package: bench/plane.py (the cluster and the
controller processes in it), bench/fleet.py (the objects a benchmark creates and waits for) and
this one (with bench/measured.py, the arguments). Flat, because every entry point runs as
`python bench/NAME.py` with the repository's root on `sys.path` and imports them as
`bench.NAME`, as it did bench/plane.py and bench/measured.py before them; and because
tests/unit/test_results_index.py reads `bench/*.py` for the paths of raw results.

No `spa` import here: bench/memory.py measures the `spa` of another tree (`--src`), and what
reports its figures must not be that tree's.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "conditions",
    "loadavg",
    "log",
    "machine",
    "middle",
    "percentile",
    "smoke_verdict",
    "summary",
    "write_json",
]


def log(message: str) -> None:
    """A line of progress on stderr, stamped with the UTC time (stdout is the report)."""
    print(f"[{datetime.now(UTC).strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def loadavg() -> list[float]:
    """The machine's 1-, 5- and 15-minute load averages (the machine is shared)."""
    return [float(value) for value in Path("/proc/loadavg").read_text().split()[:3]]


def conditions(*, load: str = "load_average", **extra: object) -> dict[str, Any]:
    """The `conditions` of an in-process benchmark's JSON: Python, CPUs, the load average now
    (under the key `load`), and the benchmark's own settings (`extra`)."""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        load: os.getloadavg(),
        **extra,
    }


def machine() -> dict[str, str]:
    """The `machine` of a cluster benchmark's JSON: date, CPUs, memory, CPU model, Python and
    the load average, as text."""

    def run(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return "?"

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": run("nproc"),
        "memory": run("free", "-h").splitlines()[1] if run("free", "-h") else "?",
        "cpu": next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "?",
        ),
        "python": platform.python_version(),
        "loadavg": Path("/proc/loadavg").read_text().strip(),
    }


def percentile(values: Iterable[float], q: float) -> float:
    """The `q`th percentile (0 to 100) by the nearest rank; NaN of no values."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(0, math.ceil(q / 100 * len(ordered)) - 1)
    return ordered[min(rank, len(ordered) - 1)]


def middle(values: Iterable[float]) -> float:
    """The middle value (the upper one of an even count): the median that is one of the runs."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def summary(values: list[float]) -> dict[str, float]:
    """Count, p50, p99, max and mean of `values` (NaN where there are none)."""
    return {
        "count": len(values),
        "p50": percentile(values, 50),
        "p99": percentile(values, 99),
        "max": max(values) if values else math.nan,
        "mean": statistics.fmean(values) if values else math.nan,
    }


def write_json(path: str | Path | None, result: object) -> None:
    """The raw results as JSON at `path` (`--out`), if one was given."""
    if path is not None:
        text = json.dumps(result, indent=1, default=str)
        Path(path).write_text(text + "\n", encoding="utf-8")


def smoke_verdict(
    failures: list[str], *, ok: str, workdir: Path | None = None, logs: str = ""
) -> int:
    """The end of a `--smoke` (tests/bench/test_bench_smoke.py reads it): each failure as
    "smoke check failed: ..." and exit status 1, or "smoke: ok (`ok`)" and 0. A smoke's
    `workdir` is removed when it passes and kept, with a line saying so (and where its `logs`
    are), when it fails."""
    for failure in failures:
        print(f"smoke check failed: {failure}")
    if failures:
        if workdir is not None:
            log(f"kept {workdir} ({logs})")
        return 1
    if workdir is not None:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"smoke: ok ({ok})" if ok else "smoke: ok")
    return 0
