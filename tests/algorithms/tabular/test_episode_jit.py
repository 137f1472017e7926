"""The compiled UCB-VI episode loop (episode_jit, ahead) gives the numpy loop's bytes: regret, final releases and
ledger draws, for every privatizer (binary tree, another counter, local, none), pooled or not, across the chunks of
pre-drawn uniforms (256 episodes) and of noise drawn ahead; the tree drawn ahead equals privacct's TreeCounter
addition by addition; audited runs keep the numpy path."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, RunConfig
from privacct.algorithms.tabular import LEARNERS
from privacct.algorithms.tabular import learner as tabular_learner
from privacct.algorithms.tabular.ahead import TreeAhead, exponentials
from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.mechanisms import TreeCounter, laplace
from privacct.rng import spawn_sequences
from privacct.tap import tapping

CONFIGS = [
    dict(privacy="jdp", episodes=300, horizon=20),                                          # paper: the binary tree
    dict(privacy="jdp", episodes=70, horizon=5, bonus_scale=0.002, options=(("e_scale", 0.05),)),
    dict(privacy="jdp", episodes=90, horizon=4, bonus_scale=0.002, options=(("e_scale", 0.05), ("pool_over_h", True))),
    dict(privacy="jdp", episodes=40, horizon=4, calibration="tight", bonus_scale=0.01),       # tree-honaker: numpy counter
    dict(privacy="ldp", episodes=60, horizon=5, bonus_scale=0.002, options=(("e_scale", 0.05),)),
    dict(privacy="ldp", episodes=40, horizon=3, bonus_scale=0.01, options=(("pool_over_h", True),)),
    dict(privacy="none", episodes=300, horizon=6, bonus_scale=0.01),
    dict(privacy="none", episodes=50, horizon=4, bonus_scale=0.01, options=(("pool_over_h", True),)),
    dict(privacy="jdp", episodes=2, horizon=3),
]


def _figures(res):
    draws = [tuple(d.__dict__.values()) for d in res.ledger.draws()] if res.ledger is not None else None
    return res.regret, res.info["final_release"], draws


def _run(cfg, seeds, compiled, monkeypatch, **kw):
    monkeypatch.setattr(tabular_learner, "COMPILED", compiled)
    return LEARNERS["ucb-vi"].run(cfg, seeds, **kw)


@pytest.mark.parametrize("c", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values())[:60])
def test_compiled_loop_equals_numpy_loop_bytes(c, monkeypatch):
    cfg = RunConfig("ucb-vi", epsilon=1.0, delta=0.0, **c)
    for n in (1, 3):
        seeds = spawn_sequences(11, n)
        want = _figures(_run(cfg, seeds, False, monkeypatch))
        got = _figures(_run(cfg, seeds, True, monkeypatch))
        for g, w in zip(got[:2], want[:2], strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
        assert got[2] == want[2]


def test_small_noise_chunks_and_progress(monkeypatch):
    """Noise drawn ahead one or three episodes at a time (the 100-seed regime) and the progress calls."""
    cfg = RunConfig("ucb-vi", "jdp", epsilon=1.0, delta=0.0, episodes=40, horizon=4)
    seeds = spawn_sequences(3, 2)
    calls = {True: [], False: []}
    want = _figures(_run(cfg, seeds, False, monkeypatch, progress=calls[False].append))
    for per in (1, 3):
        monkeypatch.setattr(tabular_learner, "_AHEAD_EPISODES", per)
        calls[True] = []
        got = _figures(_run(cfg, seeds, True, monkeypatch, progress=calls[True].append))
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes() and got[2] == want[2]
        assert calls[True] == calls[False]


def test_exponentials_ahead_are_the_laplace_draws():
    """n draws at once = n calls of privacct.mechanisms.laplace: (E1 - E2) b from the same stream."""
    dim, n, scale = 9, 5, 1.7
    ahead = exponentials([np.random.default_rng(s) for s in (1, 2)], n, dim)
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    for j in range(n):
        want = laplace(rngs, (dim,), scale)
        got = ahead[:, j, 0] - ahead[:, j, 1]
        got *= scale
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("B, dim, leaves, chunk", [(1, 7, 40, 8), (3, 5, 70, 3), (2, 4, 33, 64)])
def test_tree_ahead_equals_tree_counter(B, dim, leaves, chunk):
    from privacct.algorithms.tabular.episode_jit import _tree_add

    rng = np.random.default_rng(B * leaves)
    xs = rng.random((leaves, B, dim)) * (rng.random((leaves, B, dim)) < 0.4)
    xs[..., 0] = 0.0
    ref_ledger, new_ledger = Ledger(), Ledger()
    ref = TreeCounter((dim,), leaves=leaves, mechanism="laplace", scale=2.5,
                      rngs=[np.random.default_rng(s) for s in range(B)], ledger=ref_ledger, group="g")
    new = TreeAhead((dim,), leaves=leaves, scale=2.5, rngs=[np.random.default_rng(s) for s in range(B)],
                    ledger=new_ledger, group="g")
    sa, sn = np.empty(dim), np.empty(dim)
    t = 0
    while t < leaves:
        n = min(chunk, leaves - t)
        exps = new.draw_ahead(n)
        for j in range(n):
            t += 1
            want = ref.add(xs[t - 1])
            for b in range(B):
                _tree_add(t, exps[b, j], new.scale, new._alpha, new._noise, new._release[b], new._exact[b], b,
                          xs[t - 1, b], sa, sn)
            new.advance(1)
            assert new.noisy_sum().tobytes() == want.tobytes()
            assert new.exact_sum().tobytes() == ref.exact_sum().tobytes()
            assert new.node_sum().tobytes() == ref.node_sum().tobytes()
    assert [tuple(d.__dict__.values()) for d in new_ledger.draws()] == \
        [tuple(d.__dict__.values()) for d in ref_ledger.draws()]
    with pytest.raises(PrivacctError):
        new.draw_ahead(1)   # full


def test_tree_ahead_refuses_audits_and_add():
    tree = TreeAhead((3,), leaves=4, scale=1.0, rngs=[np.random.default_rng(0)], ledger=Ledger(), group="g")
    with tapping():
        with pytest.raises(PrivacctError, match="audited"):
            tree.draw_ahead(1)
    with pytest.raises(PrivacctError):
        tree.add(np.zeros((1, 3)))


def test_audited_runs_keep_the_numpy_path(monkeypatch):
    import privacct.algorithms.tabular.learner as L

    def boom(*a, **k):
        raise AssertionError("the compiled loop ran in an audited run")

    monkeypatch.setattr(L, "_run_vi_compiled", boom)
    cfg = RunConfig("ucb-vi", "jdp", epsilon=1.0, delta=0.0, episodes=4, horizon=3)
    LEARNERS["ucb-vi"].run_observed(cfg, spawn_sequences(0, 2), audit=AuditHook("A", mutant="bonus-on-exact-counts"))
    with tapping():
        LEARNERS["ucb-vi"].run(cfg, spawn_sequences(0, 2))


@pytest.mark.parametrize("S, A, privacy, bonus", [(4, 3, "jdp", 0.01), (3, 5, "ldp", 0.0), (5, 4, "none", 0.0),
                                                  (7, 3, "none", 0.05)])
def test_other_sizes_and_exact_ties(S, A, privacy, bonus, monkeypatch):
    """Another MDP (S states, A actions; rewards equal across half the actions, so Q ties exactly), both paths."""
    from privacct.algorithms.envs.tabular import stationary

    rng = np.random.default_rng(S * A)
    P = rng.random((S, A, S)) ** 3
    P /= P.sum(axis=-1, keepdims=True)
    R = rng.random((S, A))
    R[:, A // 2:] = R[:, :1]
    mdp = stationary(P, R, 6, name="random")
    monkeypatch.setattr(tabular_learner, "make_mdp", lambda config: mdp)
    cfg = RunConfig("ucb-vi", privacy, epsilon=3.0, delta=0.0, episodes=80, bonus_scale=bonus,
                    options=(("e_scale", 0.05),) if privacy != "none" else ())
    seeds = spawn_sequences(4, 2)
    want = _figures(_run(cfg, seeds, False, monkeypatch))
    got = _figures(_run(cfg, seeds, True, monkeypatch))
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes() and got[2] == want[2]


# ---- UCB-PO: compiled between numpy's exp / log calls (po_jit) -------------------------------------------------------

PO_CONFIGS = [
    dict(privacy="jdp", episodes=300, horizon=20),                                          # paper: the binary tree
    dict(privacy="jdp", episodes=70, horizon=5, bonus_scale=0.002, options=(("e_scale", 0.05), ("eta", 0.5))),
    dict(privacy="jdp", episodes=90, horizon=4, bonus_scale=0.002, options=(("e_scale", 0.05), ("pool_over_h", True),
                                                                            ("eta", 2.0))),
    dict(privacy="jdp", episodes=40, horizon=4, calibration="tight", bonus_scale=0.01),       # tree-honaker: numpy counter
    dict(privacy="ldp", episodes=60, horizon=5, bonus_scale=0.002, options=(("e_scale", 0.05), ("eta", 1.0))),
    dict(privacy="ldp", episodes=40, horizon=3, bonus_scale=0.01, options=(("pool_over_h", True),)),
    dict(privacy="none", episodes=300, horizon=6, bonus_scale=0.01, options=(("eta", 0.3),)),
    dict(privacy="none", episodes=50, horizon=4, bonus_scale=0.01, options=(("pool_over_h", True),)),
    dict(privacy="jdp", episodes=2, horizon=3),
]


_RUN_PO_COMPILED = tabular_learner._run_po_compiled


def _run_po(cfg, seeds, compiled, monkeypatch, **kw):
    import privacct.algorithms.tabular.learner as L

    monkeypatch.setattr(tabular_learner, "COMPILED", compiled)
    # compiled: that loop must run (not the numpy fallback of a failed self-check); numpy: the compiled one must not
    monkeypatch.setattr(L, "_po_compiles", lambda *a: compiled)
    monkeypatch.setattr(L, "_run_po_compiled", _RUN_PO_COMPILED if compiled else None)
    return LEARNERS["ucb-po"].run(cfg, seeds, **kw)


def _same(got, want):
    for g, w in zip(got[:2], want[:2], strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
    assert got[2] == want[2]


@pytest.mark.parametrize("c", PO_CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values())[:60])
def test_po_compiled_loop_equals_numpy_loop_bytes(c, monkeypatch):
    cfg = RunConfig("ucb-po", epsilon=1.0, delta=0.0, **c)
    for n in (1, 3):
        seeds = spawn_sequences(11, n)
        _same(_figures(_run_po(cfg, seeds, True, monkeypatch)), _figures(_run_po(cfg, seeds, False, monkeypatch)))


def test_po_seed_batch_of_100_and_progress(monkeypatch):
    """100 seeds (numpy's gemm over seeds in the policy's value), noise drawn ahead a few episodes at a time."""
    cfg = RunConfig("ucb-po", "jdp", epsilon=1.0, delta=0.0, episodes=30, horizon=6)
    seeds = spawn_sequences(5, 100)
    calls = {True: [], False: []}
    want = _figures(_run_po(cfg, seeds, False, monkeypatch, progress=calls[False].append))
    monkeypatch.setattr(tabular_learner, "_AHEAD_EPISODES", 3)
    got = _figures(_run_po(cfg, seeds, True, monkeypatch, progress=calls[True].append))
    _same(got, want)
    assert calls[True] == calls[False]


@pytest.mark.parametrize("S, A, privacy, bonus", [(4, 3, "jdp", 0.01), (3, 5, "ldp", 0.0), (5, 9, "none", 0.0),
                                                  (3, 17, "none", 0.05)])
def test_po_other_sizes(S, A, privacy, bonus, monkeypatch):
    """Other S and A (A >= 8: einsum's unrolled loop; rewards equal across half the actions), both paths."""
    from privacct.algorithms.envs.tabular import stationary

    rng = np.random.default_rng(S * A)
    P = rng.random((S, A, S)) ** 3
    P /= P.sum(axis=-1, keepdims=True)
    R = rng.random((S, A))
    R[:, A // 2:] = R[:, :1]
    mdp = stationary(P, R, 6, name="random")
    monkeypatch.setattr(tabular_learner, "make_mdp", lambda config: mdp)
    cfg = RunConfig("ucb-po", privacy, epsilon=3.0, delta=0.0, episodes=80, bonus_scale=bonus,
                    options=(("e_scale", 0.05), ("eta", 0.7)) if privacy != "none" else (("eta", 0.7),))
    seeds = spawn_sequences(4, 2)
    _same(_figures(_run_po(cfg, seeds, True, monkeypatch)), _figures(_run_po(cfg, seeds, False, monkeypatch)))


@pytest.mark.parametrize("A", list(range(1, 20)) + [31, 64])
def test_einsum_row_is_numpys(A):
    from privacct.algorithms.tabular.po_jit import einsum_row, pairwise_sum

    rng = np.random.default_rng(A)
    p, q = rng.random((50, A)), rng.random((50, A)) * 20 - 5
    want = np.einsum("sa,sa->s", p, q)
    got = np.array([einsum_row(p[i], q[i], A) for i in range(50)])
    assert got.tobytes() == want.tobytes()
    want = (p * q).sum(axis=1)
    got = np.array([pairwise_sum(p[i] * q[i], A) for i in range(50)])
    assert got.tobytes() == want.tobytes()
    from privacct.algorithms.tabular.po_jit import row_sums

    e = np.exp(rng.standard_normal((3, 2, 5, A)) * 30)
    out = np.empty((3, 2, 5, 1))
    row_sums(e, out)
    assert out.tobytes() == e.sum(axis=-1, keepdims=True).tobytes()


def test_po_self_check_and_fallback(monkeypatch):
    """The self-check passes on this build; a failing one keeps the numpy loop (the compiled one is not called)."""
    import privacct.algorithms.tabular.learner as L
    from privacct.algorithms.tabular.po_jit import self_check

    assert self_check(1, 20, 6, 2) and self_check(3, 4, 4, 3)
    monkeypatch.setattr(L, "_po_compiles", lambda *a: False)
    monkeypatch.setattr(L, "_run_po_compiled", None)
    cfg = RunConfig("ucb-po", "jdp", epsilon=1.0, delta=0.0, episodes=5, horizon=3)
    LEARNERS["ucb-po"].run(cfg, spawn_sequences(0, 2))


def test_po_audited_runs_keep_the_numpy_path(monkeypatch):
    import privacct.algorithms.tabular.learner as L

    monkeypatch.setattr(L, "_run_po_compiled", None)
    cfg = RunConfig("ucb-po", "jdp", epsilon=1.0, delta=0.0, episodes=4, horizon=3)
    LEARNERS["ucb-po"].run_observed(cfg, spawn_sequences(0, 2), audit=AuditHook("A", mutant="bonus-on-exact-counts"))
    with tapping():
        LEARNERS["ucb-po"].run(cfg, spawn_sequences(0, 2))
