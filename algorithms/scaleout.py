"""A learner's seeds run in chunks, inline or on a Dask cluster, with the same bytes as one batch.

``run_seeds(spec, config, seeds, scheduler=ADDRESS)`` cuts ``seeds`` into chunks of consecutive
seeds, runs ``spec.run(config, chunk)`` for each chunk on the cluster (:func:`privacct.executors.map_tasks`),
and joins the chunks in seed order. Every learner draws each seed's randomness from that seed's own
``SeedSequence`` (the contract of :mod:`privacct.algorithms.contract`, tested for every registered learner
in tests/algorithms/test_contract.py: a batch equals its seeds run one by one), so the joined regret
is byte-identical to ``spec.run(config, seeds)`` for any chunking and any executor.

The joined result keeps the log and the ledger of the first chunk after checking that every chunk
declared the same log and executed the same per-group usage (the releases of a run do not depend on
how many seeds share a batch); a chunk that differs is an error, never silently dropped.

Without a scheduler the seeds run in this process in one batch, exactly as ``spec.run``.

The commands (``privacct reproduce`` / ``report`` / ``audit --scheduler ADDRESS``) do not thread the address
through every family's code: they validate it before any work (:func:`check_scheduler`: the syntax, port
in [1, 65535], then a probe of a few seconds that a scheduler answers there, so an unreachable address is
one line, exit 2, within about :data:`PROBE_TIMEOUT` seconds rather than ``distributed.Client``'s 30) and
open one connection for the whole command (:func:`connect`); inside it, :func:`run_seeds` without an
explicit ``scheduler`` uses that cluster, and :func:`audit_executor` sends audits there too.

Diagnostics: the joined ``info`` is the first chunk's, plus the entries a caller names --
``per_seed`` ones (one value per seed, e.g. a linear-MDP learner's ``n_updates``) concatenated in
seed order, ``shared`` ones (set by the configuration) checked equal across chunks -- so a
reproduction that reads them writes the same bytes on a cluster as locally.
"""

from __future__ import annotations

import contextlib
import importlib.util
import ipaddress
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privacct.errors import PrivacctError, printable, shown

from .contract import LearnerSpec, RunConfig, RunResult, check_seeds


def seed_chunks(n_seeds: int, chunk_size: int) -> list[range]:
    """Consecutive seed index ranges of at most ``chunk_size`` seeds."""
    return [range(i, min(i + chunk_size, n_seeds)) for i in range(0, n_seeds, chunk_size)]


def _run_chunk(algorithm: str, config: RunConfig, seeds: list[np.random.SeedSequence]) -> RunResult:
    """One chunk on a worker (module level: picklable). The registry is looked up on the worker."""
    from .registry import get_learner

    return get_learner(algorithm).run(config, seeds)


def _usage(result: RunResult) -> list | None:
    return None if result.ledger is None else result.ledger.usage()


def _same(values: list) -> bool:
    first = json.dumps(values[0], sort_keys=True, default=repr)
    return all(json.dumps(v, sort_keys=True, default=repr) == first for v in values[1:])


def join(config: RunConfig, parts: Sequence[RunResult], *, per_seed: Sequence[str] = (),
         shared: Sequence[str] = ()) -> RunResult:
    """The chunks' results as one run (regret stacked in seed order); see the module docstring."""
    if not parts:
        raise PrivacctError("join needs at least one chunk")
    first = parts[0]
    for i, p in enumerate(parts[1:], 1):
        if p.log != first.log:
            raise PrivacctError(f"seed chunk {i} declared a different mechanism log than chunk 0")
        if _usage(p) != _usage(first):
            raise PrivacctError(f"seed chunk {i} executed different releases than chunk 0 (ledger usage differs)")
    regret = np.concatenate([np.asarray(p.regret) for p in parts], axis=0)
    info = dict(first.info)
    for key in per_seed:
        values = [p.info[key] for p in parts if key in p.info]
        if len(values) == len(parts):
            info[key] = (np.concatenate([np.asarray(v) for v in values]) if isinstance(values[0], np.ndarray)
                         else [x for v in values for x in v])
    for key in shared:
        values = [p.info[key] for p in parts if key in p.info]
        if len(values) == len(parts) and not _same(values):
            raise PrivacctError(f"learner {config.algorithm!r}: info[{key!r}] differs between seed chunks; it is not "
                                "set by the configuration alone")
    info["seed_chunks"] = len(parts)
    return RunResult(config, regret, first.log, first.ledger, info)


def run_seeds(spec: LearnerSpec, config: RunConfig, seeds, *, scheduler: Any = None, chunk_size: int | None = None,
              progress: Callable[[int], None] | None = None, executor: str | None = None,
              per_seed: Sequence[str] = (), shared: Sequence[str] = ()) -> RunResult:
    """``spec.run(config, seeds)``, on a Dask cluster in seed chunks when ``scheduler`` is given (default:
    the cluster of the enclosing :func:`connect`, if any).

    ``chunk_size``: seeds per task (default: enough tasks to keep every worker busy, at most 8 seeds a
    task). ``progress`` receives the number of episodes done, as for ``spec.run`` (a chunk counts when
    it finishes). ``executor`` overrides the choice (``inline`` / ``processes`` / ``dask``; tests).
    ``per_seed`` / ``shared``: the ``info`` entries to join (:func:`join`).
    """
    seeds = check_seeds(seeds)
    if scheduler is None:
        scheduler = _state["client"]
    if scheduler is None and executor in (None, "inline") and chunk_size is None:
        return spec.run(config, seeds, progress=progress)
    from privacct.executors import map_tasks, resolve

    n = len(seeds)
    if chunk_size is None:
        chunk_size = max(1, min(8, math.ceil(n / 4)))
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise PrivacctError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    chunks = seed_chunks(n, chunk_size)
    how = resolve(executor or "auto", scheduler, len(chunks), spec.name, config, seeds[:1], min_tasks=2)
    done = [0]

    def on_done(i: int) -> None:
        done[0] += len(chunks[i])
        if progress is not None:
            progress(config.episodes * done[0] // n)

    tasks = [(spec.name, config, [seeds[j] for j in c]) for c in chunks]
    parts = map_tasks(_run_chunk, tasks, how, scheduler, on_done=on_done)
    return join(config, parts, per_seed=per_seed, shared=shared)


# --------------------------------------------------------------------------- the commands' --scheduler
#: The shape of a scheduler address: ``[scheme://]host:port`` (tcp, tls, ucx, ws, wss; no scheme means tcp),
#: host a name, an IPv4 address or an IPv6 address in brackets; or ``inproc://...``. :func:`check_scheduler`
#: checks the parts (port in [1, 65535], a valid host) and that something answers there.
ADDRESS = re.compile(r"^(?:(?P<scheme>tcp|tls|ucx|ws|wss)://)?(?P<host>\[[^\[\]/]*\]|[^\[\]/:]*):(?P<port>[0-9]+)$"
                     r"|^inproc://[\w.\-/:]+$", re.ASCII)
#: Seconds the reachability probe of :func:`check_scheduler` waits: for the TCP connection, then for the
#: scheduler's first bytes (a Dask scheduler sends its handshake as soon as it accepts a connection).
PROBE_TIMEOUT = 3.0
#: Seconds :func:`connect` gives ``distributed.Client`` to connect once the probe has passed.
CONNECT_TIMEOUT = 10.0
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)

_state: dict[str, Any] = {"client": None}


def _address_error(address: object, arg: str, why: str = "") -> PrivacctError:
    return PrivacctError(f"{arg} must be a Dask scheduler address such as tcp://127.0.0.1:8786, got {shown(address)}"
                         + (f" ({why})" if why else ""))


def parse_scheduler(address: object, *, arg: str = "--scheduler") -> tuple[str, str, int]:
    """(scheme, host, port) of a scheduler address (``("inproc", address, 0)`` for an inproc one), or one
    PrivacctError line naming ``arg`` and what is wrong. Syntax only: nothing is contacted."""
    if not isinstance(address, str):
        raise _address_error(address, arg)
    if len(address) > 300:
        raise _address_error(address, arg, f"{len(address)} characters; a host name has at most 253")
    if not address.isascii() or not address.isprintable():
        raise _address_error(address, arg, "ASCII letters, digits, '.', '-', ':' and [ ] only")
    if address.startswith("inproc://"):
        if not ADDRESS.match(address):
            raise _address_error(address, arg)
        return "inproc", address, 0
    m = ADDRESS.match(address)
    if m is None:
        scheme = address.split("://", 1)[0] if "://" in address else None
        if scheme is not None and scheme not in ("tcp", "tls", "ucx", "ws", "wss"):
            why = f"unknown scheme {shown(scheme)}: tcp, tls, ucx, ws, wss or inproc"
        elif address.split("://", 1)[-1].count(":") > 1 and "[" not in address:
            why = "an IPv6 host goes in brackets, e.g. tcp://[::1]:8786"
        elif ":" not in address.split("://", 1)[-1]:
            why = "no port"
        elif not address.rsplit(":", 1)[1].isdigit():
            why = "the port must be an integer in [1, 65535], after the last ':'"
        else:
            why = ""
        raise _address_error(address, arg, why)
    scheme, host, port = m.group("scheme") or "tcp", m.group("host"), m.group("port")
    if len(port) > 5 or not 1 <= int(port) <= 65535:
        raise _address_error(address, arg, f"port {port} is not in [1, 65535]")
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise _address_error(address, arg, f"{shown(host)} is not an IPv6 address") from None
        return scheme, host[1:-1], int(port)
    labels = host.split(".")
    if not host or len(host) > 253 or not all(_LABEL.fullmatch(x) for x in labels):
        raise _address_error(address, arg, "the host must be a name (letters, digits, '-', '.'), an IPv4 address or "
                                           "an IPv6 address in brackets")
    if all(x.isdigit() for x in labels):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise _address_error(address, arg, f"{shown(host)} is not an IPv4 address") from None
    return scheme, host, int(port)


def probe_scheduler(address: str, *, arg: str = "--scheduler", timeout: float | None = None) -> None:
    """One PrivacctError line unless a scheduler can answer at ``address`` (a valid address): tcp (or no
    scheme): a TCP connection and the first bytes of Dask's handshake; tls, ws, wss: a TCP connection
    (their handshakes need the client's security settings); inproc: a listener in this process; ucx: the
    UCX package installed (tcp, tls, ws, wss: :func:`privacct.executors.probe_scheduler`, the one probe every
    command uses). Bounded by about 2 x ``timeout`` seconds (default :data:`PROBE_TIMEOUT`), name
    resolution included, instead of ``distributed.Client``'s 30 s."""
    timeout = PROBE_TIMEOUT if timeout is None else timeout
    scheme, host, port = parse_scheduler(address, arg=arg)
    if scheme == "inproc":
        try:
            from distributed.comm.inproc import global_manager

            listener = global_manager.get_listener_for(address.split("://", 1)[1])
        except Exception:  # noqa: BLE001 - another process's address (or a malformed one): nothing listens here
            listener = None
        if listener is None:
            raise PrivacctError(f"{arg} {shown(address)}: no scheduler listens at this inproc address in this process "
                                "(inproc:// addresses exist inside one Python process; from a command line use "
                                "tcp://HOST:PORT)")
        return
    if scheme == "ucx":
        if importlib.util.find_spec("ucp") is None and importlib.util.find_spec("ucxx") is None:
            raise PrivacctError(f"{arg} {shown(address)}: ucx:// needs UCX support for Dask (ucx-py or "
                                "distributed-ucxx), which is not installed; use tcp://HOST:PORT")
        return
    from privacct.executors import probe_scheduler as probe_address   # tcp, tls, ws, wss: one probe for every command

    probe_address(address, timeout=timeout, arg=arg)


def check_scheduler(address: object, *, arg: str = "--scheduler", probe: bool = True) -> str:
    """Validate a scheduler address (:func:`parse_scheduler`), that ``distributed`` is installed and, with
    ``probe`` (the default), that a scheduler answers there (:func:`probe_scheduler`, a few seconds at
    most); each failure is one PrivacctError line naming ``arg``. Returns ``address``."""
    parse_scheduler(address, arg=arg)
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise PrivacctError(f"{arg} needs the optional Dask extra: pip install 'privacct[dask]'") from None
    if probe:
        probe_scheduler(address, arg=arg)
    return address


@contextlib.contextmanager
def connect(address: str | None, *, arg: str = "--scheduler"):
    """Within the block, :func:`run_seeds` and :func:`audit_executor` use the cluster at ``address`` (one
    connection for the whole command); ``None``: everything runs locally. The address is checked and
    probed first (:func:`check_scheduler`); the client then gets :data:`CONNECT_TIMEOUT` seconds."""
    if address is None:
        yield None
        return
    from distributed import Client

    check_scheduler(address, arg=arg)
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except Exception as e:  # noqa: BLE001 - whatever the address did (refused, timed out, a TLS or protocol error): one line
        raise PrivacctError(f"{arg} {shown(address)}: cannot connect within {CONNECT_TIMEOUT:g} s "
                            f"({e.__class__.__name__}: {printable(e)[:200]})") from None
    old = _state["client"]
    _state["client"] = client
    try:
        yield client
    finally:
        _state["client"] = old
        client.close()


def active_client():
    """The ``distributed.Client`` of the enclosing :func:`connect`, else None."""
    return _state["client"]


def audit_executor() -> dict[str, Any]:
    """Keyword arguments for an audit: on the connected cluster, else inline (the same result either way)."""
    client = _state["client"]
    return {"executor": "inline"} if client is None else {"scheduler": client}


__all__ = ["ADDRESS", "CONNECT_TIMEOUT", "PROBE_TIMEOUT", "active_client", "audit_executor", "check_scheduler", "connect",
           "join", "parse_scheduler", "probe_scheduler", "run_seeds", "seed_chunks"]
