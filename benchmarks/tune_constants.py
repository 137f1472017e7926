"""Reproduce the choice of every learner's ``tuned`` constant set (docs/learners.md#constant-sets).

The procedure, once per family: a grid over the non-privacy multiplier(s) on each learner's NON-PRIVATE
instance, on its default environment, at a fixed K and fixed tuning seeds (never the seeds of a figure);
the value with the smallest mean final cumulative regret wins (ties: the smaller value). Privacy noise is
never tuned: a private learner's tuned set holds only non-privacy constants, and its non-private
instance is

* the learner with ``privacy="none"`` where the paper has one (seed 002 UCB-VI / UCB-PO, seed 000
  LinOpt-VI / -PO, seed 003 Alg. 1 and Alg. 3 with B = g = 0);
* for seed 001's LDP-UCRL-VTR (no non-private instance of its own radius): its noise-free limit, the
  same formulas at a claimed eps of 1e8 (printed noise x 1e-8), with the Sec. 6 experimental radius;
* for the pure-DP variant of seed 003 Alg. 1: the non-private instance of Alg. 1 (the same formulas
  with Upsilon = 0);
* for the linear-MDP learners: LSVI-UCB with the absolute bonus ``beta`` (their non-private instance).

Usage: ``python benchmarks/tune_constants.py [--family tabular|linear-mixture|linear-mdp] [--check]``.
``--check`` exits 1 when a registered tuned value differs from the grid's choice. Measured on the project
machine (2 cores): benchmarks/constants.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from privacct.algorithms.contract import RunConfig  # noqa: E402
from privacct.algorithms.registry import learners  # noqa: E402
from privacct.rng import spawn_sequences  # noqa: E402

ROOT_SEED = 7
SEEDS = 3
K = 2000
BONUS_GRID = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
ETA_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
BETA_GRID = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)

#: learner -> (the learner whose non-private run is scored, privacy, extra RunConfig fields)
LINEAR_MIXTURE = {
    "ucrl-vtr": ("ucrl-vtr", "none", {}),
    "ldp-ucrl-vtr": ("ldp-ucrl-vtr", "ldp", {"epsilon": 1e8, "delta": 0.1,
                                              "options": (("radius", "paper-experiment"),)}),
    "private-linopt-vi": ("private-linopt-vi", "none", {}),
    "private-linopt-po": ("private-linopt-po", "none", {}),
    "pp-ucrl-vtr": ("pp-ucrl-vtr", "none", {}),
    "pp-ucrl-vtr-laplace": ("pp-ucrl-vtr", "none", {}),
    "pp-ucrl-vtr-plus": ("pp-ucrl-vtr-plus", "none", {}),
}
TABULAR_FIXED = {"e_scale": 0.05, "confidence_delta": 0.1}


def final_regret(cfg: RunConfig) -> float:
    spec = learners()[cfg.algorithm]
    return float(spec.run(cfg, spawn_sequences(ROOT_SEED, SEEDS)).regret.sum(axis=1).mean())


def argmin(scores: dict) -> object:
    return min(scores, key=lambda c: (scores[c], c))


def tune_tabular(say) -> dict[str, dict]:
    out = {}
    for name in ("ucb-vi", "ucb-po"):
        scores = {}
        for b in BONUS_GRID:
            for eta in (ETA_GRID if name == "ucb-po" else (None,)):
                opts = dict(TABULAR_FIXED, **({} if eta is None else {"eta": eta}))
                cfg = RunConfig(name, "none", episodes=K, env="riverswim", horizon=20, bonus_scale=b,
                                options=tuple(sorted(opts.items())))
                scores[(b, eta)] = final_regret(cfg)
        b, eta = argmin(scores)
        out[name] = {"bonus_scale": b, **({} if eta is None else {"eta": eta})}
        say(f"tabular {name}: best {out[name]} regret {scores[(b, eta)]:.1f}; grid {_fmt(scores)}")
    return out


def tune_linear_mixture(say) -> dict[str, dict]:
    out, cache = {}, {}
    for name, (alg, privacy, extra) in LINEAR_MIXTURE.items():
        key = (alg, privacy, tuple(sorted((k, str(v)) for k, v in extra.items())))
        etas = ETA_GRID if alg == "private-linopt-po" else (None,)
        if key not in cache:
            scores = {}
            for b in BONUS_GRID:
                for eta in etas:
                    kw = dict(extra)
                    if eta is not None:
                        kw["options"] = tuple(kw.get("options", ())) + (("eta", eta),)
                    scores[(b, eta)] = final_regret(RunConfig(alg, privacy, episodes=K, env="riverswim", bonus_scale=b,
                                                              **kw))
            cache[key] = scores
        scores = cache[key]
        b, eta = argmin(scores)
        out[name] = {"bonus_scale": b, **({} if eta is None else {"eta": eta})}
        say(f"linear-mixture {name} (scored on {alg} {privacy}): best {out[name]} regret "
            f"{scores[(b, eta)]:.1f}; grid {_fmt(scores)}")
    return out


def tune_linear_mdp(say) -> dict[str, dict]:
    scores = {b: final_regret(RunConfig("lsvi-ucb", "none", episodes=K, options=(("beta", b),))) for b in BETA_GRID}
    best = argmin(scores)
    say(f"linear-mdp lsvi-ucb: best beta {best} regret {scores[best]:.1f}; grid {_fmt(scores)}")
    return {n: {"beta": best} for n in learners() if learners()[n].family == "linear-mdp"}


def _fmt(scores: dict) -> str:
    return ", ".join(f"{k}: {v:.1f}" for k, v in scores.items())


def registered(name: str) -> dict:
    c = learners()[name].constant_set("tuned")
    d = {"bonus_scale": c.bonus_scale} if c.bonus_scale != 1.0 or not c.options else {}
    d.update({k: v for k, v in c.options if k in ("eta", "beta")})
    return d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", choices=("tabular", "linear-mixture", "linear-mdp"), action="append")
    ap.add_argument("--check", action="store_true", help="exit 1 if a registered tuned value differs")
    args = ap.parse_args(argv)
    fams = args.family or ["tabular", "linear-mixture", "linear-mdp"]
    t0 = time.perf_counter()
    chosen: dict[str, dict] = {}
    say = lambda m: print(m, flush=True)  # noqa: E731
    for f in fams:
        chosen.update({"tabular": tune_tabular, "linear-mixture": tune_linear_mixture,
                       "linear-mdp": tune_linear_mdp}[f](say))
    bad = []
    for name, values in chosen.items():
        reg = registered(name)
        mism = {k: (v, reg.get(k)) for k, v in values.items() if reg.get(k) != v}
        if mism:
            bad.append(f"{name}: grid {values}, registered {reg}")
    print(f"\n{time.perf_counter() - t0:.0f} s; K = {K}, {SEEDS} seeds (root {ROOT_SEED})")
    for line in bad:
        print("DIFFERS", line)
    return 1 if (args.check and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
