"""Sampling the two sides of an audit in deterministic chunks, inline, on processes or on Dask.

Trials are embarrassingly parallel. ``trials`` outputs per side are cut into chunks of
``chunk_size`` (the last one shorter); chunk j of side s draws from
``default_rng(SeedSequence(seed).spawn(n_pairs)[pair].spawn(2)[s].spawn(n_chunks)[j])`` and the
chunks are concatenated in order. The plan depends only on (seed, trials, chunk_size), never on
the executor or the number of workers, so the same seed gives the same bytes on every executor.

Executors: ``inline`` (this process), ``processes`` (``concurrent.futures.ProcessPoolExecutor``;
the default for large audits), ``dask`` (a ``distributed`` cluster at a scheduler address, or a
``distributed.Client``). ``auto`` picks dask when a scheduler is given, processes when there are
at least four chunks and the mechanism pickles, inline otherwise.

BLAS threads: audit workers run one chunk each, side by side, so a threaded BLAS inside a worker
only oversubscribes the cores (measured on a loaded 2-core machine: one 20000 x 30 product took
1.5 s). Workers are pinned to ONE BLAS/OpenMP thread (:func:`pin_blas_threads`, threadpoolctl, plus
the environment variables for libraries loaded later): process-pool workers by the pool's
initializer, Dask workers by ``client.run`` before the chunks are mapped (:func:`_pin_dask_worker`).
Both run in the worker process's main thread, which is where it has to happen: OpenBLAS ignores a
thread-count change requested from any other thread (measured with OpenBLAS 0.3.31; a Dask task
runs in a worker's thread pool). A Dask worker that lives in the caller's own process
(``LocalCluster(processes=False)``) is left alone, like inline sampling: the caller's thread pools
are the caller's business. :func:`blas_threads` reports the current count (what the tests check).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from privacct.errors import PrivacctError

EXECUTORS = ("auto", "inline", "processes", "dask")
DEFAULT_CHUNK = 65_536
BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
            "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def plan(trials: int, chunk_size: int) -> list[int]:
    """Chunk sizes of one side: ``trials`` cut into pieces of ``chunk_size``."""
    full, rest = divmod(trials, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def side_seeds(seq: np.random.SeedSequence, n_chunks: int) -> tuple[list, list]:
    """Chunk seed sequences for side D and side D' of one pair."""
    d, d2 = seq.spawn(2)
    return d.spawn(n_chunks), d2.spawn(n_chunks)


def sample_chunk(mechanism: Any, dataset: Any, seed: np.random.SeedSequence, size: int) -> np.ndarray:
    """One chunk: ``mechanism(dataset, default_rng(seed), size)`` as an array (module level: picklable)."""
    return np.asarray(mechanism(dataset, np.random.default_rng(seed), size))


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


def _picklable(*objs: Any) -> bool:
    try:
        pickle.dumps(objs)
        return True
    except Exception:  # noqa: BLE001 - any pickling failure means "run inline"
        return False


def resolve(executor: str, scheduler: Any, n_tasks: int, *objs: Any) -> str:
    if executor not in EXECUTORS:
        raise PrivacctError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "dask" and scheduler is None:
        raise PrivacctError("scheduler is required with executor='dask' (an address such as tcp://127.0.0.1:8786 or a distributed.Client)")
    if executor != "auto":
        return executor
    if scheduler is not None:
        return "dask"
    if n_tasks >= 8 and (os.cpu_count() or 1) > 1 and _picklable(*objs):
        return "processes"
    return "inline"


def run_tasks(tasks: list[tuple], executor: str, scheduler: Any = None, workers: int | None = None) -> list[np.ndarray]:
    """Run ``sample_chunk(*task)`` for every task, results in task order."""
    if executor == "inline":
        return [sample_chunk(*t) for t in tasks]
    if executor == "processes":
        n = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
        ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=pin_blas_threads) as pool:
            return list(pool.map(sample_chunk, *zip(*tasks, strict=True)))
    if executor == "dask":
        try:
            from distributed import Client
        except ImportError as e:  # pragma: no cover - distributed is a test extra
            raise PrivacctError("scheduler needs the 'distributed' package (pip install distributed)") from e
        own = not isinstance(scheduler, Client)
        if own and not isinstance(scheduler, str):
            raise PrivacctError(f"scheduler must be an address string or a distributed.Client, got {scheduler!r}")
        try:
            client = Client(scheduler, timeout=30, set_as_default=False) if own else scheduler
        except OSError as e:
            raise PrivacctError(f"scheduler {scheduler!r}: cannot connect ({e})") from None
        try:
            client.run(_pin_dask_worker, os.getpid())
            futures = client.map(sample_chunk, *[list(c) for c in zip(*tasks, strict=True)], pure=False)
            return client.gather(futures)
        finally:
            if own:
                client.close()
    raise PrivacctError(f"executor must be one of {', '.join(EXECUTORS[1:])}, got {executor!r}")
