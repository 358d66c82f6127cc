"""Run `spa` with its wall clock offset by the number of seconds written in a file.

The soak (bench/soak.py) steps one replica's clock while it runs, as NTP or an operator
would: the wall clock (`time.time`, `time.time_ns`) jumps, the monotonic clock does not. The
offset file is re-read at most every 0.2 s (monotonic), so writing it steps the clock.

Why not libfaketime (Debian `libfaketime` 0.9.10): with DONT_FAKE_MONOTONIC=1, which an
NTP-like step needs, Python's `time.sleep` fails with EINVAL (it sleeps with
clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME), which that release mishandles); without it the
monotonic clock jumps too, which no real clock step does. The controller reads the wall clock
only through `time.time` (spa/runtime/clock.py, the Lease's timestamps, log records), so
offsetting it in the process is the same fault as far as the controller can tell; TLS
certificate checks in OpenSSL keep the real time, which is harmless for steps of seconds.

    SPA_STEPPED_CLOCK_FILE=/tmp/offset python bench/steppedclock.py run --kubeconfig ...
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

_real_time = time.time
_real_time_ns = time.time_ns
_real_monotonic = time.monotonic
_offset_file = Path(os.environ["SPA_STEPPED_CLOCK_FILE"])
_state = {"offset": 0.0, "read_at": -1e18}


def _offset() -> float:
    now = _real_monotonic()
    if now - _state["read_at"] >= 0.2:
        _state["read_at"] = now
        # A file being rewritten right now: keep the last offset.
        with contextlib.suppress(OSError, ValueError):
            _state["offset"] = float(_offset_file.read_text().strip() or 0)
    return _state["offset"]


def _time() -> float:
    return _real_time() + _offset()


def _time_ns() -> int:
    return _real_time_ns() + int(_offset() * 1e9)


time.time = _time
time.time_ns = _time_ns

if __name__ == "__main__":
    from spa.cli import main

    sys.exit(main(sys.argv[1:]))
