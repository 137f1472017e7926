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
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .errors import PrivacctError

EXECUTORS = ("auto", "inline", "processes", "dask")
BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
            "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


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


def dask_client(scheduler: Any):
    """(client, owned): a ``distributed.Client`` for ``scheduler`` (an address or a Client); ``owned``
    says the caller must close it. One clear error if the package is missing or nothing answers."""
    try:
        from distributed import Client
    except ImportError:
        raise PrivacctError("--scheduler needs the 'distributed' package: pip install 'privacct[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, False
    if not isinstance(scheduler, str):
        raise PrivacctError(f"scheduler must be an address string or a distributed.Client, got {scheduler!r}")
    try:
        return Client(scheduler, timeout=30, set_as_default=False), True
    except (OSError, TimeoutError) as e:
        raise PrivacctError(f"scheduler {scheduler!r}: cannot connect ({e})") from None


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
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=pin_blas_threads) as pool:
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


__all__ = ["BLAS_ENV", "EXECUTORS", "blas_threads", "dask_client", "map_tasks", "picklable", "pin_blas_threads", "resolve"]
