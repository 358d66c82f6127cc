"""What every entry point of bench/ does with input that measures nothing.

Why one module: each benchmark takes counts (rounds, repeats, sizes) and reports a table at the
end, and each failed the same two ways: a count of 0 or an empty list went through the run and
ended in a traceback deep in the report (the best of no repeats, a median of no rounds), and a
run that measured nothing (a two-minute soak in which no fault fired) had no report at all. So
the counts are checked as arguments, in one line each (exit status 2, as argparse does), and a
report of nothing says so: "nothing measured", "0 faults".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

__all__ = [
    "NOTHING_MEASURED",
    "NothingMeasured",
    "non_negative_int",
    "non_negative_ints",
    "one_or_more_of",
    "positive_int",
    "positive_ints",
    "seconds",
]

NOTHING_MEASURED = "nothing measured"
"""What a report of no results says instead of a table."""


class NothingMeasured(Exception):
    """A run left nothing to analyse (its work directory holds no record of it); the message
    says what is missing."""


def positive_int(text: str) -> int:
    """An argparse type: a whole number from 1 (rounds, repeats, SPAs, patches)."""
    return _whole(text, minimum=1)


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number from 0 (a delay, a size that may be none)."""
    return _whole(text, minimum=0)


def seconds(text: str) -> float:
    """An argparse type: a number of seconds from 0 (`2.5`)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds from 0")
    return value


def positive_ints(text: str) -> list[int]:
    """An argparse type: one or more whole numbers from 1, separated by commas (`1,100`)."""
    return _numbers(text, minimum=1)


def non_negative_ints(text: str) -> list[int]:
    """An argparse type: one or more whole numbers from 0, separated by commas (delays)."""
    return _numbers(text, minimum=0)


def one_or_more_of(names: Sequence[str]) -> Callable[[str], list[str]]:
    """An argparse type: one or more of `names`, separated by commas."""

    def chosen(text: str) -> list[str]:
        found = [name for name in text.split(",") if name]
        unknown = sorted(set(found) - set(names))
        if unknown or not found:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not a comma-separated list of {', '.join(names)}"
            )
        return found

    return chosen


def _numbers(text: str, *, minimum: int) -> list[int]:
    found = [_whole(part, minimum=minimum) for part in text.split(",") if part.strip()]
    if not found:
        raise argparse.ArgumentTypeError(f"'{text}' holds no number")
    return found


def _whole(text: str, *, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number from {minimum}")
    return value
