"""Learner runs on a Dask cluster: ``privacct reproduce`` and ``privacct report`` with ``--scheduler``.

A run of ``config`` over N seeds becomes independent (algorithm, setting, seed-chunk) tasks: task
i runs the learner's batched run on ``seeds[a_i:b_i]`` on a worker; the regret rows come back and
are concatenated in seed order. Every random stream of a learner is spawned from its own seed's
SeedSequence (:mod:`privacct.algorithms.base`, ``noise_generators`` / ``stream_generators``), so the
regret of seed i does not depend on which other seeds share its batch: the result is bitwise the
regret of one local batch (``tests/algorithms/test_scaleout.py`` checks it per family), and a
reproduction writes the same bytes with or without a cluster, whatever the chunking. What crosses
the network: the frozen :class:`~privacct.algorithms.base.RunConfig` and the SeedSequences; back:
the regret, the declared log (equal for every chunk: it depends on the configuration only) and the
entries of the learner's ``info`` the caller names -- per-seed diagnostics, concatenated in seed
order, and configuration-level figures, checked equal across chunks (:func:`merge`).

Without ``--scheduler`` (or outside :func:`connect`) :func:`run_seeds` is the plain local run.
``distributed`` is an optional dependency (``pip install 'privacct[dask]'``).
"""

from __future__ import annotations

import contextlib
import math
import re
from typing import Any, Callable

import numpy as np

from privacct.errors import PrivacctError, printable, shown

from .base import LearnerSpec, RunConfig, RunResult

#: ``[scheme://]host:port`` (tcp, tls, inproc, ucx, ws, wss), as ``distributed.Client`` accepts it.
ADDRESS = re.compile(r"^(?:(?:tcp|tls|ucx|ws|wss)://)?[A-Za-z0-9.\-\[\]:]+:\d{1,5}$|^inproc://[\w.\-/:]+$")
CONNECT_TIMEOUT = 30

_state: dict[str, Any] = {"client": None, "address": None}


def check_scheduler(address: object, *, arg: str = "--scheduler") -> str:
    """Validate a scheduler address (one line naming ``arg``) and that ``distributed`` is installed."""
    if not isinstance(address, str) or not ADDRESS.match(address):
        raise PrivacctError(f"{arg} must be a Dask scheduler address such as tcp://127.0.0.1:8786, got {shown(address)}")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise PrivacctError(f"{arg} needs the optional Dask extra: pip install 'privacct[dask]'") from None
    return address


@contextlib.contextmanager
def connect(address: str | None, *, arg: str = "--scheduler"):
    """Within the block, :func:`run_seeds` runs its seed chunks on the cluster at ``address`` (None: locally)."""
    if address is None:
        yield None
        return
    from distributed import Client

    check_scheduler(address, arg=arg)
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise PrivacctError(f"{arg} {shown(address)}: cannot connect within {CONNECT_TIMEOUT} s "
                            f"({e.__class__.__name__}: {printable(e)[:120]})") from None
    old = dict(_state)
    _state.update(client=client, address=address)
    try:
        yield client
    finally:
        _state.update(old)
        client.close()


def active_client():
    """The connected ``distributed.Client`` inside :func:`connect`, else None."""
    return _state["client"]


def chunks(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous seed ranges covering ``range(n)`` (at most n of them, sizes differing by <= 1)."""
    parts = max(1, min(int(parts), int(n)))
    size = math.ceil(n / parts)
    return [(a, min(a + size, n)) for a in range(0, n, size)]


def _run_chunk(config: RunConfig, seeds: list, keys: tuple[str, ...] = ()) -> tuple[np.ndarray, Any, dict]:
    """One task on a worker: the batched run of ``seeds`` (regret, declared log and the ``keys`` of its info)."""
    from .registry import get_learner

    res = get_learner(config.algorithm).run(config, seeds)
    return np.asarray(res.regret, dtype=float), res.log, {k: res.info[k] for k in keys if k in res.info}


def _same(values: list) -> bool:
    import json

    first = json.dumps(values[0], sort_keys=True, default=repr)
    return all(json.dumps(v, sort_keys=True, default=repr) == first for v in values[1:])


def merge(config: RunConfig, parts: list, *, per_seed: tuple[str, ...] = (), shared: tuple[str, ...] = (),
          info: dict | None = None) -> RunResult:
    """One RunResult from seed-chunk results ``(regret, log, info)`` in seed order: regret rows and the
    ``per_seed`` info entries (one value per seed) concatenated, the log and the ``shared`` entries (set by
    the configuration) checked equal across chunks; nothing else of ``info`` is kept."""
    logs = [log for _, log, _ in parts]
    if any((log is None) != (logs[0] is None) or (log is not None and log.to_json() != logs[0].to_json())
           for log in logs):
        raise PrivacctError(f"learner {config.algorithm!r} declared different logs for different seed chunks")
    merged: dict[str, Any] = dict(info or {})
    for key in per_seed:
        values = [p[2][key] for p in parts if key in p[2]]
        if len(values) == len(parts):
            merged[key] = (np.concatenate([np.asarray(v) for v in values]) if isinstance(values[0], np.ndarray)
                           else [x for v in values for x in v])
    for key in shared:
        values = [p[2][key] for p in parts if key in p[2]]
        if len(values) == len(parts):
            if not _same(values):
                raise PrivacctError(f"learner {config.algorithm!r}: info[{key!r}] differs between seed chunks; it is "
                                    "not set by the configuration alone")
            merged[key] = values[0]
    regret = np.concatenate([r for r, _, _ in parts], axis=0)
    return RunResult(config=config, regret=regret, log=logs[0], ledger=None, info=merged)


def run_seeds(spec: LearnerSpec, config: RunConfig, seeds: list, *, progress: Callable[[int], None] | None = None,
              per_seed: tuple[str, ...] = (), shared: tuple[str, ...] = ()) -> RunResult:
    """``spec.run(config, seeds)`` locally, or as seed-chunk tasks on the connected cluster (module docstring).

    On the cluster the result holds the regret, the log and the named entries of ``info`` (:func:`merge`:
    ``per_seed`` diagnostics concatenated in seed order, ``shared`` ones set by the configuration);
    ``ledger`` is None and ``info`` also names the scheduler and the chunks."""
    client = active_client()
    if client is None:
        return spec.run(config, seeds, progress=progress)
    seeds = list(seeds)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    ranges = chunks(len(seeds), workers)
    keys = tuple(per_seed) + tuple(shared)
    futures = client.map(_run_chunk, [config] * len(ranges), [seeds[a:b] for a, b in ranges], [keys] * len(ranges),
                         pure=False)
    result = merge(config, client.gather(futures), per_seed=per_seed, shared=shared,
                   info={"scheduler": _state["address"], "chunks": ranges})
    if progress is not None:
        progress(config.episodes)
    return result


def audit_executor() -> dict[str, Any]:
    """Keyword arguments for an audit run: on the connected cluster, else inline (the same result either way,
    :mod:`privacct.audits.sampling`)."""
    client = active_client()
    return {"executor": "inline"} if client is None else {"scheduler": client}


__all__ = ["ADDRESS", "active_client", "audit_executor", "check_scheduler", "chunks", "connect", "merge", "run_seeds"]
