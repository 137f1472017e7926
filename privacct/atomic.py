"""Atomic, reproducible file writes.

Every write goes to a temporary file in the target's own directory (``.NAME.tmp-PID-RANDOM``),
is flushed and fsync'ed, then renamed over the target with :func:`os.replace` (atomic on POSIX),
and the directory is fsync'ed: a reader, a crash or a SIGKILL sees the previous complete file or
the new complete one, never a truncated one. A failed write removes its temporary file and raises
:class:`OSError` (callers turn it into one line naming the argument, see
:mod:`privacct.outputs`).

Reproducible bytes: :func:`npz_bytes` writes numpy archives with a fixed zip timestamp (numpy's
own ``savez`` stamps the current time into every member), :func:`png_bytes` renders a matplotlib
figure with fixed metadata, and :func:`json_bytes` is strict JSON (no NaN/Infinity) with a final
newline. The same inputs give the same bytes on every run.

This module imports neither numpy nor matplotlib at load time.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import zipfile
from pathlib import Path
from typing import Any, Callable, Mapping

#: The fixed timestamp of every zip member (the earliest a zip file can hold).
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
#: Fixed PNG metadata: matplotlib's default names its version, which is fine, but no field may hold a date.
PNG_METADATA = {"Software": "privacct (matplotlib Agg)"}


def fsync_dir(path: str | Path) -> None:
    """fsync a directory (so a rename in it survives a crash); a no-op where directories cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_file(path: str | Path) -> None:
    """fsync a file already written by someone else (e.g. matplotlib) before it is renamed into place."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temporary_name(path: Path) -> Path:
    """A fresh hidden name beside ``path`` for its temporary file."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (module docstring)."""
    write_with(path, lambda f: f.write(data))


def write_with(path: str | Path, writer: Callable[[Any], Any]) -> None:
    """Call ``writer(binary_file)`` on a temporary file, then move it onto ``path`` atomically."""
    target = Path(path)
    tmp = temporary_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            writer(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(target.parent)


def write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    write_bytes(path, text.encode("utf-8"))


def json_bytes(obj: Any, *, default: Callable[[Any], Any] | None = None) -> bytes:
    """Strict JSON (indent 2, no NaN or Infinity: a ValueError instead) with a final newline."""
    return (json.dumps(obj, indent=2, allow_nan=False, default=default) + "\n").encode("utf-8")


def write_json(path: str | Path, obj: Any, *, default: Callable[[Any], Any] | None = None) -> None:
    """Write ``obj`` as strict JSON (:func:`json_bytes`) atomically; nothing is written if it does not serialise."""
    write_bytes(path, json_bytes(obj, default=default))


def npz_bytes(arrays: Mapping[str, Any], *, compress: bool = True) -> bytes:
    """A numpy ``.npz`` archive of ``arrays`` (``np.load`` reads it) whose bytes depend only on the arrays:
    members in the given order, each stamped :data:`ZIP_EPOCH`."""
    import numpy as np

    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_EPOCH)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def write_npz(path: str | Path, arrays: Mapping[str, Any], *, compress: bool = True) -> None:
    """Write :func:`npz_bytes` of ``arrays`` to ``path`` atomically."""
    write_bytes(path, npz_bytes(arrays, compress=compress))


def png_bytes(fig, *, dpi: int = 110) -> bytes:
    """The PNG of a matplotlib figure with fixed metadata (:data:`PNG_METADATA`): same figure, same bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=PNG_METADATA)
    return buf.getvalue()


def write_png(path: str | Path, fig, *, dpi: int = 110) -> None:
    """Write :func:`png_bytes` of ``fig`` to ``path`` atomically."""
    write_bytes(path, png_bytes(fig, dpi=dpi))


__all__ = ["PNG_METADATA", "ZIP_EPOCH", "fsync_dir", "fsync_file", "json_bytes", "npz_bytes", "png_bytes",
           "temporary_name", "write_bytes", "write_json", "write_npz", "write_png", "write_text", "write_with"]
