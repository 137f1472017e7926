"""Independent tasks run inline, on local processes or on a Dask cluster, results in task order.

One job: ``map_tasks(fn, tasks, executor=..., scheduler=...)`` returns ``[fn(*t) for t in tasks]``.
The caller plans the tasks (each carries its own ``numpy.random.SeedSequence``), so results never
depend on the executor or on the number of workers: the same seed gives the same bytes everywhere.
Used by the auditor (trial chunks, :mod:`privacct.audits.sampling`) and by the experiment commands
(seed chunks of ``reproduce`` and ``report --full``, :mod:`privacct.algorithms.scaleout`).

Executors: ``inline`` (this process), ``processes`` (``concurrent.futures.ProcessPoolExecutor``,
forked where the platform allows), ``dask`` (a ``distributed`` cluster at a scheduler address such
as ``tcp://127.0.0.1:8786``, or a ``distributed.Client``; the package is the optional extra
``privacct[dask]``). ``auto`` (:func:`resolve`) picks dask when a scheduler is given, processes
when there are enough tasks and ``fn`` and the tasks pickle, inline otherwise.

Before a ``distributed.Client`` is made for an address, :func:`probe_scheduler` checks within a few
seconds that a Dask scheduler can answer there (``Client`` itself would wait its 30 s timeout on a
port where something else listens): tcp (or no scheme), a TCP connection and the first bytes of Dask's
handshake; tls, a TCP connection and a TLS handshake (a TLS server that refuses us for want of a client
certificate still counts as answering: only the Client has the security settings), and then Dask's
TLS settings must exist; ws and wss, a TCP connection. Each failure is one line naming --scheduler.

BLAS threads: workers run one task each, side by side, so a threaded BLAS inside a worker only
oversubscribes the cores (measured on a loaded 2-core machine: one 20000 x 30 product took 1.5 s).
Workers are pinned to ONE BLAS/OpenMP thread (:func:`pin_blas_threads`, threadpoolctl, plus the
environment variables for libraries loaded later): process-pool workers by the pool's initializer,
Dask workers by ``client.run`` before the tasks are mapped (:func:`_pin_dask_worker`). Both run in
the worker process's main thread, which is where it has to happen: OpenBLAS ignores a thread-count
change requested from any other thread (measured with OpenBLAS 0.3.31; a Dask task runs in a
worker's thread pool). A Dask worker that lives in the caller's own process
(``LocalCluster(processes=False)``) is left alone, like inline work: the caller's thread pools are
the caller's business. :func:`blas_threads` reports the current count (what the tests check).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .errors import PrivacctError, printable, shown

EXECUTORS = ("auto", "inline", "processes", "dask")
BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
            "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: Seconds :func:`probe_scheduler` waits for each step (the TCP connection, then the first bytes of Dask's
#: handshake or the TLS handshake), instead of ``distributed.Client``'s 30 s.
PROBE_TIMEOUT = 3.0
#: Largest byte count of a scheduler's first message that the probe takes for Dask's handshake (it is about 60).
_MAX_HANDSHAKE = 2**20
#: ``[scheme://]host:port`` with host a name, an IPv4 address or an IPv6 address in brackets.
_HOST_PORT = re.compile(r"^(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[^\[\]/]*\]|[^\[\]/:]+):(?P<port>[0-9]{1,5})$", re.ASCII)


def blas_threads() -> int:
    """The largest thread count of the BLAS / OpenMP pools loaded in this process (1 if none)."""
    from threadpoolctl import threadpool_info

    return max((int(i.get("num_threads", 1)) for i in threadpool_info()), default=1)


def pin_blas_threads() -> None:
    """Pin this process's BLAS / OpenMP pools to one thread, now (threadpoolctl) and for libraries
    loaded later (environment variables). For worker processes only, from their main thread."""
    from threadpoolctl import threadpool_limits

    for var in BLAS_ENV:
        os.environ[var] = "1"
    threadpool_limits(limits=1)


def _pin_dask_worker(submitter: int) -> int:
    """Run on every Dask worker by ``client.run`` (the worker's main thread): pin it unless it lives in
    the submitting process ``submitter``; returns its BLAS thread count."""
    if os.getpid() != submitter:
        pin_blas_threads()
    return blas_threads()


def picklable(*objs: Any) -> bool:
    try:
        pickle.dumps(objs)
        return True
    except Exception:  # noqa: BLE001 - any pickling failure means "run inline"
        return False


def resolve(executor: str, scheduler: Any, n_tasks: int, *objs: Any, min_tasks: int = 8) -> str:
    """The executor ``auto`` stands for (others are checked and returned as given)."""
    if executor not in EXECUTORS:
        raise PrivacctError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "dask" and scheduler is None:
        raise PrivacctError("scheduler is required with executor='dask' (an address such as tcp://127.0.0.1:8786 "
                            "or a distributed.Client)")
    if executor != "auto":
        return executor
    if scheduler is not None:
        return "dask"
    if n_tasks >= min_tasks and (os.cpu_count() or 1) > 1 and picklable(*objs):
        return "processes"
    return "inline"


def _probe_socket(scheme: str, host: str, port: int, timeout: float) -> str | None:
    """None when something that can be a Dask scheduler answers at ``host:port`` over ``scheme``, else why not."""
    try:
        raw = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except OSError as e:
        return printable(e.strerror or e.__class__.__name__)
    with raw:
        raw.settimeout(timeout)
        if scheme == "tcp":   # a Dask scheduler sends its handshake as soon as it accepts a connection
            head = b""
            try:
                while len(head) < 16:
                    more = raw.recv(16 - len(head))
                    if not more:
                        break
                    head += more
            except TimeoutError:
                if not head:
                    return f"a server accepts connections there but sends nothing within {timeout:g} s: not a Dask scheduler"
            except OSError as e:
                return f"the connection failed at once ({printable(e.strerror or e.__class__.__name__)})"
            if not head:
                return "a server there closed the connection at once: not a Dask scheduler"
            # Dask's frames: the message's byte count, then its frame count, little-endian uint64 each; the
            # handshake is a few dozen bytes in one frame (anything else would make the Client allocate the
            # "length" it reads: exabytes for an HTTP reply)
            total = int.from_bytes(head[:8].ljust(8, b"\0"), "little")
            frames = int.from_bytes(head[8:16].ljust(8, b"\0"), "little")
            if len(head) < 16 or not (1 <= total <= _MAX_HANDSHAKE and 1 <= frames <= 64):
                return "a server there answers, but not with Dask's handshake: not a Dask scheduler"
            return None
        if scheme != "tls":   # ws, wss: their handshakes need the client's settings; the connection must do
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE   # a probe: is a TLS server there at all (nothing is sent over it)
        try:
            ctx.wrap_socket(raw, do_handshake_on_connect=True).close()
        except TimeoutError:
            return (f"a server accepts connections there but completes no TLS handshake within {timeout:g} s: "
                    "not a Dask scheduler over TLS")
        except ssl.SSLError as e:
            if "ALERT" in str(e.reason or "").upper():
                return None   # a TLS server that wants what only the Client's security settings present
            return f"a server there does not speak TLS ({printable(e.reason or e.__class__.__name__)}): not a Dask scheduler over TLS"
        except OSError as e:
            return (f"a server there closed the connection during the TLS handshake "
                    f"({printable(e.strerror or e.__class__.__name__)}): not a Dask scheduler over TLS")
    return None


def probe_scheduler(address: str, *, timeout: float = PROBE_TIMEOUT, arg: str = "--scheduler") -> None:
    """One PrivacctError line naming --scheduler unless a Dask scheduler can answer at ``address``, within
    about 2 x ``timeout`` seconds (name resolution included): see the module docstring. Addresses that are
    not ``[tcp|tls|ws|wss://]host:port`` (inproc, ucx, anything else) are left to ``distributed``."""
    m = _HOST_PORT.match(address.strip())
    scheme = (m.group("scheme") or "tcp") if m else None
    if m is None or scheme not in ("tcp", "tls", "ws", "wss") or not 1 <= int(m.group("port")) <= 65535:
        return
    host = m.group("host").strip("[]")
    result: list[str | None] = []
    worker = threading.Thread(target=lambda: result.append(_probe_socket(scheme, host, int(m.group("port")), timeout)),
                              name="privacct-scheduler-probe", daemon=True)
    worker.start()
    worker.join(2 * timeout + 1.0)   # getaddrinfo has no timeout of its own: the thread bounds it
    why = result[0] if result else f"no answer within {2 * timeout + 1.0:g} s (name resolution included)"
    if why is not None:
        raise PrivacctError(f"{arg} {shown(address)}: cannot reach a Dask scheduler ({why})")
    if scheme == "tls" and not _tls_configured():
        raise PrivacctError(f"{arg} {shown(address)}: tls:// needs Dask's TLS settings (the distributed.comm.tls "
                            "entries of the Dask configuration: ca-file and the client's cert and key), and none are set")


def _tls_configured() -> bool:
    """Whether Dask's configuration gives a client a TLS context (``distributed.security.Security``)."""
    try:
        from distributed.security import Security

        return Security().get_connection_args("client").get("ssl_context") is not None
    except Exception:  # noqa: BLE001 - an unreadable TLS configuration: let the Client say what is wrong
        return True


def dask_client(scheduler: Any):
    """(client, owned): a ``distributed.Client`` for ``scheduler`` (an address or a Client); ``owned``
    says the caller must close it. One clear error if the package is missing or nothing answers: an
    address is probed first (:func:`probe_scheduler`, a few seconds), then the Client gets 30 s."""
    try:
        from distributed import Client
    except ImportError:
        raise PrivacctError("--scheduler needs the 'distributed' package: pip install 'privacct[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    if not isinstance(scheduler, str):
        raise PrivacctError(f"scheduler must be an address string or a distributed.Client, got {scheduler!r}")
    probe_scheduler(scheduler)
    try:
        return Client(scheduler, timeout=30, set_as_default=False), True
    except Exception as e:  # noqa: BLE001 - whatever the address did (refused, timed out, a TLS or protocol error)
        raise PrivacctError(f"--scheduler {shown(scheduler)}: cannot connect "
                            f"({e.__class__.__name__}: {printable(e)[:200]})") from None


def _exit_with_parent(parent: int, interval: float) -> None:
    while os.getppid() == parent:
        time.sleep(interval)
    os._exit(1)


def start_worker(parent: int, interval: float = 0.2) -> None:
    """A process-pool worker's initializer: :func:`pin_blas_threads`, and a daemon thread that ends the worker
    within ``interval`` seconds once its parent ``parent`` (a pid) is gone. A parent killed by SIGKILL cannot stop
    its pool; without this its workers would wait on the pool's queue forever, holding the command's stdout and
    stderr open (a caller reading them to EOF would never return) and their memory."""
    pin_blas_threads()
    threading.Thread(target=_exit_with_parent, args=(parent, interval), daemon=True,
                     name="privacct-exit-with-parent").start()


def map_tasks(fn: Callable[..., Any], tasks: Sequence[tuple], executor: str, scheduler: Any = None,
              workers: int | None = None, on_done: Callable[[int], None] | None = None) -> list[Any]:
    """``[fn(*t) for t in tasks]`` on ``executor`` (not ``auto``: see :func:`resolve`), in task order.
    ``on_done(i)`` is called in this process once task i has finished (for progress; on Dask in task
    order, elsewhere as tasks finish)."""
    tasks = list(tasks)
    if executor == "inline":
        out = []
        for i, t in enumerate(tasks):
            out.append(fn(*t))
            if on_done is not None:
                on_done(i)
        return out
    if executor == "processes":
        n = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
        ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=start_worker, initargs=(os.getpid(),)) as pool:
            futures = [pool.submit(fn, *t) for t in tasks]
            if on_done is not None:
                for i, f in enumerate(futures):
                    f.add_done_callback(lambda _f, i=i: on_done(i))
            return [f.result() for f in futures]
    if executor == "dask":
        client, owned = dask_client(scheduler)
        try:
            client.run(_pin_dask_worker, os.getpid())
            futures = client.map(fn, *[list(c) for c in zip(*tasks, strict=True)], pure=False) if tasks else []
            if on_done is None:
                return client.gather(futures)
            out = []
            for i, f in enumerate(futures):  # in task order: progress moves as the front of the queue finishes
                out.append(f.result())
                on_done(i)
            return out
        finally:
            if owned:
                client.close()
    raise PrivacctError(f"executor must be one of {', '.join(EXECUTORS[1:])}, got {executor!r}")


__all__ = ["BLAS_ENV", "EXECUTORS", "PROBE_TIMEOUT", "blas_threads", "dask_client", "map_tasks", "picklable", "pin_blas_threads", "start_worker",
           "probe_scheduler", "resolve"]
