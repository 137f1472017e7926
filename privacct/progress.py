"""One progress convention for every long command, through tqdm.

* stderr is a terminal: a tqdm bar (cleared when done);
* stderr is not a terminal (a log file, CI, a pipe): a plain line at most every
  :data:`INTERVAL` seconds (``PRIVACCT_PROGRESS_INTERVAL`` overrides it), formatted by tqdm, e.g.
  ``run ucb-vi/jdp: 1200/2000 episodes (60%), 4,810 episodes/s, 00:01 elapsed, 00:01 left``;
  the clock is shared by every bar of the process, so a command made of many short runs (a
  reproduction) still prints a line every few seconds, and one that ends within the interval prints
  nothing;
* ``--quiet``: nothing.

Progress goes to stderr, results to stdout; every command ends with one line on stdout saying
where its files went (:func:`privacct.outputs.wrote_line`). Use::

    with progress_bar(K, "run ucb-vi/jdp", unit="episodes", scale=n_seeds, quiet=args.quiet) as bar:
        learner.run(..., progress=bar)          # bar(done) with the number of episodes done
    note("tuned c = 0.1", quiet=args.quiet)     # a one-off line (above a bar on a terminal)

tqdm is imported only when a bar or line is actually shown.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import TextIO

from .console import write

#: Seconds between two plain progress lines when stderr is not a terminal.
INTERVAL = 5.0

_state = {"silent_since": None}


def interval() -> float:
    try:
        v = float(os.environ.get("PRIVACCT_PROGRESS_INTERVAL", INTERVAL))
        return v if v >= 0 else INTERVAL
    except ValueError:
        return INTERVAL


def reset() -> None:
    """Start a new command: the shared clock of plain lines starts now."""
    _state["silent_since"] = time.monotonic()


def _due(now: float) -> bool:
    if _state["silent_since"] is None:
        _state["silent_since"] = now
    return now - _state["silent_since"] >= interval()


def _printed(now: float) -> None:
    _state["silent_since"] = now


def _stderr(stream: TextIO | None) -> TextIO:
    return sys.stderr if stream is None else stream


def is_terminal(stream: TextIO | None = None) -> bool:
    s = _stderr(stream)
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _write(stream: TextIO, text: str) -> None:
    try:
        write(stream, text)
        stream.flush()
    except (OSError, ValueError):  # a closed or broken stderr never stops the command
        pass


_active_bars: list = []


def note(message: str, *, quiet: bool = False, stream: TextIO | None = None) -> None:
    """One line of progress information on stderr (not when quiet); above the bar on a terminal."""
    if quiet:
        return
    from .errors import printable

    s = _stderr(stream)
    line = printable(message)
    if _active_bars and is_terminal(s):
        from tqdm import tqdm

        tqdm.write(line, file=s)
    else:
        _write(s, line + "\n")
    _printed(time.monotonic())


class Progress:
    """Progress of ``total`` steps (module docstring). Call it (or :meth:`update`) with the number of
    steps done so far; ``scale`` steps of work per step (e.g. seeds per episode) for the rate."""

    def __init__(self, total: int | None, desc: str, *, unit: str = "episodes", scale: int = 1, quiet: bool = False,
                 stream: TextIO | None = None) -> None:
        self.total = None if total is None else max(1, int(total))
        self.desc, self.unit, self.scale = desc, unit, max(1, int(scale))
        self.stream = _stderr(stream)
        self.mode = "quiet" if quiet else ("bar" if is_terminal(self.stream) else "lines")
        self.t0 = time.monotonic()
        self.done = 0
        self._bar = None
        if self.mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=desc, unit=unit, unit_scale=self.scale if self.scale > 1 else False,
                             file=self.stream, leave=False, dynamic_ncols=True, mininterval=0.2)
            _active_bars.append(self._bar)
        elif self.mode == "lines":
            _due(self.t0)

    def line(self) -> str:
        """The plain progress line for the current state (tqdm's formatting)."""
        from tqdm import tqdm

        elapsed = time.monotonic() - self.t0
        n = self.done * self.scale
        rate = n / elapsed if elapsed > 0 else 0.0
        head = f"{self.desc}: {n:,}"
        if self.total is not None:
            total = self.total * self.scale
            pct = 100.0 * self.done / self.total
            left = (self.total - self.done) * self.scale / rate if rate > 0 else None
            head += f"/{total:,} {self.unit} ({pct:.0f}%)"
            tail = f", {tqdm.format_interval(elapsed)} elapsed" + (
                "" if left is None else f", {tqdm.format_interval(left)} left")
        elif self.unit == "s":   # a heartbeat: only the time
            return f"{self.desc}: running, {tqdm.format_interval(elapsed)} elapsed"
        else:
            head += f" {self.unit}"
            tail = f", {tqdm.format_interval(elapsed)} elapsed"
        return f"{head}, {rate:,.0f} {self.unit}/s{tail}"

    def update(self, done: int) -> None:
        done = int(done)
        if self.mode == "bar":
            self._bar.update(max(0, done - self.done))
        self.done = done
        if self.mode == "lines":
            now = time.monotonic()
            if _due(now):
                _write(self.stream, self.line() + "\n")
                _printed(now)

    __call__ = update

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            if self._bar in _active_bars:
                _active_bars.remove(self._bar)
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


def progress_bar(total: int | None, desc: str, **kw) -> Progress:
    """A :class:`Progress` (module docstring); use it as a context manager."""
    return Progress(total, desc, **kw)


@contextlib.contextmanager
def heartbeat(desc: str, *, quiet: bool = False, unit: str = "s", stream: TextIO | None = None, tick: float = 0.5):
    """Progress of work whose size is not known in advance: the elapsed time, from a background thread
    (a bar with the elapsed time on a terminal, a line every :data:`INTERVAL` seconds otherwise)."""
    if quiet:
        yield None
        return
    p = Progress(None, desc, unit=unit, stream=stream)
    stop = threading.Event()

    def beat():
        while not stop.wait(tick):
            p.update(int(time.monotonic() - p.t0))

    t = threading.Thread(target=beat, name="privacct-heartbeat", daemon=True)
    t.start()
    try:
        yield p
    finally:
        stop.set()
        t.join(timeout=2)
        p.close()


__all__ = ["INTERVAL", "Progress", "heartbeat", "interval", "is_terminal", "note", "progress_bar", "reset"]
