"""CPU of the tabular learner audits of ``privacct report`` (default scale) and what the seeding costs (issue 23).

The default report audits ucb-vi and ucb-po, JDP and LDP, at eps 0.5 and 1 (printed constants) at their audit
configuration (RiverSwim, K = 4, H = 1), 100,000 / 42,212 / 17,796 / 5,728 trials per side: about 660,000 audited
runs of four episodes, batched 250 at a time. This script runs those audits inline at ``--fraction`` of the trials and
prints the CPU seconds of each, once with the learner's seeding as it is and once with the seeding the learner had
before issue 23's item (``--ablate``: one ``default_rng(SeedSequence)`` per trial and stream, the fixed coins' stream
made once per trial), interleaved; both give the same certified bounds (checked).

    python benchmarks/bench_report_audits.py [--fraction 0.2] [--repeat 2]
"""

from __future__ import annotations

import argparse
import contextlib
import time

AUDITS = (("ucb-vi", "jdp", 0.5, 100_000), ("ucb-vi", "jdp", 1.0, 42_212), ("ucb-vi", "ldp", 0.5, 17_796),
          ("ucb-vi", "ldp", 1.0, 5_728), ("ucb-po", "jdp", 0.5, 100_000), ("ucb-po", "jdp", 1.0, 42_212),
          ("ucb-po", "ldp", 0.5, 17_796), ("ucb-po", "ldp", 1.0, 5_728))


@contextlib.contextmanager
def old_seeding():
    """The seeding before issue 23's item: one numpy SeedSequence and Generator per trial and stream."""
    from privacct.algorithms import contract as base
    from privacct.algorithms.tabular import learner as L

    import numpy as np

    saved = base.child_generators, L._stream_rngs
    base.child_generators = lambda seeds, j: [np.random.default_rng(base.child_sequence(s, j)) for s in seeds]
    L._stream_rngs = lambda seeds, j, audit, *, fixed: base.stream_generators(seeds, j, audit, fixed=fixed)
    try:
        yield
    finally:
        base.child_generators, L._stream_rngs = saved


def one(alg: str, privacy: str, eps: float, trials: int) -> tuple[float, float]:
    from privacct.audits.suite import audit_setting

    a = audit_setting(alg, privacy, calibration="paper", epsilon=eps)
    t = time.process_time()
    r = a.run(trials=trials, seed=0, executor="inline")
    return time.process_time() - t, float(r.epsilon_lower_bound)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fraction", type=float, default=0.2, help="fraction of the report's trials, in (0, 1]")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    one("ucb-vi", "jdp", 1.0, 500)   # imports, numba loads, caches
    with old_seeding():
        one("ucb-vi", "jdp", 1.0, 500)
    totals = {"now": [], "before": []}
    for _ in range(args.repeat):
        for name in ("now", "before"):
            cm = old_seeding() if name == "before" else contextlib.nullcontext()
            cpu, lbs = 0.0, []
            with cm:
                for alg, priv, eps, n in AUDITS:
                    c, lb = one(alg, priv, eps, max(100, int(n * args.fraction)))
                    cpu += c
                    lbs.append(lb)
            totals[name].append((cpu, lbs))
            print(f"{name:7s} CPU {cpu:7.2f} s  eps_lb {' '.join(f'{x:.4f}' for x in lbs)}", flush=True)
    same = all(a[1] == b[1] for a, b in zip(totals["now"], totals["before"], strict=True))
    print(f"same bounds: {same}; trials {args.fraction:g} x the report's; per-side trials total "
          f"{sum(max(100, int(n * args.fraction)) for *_, n in AUDITS)}")


if __name__ == "__main__":
    main()
