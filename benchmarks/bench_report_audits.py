"""CPU of the tabular learner audits of ``privacct report`` (default scale) and what the seeding costs (issue 23).

The default report audits ucb-vi and ucb-po, JDP and LDP, at eps 0.5 and 1 (printed constants) at their audit
configuration (RiverSwim, K = 4, H = 1), 100,000 / 42,212 / 17,796 / 5,728 trials per side: about 660,000 audited
runs of four episodes, batched 250 at a time. This script runs those audits inline at ``--fraction`` of the trials and
prints the CPU seconds of each, once as the code is ("now") and once with an ablation ("before"), interleaved; both
give the same certified bounds (checked). ``--ablate numpy-loop`` (default; issue 23 item 4): every audited run on the
numpy loop, as before the many-trial audits ran through the compiled loop (algorithms/tabular/audited.py);
``--ablate seeding``: the seeding the learner had before issue 23's seeding item (one ``default_rng(SeedSequence)``
per trial and stream, the fixed coins' stream made once per trial); ``--ablate shared-seeding``: the seeding before
privacct.rng.shared_generators (bench_audited_compiled.seeding("before")). ``--lazy-chunks``: "now" with the audits'
chunk seeds as privacct.rng.LazySeedSequence (bench_audited_compiled.seeding("lazy-chunks"), the proposed
audits/sampling.side_seeds: the trials' SeedSequences made unhashed).

    python benchmarks/bench_report_audits.py [--fraction 0.2] [--repeat 2] [--ablate numpy-loop|seeding|shared-seeding]
        [--lazy-chunks] [--per-run]

``--per-run`` first times one audited run of 250 trials of each learner and model, compiled vs numpy loop.
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

    saved = base.child_generators, L._stream_rngs, base.shared_generators
    base.child_generators = lambda seeds, j: [np.random.default_rng(base.child_sequence(s, j)) for s in seeds]
    L._stream_rngs = lambda seeds, j, audit, *, fixed: base.stream_generators(seeds, j, audit, fixed=fixed)
    base.shared_generators = lambda s, n: [np.random.default_rng(s) for _ in range(n)]
    try:
        yield
    finally:
        base.child_generators, L._stream_rngs, base.shared_generators = saved


@contextlib.contextmanager
def numpy_loop():
    """Every audited run on the numpy loop (algorithms/tabular/audited.py's AUDITS_COMPILED off)."""
    from privacct.algorithms.tabular import audited

    saved = audited.AUDITS_COMPILED
    audited.AUDITS_COMPILED = False
    try:
        yield
    finally:
        audited.AUDITS_COMPILED = saved


def one(alg: str, privacy: str, eps: float, trials: int) -> tuple[float, float]:
    from privacct.audits.suite import audit_setting

    a = audit_setting(alg, privacy, calibration="paper", epsilon=eps)
    t = time.process_time()
    r = a.run(trials=trials, seed=0, executor="inline")
    return time.process_time() - t, float(r.epsilon_lower_bound)


def per_run(batch: int = 250, rounds: int = 12) -> None:
    """CPU of ONE audited run of ``batch`` trials (the audits' batch) of each learner and model at the audit
    configuration, the compiled loop against the numpy loop (``numpy_loop``), interleaved; medians after two rounds."""
    import numpy as np

    from privacct.algorithms.contract import AuditHook, RunConfig
    from privacct.algorithms.registry import get_learner
    from privacct.rng import spawn_sequences

    seeds = spawn_sequences(0, batch)
    for alg in ("ucb-vi", "ucb-po"):
        for privacy in ("jdp", "ldp"):
            cfg = RunConfig(alg, privacy, epsilon=0.5, delta=0.0, episodes=4, horizon=1)
            spec, cpu = get_learner(alg), {"compiled": [], "numpy": []}
            for _ in range(rounds):
                for name in cpu:
                    with numpy_loop() if name == "numpy" else contextlib.nullcontext():
                        t = time.process_time()
                        spec.run(cfg, seeds, audit=AuditHook("A"))
                        cpu[name].append(time.process_time() - t)
            c, n = (float(np.median(cpu[k][2:])) * 1e3 for k in ("compiled", "numpy"))
            print(f"{alg} {privacy}: one audited run of {batch} trials, compiled {c:.2f} ms, numpy loop {n:.2f} ms "
                  f"({n / c:.2f}x)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fraction", type=float, default=0.2, help="fraction of the report's trials, in (0, 1]")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--ablate", choices=("numpy-loop", "seeding", "shared-seeding"), default="numpy-loop",
                    help="what 'before' runs: every audit on the numpy loop, the old seeding, or the seeding before "
                         "shared_generators")
    ap.add_argument("--lazy-chunks", action="store_true",
                    help="'now' with lazy chunk seeds (the proposed audits/sampling.side_seeds)")
    ap.add_argument("--per-run", action="store_true", help="also time one audited run per learner and model")
    args = ap.parse_args()
    if args.per_run:
        per_run()
    from bench_audited_compiled import seeding   # this directory's script (sys.path[0])

    ablation = {"numpy-loop": numpy_loop, "seeding": old_seeding,
                "shared-seeding": lambda: seeding("before")}[args.ablate]
    current = (lambda: seeding("lazy-chunks")) if args.lazy_chunks else contextlib.nullcontext
    for alg in ("ucb-vi", "ucb-po"):   # imports, numba loads, caches
        with current():
            one(alg, "jdp", 1.0, 500)
        with ablation():
            one(alg, "jdp", 1.0, 500)
    totals = {"now": [], "before": []}
    for _ in range(args.repeat):
        for name in ("now", "before"):
            cm = ablation() if name == "before" else current()
            cpu, lbs = 0.0, []
            with cm:
                for alg, priv, eps, n in AUDITS:
                    c, lb = one(alg, priv, eps, max(100, int(n * args.fraction)))
                    cpu += c
                    lbs.append(lb)
            totals[name].append((cpu, lbs))
            print(f"{name:7s} CPU {cpu:7.2f} s  eps_lb {' '.join(f'{x:.4f}' for x in lbs)}", flush=True)
    same = all(a[1] == b[1] for a, b in zip(totals["now"], totals["before"], strict=True))
    print(f"same bounds: {same}; before = {args.ablate}; now{' with lazy chunk seeds' if args.lazy_chunks else ''}; "
          f"trials {args.fraction:g} x the report's; per-side trials total "
          f"{sum(max(100, int(n * args.fraction)) for *_, n in AUDITS)}")


if __name__ == "__main__":
    main()
