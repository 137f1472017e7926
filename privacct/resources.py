"""Memory before allocating: how much this machine can give a command, and a one-line refusal above it.

:func:`available_bytes` is the memory available now: ``MemAvailable`` of /proc/meminfo, lowered to
what the cgroup still allows (``memory.max - memory.current``, cgroup v2) in a container, else
``sysconf`` free pages. A command may use :data:`FRACTION` of it (:func:`limit_bytes`).
``PRIVACCT_MEMORY_LIMIT`` (bytes, or with a suffix: ``512M``, ``4G``) sets the limit directly.

:func:`check_memory` raises :class:`privacct.errors.PrivacctError` naming the arguments that set
the size, the estimate and the limit, e.g. ``--episodes 100000000000 x --seeds 1 needs about 2.2 TiB
of memory (regret arrays ...); the limit is 18 GiB (80% of the 23 GiB available); lower
--episodes or --seeds``. Estimates come from each command (``privacct.algorithms.memory``).
"""

from __future__ import annotations

import os

FRACTION = 0.8


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room() -> int | None:
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as f:
            cap = f.read().strip()
        if cap == "max":
            return None
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as f:
            used = int(f.read().strip())
        return max(0, int(cap) - used)
    except (OSError, ValueError):
        return None


def _sysconf_available() -> int | None:
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def available_bytes() -> int | None:
    """Memory available to this process now, in bytes (None if the system does not say)."""
    found = [v for v in (_meminfo_available(), _cgroup_room()) if v is not None]
    if not found:
        v = _sysconf_available()
        return v
    return min(found)


def parse_size(text: str) -> int:
    """``"512M"`` -> 536870912 (suffixes K, M, G, T; powers of 1024); raises ValueError."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = 1
    for i, suffix in enumerate("KMGT", 1):
        if t.endswith(suffix):
            mult, t = 1024**i, t[:-1]
            break
    value = float(t) * mult
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(text)
    return int(value)


def limit_bytes() -> tuple[int | None, str]:
    """(limit, how it was set) for one command's arrays."""
    env = os.environ.get("PRIVACCT_MEMORY_LIMIT")
    if env:
        try:
            return parse_size(env), "PRIVACCT_MEMORY_LIMIT"
        except ValueError:
            pass
    avail = available_bytes()
    if avail is None:
        return None, "unknown"
    return int(avail * FRACTION), f"{FRACTION:.0%} of the {fmt_bytes(avail)} available"


def fmt_bytes(n: float) -> str:
    """A short human size: ``745 GiB``, ``12 MiB``, ``3.1 TiB``."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024 or unit == "EiB":
            return f"{n:.0f} {unit}" if n >= 10 or unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.0f} EiB"  # pragma: no cover


def check_memory(need: int | float, *, args: str, what: str, lower: str | None = None) -> None:
    """Refuse (PrivacctError, exit 2) when ``need`` bytes exceed the limit (module docstring).

    ``args``: the arguments and values that set the size (``"--episodes 100000 x --seeds 20"``);
    ``what``: the arrays; ``lower``: which arguments to lower (default: those named in ``args``)."""
    from .errors import PrivacctError

    limit, how = limit_bytes()
    if limit is None or need <= limit:
        return
    raise PrivacctError(f"{args} needs about {fmt_bytes(need)} of memory ({what}); the limit is {fmt_bytes(limit)} "
                        f"({how}); lower {lower or 'them'}")


__all__ = ["FRACTION", "available_bytes", "check_memory", "fmt_bytes", "limit_bytes", "parse_size"]
