"""Writing a command's result to standard output."""

from __future__ import annotations

import os
import sys

__all__ = ["ReaderGone", "emit"]


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
