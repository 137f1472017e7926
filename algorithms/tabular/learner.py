"""Batched UCB-VI / UCB-PO and their private versions (seed 002, Algorithms 1 and 2).

One call runs a batch of seeds at once: every array has a leading axis B (one row per seed).
Seed i's randomness comes from three child sequences of ``seeds[i]`` only (environment
transitions, privacy noise, the agent's action coins), so a batched run equals running the
seeds one by one (tested).

Per episode k = 1..K (users are 1-based episode indices):
1. plan from the counts released after episode k - 1 (all zero at k = 1): VI greedy policy
   (Alg. 2) or optimistic evaluation of the current PO policy (Alg. 1);
2. exact regret V*_1(s_1) - V^{pi_k}_1(s_1) on the true model (PO: the mixed policy);
3. roll out pi_k (episode 1 is the fixed canary trajectory when option ``canary`` is set);
4. the privatizer releases the new prefix sums over users 1..k;
5. PO only: pi^{k+1} proportional to pi^k exp(-eta Q~^k) (Q~^k from step 1, notes §6.11).

Options (``RunConfig.options``): ``canary`` (None | "A" | "B", see :mod:`.canary`), ``observe``
(bool: ``info["released"]`` (B, 2HSA + HSAS) final released sums and ``info["actions"]``
(B, K, H); JDP adds ``info["released_path"]``, LDP ``info["released_user1"]``, see below),
``fixed_users`` (bool, default False; see below), ``e_scale`` (> 0, multiplies E_1 and E_2;
default 1 = theory), ``confidence_delta`` (the paper's confidence delta in (0, 1), default 0.1;
not a privacy delta), ``eta`` (PO step size > 0; default the theory value sqrt(2 ln A / (H^2 K)) of Theorem 3.2).

Audit-only options (they serve :mod:`privacct.audits.learner`, not learning):

* ``fixed_users=True``: users 2..K do not sample the environment; each reports canary A's
  trajectory (:func:`.canary.canary_trajectory`, "A": action 0 at every step, the most likely
  next state, cost 1), whatever the agent prescribes. The dataset is then FIXED apart from
  user 1 (canary A or B), so D and D' are two fixed neighbouring datasets and the only
  randomness left in the releases is the privacy noise. ``info["actions"]`` then holds the
  actions the agent prescribes at the fixed trajectory's states (VI: pi_k(h, s_h); PO: a draw
  from pi_k(.|h, s_h) with the agent's coins). REGRET IS MEANINGLESS in this mode (the data do
  not come from the policy); it is still computed on the true model, for shape only.
* with ``observe``, JDP: ``info["released_path"]`` (B, m * d), m = floor(log2 K) + 1, d =
  2HSA + HSAS: the releases after episodes t = 1, 2, 4, ..., 2^floor(log2 K), concatenated. At
  t = 2^j the Chan-Shi-Song prefix release is exactly ONE noisy node, [1, t], and these are all
  the nodes that contain user 1, so this is everything the tree releases about user 1 (the
  final release ``released`` holds only one of them). LDP: ``info["released_user1"]`` (B, d),
  user 1's own noisy report (what the server receives from the canary). ``info[name +
  "_exact"]`` (B, ...) are the same statistics without noise and ``info["noise_scale"]`` the
  per-coordinate Laplace scale, so an auditor can form the exact likelihood ratio.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from privacct.errors import PrivacctError, check_count, check_delta, check_positive
from privacct.ledger import Ledger

from ..base import CALIBRATIONS, PRIVACY_CHOICES, RunConfig, RunResult
from ..envs import make_env
from ..envs.tabular import TabularMDP
from .canary import canary_trajectory
from .planning import evaluate_po, log_terms, mirror_step, optimistic_model, plan_vi
from .privatizers import GROUP, Privatizer, build_tabular_log, e_terms
from .stats import episode_stats, family_dims, split

KNOWN_OPTIONS = ("canary", "observe", "fixed_users", "e_scale", "confidence_delta", "eta")
_CHUNK = 256  # episodes of uniforms pre-drawn per seed at a time (independent of the batch size)


def _child(ss: np.random.SeedSequence, j: int) -> np.random.Generator:
    """Deterministic child j of ``ss`` (does not mutate ss, unlike ``ss.spawn``)."""
    return np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (j,),
                                                        pool_size=ss.pool_size))


def validate(config: RunConfig, algorithm: str) -> dict[str, Any]:
    """Check a config for this family; return the resolved options. Raises PrivacctError."""
    if config.privacy not in PRIVACY_CHOICES:
        raise PrivacctError(f"privacy must be one of {', '.join(PRIVACY_CHOICES)}, got {config.privacy!r}")
    if config.calibration not in CALIBRATIONS:
        raise PrivacctError(f"calibration must be one of {', '.join(CALIBRATIONS)}, got {config.calibration!r}")
    check_positive("epsilon", config.epsilon)
    check_delta("delta", config.delta, allow_zero=True)
    check_count("episodes", config.episodes)
    if config.horizon is not None:
        check_count("horizon", config.horizon)
    bs = config.bonus_scale
    if isinstance(bs, bool) or not isinstance(bs, (int, float)) or not math.isfinite(bs) or bs < 0:
        raise PrivacctError(f"bonus_scale must be a finite number >= 0, got {bs!r}")
    opts = dict(config.options)
    unknown = sorted(set(opts) - set(KNOWN_OPTIONS))
    if unknown:
        raise PrivacctError(f"unknown option(s) {', '.join(unknown)}; allowed: {', '.join(KNOWN_OPTIONS)}")
    canary = opts.get("canary")
    if canary not in (None, "A", "B"):
        raise PrivacctError(f"option canary must be one of A, B or None, got {canary!r}")
    eta = opts.get("eta")
    fixed = opts.get("fixed_users", False)
    if not isinstance(fixed, (bool, np.bool_)):
        raise PrivacctError(f"option fixed_users must be True or False, got {fixed!r}")
    return {
        "canary": canary,
        "observe": bool(opts.get("observe", False)),
        "fixed_users": bool(fixed),
        "e_scale": check_positive("option e_scale", opts.get("e_scale", 1.0)),
        "confidence_delta": check_delta("option confidence_delta", opts.get("confidence_delta", 0.1)),
        "eta": None if eta is None else check_positive("option eta", eta),
    }


def make_mdp(config: RunConfig) -> TabularMDP:
    return make_env(config.env or "riverswim", config.horizon)


def theory_eta(A: int, H: int, K: int) -> float:
    """Theorem 3.2: eta = sqrt(2 log A / (H^2 K))."""
    return math.sqrt(2.0 * math.log(A) / (H * H * K))


def log_parameters(config: RunConfig, opts: dict[str, Any], mdp: TabularMDP, algorithm: str) -> dict[str, Any]:
    """Non-privacy parameters recorded in the log (tunables included, notes §5.5 item 5)."""
    p = {"env": mdp.name, "bonus_scale": float(config.bonus_scale), "e_scale": opts["e_scale"],
         "confidence_delta": opts["confidence_delta"]}
    if algorithm == "ucb-po":
        p["eta"] = opts["eta"] if opts["eta"] is not None else theory_eta(mdp.n_actions, mdp.horizon, config.episodes)
    return p


def build_log(config: RunConfig, algorithm: str):
    """Declared MechanismLog of ``config`` (None for privacy ``none``)."""
    opts = validate(config, algorithm)
    mdp = make_mdp(config)
    return build_tabular_log(algorithm=algorithm, privacy=config.privacy, calibration=config.calibration,
                             epsilon=config.epsilon, delta=config.delta, H=mdp.horizon, S=mdp.n_states,
                             A=mdp.n_actions, K=config.episodes, parameters=log_parameters(config, opts, mdp, algorithm))


def run(config: RunConfig, seeds: list[np.random.SeedSequence], *, algorithm: str,
        progress: Callable[[int], None] | None = None) -> RunResult:
    """Run ``algorithm`` ("ucb-vi" or "ucb-po") for every seed in ``seeds`` at once."""
    opts = validate(config, algorithm)
    seeds = list(seeds)
    if not seeds or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
        raise PrivacctError("seeds must be a non-empty list of numpy SeedSequence")
    mdp = make_mdp(config)
    H, S, A, K = mdp.horizon, mdp.n_states, mdp.n_actions, int(config.episodes)
    B = len(seeds)
    log = build_log(config, algorithm)
    ledger = Ledger() if log is not None else None
    env_rngs = [_child(s, 0) for s in seeds]
    noise_rngs = [_child(s, 1) for s in seeds]
    agent_rngs = [_child(s, 2) for s in seeds]
    dim = sum(family_dims(H, S, A).values())
    priv = Privatizer(log, dim, K, noise_rngs, ledger)
    E1, E2 = e_terms(log, S=S, A=A, H=H, K=K, confidence_delta=opts["confidence_delta"], e_scale=opts["e_scale"])
    Lc, Lp = log_terms(S, A, H, K, opts["confidence_delta"])
    kind = "vi" if algorithm == "ucb-vi" else "po"
    eta = opts["eta"] if opts["eta"] is not None else theory_eta(A, H, K)
    log_pi = np.full((B, H, S, A), -math.log(A)) if kind == "po" else None

    canary = None if opts["canary"] is None else canary_trajectory(mdp, opts["canary"])
    observe = opts["observe"]
    fixed = canary_trajectory(mdp, "A") if opts["fixed_users"] else None
    central = log is not None and log.privacy_model == "joint"
    exact = np.zeros((B, dim))         # noiseless running sums (for the *_exact observations)
    # JDP "path": releases at t = 1, 2, 4, ... (one node [1, t] each); LDP "user1": user 1's report
    obs: dict[str, list] = {"path": [], "path_exact": [], "user1": [], "user1_exact": []}

    def _record(k: int, x: np.ndarray, noisy: np.ndarray) -> None:
        if not observe or log is None:
            return
        np.add(exact, x, out=exact)
        if central and k & (k - 1) == 0:       # k a power of 2: the release is the single node [1, k]
            obs["path"].append(noisy.copy())
            obs["path_exact"].append(exact.copy())
        if not central and k == 1:             # the sums after episode 1 are user 1's noisy report
            obs["user1"].append(noisy.copy())
            obs["user1_exact"].append(exact.copy())
    actions_seen = np.zeros((B, K, H), dtype=np.int8 if A <= 127 else np.int64) if observe else None
    regret = np.zeros((B, K))
    v_star = mdp.optimal_value()
    released = np.zeros((B, dim))
    rows = np.arange(B)
    cost_table = 1.0 - mdp.R                 # c = 1 - r (notes §6.1)
    every = max(1, K // 200)

    for k in range(1, K + 1):
        j = (k - 1) % _CHUNK
        if j == 0:
            n = min(_CHUNK, K - k + 1)
            env_u = np.stack([r.random((n, H)) for r in env_rngs])
            agent_u = np.stack([r.random((n, H)) for r in agent_rngs]) if kind == "po" else None
        base, P = optimistic_model(*split(released, H, S, A), E1=E1, E2=E2,
                                   H=H, S=S, A=A, Lc=Lc, Lp=Lp, bonus_scale=float(config.bonus_scale), kind=kind)
        if kind == "vi":
            policy = plan_vi(base, P)
            r_pi, P_pi = mdp.policy_kernel(policy)
            regret[:, k - 1] = v_star - mdp.evaluate_kernel(r_pi, P_pi)
            cdf_next = np.cumsum(P_pi, axis=3)   # next-state CDF under pi_k, (B, H, S, S')
            cdf_next[..., -1] = 1.0
        else:
            pi = np.exp(log_pi)
            Q = evaluate_po(base, P, pi)
            regret[:, k - 1] = v_star - mdp.policy_values(pi)
            cdf_pi = np.cumsum(pi, axis=3)
            cdf_pi[..., -1] = 1.0  # rounding guard: a uniform in [0, 1) always picks an action
        # roll out pi_k for every seed
        if fixed is not None and k >= 2:
            # audit mode: user k reports canary A's trajectory; record what the agent prescribes there
            states = np.broadcast_to(fixed[0][None], (B, H + 1)).copy()
            acts = np.broadcast_to(fixed[1][None], (B, H)).copy()
            costs = np.broadcast_to(fixed[2][None], (B, H)).copy()
            if kind == "vi":
                prescribed = policy[rows[:, None], np.arange(H)[None, :], states[:, :H]]
            else:
                prescribed = np.stack([(agent_u[:, j, h, None] < cdf_pi[rows, h, states[:, h]]).argmax(axis=1)
                                       for h in range(H)], axis=1)
        else:
            states = np.empty((B, H + 1), dtype=np.int64)
            acts = np.empty((B, H), dtype=np.int64)
            states[:, 0] = mdp.initial_state
            if kind == "vi":
                for h in range(H):  # inverse-CDF sampling of s' ~ P_h(.|s, pi_h(s))
                    states[:, h + 1] = (env_u[:, j, h, None] < cdf_next[rows, h, states[:, h]]).argmax(axis=1)
                acts[:] = policy[rows[:, None], np.arange(H)[None, :], states[:, :H]]
            else:
                for h in range(H):
                    s = states[:, h]
                    a = (agent_u[:, j, h, None] < cdf_pi[rows, h, s]).argmax(axis=1)
                    acts[:, h] = a
                    states[:, h + 1] = mdp.sample_next(h, s, a, env_u[:, j, h])
            costs = cost_table[np.arange(H)[None, :], states[:, :H], acts]
            if k == 1 and canary is not None:
                states[:] = canary[0][None]
                acts[:] = canary[1][None]
                costs = np.broadcast_to(canary[2][None], (B, H)).copy()
            prescribed = acts
        if observe:
            actions_seen[:, k - 1] = prescribed
        x = episode_stats(states, acts, costs, S, A)
        released = priv.release(k, x)
        _record(k, x, released)
        if kind == "po":
            log_pi = mirror_step(log_pi, Q, eta)
        if progress is not None and (k % every == 0 or k == K):
            progress(k)

    info: dict[str, Any] = {"E1": E1, "E2": E2, "L_c": Lc, "L_p": Lp, "v_star": v_star, "env": mdp.name,
                            "S": S, "A": A, "H": H, "K": K}
    if kind == "po":
        info["eta"] = eta
    if observe:
        info["released"] = priv.released()
        info["actions"] = actions_seen
        info["released_exact"] = exact.copy() if log is not None else priv.released()
        if log is not None:
            info["noise_scale"] = float(log.group(GROUP).noise_scale)
            name = "released_path" if central else "released_user1"
            key = "path" if central else "user1"
            info[name] = np.concatenate(obs[key], axis=1)
            info[name + "_exact"] = np.concatenate(obs[key + "_exact"], axis=1)
    return RunResult(config=config, regret=regret, log=log, ledger=ledger, info=info)
