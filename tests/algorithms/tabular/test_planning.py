"""Optimistic planning (eq. (1), Lemmas 3.1/4.1, Algorithms 1 and 2 of seed 002)."""

import math

import numpy as np
import pytest

from privacct.algorithms.envs import riverswim
from privacct.algorithms.tabular.planning import evaluate_po, log_terms, mirror_step, optimistic_model, plan_vi
from privacct.algorithms.tabular.stats import episode_stats, family_dims, split


def _exact_counts(m, n):
    """Counts as if every (h, s, a) were visited n times with exact transition frequencies."""
    H, S, A = m.horizon, m.n_states, m.n_actions
    N = np.full((1, H * S * A), float(n))
    C = (n * (1.0 - m.R)).reshape(1, -1)
    Ntr = (n * m.P).reshape(1, -1)
    return N, C, Ntr


def test_vi_with_exact_model_and_no_bonus_is_optimal():
    m = riverswim()
    N, C, Ntr = _exact_counts(m, 1000)
    base, P = optimistic_model(N, C, Ntr, E1=0.0, E2=0.0, H=20, S=6, A=2, Lc=1.0, Lp=1.0, bonus_scale=0.0, kind="vi")
    pol, Q = plan_vi(base, P, return_q=True)
    assert np.array_equal(plan_vi(base, P), pol)
    assert abs(m.regret(pol)[0]) < 1e-9
    # Q~ is the cost-form Q*: H - h - Q*_reward (every step costs 1 - r)
    Qstar = m.optimal_q()
    H = 20
    np.testing.assert_allclose(Q[0], (H - np.arange(H))[:, None, None] - Qstar, atol=1e-9)


def test_po_evaluation_equals_exact_policy_value():
    m = riverswim(6)
    N, C, Ntr = _exact_counts(m, 50)
    base, P = optimistic_model(N, C, Ntr, E1=0.0, E2=0.0, H=6, S=6, A=2, Lc=1.0, Lp=1.0, bonus_scale=0.0, kind="po")
    pi = np.random.default_rng(1).dirichlet([1, 1], size=(1, 6, 6))
    Q = evaluate_po(base, P, pi)
    v_cost = (pi[0, 0, 0] * Q[0, 0, 0]).sum()
    assert v_cost == pytest.approx(6 - m.policy_values(pi)[0], abs=1e-9)


def test_bonus_formulas_and_shifted_denominator():
    H, S, A = 2, 2, 1
    N = np.array([[3.0, -5.0, 10.0, 0.0]])
    C = np.array([[1.0, 2.0, 5.0, 0.0]])
    Ntr = np.arange(8, dtype=float)[None]
    E1, E2, Lc, Lp = 2.0, 3.0, 0.7, 1.1
    for kind in ("vi", "po"):
        base, P = optimistic_model(N, C, Ntr, E1=E1, E2=E2, H=H, S=S, A=A, Lc=Lc, Lp=Lp, bonus_scale=0.5, kind=kind)
        n = np.maximum(1.0, N[0] + E1)
        beta_c = Lc / np.sqrt(n) + 3 * E1 / n
        if kind == "vi":
            beta = beta_c + H * Lc / np.sqrt(n) + H * (S * E2 + 2 * E1) / n
        else:
            beta = beta_c + H * (Lp / np.sqrt(n) + (S * E2 + 2 * E1) / n)
        np.testing.assert_allclose(base.ravel(), C[0] / n - 0.5 * beta)
        np.testing.assert_allclose(P.reshape(4, 2), Ntr[0].reshape(4, 2) / n[:, None])


def test_log_terms():
    Lc, Lp = log_terms(6, 2, 20, 20000, 0.1)
    assert Lc == pytest.approx(6.18, abs=0.01) and Lp == pytest.approx(21.6, abs=0.1)  # docs/seed-002-tabular.md#confidence-widths


def test_mirror_step_is_exponential_weights():
    rng = np.random.default_rng(0)
    pi = rng.dirichlet([1, 1, 1], size=(2, 3, 4))
    Q = rng.random((2, 3, 4, 3))
    new = np.exp(mirror_step(np.log(pi), Q, 0.7))
    expect = pi * np.exp(-0.7 * Q)
    expect /= expect.sum(-1, keepdims=True)
    np.testing.assert_allclose(new, expect, atol=1e-12)


def test_episode_stats_one_entry_per_step():
    H, S, A = 3, 4, 2
    states = np.array([[0, 1, 2, 3]])
    actions = np.array([[1, 0, 1]])
    costs = np.array([[0.2, 1.0, 0.5]])
    x = episode_stats(states, actions, costs, S, A)
    assert x.shape == (1, sum(family_dims(H, S, A).values()))
    N, C, T = split(x, H, S, A)
    assert N.sum() == H and C.sum() == pytest.approx(1.7) and T.sum() == H
    assert N.reshape(H, S, A)[1, 1, 0] == 1 and T.reshape(H, S, A, S)[2, 2, 1, 3] == 1
    assert math.isclose(C.reshape(H, S, A)[2, 2, 1], 0.5)
