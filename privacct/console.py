"""Writing text to a terminal or a file whatever its encoding (every command's output and progress lines).

Its own module so that :mod:`privacct.progress` and :mod:`privacct.cli` share it without importing each other in a
circle (issue 22).
"""

from __future__ import annotations

from typing import TextIO


def write(stream: TextIO, text: str) -> None:
    """Write ``text`` to a text stream whatever its encoding: characters it cannot encode are
    written as backslash escapes instead of raising UnicodeEncodeError."""
    enc = getattr(stream, "encoding", None) or "utf-8"
    try:
        safe = text.encode(enc, "backslashreplace").decode(enc, "replace")
    except LookupError:  # pragma: no cover - unknown codec name
        safe = text.encode("ascii", "backslashreplace").decode("ascii")
    stream.write(safe)


__all__ = ["write"]
