"""What a command writes: its result on standard output (`emit`), and why it could not read
a cluster on standard error, with the exit status that says so (`reading_cluster`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TypeVar

__all__ = ["ReaderGone", "emit", "reading_cluster"]


class ReaderGone(Exception):
    """Standard output was closed by its reader (`| head`)."""


def emit(text: str) -> None:
    """Print `text` and flush it; :class:`ReaderGone` if the reader has gone, after which
    nothing more is printed, as other command-line tools behave."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise ReaderGone from None


Result = TypeVar("Result")


def reading_cluster(action: Callable[[], Result]) -> Result | int:
    """`action`'s result, or the exit status of why the cluster could not be read (said in one
    line on standard error, as kubectl says it)."""
    from spa.controller.failures import ClusterFailure

    try:
        return action()
    except ClusterFailure as error:
        print(f"error: {error.message}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        # How `status --watch` ends.
        return 0
    except ReaderGone:
        return 0
