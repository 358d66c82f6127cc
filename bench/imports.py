"""What `spa run` holds in memory before it has read a single object: the RSS of its imports,
by package.

Why a benchmark of its own: at 100 SPAs the controller's RSS is mostly its imports (issue 24's
target "below the original Go controller at 100 SPAs", docs/performance.md), and a figure per
package says where a saving could come from, and that no per-SPA saving can win it back. The
imports are measured in a fresh interpreter (a child process), as `spa run` makes them: first
`spa.cli` (the console script), then `spa.controller.main` (what `run` imports). Each import
statement's VmRSS growth is charged to the module it loads, less what its own imports took, so
the costs of the packages add up to the whole (`--smoke` checks they do).

    python bench/imports.py            # a table, packages by their cost
    python bench/imports.py --modules  # by module (spa.api.validation, aiohttp.connector, ...)
    python bench/imports.py --json     # the same as JSON
    python bench/imports.py --smoke    # exit status 1 unless the parts add up to the whole
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measured import non_negative_int  # noqa: E402

# What `spa run` imports, in its order: the console script's module, then the controller.
SPA_RUN = ("spa.cli", "spa.controller.main")


def _child(modules: list[str]) -> None:
    """Import `modules` with every first import's RSS growth charged to the module imported,
    less its own imports' (an import hook on builtins.__import__); print JSON."""
    import builtins

    page = os.sysconf("SC_PAGE_SIZE")

    def rss() -> int:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * page

    original = builtins.__import__
    nested: list[int] = []
    own: dict[str, int] = {}

    def charged(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        package = (globals or {}).get("__package__") or ""
        full = name if level == 0 else f"{package}.{name}".strip(".")
        if full in sys.modules:
            return original(name, globals, locals, fromlist, level)
        nested.append(0)
        before = rss()
        try:
            return original(name, globals, locals, fromlist, level)
        finally:
            grown = rss() - before
            children = nested.pop()
            own[full] = own.get(full, 0) + grown - children
            if nested:
                nested[-1] += grown

    start = rss()
    builtins.__import__ = charged
    try:
        for module in modules:
            __import__(module)
    finally:
        builtins.__import__ = original
    print(json.dumps({"start": start, "end": rss(), "own": own, "modules": modules}))


def measure(modules: tuple[str, ...] = SPA_RUN) -> dict[str, Any]:
    """The child's figures, with the costs summed per top-level package (bytes)."""
    answer = subprocess.run(
        [sys.executable, __file__, "--child", *modules],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    result: dict[str, Any] = json.loads(answer.stdout)
    packages: dict[str, int] = {}
    for module, cost in result["own"].items():
        top = module.split(".")[0]
        packages[top] = packages.get(top, 0) + cost
    result["packages"] = dict(sorted(packages.items(), key=lambda item: -item[1]))
    return result


def _mib(value: int) -> str:
    return f"{value / 1048576:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--top", type=non_negative_int, default=20, help="rows in the table")
    parser.add_argument("--modules", action="store_true", help="by module, not by package")
    parser.add_argument("--smoke", action="store_true", help="check the parts add up")
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return 0
    result = measure()
    grown = result["end"] - result["start"]
    charged = sum(result["packages"].values())
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"load {' '.join(load)}; imports of {', '.join(result['modules'])}")
        print(f"interpreter at start: {_mib(result['start'])} MiB RSS")
        print(f"after the imports:    {_mib(result['end'])} MiB RSS (+{_mib(grown)})")
        rows = result["own"] if args.modules else result["packages"]
        for name, cost in sorted(rows.items(), key=lambda item: -item[1])[: args.top]:
            print(f"  {_mib(cost):>6} MiB  {name}")
    if args.smoke:
        # The costs are charged so that they add up: a hook that lost an import would not.
        if grown <= 0 or abs(charged - grown) > 0.02 * grown:
            print(f"smoke: FAILED: the packages add up to {charged} bytes, the RSS grew {grown}")
            return 1
        print("smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
