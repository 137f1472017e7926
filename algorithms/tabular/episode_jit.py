"""UCB-VI's whole per-seed episode loop compiled with numba (issue 23 item 1): same bytes as :func:`.learner.run`'s
numpy path.

One call of :func:`run_episodes` runs episodes ``k0 .. k0 + m - 1`` of every seed, seed after seed (the seeds are
independent: every numpy operation of the batched loop is elementwise or one BLAS call per seed). Per seed and
episode, operation for operation as numpy does it (docs/performance.md#same-bytes-the-rule-every-speed-up-follows):

1. the optimistic model of :func:`.planning.optimistic_model`: ``n = np.maximum(1, N + E1)``, ``inv = 1 / n``,
   ``root = sqrt(inv)``, ``c = C inv``, ``beta = c_root root + c_inv inv`` (``c_root``, ``c_inv`` the Python floats
   numpy multiplies the arrays by), ``base = c - bonus beta``, ``P~ = N_tr inv`` (pooled counts: the same values at
   every h, as ``np.tile`` repeats them);
2. optimistic value iteration, the loop of :func:`.planning_jit.plan_vi_compiled` (gemv per stage);
3. the exact value of the greedy policy, :meth:`TabularMDP.evaluate_kernel`: ``V = r_pi + P_pi V`` with one gemv
   of the gathered (S, S) kernel per stage (``np.matmul`` of a (S, S) by a (S, 1) matrix is that gemv), regret
   ``v_star - V(s_1)``;
4. the roll-out: ``s' = argmax(u < cdf)`` with the sequential cumulative sum of the row (``np.cumsum``) and its
   last entry set to 1;
5. the statistic of :func:`.stats.episode_stats` (assignments; pooled: additions in h order);
6. the release (``mode``): 0 none (``sums + x``), 1 the binary tree of :class:`privacct.mechanisms.TreeCounter`
   (:meth:`~privacct.mechanisms.TreeCounter.add`: ``alpha[:i].sum(axis=0)`` is a sequential sum from 0 over the
   levels, the node noise ``(E1 - E2) b`` of :func:`privacct.mechanisms.laplace`, the running release), 2 the
   local randomizer (``sums + (x + (E1 - E2) b)``), 3 none here: the statistic is returned in ``x_out`` and the
   caller releases it (any other counter; then ``m`` = 1), 4 tree-honaker, 5 blt (:func:`_blt_add`).

Steps 1, 5 and 6 are :func:`optimistic_model`, :func:`episode_statistic` and :func:`release`, shared with UCB-PO's
compiled episode (:mod:`.po_jit`). The noise's standard exponentials are drawn here, per seed just before each
release, from the privatizer's own Generators (numba's Generator: numpy's ziggurat on the same bit generator, the same
values and order as :func:`privacct.mechanisms.laplace`'s calls; the ledger records come from :mod:`.ahead`, per
chunk). Release mode 4 is tree-honaker (:func:`_honaker_add`). With ``fast`` the small products skip the BLAS call
with its bytes (:mod:`..small_gemv`). ``cache=True`` keeps the
compilation out of later processes.
"""

from __future__ import annotations

import numba
import numpy as np

from privacct.counters.blt_jit import blt_recursion
from privacct.counters.tree_honaker_jit import honaker_finish

from ..policy_value_jit import greedy_policy_value_gemv
from ..small_gemv import gemv

from .planning_jit import greedy_state, stage_value


@numba.njit(cache=True, inline="always")
def inverse_cdf_index(p, u):
    """The least i with u < p_0 + ... + p_i (the running sum in numpy's sequential order; the last index's bound
    taken as 1.0, so a row whose sum rounds below 1 still ends there): inverse-CDF sampling of one draw from the
    distribution ``p`` (1-D) at the uniform ``u`` in [0, 1). UCB-VI's next state, UCB-PO's action."""
    n = p.shape[0]
    acc = 0.0
    for i in range(n):
        acc = p[0] if i == 0 else acc + p[i]
        if u < (1.0 if i == n - 1 else acc):
            return i
    return 0


@numba.njit(cache=True)
def _level_sum(levels, i, b, out):
    """``out = levels[:i, b].sum(0)``: numpy's sequential sum from 0 over the levels, row by row."""
    for e in range(out.size):
        out[e] = 0.0
    for q in range(i):
        lq = levels[q, b]
        for e in range(out.size):
            out[e] += lq[e]


@numba.njit(cache=True)
def _tree_add(t, e12, scale, alpha, noise, rel, texact, b, x, sa, sn):
    """:meth:`privacct.mechanisms.TreeCounter.add` of ``x`` at step ``t`` for seed ``b``, node noise
    ``(e12[0] - e12[1]) scale``: ``rel`` is the counter's running release ``_release[b]``, ``texact`` its ``_exact[b]``.
    Row by row (contiguous loops), each element through numpy's operations in numpy's order: ``alpha[:i].sum(0)`` and
    ``noise[:i].sum(0)`` are sequential sums from 0 over the levels."""
    dim = x.size
    i = 0
    while ((t >> i) & 1) == 0:
        i += 1
    _level_sum(alpha, i, b, sa)
    if i:
        _level_sum(noise, i, b, sn)
        for e in range(dim):
            rel[e] = rel[e] - (sa[e] + sn[e])
    al = alpha[i, b]
    for e in range(dim):
        al[e] = sa[e] + x[e]
    for q in range(i):
        alpha[q, b, :] = 0.0
        noise[q, b, :] = 0.0
    e1 = e12[0]
    e2 = e12[1]
    ni = noise[i, b]
    for e in range(dim):
        z = e1[e] - e2[e]
        z *= scale
        ni[e] = z
        texact[e] += x[e]
        rel[e] = rel[e] + (al[e] + z)


@numba.njit(cache=True)
def optimistic_model(rel, pooled, E1, c_root, c_inv, bonus, H, S, A, base, Pm):
    """:func:`.planning.optimistic_model` of one seed's released sums ``rel``: fills ``base`` (Hm S A,) and ``Pm``
    (Hm, S A, S), Hm = 1 if pooled (the same values at every h, as ``np.tile`` repeats them) else H."""
    SA = S * A
    d = SA if pooled else H * SA
    Hm = 1 if pooled else H
    for i in range(Hm * SA):
        y = rel[i] + E1
        n = 1.0 if 1.0 >= y else y          # np.maximum(1.0, y), NaN kept
        inv = 1.0 / n
        root = np.sqrt(inv)
        c = rel[d + i] * inv
        beta = c_root * root + c_inv * inv
        base[i] = c - bonus * beta
        hh = i // SA
        r = i - hh * SA
        for sp in range(S):
            Pm[hh, r, sp] = rel[2 * d + i * S + sp] * inv


@numba.njit(cache=True)
def episode_statistic(states, acts, cost, pooled, S, A, x):
    """:func:`.stats.episode_stats` of one trajectory into ``x`` (assignments; pooled: additions in h order): the
    costs read from the table ``cost`` (H, S, A), then :func:`trajectory_statistic`."""
    H = acts.size
    costs = np.empty(H)
    for h in range(H):
        costs[h] = cost[h, states[h], acts[h]]
    trajectory_statistic(states, acts, costs, pooled, S, A, x)


@numba.njit(cache=True)
def draw_exponentials(g, out):
    """Fill the contiguous ``out`` with ``g``'s standard exponentials in C order: the values (and the stream position
    after) of ``g.standard_exponential(out=out)`` (numba's Generator runs numpy's ziggurat on the same bit generator;
    tested)."""
    f = out.reshape(-1)
    for i in range(f.size):
        f[i] = g.standard_exponential()


@numba.njit(cache=True)
def _honaker_add(t, ex, node, scale, hw, est, hnoise, rel, texact, b, x, cur):
    """:meth:`privacct.counters.counter.FactorizedCounter.add` of ``x`` at step ``t`` for seed ``b`` under
    ``tree-honaker`` (privacct/counters/tree_honaker.py ``step``), its draws ``ex[node ..]`` (the leaf [t, t] first,
    then the nodes [t - 2^i + 1, t], i = 1..nu(t)), each ``(E1 - E2) scale`` as :func:`privacct.mechanisms.laplace`;
    ``hw[i]`` the weight v_i (``_honaker_weight``); ``est`` (levels, B, dim) the levels' estimates ``_est``,
    ``hnoise`` (B, dim) the release noise ``_noise``, ``texact`` (B, dim) ``_exact``; ``rel`` the release
    ``_exact + _noise`` of seed b. Element by element numpy's operations in numpy's order."""
    dim = x.size
    nu = 0
    while ((t >> nu) & 1) == 0:
        nu += 1
    e1 = ex[node, 0]
    e2 = ex[node, 1]
    for e in range(dim):
        z = e1[e] - e2[e]
        z *= scale
        cur[e] = z
    for i in range(1, nu + 1):
        w = hw[i]
        om = 1.0 - w
        e1 = ex[node + i, 0]
        e2 = ex[node + i, 1]
        lo = est[i - 1, b]
        for e in range(dim):
            y = e1[e] - e2[e]
            y *= scale
            cur[e] = w * y + om * (lo[e] + cur[e])
    tx = texact[b]
    hn = hnoise[b]
    honaker_finish(nu, cur, est, b, hn, tx, x)
    for e in range(dim):
        rel[e] = tx[e] + hn[e]


@numba.njit(cache=True)
def _blt_add(t, e12, scale, hist, nb, P, Q, rel, texact, b, x, u):
    """:meth:`privacct.counters.counter.FactorizedCounter.add` of ``x`` at step ``t`` for seed ``b`` under ``blt``
    (:meth:`privacct.counters.blt.Blt.mix_noise`): the draw z_t = ``(e12[0] - e12[1]) scale`` as
    :func:`privacct.mechanisms.laplace`, ``u = z``, then for j = 1..nb in order ``u = u + P_j zh[(t - j) % nb]`` and
    ``u = u - Q_j uh[(t - j) % nb]`` (each product rounded, then added), ``zh[t % nb] = z``, ``uh[t % nb] = u``,
    ``_noise += u``, ``_exact += x``; ``rel`` (the release of seed b) = ``_exact + _noise``. ``hist`` (2 nb + 1, B, dim):
    the counter's ``_zhist`` (rows 0..nb-1), ``_uhist`` (rows nb..2nb-1) and ``_noise`` (row 2nb) (:class:`.ahead.BltAhead`),
    ``texact`` (B, dim) its ``_exact``; ``u`` (dim,) work."""
    dim = x.size
    e1 = e12[0]
    e2 = e12[1]
    for e in range(dim):
        z = e1[e] - e2[e]
        z *= scale
        u[e] = z
    blt_recursion(t, P, Q, hist, 0, hist, nb, b, u)
    cur = t % nb
    zc = hist[cur, b]
    uc = hist[nb + cur, b]
    nn = hist[2 * nb, b]
    tx = texact[b]
    for e in range(dim):
        z = e1[e] - e2[e]
        z *= scale
        zc[e] = z
        uc[e] = u[e]
        tx[e] += x[e]
        nn[e] += u[e]
        rel[e] = tx[e] + nn[e]


@numba.njit(cache=True)
def blt_impulse(P, Q, out):
    """``out`` (n,) = the release noise of :func:`_blt_add` on one scalar fed z = (1, 0, ..., 0) (E1 - E2 = 1, 0 at
    scale 1): the impulse response of the recursion the compiled loop runs (:meth:`.ahead.BltAhead.runs` compares it
    with the counter's own)."""
    nb = P.shape[0]
    hist = np.zeros((2 * nb + 1, 1, 1))
    ex = np.zeros((2, 1))
    rel = np.zeros(1)
    texact = np.zeros((1, 1))
    x = np.zeros(1)
    u = np.empty(1)
    for t in range(1, out.size + 1):
        ex[0, 0] = 1.0 if t == 1 else 0.0
        _blt_add(t, ex, 1.0, hist, nb, P, Q, rel, texact, 0, x, u)
        out[t - 1] = hist[2 * nb, 0, 0]


@numba.njit(cache=True)
def step_draws(mode, k, K):
    """How many (2, dim) blocks of standard exponentials episode ``k``'s release draws: 1 per tree node (mode 1, k <=
    K - 1), BLT step (mode 5, k <= K - 1) or local report (mode 2), nu(k) + 1 for tree-honaker (mode 4, k <= K - 1),
    else 0."""
    if mode == 2:
        return 1
    if (mode == 1 or mode == 4 or mode == 5) and k <= K - 1:
        if mode == 1 or mode == 5:
            return 1
        nu = 0
        while ((k >> nu) & 1) == 0:
            nu += 1
        return nu + 1
    return 0


@numba.njit(cache=True)
def release(mode, k, K, b, x, released, exact, ex, node, scale, alpha, noise, texact, hw, x_out, sum_a, sum_n):
    """Step 6 of the module docstring for seed ``b`` at episode ``k``: ``ex[node ..]`` (draws, 2, dim) are the
    episode's draws (:func:`step_draws` of them: its tree node, its local report or its tree-honaker nodes);
    ``sum_a``, ``sum_n`` (dim,) work arrays. Mode 4 (tree-honaker): ``alpha`` the levels' estimates, ``noise[0]`` the
    release noise (:func:`_honaker_add`). Mode 5 (blt): ``alpha`` the counter's ring buffers and release noise,
    ``hw`` its P_1..P_nb then Q_1..Q_nb (:func:`_blt_add`)."""
    dim = x.size
    if mode == 0:
        for e in range(dim):
            released[b, e] = released[b, e] + x[e]
            exact[b, e] = released[b, e]
    elif mode == 1:
        if k <= K - 1:
            _tree_add(k, ex[node], scale, alpha, noise, released[b], texact[b], b, x, sum_a, sum_n)
    elif mode == 2:
        for e in range(dim):
            z = ex[node, 0, e] - ex[node, 1, e]
            z *= scale
            released[b, e] = released[b, e] + (x[e] + z)
            exact[b, e] = exact[b, e] + x[e]
    elif mode == 4:
        if k <= K - 1:
            _honaker_add(k, ex, node, scale, hw, alpha, noise[0], released[b], texact, b, x, sum_a)
    elif mode == 5:
        if k <= K - 1:
            nb = hw.size // 2
            _blt_add(k, ex[node], scale, alpha, nb, hw[:nb], hw[nb:], released[b], texact, b, x, sum_a)
    else:
        for e in range(dim):
            x_out[b, e] = x[e]


@numba.njit(cache=True)
def canary_step(role, h, s, s1, S):
    """(cost, next state) of the JDP canary response of :func:`.canary.respond` at 0-based step ``h`` in state ``s``:
    ``role`` 0 canary A (cost 1, stay), 1 canary B (cost 0 at h = 0 then 1, next state s_1 + 1 mod S)."""
    if role == 0:
        return 1.0, s
    return (0.0 if h == 0 else 1.0), (s1 + 1) % S


@numba.njit(cache=True)
def ldp_canary(role, s1, S, A, states, acts, costs):
    """The fixed LDP trajectory of :func:`.canary.ldp_trajectory` (``role`` 2 canary A: action 0, stay; 3 canary B:
    action A - 1, at s_1 then s_1 + 1 mod S; cost 1 at every step) into ``states`` (H + 1,), ``acts``, ``costs`` (H,)."""
    H = acts.size
    states[0] = s1
    for h in range(H):
        if role == 2:
            acts[h] = 0
            states[h + 1] = s1
        else:
            acts[h] = A - 1
            states[h + 1] = (s1 + 1) % S
        costs[h] = 1.0


@numba.njit(cache=True)
def trajectory_statistic(states, acts, costs, pooled, S, A, x):
    """:func:`episode_statistic` with the trajectory's own costs ``costs`` (H,) (a canary's responses) instead of the
    cost table's: :func:`.stats.episode_stats` (assignments; pooled: additions in h order)."""
    H = acts.size
    d = S * A if pooled else H * S * A
    for e in range(x.size):
        x[e] = 0.0
    for h in range(H):
        s = states[h]
        a = acts[h]
        if pooled:
            sa = s * A + a
            x[sa] += 1.0
            x[d + sa] += costs[h]
            x[2 * d + sa * S + states[h + 1]] += 1.0
        else:
            sa = (h * S + s) * A + a
            x[sa] = 1.0
            x[d + sa] = costs[h]
            x[2 * d + sa * S + states[h + 1]] = 1.0


@numba.njit(cache=True)
def take_draws(pre, b, off, n, ex):
    """``ex[:n] = pre[b, off:off + n]``: seed ``b``'s next ``n`` (2, dim) blocks of standard exponentials drawn ahead
    by numpy (an audited run, :func:`.learner._drive`: one ``standard_exponential(out=...)`` call per seed and
    compiled call, the values of the draws one by one, a planted multiplier's scaling included)."""
    for i in range(n):
        src = pre[b, off + i]
        dst = ex[i]
        for r in range(2):
            for e in range(src.shape[1]):
                dst[r, e] = src[r, e]


@numba.njit(cache=True)
def capture(mode, k, K, b, ci, x, ex, scale, alpha, noise, texact, hw, x1, cap):
    """What an audited run's records need of seed ``b``'s episode ``k`` (the ``ci``-th of the call), after its release
    (:mod:`.audited` makes the records): user 1's statistic (k = 1) into ``x1[b]``; the noise of the draw over user 1
    into ``cap[b, j]`` -- the tree's node [1, 2^j] at k = 2^j (mode 1, the level-j noise just stored), tree-honaker's
    draw j of step 2^j (mode 4, the node [1, 2^j]), user 1's report (mode 2, k = 1), each ``(E1 - E2) b`` as
    :func:`privacct.mechanisms.laplace`; blt (mode 5): the counter's exact sums and release noise after step k into
    ``cap[b, 2 ci]``, ``cap[b, 2 ci + 1]``."""
    dim = x.size
    if k == 1:
        for e in range(dim):
            x1[b, e] = x[e]
    if mode == 2:
        if k == 1:
            for e in range(dim):
                z = ex[0, 0, e] - ex[0, 1, e]
                z *= scale
                cap[b, 0, e] = z
        return
    if k > K - 1:
        return
    if mode == 5:
        nb = hw.size // 2
        for e in range(dim):
            cap[b, 2 * ci, e] = texact[b, e]
            cap[b, 2 * ci + 1, e] = alpha[2 * nb, b, e]
        return
    if (k & (k - 1)) != 0:
        return
    j = 0
    while (1 << j) < k:
        j += 1
    if mode == 1:
        for e in range(dim):
            cap[b, j, e] = noise[j, b, e]
    elif mode == 4:
        for e in range(dim):
            z = ex[j, 0, e] - ex[j, 1, e]
            z *= scale
            cap[b, j, e] = z


@numba.njit(cache=True)
def _episode(b, k, j, K, pooled, mode, E1, c_root, c_inv, bonus, R, Rsa, P, cost, s1, v_star, released, exact, env_u,
             ex, node, scale, alpha, noise, texact, hw, fast, regret, x_out, base, Pm, pol, V, Ppi, rpi, pv, pe, states,
             acts, x, sum_a, sum_n, role, costs):
    """Episode ``k`` of seed ``b`` (steps 1-6 of the module docstring): its uniforms at row ``j`` of ``env_u``, its
    draws at ``ex[node ..]``; ``fast``: the products by :func:`..small_gemv.gemv_small` (the BLAS call's bytes);
    ``role`` (an audited run, :mod:`.audited`): -1 the environment's user, 0 / 1 the JDP response of canary A / B
    (:func:`canary_step`, fed the greedy policy's actions), 2 / 3 the LDP trajectory of canary A / B
    (:func:`ldp_canary`); the remaining arguments after ``x_out`` are work arrays (``costs`` (H,): a canary's)."""
    H, S, A = R.shape
    SA = S * A
    # 1. optimistic model
    optimistic_model(released[b], pooled, E1, c_root, c_inv, bonus, H, S, A, base, Pm)
    # 2. optimistic value iteration (planning_jit.plan_vi_compiled)
    for s in range(S):
        V[s] = 0.0
    for h in range(H - 1, -1, -1):
        cap = float(H - h)
        hh = 0 if pooled else h
        gemv(Pm[hh], V, pv, fast)
        for s in range(S):
            best, mn = greedy_state(base, hh * SA + s * A, pv, s * A, A)
            pol[h, s] = best
            V[s] = stage_value(mn, cap)
    # 3. exact value of the greedy policy (TabularMDP.evaluate_kernel)
    greedy_policy_value_gemv(pol, Rsa, P, Ppi, rpi, pe, V, fast)
    regret[b, k - 1] = v_star - V[s1]
    # 4. roll-out: inverse-CDF sampling of s' ~ P_h(.|s, pi_h(s)) (an audited run's canary: her responses)
    states[0] = s1
    if role < 0:
        for h in range(H):
            s = states[h]
            a = pol[h, s]
            acts[h] = a
            states[h + 1] = inverse_cdf_index(P[h, s, a], env_u[b, j, h])
        # 5. the statistic (stats.episode_stats) and 6. the release
        episode_statistic(states, acts, cost, pooled, S, A, x)
    else:
        if role >= 2:
            ldp_canary(role, s1, S, A, states, acts, costs)
        else:
            for h in range(H):
                s = states[h]
                a = pol[h, s]
                acts[h] = a
                costs[h], states[h + 1] = canary_step(role, h, s, s1, S)
        trajectory_statistic(states, acts, costs, pooled, S, A, x)
    release(mode, k, K, b, x, released, exact, ex, node, scale, alpha, noise, texact, hw, x_out, sum_a, sum_n)


@numba.njit(cache=True)
def _work(R, pooled, dim):
    """The per-call work arrays of :func:`_episode` (base, Pm, pol, V, Ppi, rpi, pv, pe, states, acts, x, sum_a,
    sum_n) and ``Rsa``."""
    H, S, A = R.shape
    SA = S * A
    Hm = 1 if pooled else H
    Rsa = np.ascontiguousarray(R).reshape(H, SA)
    return (Rsa, np.empty(Hm * SA), np.empty((Hm, SA, S)), np.empty((H, S), dtype=np.int64), np.empty(S),
            np.empty((S, S)), np.empty(S), np.empty(SA), np.empty(S), np.empty(H + 1, dtype=np.int64),
            np.empty(H, dtype=np.int64), np.empty(dim), np.empty(dim), np.empty(dim))


@numba.njit(cache=True)
def run_episodes(k0, m, K, pooled, mode, E1, c_root, c_inv, bonus, R, P, cost, s1, v_star,
                 released, exact, env_u, j0, gens, scale, alpha, noise, texact, hw, fast, regret, x_out,
                 roles, pre, acts_out, x1, cap):
    """Episodes k0 .. k0 + m - 1 (1-based) of every seed, seed after seed; see the module docstring.

    ``R`` (H, S, A), ``P`` (H, S, A, S), ``cost`` (H, S, A): the environment; ``released`` (B, dim): the sums the
    next episode plans from (updated; mode 1: the tree's running release ``_release``); ``exact`` (B, dim): the
    privatizer's noiseless sums (updated in modes 0 and 2; mode 0: a copy of ``released``); ``env_u`` (B, n, H):
    the roll-out uniforms, episode k at row ``j0 + k - k0``; ``gens`` (a numba typed List of the B noise Generators):
    each episode's draws (:func:`step_draws` blocks of (2, dim) standard exponentials) are drawn from seed b's
    Generator just before its release (:func:`draw_exponentials`: the values and order of numpy's draws, no buffer
    travelling through memory); ``alpha``, ``noise`` (levels, B, dim), ``texact`` (B, dim): the tree's ``_alpha``,
    ``_noise``, ``_exact`` (mode 1; modes 4 and 5: :func:`release`); ``hw`` tree-honaker's level weights (mode 5: BLT's
    coefficients); ``fast``: the
    products without the BLAS call (:func:`..small_gemv.gemv_small`); ``regret`` (B, K) written at column k - 1;
    ``x_out`` (B, dim): the statistics (mode 3).

    An audited run (:mod:`.audited`; ``roles`` empty otherwise): ``roles[kk]`` the role of episode k0 + kk's user
    (:func:`_episode`), ``pre`` (B, draws, 2, dim) the call's standard exponentials drawn ahead per seed by numpy
    (:func:`take_draws`; ``gens`` is not drawn from then), ``acts_out`` (B, m, H) the actions prescribed, ``x1``
    (B, dim) and ``cap`` what :func:`capture` keeps for the records.
    """
    B, dim = released.shape
    Rsa, base, Pm, pol, V, Ppi, rpi, pv, pe, states, acts, x, sum_a, sum_n = _work(R, pooled, dim)
    ex = np.empty((alpha.shape[0] if mode == 4 else 1, 2, dim))
    audited = roles.size > 0
    costs = np.empty(acts.size)
    for b in range(B):
        off = 0
        for kk in range(m):
            k = k0 + kk
            n = step_draws(mode, k, K)
            if n and audited:
                take_draws(pre, b, off, n, ex)
                off += n
            elif n:
                draw_exponentials(gens[b], ex[:n])
            role = -1
            if audited:
                role = roles[kk]
            _episode(b, k, j0 + kk, K, pooled, mode, E1, c_root, c_inv, bonus, R, Rsa, P, cost, s1, v_star, released,
                     exact, env_u, ex, 0, scale, alpha, noise, texact, hw, fast, regret, x_out, base, Pm, pol, V, Ppi,
                     rpi, pv, pe, states, acts, x, sum_a, sum_n, role, costs)
            if audited:
                acts_out[b, kk, :] = acts
                capture(mode, k, K, b, kk, x, ex, scale, alpha, noise, texact, hw, x1, cap)
