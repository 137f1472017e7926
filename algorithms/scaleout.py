"""A learner's seeds run in chunks, inline or on a Dask cluster, with the same bytes as one batch.

``run_seeds(spec, config, seeds, scheduler=ADDRESS)`` cuts ``seeds`` into chunks of consecutive
seeds, runs ``spec.run(config, chunk)`` for each chunk on the cluster (:func:`privacct.executors.map_tasks`),
and joins the chunks in seed order. Every learner draws each seed's randomness from that seed's own
``SeedSequence`` (the contract of :mod:`privacct.algorithms.base`, tested for every registered learner
in tests/algorithms/test_contract.py: a batch equals its seeds run one by one), so the joined regret
is byte-identical to ``spec.run(config, seeds)`` for any chunking and any executor.

The joined result keeps the log and the ledger of the first chunk after checking that every chunk
declared the same log and executed the same per-group usage (the releases of a run do not depend on
how many seeds share a batch); a chunk that differs is an error, never silently dropped.

Without a scheduler the seeds run in this process in one batch, exactly as ``spec.run``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privacct.errors import PrivacctError

from .base import LearnerSpec, RunConfig, RunResult, check_seeds


def seed_chunks(n_seeds: int, chunk_size: int) -> list[range]:
    """Consecutive seed index ranges of at most ``chunk_size`` seeds."""
    return [range(i, min(i + chunk_size, n_seeds)) for i in range(0, n_seeds, chunk_size)]


def _run_chunk(algorithm: str, config: RunConfig, seeds: list[np.random.SeedSequence]) -> RunResult:
    """One chunk on a worker (module level: picklable). The registry is looked up on the worker."""
    from .registry import get_learner

    return get_learner(algorithm).run(config, seeds)


def _usage(result: RunResult) -> list | None:
    return None if result.ledger is None else result.ledger.usage()


def join(config: RunConfig, parts: Sequence[RunResult]) -> RunResult:
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
    info["seed_chunks"] = len(parts)
    return RunResult(config, regret, first.log, first.ledger, info)


def run_seeds(spec: LearnerSpec, config: RunConfig, seeds, *, scheduler: Any = None, chunk_size: int | None = None,
              progress: Callable[[int], None] | None = None, executor: str | None = None) -> RunResult:
    """``spec.run(config, seeds)``, on a Dask cluster in seed chunks when ``scheduler`` is given.

    ``chunk_size``: seeds per task (default: enough tasks to keep every worker busy, at most 8 seeds a
    task). ``progress`` receives the number of episodes done, as for ``spec.run`` (a chunk counts when
    it finishes). ``executor`` overrides the choice (``inline`` / ``processes`` / ``dask``; tests).
    """
    seeds = check_seeds(seeds)
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
    return join(config, parts)


__all__ = ["join", "run_seeds", "seed_chunks"]
