"""Regret under `tight` against the tree at the same claim, for every JDP learner that releases through a tree counter
(issue 21: "regret with `tight` at most the tree's at the same claim, paired seeds, interval stated, at the report's
settings").

    python benchmarks/bench_tight_regret.py                          # every such learner, 30 paired seeds
    python benchmarks/bench_tight_regret.py --only ucb-vi ucb-po --seeds 30 --json

For each learner and each of its paper settings with privacy jdp: the setting's RunConfig (claim, environment,
horizon, constants) at the report's default K (``LearnerSpec.report_scale().default``), calibration ``tight``, run
twice on the SAME seeds (same environment and agent streams): once with option ``counter=tree`` and once with tight's
own choice (no option; ``log.params["tight_choice"]`` says what it chose and why,
docs/counters.md#choosing-for-regret). The certified eps of both logs is printed (both must be the claim). The interval
is the paired 95% t interval of the per-seed difference of final cumulative regrets, tree - tight (positive: tight
better). Linear-MDP Private LSVI-UCB at the benchmark's setting has its own script (bench_counter_regret.py).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from dataclasses import replace

import numpy as np
from scipy import stats

from privacct.accounting import tightest_epsilon
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences

#: Learners whose JDP releases go through a tree counter by default and take option ``counter`` (issue 21 item 2).
TREE_LEARNERS = ("ucb-vi", "ucb-po", "private-linopt-vi", "private-linopt-po", "pp-ucrl-vtr", "pp-ucrl-vtr-plus",
                 "batched-jdp-lsvi-ucb")


def paired(diff: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95% paired t interval of ``diff`` (one value per seed)."""
    if diff.size < 2:
        return float(diff.mean()), -math.inf, math.inf
    half = stats.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / math.sqrt(diff.size)
    return float(diff.mean()), float(diff.mean() - half), float(diff.mean() + half)


def compare(name: str, setting, episodes: int, seeds: int, seed: int) -> dict:
    spec = learners()[name]
    base = replace(setting.config, calibration="tight", episodes=episodes)
    out: dict = {"learner": name, "epsilon": base.epsilon, "delta": base.delta, "episodes": episodes, "seeds": seeds,
                 "env": base.env, "horizon": base.horizon}
    finals = {}
    for label, cfg in (("tree", replace(base, options=tuple(base.options) + (("counter", "tree"),))), ("tight", base)):
        t0 = time.process_time()
        log = spec.build_log(cfg)
        res = spec.run(cfg, spawn_sequences(seed, seeds))
        finals[label] = np.asarray(res.regret).sum(axis=1)   # final cumulative regret per seed
        out[f"{label}_cpu_s"] = round(time.process_time() - t0, 2)
        out[f"{label}_certified_eps"] = round(tightest_epsilon(log, delta=cfg.delta)[1], 4)
        out[f"{label}_mean_regret"] = round(float(finals[label].mean()), 2)
        if label == "tight":
            choice = log.params.get("tight_choice")
            out["tight_choice"] = choice   # TightChoice.to_params(): a dict (privacct/counters/choice.py)
    mean, lo, hi = paired(finals["tree"] - finals["tight"])
    # "no worse" fails only when the whole interval lies below 0 (the tree certainly better)
    out.update(tree_minus_tight=round(mean, 2), interval=[round(lo, 2), round(hi, 2)], tight_no_worse=bool(hi >= 0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME", help=f"learners (default: {', '.join(TREE_LEARNERS)})")
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episodes", type=int, default=None, help="K (default: the report's default K of each learner)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    for name in a.only or TREE_LEARNERS:
        spec = learners()[name]
        K = a.episodes or spec.report_scale().default
        for s in spec.paper_settings:
            if s.config.privacy != "jdp":
                continue
            rows.append(compare(name, s, K, a.seeds, a.seed))
            r = rows[-1]
            if not a.json:
                print(f"{name:<22} eps {r['epsilon']:<4g} K {K:<6} tree {r['tree_mean_regret']:>10.1f}  tight "
                      f"{r['tight_mean_regret']:>10.1f}  tree - tight {r['tree_minus_tight']:>9.1f} "
                      f"[{r['interval'][0]:.1f}, {r['interval'][1]:.1f}]  certified {r['tree_certified_eps']:g} / "
                      f"{r['tight_certified_eps']:g}  cpu {r['tree_cpu_s']:.1f} / {r['tight_cpu_s']:.1f} s", flush=True)
    if a.json:
        print(json.dumps({"machine": platform.processor() or platform.machine(), "rows": rows}, indent=1, default=str))


if __name__ == "__main__":
    main()
