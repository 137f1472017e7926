"""The compiled linear-mixture episode loop (episode_jit, issue 23 item 1) gives the numpy loop's bytes.

Each learner and privacy model it covers is run twice with the same seeds, compiled and with
``engine.COMPILED = False`` (the numpy loop, the reference), and every output must be the same bytes: the regret,
the final released statistics, the non-PD counts, the first episode's beta, the ledger draw for draw; the compiled
path must have been taken (a spy counts it), or the comparison would compare numpy with itself. The pieces are
checked against numpy directly: the einsum of theta (numpy's SIMD summation order, which a plain sequential sum
does not give), the three-operand quadratic form and phi_{V^2} of the variance weights, numpy's own LAPACK for the
PD test and the inverse. Then the paths the loop hands back to numpy: a non-PD Sigma (the eigenvalue floor, or the
error), a non-finite Q or variance weight, no usable LAPACK (or, for UCRL-VTR, no usable numpy log1p loop), a
one-run audit, a radius read in a form the loop does not know.

At 3 seeds on HardToLearn the tie-breaking uniforms are drawn 113 episodes at a time (engine._POL_BYTES), so K = 130
crosses both that and the 128-episode chunk. These tests fail when the compiled arithmetic moves by one rounding:
theta summed sequentially (6 cases fail; the regret pins did not see it), the tree's level sums taken in reverse
order (18 fail), the quadratic form's products associated the other way (9 fail) -- each tried.
"""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, CanaryPlan, RunConfig
from privacct.algorithms.linear_mixture import LEARNERS
from privacct.algorithms.linear_mixture import engine as E
from privacct.algorithms.linear_mixture import episode_jit as J
from privacct.algorithms.linear_mixture import lapack
from privacct.errors import PrivacctError
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences


def cfg(name, privacy, **kw):
    base = dict(epsilon=1.0, delta=0.0 if privacy == "none" else 1e-5, episodes=130, env="hard-to-learn",
                bonus_scale=0.1)
    base.update(kw)
    return RunConfig(name, privacy=privacy, **base)


def _draws(ledger):
    return [tuple(d.__dict__.values()) for d in ledger.draws()]


def run_both(monkeypatch, c, seeds):
    """(compiled result, numpy result, compiled calls) of one configuration."""
    calls = []
    real = E._run_compiled

    def spy(*a, **k):
        calls.append(a[0])
        return real(*a, **k)

    monkeypatch.setattr(E, "_run_compiled", spy)
    spec = LEARNERS[c.algorithm]
    got = spec.run(c, seeds)
    monkeypatch.setattr(E, "COMPILED", False)
    want = spec.run(c, seeds)
    monkeypatch.setattr(E, "COMPILED", True)
    return got, want, calls


def assert_same(got, want):
    assert got.regret.tobytes() == want.regret.tobytes()
    assert got.info["final_release"].tobytes() == want.info["final_release"].tobytes()
    assert got.info["non_pd_events"].tobytes() == want.info["non_pd_events"].tobytes()
    assert got.info["beta_first_episode"] == want.info["beta_first_episode"]
    if want.ledger is not None:
        assert len(got.ledger) == len(want.ledger) and _draws(got.ledger) == _draws(want.ledger)


CASES = [
    # (learner, privacy, overrides): both environments, the 128-episode chunk crossed, the tree's last episode (K - 1)
    ("ldp-ucrl-vtr", "ldp", {}),
    ("ldp-ucrl-vtr", "ldp", {"env": "riverswim-lm", "episodes": 40}),
    ("ldp-ucrl-vtr", "ldp", {"options": (("radius", "paper-experiment"),), "episodes": 60}),
    ("pp-ucrl-vtr", "ldp", {"episodes": 60}),
    ("pp-ucrl-vtr", "jdp", {}),
    ("pp-ucrl-vtr", "jdp", {"env": "riverswim-lm", "episodes": 129}),
    ("pp-ucrl-vtr", "jdp", {"env": "riverswim-lm", "episodes": 2}),
    ("pp-ucrl-vtr-laplace", "ldp", {"episodes": 60, "delta": 0.0}),   # Laplace: exponentials, upper triangles
    ("pp-ucrl-vtr-laplace", "jdp", {"delta": 0.0}),
    ("pp-ucrl-vtr-plus", "ldp", {"episodes": 60}),   # variance weights: the q family, x / sigma_bar
    ("pp-ucrl-vtr-plus", "jdp", {}),
    ("private-linopt-vi", "jdp", {}),   # reward regression: the r family's server, mean, trees
    ("private-linopt-vi", "jdp", {"env": "riverswim-lm", "episodes": 40}),
    # no privacy: exact statistics, Sherman-Morrison inverses (the radius of these designs reads no log det)
    ("pp-ucrl-vtr", "none", {}),
    ("pp-ucrl-vtr", "none", {"env": "riverswim-lm", "episodes": 40, "bonus_scale": 0.01}),
    ("pp-ucrl-vtr-plus", "none", {"episodes": 60}),
    ("private-linopt-vi", "none", {"episodes": 60, "bonus_scale": 0.01}),
    # small bonus, little noise: Q is not clipped to a constant and the statistics move with every bit of Sigma^{-1}
    ("ldp-ucrl-vtr", "ldp", {"epsilon": 50.0, "bonus_scale": 0.01, "episodes": 60}),
    ("pp-ucrl-vtr", "jdp", {"epsilon": 50.0, "bonus_scale": 0.01, "episodes": 60}),
    ("private-linopt-vi", "jdp", {"epsilon": 50.0, "bonus_scale": 0.01, "episodes": 60}),
    ("pp-ucrl-vtr-plus", "jdp", {"epsilon": 50.0, "bonus_scale": 0.01, "episodes": 60, "env": "riverswim-lm"}),
    # mirror descent (seed 000 PO): compiled but for numpy's exp of the policy, one call per episode
    ("private-linopt-po", "jdp", {}),
    ("private-linopt-po", "jdp", {"env": "riverswim-lm", "episodes": 40}),
    ("private-linopt-po", "jdp", {"epsilon": 50.0, "bonus_scale": 0.01, "episodes": 60, "options": (("eta", 3.0),)}),
    ("private-linopt-po", "none", {"episodes": 60, "bonus_scale": 0.01, "options": (("eta", 1.0),)}),
    # UCRL-VTR: its radius reads log det(Sigma / lambda I), kept with numpy's own log1p loop (numpy_loops)
    ("ucrl-vtr", "none", {}),
    ("ucrl-vtr", "none", {"env": "riverswim-lm", "episodes": 40, "bonus_scale": 0.01}),
    ("ucrl-vtr", "none", {"env": "riverswim-lm", "episodes": 130, "bonus_scale": 0.003}),
]


@pytest.mark.parametrize("name, privacy, over", CASES)
@pytest.mark.parametrize("B", [1, 3])
def test_compiled_equals_numpy_bytes(monkeypatch, name, privacy, over, B):
    c = cfg(name, privacy, **over)
    got, want, calls = run_both(monkeypatch, c, spawn_sequences(5, B))
    assert calls == [{"jdp": J.TREE, "ldp": J.LOCAL, "none": J.EXACT}[privacy]]   # the compiled loop ran, once
    assert_same(got, want)
    if privacy == "none":
        assert got.ledger is None and want.ledger is None
    else:
        assert check_ledger(got.log, got.ledger).ok


@pytest.mark.parametrize("env, K", [("hard-to-learn", 130), ("riverswim-lm", 60)])
def test_ucrl_vtr_log_det_is_numpys(monkeypatch, env, K):
    """UCRL-VTR's log det(Sigma / lambda I), which its radius reads, is the numpy loop's to the bit (numpy's own log1p
    loop, numpy_loops), not only the regret it moves: libm's log1p (numba's math.log1p) differs in the last bit for a
    few per cent of arguments, which the regret and the released statistics do not always show."""
    made = []
    real_init = E.ExactRidge.__init__

    def spy(self, *a, **k):
        real_init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(E.ExactRidge, "__init__", spy)
    got, want, calls = run_both(monkeypatch, cfg("ucrl-vtr", "none", delta=0.0, env=env, episodes=K), spawn_sequences(4, 3))
    assert calls == [J.EXACT] and len(made) == 2
    assert np.all(made[0].logdet()[:, :-1] > 0)   # the last stage: phi_V = 0 (V_{H+1} = 0)
    assert made[0].logdet().tobytes() == made[1].logdet().tobytes()
    assert made[0].Minv.tobytes() == made[1].Minv.tobytes()
    assert_same(got, want)


@pytest.mark.parametrize("exp_loop", [True, False])
def test_mirror_descent_chunks_and_fallback(monkeypatch, exp_loop):
    """private-linopt-po with numpy's exp loop called from the compiled loop (whole chunks per call) and without it
    (numpy_loops.address None: one call per episode, numpy's exp between the calls): the numpy loop's bytes both ways,
    across the 128-episode chunk (K = 130: the second chunk's draws), with the calls each way takes."""
    from privacct.algorithms.linear_mixture import numpy_loops

    real_addr = numpy_loops.address
    if not exp_loop:
        monkeypatch.setattr(numpy_loops, "address", lambda kind: None if kind == "exp" else real_addr(kind))
    chunks = []
    real_chunk = J.run_chunk
    monkeypatch.setattr(J, "run_chunk", lambda *a: (chunks.append(a[4]), real_chunk(*a))[1])
    got, want, calls = run_both(monkeypatch, cfg("private-linopt-po", "jdp", episodes=130), spawn_sequences(6, 2))
    assert calls == [J.TREE]
    assert chunks == ([128, 2] if exp_loop else [1] * 130)
    assert_same(got, want)


def test_ridge_update_is_exact_ridges():
    """One Sherman-Morrison step of the compiled loop (episode_jit.ridge_update) against ExactRidge.update on 400 x 6
    stages of random statistics (q over 1e-3 .. 1e3, where libm's log1p differs from numpy's for several per cent):
    Minv, G, u and log det the same bytes; without the log1p address the log det is left alone."""
    from privacct.algorithms.linear_mixture import numpy_loops
    from privacct.algorithms.linear_mixture.aggregators import ExactRidge

    rng = np.random.default_rng(11)
    B, H, d = 400, 6, 5
    agg = ExactRidge(B, H, d, 1.0)
    X = rng.standard_normal((B, H, d)) * 10.0 ** rng.uniform(-1.5, 1.5, (B, H, 1))
    Y = rng.standard_normal((B, H))
    Minv, G, u, LD = agg.Minv.copy(), agg.G.copy(), agg.u.copy(), agg.logdet().copy()
    agg.update(1, X, Y)
    J.ridge_update(G, u, Minv, X, Y, np.empty(d), LD, numpy_loops.address("log1p"))
    for got, want in ((Minv, agg.Minv), (G, agg.G), (u, agg.u), (LD, agg.logdet())):
        assert got.tobytes() == want.tobytes()
    LD0 = np.zeros((B, H))
    J.ridge_update(G, u, Minv, X, Y, np.empty(d), LD0, 0)
    assert not LD0.any()


def test_ucrl_vtr_falls_back_without_numpys_log1p(monkeypatch):
    """No usable numpy log1p loop on this platform (numpy_loops.address None), or a radius whose closed form does not
    give radius_p's bits: the numpy loop runs (not silently different bytes)."""
    from privacct.algorithms.linear_mixture import numpy_loops
    from privacct.algorithms.linear_mixture.learners import design_for

    c = cfg("ucrl-vtr", "none", delta=0.0, episodes=20)
    des = design_for("ucrl-vtr", c, "riverswim-lm")
    assert E._logdet_radius(des) is not None
    ct, caps, const = des.logdet_radius
    des.logdet_radius = (ct, caps, np.nextafter(const, 1e9))   # one ulp off: refused
    assert E._logdet_radius(des) is None
    monkeypatch.setattr(numpy_loops, "address", lambda kind: None)
    des.logdet_radius = (ct, caps, const)
    assert E._logdet_radius(des) is None
    got, want, calls = run_both(monkeypatch, c, spawn_sequences(2, 2))
    assert calls == []
    assert_same(got, want)


@pytest.mark.parametrize("name, privacy", [("ldp-ucrl-vtr", "ldp"), ("pp-ucrl-vtr", "jdp"), ("private-linopt-vi", "jdp"),
                                           ("pp-ucrl-vtr-plus", "ldp"), ("private-linopt-po", "jdp")])
def test_non_pd_episodes_take_numpy_inverse(monkeypatch, name, privacy):
    """A tiny shift: some Sigma are not PD; those episodes' inverses come from numpy (the floor), counted alike."""
    c = cfg(name, privacy, episodes=130, options=(("shift_scale", 1e-6),))
    got, want, calls = run_both(monkeypatch, c, spawn_sequences(0, 3))   # stops within and across the chunks
    assert calls and np.all(want.info["non_pd_events"] > 0)
    assert_same(got, want)


def test_non_pd_error_is_numpys(monkeypatch):
    c = cfg("ldp-ucrl-vtr", "ldp", episodes=40, options=(("shift_scale", 1e-6), ("on_non_pd", "error")))
    msgs = []
    for compiled in (True, False):
        monkeypatch.setattr(E, "COMPILED", compiled)
        with pytest.raises(PrivacctError, match="not positive definite") as err:
            LEARNERS["ldp-ucrl-vtr"].run(c, spawn_sequences(0, 3))
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def test_non_finite_q_is_refused_by_both(monkeypatch):
    """A NaN radius makes every Q NaN: both loops refuse to release statistics built from it."""
    spec = LEARNERS["ldp-ucrl-vtr"]
    c = cfg("ldp-ucrl-vtr", "ldp", episodes=5)
    original = E.run_design

    def nan_radius(des, *a, **k):
        des.radius_p = lambda k, logdet=None: np.full(des.H, np.nan)
        return original(des, *a, **k)

    monkeypatch.setattr("privacct.algorithms.linear_mixture.learners.run_design", nan_radius)
    for compiled in (True, False):
        monkeypatch.setattr(E, "COMPILED", compiled)
        with pytest.raises(PrivacctError, match="non-finite optimistic Q"):
            spec.run(c, spawn_sequences(0, 2))


def test_non_finite_variance_weight_is_refused_by_both(monkeypatch):
    """A NaN beta-check makes every sigma_bar NaN (Alg. 3's E term): both loops refuse it, with the same message."""
    spec = LEARNERS["pp-ucrl-vtr-plus"]
    c = cfg("pp-ucrl-vtr-plus", "jdp", episodes=5)
    original = E.run_design

    def nan_check(des, *a, **k):
        des.radius_check = lambda k: float("nan")
        return original(des, *a, **k)

    monkeypatch.setattr("privacct.algorithms.linear_mixture.learners.run_design", nan_check)
    for compiled in (True, False):
        monkeypatch.setattr(E, "COMPILED", compiled)
        with pytest.raises(PrivacctError, match="non-finite variance weight"):
            spec.run(c, spawn_sequences(0, 2))


def test_quadratic_form_and_x2_are_numpys_einsums():
    """x^T S x of three operands (numpy's 8192-value buffer included, d > 90) and phi_{V^2}."""
    rng = np.random.default_rng(3)
    for d in (1, 2, 5, 8, 18, 90, 91, 100, 128):
        X = rng.standard_normal((2, 2, d)) * 10.0 ** rng.integers(-4, 5, (2, 2, d))
        S = rng.standard_normal((2, 2, d, d)) * 10.0 ** rng.integers(-4, 5, (2, 2, d, d))
        want = np.einsum("bhi,bhij,bhj->bh", X, S, X)
        got = np.array([[J.quad_einsum(X[b, h], S[b, h], d) for h in range(2)] for b in range(2)])
        assert got.tobytes() == want.tobytes(), d
    for S_, d in ((3, 18), (8, 5), (8, 2)):
        F = rng.random((3, S_, d))
        V = rng.standard_normal((3, S_)) * 5.0
        got = np.empty((3, d))
        for b in range(3):
            J.x2_row(F[b], V[b], got[b])
        assert got.tobytes() == np.einsum("bsd,bs->bd", F, V ** 2).tobytes()
    assert J._check_variance(5, 8) and J._check_mean(8, 128)


def test_einsum_dot_is_numpys_einsum():
    rng = np.random.default_rng(0)
    naive_differs = False
    for d in range(1, 131):
        S = rng.standard_normal((2, 2, d, d)) * 10.0 ** rng.integers(-6, 7, size=(2, 2, d, d))
        u = rng.standard_normal((2, 2, d)) * 10.0 ** rng.integers(-6, 7, size=(2, 2, d))
        S[0, 0, 0] = -0.0   # a row of signed zeros: numpy adds the sum to +0
        want = np.einsum("bhij,bhj->bhi", S, u)
        got = np.array([[[J.einsum_dot(S[b, h, i], u[b, h], d) for i in range(d)] for h in range(2)] for b in range(2)])
        assert got.tobytes() == want.tobytes(), d
        naive = np.array([[[sum(float(x) for x in S[b, h, i] * u[b, h]) for i in range(d)] for h in range(2)]
                          for b in range(2)])
        naive_differs |= naive.tobytes() != want.tobytes()
    assert naive_differs   # the order matters: a plain sequential sum would not pass


def test_inverse_pd_is_numpys():
    lib = lapack.routines()
    assert lib is not None   # numpy's wheels bundle scipy-openblas64 (this test documents the platform)
    rng = np.random.default_rng(1)
    work, iv, uplo = np.empty((3, 20, 20)), np.empty(4, dtype=np.int64), np.array([76], dtype=np.uint8)
    verdicts = set()
    for trial in range(300):
        d = int(rng.integers(1, 21))
        X = rng.standard_normal((d, d)) * 10.0 ** rng.uniform(-4, 4)
        S = X @ X.T + 10.0 ** rng.uniform(-10, 2) * np.eye(d)
        if trial % 3 == 2:
            S -= rng.uniform(0.5, 3.0) * np.abs(S).max() * np.eye(d)
        if trial % 50 == 7:
            S = np.zeros((d, d))                                   # singular, not PD
        try:
            np.linalg.cholesky(S)
            pd = True
        except np.linalg.LinAlgError:
            pd = False
        out = np.empty((d, d))
        ok = J.inverse_pd(S, out, np.ascontiguousarray(work[:, :d, :d]), np.empty(d, dtype=np.int64), iv, uplo, *lib)
        assert ok == pd, trial
        verdicts.add(pd)
        if pd:
            assert out.tobytes() == np.linalg.inv(S).tobytes(), trial
    assert verdicts == {True, False}


def test_self_check_and_fallback_without_lapack(monkeypatch):
    assert J.self_check(5) and J.self_check(18) and J.self_check(5, 8, 128) and J.self_check(18, 6, 6)
    monkeypatch.setattr(lapack, "routines", lambda: None)
    J.self_check.cache_clear()
    try:
        assert not J.self_check(5)
        c = cfg("ldp-ucrl-vtr", "ldp", episodes=20)
        got, want, calls = run_both(monkeypatch, c, spawn_sequences(2, 2))
        assert calls == []   # the numpy loop ran
        assert_same(got, want)
    finally:
        J.self_check.cache_clear()


@pytest.mark.parametrize("name, privacy", [("ldp-ucrl-vtr", "ldp"), ("pp-ucrl-vtr", "jdp"), ("private-linopt-vi", "jdp"),
                                           ("pp-ucrl-vtr-laplace", "ldp"), ("pp-ucrl-vtr-plus", "jdp")])
def test_one_run_audits_keep_the_numpy_loop(monkeypatch, name, privacy):
    """A one-run audit (each canary's contribution under both bits) keeps the numpy loop (audit_records.audit_compiles);
    many-trial audits run compiled (test_audited_compiled.py)."""
    calls = []
    monkeypatch.setattr(E, "_run_compiled", lambda *a, **k: calls.append(1))
    spec = LEARNERS[name]
    c = RunConfig(name, privacy, epsilon=1.0, **dict(spec.test_settings))
    res = spec.run(c, spawn_sequences(7, 2), audit=AuditHook("B", plan=CanaryPlan((1, 3), ("A", "B"))))
    assert calls == [] and res.tap.canary_records


def test_radius_reading_the_log_det(monkeypatch):
    """UCRL-VTR's radius reads the log det (compiled through its closed form, Design.logdet_radius); the non-private
    instances of seeds 000 and 003 do not. A radius that reads it in another form keeps the numpy loop."""
    from privacct.algorithms.linear_mixture.learners import design_for

    assert not E._radius_ignores_logdet(design_for("ucrl-vtr", cfg("ucrl-vtr", "none", delta=0.0), "riverswim-lm"))
    for name in ("pp-ucrl-vtr", "pp-ucrl-vtr-plus", "private-linopt-vi"):
        assert E._radius_ignores_logdet(design_for(name, cfg(name, "none", delta=0.0), "riverswim-lm")), name
    calls = []
    monkeypatch.setattr(E, "_run_compiled", lambda *a, **k: calls.append(1))
    original = E.run_design

    def other_form(des, *a, **k):
        rad = des.radius_p
        des.radius_p = lambda k, logdet=None: rad(k, None if logdet is None else 2.0 * logdet)
        return original(des, *a, **k)

    monkeypatch.setattr("privacct.algorithms.linear_mixture.learners.run_design", other_form)
    LEARNERS["ucrl-vtr"].run(cfg("ucrl-vtr", "none", episodes=3, delta=0.0), spawn_sequences(0, 1))
    assert calls == []


def test_the_compiled_loop_is_compiled_once_for_greedy_and_mirror_descent_learners():
    """run_chunk's read-only inputs (the reward table and the transition kernel of mirror descent, placeholders
    otherwise) reach it read-only on every path: one signature, one compilation on a fresh machine (engine._readonly)."""
    for name in ("pp-ucrl-vtr", "private-linopt-po"):
        LEARNERS[name].run(cfg(name, "jdp", episodes=20), spawn_sequences(3, 1))
    names = J.run_chunk.py_func.__code__.co_varnames
    i, j = names.index("R3"), names.index("P2")
    assert J.run_chunk.signatures
    for sig in J.run_chunk.signatures:
        assert sig[i].mutable is False and sig[j].mutable is False, sig
