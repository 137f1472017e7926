"""What one learner's one-run canaries carry, and whether a planted noise bug is seen (issue 20).

    python benchmarks/one_run_canary_contrast.py ALGORITHM [--counter S] [--episodes K] [--canaries M]
                                                 [--noise-multiplier F] [--bonus-scale B] [--option KEY=VALUE ...]
                                                 [--no-power]

ONE audited run of ALGORITHM (its JDP paper setting through benchmarks/bench_counter_one_run.config: claim eps = 1,
the setting's delta, ``--episodes`` / ``--bonus-scale`` replacing the setting's; ``--option batches=K`` gives the batched
learners one user per batch), seed 0, confidence 0.95, with the planted noise x F (the log at the declared scale).
Prints: releases per canary and their mechanism and group; the records' noise read at the declared scale x F about
the mean of each canary's own bit (standard: sd 1 Gaussian, sqrt(2) Laplace; anything else is a wrong record); each
canary's realised effective mu at the actual noise; how many signs of the score match the bits; the verdict, eps_lb,
and the note of the median canary's effective mu at the declared noise (privacct.audits.one_run_learner.contrast_note).
``--no-power`` skips the power criterion (a Laplace canary of many coordinates costs minutes there: see
benchmarks/learner_audits.md#one-run-audits-of-every-counter-strategy). Figures recorded there.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import sys
import time

import numpy as np


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("algorithm")
    p.add_argument("--counter", default="tree")
    p.add_argument("--episodes", type=int, default=129)
    p.add_argument("--canaries", type=int, default=32)
    p.add_argument("--noise-multiplier", type=float, default=0.01)
    p.add_argument("--bonus-scale", type=float, default=None)
    p.add_argument("--option", action="append", default=[])
    p.add_argument("--no-power", action="store_true")
    a = p.parse_args(argv)
    sys.path.insert(0, os.path.dirname(__file__))
    from bench_counter_one_run import config

    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.algorithms.registry import get_learner
    from privacct.audits.one_run import draw_bits, one_run_audit_scores
    from privacct.audits.one_run_learner import canary_scores, contrast_note, median_structure, plan_users

    opts = []
    for o in a.option:
        k, _, v = o.partition("=")
        opts.append((k, a.episodes if v == "K" else (int(v) if v.isdigit() else v)))
    cfg = config(a.algorithm, a.counter, episodes=a.episodes, options=tuple(opts))
    if a.bonus_scale is not None:
        cfg = dataclasses.replace(cfg, bonus_scale=a.bonus_scale)
    nm = a.noise_multiplier
    users = plan_users(a.episodes, a.canaries)
    signs = draw_bits(0, len(users))
    bits = tuple("A" if v > 0 else "B" for v in signs)
    hook = AuditHook("A", fixed_users=False, coins_seed=0, noise_multiplier=nm, plan=CanaryPlan(users, bits))
    t0 = time.perf_counter()
    res = get_learner(a.algorithm).run(cfg, [np.random.SeedSequence([0, 1])], audit=hook)
    run_s = time.perf_counter() - t0
    recs = res.tap.canary_records
    score, count = canary_scores(recs, users)
    bit = dict(zip(users, bits, strict=True))
    eff2, z, groups = collections.defaultdict(float), [], collections.Counter()
    for r in recs:
        d, s = r.mean_a[0] - r.mean_b[0], r.scale * nm
        groups[(r.mechanism, r.group.split("[")[0].rstrip("_h0123456789"))] += 1
        z.append(((r.values[0] - (r.mean_a[0] if bit[r.user] == "A" else r.mean_b[0])) / s).ravel())
        eff2[r.user] += float(d @ d) / s ** 2
    z = np.concatenate(z) if z else np.zeros(1)
    eff = np.sqrt([eff2[u] for u in users])
    st = median_structure(recs, users)
    t1 = time.perf_counter()
    b = one_run_audit_scores(score, signs, epsilon=cfg.epsilon, delta=cfg.delta, confidence=0.95,
                             per_canary_structure=None if a.no_power else st, seed=0)
    print(f"{a.algorithm} {a.counter} K={a.episodes} canaries={len(users)} noise x {nm:g} bonus {cfg.bonus_scale:g} "
          f"options {dict(cfg.options)}: run {run_s:.1f} s, bound {time.perf_counter() - t1:.1f} s")
    print(f"  releases per canary {count.mean():.1f} [{count.min()}, {count.max()}]: {dict(groups)}")
    print(f"  records' noise about her own bit's mean / (declared scale x {nm:g}): mean {z.mean():.3f}, sd {z.std():.3f}")
    print(f"  realised effective mu per canary at the actual noise: median {np.median(eff):.3g} "
          f"[{eff.min():.3g}, {eff.max():.3g}]")
    print(f"  score signs matching the bits {np.mean(np.sign(score) == signs):.3f}; verdict {b.verdict}, "
          f"eps_lb {b.epsilon_lower_bound:.3f} ({b.correct}/{b.guesses})")
    print(f"  {contrast_note(st)}")
    if not a.no_power and b.verdict != "fails":
        print(f"  power: {b.power.description}")


if __name__ == "__main__":
    main()
