"""One writer per output directory: a lock file holding the writer's pid.

:func:`acquire` creates ``DIR/.privacct.lock`` with ``O_CREAT | O_EXCL`` and writes the holder's
pid, its start time and its command into it. A second command on the same directory finds the
file, sees that the holder is alive, and is refused with one line naming the holder. A lock whose
holder is dead (SIGKILL, power loss: nothing removed the file) is *stale* and is reclaimed; so is
one whose pid was reused by another process (its start time differs) or one left empty by a
holder killed while writing it.

Acquiring, reclaiming and releasing happen inside a short ``flock`` on the directory itself, so two
commands reclaiming the same stale lock cannot both succeed, and a lock file is never read while
half-written. (``flock`` alone would be enough for mutual exclusion, but it cannot say *who* holds
the directory; the file does.)
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = ".privacct.lock"


class Busy(Exception):
    """The directory is held by another live command (``pid``, ``command``)."""

    def __init__(self, pid: int, command: str) -> None:
        super().__init__(pid, command)
        self.pid, self.command = pid, command


def _stat_field(pid: int, index: int) -> str | None:
    """Field ``index`` of /proc/PID/stat counted from the one after the command name (which may hold
    spaces and parentheses: everything up to the last ")" is skipped); None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = data[data.rfind(")") + 2:].split()
    return fields[index] if len(fields) > index else None


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), None if unknown."""
    return _stat_field(pid, 19)


def _state(pid: int) -> str | None:
    """The process's state letter (/proc/PID/stat field 3: R, S, Z, ...), None if unknown."""
    return _stat_field(pid, 0)


def alive(pid: int, start: str | None = None) -> bool:
    """Whether process ``pid`` runs (not a zombie) and, if ``start`` is given, is the one that started then."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True   # another user's live process
    except OSError:
        return False
    if _state(pid) in ("Z", "X"):
        return False
    if start is not None:
        now = _start_time(pid)
        if now is not None and now != start:
            return False  # the pid was reused
    return True


@contextlib.contextmanager
def _dir_flock(directory: Path):
    """A short exclusive ``flock`` on the directory (released by the kernel if this process dies)."""
    import fcntl

    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)   # closing the last descriptor releases the flock


def _holder(path: Path) -> tuple[int, str | None, str] | None:
    """(pid, start, command) written in the lock file, or None if it is unreadable or incomplete."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return int(d["pid"]), (None if d.get("start") is None else str(d["start"])), str(d.get("command", "?"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass
class Lock:
    path: Path
    pid: int

    def release(self) -> None:
        """Remove the lock file if it is still ours."""
        try:
            with _dir_flock(self.path.parent):
                h = _holder(self.path)
                if h is not None and h[0] == self.pid:
                    self.path.unlink()
        except OSError:
            pass


def acquire(directory: str | Path, command: str) -> Lock:
    """Hold ``directory`` for ``command``; raises :class:`Busy` if a live command holds it, OSError if the
    file cannot be created."""
    d = Path(directory)
    path = d / LOCK_NAME
    me = os.getpid()
    with _dir_flock(d):
        for _ in range(3):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                h = _holder(path)
                if h is not None and h[0] != me and alive(h[0], h[1]):
                    raise Busy(h[0], h[2]) from None
                if h is not None and h[0] == me:
                    raise Busy(me, h[2]) from None
                path.unlink()   # stale: its holder is dead, or it was left half-written by a killed holder
                continue
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"pid": me, "start": _start_time(me), "command": command}, f)
                    f.flush()
                    os.fsync(f.fileno())
            except BaseException:   # a full disk, an interruption: leave no lock file behind
                with contextlib.suppress(OSError):
                    path.unlink()
                raise
            return Lock(path, me)
    raise OSError(f"could not create the lock file {path}")  # pragma: no cover - three stale files in a row


__all__ = ["Busy", "LOCK_NAME", "Lock", "acquire", "alive"]
