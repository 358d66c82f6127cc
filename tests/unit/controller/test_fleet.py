"""Raises ahead of a shared boundary (docs/schedules.md): the pure rule (what is written early,
what never is, how early), the fleet index and the write time it is fed, and the reconciler
that places each key and writes a fleet's raise from its start."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

import pytest

from spa.controller.decide import (
    AutoscalerStatusWrite,
    Final,
    Memory,
    Plan,
    Snapshot,
    WakeUp,
    decide,
)
from spa.controller.decide.fleet import (
    QUIET_SECONDS,
    FleetRaise,
    early_state,
    fleet_advance,
    fleet_message,
)
from spa.controller.fleet import (
    DEFAULT_WRITE_SECONDS,
    WRITE_RAISES_ANNOTATION,
    WRITE_SECONDS_ANNOTATION,
    FleetIndex,
    WriteTime,
)
from spa.runtime import FakeClock
from spa.schedule import State
from tests.unit.spa_model import KEY, OURS, Server, at, autoscaler, hpa_writes, schedule

B = 1_800_000_000

# -- the pure rule ---------------------------------------------------------------------------------


def test_a_quiet_boundary_is_written_at_its_instant() -> None:
    assert fleet_advance(1, 10.0, margin=1.5, max_advance=120) == 0  # one SPA, however slow
    small = int(QUIET_SECONDS / DEFAULT_WRITE_SECONDS) - 1
    assert fleet_advance(small, DEFAULT_WRITE_SECONDS, margin=1.5, max_advance=120) == 0


def test_the_advance_is_the_need_times_the_margin_rounded_up_and_bounded() -> None:
    # 1,000 writes of 5 ms: 5 s of need, 7.5 s with the margin, started 8 s ahead.
    assert fleet_advance(1000, 0.005, margin=1.5, max_advance=120) == 8
    assert fleet_advance(3200, 0.005, margin=1.5, max_advance=120) == 24
    # Never more than the bound, however large the fleet.
    assert fleet_advance(10**6, 0.005, margin=1.5, max_advance=120) == 120
    # The bound of earliness: at most margin x need + 1 s.
    for fleet in (60, 100, 999, 5000):
        need = fleet * 0.005
        advance = fleet_advance(fleet, 0.005, margin=1.5, max_advance=120)
        assert need <= advance <= 1.5 * need + 1


def test_what_a_boundary_adds_is_written_from_the_fleets_start() -> None:
    now, ahead = State(3, 10, ()), State(5, 20, ("peak",))
    fleet = FleetRaise(B, 30, 1000)
    early = early_state(now, ahead, instant=B - 30, raise_=fleet, upcoming=B)
    assert early == State(5, 20, ())  # the window is not active yet: only its bounds
    # Not before the start, nor for another boundary, nor without an advance.
    assert early_state(now, ahead, instant=B - 31, raise_=fleet, upcoming=B) is None
    assert early_state(now, ahead, instant=B - 10, raise_=fleet, upcoming=B + 60) is None
    assert early_state(now, ahead, instant=B - 10, raise_=None, upcoming=B) is None
    quiet = FleetRaise(B, 0, 1)
    assert early_state(now, ahead, instant=B - 10, raise_=quiet, upcoming=B) is None


def test_what_a_boundary_removes_is_never_written_early() -> None:
    fleet = FleetRaise(B, 30, 1000)
    # A window's end (lower min and max): nothing before B.
    ending = early_state(
        State(5, 20, ("peak",)), State(3, 10, ()), instant=B - 5, raise_=fleet, upcoming=B
    )
    assert ending is None
    # A raise of min with a lower max (a cap window): the min early, the max waits for B.
    mixed = early_state(
        State(3, 10, ()), State(5, 8, ("cap",)), instant=B - 5, raise_=fleet, upcoming=B
    )
    assert mixed == State(5, 10, ())


def test_the_message_says_the_fleet_the_boundary_and_the_start() -> None:
    message = fleet_message(FleetRaise(B, 19, 3200))
    assert "fleet of 3,200" in message
    assert "written from" in message


# -- the write time --------------------------------------------------------------------------------


def test_the_write_time_is_measured_in_bursts_of_every_worker_writing() -> None:
    time = WriteTime(workers=4)
    assert time.seconds == DEFAULT_WRITE_SECONDS
    # A write made alone says nothing of the throughput: left out.
    time.observe(0.002, in_flight=1)
    assert time.seconds == DEFAULT_WRITE_SECONDS
    time.observe(0.04, in_flight=4)
    assert time.seconds == pytest.approx(0.01)
    for _ in range(100):
        time.observe(0.2, in_flight=4)  # the API server slowed down
    assert time.seconds == pytest.approx(0.05, rel=1e-3)
    assert WriteTime(workers=4, fixed=0.1).seconds == 0.1


def test_what_was_measured_is_the_memo_and_the_next_leader_starts_from_it() -> None:
    measuring = WriteTime(workers=1)
    assert measuring.memo() == {}  # nothing measured: nothing to hand on
    measuring.observe(0.007, in_flight=1)
    assert measuring.memo() == {WRITE_SECONDS_ANNOTATION: "0.007000"}
    # A fleet's own pace is what was learned, shorter than the writes' latency or not, with
    # the raises it was measured over.
    measuring.observe_pace(0.004, raises=500)
    paced = {WRITE_SECONDS_ANNOTATION: "0.004000", WRITE_RAISES_ANNOTATION: "500"}
    assert measuring.memo() == paced

    restarted = WriteTime(workers=4)
    assert restarted.seconds == DEFAULT_WRITE_SECONDS
    restarted.inherit_from(paced)
    assert restarted.seconds == 0.004
    assert restarted.memo() == paced  # kept on the Lease until it measures
    # A pace stands against the latency of this process's writes, as it would have in the
    # last leader; a burst of its own replaces it.
    for _ in range(100):
        restarted.observe(0.004 * 4 * 3, in_flight=4)
    assert restarted.seconds == 0.004
    restarted.observe_pace(0.005, raises=300)
    assert restarted.memo() == {
        WRITE_SECONDS_ANNOTATION: "0.005000",
        WRITE_RAISES_ANNOTATION: "300",
    }

    # A number alone (the last leader had measured no pace, or ran an older version), or with
    # raises that are no count of a burst, is the writes' EWMA: this process's writes move it.
    for raises in (None, "", "0", "19", "-500", "1.5", "many"):
        annotations = {WRITE_SECONDS_ANNOTATION: "0.012000"}
        if raises is not None:
            annotations[WRITE_RAISES_ANNOTATION] = raises
        stand_in = WriteTime(workers=4)
        stand_in.inherit_from(annotations)
        assert stand_in.seconds == 0.012
        assert stand_in.memo() == {WRITE_SECONDS_ANNOTATION: "0.012000"}
        stand_in.observe(0.004 * 4, in_flight=4)
        assert DEFAULT_WRITE_SECONDS < stand_in.seconds < 0.012


@pytest.mark.parametrize("text", ["0", "-0.01", "2.5", "fast", "nan", ""])
def test_a_write_time_on_the_lease_that_is_no_measurement_is_not_taken(text: str) -> None:
    restarted = WriteTime(workers=4)
    restarted.inherit_from({WRITE_SECONDS_ANNOTATION: text})
    assert restarted.seconds == DEFAULT_WRITE_SECONDS
    assert restarted.memo() == {}


def test_a_process_that_measured_keeps_its_own_over_the_lease() -> None:
    own = WriteTime(workers=1)
    own.observe(0.003, in_flight=1)
    own.inherit_from({WRITE_SECONDS_ANNOTATION: "0.200000"})
    assert own.seconds == 0.003


def test_a_write_measured_at_no_time_is_not_handed_on() -> None:
    injected = WriteTime(workers=1)
    injected.observe(0.0, in_flight=1)  # an injected clock times every write at 0 s
    assert injected.memo() == {}


def _paced(seconds: str, raises: str) -> dict[str, str]:
    return {WRITE_SECONDS_ANNOTATION: seconds, WRITE_RAISES_ANNOTATION: raises}


def test_a_shard_plans_by_the_slowest_pace_of_its_siblings_and_hands_on_its_own() -> None:
    # s3 wrote its 5,000 raises alone, a raise every 2 ms; s0 to s2 wrote theirs together,
    # every 8 to 11 ms. The next boundary s3 shares with them goes by the slowest.
    shard = WriteTime(workers=4)
    shard.observe_pace(0.002, raises=5000)
    shard.hold_siblings(
        {
            "spa-shard-s0": _paced("0.008000", "5000"),
            "spa-shard-s1": _paced("0.011000", "5000"),
            "spa-shard-s2": _paced("0.009000", "4990"),
        }
    )
    assert shard.seconds == pytest.approx(0.011)
    # Its own Lease still carries what it measured, or the slowest would be every shard's
    # for good.
    assert shard.memo() == _paced("0.002000", "5000")
    # A faster sibling does not lower its own; the siblings read again replace what was held.
    shard.hold_siblings({"spa-shard-s0": _paced("0.001000", "5000")})
    assert shard.seconds == pytest.approx(0.002)
    # A slower pace of its own stands over faster siblings.
    shard.observe_pace(0.012, raises=5000)
    shard.hold_siblings({"spa-shard-s0": _paced("0.008000", "5000")})
    assert shard.seconds == pytest.approx(0.012)


@pytest.mark.parametrize(
    "carried",
    [
        {WRITE_SECONDS_ANNOTATION: "0.050000"},  # an EWMA of writes, no burst's pace
        _paced("0.050000", "19"),  # no count of a burst
        _paced("0.050000", "999"),  # a burst too small beside this shard's 5,000
        _paced("2.5", "5000"),  # no measurement of ours
        _paced("slow", "5000"),
        _paced("nan", "5000"),
        {},  # a sibling that has measured nothing yet
    ],
)
def test_a_siblings_lease_that_carries_no_large_bursts_pace_is_left_out(
    carried: dict[str, str],
) -> None:
    shard = WriteTime(workers=4)
    shard.observe_pace(0.002, raises=5000)
    shard.hold_siblings({"spa-shard-s0": carried})
    assert shard.seconds == pytest.approx(0.002)


def test_a_shard_that_measured_nothing_goes_by_a_slower_siblings_pace() -> None:
    fresh = WriteTime(workers=4)
    fresh.hold_siblings({"spa-shard-s0": _paced("0.009000", "40")})
    assert fresh.seconds == pytest.approx(0.009)
    assert fresh.memo() == {}  # nothing of its own to hand on
    fresh.hold_siblings({"spa-shard-s0": _paced("0.001000", "40")})
    assert fresh.seconds == DEFAULT_WRITE_SECONDS


def test_a_siblings_pace_is_said_at_info_only_when_the_estimate_goes_by_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shard = WriteTime(workers=4)
    shard.observe_pace(0.004, raises=5000)
    caplog.set_level(logging.DEBUG, logger="spa.controller.fleet")
    shard.hold_siblings({"spa-shard-s0": _paced("0.002000", "5000")})  # faster: not used
    shard.hold_siblings({"spa-shard-s0": _paced("0.002000", "5000")})  # the same: not said
    shard.hold_siblings({"spa-shard-s1": _paced("0.009000", "5000")})
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            logging.DEBUG,
            "fleet write time at least 2.0 ms, the pace the Lease spa-shard-s0 carries (this "
            "process measured 4.0 ms)",
        ),
        (
            logging.INFO,
            "fleet write time at least 9.0 ms, the pace the Lease spa-shard-s1 carries (this "
            "process measured 4.0 ms)",
        ),
    ]


def test_no_write_is_estimated_faster_than_the_client_rate_limit() -> None:
    # --kube-api-qps 50: a write takes at least 20 ms of the throughput. A burst the limiter's
    # saved-up tokens let through at the server's speed (2 ms each) does not lower that: a
    # fleet larger than the burst is written at 50 a second.
    time = WriteTime(workers=4, floor=0.02)
    assert time.seconds == 0.02  # before any burst, too
    for _ in range(100):
        time.observe(0.008, in_flight=4)
    assert time.seconds == 0.02
    for _ in range(100):
        time.observe(0.4, in_flight=4)  # slower than the limit: the measurement wins
    assert time.seconds == pytest.approx(0.1, rel=1e-3)
    # So 1,000 SPAs at 50 a second start 30 s ahead (20 s of need, times 1.5), not 3 s.
    clock = FakeClock(B - 600)
    index = FleetIndex(write_time=WriteTime(workers=4, floor=0.02), clock=clock)
    index.write_time.observe(0.008, in_flight=4)
    for i in range(1000):
        index.place(f"shop/web-{i}", B)
    assert index.raise_for("shop/web-0") == FleetRaise(B, 30, 1000)
    # A burst's pace, the estimate once measured, is held to the limit too.
    paced = WriteTime(workers=4, floor=0.02)
    paced.observe_pace(0.002, raises=1000)
    assert paced.seconds == 0.02


# -- the fleet index -------------------------------------------------------------------------------


def _index(
    clock: FakeClock, *, fixed: float | None = 0.005, workers: int = 4
) -> tuple[FleetIndex, list[tuple[str, float]]]:
    woken: list[tuple[str, float]] = []
    index = FleetIndex(
        write_time=WriteTime(workers=workers, fixed=fixed),
        clock=clock,
        wake=lambda key, when: woken.append((key, when)),
    )
    return index, woken


def test_a_single_spa_at_a_quiet_boundary_is_not_moved() -> None:
    clock = FakeClock(B - 600)
    index, woken = _index(clock)
    index.place("shop/one", B)
    assert index.raise_for("shop/one") is None
    assert woken == []


def test_a_fleet_starts_early_enough_in_the_order_its_keys_came() -> None:
    clock = FakeClock(B - 600)
    index, woken = _index(clock)
    keys = [f"shop/web-{i}" for i in range(1000)]
    for key in keys:
        index.place(key, B)
    fleet = index.raise_for(keys[0])
    assert fleet == FleetRaise(B, 8, 1000)
    # Every key is woken at the fleet's start (the last wake of each), in the order placed.
    last: dict[str, float] = {}
    for key, when in woken:
        last[key] = when
    assert set(last.values()) == {B - 8}
    order = [key for key, when in woken if when == B - 8]
    assert order[: len(keys)] == keys
    # The start moved earlier a few times, never later: at most once per second of advance,
    # each time every key of the fleet (no storm).
    assert len(woken) <= 1000 * 9
    # A key whose next raise moves elsewhere leaves the fleet.
    index.place(keys[0], B + 3600)
    assert index.raise_for(keys[1]) == FleetRaise(B, 8, 999)
    index.forget(keys[1])
    assert index.raise_for(keys[1]) is None


def test_writes_slower_than_estimated_start_the_fleets_to_come_sooner() -> None:
    clock = FakeClock(B - 600)
    index, woken = _index(clock, fixed=None, workers=1)
    for i in range(200):
        index.place(f"shop/web-{i}", B)  # 200 x 5 ms: 1 s of need, started 2 s ahead
    assert index.raise_for("shop/web-0") == FleetRaise(B, 2, 200)
    woken.clear()
    # A fleet at an earlier boundary is written and its writes take 50 ms each.
    for i in range(30):
        clock.advance(1.0)
        index.write_time.observe(0.05, in_flight=1)
        index.written(f"shop/other-{i}", clock.now())
    fleet = index.raise_for("shop/web-0")
    assert fleet is not None
    assert fleet.advance > 2
    assert {when for _, when in woken} <= {B - a for a in range(3, 121)}
    assert woken[-1][1] == fleet.start
    # Once started, a fleet's keys are all due: a slower estimate wakes nobody again.
    clock.set(fleet.start)
    woken.clear()
    for _ in range(5):
        index.write_time.observe(5.0, in_flight=1)
        clock.advance(1.0)
        index.written("shop/web-0", clock.now())
    assert woken == []


def test_a_slower_siblings_pace_starts_the_fleets_to_come_sooner() -> None:
    clock = FakeClock(B - 600)
    estimates: list[float] = []
    woken: list[tuple[str, float]] = []
    index = FleetIndex(
        write_time=WriteTime(workers=4),
        clock=clock,
        wake=lambda key, when: woken.append((key, when)),
        estimated=estimates.append,
    )
    index.write_time.observe_pace(0.002, raises=5000)
    keys = [f"shop/web-{i}" for i in range(5000)]
    for key in keys:
        index.place(key, B)
    assert index.raise_for(keys[0]) == FleetRaise(B, 15, 5000)  # 10 s x 1.5
    woken.clear()
    # The siblings' Leases say 8 ms a raise: the fleet starts 60 s ahead, every key woken.
    index.hold_siblings({"spa-shard-s0": _paced("0.008000", "5000")})
    assert index.raise_for(keys[0]) == FleetRaise(B, 60, 5000)
    assert {when for _, when in woken} == {B - 60}
    assert len(woken) == len(keys)
    assert estimates == [pytest.approx(0.008)]
    # A faster one read later moves nobody (a fleet never starts later than it was woken).
    woken.clear()
    index.hold_siblings({"spa-shard-s0": _paced("0.004000", "5000")})
    assert woken == []
    assert index.raise_for(keys[0]) == FleetRaise(B, 60, 5000)


def test_a_fleet_that_lands_late_is_reported_at_its_size_and_by_how_much_it_missed() -> None:
    clock = FakeClock(B - 600)
    seen: list[tuple[int, int, float, float]] = []
    index = FleetIndex(
        write_time=WriteTime(workers=4, fixed=0.005),
        clock=clock,
        wake=lambda key, when: None,
        observed=lambda *fleet: seen.append(fleet),
    )
    keys = [f"shop/web-{i}" for i in range(200)]
    for key in keys:
        index.place(key, B)
    fleet = index.raise_for(keys[0])
    assert fleet is not None
    clock.set(fleet.start)
    index.written(keys[0], clock.now())
    # The server slowed down: at B most raises are still to come. Each key reconciled from B
    # on leaves for its next raise (tomorrow's); the others are raised late.
    clock.set(B + 1)
    for key in keys[1:150]:
        index.place(key, B + 86400)
    clock.set(B + 12.5)
    index.written(keys[150], clock.now())
    assert seen[-1] == (B, 200, fleet.start, B + 12.5)  # 12.5 s late, the fleet was 200


def test_a_fleet_written_at_its_boundary_gives_its_pace_too() -> None:
    # Raises written at B (early raises off, as before a restart with them on) land 3 ms
    # apart while each HPA write measured 2 ms of the throughput: the pace is what the next
    # leader inherits, and what the next fleet starts from (measured at 5,000 SPAs: 1.98 ms
    # per write against a raise every 3.2 ms).
    clock = FakeClock(B - 600)
    seen: list[tuple[int, int, float, float]] = []
    ready = [0]
    index = FleetIndex(
        write_time=WriteTime(workers=4),
        clock=clock,
        enabled=False,
        observed=lambda *fleet: seen.append(fleet),
        backlog=lambda: ready[0],
    )
    keys = [f"shop/web-{i}" for i in range(100)]
    for key in keys:
        index.place(key, B)
    index.write_time.observe(0.008, in_flight=4)
    clock.set(B - 1)
    index.written(keys[0], clock.now())  # alone before its boundary: not the fleet's pace
    ready[0] = len(keys)  # at B every key is due
    for number, key in enumerate(keys[1:]):
        clock.set(B + number * 0.003)
        index.write_time.observe(0.008, in_flight=4)
        index.written(key, clock.now())
    assert index.write_time.seconds == pytest.approx(0.003)
    assert index.write_time.memo() == {
        WRITE_SECONDS_ANNOTATION: "0.003000",
        WRITE_RAISES_ANNOTATION: "99",
    }
    assert seen == []  # how early a fleet began is said only of a fleet moved ahead


def test_the_write_time_the_starts_come_from_is_reported_as_it_rises() -> None:
    clock = FakeClock(B - 600)
    estimates: list[float] = []
    index = FleetIndex(
        write_time=WriteTime(workers=4),
        clock=clock,
        wake=lambda key, when: None,
        estimated=estimates.append,
    )
    for second in range(5):
        clock.set(B - 600 + second)
        for _ in range(10):
            index.write_time.observe(0.4, in_flight=4)  # 100 ms each, from 5 ms
        index.written("shop/other", clock.now())
    assert len(estimates) == 5  # once a second
    assert estimates == sorted(estimates)
    assert estimates[0] > DEFAULT_WRITE_SECONDS
    assert estimates[-1] == pytest.approx(0.1, rel=0.01)


def test_a_fleet_written_slower_than_its_writes_measured_starts_the_next_sooner() -> None:
    # Each HPA write measured 5 ms of the throughput, but the fleet's raises land 20 ms apart
    # (its immediate scale-ups, its reconciles): the next fleet starts from 20 ms.
    clock = FakeClock(B - 600)
    woken: list[tuple[str, float]] = []
    index = FleetIndex(
        write_time=WriteTime(workers=4),
        clock=clock,
        wake=lambda key, when: woken.append((key, when)),
        backlog=lambda: 100,  # the fleet's keys queued at its start
    )
    for _ in range(10):
        index.write_time.observe(0.02, in_flight=4)
    first = [f"shop/web-{i}" for i in range(400)]
    later = [f"shop/api-{i}" for i in range(1000)]
    for key in first:
        index.place(key, B)
    for key in later:
        index.place(key, B + 3600)
    assert index.raise_for(later[0]) == FleetRaise(B + 3600, 8, 1000)  # 1,000 x 5 ms x 1.5
    fleet = index.raise_for(first[0])
    assert fleet is not None
    for number, key in enumerate(first):
        clock.set(fleet.start + 0.02 * number)
        index.written(key, clock.now())
    assert index.write_time.seconds == pytest.approx(0.02)
    # 1,000 x 20 ms x 1.5 (rounded up: the pace is 20 ms to a float's precision).
    ahead = index.raise_for(later[0])
    assert ahead is not None
    assert ahead.advance in (30, 31)
    # Its keys were woken at the earlier start (recomputed at most once a second).
    assert woken[-1][0] == later[-1]
    assert woken[-1][1] <= B + 3600 - 30


def _first_start(
    index: FleetIndex,
    clock: FakeClock,
    *,
    size: int,
    pace: float,
    reconciles: int,
    ready: list[int],
    raised: bool = True,
    latency: float | None = None,
) -> None:
    """From the clock's instant, `size` HPAs written `pace` seconds apart (raised, or
    lowered), `reconciles` reconciles ending after each, with `ready[0]` keys ready in the
    queue meanwhile; each write `latency` seconds from request to answer, 4 in flight (None:
    no latency measured)."""
    since = clock.now()
    for number in range(size):
        clock.set(since + pace * number)
        if latency is not None:
            index.write_time.observe(latency, in_flight=4)
        index.written(f"shop/new-{number}", clock.now(), raised=raised)
        for _ in range(reconciles):
            index.reconciled()
        ready[0] = max(0, ready[0] - 1)


def test_the_first_fleet_after_a_start_goes_by_the_starts_own_burst() -> None:
    # The first start creates 200 HPAs while the rest of them wait in the queue: a create
    # landed every 50 ms, all of a reconcile included, though each write's latency over the
    # writes in flight said 30 ms. The first fleet is started from 50 ms, not from 30 ms (the
    # fleet that missed by 0.25 s in CI, docs/reliability.md, case 9).
    clock = FakeClock(B - 3600)
    ready = [200]
    index = FleetIndex(write_time=WriteTime(workers=4), clock=clock, backlog=lambda: ready[0])
    for _ in range(10):
        index.write_time.observe(0.12, in_flight=4)
    _first_start(index, clock, size=200, pace=0.05, reconciles=2, ready=ready)
    assert index.write_time.seconds == pytest.approx(0.05)
    for number in range(200):
        index.place(f"shop/web-{number}", B)
    ahead = index.raise_for("shop/web-0")
    assert ahead is not None
    assert ahead.advance in (15, 16)  # 200 x 50 ms x 1.5, rounded up to a float's precision
    # From the writes' latency alone it would have been 200 x 30 ms x 1.5: 9 s.
    assert fleet_advance(200, 0.03, margin=1.5, max_advance=120) == 9


def test_a_start_of_mostly_other_work_gives_no_pace() -> None:
    # A restart reconciles a fleet whose HPAs stand, 30 of them written among the others:
    # the time between those writes is the other reconciles', not a raise's.
    clock = FakeClock(B - 3600)
    ready = [5000]
    index = FleetIndex(write_time=WriteTime(workers=4), clock=clock, backlog=lambda: ready[0])
    _first_start(index, clock, size=30, pace=0.5, reconciles=100, ready=ready)
    assert index.write_time.seconds == DEFAULT_WRITE_SECONDS
    assert index.write_time.learned is None


def test_a_burst_of_window_ends_leaves_the_raises_pace() -> None:
    # A fleet raised a write every 50 ms, and its window's end lowered it every 30 ms (no
    # immediate scale-up, fewer statuses): the next fleet starts from the raises' 50 ms, as a
    # fleet of raises is what is written ahead (reliability case 9 landed 1.19 s late from an
    # end's pace).
    clock = FakeClock(B - 7200)
    ready = [200]
    index = FleetIndex(write_time=WriteTime(workers=4), clock=clock, backlog=lambda: ready[0])
    _first_start(index, clock, size=200, pace=0.05, reconciles=2, ready=ready)
    ready[0] = 0
    index.reconciled()
    clock.set(clock.now() + 3600)
    ready[0] = 200
    _first_start(index, clock, size=200, pace=0.03, reconciles=2, ready=ready, raised=False)
    assert index.write_time.seconds == pytest.approx(0.05)


def test_raises_landing_with_no_key_waiting_are_no_burst() -> None:
    # One raise at a time, the queue empty at each (a trickle of edits): no pace, however
    # far apart they land.
    clock = FakeClock(B - 3600)
    ready = [0]
    index = FleetIndex(write_time=WriteTime(workers=4), clock=clock, backlog=lambda: ready[0])
    _first_start(index, clock, size=50, pace=2.0, reconciles=1, ready=ready)
    assert index.write_time.learned is None
    # A burst that ended (its last reconcile left the queue empty) is not continued by the
    # next one an hour later: each gives its own pace.
    ready[0] = 100
    _first_start(index, clock, size=30, pace=0.01, reconciles=1, ready=ready)
    ready[0] = 0
    index.reconciled()  # the burst's last reconcile, the queue empty
    clock.set(clock.now() + 3600)
    ready[0] = 100
    _first_start(index, clock, size=30, pace=0.02, reconciles=1, ready=ready)
    assert index.write_time.learned == pytest.approx(0.02)


def test_the_raises_pace_not_the_writes_latency_is_what_the_next_leader_starts_from() -> None:
    # As measured at 5,000 SPAs (docs/performance.md, "1,000, 5,000 and 10,000 SPAs in one
    # run"): the fleet written at B landed a raise every 2.2 ms, while each HPA write's latency
    # over the 4 in flight said 3 ms (the wait for the controller's event loop counted in it),
    # and so did the window end's writes, the last before the restart. From 3 ms the next
    # fleet began 23 s ahead of B, 2.08 x its 11 s need; from the pace it starts 17 s ahead.
    clock = FakeClock(B - 600)
    ready = [0]
    index = FleetIndex(
        write_time=WriteTime(workers=4), clock=clock, enabled=False, backlog=lambda: ready[0]
    )
    clock.set(B)
    ready[0] = 5000
    _first_start(index, clock, size=5000, pace=0.0022, reconciles=2, ready=ready, latency=0.012)
    ready[0] = 0
    index.reconciled()
    clock.set(B + 120)  # the window end: lowered, their writes as slow; no raise
    ready[0] = 5000
    _first_start(
        index, clock, size=5000, pace=0.0026, reconciles=2, ready=ready, latency=0.012, raised=False
    )
    assert index.write_time.seconds == pytest.approx(0.0022)
    memo = index.write_time.memo()
    assert memo == {WRITE_SECONDS_ANNOTATION: "0.002200", WRITE_RAISES_ANNOTATION: "5000"}

    later = FakeClock(B + 3000)
    restarted = FleetIndex(write_time=WriteTime(workers=4), clock=later)
    restarted.write_time.inherit_from(memo)
    for number in range(5000):
        restarted.place(f"shop/web-{number}", B + 3600)
    assert restarted.raise_for("shop/web-0") == FleetRaise(B + 3600, 17, 5000)


def test_a_small_bursts_pace_does_not_replace_a_much_larger_ones() -> None:
    # A fleet of 5,000 landed a raise every 2 ms. Then 30 SPAs share a boundary and land one
    # every 1 ms (their last raises' watch events and reconciles fall after their burst), and
    # 900 one every 1.5 ms, each write's latency saying 1 ms: the next large fleet still starts
    # from 2 ms. A burst of 1,000 raises replaces it (enough for any fleet), and then one of
    # 500 (half as large as that).
    clock = FakeClock(B - 7200)
    ready = [5000]
    index = FleetIndex(write_time=WriteTime(workers=4), clock=clock, backlog=lambda: ready[0])
    _first_start(index, clock, size=5000, pace=0.002, reconciles=2, ready=ready, latency=0.004)
    assert index.write_time.seconds == pytest.approx(0.002)
    bursts = ((30, 0.001, 0.002), (900, 0.0015, 0.002), (1000, 0.0025, 0.0025))
    for size, pace, expected in (*bursts, (499, 0.0022, 0.0025), (500, 0.0021, 0.0021)):
        ready[0] = 0
        index.reconciled()  # the burst before ends
        clock.set(clock.now() + 3600)
        ready[0] = size
        _first_start(index, clock, size=size, pace=pace, reconciles=2, ready=ready, latency=0.004)
        assert index.write_time.seconds == pytest.approx(expected), size
    assert index.write_time.memo()[WRITE_RAISES_ANNOTATION] == "500"


def test_a_restarted_leader_holds_the_lease_pace_against_its_small_bursts() -> None:
    # The raises a pace was measured over ride on the Lease: the next leader weighs its own
    # bursts against them as the last leader would have, and its writes' latency does not
    # move the pace.
    clock = FakeClock(B - 3600)
    ready = [0]
    index = FleetIndex(write_time=WriteTime(workers=4), clock=clock, backlog=lambda: ready[0])
    index.write_time.inherit_from(
        {WRITE_SECONDS_ANNOTATION: "0.002200", WRITE_RAISES_ANNOTATION: "5000"}
    )
    ready[0] = 40
    _first_start(index, clock, size=40, pace=0.001, reconciles=2, ready=ready, latency=0.004)
    assert index.write_time.seconds == pytest.approx(0.0022)
    ready[0] = 0
    index.reconciled()
    clock.set(clock.now() + 3600)
    ready[0] = 1000
    _first_start(index, clock, size=1000, pace=0.003, reconciles=2, ready=ready, latency=0.004)
    assert index.write_time.seconds == pytest.approx(0.003)


# -- the decision and the reconciler ---------------------------------------------------------------


def _with(fleet: FleetRaise | None) -> Callable[[Snapshot], Plan]:
    def decision(snapshot: Snapshot) -> Plan:
        return decide(replace(snapshot, fleet=fleet))

    return decision


def _in_sync_before_the_peak() -> tuple[Server, Memory]:
    """shop/web (3/10) with its HPA, its Schedule peak (5/20) from 10:00 to 11:00."""
    server = Server(autoscaler(), [schedule("peak", owner=OURS)])
    _, memory, _ = server.reconcile(at(9))
    plan, memory, _ = server.reconcile(at(9), memory)
    assert isinstance(plan.requeue, WakeUp)
    assert plan.requeue.at == at(10)
    assert plan.raise_at == at(10)
    server.writes.clear()
    return server, memory


def raised_ahead(final: Final) -> tuple[str, str, str] | None:
    """The SPA's RaisedAhead condition in the final plan: status, reason, message."""
    write = final.statuses[0]
    assert isinstance(write, AutoscalerStatusWrite)
    for condition in write.status.conditions or []:
        if condition.type == "RaisedAhead":
            return str(condition.status), str(condition.reason), str(condition.message)
    return None


def test_a_raise_is_written_from_its_fleets_start_and_the_status_says_why() -> None:
    server, memory = _in_sync_before_the_peak()
    fleet = FleetRaise(at(10), 30, 3200)
    # Before the start: nothing written, a wake-up at the start.
    plan, memory, _ = server.reconcile(at(10) - 31, memory, decision=_with(fleet))
    assert hpa_writes(server) == []
    assert isinstance(plan.requeue, WakeUp)
    assert plan.requeue.at == at(10) - 30
    # From the start: the raise, then the statuses saying why it came early.
    _, memory, _ = server.reconcile(at(10) - 30, memory, decision=_with(fleet))
    assert hpa_writes(server) == ["patch"]
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (5, 20)
    plan, memory, _ = server.reconcile(at(10) - 29, memory, decision=_with(fleet))
    assert hpa_writes(server) == ["patch"]
    condition = raised_ahead(plan)
    assert condition is not None
    assert condition[:2] == ("True", "FleetAhead")
    assert "fleet of 3,200" in condition[2]
    assert "written from 2026-11-16T09:59:30Z" in condition[2]
    # The window starts at its instant, as ever: the bounds are in force already, so only
    # the statuses change, and the condition says the boundary came.
    assert isinstance(plan.requeue, WakeUp)
    assert plan.requeue.at == at(10)
    plan, _, _ = server.reconcile(at(10), memory, decision=_with(fleet))
    assert hpa_writes(server) == ["patch"]
    assert plan.report is not None
    assert plan.report.schedules == {"peak": True}
    condition = raised_ahead(plan)
    assert condition is not None
    assert condition[:2] == ("False", "BoundaryReached")


def test_without_a_fleet_the_raise_waits_for_its_boundary_as_today() -> None:
    server, memory = _in_sync_before_the_peak()
    plan, memory, _ = server.reconcile(at(10) - 10, memory)
    assert hpa_writes(server) == []
    assert isinstance(plan.requeue, WakeUp)
    assert plan.requeue.at == at(10)
    server.reconcile(at(10), memory)
    assert hpa_writes(server) == ["patch"]


def test_a_windows_end_is_never_written_early_whatever_the_fleet() -> None:
    server, memory = _in_sync_before_the_peak()
    _, memory, _ = server.reconcile(at(10), memory)
    plan, memory, _ = server.reconcile(at(10), memory)
    assert plan.raise_at is None  # the next transition (11:00) removes capacity
    server.writes.clear()
    plan, _, _ = server.reconcile(at(11) - 5, memory, decision=_with(FleetRaise(at(11), 30, 5000)))
    assert hpa_writes(server) == []
    assert raised_ahead(plan) is None
    assert server.hpa is not None
    assert server.hpa["spec"]["minReplicas"] == 5


def test_the_reconciler_places_the_key_at_its_next_raise() -> None:
    clock = FakeClock(at(9))
    index, woken = _index(clock)
    server = Server(autoscaler(), [schedule("peak", owner=OURS)], fleet=index)
    for i in range(999):
        index.place(f"shop/other-{i}", at(10))
    _, memory, _ = server.reconcile(at(9))
    server.reconcile(at(9), memory)
    fleet = index.raise_for(KEY)
    assert fleet == FleetRaise(at(10), 8, 1000)
    assert (KEY, at(10) - 8) in woken


def test_a_raise_whose_statuses_come_after_its_boundary_still_says_it_came_early() -> None:
    """At a large boundary the statuses pass of an SPA raised ahead may come after B: the
    Memory keeps why it was raised ahead until a status said it."""
    server, memory = _in_sync_before_the_peak()
    fleet = FleetRaise(at(10), 30, 3200)
    _, memory, _ = server.reconcile(at(10) - 30, memory, decision=_with(fleet))
    assert hpa_writes(server) == ["patch"]
    assert memory.raised_ahead is not None
    # The statuses pass, after B.
    plan, memory, _ = server.reconcile(at(10), memory, decision=_with(fleet))
    assert hpa_writes(server) == ["patch"]
    condition = raised_ahead(plan)
    assert condition is not None
    assert condition[:2] == ("False", "BoundaryReached")
    assert "fleet of 3,200" in condition[2]
    assert memory.raised_ahead is None


def _counting(horizon: int, fleet: FleetRaise | None = None) -> Callable[[Snapshot], Plan]:
    """The decision of a process that has not counted the SPA's fleet (None) or has counted
    part of it (`fleet`), early raises possible up to `horizon` seconds ahead."""

    def decision(snapshot: Snapshot) -> Plan:
        return decide(replace(snapshot, fleet=fleet, fleet_horizon=horizon))

    return decision


def test_a_raise_written_ahead_is_kept_by_a_leader_that_has_not_counted_its_fleet() -> None:
    """A new leader (or a restarted process) learns its fleets one reconcile at a time: its
    first reconciles of a fleet raised ahead see none, or a few SPAs and a short advance. The
    raise the HPA already holds is kept until its boundary, not lowered and written again."""
    server, memory = _in_sync_before_the_peak()
    _, memory, _ = server.reconcile(at(10) - 30, memory, decision=_with(FleetRaise(at(10), 30, 50)))
    plan, _, _ = server.reconcile(at(10) - 29, memory, decision=_with(FleetRaise(at(10), 30, 50)))
    assert hpa_writes(server) == ["patch"]
    said = raised_ahead(plan)
    assert said is not None
    assert server.autoscaler is not None
    server.autoscaler["status"] = plan.statuses[0].status.model_dump(by_alias=True, mode="json")
    for fleet in (None, FleetRaise(at(10), 2, 3)):
        # A fresh Memory: the reconciles of a process that has just taken the Lease.
        plan, _, _ = server.reconcile(at(10) - 20, None, decision=_counting(120, fleet))
        assert hpa_writes(server) == ["patch"]  # nothing written
        assert server.hpa is not None
        assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (5, 20)
        assert raised_ahead(plan) == said  # the status still says why, as the last leader did
    # The window starts at 10:00 as ever, and ends at 11:00.
    _, memory, _ = server.reconcile(at(10), None, decision=_counting(120))
    assert hpa_writes(server) == ["patch"]
    server.reconcile(at(11), memory, decision=_counting(120))
    assert hpa_writes(server) == ["patch", "patch"]
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (3, 10)


def test_an_early_raise_is_kept_only_within_the_horizon_and_as_written() -> None:
    server, memory = _in_sync_before_the_peak()
    _, memory, _ = server.reconcile(
        at(10) - 200, memory, decision=_with(FleetRaise(at(10), 200, 9))
    )
    assert hpa_writes(server) == ["patch"]
    # More than the horizon before the boundary: no raise is written that early, so this is
    # none, and it is undone.
    server.reconcile(at(10) - 121, None, decision=_counting(120))
    assert hpa_writes(server) == ["patch", "patch"]
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (3, 10)
    # Bounds that are not the boundary's (6/20): no early raise either.
    server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"] = 6, 20
    server.reconcile(at(10) - 60, None, decision=_counting(120))
    assert hpa_writes(server) == ["patch", "patch", "patch"]
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (3, 10)
    # Early raises never possible (a horizon of 0): written at the boundary only.
    server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"] = 5, 20
    server.reconcile(at(10) - 60, None, decision=_counting(0))
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (3, 10)


def test_a_window_end_just_before_another_raise_is_written_at_its_boundary() -> None:
    """Bounds a window that just ended left are no early raise of the next window, which
    raises to the same bounds a minute later: the end is written at 10:00, as ever."""
    server = Server(
        autoscaler(),
        [
            schedule("first", start="09:00", end="10:00", owner=OURS),
            schedule("second", start="10:01", end="11:00", owner=OURS),
        ],
    )
    _, memory, _ = server.reconcile(at(9))
    _, memory, _ = server.reconcile(at(9), memory)
    assert server.hpa is not None
    assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (5, 20)
    for remembered in (memory, None):  # this process, or one that just took the Lease
        server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"] = 5, 20
        server.reconcile(at(10), remembered, decision=_counting(120))
        assert (server.hpa["spec"]["minReplicas"], server.hpa["spec"]["maxReplicas"]) == (3, 10)


def test_a_shard_writes_the_status_of_a_raise_ahead_at_its_boundary() -> None:
    """A shard cannot see the other shards' raises: the status of an SPA it raised ahead waits
    for the boundary, and says then why the raise came early."""
    server, memory = _in_sync_before_the_peak()
    fleet = FleetRaise(at(10), 30, 3200)

    def shard(snapshot: Snapshot) -> Plan:
        return decide(replace(snapshot, fleet=fleet, statuses_at_boundary=True))

    _, memory, _ = server.reconcile(at(10) - 30, memory, decision=shard)
    assert hpa_writes(server) == ["patch"]
    plan, memory, _ = server.reconcile(at(10) - 29, memory, decision=shard)
    assert not [w for w in plan.statuses if isinstance(w, AutoscalerStatusWrite)]
    assert isinstance(plan.requeue, WakeUp)
    assert plan.requeue.at == at(10)
    assert memory.raised_ahead is not None
    assert "fleet of 3,200" in memory.raised_ahead
    # At the boundary: the status, once, saying the raise came early and why.
    plan, memory, _ = server.reconcile(at(10), memory, decision=shard)
    assert hpa_writes(server) == ["patch"]
    condition = raised_ahead(plan)
    assert condition is not None
    assert condition[:2] == ("False", "BoundaryReached")
    assert "fleet of 3,200" in condition[2]
    assert "written from 2026-11-16T09:59:30Z" in condition[2]
    assert plan.report is not None
    assert plan.report.schedules == {"peak": True}
    assert memory.raised_ahead is None
