"""SIGINT and SIGTERM for commands: stop cleanly, one line, exit 130 (SIGINT) or 143 (SIGTERM).

:func:`handled` installs, for the duration of a command (main thread only), a handler that raises
:class:`Interrupted` (a ``KeyboardInterrupt``) in the command's process, so every ``with`` block
unwinds: an :class:`privacct.outputs.OutputSet` discards its staged files and releases its lock.
The dispatcher (:func:`privacct.cli.run`) prints one line and returns ``128 + signal``.

Worker processes forked while the handler is installed (the audit's process pool) inherit it; in
them it exits at once and quietly (``os._exit``), so a Ctrl-C that reaches the whole process group
prints no worker tracebacks. When only the command's own process is signalled, the handler first
terminates its worker processes, so that the pool's shutdown does not wait for queued work.

A signal that arrives while C code calls back into Python (numba compiling through LLVM, a ctypes callback) raises
inside that callback, where Python can only report the exception (``sys.unraisablehook``: an "Exception ignored"
traceback) and go on; the handler's unraisable hook prints nothing and delivers the signal again to the main thread
(``_thread.interrupt_main`` from a timer thread, so that it is pending when the callback has returned), where it unwinds the command as any other.

While stopping, exceptions of helper threads (e.g. a process pool's manager thread noticing its
terminated workers) are not printed: the command's one line says what happened.

Other signals keep their default behaviour; SIGKILL cannot be handled (the output set's staging
directory and lock are then cleaned by the next command on the same directory).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading

HANDLED = (signal.SIGINT, signal.SIGTERM)
#: Seconds after which a signal swallowed by a C callback is delivered again (module docstring).
REDELIVER_AFTER = 0.01


class Interrupted(KeyboardInterrupt):
    """The command received ``signum`` (SIGINT or SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signum)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


#: The signal received during the current command (also when a worker's death surfaced first).
_received: list[int] = []
#: Set when :class:`Interrupted` was raised inside a C callback, which Python cannot propagate (it reports it to
#: ``sys.unraisablehook`` and carries on): the signal is then delivered again to the main thread, once.
_swallowed: list[int] = []


def received() -> int | None:
    """The signal number received during the current :func:`handled` block, or None."""
    return _received[-1] if _received else None


def _terminate_children() -> None:
    try:
        import multiprocessing

        for child in multiprocessing.active_children():
            try:
                child.terminate()
            except Exception:  # noqa: BLE001 - best effort while stopping
                pass
    except Exception:  # noqa: BLE001
        pass


@contextlib.contextmanager
def handled():
    """Within the block, SIGINT/SIGTERM raise :class:`Interrupted` in this process (module docstring)."""
    if threading.current_thread() is not threading.main_thread():
        yield   # signal handlers can only be installed from the main thread
        return
    owner = os.getpid()

    def handler(signum, frame):
        if os.getpid() != owner:   # a forked worker: leave quietly
            os._exit(128 + signum)
        if _received and not _swallowed:
            return  # already stopping: a second Ctrl-C must not interrupt the clean-up
        if not _received:
            _received.append(signum)
            _terminate_children()
        _swallowed.clear()
        raise Interrupted(signum)

    old_unraisable = sys.unraisablehook

    def unraisable(u):   # the signal arrived inside a C callback (numba compiling, ctypes): deliver it again
        if isinstance(u.exc_value, Interrupted) and os.getpid() == owner:
            _swallowed.append(u.exc_value.signum)
            # from another thread, a moment later: called here, the handler would run inside this hook (and be
            # swallowed again); pending, it runs at the main thread's next step in Python code
            threading.Timer(REDELIVER_AFTER, _thread.interrupt_main, (u.exc_value.signum,)).start()
            return
        old_unraisable(u)

    old_hook = threading.excepthook

    def quiet_hook(args):   # a worker pool's helper thread failing while we stop prints no traceback
        if _received or args.exc_type is KeyboardInterrupt:
            return
        old_hook(args)

    old = {}
    try:
        for s in HANDLED:
            old[s] = signal.signal(s, handler)
    except (ValueError, OSError):  # pragma: no cover - unusual embedding
        for s, h in old.items():
            signal.signal(s, h)
        yield
        return
    _received.clear()
    _swallowed.clear()
    threading.excepthook = quiet_hook
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        sys.unraisablehook = old_unraisable
        if not _received:   # once stopping, helper threads may still fail until the process exits
            threading.excepthook = old_hook


__all__ = ["HANDLED", "Interrupted", "handled", "received"]
