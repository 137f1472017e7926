"""The linear-mixture episode loop compiled with numba (issue 23 item 1): the same bytes as :func:`.engine.run_design`'s
numpy loop.

One call of :func:`run_chunk` runs episodes ``k0 .. k0 + m - 1`` of every seed (at most one 128-episode chunk of
the engine, :data:`.engine.CHUNK`), episode after episode and, within an episode, every seed in the order the numpy
loop's batched operations take them. Per episode, operation for operation as numpy does it
(docs/performance.md#same-bytes-the-rule-every-speed-up-follows), for the transition family ``p``, with reward
regression (seed 000 Alg. 1 line 10) the reward family ``r``, and with variance weights (seed 003 Alg. 3) the family
``q`` of x = phi_{V^2}, y = V^2:

1. server: Sigma_{k,h} = G_{k,h} + (lambda + shift_k) I (engine.py step 1; ``(lam + shift) * eye`` then the sum),
   its positive-definiteness test and inverse by numpy's own ``dpotrf`` / ``dgesv`` (:mod:`.lapack`; the calls
   ``np.linalg.cholesky`` and ``np.linalg.inv`` make, on the same column-major copies); a matrix that is not PD
   (or a singular one) stops the loop: the caller computes that episode's inverses with
   :func:`.aggregators.safe_inverse` (the eigenvalue floor, docs/learners.md#common-repairs) and resumes with them;
2. theta_{k,h} = Sigma^{-1} u_{k,h}, as ``np.einsum("bhij,bhj->bhi")`` sums: numpy's einsum inner loop
   (``sum_of_products_contig_contig_outstride0_two``, two SIMD lanes of numpy's 128-bit baseline build, blocks of eight
   unrolled from the last pair down, the lanes added, then the sum added to the zeroed output): :func:`einsum_dot`;
3. seed 000 only: the reward part of Q, mean_h(s, a) = <varphi, theta_r> + beta_r ||varphi||_{Sigma_r^{-1}}
   (engine.py, ``mean``): ``np.einsum("xe,bhe->bhx")`` (:func:`einsum_dot` again), ``np.einsum("xe,bhef->bhxf")``
   (a sequential sum over e of products, each added to the zeroed output: the loop ``stride0_contig_outcontig_two``),
   the row sums of the products with varphi in numpy's pairwise order, ``np.maximum(., 0)``, the square root;
4. the greedy backward planning of :func:`.planning_jit.plan_greedy` (seed 001 Alg. 1 lines 4-6, seed 003 Alg. 1,
   seed 000 Alg. 1 line 10), its arithmetic unchanged (one gemm V F for the whole batch, then per seed phi
   Sigma^{-1}, phi theta, numpy's pairwise row sums, the clip), with the known rewards or mean_h as the reward part,
   written into buffers kept across episodes (:func:`plan_into`); a non-finite Q stops the loop (the caller raises
   as :func:`.planning.plan` does);
5. uniformly random tie-breaking among maximisers within 1e-12 max(1, r_max H) (engine.py step 3), the exact value
   of the greedy policy (:meth:`TabularMDP.evaluate_kernel`: V = r_pi + P_pi V, one gemv per seed and stage) and
   the regret V*_1(s_1) - V^pi_1(s_1) (step 4); under mirror descent (private-linopt-po) the policy ``probs`` =
   numpy's exp of :func:`md_exponent`'s ``z``, normalised (:func:`md_policy`, numpy's own exp loop called from here,
   :mod:`.numpy_loops`; or made by the caller between one-episode calls): V_h = <Q_h, pi_h> in the
   planning, the policy's value by :func:`..tabular.po_jit.policy_values` and the actions by the agent's uniforms
   (:func:`md_act_and_roll`);
6. the roll-out with the environment's next-state CDF (:meth:`TabularMDP.sample_next`: the first s' with u < F(s'))
   and the statistics x_h = phi_{V_{h+1}}(s_h, a_h), y_h = V_{h+1}(s_{h+1}) (step 5), for ``r``
   x = varphi(s_h, a_h), y = clip(r_h, 0, r_max), and for ``q`` the variance weights of seed 003 Alg. 3
   (:func:`variance_weights`: x / sigma_bar, y / sigma_bar for ``p``);
7. the release (step 6), family by family in the engine's update order p, r, q: :data:`LOCAL`, each user's
   messages summed into G and u (Gaussian: :func:`.messages_jit.messages`; Laplace: :func:`laplace_messages`);
   :data:`TREE`, one continual counter per release group (:func:`tree_update`: the arithmetic of
   :meth:`privacct.mechanisms.TreeCounter.add`, or of a ``tree-honaker`` or ``blt``
   :class:`privacct.counters.counter.FactorizedCounter`'s step, Gaussian or Laplace draws); :data:`EXACT` (no privacy), the
   Sherman-Morrison update of Sigma^{-1} and the exact sums (:func:`ridge_update`), and for UCRL-VTR, whose radius
   reads it, log det(Sigma / lambda I) accumulated with numpy's own ``log1p`` loop (:func:`logdet_beta`).

The noise and the roll-out and tie-breaking uniforms are drawn by the caller, per seed, from the same generators in
the same order as the numpy loop (:mod:`.noise_ahead`), and the ledger is written by the caller, one record per
message or tree node in the same order. ``cache=True`` keeps the compilation out of later processes; the LAPACK
routines and numpy's loops are passed as addresses (:func:`.numpy_loops.ccall`), so no library address is compiled
in.
"""

from __future__ import annotations

import functools
from collections import namedtuple

import numba
import numpy as np

from privacct.counters.blt_jit import blt_recursion
from privacct.counters.tree_honaker_jit import honaker_finish

from ..tabular.po_jit import policy_values as stochastic_values
from ..tabular.po_jit import row_sums
from .messages_jit import messages
from .numpy_loops import ccall as _ccall
from .numpy_loops import unary_into
from ..policy_value_jit import greedy_policy_value
from ..row_max_jit import subtract_row_max
from .planning_jit import _clip, _pairwise

#: status codes of :func:`run_chunk`
DONE, NOT_PD, NOT_FINITE, NOT_FINITE_WEIGHT = 0, 1, 2, 3
#: how :func:`run_chunk` aggregates: local messages (LDP), binary-tree counters (JDP) or exact statistics with
#: Sherman-Morrison updates of Sigma^{-1} (no privacy)
LOCAL, TREE, EXACT = 0, 1, 2
#: a release group's statistic and noise (``Family.kinds``): Gram or target, Gaussian (symmetric matrix / vector of
#: normals, :func:`.messages_jit.messages` reads 0 as Gram and anything else as target) or Laplace (the upper triangle
#: / the vector, each value E1 - E2 of two exponentials)
GRAM_GAUSS, TARGET_GAUSS, GRAM_LAPLACE, TARGET_LAPLACE = 0, 1, 2, 3
#: a family's JDP counters (``Family.ST``, one strategy for every group): the printed binary tree
#: (:class:`privacct.mechanisms.TreeCounter`), or a :class:`privacct.counters.counter.FactorizedCounter` of
#: ``tree-honaker`` or ``blt`` (:func:`tree_update`)
BINARY, HONAKER, BLT = 0, 1, 2
#: whose data an episode's roll-out is (:func:`_roll`): the environment's, or in an audited run (engine's
#: ``AuditHook``, :mod:`.canary`) canary A's response function (the state kept, r_max), canary B's (the last state,
#: 0 at the first step then r_max), or the LDP canary's fixed trajectory
ENV, STAY, JUMP, FIXED = 0, 1, 2, 3

#: One regression family's state and schedule, as :func:`run_chunk` takes it (a numba-typed namedtuple). ``G`` (B, H,
#: d, d), ``u`` (B, H, d): the server's statistics (updated); ``Sinv`` (B, H, d, d): the inverses (written; given by
#: the caller after a stop); ``lamshift`` (m,): lambda + shift_k of the chunk's episodes; ``beta`` (m, H): bonus_scale
#: x radius_k; ``kinds``, ``hs``, ``sc``: per release group its statistic and noise (:data:`GRAM_GAUSS` ...), its
#: stage, its noise scale, in the update order; ``rows``, ``cols``: the upper triangle of d x d; ``slot`` and ``AG`` ... ``RT``: the tree counters'
#: state (:func:`tree_update`; empty for LOCAL); ``LD`` (B, H): EXACT under a radius that reads it (UCRL-VTR), the
#: aggregator's log det(Sigma / lambda I), updated (:func:`ridge_update`); else empty. ``ST``: the family's counter
#: strategy (:data:`BINARY` ...; the stacks then hold that counter's state, :func:`tree_update`), ``HW`` (levels,)
#: tree-honaker's level weights, ``CP``, ``CQ`` (nb,) the BLT recursion's P_1..P_nb, Q_1..Q_nb (empty otherwise).
Family = namedtuple("Family", "G u Sinv lamshift beta kinds hs sc rows cols slot AG NG XG RG AT NT XT RT LD ST HW CP CQ")


@numba.njit(cache=True, inline="always")
def einsum_dot(a, b, n):
    """sum_j a[j] b[j] as numpy's einsum sums it (module docstring, step 2): lanes j even / j odd, each block of
    eight added from its last pair down (``muladd(a0, b0, muladd(a1, b1, ...))``), the tail pair by pair (a missing
    odd term adds 0 * 0), the two lanes added, and the sum added to the output's 0."""
    l0 = 0.0
    l1 = 0.0
    j = 0
    while n - j >= 8:
        l0 = a[j + 6] * b[j + 6] + l0
        l1 = a[j + 7] * b[j + 7] + l1
        l0 = a[j + 4] * b[j + 4] + l0
        l1 = a[j + 5] * b[j + 5] + l1
        l0 = a[j + 2] * b[j + 2] + l0
        l1 = a[j + 3] * b[j + 3] + l1
        l0 = a[j] * b[j] + l0
        l1 = a[j + 1] * b[j + 1] + l1
        j += 8
    while j < n:
        l0 = a[j] * b[j] + l0
        if j + 1 < n:
            l1 = a[j + 1] * b[j + 1] + l1
        else:
            l1 = 0.0 * 0.0 + l1
        j += 2
    return 0.0 + (l0 + l1)


@numba.njit(cache=True)
def solve_identity(a, rhs, out, ipiv, iv, gesv):
    """``out`` = a^-1 by ``dgesv`` on ``a``, already the column-major copy (overwritten), the identity as right-hand
    side (``rhs`` scratch), read back from column-major: ``np.linalg.inv``'s call. False when dgesv reports a singular
    matrix (numpy raises there). ``iv`` (4,) int64 and ``ipiv`` (d,) int64 scratch; ``gesv`` the routine's address."""
    d = a.shape[0]
    for i in range(d):
        for j in range(d):
            rhs[j, i] = 1.0 if i == j else 0.0
    iv[0] = d
    iv[1] = d
    iv[2] = d
    iv[3] = 0
    _ccall(gesv, (iv[0:].ctypes.data, iv[1:].ctypes.data, a.ctypes.data, iv[2:].ctypes.data, ipiv.ctypes.data,
                  rhs.ctypes.data, iv[2:].ctypes.data, iv[3:].ctypes.data))
    if iv[3] != 0:
        return False
    for i in range(d):
        for j in range(d):
            out[j, i] = rhs[i, j]
    return True


@numba.njit(cache=True)
def cholesky_ok(a, iv, uplo, potrf):
    """``np.linalg.cholesky``'s positive-definiteness test: ``dpotrf('L')`` on ``a`` (d, d), already the column-major
    copy (overwritten by the factor), info 0. ``iv`` (>= 3,) int64 scratch, ``uplo`` the byte 'L', ``potrf`` the
    routine's address."""
    d = a.shape[0]
    iv[0] = d
    iv[1] = d
    iv[2] = 0
    _ccall(potrf, (uplo.ctypes.data, iv[0:].ctypes.data, a.ctypes.data, iv[1:].ctypes.data, iv[2:].ctypes.data))
    return iv[2] == 0


@numba.njit(cache=True)
def inverse_pd(S, out, work, ipiv, iv, uplo, potrf, gesv):
    """``out`` = S^{-1} when S (d, d) passes numpy's positive-definiteness test; returns whether it did.

    The test is ``np.linalg.cholesky``'s: ``dpotrf('L')`` on the column-major copy, info 0. The inverse is
    ``np.linalg.inv``'s: ``dgesv`` on the column-major copy with the identity as right-hand side, read back from
    column-major. ``potrf``, ``gesv``: the routines' addresses (:func:`.lapack.routines`); ``iv`` (4,) int64 and
    ``ipiv`` (d,) int64 scratch, ``uplo`` the byte 'L'. False also when ``dgesv`` reports a singular matrix (numpy
    raises there; the caller's numpy path then does what numpy does)."""
    d = S.shape[0]
    a = work[0]
    f = work[1]
    rhs = work[2]
    for i in range(d):
        for j in range(d):
            a[j, i] = S[i, j]
            f[j, i] = S[i, j]
    if not cholesky_ok(a, iv, uplo, potrf):
        return False
    return solve_identity(f, rhs, out, ipiv, iv, gesv)


@numba.njit(cache=True)
def _same_bits(a, b):
    """Whether the float64 arrays ``a`` and ``b`` (contiguous, same shape) hold the same bits (-0.0 is not 0.0, a NaN
    only its own bits)."""
    av = a.reshape(-1).view(np.int64)
    bv = b.reshape(-1).view(np.int64)
    for i in range(av.size):
        if av[i] != bv[i]:
            return False
    return True


@numba.njit(cache=True)
def server(G, u, c, Sinv, theta, Sig, work, ipiv, iv, uplo, potrf, gesv, inverted, memo):
    """Step 1 and 2 for every seed and stage: Sigma = G + c I (``G + c * eye``), Sinv = Sigma^{-1} (unless
    ``inverted``: Sinv given), theta = einsum(Sinv, u). Returns False at the first Sigma that is not PD (Sinv then
    partly written; the caller recomputes it). A Sigma with the same bits as the last one inverted (``work[3]``,
    its inverse ``work[4]``, ``memo[0]`` 1 once they hold one) takes that inverse: the LAPACK calls are a function
    of their input's bits (the same column-major copies into the same scratch), so the bytes are those of inverting
    it again. A many-trial audit's first episode is data-free, one Sigma for every seed and stage (issue 23 item 4)."""
    B, H, d, _ = G.shape
    for b in range(B):
        for h in range(H):
            if not inverted:
                for i in range(d):
                    for j in range(d):
                        Sig[i, j] = G[b, h, i, j] + c * (1.0 if i == j else 0.0)
                if memo[0] and _same_bits(Sig, work[3]):
                    Sinv[b, h, :, :] = work[4]
                    continue
                if not inverse_pd(Sig, Sinv[b, h], work, ipiv, iv, uplo, potrf, gesv):
                    return False
                work[3, :, :] = Sig
                work[4, :, :] = Sinv[b, h]
                memo[0] = 1
    for b in range(B):
        for h in range(H):
            for i in range(d):
                theta[b, h, i] = einsum_dot(Sinv[b, h, i], u[b, h], d)
    return True


@numba.njit(cache=True)
def plan_into(F, R, M, xmap, rr, theta, Sinv, beta, caps, S, A, V, Vs, phis, Q, t, lin, row, md, probs, pa):
    """:func:`.planning_jit.plan_greedy` into the buffers Q (B, H, S, A), Vs (H+1, B, S) (row H stays 0), phis
    (H, B, S*A*d) (row H-1 stays 0), with work arrays V (B, S), t (S*A, d), lin (S*A,), row (d,): the same
    operations in the same order. The reward part of Q: the known rewards ``R`` (H, S*A), or with ``rr`` the per-seed
    ``M[:, :, xmap]`` (M (B, H, U) of :func:`reward_mean`; :func:`.planning.plan_numpy` with ``mean``: ``m = mean +
    phi theta + beta ||phi||``, added in that order, as plan_greedy adds R). ``md``: V_h = <Q_h, pi_h> for the
    stochastic policy ``probs`` (B, H, S, A) (:func:`.planning.plan_numpy` with ``probs``: ``(probs[:, h] * Q).sum(-1)``,
    the products then numpy's pairwise row sum; ``pa`` (A,) work) instead of max_a Q_h. Returns whether every Q is
    finite."""
    B, H, d = theta.shape
    SA = S * A
    Qf = Q.reshape(B, H, SA)   # row s*A + a, as Qall.reshape
    finite = True
    for b in range(B):
        for s in range(S):
            V[b, s] = 0.0
    for h in range(H - 1, -1, -1):
        cap = caps[h]
        if h < H - 1:
            np.dot(V, F, phis[h])  # (B, SA*d): the gemm np.tensordot makes
            for b in range(B):
                phi = phis[h, b].reshape(SA, d)
                np.dot(phi, Sinv[b, h], t)
                np.dot(phi, theta[b, h], lin)
                Qb = Qf[b, h]
                for i in range(SA):
                    if d < 8:   # numpy's row sum below 8 terms: sequential from 0 (_pairwise's first branch)
                        q = 0.0
                        for j in range(d):
                            q += t[i, j] * phi[i, j]
                    else:
                        for j in range(d):
                            row[j] = t[i, j] * phi[i, j]
                        q = _pairwise(row, d)
                    quad = q if (q >= 0.0 or q != q) else 0.0  # np.maximum(q, 0.0)
                    r = M[b, h, xmap[i]] if rr else R[h, i]
                    mm = (r + lin[i]) + beta[b, h] * np.sqrt(quad)
                    Qb[i] = _clip(mm, cap)
        else:
            for b in range(B):
                Qb = Qf[b, h]
                for i in range(SA):
                    Qb[i] = _clip(M[b, h, xmap[i]] if rr else R[h, i], cap)
        for b in range(B):
            Qb = Qf[b, h]
            for s in range(S):
                v = Qb[s * A]
                finite = finite and np.isfinite(v)
                for a in range(1, A):
                    q = Qb[s * A + a]
                    finite = finite and np.isfinite(q)
                    if q > v or q != q:
                        v = q
                if md:
                    for a in range(A):
                        pa[a] = probs[b, h, s, a] * Qb[s * A + a]
                    v = _pairwise(pa, A)
                V[b, s] = v
                Vs[h, b, s] = v
    return finite


@numba.njit(cache=True)
def reward_mean(vrows, theta_r, Sinv_r, beta_r, M, tr, prod):
    """M (B, H, U) = <varphi, theta_r> + beta_r sqrt(max(||varphi||^2_{Sigma_r^{-1}}, 0)) for each distinct row of the
    reward features ``vrows`` (U, d2) (:func:`distinct_rows`: rows equal bit for bit get equal values, so each is
    computed once), as the engine computes ``mean`` (module docstring, step 3): ``np.einsum("xe,bhe->bhx")``
    (:func:`einsum_dot`), ``np.einsum("xe,bhef->bhxf")`` (for each f a sequential sum over e of v[e] S[e, f], from
    the zeroed output), ``(tr * vphi).sum(-1)`` (pairwise), then ``mean + beta_r * sqrt(.)``. ``tr``, ``prod`` (d2,):
    work rows."""
    B, H, d2 = theta_r.shape
    U = vrows.shape[0]
    for b in range(B):
        for h in range(H):
            Sr = Sinv_r[b, h]
            br = beta_r[h]
            for x in range(U):
                v = vrows[x]
                lin = einsum_dot(v, theta_r[b, h], d2)
                for f in range(d2):
                    tr[f] = 0.0
                for e in range(d2):   # e outer, f inner: each tr[f] still sums over e in order (contiguous rows)
                    ve = v[e]
                    Se = Sr[e]
                    for f in range(d2):
                        tr[f] = ve * Se[f] + tr[f]
                for f in range(d2):
                    prod[f] = tr[f] * v[f]
                q = _pairwise(prod, d2)
                quad = q if (q >= 0.0 or q != q) else 0.0  # np.maximum(q, 0.0)
                M[b, h, x] = lin + br * np.sqrt(quad)


def distinct_rows(vphi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows of ``vphi`` (S*A, d2), bit for bit, in order of first appearance; each row's index among
    them): the reward part of Q depends on (s, a) only through its feature row, and one-hot reward features (both
    shipped environments) have d2 distinct rows for S*A pairs."""
    keys = [r.tobytes() for r in np.ascontiguousarray(vphi, dtype=float)]
    first: dict[bytes, int] = {}
    xmap = np.array([first.setdefault(k, len(first)) for k in keys], dtype=np.int64)
    rows = np.ascontiguousarray(vphi[[keys.index(k) for k in first]], dtype=float)
    return rows, xmap


@numba.njit(cache=True)
def act_and_roll(Q, tie_tol, pol_u, p, c, Rsa, P, cdf, s1, vstar, env_u, Vs, phis, regret, k, X, Y, pol, Ppi, rpi, Vv,
                 pe, rr, vphi, rmax, Xr, Yr, xs, role, s0, ctraj, acts, arow):
    """Steps 5 and 6 for every seed: greedy policy with random ties (``pol_u[:, p]``), regret at column k - 1, the
    roll-out (:func:`_roll`: the environment's with ``env_u[:, c]``, or an audited run's user ``role``), the
    visited pairs xs (B, H) = s_h A + a_h and the statistics X (B, H, d), Y (B, H), and with ``rr`` the reward
    family's Xr (B, H, d2) = varphi(s_h, a_h), Yr (B, H) = clip(r_h, 0, ``rmax``)."""
    B, H, S, A = Q.shape
    for b in range(B):
        for h in range(H):
            for s in range(S):
                qmax = Q[b, h, s, 0]
                for a in range(1, A):
                    if Q[b, h, s, a] > qmax:
                        qmax = Q[b, h, s, a]
                thr = qmax - tie_tol
                best = 0
                bv = pol_u[b, p, h, s, 0] if Q[b, h, s, 0] >= thr else -1.0
                for a in range(1, A):
                    w = pol_u[b, p, h, s, a] if Q[b, h, s, a] >= thr else -1.0
                    if w > bv:
                        bv = w
                        best = a
                pol[h, s] = best
        # exact value of the greedy policy (TabularMDP.evaluate_kernel)
        greedy_policy_value(pol, Rsa, P, Ppi, rpi, pe, Vv)
        regret[b, k - 1] = vstar - Vv[s1]
        # roll-out and statistics
        s = s1 if role == ENV else s0
        for h in range(H):
            a = ctraj[1, h] if role == FIXED else pol[h, s]
            s = _roll(b, h, s, a, role, ctraj, env_u[b, c, h], cdf, Rsa, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs,
                      acts, arow)


@numba.njit(cache=True)
def _roll(b, h, s, a, role, ctraj, u, cdf, Rsa, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs, acts, arow):
    """Seed ``b``'s step h from state s with action a by ``role``: :data:`ENV` the environment (:func:`_step`);
    :data:`STAY` / :data:`JUMP` canary A's / B's response (:func:`.canary.respond`); :data:`FIXED` the LDP canary's
    trajectory ``ctraj`` (3, H) (states, actions, next states: :func:`.canary.ldp_trajectory`; reward the
    environment's, as engine ``_canary_episode`` reads it). ``acts`` (B, n, H): the action kept at row ``arow``
    (an audited run's prescribed actions; empty otherwise). Returns the next state."""
    if acts.size:
        acts[b, arow, h] = a
    if role == ENV:
        return _step(b, h, s, a, u, cdf, Rsa, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs)
    A = cdf.shape[2]
    if role == STAY:
        nxt = s
        r = rmax
    elif role == JUMP:
        nxt = cdf.shape[1] - 1
        r = 0.0 if h == 0 else rmax
    else:
        s = ctraj[0, h]
        nxt = ctraj[2, h]
        r = Rsa[h, s * A + a]
    _statistics(b, h, s, a, nxt, r, A, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs)
    return nxt


@numba.njit(cache=True)
def _step(b, h, s, a, u, cdf, Rsa, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs):
    """Seed ``b``'s step h from state s with action a: the next state (the first s' with ``u`` < F(s'), returned)
    and the statistics xs, X, Y (and with ``rr`` Xr, Yr) of the step (step 6 of the module docstring)."""
    S = cdf.shape[1]
    A = cdf.shape[2]
    nxt = S - 1
    for sp in range(S):
        if u < cdf[h, s, a, sp]:
            nxt = sp
            break
    _statistics(b, h, s, a, nxt, Rsa[h, s * A + a], A, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs)
    return nxt


@numba.njit(cache=True)
def _statistics(b, h, s, a, nxt, r, A, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs):
    """The statistics of seed ``b``'s step h, (s, a) -> ``nxt`` with reward ``r``: xs, X = phi_V(s, a), Y =
    V_{h+1}(nxt), with ``rr`` Xr = varphi(s, a), Yr = clip(r, 0, ``rmax``) (step 6 of the module docstring)."""
    d = X.shape[2]
    xs[b, h] = s * A + a
    base = (s * A + a) * d
    for j in range(d):
        X[b, h, j] = phis[h, b, base + j]
    Y[b, h] = Vs[h + 1, b, nxt]
    if rr:
        x = s * A + a
        for j in range(Xr.shape[2]):
            Xr[b, h, j] = vphi[x, j]
        Yr[b, h] = _clip(r, rmax)


@numba.njit(cache=True)
def md_act_and_roll(probs, act_u, c, R3, P2, Rsa, cdf, s1, vstar, env_u, Vs, phis, regret, k, X, Y, rr, vphi, rmax,
                    Xr, Yr, xs, role, s0, ctraj, acts, arow):
    """Steps 5 and 6 under mirror descent (private-linopt-po, engine.py): the regret of the stochastic policy
    ``probs`` (B, H, S, A) at column k - 1 (:meth:`TabularMDP.policy_values`, :func:`..tabular.po_jit.policy_values`:
    a gemm over the seeds, as numpy's matmul; ``R3`` (H, S, A), ``P2`` (H, S*A, S) the MDP's), then per seed the
    roll-out (:func:`_roll`, ``role``) with the action ``min(#{a: u >= cumsum(pi_h(s))_a}, A - 1)`` at the agent's
    uniform ``act_u[b, c, h]`` (``np.cumsum`` sequential) and the statistics."""
    B, H, S, A = probs.shape
    vals = stochastic_values(R3, P2, probs, s1, np.empty((B, S)), np.empty((B, S * A)), np.empty(A))
    for b in range(B):
        regret[b, k - 1] = vstar - vals[b]
        s = s1 if role == ENV else s0
        for h in range(H):
            if role == FIXED:
                a = ctraj[1, h]
            else:
                u = act_u[b, c, h]
                acc = 0.0
                n = 0
                for a in range(A):
                    acc = probs[b, h, s, 0] if a == 0 else acc + probs[b, h, s, a]
                    if u >= acc:
                        n += 1
                a = n if n < A - 1 else A - 1
            s = _roll(b, h, s, a, role, ctraj, env_u[b, c, h], cdf, Rsa, Vs, phis, X, Y, rr, vphi, rmax, Xr, Yr, xs,
                      acts, arow)


@numba.njit(cache=True)
def md_exponent(Q, cumQ, eta, z):
    """After the episode: ``cumQ += Q``, then the exponent of the next policy, ``z = eta cumQ - max_a (eta cumQ)``
    (numpy's ``maximum`` reduce); the caller takes ``np.exp(z)`` and its row sums with numpy's own loops."""
    B, H, S, A = Q.shape
    for b in range(B):
        for h in range(H):
            for s in range(S):
                for a in range(A):
                    cumQ[b, h, s, a] = cumQ[b, h, s, a] + Q[b, h, s, a]
                    z[b, h, s, a] = eta * cumQ[b, h, s, a]
                subtract_row_max(z[b, h, s])


@numba.njit(cache=True)
def md_policy(expf, z, ez, zsum, probs, iv):
    """The mirror-descent policy from its exponent, as the engine's numpy calls make it: ``np.exp(z, out=ez)`` (numpy's
    own loop at address ``expf``, on the whole (B, H, S, A) buffer as numpy runs it), ``row_sums(ez, zsum)`` (numpy's
    pairwise row sums), ``np.divide(ez, zsum, out=probs)`` (one IEEE division per value)."""
    unary_into(expf, z, ez, z.size, iv)
    row_sums(ez, zsum)
    B, H, S, A = z.shape
    for b in range(B):
        for h in range(H):
            for s in range(S):
                t = zsum[b, h, s, 0]
                for a in range(A):
                    probs[b, h, s, a] = ez[b, h, s, a] / t


@numba.njit(cache=True)
def _level(t):
    """The level of the tree node that completes at step t (its lowest set bit)."""
    i = 0
    while ((t >> i) & 1) == 0:
        i += 1
    return i


@numba.njit(cache=True)
def _tree_add(i, alpha, noise, exact, rel, b, x, nz, sa, sn):
    """:meth:`privacct.mechanisms.TreeCounter.add` of ``x`` (flat) for seed ``b`` at a step whose node has level
    ``i``, the node noise ``nz`` (flat, already scale x the normals, mirrored for a Gram group): ``alpha``, ``noise``
    (levels, B, m), ``exact``, ``rel`` (m,) the counter's ``_alpha``, ``_noise``, ``_exact[b]``, ``_release[b]``.
    Each element through numpy's operations in numpy's order: ``alpha[:i].sum(0)`` and ``noise[:i].sum(0)`` are
    sequential sums from 0 over the levels (as in :func:`privacct.algorithms.tabular.episode_jit._tree_add`)."""
    m = x.size
    for e in range(m):
        sa[e] = 0.0
        sn[e] = 0.0
    for q in range(i):
        aq = alpha[q, b]
        nq = noise[q, b]
        for e in range(m):
            sa[e] += aq[e]
            sn[e] += nq[e]
    if i:
        for e in range(m):
            rel[e] = rel[e] - (sa[e] + sn[e])
    al = alpha[i, b]
    ni = noise[i, b]
    for e in range(m):
        al[e] = sa[e] + x[e]
    for q in range(i):
        alpha[q, b, :] = 0.0
        noise[q, b, :] = 0.0
    for e in range(m):
        ni[e] = nz[e]
        exact[e] += x[e]
        rel[e] = rel[e] + (al[e] + ni[e])


@numba.njit(cache=True)
def _node(buf, b, p, kind, s, mu, d, rows, cols, nz):
    """One draw's noise of seed ``b`` from ``buf[b, p:]`` into ``nz`` (flat), as the primitives make it
    (:func:`privacct.mechanisms.symmetric_gaussian`: the next mu normals x scale on the upper triangle, mirrored into
    the d x d matrix; :func:`privacct.mechanisms.gaussian`: d normals x scale; :func:`privacct.mechanisms.laplace`:
    (E1 - E2) x scale from the next two blocks of exponentials). Returns the values read."""
    if kind == GRAM_GAUSS:
        for t in range(mu):
            z = buf[b, p + t] * s
            nz[rows[t] * d + cols[t]] = z
            nz[cols[t] * d + rows[t]] = z
        return mu
    if kind == GRAM_LAPLACE:
        for t in range(mu):
            z = buf[b, p + t] - buf[b, p + mu + t]
            nz[t] = z * s
        return 2 * mu
    if kind == TARGET_LAPLACE:
        for e in range(d):
            z = buf[b, p + e] - buf[b, p + d + e]
            nz[e] = z * s
        return 2 * d
    for e in range(d):
        nz[e] = buf[b, p + e] * s
    return d


@numba.njit(cache=True)
def _honaker_add(k, x, buf, b, p, kind, s, mu, d, rows, cols, hw, est, noise, exact, cur, y):
    """:meth:`privacct.counters.counter.FactorizedCounter.add` of ``x`` (flat, m values) at step ``k`` for seed ``b``
    under ``tree-honaker`` (privacct/counters/tree_honaker.py ``step``): the leaf [k, k] drawn first, then the nodes
    [k - 2^i + 1, k], i = 1..nu(k), each estimate ``w y + (1 - w)(est[i - 1] + est)`` with w = ``hw[i]`` (the
    strategy's own ``_honaker_weight``); ``_noise -= _est[i]`` for i < nu(k) in order, ``_est[nu] = est``, ``_noise +=
    est``, ``_exact += x``. ``est`` (levels, B, m), ``noise``, ``exact`` (B, m): the counter's ``_est``, ``_noise``,
    ``_exact``; ``cur``, ``y`` (m,) work. Element by element numpy's operations in numpy's order. Returns the next
    unread value of ``buf``."""
    m = x.size
    nu = _level(k)
    p += _node(buf, b, p, kind, s, mu, d, rows, cols, cur)
    for i in range(1, nu + 1):
        p += _node(buf, b, p, kind, s, mu, d, rows, cols, y)
        w = hw[i]
        om = 1.0 - w
        lo = est[i - 1, b]
        for e in range(m):
            cur[e] = w * y[e] + om * (lo[e] + cur[e])
    honaker_finish(nu, cur, est, b, noise[b], exact[b], x)
    return p


@numba.njit(cache=True)
def _blt_add(k, x, buf, b, p, kind, s, mu, d, rows, cols, P, Q, zh, uh, noise, exact, z, u):
    """:meth:`privacct.counters.counter.FactorizedCounter.add` of ``x`` (flat, m values) at step ``k`` for seed ``b``
    under ``blt`` (:meth:`privacct.counters.blt.Blt.mix_noise`): the draw z_k, ``u = z``, then for j = 1..nb in order
    ``u = u + P_j zh[(k - j) % nb]`` and ``u = u - Q_j uh[(k - j) % nb]`` (each product rounded, then added), ``zh[k %
    nb] = z``, ``uh[k % nb] = u``, ``_noise += u``, ``_exact += x``. ``P``, ``Q`` (nb,): the counter's ``_P``, ``_Q``;
    ``zh``, ``uh`` (nb, B, m) its ``_zhist``, ``_uhist``; ``noise``, ``exact`` (B, m); ``z``, ``u`` (m,) work. Returns the
    next unread value of ``buf``."""
    m = x.size
    nb = P.shape[0]
    p += _node(buf, b, p, kind, s, mu, d, rows, cols, z)
    for e in range(m):
        u[e] = z[e]
    blt_recursion(k, P, Q, zh, 0, uh, 0, b, u)
    cur = k % nb
    zc = zh[cur, b]
    uc = uh[cur, b]
    ex = exact[b]
    nn = noise[b]
    for e in range(m):
        zc[e] = z[e]
        uc[e] = u[e]
        ex[e] += x[e]
        nn[e] += u[e]
    return p


@numba.njit(cache=True)
def blt_impulse(P, Q, out):
    """``out`` (n,) = l_0..l_(n-1), the release noise of :func:`_blt_add` on one scalar value fed z = (1, 0, ..., 0):
    the impulse response of the recursion the compiled loop runs (compared with the counter's own,
    :func:`.engine._blt_step_ok`)."""
    nb = P.shape[0]
    zh = np.zeros((nb, 1, 1))
    uh = np.zeros((nb, 1, 1))
    noise = np.zeros((1, 1))
    exact = np.zeros((1, 1))
    x = np.zeros(1)
    buf = np.zeros((1, 1))
    rc = np.zeros(1, dtype=np.int64)
    z = np.empty(1)
    u = np.empty(1)
    for t in range(1, out.size + 1):
        buf[0, 0] = 1.0 if t == 1 else 0.0
        _blt_add(t, x, buf, 0, 0, TARGET_GAUSS, 1.0, 1, 1, rc, rc, P, Q, zh, uh, noise, exact, z, u)
        out[t - 1] = noise[0, 0]


@numba.njit(cache=True)
def tree_update(k, G, u, X, Y, kinds, hs, sc, slot, AG, NG, XG, RG, AT, NT, XT, RT, buf, pos, rows, cols, st, hw, cp,
                cq):
    """:meth:`.aggregators.TreeNoise.update` of every group of a family at episode k (one addition per group, in
    order). The addition: ``np.einsum("bi,bj->bij", x, x)`` (each product plus the zeroed output; its upper triangle
    for a Laplace group, whose counter holds d(d+1)/2 values) or ``x * y``. The counter, per ``st`` (one for the
    family): :data:`BINARY` the printed tree, its node's noise per ``kinds`` (:func:`_node`), the tree's arithmetic
    (:func:`_tree_add`), ``AG``, ``NG`` (n, levels, B, m) its ``_alpha``, ``_noise``, ``XG``, ``RG`` (n, B, m) its
    ``_exact``, ``_release``; :data:`HONAKER` (:func:`_honaker_add`, weights ``hw``: ``AG`` the ``_est``, ``XG``,
    ``RG`` the ``_exact``, ``_noise``) or :data:`BLT` (:func:`_blt_add`, coefficients ``cp``, ``cq``: ``AG``, ``NG``
    the ``_zhist``, ``_uhist``), whose release is ``_exact + _noise`` (``noisy_sum``). Then G[:, h] (mirrored from the
    upper triangle for a Laplace group: :func:`privacct.mechanisms.symmetric_from_upper`) or u[:, h] = the release.
    ``slot``: the group's index among the family's Gram (``AG`` ...) or target (``AT`` ...) counters. Returns the next
    unread value of ``buf``."""
    B, H, d = X.shape
    mu = rows.size
    i = _level(k)
    xg = np.empty(d * d)
    ng = np.empty(d * d)
    yg = np.empty(d * d)
    xt = np.empty(d)
    nt = np.empty(d)
    yt = np.empty(d)
    sa = np.empty(d * d)
    sn = np.empty(d * d)
    rg = np.empty(d * d)
    for gi in range(kinds.size):
        h = hs[gi]
        s = sc[gi]
        j = slot[gi]
        kind = kinds[gi]
        gram = kind == GRAM_GAUSS or kind == GRAM_LAPLACE
        p0 = pos
        for b in range(B):
            p = p0
            if kind == GRAM_GAUSS:
                m = d * d
                for r in range(d):
                    for c in range(d):
                        xg[r * d + c] = X[b, h, r] * X[b, h, c] + 0.0
            elif kind == GRAM_LAPLACE:
                m = mu
                for t in range(mu):
                    xg[t] = X[b, h, rows[t]] * X[b, h, cols[t]] + 0.0
            else:
                m = d
                y = Y[b, h]
                for e in range(d):
                    xt[e] = X[b, h, e] * y
            x = xg[:m] if gram else xt
            nz = ng[:m] if gram else nt
            if st == BINARY:
                p += _node(buf, b, p, kind, s, mu, d, rows, cols, nz)
                if gram:
                    rel = RG[j, b]
                    _tree_add(i, AG[j], NG[j], XG[j, b], rel, b, x, nz, sa, sn)
                else:
                    rel = RT[j, b]
                    _tree_add(i, AT[j], NT[j], XT[j, b], rel, b, x, nz, sa, sn)
            else:
                rel = rg[:m]
                if st == HONAKER:
                    if gram:
                        p = _honaker_add(k, x, buf, b, p, kind, s, mu, d, rows, cols, hw, AG[j], RG[j], XG[j], nz,
                                         yg[:m])
                    else:
                        p = _honaker_add(k, x, buf, b, p, kind, s, mu, d, rows, cols, hw, AT[j], RT[j], XT[j], nz,
                                         yt)
                else:
                    if gram:
                        p = _blt_add(k, x, buf, b, p, kind, s, mu, d, rows, cols, cp, cq, AG[j], NG[j], RG[j], XG[j],
                                     nz, yg[:m])
                    else:
                        p = _blt_add(k, x, buf, b, p, kind, s, mu, d, rows, cols, cp, cq, AT[j], NT[j], RT[j], XT[j],
                                     nz, yt)
                ex = XG[j, b] if gram else XT[j, b]
                nn = RG[j, b] if gram else RT[j, b]
                for e in range(m):
                    rel[e] = ex[e] + nn[e]
            if kind == GRAM_GAUSS:
                for r in range(d):
                    for c in range(d):
                        G[b, h, r, c] = rel[r * d + c]
            elif kind == GRAM_LAPLACE:
                for t in range(mu):
                    G[b, h, rows[t], cols[t]] = rel[t]
                    G[b, h, cols[t], rows[t]] = rel[t]
            else:
                for e in range(d):
                    u[b, h, e] = rel[e]
            pos = p
    return pos


@numba.njit(cache=True)
def laplace_messages(G, u, X, Y, kinds, hs, sc, buf, pos, rows, cols):
    """:meth:`.aggregators.LocalNoise.update` of one family's Laplace groups (seed 003 Rem. 1 / App. C.4), in order:
    ``add_noise(upper(einsum outer), "laplace")`` summed into G mirrored (``G[:, h] += sym(msg)``), ``add_noise(x y,
    "laplace")`` into u: value + (E1 - E2) x scale with E1, E2 the next two blocks of exponentials of ``buf``
    (:func:`privacct.mechanisms.laplace`). Returns the next unread exponential."""
    B, H, d = X.shape
    mu = rows.size
    for gi in range(kinds.size):
        h = hs[gi]
        s = sc[gi]
        if kinds[gi] == GRAM_LAPLACE:
            for b in range(B):
                for t in range(mu):
                    r = rows[t]
                    c = cols[t]
                    z = buf[b, pos + t] - buf[b, pos + mu + t]
                    z *= s
                    msg = (X[b, h, r] * X[b, h, c] + 0.0) + z
                    G[b, h, r, c] += msg
                    if r != c:
                        G[b, h, c, r] += msg
            pos += 2 * mu
        else:
            for b in range(B):
                y = Y[b, h]
                for e in range(d):
                    z = buf[b, pos + e] - buf[b, pos + d + e]
                    z *= s
                    u[b, h, e] += X[b, h, e] * y + z
            pos += 2 * d
    return pos


@numba.njit(cache=True)
def quad_einsum(x, S, d):
    """x^T S x as ``np.einsum("bhi,bhij,bhj->bh")`` sums it (three operands, no SIMD): one accumulator over (i, j) in
    row-major order of the products (x_i S_ij) x_j, flushed into the zeroed output every (8192 // d) rows' worth of
    terms (numpy's 8192-element buffer, rounded down to whole rows), so for d <= 90 one sum."""
    chunk = (8192 // d) * d
    out = 0.0
    acc = 0.0
    n = 0
    for i in range(d):
        xi = x[i]
        Si = S[i]
        for j in range(d):
            acc += (xi * Si[j]) * x[j]
            n += 1
            if n == chunk:
                out = acc + out
                acc = 0.0
                n = 0
    if n:
        out = acc + out
    return out


@numba.njit(cache=True)
def x2_row(f, v, out):
    """out = phi_{V^2}(s, a) = sum_{s'} f[s'] V(s')^2 (``f`` (S, d) the pair's features), as ``np.einsum("bsd,bs->bd",
    ., V ** 2)`` sums it: for each coordinate a sequential sum over s' of f x V^2, from the zeroed output."""
    S, d = f.shape
    for j in range(d):
        out[j] = 0.0
    for sp in range(S):
        w = v[sp] * v[sp]
        fs = f[sp]
        for j in range(d):
            out[j] = fs[j] * w + out[j]


@numba.njit(cache=True)
def variance_weights(X, Y, xs, Vs, F3, theta, Sinv, theta_q, Sinv_q, vs, wfloor, bc, bt, X2, Y2):
    """Seed 003 Alg. 3's user side (engine.py ``statistics`` and ``_Weights``): x2_h = phi_{V_{h+1}^2}(s_h, a_h)
    (``np.einsum("bsd,bs->bd", features, V ** 2)``: for each coordinate a sequential sum over s' of feature x V^2,
    from the zeroed output), y2 = y^2; sigma_bar^2 = max(vs^2 / d, clip(<x2, w~>, 0, vs^2) - clip(<x, w^>, 0, vs)^2
    + min(vs^2, 2 vs beta-check ||x||_{Lambda^-1}) + min(vs^2, beta-tilde ||x2||_{Lambda~-1})) with numpy's scalar
    minimum / maximum (NaN kept); then x / sigma_bar, y / sigma_bar in place of X, Y. ``F3`` (S*A, S, d) the
    features, ``wfloor`` = vs * vs / d, ``bc``, ``bt`` = bonus_scale x beta-check_k, beta-tilde_k. Returns False when a
    sigma_bar is not finite (nothing changed but X2, Y2)."""
    B, H, d = X.shape
    vv = vs * vs
    c1 = 2 * vs * bc
    for b in range(B):
        for h in range(H):
            x2_row(F3[xs[b, h]], Vs[h + 1, b], X2[b, h])
            Y2[b, h] = Y[b, h] * Y[b, h]
    for b in range(B):
        for h in range(H):
            m1 = _clip(einsum_dot(X[b, h], theta[b, h], d), vs)
            m2 = _clip(einsum_dot(X2[b, h], theta_q[b, h], d), vv)
            q1 = quad_einsum(X[b, h], Sinv[b, h], d)
            q2 = quad_einsum(X2[b, h], Sinv_q[b, h], d)
            n1 = np.sqrt(q1 if (q1 >= 0.0 or q1 != q1) else 0.0)
            n2 = np.sqrt(q2 if (q2 >= 0.0 or q2 != q2) else 0.0)
            e1 = c1 * n1
            e2 = bt * n2
            E = (vv if vv <= e1 else e1) + (vv if vv <= e2 else e2)   # np.minimum: NaN kept
            s2 = m2 - m1 * m1 + E
            s2 = wfloor if (wfloor >= s2 or wfloor != wfloor) else s2   # np.maximum
            if not np.isfinite(s2):
                return False
            sb = np.sqrt(s2)
            for j in range(d):
                X[b, h, j] = X[b, h, j] / sb
            Y[b, h] = Y[b, h] / sb
    return True


@numba.njit(cache=True)
def ridge_update(G, u, Minv, X, Y, Mx, LD, log1p):
    """:meth:`.aggregators.ExactRidge.update`: Mx = ``np.einsum("bhij,bhj->bhi", Minv, X)``, q =
    ``np.einsum("bhi,bhi->bh", X, Mx)`` (:func:`einsum_dot`), Minv -= (Mx_i Mx_j + 0) / (1 + q) (the einsum outer
    product, then the division), G += x_i x_j + 0, u += x y; with ``log1p`` (the address of numpy's own float64
    ``log1p`` loop, :func:`.numpy_loops.address`; 0: no log det kept) also ``LD += np.log1p(q)`` (B, H), numpy's loop
    on the (B, H) values of q, as ``self._logdet += np.log1p(q)``. ``Mx`` (d,): work row."""
    B, H, d = X.shape
    keep = log1p != 0
    qs = np.empty((B, H))
    for b in range(B):
        for h in range(H):
            M = Minv[b, h]
            x = X[b, h]
            for i in range(d):
                Mx[i] = einsum_dot(M[i], x, d)
            q = einsum_dot(x, Mx, d)
            qs[b, h] = q
            den = 1.0 + q
            for i in range(d):
                for j in range(d):
                    M[i, j] = M[i, j] - (Mx[i] * Mx[j] + 0.0) / den
            for i in range(d):
                for j in range(d):
                    G[b, h, i, j] = G[b, h, i, j] + (x[i] * x[j] + 0.0)
            y = Y[b, h]
            for i in range(d):
                u[b, h, i] = u[b, h, i] + x[i] * y
    if keep:
        lq = np.empty((B, H))
        unary_into(log1p, qs, lq, B * H, np.empty(5, dtype=np.int64))
        for b in range(B):
            for h in range(H):
                LD[b, h] = LD[b, h] + lq[b, h]


@numba.njit(cache=True)
def logdet_beta(LD, radf, out):
    """out (B, H) = bonus_scale x (c_theta + cap_h sqrt(c + max(LD, 0))), UCRL-VTR's radius as the numpy loop takes it
    (``bonus_scale * radius_p(k, logdet)``, :attr:`.design.Design.logdet_radius`, seed 001 Sec. 6.2): ``radf`` =
    (c_theta, c, bonus_scale, cap_0 .. cap_{H-1}); ``np.maximum`` with numpy's NaN rule, then one IEEE operation each,
    in the expression's order."""
    B, H = LD.shape
    ct = radf[0]
    c = radf[1]
    bs = radf[2]
    for b in range(B):
        for h in range(H):
            v = LD[b, h]
            m = v if (v >= 0.0 or v != v) else 0.0   # np.maximum(logdet, 0.0)
            out[b, h] = bs * (ct + radf[3 + h] * np.sqrt(c + m))


@numba.njit(cache=True)
def _release(mode, k, last, fam, X, Y, buf, pos, log1p):
    """Step 7 for one family (:data:`Family`): its messages (LOCAL), its trees' additions (TREE, episodes <= last) or
    its exact statistics (EXACT; ``fam.Sinv`` is the aggregator's Minv; with ``log1p`` its log det ``fam.LD``)."""
    if mode == EXACT:
        ridge_update(fam.G, fam.u, fam.Sinv, X, Y, np.empty(X.shape[2]), fam.LD, log1p if fam.LD.size else 0)
        return pos
    if mode == LOCAL:
        if fam.kinds.size and fam.kinds[0] >= GRAM_LAPLACE:   # a family's groups share one mechanism (engine)
            return laplace_messages(fam.G, fam.u, X, Y, fam.kinds, fam.hs, fam.sc, buf, pos, fam.rows, fam.cols)
        return messages(fam.G, fam.u, X, Y, fam.kinds, fam.hs, fam.sc, buf, pos, fam.rows, fam.cols)
    if k <= last:
        return tree_update(k, fam.G, fam.u, X, Y, fam.kinds, fam.hs, fam.sc, fam.slot, fam.AG, fam.NG, fam.XG, fam.RG,
                           fam.AT, fam.NT, fam.XT, fam.RT, buf, pos, fam.rows, fam.cols, fam.ST, fam.HW, fam.CP, fam.CQ)
    return pos


@numba.njit(cache=True)
def run_chunk(mode, rr, vr, k0, m, c0, p0, given, fp, fr, fq, F, R, caps, tie_tol, P, cdf, s1, vstar, env_u, pol_u,
              vphi, vrows, xmap, rmax, F3, vs, wfloor, bcs, bts, buf, pos, regret, potrf, gesv, last,
              md, probs, act_u, cumQ, z, eta, R3, P2, log1p, radf, expf, ez, zsum, aud, ctraj, acts, keep):
    """Episodes k0 .. k0 + m - 1 of every seed (module docstring).

    ``mode``: :data:`LOCAL`, :data:`TREE` (trees add for episodes up to ``last`` = K - 1) or :data:`EXACT` (each
    family's ``Sinv`` is its Sherman-Morrison inverse, updated in place); ``rr``: reward regression
    (seed 000), the family ``fr`` beside ``fp`` (:data:`Family` each; ``fr`` is not read without ``rr``); ``vr``:
    variance weights (seed 003 Alg. 3), the family ``fq`` (x = phi_{V^2}, y = V^2) and the weights of
    :func:`variance_weights` (``F3`` (S*A, S, d) the features, ``vs`` r_max H, ``wfloor`` vs * vs / d, ``bcs``,
    ``bts`` (m,) bonus_scale x beta-check_k, beta-tilde_k); ``given``: every family's Sinv already holds episode k0's
    inverses (computed by the caller after a stop). ``F`` (S, S*A*d):
    the features of :func:`.planning_jit.features_by_next_state`; ``R`` (H, S*A) rewards; ``caps`` (H,) the Q
    truncation; ``P``, ``cdf`` (H, S, A, S) the kernel and its next-state CDF; ``env_u`` (B, n, H) the roll-out
    uniforms, episode k at row ``c0 + k - k0``; ``pol_u`` (B, n', H, S, A) the tie-breaking uniforms, episode k at
    row ``p0 + k - k0``; ``vphi`` (S*A, d2) the reward features, ``vrows``, ``xmap`` its distinct rows and each
    row's index among them (:func:`distinct_rows`), ``rmax`` r_max; ``buf``, ``pos``: the normals drawn
    ahead and the next unread (:class:`.noise_ahead.NoiseAhead`: per episode ``fp``'s groups, then ``fr``'s);
    ``potrf``, ``gesv``: numpy's LAPACK (:mod:`.lapack`). ``md``: mirror descent (private-linopt-po; then ``m`` = 1):
    the policy is ``probs`` (B, H, S, A), made by the caller with numpy's ``exp``; the actions come from ``act_u``
    (B, n, H) at row ``c0``, ``pol_u`` is not read; after the episode ``cumQ`` (B, H, S, A) += Q and ``z`` receives
    the next policy's exponent (:func:`md_exponent`, ``eta`` the step); ``R3`` (H, S, A), ``P2`` (H, S*A, S) the
    MDP's rewards and kernel for the policy's exact value. ``log1p`` (EXACT, UCRL-VTR: the address of numpy's float64
    ``log1p`` loop, else 0): the radius reads ``fp.LD`` (:func:`logdet_beta`, ``radf`` its constants), which
    :func:`ridge_update` keeps, instead of ``fp.beta``. ``expf`` (mirror descent: the address of numpy's own float64
    ``exp`` loop, :func:`.numpy_loops.address`; 0: the caller makes ``probs`` between one-episode calls): each episode
    makes its policy itself, as the caller would (:func:`md_policy`), so ``m`` may be a whole chunk; ``ez``, ``zsum``
    (B, H, S, A) and (B, H, S, 1) work.

    An audited run (the engine's ``_audit_roles``; ``aud`` empty otherwise): ``aud`` = (role of user 1, her start
    state, role of users 2..K, their start state), roles :data:`ENV`, :data:`STAY`, :data:`JUMP`, :data:`FIXED`
    (:func:`_roll`; ``ctraj`` (3, H) the LDP canary's trajectory); every episode's actions go to ``acts`` (B, n, H)
    at row ``c0 + k - k0``, and episode 1's statistics as released (after the variance weights) to ``keep`` = (X, Y,
    Xr, Yr, X2, Y2) of families p, r, q (empty where a family is absent), from which the engine forms user 1's
    contribution to every release over her (:mod:`.audit_records`).

    Returns (status, episodes done, pos): :data:`DONE`; :data:`NOT_PD` / :data:`NOT_FINITE` / :data:`NOT_FINITE_WEIGHT`
    at episode k0 + done, nothing of that episode applied (Sinv partly written)."""
    B, H, d, _ = fp.G.shape
    d2 = fr.G.shape[2]
    theta_q = np.empty((B, H, d))
    X2 = np.empty((B, H, d))
    Y2 = np.empty((B, H))
    xs = np.empty((B, H), dtype=np.int64)
    S = P.shape[1]
    A = P.shape[2]
    SA = S * A
    theta = np.empty((B, H, d))
    theta_r = np.empty((B, H, d2))
    betab = np.empty((B, H))
    M = np.empty((B, H, vrows.shape[0]) if rr else (0, 0, 0))
    V = np.empty((B, S))
    Vs = np.zeros((H + 1, B, S))
    phis = np.zeros((H, B, SA * d))
    Q = np.empty((B, H, S, A))
    t = np.empty((SA, d))
    lin = np.empty(SA)
    row = np.empty(d)
    pa = np.empty(A)
    tr = np.empty(d2)
    prod = np.empty(d2)
    X = np.empty((B, H, d))
    Y = np.empty((B, H))
    Xr = np.empty((B, H, d2))
    Yr = np.empty((B, H))
    pol = np.empty((H, S), dtype=np.int64)
    Ppi = np.empty((S, S))
    rpi = np.empty(S)
    Vv = np.empty(S)
    pe = np.empty(S)
    Sig = np.empty((d, d))
    work = np.empty((5, d, d))   # inverse_pd's scratch, then server's last Sigma inverted and its inverse
    Sig_r = np.empty((d2, d2))
    work_r = np.empty((5, d2, d2))
    memo = np.zeros(1, dtype=np.int64)   # families p and q share work (one d): server's memo of either is the same
    memo_r = np.zeros(1, dtype=np.int64)
    ipiv = np.empty(max(d, d2), dtype=np.int64)
    iv = np.empty(4, dtype=np.int64)
    uplo = np.array([76], dtype=np.uint8)   # 'L'
    ivx = np.empty(5, dtype=np.int64)
    for kk in range(m):
        k = k0 + kk
        if md and expf != 0:   # the policy of episode k from the exponent z (idempotent: a resumed episode redoes it)
            md_policy(expf, z, ez, zsum, probs, ivx)
        inverted = (given and kk == 0) or mode == EXACT   # EXACT: Sinv is the Sherman-Morrison Minv itself
        if not server(fp.G, fp.u, fp.lamshift[kk], fp.Sinv, theta, Sig, work, ipiv, iv, uplo, potrf, gesv, inverted,
                      memo):
            return NOT_PD, kk, pos
        if rr:
            if not server(fr.G, fr.u, fr.lamshift[kk], fr.Sinv, theta_r, Sig_r, work_r, ipiv, iv, uplo, potrf, gesv,
                          inverted, memo_r):
                return NOT_PD, kk, pos
            reward_mean(vrows, theta_r, fr.Sinv, fr.beta[kk], M, tr, prod)
        if vr:
            if not server(fq.G, fq.u, fq.lamshift[kk], fq.Sinv, theta_q, Sig, work, ipiv, iv, uplo, potrf, gesv,
                          inverted, memo):
                return NOT_PD, kk, pos
        if log1p != 0:
            logdet_beta(fp.LD, radf, betab)
        else:
            for b in range(B):
                for h in range(H):
                    betab[b, h] = fp.beta[kk, h]
        if not plan_into(F, R, M, xmap, rr, theta, fp.Sinv, betab, caps, S, A, V, Vs, phis, Q, t, lin, row, md, probs,
                         pa):
            return NOT_FINITE, kk, pos
        role, s0 = ENV, s1
        if aud.size:
            role, s0 = (aud[0], aud[1]) if k == 1 else (aud[2], aud[3])
        if md:
            md_act_and_roll(probs, act_u, c0 + kk, R3, P2, R, cdf, s1, vstar, env_u, Vs, phis, regret, k, X, Y, rr,
                            vphi, rmax, Xr, Yr, xs, role, s0, ctraj, acts, c0 + kk)
        else:
            act_and_roll(Q, tie_tol, pol_u, p0 + kk, c0 + kk, R, P, cdf, s1, vstar, env_u, Vs, phis, regret, k, X, Y,
                         pol, Ppi, rpi, Vv, pe, rr, vphi, rmax, Xr, Yr, xs, role, s0, ctraj, acts, c0 + kk)
        if vr and not variance_weights(X, Y, xs, Vs, F3, theta, fp.Sinv, theta_q, fq.Sinv, vs, wfloor, bcs[kk],
                                       bts[kk], X2, Y2):
            return NOT_FINITE_WEIGHT, kk, pos
        if aud.size and k == 1:   # user 1's statistics as released, before the release (which reads X, Y only)
            keep[0][...] = X
            keep[1][...] = Y
            if rr:
                keep[2][...] = Xr
                keep[3][...] = Yr
            if vr:
                keep[4][...] = X2
                keep[5][...] = Y2
        pos = _release(mode, k, last, fp, X, Y, buf, pos, log1p)   # the engine's update order: p, r, q
        if rr:
            pos = _release(mode, k, last, fr, Xr, Yr, buf, pos, 0)
        if vr:
            pos = _release(mode, k, last, fq, X2, Y2, buf, pos, 0)
        if md:
            md_exponent(Q, cumQ, eta, z)
    return DONE, m, pos


@functools.lru_cache(maxsize=None)
def self_check(d: int, d2: int = 0, sa: int = 0, states: int = 0) -> bool:
    """Whether the compiled loop's own arithmetic gives numpy's bits on this platform (once per process and shape):
    for d x d (and d2 x d2) matrices the PD verdicts of ``np.linalg.cholesky``, the inverses of ``np.linalg.inv`` and
    the einsum of theta, on 40 random matrices each (well and badly conditioned, some not PD); with ``d2`` and ``sa``
    (reward regression: S*A rows of d2 reward features) the engine's ``mean`` (:func:`reward_mean`) at B = 1 and 3;
    with ``states`` (variance weights) the einsums of :func:`variance_weights` at (S, d). False also when numpy's
    LAPACK is not found (:mod:`.lapack`); the engine then keeps its numpy loop."""
    from .lapack import routines

    lib = routines()
    if lib is None:
        return False
    for n in (d, d2) if d2 else (d,):
        if not _check_server(n, lib):
            return False
    return (not d2 or _check_mean(d2, sa)) and (not states or _check_variance(d, states))


def _check_variance(d: int, S: int) -> bool:
    """The two einsums of the variance weights against numpy at (S, d), B = 1 and 3: ``"bsd,bs->bd"``
    (:func:`x2_row`) and ``"bhi,bhij,bhj->bh"`` (:func:`quad_einsum`)."""
    rng = np.random.default_rng(20261129 + d + 1000 * S)
    for B in (1, 3):
        F = rng.random((B, S, d)) * 10.0 ** rng.uniform(-2, 2, (B, S, d))
        V = rng.standard_normal((B, S)) * 10.0
        want = np.einsum("bsd,bs->bd", F, V ** 2)
        X = rng.standard_normal((B, 2, d)) * 10.0 ** rng.uniform(-2, 2, (B, 2, d))
        Sm = rng.standard_normal((B, 2, d, d))
        qwant = np.einsum("bhi,bhij,bhj->bh", X, Sm, X)
        got = np.empty((B, d))
        for b in range(B):
            x2_row(F[b], V[b], got[b])
        qgot = np.array([[quad_einsum(X[b, h], Sm[b, h], d) for h in range(2)] for b in range(B)])
        if got.tobytes() != want.tobytes() or qgot.tobytes() != qwant.tobytes():
            return False
    return True


def _check_server(d: int, lib) -> bool:
    rng = np.random.default_rng(20261127 + d)
    work, ipiv, iv = np.empty((3, d, d)), np.empty(d, dtype=np.int64), np.empty(4, dtype=np.int64)
    uplo = np.array([76], dtype=np.uint8)
    for trial in range(40):
        X = rng.standard_normal((d, d)) * 10.0 ** rng.uniform(-3, 3)
        S = X @ X.T + 10.0 ** rng.uniform(-8, 2) * np.eye(d)
        if trial % 5 == 4:
            S -= 2.0 * np.abs(S).max() * np.eye(d)   # not positive definite
        try:
            np.linalg.cholesky(S)
            pd = True
        except np.linalg.LinAlgError:
            pd = False
        out = np.empty((d, d))
        if inverse_pd(S, out, work, ipiv, iv, uplo, lib[0], lib[1]) != pd:
            return False
        if pd:
            want = np.linalg.inv(S)
            if out.tobytes() != want.tobytes():
                return False
            uu = rng.standard_normal((1, 1, d)) * 10.0 ** rng.uniform(-3, 3)
            th = np.array([einsum_dot(out[i], uu[0, 0], d) for i in range(d)])
            if th.tobytes() != np.einsum("bhij,bhj->bhi", want[None, None], uu)[0, 0].tobytes():
                return False
    return True


def _check_mean(d2: int, sa: int) -> bool:
    """:func:`reward_mean` (and :func:`distinct_rows`) against the engine's numpy expression of ``mean`` at (S*A, d2),
    B = 1 and 3, H = 2, with repeated and one-hot rows."""
    rng = np.random.default_rng(20261128 + d2 + 1000 * sa)
    for B in (1, 3):
        vphi = rng.standard_normal((sa, d2)) * 10.0 ** rng.uniform(-2, 2, (sa, d2))
        vphi[sa // 2:] = np.eye(d2)[rng.integers(0, d2, sa - sa // 2)]   # one-hot rows, some repeated
        th = rng.standard_normal((B, 2, d2)) * 10.0 ** rng.uniform(-2, 2, (B, 2, d2))
        X = rng.standard_normal((B, 2, d2, d2))
        Sr = X @ np.swapaxes(X, -1, -2) / d2 - 0.2 * np.eye(d2)   # some negative quadratic forms
        beta_r = rng.random(2) * 10.0
        want = np.einsum("xe,bhe->bhx", vphi, th)
        tr = np.einsum("xe,bhef->bhxf", vphi, Sr)
        want = want + beta_r[None, :, None] * np.sqrt(np.maximum((tr * vphi).sum(-1), 0.0))
        vrows, xmap = distinct_rows(vphi)
        got = np.empty((B, 2, vrows.shape[0]))
        reward_mean(vrows, th, Sr, beta_r, got, np.empty(d2), np.empty(d2))
        if got[:, :, xmap].tobytes() != want.tobytes():
            return False
    return True
