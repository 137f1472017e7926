"""Where a command writes: ``--out`` checked before any work, one writer at a time, and a set of files
that appears complete or not at all.

**Checked first** (:func:`check_out`, no side effect): ``--out`` must be a directory that exists or
can be created, be writable, lie outside the kernel's file systems (``/proc``, ``/sys``, ``/dev``),
and hold nothing but this command's own outputs (files listed in its ``manifest.json``, or
matching the command's :class:`Outputs` patterns). A file, an unwritable place or a folder with
foreign files is refused with one line naming ``--out``; nothing is created.

**One writer** (:mod:`privacct.lock`): the directory is locked for the whole command (a lock
file holding the pid; a dead holder's lock is reclaimed), so a second command on the same
``--out`` is refused at once instead of interleaving its files.

**Complete or absent** (:class:`OutputSet`): a command writes its files into a hidden staging
directory inside ``--out`` (``.privacct-staging-PID-RANDOM``); nothing in ``--out`` changes
while it works. :meth:`OutputSet.commit` then (signals deferred) fsyncs every staged file,
removes the old ``manifest.json``, renames each file into place (:func:`os.replace`: each file
is atomic), removes the previous set's files that the new set does not have, and writes
``manifest.json`` last, with every file's size and SHA-256 (files named *volatile*, such as
``timing.json``, are listed without a hash so that the manifest itself stays reproducible).
Why a manifest rather than renaming a whole temporary directory into place: ``--out`` may be an
existing directory (the previous run's, or one the user made), and POSIX cannot atomically swap
two non-empty directories; a staging directory inside ``--out`` keeps the renames on one file
system and the commit window to milliseconds, and the manifest, written last, makes even a crash
inside that window visible.

So an interrupted command (SIGINT, SIGTERM, SIGKILL, a full disk) leaves the previous complete
set untouched; only a kill inside the commit itself leaves files without a ``manifest.json``,
each of them complete. Readers: a directory holds a complete set iff ``manifest.json`` exists
and lists every file with its size and hash. Leftover staging directories and locks of dead
commands are removed by the next command on the same ``--out``.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import hashlib
import json
import os
import secrets
import shutil
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import atomic
from .errors import PrivacctError, printable, shown
from .lock import LOCK_NAME, Busy, acquire

MANIFEST = "manifest.json"
STAGING_PREFIX = ".privacct-staging-"
#: Kernel file systems: nothing a command writes belongs there.
FORBIDDEN_ROOTS = ("/proc", "/sys", "/dev")
#: How many entries of an existing --out are inspected before it is refused as too large to be ours.
MAX_ENTRIES = 20_000
#: errno values of a write that failed for lack of room or a broken/read-only device.
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM}


class OutputError(PrivacctError):
    """``--out`` cannot be used (exit 2; nothing was changed in it)."""


@dataclass(frozen=True)
class Outputs:
    """What one command writes into its output directory.

    ``command``: e.g. ``"privacct run"`` (recorded in the manifest and the lock); ``patterns``:
    fnmatch patterns of its files, relative to the directory with ``/`` separators (a directory
    holding only these, or files its manifest lists, is the command's own); ``volatile``: files
    whose bytes legitimately differ between identical runs (timings), listed in the manifest without
    a hash.
    """

    command: str
    patterns: tuple[str, ...]
    volatile: tuple[str, ...] = ("timing.json",)

    def owns(self, rel: str) -> bool:
        return rel == MANIFEST or any(fnmatch.fnmatchcase(rel, p) for p in self.patterns)


def _internal(rel: str) -> bool:
    """privacct's own bookkeeping: the lock, staging directories, temporary files of atomic writes."""
    top = rel.split("/", 1)[0]
    return top == LOCK_NAME or top.startswith(STAGING_PREFIX) or (top.startswith(".") and ".tmp-" in top)


def _manifest_files(directory: Path, command: str) -> set[str]:
    """Files listed by ``directory``'s manifest if it was written by ``command`` (else nothing)."""
    try:
        doc = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        if doc.get("command") != command or not isinstance(doc.get("files"), dict):
            return set()
        return {str(k) for k in doc["files"]}
    except (OSError, ValueError, AttributeError):
        return set()


def _entries(directory: Path):
    """Relative posix paths of every file (and symlink, fifo, ...) under ``directory``, bounded."""
    count = 0
    for root, dirs, files in os.walk(directory, followlinks=False):
        rel_root = os.path.relpath(root, directory)
        base = "" if rel_root == "." else rel_root.replace(os.sep, "/") + "/"
        keep = []
        for d in dirs:
            if os.path.islink(os.path.join(root, d)):
                files.append(d)   # a symlink to a directory is an entry, not a place to walk
            elif not _internal(base + d):
                keep.append(d)
        dirs[:] = keep
        for f in files:
            count += 1
            if count > MAX_ENTRIES:
                yield None
                return
            yield base + f


def _where(path: str) -> str:
    return shown(path)


def _forbidden(real: str) -> str | None:
    for root in FORBIDDEN_ROOTS:
        if real == root or real.startswith(root + "/"):
            return root
    return None


def check_out(path: object, outputs: Outputs, *, arg: str = "--out") -> Path:
    """Validate an output directory without touching it; return its absolute path.

    Raises :class:`OutputError` (one line naming ``arg``) for: an empty or malformed path, a path
    under /proc, /sys or /dev, an existing non-directory, a directory that is not writable or that
    holds files which are not ``outputs``' own, and a missing directory whose nearest existing
    parent is not a writable directory.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise OutputError(f"{arg} must be a directory path, got {shown(path)}")
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise OutputError(f"{arg} must name a directory, got {shown(text)}")
    if "\x00" in text:
        raise OutputError(f"{arg} must be a directory path without NUL characters, got {shown(text)}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise OutputError(f"{arg} must be a valid (UTF-8) path, got {shown(text)}") from None
    if len(os.fsencode(text)) > 4000 or any(len(os.fsencode(c)) > 255 for c in text.split("/")):
        raise OutputError(f"{arg} is too long (a path of at most 4000 bytes, names of at most 255), got {shown(text)}")
    where = _where(text)
    try:
        p = Path(os.path.abspath(text))
        real = os.path.realpath(p)
        root = _forbidden(real) or _forbidden(str(p))
        if root is not None:
            raise OutputError(f"{arg} must be a directory you can write, not under {root} (a kernel file system), "
                              f"got {where}")
        if os.path.lexists(p) and not p.exists():
            raise OutputError(f"{arg} {where} is a broken symbolic link; choose a directory")
        if p.exists():
            if not p.is_dir():
                raise OutputError(f"{arg} must be a directory, got the existing file {where}; choose a new or an "
                                  "existing output directory")
            if not os.access(p, os.W_OK | os.X_OK):
                raise OutputError(f"{arg} {where} is not writable")
            own = _manifest_files(p, outputs.command)
            for rel in _entries(p):
                if rel is None:
                    raise OutputError(f"{arg} {where} holds more than {MAX_ENTRIES} files, which are not "
                                      f"{outputs.command} outputs; choose an empty or a new directory")
                if _internal(rel) or rel in own or outputs.owns(rel):
                    continue
                raise OutputError(f"{arg} {where} holds files that are not {outputs.command} outputs (e.g. "
                                  f"{shown(rel)}); choose an empty or a new directory, or one {outputs.command} "
                                  "wrote before")
            return p
        parent = p.parent
        while not os.path.lexists(parent) and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise OutputError(f"{arg} {where} cannot be created: {_where(str(parent))} is not a directory")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(f"{arg} {where} cannot be created: {_where(str(parent))} is not writable")
        return p
    except OSError as e:
        raise OutputError(f"{arg} {where} cannot be used: {printable(e.strerror or e)}") from None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class _Deferred:
    """Block SIGINT and SIGTERM while a commit runs (main thread only): delivered right after it."""

    def __enter__(self):
        self.masked = threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_sigmask")
        if self.masked:
            self.old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        return self

    def __exit__(self, *exc):
        if self.masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.old)
        return False


@dataclass
class OutputSet:
    """A command's output directory for one run (module docstring). Use as a context manager::

        with OutputSet(args.out, RUN_OUTPUTS) as o:
            ... write every file under o.staging ...
            files = o.commit()

    Leaving the block without :meth:`commit` (an error, an interruption) discards the staged files
    and leaves ``--out`` as it was (a directory this set created is removed again if it is empty).
    """

    path: object
    outputs: Outputs
    arg: str = "--out"
    final: Path = field(init=False)
    staging: Path = field(init=False)
    committed: bool = field(init=False, default=False)
    files: list[str] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.final = check_out(self.path, self.outputs, arg=self.arg)
        self._created: list[Path] = []
        self._lock = None

    @property
    def where(self) -> str:
        return printable(str(self.final))

    def _fail(self, what: str, e: OSError) -> OutputError:
        return OutputError(f"{self.arg} {_where(str(self.final))}: cannot {what}: {printable(e.strerror or e)}; "
                           "nothing was changed in it")

    def __enter__(self) -> "OutputSet":
        try:
            missing = []
            p = self.final
            while not os.path.lexists(p):
                missing.append(p)
                p = p.parent
            for d in reversed(missing):
                try:
                    os.mkdir(d)
                except FileExistsError:
                    if os.path.isdir(d) and not os.path.islink(d):
                        continue   # created meanwhile by a concurrent command: the lock below decides who writes
                    raise
                self._created.append(d)
        except OSError as e:
            self._remove_created()
            raise self._fail("create the directory", e) from None
        try:
            self._lock = acquire(self.final, self.outputs.command)
        except Busy as b:
            self._remove_created()
            raise OutputError(f"{self.arg} {_where(str(self.final))} is in use by another privacct command (pid {b.pid}, "
                              f"{printable(b.command)}); wait for it to finish or choose another {self.arg}") from None
        except OSError as e:
            self._remove_created()
            raise self._fail("lock it", e) from None
        try:
            check_out(self.final, self.outputs, arg=self.arg)   # again, now that no one else can write here
            for entry in os.listdir(self.final):
                if entry.startswith(STAGING_PREFIX):
                    shutil.rmtree(self.final / entry, ignore_errors=True)   # left by a killed command
            self.staging = self.final / f"{STAGING_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
            os.mkdir(self.staging)
        except BaseException as e:
            self._release()
            if isinstance(e, OSError):
                raise self._fail("write in it", e) from None
            raise
        return self

    def commit(self) -> list[str]:
        """Move every staged file into place and write the manifest last; return the relative file names
        (manifest included), sorted."""
        if self.committed:
            return list(self.files)
        moved = 0
        old_manifest: bytes | None = None
        manifest = self.final / MANIFEST
        try:
            with _Deferred():
                staged = sorted(rel for rel in _entries(self.staging) if rel is not None)
                listing = {}
                for rel in staged:   # hashes and the manifest first: nothing in --out changes until they exist
                    atomic.fsync_file(self.staging / rel)
                    if rel in self.outputs.volatile:
                        listing[rel] = {"volatile": True}
                    else:
                        listing[rel] = {"bytes": (self.staging / rel).stat().st_size, "sha256": _sha256(self.staging / rel)}
                staged_manifest = self.staging / f".{MANIFEST}.tmp-commit"   # inside staging: internal if left
                atomic.write_json(staged_manifest, {"command": self.outputs.command, "complete": True, "files": listing})
                previous = _manifest_files(self.final, self.outputs.command)
                if manifest.exists():
                    old_manifest = manifest.read_bytes()
                    manifest.unlink()
                    atomic.fsync_dir(self.final)
                for rel in staged:
                    target = self.final / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(self.staging / rel, target)
                    moved += 1
                new = set(staged)
                for rel in sorted(_entries(self.final), key=str):
                    if rel is None or _internal(rel) or rel in new or rel == MANIFEST:
                        continue
                    if rel in previous or self.outputs.owns(rel):
                        (self.final / rel).unlink()
                for d in {str(Path(rel).parent) for rel in staged} - {"."}:
                    atomic.fsync_dir(self.final / d)
                os.replace(staged_manifest, manifest)   # last: the set is complete
                atomic.fsync_dir(self.final)
                shutil.rmtree(self.staging, ignore_errors=True)
        except OSError as e:
            with contextlib.suppress(OSError, NameError):
                staged_manifest.unlink()
            if moved == 0:
                if old_manifest is not None and not manifest.exists():
                    with contextlib.suppress(OSError):
                        atomic.write_bytes(manifest, old_manifest)   # nothing moved: the previous set is whole again
                raise OutputError(f"{self.arg} {_where(str(self.final))}: cannot write its files: "
                                  f"{printable(e.strerror or e)}; nothing was changed in it") from None
            raise OutputError(f"{self.arg} {_where(str(self.final))}: cannot write its files: "
                              f"{printable(e.strerror or e)}; the set there is incomplete (no {MANIFEST})") from None
        self.committed = True
        self.files = staged + [MANIFEST]
        return list(self.files)

    def _remove_created(self) -> None:
        for d in reversed(self._created):
            try:
                os.rmdir(d)
            except OSError:
                break
        self._created = []

    def _release(self) -> None:
        if getattr(self, "staging", None) is not None and not self.committed:
            shutil.rmtree(self.staging, ignore_errors=True)
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if not self.committed:
            self._remove_created()

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._release()
        if isinstance(exc, OSError) and not isinstance(exc, OutputError) and _about_writing(exc, self):
            raise OutputError(f"{self.arg} {_where(str(self.final))}: cannot write its files: "
                              f"{printable(exc.strerror or exc)}; nothing was changed in it") from None
        return False


def _about_writing(e: OSError, s: OutputSet) -> bool:
    """Whether an OSError raised inside an output set is a failed write of its files."""
    for name in (e.filename, getattr(e, "filename2", None)):
        if name is not None and str(name).startswith(str(s.final)):
            return True
    return e.errno in WRITE_ERRNOS


def wrote_line(final: Path | str, files: list[str]) -> str:
    """The line every writing command ends with: ``wrote DIR (files: a, b, ...)``."""
    tops = []
    for rel in files:
        top = rel.split("/", 1)[0] + ("/" if "/" in rel else "")
        if top not in tops:
            tops.append(top)
    return f"wrote {printable(str(final))} (files: {', '.join(printable(t) for t in tops)})"


__all__ = ["MANIFEST", "OutputError", "OutputSet", "Outputs", "check_out", "wrote_line"]
