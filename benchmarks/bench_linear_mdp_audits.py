"""CPU of the linear-MDP learners' many-trial audits, before -> after issue 23 item 4.

    OMP_NUM_THREADS=1 python benchmarks/bench_linear_mdp_audits.py [--only NAME ...] [--trials N] [--repeat R]

Each learner's tight audit (:func:`privacct.audits.suite.audit_setting`, claim eps = 1, its audit configuration)
runs inline (one process) with its switch off and on, interleaved A B B A per repeat after one small warm-up run of
each: private-lsvi-ucb ``audited_y.AUDITS_BULK_Y`` (off: every updating seed's y release through
privacct.tap.user_contribution + privacct.mechanisms.gaussian; on: algorithms/linear_mdp/audited_y.py, the same draws,
records and ledgers made for all seeds at once), the batched learners ``batched_jdp.AUDITS_COMPILED`` (off: numpy's
data-free policy, LSVI passes, inverses and regret; on: the compiled ones, :func:`batched_jdp._passes_compiled`). The
CPU seconds (process time) of each run and the certified bound eps_lb, which must be the same both ways (the same
bytes: tests/algorithms/linear_mdp/test_audited_compiled.py). Figures in the table of benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

from privacct.algorithms.linear_mdp import audited_y as Y
from privacct.algorithms.linear_mdp import batched_jdp as BJ
from privacct.audits.suite import audit_setting

#: learner -> (module, switch)
SWITCHES = {"private-lsvi-ucb": (Y, "AUDITS_BULK_Y"), "batched-jdp-lsvi-ucb": (BJ, "AUDITS_COMPILED"),
            "batched-jdp-lsvi-ucb-laplace": (BJ, "AUDITS_COMPILED")}


def timed(name: str, trials: int | None, on: bool) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, eps_lb) of one audit run inline."""
    module, attr = SWITCHES[name]
    setattr(module, attr, on)
    c0, w0 = time.process_time(), time.perf_counter()
    r = audit_setting(name, "jdp", calibration="tight", epsilon=1.0).run(trials=trials, seed=0, executor="inline")
    return time.process_time() - c0, time.perf_counter() - w0, r.epsilon_lower_bound


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=None, help="trials per side (default: the audit setting's)")
    p.add_argument("--repeat", type=int, default=1, help="A B B A rounds")
    p.add_argument("--only", nargs="+", default=list(SWITCHES), choices=list(SWITCHES), metavar="NAME")
    a = p.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}", flush=True)
    for name in a.only:
        for on in (False, True):
            timed(name, 200, on)
        got: dict[bool, list] = {False: [], True: []}
        for _ in range(a.repeat):
            for on in (False, True, True, False):
                got[on].append(timed(name, a.trials, on))
                print(f"{name} {'after ' if on else 'before'}: CPU {got[on][-1][0]:.2f} s, wall {got[on][-1][1]:.2f} s,"
                      f" eps_lb {got[on][-1][2]:.4f}", flush=True)
        lbs = {x[2] for v in got.values() for x in v}
        before, after = min(x[0] for x in got[False]), min(x[0] for x in got[True])
        print(f"{name} jdp: CPU {before:.2f} -> {after:.2f} s ({before / after:.2f}x less), same eps_lb: {len(lbs) == 1}",
              flush=True)


if __name__ == "__main__":
    main()
