"""UCB-PO's episode compiled with numba (issue 23 item 1), except its exponentials and logarithms: same bytes as
:func:`.learner.run`'s numpy path.

The mirror step (:func:`.planning.mirror_step`) and the policy ``pi = exp(log pi)`` use numpy's ``exp`` and ``log``,
whose SIMD loops (AVX-512 here) do not round as libm's (numba's) calls do. They stay numpy calls, made from Python
once per episode on the whole (B, H, S, A) batch exactly as the numpy loop makes them (:func:`.learner._run_po_compiled`):
``pi = np.exp(log_pi)`` before the episode, and after it ``np.exp(z)`` and ``np.log`` of its sums over actions
(:func:`row_sums`, numpy's pairwise summation), then ``z - log``.
Everything between, for every seed, is one call of :func:`po_episode`, operation for operation as numpy does it
(docs/performance.md#same-bytes-the-rule-every-speed-up-follows):

1. the optimistic model (:func:`.episode_jit.optimistic_model`, shared with UCB-VI's loop);
2. the optimistic evaluation of pi (:func:`.planning.evaluate_po`): per stage one gemv ``P~_h V`` (as UCB-VI's),
   ``np.maximum(., 0)``, ``np.minimum(., H - h)``, and ``V = einsum("bsa,bsa->bs", pi_h, Q_h)``: numpy's einsum
   reduces each (b, s) row with its baseline SIMD loop ``sum_of_products_contig_contig_outstride0_two`` -- two lanes
   (SSE2, multiply then add, no FMA), the lanes' partial products chained four vectors at a time from the last while
   eight or more terms remain, then two at a time with a zero-filled tail, the two lanes added, then added to the
   zeroed output: :func:`einsum_row` is that loop (checked at run time against ``np.einsum``, :func:`self_check`);
3. the exact value of pi (:meth:`TabularMDP.policy_values`): per stage ``R_h + V P_h^T`` -- one gemv at one seed
   (numpy's matmul of a (1, S) row), one gemm of the (B, S) values of all seeds otherwise -- then ``(pi_h Q).sum(-1)``,
   numpy's pairwise summation (sequential below 8 terms);
4. the roll-out: the action ``argmax(u < cumsum(pi_h(s)))`` with the cumulative sum's last entry set to 1, the next
   state ``argmax(u' < cdf)`` of the environment's own CDF (:meth:`TabularMDP.sample_next`);
5. the statistic and the release (:func:`.episode_jit.episode_statistic`, :func:`.episode_jit.release`, as UCB-VI's);
6. the mirror step up to its exponential: ``z = log_pi - eta Q~``, ``z -= max_a z`` (numpy's ``maximum`` reduce).

A numpy build whose einsum or matmul rounds otherwise fails :func:`self_check` and the learner keeps the numpy loop.
"""

from __future__ import annotations

import numba
import numpy as np

from ..pairwise_sum import pairwise_sum  # numpy's row-sum order, one shared copy
from ..row_max_jit import subtract_row_max  # numpy's maximum order, one shared copy
from ..small_gemv import gemv
from .episode_jit import (canary_step, capture, draw_exponentials, episode_statistic, inverse_cdf_index, ldp_canary,
                          optimistic_model, release, step_draws, take_draws, trajectory_statistic)


@numba.njit(cache=True)
def einsum_row(p, q, n):
    """``np.einsum("a,a->", p[:n], q[:n])`` as numpy's baseline (SSE2) loop computes it (module docstring)."""
    return einsum_at(p, 0, q, n)


@numba.njit(cache=True)
def einsum_at(p, o, q, n):
    """:func:`einsum_row` of ``p[o:o + n]`` (flat ``p``: no view per row) and ``q[:n]``."""
    acc0 = 0.0
    acc1 = 0.0
    i = 0
    while n - i >= 8:
        t0 = p[o + i + 6] * q[i + 6] + acc0
        t1 = p[o + i + 7] * q[i + 7] + acc1
        t0 = p[o + i + 4] * q[i + 4] + t0
        t1 = p[o + i + 5] * q[i + 5] + t1
        t0 = p[o + i + 2] * q[i + 2] + t0
        t1 = p[o + i + 3] * q[i + 3] + t1
        acc0 = p[o + i] * q[i] + t0
        acc1 = p[o + i + 1] * q[i + 1] + t1
        i += 8
    while i < n:
        acc0 = p[o + i] * q[i] + acc0
        acc1 = (p[o + i + 1] * q[i + 1] if i + 1 < n else 0.0 * 0.0) + acc1
        i += 2
    return 0.0 + (acc0 + acc1)


@numba.njit(cache=True)
def evaluate(base, Pm, pi, Q, pooled, V, pv, qrow, fast=False):
    """:func:`.planning.evaluate_po` for one seed: ``base`` (Hm S A,), ``Pm`` (Hm, SA, S), ``pi`` (H, S, A); fills
    ``Q`` (H, S, A); ``fast``: the products by :func:`..small_gemv.gemv_small` (the BLAS call's bytes;
    :func:`..small_gemv.gemv`)."""
    H, S, A = Q.shape
    SA = S * A
    pf = pi.reshape(-1)
    for s in range(S):
        V[s] = 0.0
    for h in range(H - 1, -1, -1):
        cap = float(H - h)
        hh = 0 if pooled else h
        gemv(Pm[hh], V, pv, fast)
        for s in range(S):
            for a in range(A):
                x = base[hh * SA + s * A + a] + pv[s * A + a]
                x = x if (x >= 0.0 or x != x) else 0.0      # np.maximum(q, 0)
                x = x if (x <= cap or x != x) else cap      # np.minimum(q, H - h)
                Q[h, s, a] = x
                qrow[a] = x
            V[s] = einsum_at(pf, (h * S + s) * A, qrow, A)


@numba.njit(cache=True)
def policy_values(R, P2, pi, s1, Vall, t, prod):
    """:meth:`TabularMDP.policy_values` of the stochastic policies ``pi`` (B, H, S, A): ``V^pi_1(s_1)`` per seed.
    ``P2`` (H, S A, S) the kernel; ``Vall`` (B, S), ``t`` (B, S A), ``prod`` (A,) work arrays. One seed: numpy's
    matmul of the (1, S) row is a gemv of P2[h] (``np.dot(P2[h], v)``); more seeds: one gemm ``V P2[h]^T``."""
    B, H, S, A = pi.shape
    out = np.empty(B)
    for b in range(B):
        for s in range(S):
            Vall[b, s] = 0.0
    for h in range(H - 1, -1, -1):
        if B == 1:
            np.dot(P2[h], Vall[0], t[0])
        else:
            np.dot(Vall, P2[h].T, t)
        for b in range(B):
            for s in range(S):
                for a in range(A):
                    prod[a] = pi[b, h, s, a] * (R[h, s, a] + t[b, s * A + a])
                Vall[b, s] = pairwise_sum(prod, A)
    for b in range(B):
        out[b] = Vall[b, s1]
    return out


@numba.njit(cache=True)
def po_episode(k, K, pooled, mode, E1, c_root, c_inv, bonus, eta, R, P2, cdf, cost, s1, v_star,
               released, exact, env_u, agent_u, j, gens, scale, alpha, noise, texact, hw, fast, regret, x_out,
               pi, log_pi, z, Q, role, pre, off, ci, acts_out, x1, cap):
    """Episode ``k`` (1-based) of every seed, up to the mirror step's exponential (module docstring).

    ``pi`` (B, H, S, A) = ``np.exp(log_pi)``, made by the caller; ``z`` (B, H, S, A) receives the mirror step's
    shifted exponent; ``Q`` (B, H, S, A) the optimistic Q~ (work). ``env_u``, ``agent_u`` (B, n, H): the chunk's
    uniforms, this episode at row ``j``; ``gens`` (typed List of the B noise Generators): seed b's draws of this episode
    (its tree node, local report or tree-honaker nodes, :func:`.episode_jit.step_draws`) are drawn from ``gens[b]``
    just before its release, as :func:`.episode_jit.run_episodes` draws them.
    The other arguments as :func:`.episode_jit.run_episodes`'s; an audited run (:mod:`.audited`): ``role`` the role
    of user k (-1 the environment's, 0 / 1 canary A's / B's JDP response fed the actions pi_k prescribes with the
    agent's coins, 2 / 3 canary A's / B's LDP trajectory; :func:`.episode_jit._episode`), ``pre`` (B, draws, 2, dim)
    the standard exponentials drawn ahead per seed by numpy, this episode's at ``pre[b, off ..]``
    (:func:`.episode_jit.take_draws`), ``ci`` the episode's index in the chunk call, ``acts_out`` (B, m, H) the actions prescribed and
    ``x1``, ``cap`` what :func:`.episode_jit.capture` keeps (``acts_out`` empty: not audited).
    """
    H, S, A = R.shape
    B, dim = released.shape
    SA = S * A
    Hm = 1 if pooled else H
    base = np.empty(Hm * SA)
    Pm = np.empty((Hm, SA, S))
    V = np.empty(S)
    pv = np.empty(SA)
    qrow = np.empty(A)
    states = np.empty(H + 1, dtype=np.int64)
    acts = np.empty(H, dtype=np.int64)
    x = np.empty(dim)
    sum_a = np.empty(dim)
    sum_n = np.empty(dim)
    ex = np.empty((alpha.shape[0] if mode == 4 else 1, 2, dim))
    costs = np.empty(H)
    audited = acts_out.size > 0
    for b in range(B):
        # 1-2. optimistic model and evaluation of pi_k
        optimistic_model(released[b], pooled, E1, c_root, c_inv, bonus, H, S, A, base, Pm)
        evaluate(base, Pm, pi[b], Q[b], pooled, V, pv, qrow, fast)
    # 3. the exact value of pi_k, all seeds together (a gemm over seeds, as numpy's matmul)
    vals = policy_values(R, P2, pi, s1, np.empty((B, S)), np.empty((B, SA)), np.empty(A))
    for b in range(B):
        regret[b, k - 1] = v_star - vals[b]
        # 4. roll-out: a ~ pi_h(.|s) by the agent's uniform, s' ~ P_h(.|s, a) by the environment's
        states[0] = s1
        if role >= 2:   # an audited run's LDP canary: her fixed trajectory
            ldp_canary(role, s1, S, A, states, acts, costs)
        for h in range(H if role < 2 else 0):
            s = states[h]
            a = inverse_cdf_index(pi[b, h, s], agent_u[b, j, h])
            acts[h] = a
            if role >= 0:   # an audited run's JDP canary: her response to the prescribed action
                costs[h], states[h + 1] = canary_step(role, h, s, s1, S)
                continue
            u = env_u[b, j, h]
            nxt = 0
            for sp in range(S):
                if u < cdf[h, s, a, sp]:
                    nxt = sp
                    break
            states[h + 1] = nxt
        # 5. the statistic and the release
        if role < 0:
            episode_statistic(states, acts, cost, pooled, S, A, x)
        else:
            trajectory_statistic(states, acts, costs, pooled, S, A, x)
        n = step_draws(mode, k, K)
        if n and audited:
            take_draws(pre, b, off, n, ex)
        elif n:
            draw_exponentials(gens[b], ex[:n])
        release(mode, k, K, b, x, released, exact, ex, 0, scale, alpha, noise, texact, hw, x_out, sum_a, sum_n)
        if audited:
            acts_out[b, ci, :] = acts
            capture(mode, k, K, b, ci, x, ex, scale, alpha, noise, texact, hw, x1, cap)
        # 6. the mirror step's exponent: z = log_pi - eta Q~, minus its maximum over actions
        for h in range(H):
            for s in range(S):
                for a in range(A):
                    z[b, h, s, a] = log_pi[b, h, s, a] - eta * Q[b, h, s, a]
                subtract_row_max(z[b, h, s])


@numba.njit(cache=True)
def row_sums(e, out):
    """``out = e.sum(axis=-1, keepdims=True)`` of the (B, H, S, A) exponentials: numpy's pairwise sum per row."""
    A = e.shape[3]
    rows = e.reshape(-1, A)
    sums = out.reshape(-1)
    for r in range(rows.shape[0]):
        if A < 8:   # pairwise_sum's sequential branch, without a view per row
            acc = 0.0
            for a in range(A):
                acc += rows[r, a]
            sums[r] = acc
        else:
            sums[r] = pairwise_sum(rows[r], A)


def self_check(B: int, H: int, S: int, A: int) -> bool:
    """Whether :func:`evaluate` and :func:`policy_values` give numpy's bytes at these sizes on this numpy build
    (random models, policies and the run's batch size; einsum's and matmul's kernels are the build's). Cached."""
    key = (B, H, S, A)
    if key not in _CHECKED:
        _CHECKED[key] = _check(B, H, S, A)
    return _CHECKED[key]


_CHECKED: dict = {}


def _check(B: int, H: int, S: int, A: int) -> bool:
    from ..envs.tabular import TabularMDP
    from ..small_gemv import gemv_small_exact
    from .planning import evaluate_po

    rng = np.random.default_rng(B * 1000003 + H * 1009 + S * 31 + A)
    for _ in range(3):
        P = rng.random((H, S, A, S)) ** 3
        P /= P.sum(axis=-1, keepdims=True)
        mdp = TabularMDP(P, rng.random((H, S, A)))
        logits = rng.standard_normal((B, H, S, A)) * 3
        pi = np.exp(logits - logits.max(-1, keepdims=True))
        pi /= pi.sum(-1, keepdims=True)
        base = rng.standard_normal((B, H, S, A)) * 2
        Pt = rng.random((B, H, S * A, S))
        want_q = evaluate_po(base, Pt, pi)
        got_q = np.empty_like(want_q)
        V, pv, qrow = np.empty(S), np.empty(S * A), np.empty(A)
        for b in range(B):
            evaluate(base[b].ravel(), Pt[b], pi[b], got_q[b], False, V, pv, qrow, gemv_small_exact(S * A, S))
        want_v = mdp.policy_values(pi)
        got_v = policy_values(mdp.R, np.ascontiguousarray(mdp.P.reshape(H, S * A, S)), pi, mdp.initial_state,
                              np.empty((B, S)), np.empty((B, S * A)), np.empty(A))
        if got_q.tobytes() != want_q.tobytes() or got_v.tobytes() != want_v.tobytes():
            return False
    return True
