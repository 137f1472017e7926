"""The batched linear-MDP learners' compiled episodes (algorithms/linear_mdp/batched_jit.py; issue 23 item 1) give the
numpy loop's bytes: the kernel against ``batched_rollout`` + ``History.add`` + the batch Gram on random policies (and
crafted cdf rows), the compiled LSVI pass (lsvi_jit's self-check holds here), and whole runs of batched-jdp-lsvi-ucb
(-laplace) and lsvi-ucb, compiled against ``COMPILED = False``, across the chunks of uniforms and the releases, at one
and three seeds: regret, final releases, events, ledger draws, progress calls."""

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.envs.linear_mdp import make_linear_env
from privacct.algorithms.linear_mdp import LEARNERS
from privacct.algorithms.linear_mdp import batched_jdp as BJ
from privacct.algorithms.linear_mdp import common as C
from privacct.algorithms.linear_mdp import lsvi_ucb as LU
from privacct.algorithms.linear_mdp.batched_jit import play_chunk
from privacct.rng import spawn_sequences


@pytest.mark.parametrize("env_name", ["linear-two-state", "linear-d10-h10"])
def test_the_kernel_is_the_numpy_rollout_history_and_gram(env_name):
    env = make_linear_env(env_name)
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    rng = np.random.default_rng(5)
    B, n = 3, 40
    pol = rng.integers(0, A, size=(B, H, S))
    u = rng.random((B, n, H))
    u[0, 0, :] = 0.0                                  # the first s' with positive mass
    u[1, 1, :] = np.nextafter(1.0, 0.0)               # the last
    hist = C.History(env, B)
    hist.N[:], hist.Rphi[:] = rng.integers(0, 3, hist.N.shape), rng.normal(size=hist.Rphi.shape)
    gram = rng.normal(size=(B, H, d, d))
    gram = gram + np.swapaxes(gram, -1, -2)           # symmetric, as every caller's Gram
    N, Rphi, g = hist.N.copy(), hist.Rphi.copy(), gram.copy()
    for j in range(n):
        states, actions = C.batched_rollout(env, pol, u[:, j])
        phi = hist.add(states, actions)
        gram += phi[..., :, None] * phi[..., None, :]
    tab = env.tabular
    play_chunk(pol, tab._cdf, env.phi, tab.R, int(env.initial_state), u, n, N, Rphi, g)
    assert N.tobytes() == hist.N.tobytes() and Rphi.tobytes() == hist.Rphi.tobytes() and g.tobytes() == gram.tobytes()


def _run(name, seeds, compiled, monkeypatch, **kw):
    monkeypatch.setattr(BJ, "COMPILED", compiled)
    monkeypatch.setattr(LU, "COMPILED", compiled)
    calls = []
    res = LEARNERS[name].run(RunConfig(name, **kw), spawn_sequences(11, seeds), progress=calls.append)
    return res, calls


def _figures(res):
    out = [res.regret.tobytes()]
    for key in ("final_release", "floor_events", "n_updates", "release_episodes"):
        if key in res.info:
            out.append(np.asarray(res.info[key]).tobytes())
    if res.ledger is not None:
        out.append(repr([tuple(x.__dict__.values()) for x in res.ledger.draws()]))
    return out


@pytest.mark.parametrize("seeds", [1, 3])
@pytest.mark.parametrize("name, delta", [(BJ.NAME, 1e-5), (BJ.NAME_LAPLACE, 0.0)])
@pytest.mark.parametrize("K, batches", [(700, 5), (2600, 2)])
def test_batched_runs_compiled_are_the_numpy_loop(name, delta, seeds, K, batches, monkeypatch):
    # K = 700 in 5 batches: releases after 140, 280, 420, 560 (a chunk ends at each); K = 2600 in 2: one release after
    # 1300, so chunks of 1024 (batched_jdp._CHUNK) and shorter ones between
    assert BJ._CHUNK < 1300
    kw = dict(privacy="jdp", epsilon=5.0, delta=delta, episodes=K, calibration="tight",
              options=(("batches", batches), ("beta", 0.5)))
    want, want_calls = _run(name, seeds, False, monkeypatch, **kw)
    got, got_calls = _run(name, seeds, True, monkeypatch, **kw)
    assert got_calls == want_calls == list(range(1, K + 1))
    assert _figures(got) == _figures(want)
    assert len(set(np.round(want.regret[0], 12))) >= 2   # the policy changed: a release moved the learner


@pytest.mark.parametrize("seeds", [1, 3])
def test_lsvi_ucb_compiled_is_the_numpy_loop(seeds, monkeypatch):
    kw = dict(privacy="none", episodes=300, horizon=3, bonus_scale=0.05)
    want, want_calls = _run(LU.NAME, seeds, False, monkeypatch, **kw)
    got, got_calls = _run(LU.NAME, seeds, True, monkeypatch, **kw)
    assert got_calls == want_calls == list(range(1, 301))
    assert _figures(got) == _figures(want)
    assert len(set(np.round(want.regret[0], 12))) > 2


def test_audited_runs_keep_the_numpy_loop(monkeypatch):
    """An audit hook, an active tap or action pin sees every user's episode: the compiled path is not taken."""
    from privacct.algorithms.contract import AuditHook

    env = make_linear_env("linear-two-state")
    assert BJ._compiles(None, env)
    assert not BJ._compiles(AuditHook("A"), env)
    monkeypatch.setattr(BJ, "COMPILED", False)
    assert not BJ._compiles(None, env)


def test_the_kernel_samples_the_first_state_with_u_below_its_cdf():
    """TabularMDP.sample_next's rule on crafted rows: a zero-probability first state, u equal to a cdf entry (goes on
    to the next state), u = 0, and u at or above a last entry below 1 (numpy's argmax of all False: state 0)."""
    cdf = np.array([[[[0.0, 0.5, 1.0]], [[0.25, 0.75, 0.9]], [[0.0, 0.5, 1.0]]]])   # (H=1, S=3, A=1, S=3)
    u_rows = [0.0, 0.5, 0.25, 0.9999, 0.95]
    for s0 in range(3):
        u = np.array(u_rows)[:, None, None]           # (B, 1, H=1): one seed per uniform
        B = u.shape[0]
        N = np.zeros((B, 1, 3, 1, 3))
        play_chunk(np.zeros((B, 1, 3), dtype=np.int64), cdf, np.zeros((3, 1, 2)), np.zeros((1, 3, 1)), s0, u, 1, N,
                   np.zeros((B, 1, 2)), np.zeros((B, 1, 2, 2)))
        want = (u[:, 0, 0][:, None] < cdf[0, s0, 0][None]).argmax(axis=1)
        assert N[:, 0, s0, 0].argmax(axis=1).tolist() == want.tolist() and N.sum() == B


def test_a_tap_keeps_the_numpy_loop():
    from privacct.tap import tapping

    env = make_linear_env("linear-two-state")
    with tapping():
        assert not BJ._compiles(None, env)


@pytest.mark.parametrize("env_name", ["linear-two-state", "linear-d10-h10"])
@pytest.mark.parametrize("n", [1, 3])
def test_the_compiled_lsvi_pass_is_numpys_here(env_name, n):
    """lsvi_jit's self-check (the compiled LSVI pass, with and without a noise callback, and the inverse, against
    common.lsvi and np.linalg.inv, byte for byte) holds on this platform, so the runs above take the compiled path."""
    from privacct.algorithms.linear_mdp import lsvi_jit

    env = make_linear_env(env_name)
    assert lsvi_jit.self_check(np.ascontiguousarray(env.phi), env.horizon, n)


@pytest.mark.parametrize("name, delta", [(BJ.NAME, 1e-5), (LU.NAME, 0.0)])
def test_without_the_compiled_lsvi_the_runs_are_the_same(name, delta, monkeypatch):
    """When the self-check fails (another BLAS), the compiled episodes keep numpy's LSVI: the same bytes."""
    from privacct.algorithms.linear_mdp import lsvi_jit

    kw = (dict(privacy="jdp", epsilon=5.0, delta=delta, episodes=300, calibration="tight",
                options=(("batches", 4), ("beta", 0.5)))
          if name == BJ.NAME else dict(privacy="none", episodes=300, horizon=3, bonus_scale=0.05))
    want, _ = _run(name, 2, False, monkeypatch, **kw)
    monkeypatch.setattr(lsvi_jit, "compiles", lambda env, n: False)
    got, _ = _run(name, 2, True, monkeypatch, **kw)
    assert _figures(got) == _figures(want)


def test_a_release_the_compiled_inverse_refuses_goes_to_numpys_floor(monkeypatch):
    """When a released matrix fails the compiled Cholesky test, the release takes floored_logdet and np.linalg.inv:
    forced here at every release, the same bytes as the numpy loop."""
    from privacct.algorithms.linear_mdp import lsvi_jit

    # tight: noise small enough that Q is not clipped, so the final releases carry every bit of the inverses
    kw = dict(privacy="jdp", epsilon=5.0, delta=1e-5, episodes=300, calibration="tight",
              options=(("batches", 4), ("beta", 0.5)))
    want, _ = _run(BJ.NAME, 2, False, monkeypatch, **kw)
    monkeypatch.setattr(lsvi_jit, "release_inverse", lambda *a: False)
    got, _ = _run(BJ.NAME, 2, True, monkeypatch, **kw)
    assert _figures(got) == _figures(want)


def test_the_chunk_keeps_the_uniforms_small():
    from privacct.algorithms.linear_mdp.chunks import MAX_VALUES, chunk

    assert chunk(1024, 1, 5, 10_000) == 1024 and chunk(1024, 1, 5, 300) == 300
    assert chunk(1024, 1000, 5, 10_000) * 1000 * 5 <= MAX_VALUES and chunk(1024, 10**7, 10, 5) == 1


@pytest.mark.parametrize("name, delta", [(BJ.NAME, 1e-5), (LU.NAME, 0.0)])
def test_small_chunks_give_the_same_runs(name, delta, monkeypatch):
    """Chunks of a few episodes (the uniforms' memory cap hit), across the releases: the same bytes."""
    from privacct.algorithms.linear_mdp import chunks

    kw = (dict(privacy="jdp", epsilon=5.0, delta=delta, episodes=300, calibration="tight",
                options=(("batches", 4), ("beta", 0.5)))
          if name == BJ.NAME else dict(privacy="none", episodes=300, horizon=3, bonus_scale=0.05))
    want, _ = _run(name, 3, False, monkeypatch, **kw)
    monkeypatch.setattr(chunks, "MAX_VALUES", 3 * 7 * 5)   # 7 episodes of 3 seeds at H = 5, 11 at H = 3
    got, calls = _run(name, 3, True, monkeypatch, **kw)
    assert _figures(got) == _figures(want) and calls == list(range(1, 301))


@pytest.mark.parametrize("name, delta", [(BJ.NAME, 1e-5), (BJ.NAME_LAPLACE, 0.0)])
@pytest.mark.parametrize("counter", ["tree-honaker", "blt"])
def test_factorized_gram_counters_compiled_are_the_numpy_loop(name, delta, counter, monkeypatch):
    """Option counter (a factorized Gram counter over the batch leaves): the compiled episodes feed it the same batch
    Grams, so the same bytes."""
    kw = dict(privacy="jdp", epsilon=5.0, delta=delta, episodes=300, calibration="tight",
              options=(("batches", 6), ("beta", 0.5), ("counter", counter)))
    want, _ = _run(name, 2, False, monkeypatch, **kw)
    got, _ = _run(name, 2, True, monkeypatch, **kw)
    assert _figures(got) == _figures(want)
