"""Engine benchmark: active-checks/s, next-transition computations/s and a 1,000-SPA plan.

Run with `python bench/engine.py` (`make bench` runs it first). Prints a Markdown table for
docs/performance.md. Each figure is the best of several repeats, which is the most
repeatable number on a shared 2-core machine. `--smoke`: every measure on a hundredth of its
inputs, once, and a plan of 10 SPAs; exit status 1 if a measure gave no rate or the plan no
transitions (tests/bench/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measured import non_negative_int, positive_int  # noqa: E402
from bench.report import smoke_verdict  # noqa: E402
from spa.plan import build_plan, read_documents  # noqa: E402
from spa.schedule import (  # noqa: E402
    Base,
    Calendar,
    CalendarWindow,
    CronExpression,
    CronWindow,
    PublicHolidays,
    RecurringWindow,
    Rule,
    Timeline,
    Weekday,
    Window,
    load_zone,
    next_transition,
    parse_hour_minute,
    weekdays_between,
)

WEEK = 7 * 86400
START = 1_795_000_000  # 2026-11-18, an arbitrary fixed instant so runs are comparable
ZONES = ["Asia/Tokyo", "Europe/Berlin", "America/New_York", "Australia/Sydney", "UTC"]


# perf_counter (wall clock) by default; `--clock cpu` uses the process's CPU time, which
# other processes on a busy machine disturb far less (every measure here is single-threaded
# and CPU-bound; the plan rows always use the wall clock).
clock: Callable[[], float] = time.perf_counter


def best_rate(action: Callable[[], int], repeats: int) -> float:
    """Operations per second of the fastest of `repeats` runs of `action` (which returns its
    operation count)."""
    best = 0.0
    for _ in range(repeats):
        began = clock()
        count = action()
        best = max(best, count / (clock() - began))
    return best


def best_rates(actions: list[Callable[[], int]], repeats: int) -> list[float]:
    """`best_rate` of each action, with their runs interleaved, so that a change of the
    machine's load during the measurement touches all of them alike (for their ratios)."""
    best = [0.0] * len(actions)
    for _ in range(repeats):
        for index, action in enumerate(actions):
            began = clock()
            count = action()
            best[index] = max(best[index], count / (clock() - began))
    return best


def weekly_window() -> RecurringWindow:
    return RecurringWindow(
        start=parse_hour_minute("11:50"),
        end=parse_hour_minute("13:00"),
        zone=load_zone("Asia/Tokyo"),
        days=weekdays_between(Weekday.Monday, Weekday.Wednesday),
    )


def weekly_timeline() -> Timeline:
    return Timeline(weekly_window())


def calendar_window() -> CalendarWindow:
    """The Weekly window with 30 excluded dates (every other day from START on, so that the
    instants measured meet them) and the public holidays of Japan."""
    first = datetime.fromtimestamp(START, UTC).date()
    excluded = frozenset(first + timedelta(days=2 * n) for n in range(30))
    calendar = Calendar(excluded=excluded, holidays=PublicHolidays("JP"))
    return CalendarWindow(weekly_window(), calendar)


def cron_window() -> CronWindow:
    expression = CronExpression("*/30 8-17 * * MON-FRI")
    return CronWindow(expression=expression, duration=600, zone=load_zone("Asia/Tokyo"))


def active_checks(span: int, count: int) -> Callable[[], int]:
    timeline = weekly_timeline()
    instants = [START + random.randrange(span) for _ in range(count)]

    def run() -> int:
        check = timeline.is_active
        for instant in instants:
            check(instant)
        return count

    return run


def next_boundaries(count: int, window: Window | None = None) -> Callable[[], int]:
    """Warm: one Timeline for all instants, so its week-long chunks are built once."""
    timeline = Timeline(window or weekly_window())
    instants = [START + random.randrange(4 * WEEK) for _ in range(count)]

    def run() -> int:
        for instant in instants:
            timeline.next_boundary(instant)
        return count

    return run


def cold_next_boundaries(count: int, window: Window) -> Callable[[], int]:
    """Cold: a new Timeline for each instant, so every answer builds its chunk from the
    window's occurrences and the calendar (the holidays of a year are computed once per
    PublicHolidays, as in a compiled Schedule)."""
    instants = [START + random.randrange(4 * WEEK) for _ in range(count)]

    def run() -> int:
        for instant in instants:
            Timeline(window).next_boundary(instant)
        return count

    return run


def spa_transitions(count: int) -> Callable[[], int]:
    rules = [
        Rule(
            name=f"s{index}",
            timeline=Timeline(
                RecurringWindow(
                    start=parse_hour_minute(f"{8 + index}:00"),
                    end=parse_hour_minute(f"{9 + index}:30"),
                    zone=load_zone(ZONES[index]),
                    days=None if index % 2 else weekdays_between(Weekday.Monday, Weekday.Friday),
                )
            ),
            min_replicas=5 + index,
        )
        for index in range(5)
    ]
    base = Base(3, 10)
    instants = [START + random.randrange(4 * WEEK) for _ in range(count)]

    def run() -> int:
        for instant in instants:
            next_transition(base, rules, instant)
        return count

    return run


def fleet_manifests(directory: Path, autoscalers: int) -> None:
    """`autoscalers` SPAs with 5 Schedules each (Weekly, Daily, OneShot; several zones)."""
    kinds = ["Weekly", "Daily", "Daily", "Weekly", "OneShot"]
    chunks = []
    for number in range(autoscalers):
        name = f"app-{number}"
        chunks.append(
            f"""apiVersion: autoscaling.d-kuro.github.io/v1
kind: ScheduledPodAutoscaler
metadata: {{name: {name}, namespace: team-{number % 20}}}
spec:
  horizontalPodAutoscalerSpec:
    scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
    minReplicas: 2
    maxReplicas: 10
"""
        )
        for index, kind in enumerate(kinds):
            hour = (number + 3 * index) % 24
            if kind == "OneShot":
                times = 'startTime: "2026-11-20T10:00"\n  endTime: "2026-11-20T18:00"'
            else:
                times = f'startTime: "{hour}:00"\n  endTime: "{(hour + 2) % 24}:30"'
            days = "\n  startDayOfWeek: Monday\n  endDayOfWeek: Friday" if kind == "Weekly" else ""
            chunks.append(
                f"""apiVersion: autoscaling.d-kuro.github.io/v1
kind: Schedule
metadata: {{name: {name}-{index}, namespace: team-{number % 20}}}
spec:
  scaleTargetRef: {{name: {name}}}
  type: {kind}
  {times}{days}
  timeZone: {ZONES[(number + index) % len(ZONES)]}
  minReplicas: {4 + index}
"""
            )
    (directory / "fleet.yaml").write_text("---\n".join(chunks))


def plan_seconds(directory: Path, repeats: int) -> tuple[float, float, int]:
    """Best in-process time (read + validate + plan) and best time of the whole CLI."""
    best_in_process = float("inf")
    transitions = 0
    for _ in range(repeats):
        began = time.perf_counter()
        documents, errors = read_documents([str(directory)])
        plan = build_plan(documents, errors, at=START, until=START + WEEK)
        best_in_process = min(best_in_process, time.perf_counter() - began)
        assert not plan.errors, plan.errors[:3]
        transitions = sum(len(a.transitions) for a in plan.autoscalers)
    best_cli = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        subprocess.run(
            [
                str(Path(sys.executable).parent / "spa"),
                "plan",
                "-f",
                str(directory),
                "-o",
                "json",
                "--at",
                "2026-11-18T00:00:00Z",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        best_cli = min(best_cli, time.perf_counter() - began)
    return best_in_process, best_cli, transitions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=positive_int, default=5)
    parser.add_argument(
        "--autoscalers", type=non_negative_int, default=1000, help="0: no plan rows"
    )
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--smoke", action="store_true", help="tiny inputs, checked (see above)")
    arguments = parser.parse_args()
    scale = 1.0
    if arguments.smoke:
        arguments.repeats, arguments.autoscalers, scale = 1, 10, 0.01

    def size(count: int) -> int:
        return max(1, int(count * scale))

    global clock
    clock = time.process_time if arguments.clock == "cpu" else time.perf_counter
    random.seed(7)
    week = best_rate(active_checks(WEEK, size(200_000)), arguments.repeats)
    year = best_rate(active_checks(52 * WEEK, size(200_000)), arguments.repeats)
    cron = best_rate(next_boundaries(size(100_000), cron_window()), arguments.repeats)
    rows = [
        ("active checks/s, instants within one week (warm cache)", f"{week:,.0f}"),
        ("active checks/s, instants spread over a year", f"{year:,.0f}"),
        (
            "next-boundary computations/s (a Cron schedule, `*/30 8-17 * * MON-FRI`, 10m)",
            f"{cron:,.0f}",
        ),
    ]
    # A plain Schedule against the same one with 30 excluded dates and a holiday calendar,
    # interleaved: warm (the Timeline's chunks built once) and cold (built for every answer).
    plain, calendar = best_rates(
        [next_boundaries(size(100_000)), next_boundaries(size(100_000), calendar_window())],
        arguments.repeats,
    )
    plain_cold, calendar_cold = best_rates(
        [
            cold_next_boundaries(size(5_000), weekly_window()),
            cold_next_boundaries(size(5_000), calendar_window()),
        ],
        arguments.repeats,
    )
    for temperature, (a, b) in (("warm", (plain, calendar)), ("cold", (plain_cold, calendar_cold))):
        rows += [
            (f"next-boundary computations/s, {temperature}: one Weekly schedule", f"{a:,.0f}"),
            (
                f"next-boundary computations/s, {temperature}: the same with 30 excluded dates "
                f"and JP holidays (cost: {a / b:.2f}x)",
                f"{b:,.0f}",
            ),
        ]
    transitions_rate = best_rate(spa_transitions(size(20_000)), arguments.repeats)
    rows += [
        ("next-transition computations/s (an SPA with 5 schedules)", f"{transitions_rate:,.0f}"),
    ]
    rates = [week, year, cron, plain, calendar, plain_cold, calendar_cold, transitions_rate]
    transitions = -1
    if arguments.autoscalers > 0:
        with tempfile.TemporaryDirectory() as directory:
            fleet_manifests(Path(directory), arguments.autoscalers)
            repeats = max(1, arguments.repeats // 2)
            in_process, cli, transitions = plan_seconds(Path(directory), repeats)
        spas = f"{arguments.autoscalers:,} SPAs x 5 Schedules, 7 days ({transitions:,} transitions)"
        rows += [
            (f"plan of {spas}: read + validate + plan, in process", f"{in_process:.2f} s"),
            (f"plan of {spas}: whole `spa plan -o json` command", f"{cli:.2f} s"),
        ]
    machine = platform.processor() or platform.machine()
    print(f"Machine: {machine}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"Clock: {arguments.clock}; load average {os.getloadavg()[0]:.1f} at the end")
    print("\n| measure | result |\n|---|---|")
    for label, value in rows:
        print(f"| {label} | {value} |")
    if arguments.smoke:
        failures = []
        if not all(0 < rate < math.inf for rate in rates):
            failures.append("a measure gave no rate")
        if transitions == 0:
            failures.append("the plan has no transitions")
        return smoke_verdict(failures, ok="every measure ran, the plan has transitions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
