"""Regret of Private LSVI-UCB under `tight` at the same certified (epsilon, delta): the tree, today's least-prefix-error
BLT (option counter=blt: the printed split rho/2 + rho/2, the whole saving spent on less Gram noise) and `tight`'s
default choice (issue 21 item 1: counter, shift and budget split chosen together for regret,
docs/counters.md#choosing-for-regret). Target: the default's mean regret no worse than the tree's over 20 paired seeds,
lower where the interval allows. ``--ablate`` adds tight's choice without its updating step (the rule of
docs/counters.md#choosing-for-regret for a tree's shift that allows no update within K; ``choose_tight(updating=False)``)
on the same seeds, and the paired interval of (without - with).

    python benchmarks/bench_counter_regret.py                       # d = 10, H = 10, K = 3000, 10 seeds
    python benchmarks/bench_counter_regret.py --episodes 10000 --seeds 20 --figure benchmarks/counter_regret_linear_mdp.png
    python benchmarks/bench_counter_regret.py --env linear-two-state --epsilon 1 --beta 5 --episodes 10000 --seeds 20 --ablate

Every run uses the same seeds (same environment and agent randomness streams), ``tight`` calibration to the same claim
(the accounted eps of each log is printed), option beta as in bench_linear_mdp.py. The intervals are paired t intervals
on the per-seed difference of final cumulative regrets (tree - other). CPU seconds by time.process_time.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import platform
import time

import numpy as np
from scipy import stats

from privacct.accounting import tightest_epsilon
from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import private_lsvi_ucb as M
from privacct.algorithms.linear_mdp.common import TightChoice
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences

#: (label, option counter): the tree, today's BLT (named, printed split), tight's default choice (no option).
RUNS = (("tree", "tree"), ("blt (rho/2 split)", "blt"), ("tight default", None))
#: The ablation row (``--ablate``): tight's choice without the updating step.
ABLATED = "tight, no updating step"


@contextlib.contextmanager
def without_updating_step():
    """``choose_tight(updating=False)`` inside, the plan cache cleared on entry and exit."""
    orig = M.choose_tight
    M.choose_tight = functools.partial(orig, updating=False)
    M.plan.cache_clear()
    try:
        yield
    finally:
        M.choose_tight = orig
        M.plan.cache_clear()


def run(counter, a):
    opts = (("beta", a.beta),) + ((("counter", counter),) if counter else ())
    cfg = RunConfig("private-lsvi-ucb", "jdp", epsilon=a.epsilon, delta=a.delta, calibration="tight",
                    episodes=a.episodes, env=a.env, options=opts)
    spec = learners()["private-lsvi-ucb"]
    t0 = time.process_time()
    log = spec.build_log(cfg)
    plan = time.process_time() - t0
    t0 = time.process_time()
    res = spec.run(cfg, spawn_sequences(a.seed, a.seeds))
    return log, res, plan, time.process_time() - t0


def paired(diff: np.ndarray) -> tuple[float, float, float]:
    """Mean and 95% paired t interval of ``diff``."""
    half = stats.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / math.sqrt(diff.size) if diff.size > 1 else math.inf
    return diff.mean(), diff.mean() - half, diff.mean() + half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=3000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epsilon", type=float, default=5.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--beta", type=float, default=10.0)
    ap.add_argument("--env", default="linear-d10-h10")
    ap.add_argument("--figure", default=None)
    ap.add_argument("--ablate", action="store_true", help="add tight's choice without the updating step")
    a = ap.parse_args()
    print(f"private-lsvi-ucb {a.env} K={a.episodes} seeds={a.seeds} (seed {a.seed}) claim ({a.epsilon}, {a.delta}) "
          f"beta={a.beta}; {platform.machine()} python {platform.python_version()}")
    out, legend = {}, {}
    runs = RUNS + (((ABLATED, None),) if a.ablate else ())
    for label, counter in runs:
        with without_updating_step() if label == ABLATED else contextlib.nullcontext():
            log, res, plan, sec = run(counter, a)
        p = log.params
        final = res.regret.sum(axis=1)
        out[label] = (final, res.regret.cumsum(axis=1).mean(axis=0), sec)
        legend[label] = f"{label}: {p['counter']}, lam~ {p['lam_tilde']:.0f}, sigma_y {p['sigma_y'] or 0:.0f}"
        print(f"  {label:<17} counter {p['counter']:<5} sigma_node {p['sigma_node']:.4g}  sigma_y {p['sigma_y'] or 0:.4g}  "
              f"lam~ {p['lam_tilde']:.4g}  N_cap {p['N_cap']}  updates {np.mean(res.info['n_updates']):.2f}  "
              f"accounted eps {tightest_epsilon(log, delta=a.delta)[1]:.6g}  regret {final.mean():,.0f} +- "
              f"{final.std(ddof=1):,.0f}  plan {plan:.1f} s, run {sec:.1f} s CPU")
        if "tight_choice" in p:
            print(f"    tight_choice: {TightChoice.from_params(p['tight_choice']).line()}")
    ft = out["tree"][0]
    for label, _ in runs[1:]:
        m, lo, hi = paired(ft - out[label][0])
        print(f"  tree - {label}: {m:,.0f}, 95% interval [{lo:,.0f}, {hi:,.0f}]; CPU {label} / tree = "
              f"{out[label][2] / out['tree'][2]:.2f}")
    if a.ablate:
        m, lo, hi = paired(out[ABLATED][0] - out["tight default"][0])
        same = np.array_equal(out[ABLATED][0], out["tight default"][0])
        print(f"  {ABLATED} - tight default: {m:,.0f}, 95% interval [{lo:,.0f}, {hi:,.0f}]"
              f"{' (identical per seed)' if same else ''}")
    if a.figure:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.5, 3.4))
        for (label, _), style in zip(RUNS, ("-", ":", "--"), strict=True):
            ax.plot(out[label][1], label=legend[label], linestyle=style)
        ax.set_xlabel("episode")
        ax.set_ylabel(f"cumulative regret (mean of {a.seeds} seeds)")
        ax.set_title(f"Private LSVI-UCB, tight, ({a.epsilon:g}, {a.delta:g}), {a.env}, beta = {a.beta:g}", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(a.figure, dpi=120)
        print(f"  figure: {a.figure}")


if __name__ == "__main__":
    main()
