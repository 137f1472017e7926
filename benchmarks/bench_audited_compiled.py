"""CPU of a linear-mixture learner's many-trial audit, numpy loop -> compiled loop (issue 23 item 4).

    OMP_NUM_THREADS=1 python benchmarks/bench_audited_compiled.py [--only NAME ...] [--privacy jdp|ldp]
        [--trials N] [--repeat R] [--compare-seeding]

Each learner's tight audit (:func:`privacct.audits.suite.audit_setting`, claim eps = 1, its audit configuration and,
by default, its trials per side) runs inline (one process) with ``engine.COMPILED`` False (the numpy loop, whose
primitives record the audit's observations) and True (the compiled loop, the tap's records emitted in bulk:
algorithms/linear_mixture/audit_records.py), interleaved A B B A per repeat after one small warm-up run of each (numba's
cache loaded); the CPU seconds (process time) of each run and the certified bound eps_lb, which must be the same both
ways (the runs are the same bytes: tests/algorithms/linear_mixture/test_audited_compiled.py). Figures in the table of
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import time

from privacct.algorithms.linear_mixture import engine as E
from privacct.audits.suite import audit_setting


def timed(name: str, privacy: str, trials: int | None, compiled: bool) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, eps_lb) of one audit run inline."""
    E.COMPILED = compiled
    c0, w0 = time.process_time(), time.perf_counter()
    r = audit_setting(name, privacy).run(trials=trials, seed=0, executor="inline")
    return time.process_time() - c0, time.perf_counter() - w0, r.epsilon_lower_bound


def _old_as_generators(rngs):
    import numpy as np

    from privacct.errors import PrivacctError

    if isinstance(rngs, np.random.Generator):
        return [rngs]
    out = list(rngs)
    if not out or not all(isinstance(r, np.random.Generator) for r in out):
        raise PrivacctError("rngs must be a numpy Generator or a non-empty sequence of them")
    return out


def _old_generate_state(self, n_words, dtype=None):
    import numpy as np

    dtype = np.uint32 if dtype is None else dtype
    if int(n_words) == 4 and np.dtype(dtype) == np.uint64:
        return self._state.copy()
    return self.real().generate_state(n_words, dtype)


def _old_child_generators(seeds, j):
    """privacct.rng.child_generators before shared_generators: each child's key built at once, its seed words copied."""
    import numpy as np

    from privacct import rng

    seeds, j = list(seeds), int(j)
    fam = rng._family(seeds) if seeds and 0 <= j <= rng._MASK32 else None
    if fam is None:
        return [np.random.default_rng(np.random.SeedSequence(s.entropy, spawn_key=tuple(s.spawn_key) + (j,),
                                                             pool_size=s.pool_size)) for s in seeds]
    run, pool_size, keys = fam
    words = np.empty((len(seeds), len(run) + keys.shape[1] + 1), dtype=np.uint32)
    words[:, :len(run)], words[:, len(run):-1], words[:, -1] = run, keys, j
    states = rng._pcg64_seeds(words, pool_size)
    entropy = seeds[0].entropy
    return [np.random.Generator(np.random.PCG64(rng._Seeded(st, entropy, tuple(s.spawn_key) + (j,), pool_size)))
            for st, s in zip(states, seeds, strict=True)]


@contextlib.contextmanager
def seeding(kind: str):
    """``before``: the seeding before privacct.rng.shared_generators (the fixed coins' streams as one ``default_rng``
    per trial, as_generators' per-item isinstance, the child Generators' keys built at once and seed words copied,
    the precomputed seeds' general dtype test); ``now``: the code as it
    is; ``lazy-chunks``: now, with the audits' chunk seeds as privacct.rng.LazySeedSequence (audits/sampling.side_seeds
    handing out ``lazy_copy(d).spawn(n)``: every trial's SeedSequence made unhashed)."""
    import numpy as np

    from privacct import mechanisms, rng
    from privacct.algorithms import contract
    from privacct.audits import sampling
    from privacct.counters import counter

    saved = (contract.shared_generators, sampling.side_seeds, mechanisms.as_generators, counter.as_generators,
             rng._Seeded.generate_state, contract.child_generators)
    if kind == "before":
        contract.shared_generators = lambda s, n: [np.random.default_rng(s) for _ in range(n)]
        contract.child_generators = _old_child_generators
        mechanisms.as_generators = counter.as_generators = _old_as_generators
        rng._Seeded.generate_state = _old_generate_state
    if kind == "lazy-chunks":
        def side_seeds(seq, n_chunks):
            d, d2 = seq.spawn(2)
            return rng.lazy_copy(d).spawn(n_chunks), rng.lazy_copy(d2).spawn(n_chunks)
        sampling.side_seeds = side_seeds
    try:
        yield
    finally:
        (contract.shared_generators, sampling.side_seeds, mechanisms.as_generators, counter.as_generators,
         rng._Seeded.generate_state, contract.child_generators) = saved


def compare_seeding(a) -> None:
    """The compiled loop's audit, seeding ``before`` / ``now`` / ``lazy-chunks`` (:func:`seeding`), interleaved per
    repeat after a warm-up; CPU seconds and eps_lb (the same bytes: tests/algorithms/test_trial_seeding.py)."""
    kinds = ("before", "now", "lazy-chunks")
    for name in a.only:
        for kind in kinds:
            with seeding(kind):
                timed(name, a.privacy, 200, True)
        got: dict[str, list] = {k: [] for k in kinds}
        for r in range(a.repeat):
            for kind in (kinds if r % 2 == 0 else kinds[::-1]):
                with seeding(kind):
                    got[kind].append(timed(name, a.privacy, a.trials, True))
        for kind in kinds:
            cpu = sorted(x[0] for x in got[kind])
            print(f"{name} {a.privacy} seeding {kind:11s}: CPU {cpu[0]:.2f} s (runs {', '.join(f'{c:.2f}' for c in cpu)}),"
                  f" eps_lb {got[kind][0][2]:.4f}")
        lbs = {x[2] for v in got.values() for x in v}
        print(f"{name} {a.privacy}: CPU before / now = {min(x[0] for x in got['before']) / min(x[0] for x in got['now']):.2f}x, "
              f"before / lazy-chunks = {min(x[0] for x in got['before']) / min(x[0] for x in got['lazy-chunks']):.2f}x; "
              f"same eps_lb: {len(lbs) == 1}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=["pp-ucrl-vtr", "private-linopt-vi"])
    ap.add_argument("--privacy", default="jdp", choices=("jdp", "ldp"))
    ap.add_argument("--trials", type=int, default=None, help="trials per side (default: the audit setting's)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--compare-seeding", action="store_true",
                    help="compiled loop only: the seeding before / now / with lazy chunk seeds (issue 23 item 4)")
    a = ap.parse_args()
    if a.trials is not None and a.trials < 100:
        ap.error(f"--trials must be an integer >= 100, got {a.trials}")
    if a.repeat < 1:
        ap.error(f"--repeat must be an integer >= 1, got {a.repeat}")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if a.compare_seeding:
        compare_seeding(a)
        return
    for name in a.only:
        for compiled in (False, True):   # warm-up: numba's cache, the log's calibration
            timed(name, a.privacy, 200, compiled)
        got: dict[bool, list] = {False: [], True: []}
        for _ in range(a.repeat):
            for compiled in (False, True, True, False):
                got[compiled].append(timed(name, a.privacy, a.trials, compiled))
        lbs = {x[2] for v in got.values() for x in v}
        for compiled in (False, True):
            cpu = sorted(x[0] for x in got[compiled])
            wall = sorted(x[1] for x in got[compiled])
            print(f"{name} {a.privacy} {'compiled' if compiled else 'numpy   '}: CPU {cpu[0]:.1f} s (runs "
                  f"{', '.join(f'{c:.1f}' for c in cpu)}), wall {wall[0]:.1f} s, eps_lb {got[compiled][0][2]:.4f}")
        print(f"{name} {a.privacy}: CPU numpy / compiled = {min(x[0] for x in got[False]) / min(x[0] for x in got[True]):.2f}x; "
              f"same eps_lb both ways: {len(lbs) == 1}", flush=True)


if __name__ == "__main__":
    main()
