"""CPU of a linear-mixture learner's many-trial audit, numpy loop -> compiled loop (issue 23 item 4).

    OMP_NUM_THREADS=1 python benchmarks/bench_audited_compiled.py [--only NAME ...] [--privacy jdp|ldp]
        [--trials N] [--repeat R]

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=["pp-ucrl-vtr", "private-linopt-vi"])
    ap.add_argument("--privacy", default="jdp", choices=("jdp", "ldp"))
    ap.add_argument("--trials", type=int, default=None, help="trials per side (default: the audit setting's)")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    if a.trials is not None and a.trials < 100:
        ap.error(f"--trials must be an integer >= 100, got {a.trials}")
    if a.repeat < 1:
        ap.error(f"--repeat must be an integer >= 1, got {a.repeat}")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
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
