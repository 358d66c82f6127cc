"""Decision benchmark: the CPU of one `decide` with the SPA validated anew, and with it
validated once per version (issue 24).

Why: at a boundary each SPA is decided in two passes on the same version of it (the HPA pass,
the statuses pass; three decisions before issue 36), and each decision used to validate the
SPA with pydantic and build its desired HPA again. This times `decide` on an SPA with 4
Schedules whose HPA is in sync (the statuses pass, the commonest decision), with the Schedules
compiled once as the reconciler does, in two ways, alternately:

* ``per decision``: what is derived before the decision (`derive`) with its default `parse`,
  a new `ParsedAutoscaler` each time;
* ``per version``: the reconciler's way, one `ParsedAutoscaler` per (uid, resourceVersion).

Each figure is the best of `--repeats` runs of `--decisions` decisions (the most repeatable
figure on a shared machine), with the median beside it.

    python bench/decide.py
    python bench/decide.py --smoke    # 20 decisions, once: exit status 1 unless both ways
                                      # decide alike (tests/bench/test_bench_smoke.py)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measured import positive_int  # noqa: E402
from bench.report import conditions, smoke_verdict, write_json  # noqa: E402
from spa.api import wire  # noqa: E402
from spa.controller.decide import (  # noqa: E402
    Calendars,
    Compiled,
    Derivations,
    ParsedAutoscaler,
    Snapshot,
    compile_window,
    decide,
    derive,
)
from tests.unit.spa_model import KEY, OURS, Server, at, autoscaler, schedule  # noqa: E402


def in_sync_snapshot() -> tuple[Snapshot, Callable[..., Derivations]]:
    """The SPA shop/web with 4 Schedules, its HPA created and its statuses written, and what
    derives its Schedules compiled once, the SPA validated anew."""
    server = Server(autoscaler(), [schedule(f"peak-{index}", owner=OURS) for index in range(4)])
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    compiled: dict[tuple[str, int], Compiled] = {}

    def compile_once(
        obj: wire.Schedule, lead: int, calendars: Calendars, **unserved: Any
    ) -> Compiled:
        key = (str(obj["metadata"].get("uid")), lead)  # no calendars here
        if key not in compiled:
            compiled[key] = compile_window(obj, lead, calendars)
        return compiled[key]

    obj = wire.typed_optional(wire.ScheduledPodAutoscaler, server.autoscaler)
    schedules = wire.typed_list(wire.Schedule, server.schedules)

    def derived(**parse: Any) -> Derivations:
        return derive(obj, schedules, compile=compile_once, **parse)

    snapshot = Snapshot(
        key=KEY,
        instant=at(9),
        autoscaler=obj,
        schedules=schedules,
        hpa=wire.typed_optional(wire.HorizontalPodAutoscaler, server.hpa),
        live_owners=frozenset(),
        hpa_api_version="autoscaling/v2",
        derived=derived(),
        memory=memory,
    )
    return snapshot, derived


def timed(snapshot: Snapshot, decisions: int, derived: Callable[[], Derivations] | None) -> float:
    """Microseconds of CPU per decision (`derived`: what is derived anew before each)."""
    started = time.process_time()
    for _ in range(decisions):
        decide(snapshot if derived is None else replace(snapshot, derived=derived()))
    return 1e6 * (time.process_time() - started) / decisions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=positive_int, default=2000)
    parser.add_argument("--repeats", type=positive_int, default=7)
    parser.add_argument("--out", help="write the raw results (JSON) here")
    parser.add_argument("--smoke", action="store_true", help="20 decisions, once (see above)")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.decisions, arguments.repeats = 20, 1
    snapshot, derived = in_sync_snapshot()
    assert snapshot.autoscaler is not None
    once = ParsedAutoscaler(snapshot.autoscaler)
    per_version = replace(snapshot, derived=derived(parse=lambda autoscaler: once))
    if decide(per_version) != decide(replace(snapshot, derived=derived())):
        return smoke_verdict(["the two ways decided differently"], ok="")
    ways: dict[str, Callable[[], float]] = {
        "per decision": lambda: timed(snapshot, arguments.decisions, derived),
        "per version": lambda: timed(per_version, arguments.decisions, None),
    }
    results: dict[str, Any] = {name: [] for name in ways}
    for _ in range(arguments.repeats):
        for name, run in ways.items():
            results[name].append(run())
    results["conditions"] = conditions(decisions=arguments.decisions, repeats=arguments.repeats)
    write_json(arguments.out, results)
    print("| SPA validated | CPU per decide, best (µs) | median (µs) |")
    print("|---|---|---|")
    for name in ways:
        print(f"| {name} | {min(results[name]):.0f} | {statistics.median(results[name]):.0f} |")
    if arguments.smoke:
        return smoke_verdict([], ok="both ways decided alike, and were timed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
