"""Sampling the two sides of an audit in deterministic chunks, inline, on processes or on Dask.

Trials are embarrassingly parallel. ``trials`` outputs per side are cut into chunks of
``chunk_size`` (the last one shorter); chunk j of side s draws from
``default_rng(SeedSequence(seed).spawn(n_pairs)[pair].spawn(2)[s].spawn(n_chunks)[j])`` and the
chunks are concatenated in order. The plan depends only on (seed, trials, chunk_size), never on
the executor or the number of workers, so the same seed gives the same bytes on every executor.

Executors: ``inline`` (this process), ``processes`` (``concurrent.futures.ProcessPoolExecutor``;
the default for large audits), ``dask`` (a ``distributed`` cluster at a scheduler address, or a
``distributed.Client``). ``auto`` picks dask when a scheduler is given, processes when there are
at least eight chunks and the mechanism pickles, inline otherwise.

Executors and BLAS pinning are the core's (:mod:`privacct.executors`, shared with the experiment
commands); this module plans the chunks and samples one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privacct.executors import EXECUTORS, blas_threads, map_tasks, pin_blas_threads, resolve
from privacct.rng import lazy_copy

DEFAULT_CHUNK = 65_536


def plan(trials: int, chunk_size: int) -> list[int]:
    """Chunk sizes of one side: ``trials`` cut into pieces of ``chunk_size``."""
    full, rest = divmod(trials, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def side_seeds(seq: np.random.SeedSequence, n_chunks: int) -> tuple[list, list]:
    """Chunk seed sequences for side D and side D' of one pair."""
    d, d2 = seq.spawn(2)   # privacct.rng.LazySeedSequence: numpy's values; the seeds a chunk spawns for its trials cost no hash
    return lazy_copy(d).spawn(n_chunks), lazy_copy(d2).spawn(n_chunks)


def sample_chunk(mechanism: Any, dataset: Any, seed: np.random.SeedSequence, size: int) -> np.ndarray:
    """One chunk: ``mechanism(dataset, default_rng(seed), size)`` as an array (module level: picklable)."""
    return np.asarray(mechanism(dataset, np.random.default_rng(seed), size))


def run_tasks(tasks: list[tuple], executor: str, scheduler: Any = None, workers: int | None = None) -> list[np.ndarray]:
    """Run ``sample_chunk(*task)`` for every task, results in task order."""
    return map_tasks(sample_chunk, tasks, executor, scheduler, workers)


__all__ = ["DEFAULT_CHUNK", "EXECUTORS", "blas_threads", "pin_blas_threads", "plan", "resolve", "run_tasks",
           "sample_chunk", "side_seeds"]
