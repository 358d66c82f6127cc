"""spa/runtime/summary.py: one INFO line per burst of writes, on a FakeClock."""

from __future__ import annotations

import logging

import pytest

from spa.runtime import FakeClock, WriteSummary

LOGGER = "test.writes"


def lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == LOGGER]


def summary(clock: FakeClock) -> WriteSummary:
    return WriteSummary(clock=clock, logger=logging.getLogger(LOGGER), quiet=1.0, longest=10.0)


def test_a_burst_is_one_line_once_it_goes_quiet(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = FakeClock(1000.0)
    writes = summary(clock)
    for _ in range(3):
        writes.note("HPAs")
        clock.advance(0.4)  # each write within a second of the last: one burst
    writes.note("SPA statuses")
    writes.note("scale targets", failed=True)
    assert lines(caplog) == []
    clock.advance(0.99)
    assert lines(caplog) == []
    clock.advance(0.02)
    [line] = lines(caplog)
    assert line.levelno == logging.INFO
    assert line.getMessage() == "wrote 3 HPAs, 1 SPA statuses in 1.2s; failed: 1 scale targets"
    assert line.__dict__["written"] == {"HPAs": 3, "SPA statuses": 1}
    assert line.__dict__["failed"] == {"scale targets": 1}
    # The next burst starts from nothing.
    writes.note("HPAs")
    clock.advance(5)
    assert lines(caplog)[-1].getMessage() == "wrote 1 HPAs in 0.0s"
    assert len(lines(caplog)) == 2


def test_a_long_burst_is_summed_up_every_longest_seconds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = FakeClock(1000.0)
    writes = summary(clock)
    for _ in range(25):  # a write every 0.5 s for 12.5 s: never quiet
        writes.note("HPAs")
        clock.advance(0.5)
    assert [line.__dict__["written"] for line in lines(caplog)] == [{"HPAs": 20}]
    clock.advance(1)
    assert [line.__dict__["written"] for line in lines(caplog)] == [{"HPAs": 20}, {"HPAs": 5}]


def test_flush_logs_what_is_left_and_nothing_twice(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    clock = FakeClock(1000.0)
    writes = summary(clock)
    writes.flush()
    assert lines(caplog) == []
    writes.note("HPAs")
    writes.flush()
    assert len(lines(caplog)) == 1
    assert clock.pending_timers == 0
    clock.advance(5)
    assert len(lines(caplog)) == 1
