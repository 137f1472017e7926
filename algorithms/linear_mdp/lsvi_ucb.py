"""LSVI-UCB (Jin, Yang, Wang, Jordan 2020, "Provably efficient RL with linear function
approximation", Alg. 1): the non-private baseline.

Every episode k, for h = H..1: Lambda_h = lambda I + sum_{i<k} phi phi^T (Eq. (1) of seed 004 /
Alg. 1 line 5 of Jin et al.), y_h and w_h by least squares, Q_h = clip(<phi, w_h> + beta
||phi||_{Lambda_h^{-1}}, 0, H), then act greedily. lambda = 1 (Jin et al. Thm 3.1). The bonus is
beta = bonus_scale * d H sqrt(iota), iota = log(2 d T / p), T = K H (Jin et al. Thm 3.1 with its
unspecified absolute constant c set to 1; ``bonus_scale`` is that constant) unless the option
``beta`` gives beta directly. Q is clipped to [0, H] (Jin et al. clip only from above; Q* >= 0, so
nothing changes for optimism; it matches the private learners).

Options: ``p`` (failure probability in (0, 1), default 0.05), ``beta`` (absolute bonus, > 0),
``lambda`` (ridge > 0, default 1). Non-private: nothing to audit (the contract refuses an audit hook).
"""

from __future__ import annotations

import math

import numpy as np

from privacct.errors import check_positive

from ..contract import RunConfig, RunResult
from . import common as C

NAME = "lsvi-ucb"
OPTIONS = C.COMMON_OPTIONS + ("lambda",)


def bonus(config: RunConfig, d: int, H: int, K: int, opts: dict) -> float:
    if opts.get("beta") is not None:
        return float(opts["beta"])
    p = float(opts.get("p", 0.05))
    iota = math.log(2 * d * K * H / p)
    return config.bonus_scale * d * H * math.sqrt(iota)


def build_log(config: RunConfig):
    """Non-private: no mechanism log."""
    C.check_config(config, privacy_models=("none",), default_env="linear-two-state")
    C.check_options(config, OPTIONS)
    return None


def run(config: RunConfig, seeds, *, audit=None, progress=None) -> RunResult:
    env, K = C.check_config(config, privacy_models=("none",), default_env="linear-two-state")
    opts = C.check_options(config, OPTIONS)
    seeds = C.check_seeds(seeds)
    lam = check_positive("options.lambda", opts.get("lambda", 1.0))
    B = len(seeds)
    H, d = env.horizon, env.dim
    beta = bonus(config, d, H, K, opts)
    env_rngs = C.child_generators(seeds, 0)
    hist = C.History(env, B)
    regret = np.zeros((B, K))
    pol = C.data_free_policy(env, B, lam, beta)
    eye = np.eye(d)
    for k in range(1, K + 1):
        if k > 1:
            Ainv = np.linalg.inv(hist.gram + lam * eye)
            pol, _ = C.lsvi(env, Ainv, hist.N, hist.Rphi, beta)
        regret[:, k - 1] = env.regret(pol)
        states, actions = C.play_episode(env, pol, env_rngs)
        hist.add(states, actions)
        if progress is not None:
            progress(k)
    info = {"beta": beta, "lambda": lam, "env": env.name, "n_updates": np.full(B, max(K - 1, 0))}
    return RunResult(config=config, regret=regret, log=None, ledger=None, info=info)
