"""One log line per burst of writes, instead of one per write.

Why: a fleet's boundary is thousands of writes within a second or two (every HPA, then every
status); a line for each is most of a controller's log volume and CPU at that moment, and
says less than one line with the counts. A level-triggered controller has no "boundary"
object to hang a summary on (a key is reconciled because its timer fired, because something
changed, or at a resync), so a burst is what a boundary looks like from here: writes with
less than `quiet` seconds between them. The line comes `quiet` seconds after the last write
of a burst, or every `longest` seconds while a burst lasts, so a boundary gets one line
however long it takes and a steady trickle of edits one line per `longest` at most. The
per-write lines go to DEBUG (docs/operations.md, "Logs").

Generic: a write is counted under the words its caller gives (`HPAs`, `statuses`), and a
failure under its own.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from spa.runtime.clock import Clock, TimerHandle

__all__ = ["WriteSummary"]


class WriteSummary:
    """Counts writes and logs them in one INFO line per burst.

    :param clock: the clock bursts are timed on (a real one in production: bursts are about
        when requests were made, not about scheduled instants).
    :param quiet: a pause this long (seconds) ends a burst.
    :param longest: a burst longer than this (seconds) is summed up anyway, and counting
        starts again.
    """

    def __init__(
        self,
        *,
        clock: Clock,
        logger: logging.Logger | logging.LoggerAdapter[Any],
        quiet: float = 1.0,
        longest: float = 10.0,
    ) -> None:
        self._clock = clock
        self._log = logger
        self._quiet = quiet
        self._longest = longest
        self._written: Counter[str] = Counter()
        self._failed: Counter[str] = Counter()
        self._first: float | None = None
        self._last = 0.0
        self._timer: TimerHandle | None = None

    def note(self, what: str, *, failed: bool = False) -> None:
        """Count one write of `what` (or one that failed)."""
        now = self._clock.now()
        if self._first is None:
            self._first = now
        self._last = now
        (self._failed if failed else self._written)[what] += 1
        if self._timer is None:
            self._timer = self._clock.call_at(now + self._quiet, self._due)

    def flush(self) -> None:
        """Log what was counted, if anything (and at shutdown: nothing is lost)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._first is None:
            return
        seconds = round(max(0.0, self._last - self._first), 3)
        failed = sum(self._failed.values())
        parts = [f"{count} {what}" for what, count in sorted(self._written.items())]
        message = f"wrote {', '.join(parts) or 'nothing'} in {seconds:.1f}s"
        if failed:
            failures = ", ".join(f"{count} {what}" for what, count in sorted(self._failed.items()))
            message += f"; failed: {failures}"
        self._log.info(
            "%s",
            message,
            extra={
                "written": dict(self._written),
                "failed": dict(self._failed),
                "seconds": seconds,
            },
        )
        self._written.clear()
        self._failed.clear()
        self._first = None

    def _due(self) -> None:
        self._timer = None
        if self._first is None:
            return
        now = self._clock.now()
        if now - self._last >= self._quiet or now - self._first >= self._longest:
            self.flush()
        else:
            when = min(self._last + self._quiet, self._first + self._longest)
            self._timer = self._clock.call_at(when, self._due)
