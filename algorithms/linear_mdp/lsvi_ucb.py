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
from .chunks import chunk as C_chunk

NAME = "lsvi-ucb"
OPTIONS = C.COMMON_OPTIONS + ("lambda",)
#: The roll-out and the history of every episode compiled (:func:`.batched_jit.play_chunk`, same bytes); False: the
#: numpy loop, the reference (its tests compare both)
COMPILED = True
#: episodes of uniforms per seed's ``Generator.random`` call
_CHUNK = 256


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
    fast = _compiles(env)   # the roll-out and the history compiled (.batched_jit), one episode a call
    u_buf = np.empty((B, C_chunk(_CHUNK, B, H, K), H)) if fast else None
    whole = fast and _whole_episode(env, B)
    if whole:   # the whole episode compiled (.lsvi_jit), one call per chunk of episodes
        _run_compiled(env, pol, env_rngs, u_buf, K, hist, lam, beta, regret, progress)
    for k in () if whole else range(1, K + 1):
        if k > 1:
            Ainv = np.linalg.inv(hist.gram + lam * eye)
            pol, _ = C.lsvi(env, Ainv, hist.N, hist.Rphi, beta)
        regret[:, k - 1] = env.regret(pol)
        if fast:
            _play_compiled(env, pol, env_rngs, u_buf, k, K, hist)
        else:
            states, actions = C.play_episode(env, pol, env_rngs)
            hist.add(states, actions)
        if progress is not None:
            progress(k)
    info = {"beta": beta, "lambda": lam, "env": env.name, "n_updates": np.full(B, max(K - 1, 0))}
    return RunResult(config=config, regret=regret, log=None, ledger=None, info=info)


def _compiles(env) -> bool:
    """Whether :func:`run` plays its episodes compiled: ``COMPILED`` and the environment's own ``sample_next`` (the
    contract refuses an audit hook for a non-private learner; an action pin sees no prescriptions here)."""
    from ..envs.tabular import TabularMDP

    return COMPILED and type(env.tabular).sample_next is TabularMDP.sample_next


def _play_compiled(env, pol: np.ndarray, env_rngs, u_buf: np.ndarray, k: int, K: int, hist: C.History) -> None:
    """Episode ``k`` of every seed under ``pol``, added to ``hist`` (N, Rphi, gram; :func:`.batched_jit.play_chunk`).
    Each seed's uniforms for the chunk's episodes (``u_buf``'s second axis, :func:`.chunks.chunk`) in one
    ``Generator.random`` call at the chunk's first episode: the numpy loop's ``random(H)`` calls, value for value (the Generators serve nothing else)."""
    from .batched_jit import play_chunk   # numba loads here, not on import (CLI start-up)

    j = (k - 1) % u_buf.shape[1]
    if j == 0:
        n = min(u_buf.shape[1], K - k + 1)
        for b, g in enumerate(env_rngs):
            g.random(out=u_buf[b, :n])
    tab = env.tabular
    play_chunk(pol, tab._cdf, env.phi, tab.R, int(env.initial_state), u_buf[:, j:], 1, hist.N, hist.Rphi, hist.gram)


def _whole_episode(env, n: int) -> bool:
    """Whether :func:`.lsvi_jit.lsvi_ucb_chunk` gives the numpy loop's bytes here at n seeds (its self-check)."""
    from . import lsvi_jit

    return lsvi_jit.compiles(env, n)


def _run_compiled(env, pol: np.ndarray, env_rngs, u_buf: np.ndarray, K: int, hist: C.History, lam: float,
                  beta: float, regret: np.ndarray, progress) -> None:
    """:func:`run`'s episode loop in compiled chunks (:func:`.lsvi_jit.lsvi_ucb_chunk`): per chunk each seed's
    uniforms in one ``Generator.random`` call, then the episodes. An episode the compiled loop refuses (a singular
    Lambda or a non-finite Q) is re-run by the numpy code, which raises as the numpy loop does."""
    from privacct.errors import NumericalError

    from ..linear_mixture.lapack import routines
    from .lsvi_jit import _features, lsvi_ucb_chunk

    tab = env.tabular
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    X, Rsa = _features(env), np.ascontiguousarray(tab.R.reshape(H, S * A))
    v_star = float(tab.optimal_value())
    pol = np.ascontiguousarray(pol, dtype=np.int64)
    Ainv = np.empty((pol.shape[0], H, d, d))
    gesv = routines()[1]
    k = 1
    while k <= K:
        n = min(u_buf.shape[1], K - k + 1)
        for b, g in enumerate(env_rngs):
            g.random(out=u_buf[b, :n])
        fail = lsvi_ucb_chunk(k, n, hist.gram, float(lam), X, hist.N, hist.Rphi, float(beta), float(H), Rsa, tab.P,
                              tab._cdf, env.phi, tab.R, int(env.initial_state), u_buf, v_star, regret, pol, Ainv, gesv)
        if fail:
            C.lsvi(env, np.linalg.inv(hist.gram + lam * np.eye(d)), hist.N, hist.Rphi, beta)   # raises
            raise NumericalError(f"lsvi-ucb: the compiled episode {fail} failed where numpy's did not")
        if progress is not None:
            for i in range(k, k + n):
                progress(i)
        k += n
