"""At which K does the report's non-private baseline learn? (issue 24 item 3: "a regret column that informs")

For every distinct non-private baseline of ``privacct report`` (the learner, environment and constants each
row's regret column runs, :func:`privacct.audits.report.regret.baseline_config`), run it at each K of a grid
up to the paper setting's K (what ``--full`` runs) over ``--seeds`` seeds (root seed ``--seed``: the report's
seeds) and judge it against the uniform policy's exact regret with the report's own rule
(:func:`privacct.audits.report.regret.learning`: it learns when the 95% t-interval of its mean final
regret lies below 90% of the uniform policy's).

    python benchmarks/bench_report_regret_k.py                      # every baseline, 10 seeds (a few minutes)
    python benchmarks/bench_report_regret_k.py --only lsvi-ucb --ks 100,300,1000

Prints a Markdown table (benchmarks/report_regret.md), the smallest K of the grid from which the baseline
learns at every larger K of the grid, and the entries of ``FULL_SCALE_BASELINES`` (audits/report/regret.py)
at the settings' K, to compare with (or paste over) the recorded ones.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from privacct.audits.report.regret import FULL_SCALE_BASELINES, Regret, baseline_config, learning
from privacct.audits.report.rows import ReportScale, paper_configs
from privacct.rng import spawn_sequences

GRID = (100, 300, 1000, 2000, 3000, 10_000, 20_000)


def baselines(only: list[str] | None):
    """(family, env, baseline spec, RunConfig at the setting's K, report default K, uniform per episode at K) per
    distinct baseline configuration of the report, in report order."""
    seen, out = set(), []
    scale = ReportScale.default()
    for spec, setting in paper_configs():
        cfg = setting.run_config(spec.name)
        bspec, bcfg = baseline_config(spec, cfg, setting, cfg.episodes)
        key = (bcfg.algorithm, bcfg.env, bcfg.horizon, bcfg.bonus_scale, bcfg.options, bcfg.episodes)
        if key in seen or (only and bcfg.algorithm not in only):
            continue
        seen.add(key)
        out.append((spec.family, bcfg.env, bspec, spec, bcfg, scale.regret_episodes(spec, cfg.episodes)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="+", metavar="BASELINE", help="only these baselines (e.g. ucrl-vtr lsvi-ucb)")
    ap.add_argument("--ks", default=None, help="comma-separated K grid (default: %s, up to each setting's K)" %
                    ",".join(map(str, GRID)))
    a = ap.parse_args()
    grid = tuple(int(k) for k in a.ks.split(",")) if a.ks else GRID
    print(f"# {platform.machine()} {os.cpu_count()} CPUs, python {platform.python_version()}, numpy {np.__version__}; "
          f"{a.seeds} seeds (root {a.seed})\n")
    print("| family | env | baseline | K | mean regret | uniform | ratio | 95% interval (x uniform) | verdict | CPU s | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    full, smallest = [], []
    t_all, c_all = time.perf_counter(), time.process_time()
    for family, env, bspec, spec, bcfg, k_default in baselines(a.only):
        ks = sorted({k for k in grid if k <= bcfg.episodes} | ({k_default, bcfg.episodes} if not a.ks else set()))
        verdicts = []
        for K in ks:
            from dataclasses import replace

            cfg = replace(bcfg, episodes=K)
            w, c = time.perf_counter(), time.process_time()
            res = bspec.run(cfg, spawn_sequences(a.seed, a.seeds))
            cpu, wall = time.process_time() - c, time.perf_counter() - w
            r = Regret.of(np.cumsum(np.asarray(res.regret, dtype=float), axis=1))
            u = float(spec.uniform_regret(replace(cfg, algorithm=spec.name))) * K
            v = learning(r, u)
            iv = r.interval.over(u)
            mark = " (report default)" if K == k_default else " (--full)" if K == bcfg.episodes else ""
            print(f"| {family} | {env} | {bcfg.algorithm} | {K}{mark} | {r.mean:.4g} | {u:.4g} | {r.mean / u:.3g} | "
                  f"{iv.low:.3g} - {iv.high:.3g} | {v.verdict} | {cpu:.1f} | {wall:.1f} |", flush=True)
            verdicts.append((K, v.learns))
            if K == bcfg.episodes:
                full.append(f"    Measured({bcfg.algorithm!r}, {env!r}, {K:_}, {r.mean:.4g}, {u:.6g}, {iv.low:.3g}, "
                            f"{iv.high:.3g}, {a.seeds}),")
        stable = next((k for i, (k, _) in enumerate(verdicts) if all(ok for _, ok in verdicts[i:])), None)
        smallest.append(f"{family} / {env} / {bcfg.algorithm}: " +
                        (f"learns from K = {stable} on (at every larger K of the grid too)" if stable is not None else
                         f"not at the largest K of the grid ({ks[-1]}): no K from which it learns at every larger K"))
    print(f"\ntotal: {time.perf_counter() - t_all:.0f} s wall, {time.process_time() - c_all:.0f} s CPU\n")
    print("\n".join(smallest))
    print("\nFULL_SCALE_BASELINES (measured now, at the settings' K):")
    print("\n".join(full))
    print("\nrecorded in audits/report/regret.py:")
    for m in FULL_SCALE_BASELINES:
        print(f"    {m}")


if __name__ == "__main__":
    main()
