"""Child processes that never outlive the test run.

Each server runs in its own process group, so stopping it also stops anything it spawned.
Three layers make sure nothing is orphaned: an explicit stop (fixture teardown), an atexit
hook plus SIGTERM/SIGHUP handlers for an interrupted run, and the kernel's parent-death
signal (PR_SET_PDEATHSIG) for a parent that is killed outright.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

_PR_SET_PDEATHSIG = 1
# Looked up before any fork: after fork only async-signal-safe work is allowed.
try:
    _prctl: Any = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: the other two layers still apply
    _prctl = None

_live: set[ManagedProcess] = set()
_live_lock = threading.Lock()
_handlers_installed = False


def _die_with_parent() -> None:
    # Runs in the child between fork and exec.
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def stop_all() -> None:
    """Stop every process still running (atexit and signal paths)."""
    with _live_lock:
        processes = list(_live)
    for process in processes:
        process.stop(timeout=5)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    stop_all()
    previous = _previous_handlers.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
    else:
        # Die of the same signal, as if we had not been here.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


_previous_handlers: dict[int, Any] = {}


def install_cleanup_handlers() -> None:
    """Register the atexit hook and, from the main thread, SIGTERM/SIGHUP handlers (once)."""
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(stop_all)
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGHUP):
            _previous_handlers[signum] = signal.getsignal(signum)
            signal.signal(signum, _on_signal)


class ManagedProcess:
    """One server process: started in its own group, output appended to a log file."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self._popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen is not None else None

    @property
    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    @property
    def returncode(self) -> int | None:
        return self._popen.poll() if self._popen is not None else None

    def start(self) -> None:
        if self.running:
            raise RuntimeError(f"{self.name} is already running (pid {self.pid})")
        install_cleanup_handlers()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} starting {self.name}\n".encode())
            log.flush()
            # The parent-death signal fires when the *thread* that forked exits, so it is
            # only safe for children started from the main thread (which lives as long as
            # the process); others rely on the atexit/signal layers.
            on_main_thread = threading.current_thread() is threading.main_thread()
            self._popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
                preexec_fn=_die_with_parent if on_main_thread else None,
            )
        with _live_lock:
            _live.add(self)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM the group, wait, then SIGKILL it; a stopped process is a no-op."""
        popen = self._popen
        if popen is None:
            return
        try:
            if popen.poll() is None:
                _signal_group(popen.pid, signal.SIGTERM)
                _signal_group(popen.pid, signal.SIGCONT)  # a paused one handles it too
                try:
                    popen.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    _signal_group(popen.pid, signal.SIGKILL)
                    popen.wait(timeout=10)
            # Whatever the leader left behind in its group goes too.
            _signal_group(popen.pid, signal.SIGKILL)
        finally:
            with _live_lock:
                _live.discard(self)

    def kill(self) -> None:
        """SIGKILL the group at once (a crash, not a shutdown)."""
        popen = self._popen
        if popen is None:
            return
        _signal_group(popen.pid, signal.SIGKILL)
        popen.wait(timeout=10)
        with _live_lock:
            _live.discard(self)

    def pause(self) -> None:
        """SIGSTOP the group: a process that stops answering without exiting (a node that
        hangs), until `resume`."""
        if self._popen is not None and self._popen.poll() is None:
            _signal_group(self._popen.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT the group after `pause` (a no-op on a process that is not paused)."""
        if self._popen is not None and self._popen.poll() is None:
            _signal_group(self._popen.pid, signal.SIGCONT)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
