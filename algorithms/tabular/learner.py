"""Batched UCB-VI / UCB-PO and their private versions (seed 002, Algorithms 1 and 2).

One call runs a batch of seeds at once: every array has a leading axis B (one row per seed).
Seed i's randomness comes from three child sequences of ``seeds[i]`` only (environment
transitions, privacy noise, the agent's action coins), so a batched run equals running the
seeds one by one (tested).

Per episode k = 1..K (users are 1-based episode indices):
1. plan from the counts released after episode k - 1 (all zero at k = 1): VI greedy policy
   (Alg. 2) or optimistic evaluation of the current PO policy (Alg. 1);
2. exact regret V*_1(s_1) - V^{pi_k}_1(s_1) on the true model (PO: the mixed policy);
3. roll out pi_k;
4. the privatizer releases the new prefix sums over users 1..k (JDP: not after user K, whose
   prefix no policy reads; K - 1 tree leaves);
5. PO only: pi^{k+1} proportional to pi^k exp(-eta Q~^k) (Q~^k from step 1, docs/seed-002-tabular.md#planning).

Options (``RunConfig.options``): ``e_scale`` (> 0, multiplies E_1 and E_2; default 1 = theory),
``confidence_delta`` (the paper's confidence delta in (0, 1), default 0.1; not a privacy delta),
``eta`` (PO step size > 0; default the theory value sqrt(2 ln A / (H^2 K)) of Theorem 3.2),
``pool_over_h`` (default False): counts summed over h, a stationary model, as the seed-002 authors'
public code does and the paper does not (a DEPARTURE, for users comparing with that code;
docs/seed-002-tabular.md#counts-pooled-over-h). The released vector shrinks to 2SA + SAS with the
same l1 sensitivity, so the noise scale and the accounted eps are unchanged. ``counter`` (JDP only; ``privacct
run --counter STRATEGY``): the continual counter of the released counts (docs/counters.md; default: the tree
for ``paper``, the least-noise strategy at the claim for ``tight``; see :mod:`.privatizers`).

Audit hook (:class:`privacct.algorithms.contract.AuditHook`, the contract's semantics): user 1 is the
canary of :mod:`.canary` (JDP: a response function fed the actions pi^1 prescribes with the
agent's coins; LDP: a fixed trajectory); with fixed users, users 2..K are canary A's response
function fed the actions pi^k prescribes. The learner writes no observation code: the audit derives the
observation from what privacct's primitives record (:mod:`privacct.tap`,
docs/auditing.md#observations-from-the-primitives):

* JDP: the tree counter records ``counts node [1, t]`` for t = 1, 2, 4, ..., 2^floor(log2 (K - 1)): the
  release after episode t is the single dyadic node [1, t], and these are all the nodes that contain
  user 1; values = user 1's statistic + the node's Laplace noise;
* LDP: ``add_noise`` with users (1, 1) records ``counts report of user 1``: user 1's own noisy report;
* ``actions``: the actions prescribed to users 2..K (the black-box JDP output M_{-1}), reported with
  :func:`privacct.tap.prescribed`.

A many-trial audit runs the compiled loop instead (:func:`.audited.compiles` says which audits, and why the others
keep this numpy loop): :class:`.audited.BulkRecords` makes these same records, byte for byte, per chunk of episodes.

Both canaries' statistics under the same prescribed actions (the blocks' ``mean_a`` / ``mean_b``) come
from pairing a canary-A and a canary-B run (:func:`privacct.algorithms.contract.pair_taps`): user 1's
statistic is fixed before any release (the data-free pi^1 and the agent's fixed coins).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from privacct.errors import PrivacctError, check_delta, check_positive
from privacct.ledger import Ledger
from privacct.log import FACTORIZED_STRATEGIES
from privacct.tap import canary_contribution, prescribed
from privacct.tap import current as current_tap

from ..contract import (AuditHook, RunConfig, RunResult,
                    noise_generators, stream_generators)
from ..envs import make_env
from ..envs.tabular import TabularMDP
from .ahead import bulk_observed
from .audited import BulkRecords, compiles
from .audited import roles as audit_roles
from .canary import jdp_rollout, ldp_trajectory
from .planning import bonus_coefficients, evaluate_po, log_terms, mirror_step, optimistic_model, plan_vi
from .privatizers import GROUP, Privatizer, build_tabular_log, e_terms
from .stats import episode_stats, family_dims, split

KNOWN_OPTIONS = ("e_scale", "confidence_delta", "eta", "pool_over_h", "counter", "reading")
COUNTERS = FACTORIZED_STRATEGIES  # the counting strategies, named once (privacct.log)
_CHUNK = 256  # episodes of uniforms pre-drawn per seed at a time (independent of the batch size)
#: The episodes run compiled: UCB-VI's whole loop (:mod:`.episode_jit`), UCB-PO's but for numpy's
#: exp / log calls (:mod:`.po_jit`; where its self-check passes); the same bytes as the numpy loop below, which stays
#: the reference and the path of the audited runs :func:`.audited.compiles` keeps there (the many-trial audits run
#: compiled, their tap records made in bulk by :class:`.audited.BulkRecords`). Tests switch it off to compare.
COMPILED = True
_AHEAD_EPISODES = _CHUNK   # at most this many episodes per call of the compiled loop (tests make it small)
#: an audited run's episodes per call of the compiled loop: its draws made ahead and blt's capture (two (B, dim) arrays
#: per episode) stay a few megabytes
_BULK_EPISODES = 32


def validate(config: RunConfig, algorithm: str) -> dict[str, Any]:
    """Check a config's options for this family (RunConfig validated its fields: privacy, calibration, epsilon,
    delta, episodes, horizon, bonus_scale; algorithms/contract.py); return the resolved options. Raises PrivacctError."""
    opts = dict(config.options)
    unknown = sorted(set(opts) - set(KNOWN_OPTIONS))
    if unknown:
        raise PrivacctError(f"unknown option(s) {', '.join(unknown)}; allowed: {', '.join(KNOWN_OPTIONS)}")
    eta = opts.get("eta")
    pool = opts.get("pool_over_h", False)
    if not isinstance(pool, (bool, np.bool_)):
        raise PrivacctError(f"option pool_over_h must be true or false, got {pool!r}")
    if config.privacy == "jdp" and isinstance(config.episodes, int) and config.episodes < 2:
        raise PrivacctError(f"episodes must be an integer >= 2 for JDP (the tree has K - 1 leaves), got {config.episodes}")
    counter = opts.get("counter")
    if counter is not None and counter not in COUNTERS:
        raise PrivacctError(f"option counter must be one of {', '.join(COUNTERS)}, got {counter!r}")
    if counter is not None and config.privacy != "jdp":
        raise PrivacctError(f"option counter applies to JDP (central) learners, got privacy {config.privacy!r}")
    reading = opts.get("reading")
    if reading is not None and (config.calibration != "paper" or config.privacy != "jdp" or not isinstance(reading, str)):
        raise PrivacctError("option reading applies to the printed JDP constants (calibration paper, privacy jdp): the "
                            f"name of one of the paper's readings, got {reading!r} (calibration {config.calibration}, "
                            f"privacy {config.privacy})")
    return {
        "counter": counter,
        "reading": reading,
        "e_scale": check_positive("option e_scale", opts.get("e_scale", 1.0)),
        "confidence_delta": check_delta("option confidence_delta", opts.get("confidence_delta", 0.1)),
        "eta": None if eta is None else check_positive("option eta", eta),
        "pool_over_h": bool(pool),
    }


def make_mdp(config: RunConfig) -> TabularMDP:
    return make_env(config.env or "riverswim", config.horizon)


def theory_eta(A: int, H: int, K: int) -> float:
    """Theorem 3.2: eta = sqrt(2 log A / (H^2 K))."""
    return math.sqrt(2.0 * math.log(A) / (H * H * K))


def log_parameters(config: RunConfig, opts: dict[str, Any], mdp: TabularMDP, algorithm: str) -> dict[str, Any]:
    """Non-privacy parameters recorded in the log (tunables included, docs/learners.md#tunables)."""
    p = {"env": mdp.name, "bonus_scale": float(config.bonus_scale), "e_scale": opts["e_scale"],
         "confidence_delta": opts["confidence_delta"]}
    if algorithm == "ucb-po":
        p["eta"] = opts["eta"] if opts["eta"] is not None else theory_eta(mdp.n_actions, mdp.horizon, config.episodes)
    return p


def build_log(config: RunConfig, algorithm: str):
    """Declared MechanismLog of ``config`` (None for privacy ``none``). Audited and unaudited runs of one config
    run the same counter: tight's own choice without an explicit ``counter``, the named one with it, and the audit
    observes that counter (docs/auditing.md#factorized-counters)."""
    opts = validate(config, algorithm)
    mdp = make_mdp(config)
    counter = opts["counter"]
    log = build_tabular_log(algorithm=algorithm, privacy=config.privacy, calibration=config.calibration,
                            epsilon=config.epsilon, delta=config.delta, H=mdp.horizon, S=mdp.n_states,
                            A=mdp.n_actions, K=config.episodes, parameters=log_parameters(config, opts, mdp, algorithm),
                            pooled=opts["pool_over_h"], counter=counter)
    if opts["reading"] is None:
        return log
    # the printed constants under one reading of the paper (docs/seed-002-tabular.md#readings-and-accounted-epsilon):
    # the learner then RUNS that reading's noise (its privatizer reads the scale from the log), e.g. to audit the
    # reading the proof supports, log2 K; the log records which, and carries no readings of its own
    names = [r.name for r in log.readings]
    if opts["reading"] not in names:
        raise PrivacctError(f"option reading must be one of {', '.join(repr(n) for n in names)}, got {opts['reading']!r}")
    import dataclasses

    led = log.under_reading(opts["reading"])
    return dataclasses.replace(led, parameters=tuple(dict(led.parameters, reading=opts["reading"]).items()))


def run(config: RunConfig, seeds: list[np.random.SeedSequence], *, algorithm: str, audit: AuditHook | None = None,
        progress: Callable[[int], None] | None = None) -> RunResult:
    """Run ``algorithm`` ("ucb-vi" or "ucb-po") for every seed in ``seeds`` at once."""
    opts = validate(config, algorithm)
    seeds = list(seeds)
    if not seeds or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
        raise PrivacctError("seeds must be a non-empty list of numpy SeedSequence")
    mdp = make_mdp(config)
    H, S, A, K = mdp.horizon, mdp.n_states, mdp.n_actions, int(config.episodes)
    B = len(seeds)
    from ..registry import get_learner

    # the spec's log of this record, built once per record (algorithms/contract.py): an audited run runs (and its
    # audit observes) the counter the unaudited run of the same config runs
    log = get_learner(algorithm).declared_log(config)
    ledger = Ledger() if log is not None else None   # tree node draws as (offset, count): privacct.ledger, Tree runs
    env_rngs = _stream_rngs(seeds, 0, audit, fixed=audit is not None and audit.fixed_users)
    noise_rngs = noise_generators(seeds, 1, audit)
    agent_rngs = _stream_rngs(seeds, 2, audit, fixed=audit is not None)
    pooled = opts["pool_over_h"]
    dim = sum(family_dims(H, S, A, pooled).values())
    kind = "vi" if algorithm == "ucb-vi" else "po"
    # many-trial audits too (.audited.compiles, the one predicate: which audited runs keep the numpy loop and why)
    bulk = audit is not None and compiles(audit, log)
    compiled = (COMPILED and ((audit is None and current_tap() is None) or bulk)
                and (kind == "vi" or _po_compiles(B, H, S, A)))
    bulk = bulk and compiled
    with bulk_observed() if bulk else contextlib.nullcontext():
        priv = Privatizer(log, dim, K, noise_rngs, ledger, ahead=compiled)
    E1, E2 = e_terms(log, S=S, A=A, H=H, K=K, confidence_delta=opts["confidence_delta"], e_scale=opts["e_scale"])
    Lc, Lp = log_terms(S, A, H, K, opts["confidence_delta"])
    eta = opts["eta"] if opts["eta"] is not None else theory_eta(A, H, K)
    log_pi = np.full((B, H, S, A), -math.log(A)) if kind == "po" else None
    central = log is not None and log.privacy_model == "joint"
    regret = np.zeros((B, K))
    v_star = mdp.optimal_value()
    released = np.zeros((B, dim))
    rows = np.arange(B)
    cost_table = 1.0 - mdp.R                 # c = 1 - r (docs/seed-002-tabular.md#departures)
    every = max(1, K // 200)

    drive = {"audit": audit if bulk else None, "central": central}
    if compiled and kind == "po":
        with bulk_observed() if bulk else contextlib.nullcontext():
            _run_po_compiled(mdp, priv, regret, env_rngs, agent_rngs, log_pi, K=K, pooled=pooled, v_star=v_star,
                             cost_table=cost_table, E1=E1, coefs=bonus_coefficients(E1=E1, E2=E2, H=H, S=S, Lc=Lc,
                                                                                  Lp=Lp, kind=kind),
                             bonus_scale=float(config.bonus_scale), eta=eta, progress=progress, every=every, **drive)
    elif compiled:
        with bulk_observed() if bulk else contextlib.nullcontext():
            _run_vi_compiled(mdp, priv, regret, env_rngs, K=K, pooled=pooled, v_star=v_star, cost_table=cost_table,
                             E1=E1, coefs=bonus_coefficients(E1=E1, E2=E2, H=H, S=S, Lc=Lc, Lp=Lp, kind=kind),
                             bonus_scale=float(config.bonus_scale), progress=progress, every=every, **drive)
    for k in (() if compiled else range(1, K + 1)):
        j = (k - 1) % _CHUNK
        if j == 0:
            n = min(_CHUNK, K - k + 1)
            env_u = _uniforms(env_rngs, n, H, B)
            agent_u = _uniforms(agent_rngs, n, H, B) if kind == "po" else None
        leak = priv.exact if (audit is not None and audit.mutant == "bonus-on-exact-counts") else None
        base, P = optimistic_model(*split(released, H, S, A, pooled), E1=E1, E2=E2,
                                   H=H, S=S, A=A, Lc=Lc, Lp=Lp, bonus_scale=float(config.bonus_scale), kind=kind,
                                   bonus_counts=None if leak is None else split(leak, H, S, A, pooled)[0])
        if kind == "vi":
            policy = plan_vi(base, P)
            r_pi, P_pi = mdp.policy_kernel(policy)
            regret[:, k - 1] = v_star - mdp.evaluate_kernel(r_pi, P_pi)
            cdf_next = np.cumsum(P_pi, axis=3)   # next-state CDF under pi_k, (B, H, S, S')

            def prescribe(h, s, policy=policy):
                return policy[rows, h, s]
        else:
            pi = np.exp(log_pi)
            Q = evaluate_po(base, P, pi)
            regret[:, k - 1] = v_star - mdp.policy_values(pi)
            cdf_pi = np.cumsum(pi, axis=3)
            cdf_pi[..., -1] = 1.0  # rounding guard: a uniform in [0, 1) always picks an action

            def prescribe(h, s, cdf_pi=cdf_pi, j=j, agent_u=agent_u):
                return (agent_u[:, j, h, None] < cdf_pi[rows, h, s]).argmax(axis=1)
        role = None if audit is None else audit.role(k)
        if role is not None:
            # audited run: user 1 is the canary, users 2..K (fixed users) canary A's response function; a one-run
            # audit's canary users play their bits and report their statistics under both (privacct.tap)
            if audit.plan is not None:
                states, acts, costs = _one_run_canary(mdp, k, role, central, prescribe, B, pooled)
            elif k == 1:
                states, acts, costs = _canary_episode(mdp, audit.canary, central, prescribe, B)
            else:
                states, acts, costs = jdp_rollout(mdp, "A", prescribe, B)
        else:
            states = np.empty((B, H + 1), dtype=np.int64)
            states[:, 0] = mdp.initial_state
            if kind == "vi":
                cdf_next[..., -1] = 1.0
                for h in range(H):  # inverse-CDF sampling of s' ~ P_h(.|s, pi_h(s))
                    states[:, h + 1] = (env_u[:, j, h, None] < cdf_next[rows, h, states[:, h]]).argmax(axis=1)
                acts = policy[rows[:, None], np.arange(H)[None, :], states[:, :H]]
            else:
                acts = np.empty((B, H), dtype=np.int64)
                for h in range(H):
                    s = states[:, h]
                    acts[:, h] = prescribe(h, s)
                    states[:, h + 1] = mdp.sample_next(h, s, acts[:, h], env_u[:, j, h])
            costs = cost_table[np.arange(H)[None, :], states[:, :H], acts]
        x = episode_stats(states, acts, costs, S, A, pooled)
        released = priv.release(k, x)
        prescribed(k, acts)   # the actions sent to user k (the JDP output M_-1 of an audit; a no-op otherwise)
        if kind == "po":
            log_pi = mirror_step(log_pi, Q, eta)
        if progress is not None and (k % every == 0 or k == K):
            progress(k)

    info: dict[str, Any] = {"E1": E1, "E2": E2, "L_c": Lc, "L_p": Lp, "v_star": v_star, "env": mdp.name,
                            "S": S, "A": A, "H": H, "K": K, "pool_over_h": pooled, "final_release": priv.released()}
    if kind == "po":
        info["eta"] = eta
    # no observation code: an audit derives it from what privacct's primitives recorded (privacct.tap)
    return RunResult(config=config, regret=regret, log=log, ledger=ledger, info=info)


def _stream_rngs(seeds: list[np.random.SeedSequence], j: int, audit: AuditHook | None, *, fixed: bool):
    """:func:`privacct.algorithms.contract.stream_generators`'s Generators, made cheaply: ``fixed`` (every trial draws the
    same coins) gives ONE Generator, which :func:`_uniforms` broadcasts over the batch (the B identical Generators of
    ``stream_generators`` draw the same bytes); otherwise child ``j`` of every seed (:func:`privacct.rng.child_generators`)."""
    return stream_generators(seeds[:1] if audit is not None and fixed else seeds, j, audit, fixed=fixed)


def _uniforms(rngs, n: int, H: int, B: int) -> np.ndarray:
    """(B, n, H) uniforms, n episodes of one roll-out stream per seed (one Generator: the same row for every seed)."""
    u = np.stack([r.random((n, H)) for r in rngs])
    return u if len(rngs) == B else np.broadcast_to(u, (B, n, H))


@dataclass(frozen=True)
class _Release:
    """How the compiled loop releases (:func:`_drive`): ``mode`` 0 none, 1 the tree (:class:`.ahead.TreeAhead`),
    2 the local randomizer, 3 any other counter (each episode's statistic through :meth:`Privatizer.release`),
    4 tree-honaker (:class:`.ahead.HonakerAhead`), 5 blt (:class:`.ahead.BltAhead`, its state ``hist`` as ``alpha``, its
    coefficients as ``hw``); ``scale`` the Laplace b (0 without privacy); ``gens`` the
    privatizer's Generators as a numba typed List (modes 1, 2, 4, 5 draw from them in the compiled loop); the counter's
    state arrays (``alpha``, ``noise``, ``texact``: the tree's ``_alpha``, ``_noise``, ``_exact``; tree-honaker's
    ``_est``, ``_noise[None]``, ``_exact``; empty otherwise), tree-honaker's level weights ``hw`` and the exact sums
    at the start (``exact``)."""

    mode: int
    scale: float
    gens: Any
    alpha: np.ndarray
    noise: np.ndarray
    texact: np.ndarray
    hw: np.ndarray
    exact: np.ndarray


def _drive(mdp: TabularMDP, priv: Privatizer, env_rngs, agent_rngs, *, K: int, progress, every: int,
           episodes: Callable[..., None], audit: AuditHook | None = None, central: bool = True) -> None:
    """The chunk loop shared by UCB-VI's and UCB-PO's compiled episodes (:func:`_run_vi_compiled`,
    :func:`_run_po_compiled`): the same draws in the same order as :func:`run`'s numpy loop -- the roll-out's (and,
    with ``agent_rngs``, the agent's) uniforms in the same 256-episode chunks, the privacy noise drawn per seed from the
    privatizer's Generators by the compiled loop, episode by episode, in the numpy loop's order -- and the same ledger
    (recorded here per chunk, :mod:`.ahead`). ``episodes(k, m, j, env_u, agent_u, rel, released, x_out)`` runs
    episodes k .. k + m - 1 of every seed (their uniforms at rows j.. of the chunk); in mode 3 (m = 1) it leaves the
    statistic in ``x_out`` and this loop releases it. Sets the privatizer's sums (and, for a counter of the compiled
    loop, its exact sums) at the end.

    ``audit`` (a many-trial audit that :func:`.audited.compiles` admits; ``central``: JDP): the users'
    roles go to the compiled loop (``aud``: roles, the call's noise draws made ahead by numpy -- one
    ``standard_exponential`` call per seed, cheaper than numba's view of B fresh Generators, and a planted multiplier's
    scaling comes with them --, actions and capture buffers; None outside audits),
    fixed coins (one Generator) are broadcast over the batch as :func:`_uniforms` does, and after each call
    :class:`.audited.BulkRecords` makes the tap's records and reports the prescribed actions."""
    from numba.typed import List

    from .ahead import BltAhead, HonakerAhead, TreeAhead, local_records

    H = mdp.horizon
    B, dim = priv.sums.shape
    tree = getattr(priv, "tree", None)
    plain = tree
    if priv.kind == "none":
        mode = 0
    elif isinstance(tree, TreeAhead):
        mode = 1
    elif isinstance(tree, HonakerAhead):
        mode = 4
    elif priv.kind == "local":
        mode = 2
    elif BltAhead.runs(tree):   # a fresh blt counter: drawn and added in the compiled loop (the same bytes, .ahead)
        tree = priv.tree = BltAhead.like(tree)
        mode = 5
    else:
        mode = 3
    scale = 0.0 if priv.log is None else float(priv.log.group(GROUP).noise_scale)
    # numba's view of the same Generators: draws in the compiled loop advance them (an audited run draws ahead instead)
    gens = _no_generators() if audit is not None else List(priv.rngs)
    none3, none2 = np.empty((0, B, dim)), np.empty((0, dim))
    state = {1: lambda: (tree._alpha, tree._noise, tree._exact, np.empty(0)),
             4: lambda: (tree._est, tree._noise[None], tree._exact, tree.weights),
             5: lambda: (tree.hist, none3, tree._exact, tree.coefs)}
    rel = _Release(mode, scale, gens, *state.get(mode, lambda: (none3, none3, none2, np.empty(0)))(), exact=priv.exact)
    # the sums planned from: the counter's running release itself (modes 1, 4 and 5)
    released = tree._release if mode in (1, 4, 5) else priv.sums
    agent_u = None
    bulk = None
    if audit is not None:
        bulk = BulkRecords(current_tap(), audit, central, mode, plain if mode == 5 else tree, scale, B, dim, H, K)
    # outside audits: no roles, empty draws, actions and capture buffers
    empty = (np.empty(0, dtype=np.int64), np.empty((0, 0, 2, 0)), np.empty((0, 0, 0), dtype=np.int64),
             np.empty((0, 0)), np.empty((0, 0, 0)))
    k = 1
    while k <= K:
        j = (k - 1) % _CHUNK
        if j == 0:
            n = min(_CHUNK, K - k + 1)
            env_u = _batch_uniforms(env_rngs, n, H, B)
            if agent_rngs is not None:
                agent_u = _batch_uniforms(agent_rngs, n, H, B)
        m = 1 if mode == 3 else min(_AHEAD_EPISODES, K - k + 1, _CHUNK - j, _BULK_EPISODES if bulk is not None else K)
        aud = None
        if bulk is not None:
            acts_out, cap = bulk.buffers(m)
            aud = (audit_roles(audit, central, k, m), _draws_ahead(priv.rngs, mode, k, m, K, dim), acts_out, bulk.x1,
                   cap)
        x_out, nodes = none2, 0
        if mode in (1, 4, 5):
            nodes = max(0, min(k + m - 1, K - 1) - k + 1)
            if nodes:
                tree.reserve(nodes)
        elif mode == 2:
            local_records(B, m, dim, scale=scale, first_user=k, ledger=priv.ledger, group=GROUP)
        elif mode == 3:
            x_out = np.empty((B, dim))   # fresh each episode: a counter may keep the array it is given
        episodes(k, m, j, env_u, agent_u, rel, released, x_out, aud or empty)
        if nodes:
            tree.advance(nodes)
        elif mode == 3:
            released = priv.release(k, x_out)
        if bulk is not None:
            bulk.emit(k, m, aud[2], aud[4])
        if progress is not None:
            for kk in range(k, k + m):
                if kk % every == 0 or kk == K:
                    progress(kk)
        k += m
    if mode == 1:   # Privatizer.release's sums and exact: copies of the tree's (the same additions, in the same order)
        released, priv.exact = tree.noisy_sum(), tree.exact_sum()
    elif mode in (4, 5):
        released, priv.exact = released.copy(), tree.exact_sum()
    priv.sums = released


def _draws_ahead(rngs, mode: int, k: int, m: int, K: int, dim: int) -> np.ndarray:
    """(B, draws, 2, dim): the standard exponentials of episodes k .. k + m - 1's releases
    (:func:`.episode_jit.step_draws` blocks each), one ``standard_exponential(out=...)`` call per seed: the values of
    :func:`privacct.mechanisms.laplace`'s calls one by one (a Generator's exponentials are one sequential stream;
    :mod:`.ahead`), a :class:`..contract.ScaledNoiseGenerator`'s scaling included."""
    from .ahead import node_count

    ks = range(k, k + m)
    n = {2: m, 1: sum(kk <= K - 1 for kk in ks), 5: sum(kk <= K - 1 for kk in ks),
         4: sum(node_count(kk) for kk in ks if kk <= K - 1)}.get(mode, 0)
    out = np.empty((len(rngs), n, 2, dim))
    if n:
        for b, r in enumerate(rngs):
            r.standard_exponential(out=out[b])
    return out


_NO_GENERATORS: list = []


def _no_generators():
    """An empty numba typed List of Generators (the compiled loop's ``gens`` when the draws come ahead), made once."""
    if not _NO_GENERATORS:
        from numba import typeof
        from numba.typed import List

        _NO_GENERATORS.append(List.empty_list(typeof(np.random.default_rng(0))))
    return _NO_GENERATORS[0]


def _batch_uniforms(rngs, n: int, H: int, B: int) -> np.ndarray:
    """:func:`_uniforms` as a contiguous (B, n, H) array (one Generator's row copied to every seed)."""
    u = np.stack([r.random((n, H)) for r in rngs])
    return u if len(rngs) == B else np.ascontiguousarray(np.broadcast_to(u, (B, n, H)))


def _run_vi_compiled(mdp: TabularMDP, priv: Privatizer, regret: np.ndarray, env_rngs, *, K: int, pooled: bool,
                     v_star: float, cost_table: np.ndarray, E1: float, coefs: tuple[float, float], bonus_scale: float,
                     progress, every: int, **drive) -> None:
    """The episode loop of :func:`run` for UCB-VI (outside audits and in many-trial ones), compiled (:func:`.episode_jit.run_episodes`, one
    call per chunk of episodes; the loop around it is :func:`_drive`): the same arithmetic, the same bytes. A binary
    tree (:class:`.ahead.TreeAhead`), tree-honaker (:class:`.ahead.HonakerAhead`), the local randomizer and no privacy
    are released inside the compiled loop, which draws their noise; any other counter gets each episode's statistics
    through :meth:`Privatizer.release`. Fills ``regret`` and the privatizer's sums."""
    from .episode_jit import run_episodes   # numba loads here, not on import (CLI start-up)

    R, P = mdp.R, mdp.P
    fast = _gemv_fast(mdp)

    def episodes(k, m, j, env_u, agent_u, rel, released, x_out, aud):
        run_episodes(k, m, K, pooled, rel.mode, E1, coefs[0], coefs[1], bonus_scale, R, P, cost_table,
                     mdp.initial_state, v_star, released, rel.exact, env_u, j, rel.gens, rel.scale, rel.alpha,
                     rel.noise, rel.texact, rel.hw, fast, regret, x_out, *aud)

    _drive(mdp, priv, env_rngs, None, K=K, progress=progress, every=every, episodes=episodes, **drive)


def _gemv_fast(mdp: TabularMDP) -> bool:
    """Whether the compiled loops' small products P~_h V (S A x S) and P_pi V (S x S) can skip the BLAS call with its
    bytes (:func:`..small_gemv.gemv_small_exact`, checked on this build)."""
    from ..small_gemv import gemv_small_exact

    S, A = mdp.n_states, mdp.n_actions
    return gemv_small_exact(S * A, S) and gemv_small_exact(S, S)


def _po_compiles(B: int, H: int, S: int, A: int) -> bool:
    """Whether UCB-PO's compiled episode gives numpy's bytes on this numpy build (:func:`.po_jit.self_check`)."""
    from .po_jit import self_check   # numba loads here, not on import (CLI start-up)

    return self_check(B, H, S, A)


def _run_po_compiled(mdp: TabularMDP, priv: Privatizer, regret: np.ndarray, env_rngs, agent_rngs, log_pi: np.ndarray,
                     *, K: int, pooled: bool, v_star: float, cost_table: np.ndarray, E1: float,
                     coefs: tuple[float, float], bonus_scale: float, eta: float, progress, every: int,
                     **drive) -> None:
    """The episode loop of :func:`run` for UCB-PO (outside audits and in many-trial ones): one compiled call per episode
    (:func:`.po_jit.po_episode`) between numpy's exponentials and logarithm, which run here on the whole
    (B, H, S, A) batch as the numpy loop runs them (``pi = np.exp(log_pi)``; :func:`.planning.mirror_step` after
    its exponent ``z``); the loop around it is :func:`_drive` (the agent's uniforms drawn in the roll-out's chunks).
    The same bytes; fills ``regret``, ``log_pi`` and the privatizer's sums."""
    from .episode_jit import step_draws
    from .po_jit import po_episode, row_sums

    R = mdp.R
    fast = _gemv_fast(mdp)
    P2 = np.ascontiguousarray(mdp.P.reshape(mdp.horizon, -1, mdp.n_states))
    cdf = mdp._cdf
    pi, z, ez, Q = (np.empty_like(log_pi) for _ in range(4))
    lse = np.empty(log_pi.shape[:-1] + (1,))

    def episodes(k, m, j, env_u, agent_u, rel, released, x_out, aud):
        roles, pre, acts_out, x1, cap = aud
        off = 0
        for i in range(m):
            np.exp(log_pi, out=pi)
            po_episode(k + i, K, pooled, rel.mode, E1, coefs[0], coefs[1], bonus_scale, eta, R, P2, cdf, cost_table,
                       mdp.initial_state, v_star, released, rel.exact, env_u, agent_u, j + i, rel.gens, rel.scale,
                       rel.alpha, rel.noise, rel.texact, rel.hw, fast, regret, x_out, pi, log_pi, z, Q,
                       roles[i] if roles.size else -1, pre, off, i, acts_out, x1, cap)
            off += step_draws(rel.mode, k + i, K) if roles.size else 0
            # planning.mirror_step from its exponent z: z - log(sum(exp(z)))
            np.exp(z, out=ez)
            row_sums(ez, lse)   # ez.sum(axis=-1, keepdims=True), compiled (elementwise order: numpy's)
            np.log(lse, out=lse)
            np.subtract(z, lse, out=log_pi)

    _drive(mdp, priv, env_rngs, agent_rngs, K=K, progress=progress, every=every, episodes=episodes, **drive)


def _one_run_canary(mdp: TabularMDP, user: int, bit: str, central: bool, prescribe, B: int, pooled: bool):
    """A one-run audit's canary ``user`` (docs/auditing.md#one-run-audits): her trajectory as canary ``bit``, after
    reporting her statistic under both bits given the same history (:func:`privacct.tap.canary_contribution`)."""
    both = {w: _canary_episode(mdp, w, central, prescribe, B) for w in ("A", "B")}
    stats = {w: episode_stats(*both[w], mdp.n_states, mdp.n_actions, pooled) for w in both}
    canary_contribution(user, GROUP, a=stats["A"], b=stats["B"])
    return both[bit]


def _canary_episode(mdp: TabularMDP, canary: str, central: bool, prescribe, B: int):
    """User 1's trajectory (states, actions, costs) as canary ``canary`` (:mod:`.canary`): JDP, her response
    function fed the actions pi^1 prescribes with the agent's coins; LDP, her fixed trajectory."""
    if central:
        return jdp_rollout(mdp, canary, prescribe, B)
    s, a, c = ldp_trajectory(mdp, canary)
    return tuple(np.broadcast_to(v, (B, v.size)).copy() for v in (s, a, c))
