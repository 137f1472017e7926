"""The contract every registered counting strategy passes (like dp_accounting's accountant test base; issue 22 item 3).

For each strategy and small K, against its declared factorization A = L R (``factorization``, explicit matrices):

* the declaration: L R = A, R's columns dominated by column 1 (docs/counters.md#column-1-dominates), a Toeplitz
  strategy's matrices Toeplitz with the declared coefficients;
* what the accountants see: 0/1 columns with ``rows_per_user`` ones in column 1 at multiplier 1 (uniform), or one
  release at multiplier ``column_norm`` (otherwise); ``column_norm`` an upper bound on the brute-force column norms
  and tight to its stated margin; the log's ``per_user_count`` and ``sensitivity_multiplier`` the same figures;
* what a release carries: ``prefix_variances`` / ``worst_prefix_variance`` the squared row norms of L,
  ``worst_prefix_l1`` the largest row l1 norm;
* the runtime: a FactorizedCounter whose every draw is replaced by a unit vector (draw j -> e_j) releases, after
  step t, row t of its executed L: it equals the declared L, the ledger rows it records (the draws' users and
  weights) equal the declared R, and L_exec R_rec = A; with noise zero it releases the exact prefix sums.

Each check is a plain function, so that ``test_the_contract_catches`` can show it fails on a strategy broken in the
way it guards against. The toy of conftest.py passes the same contract (``TestToyStrategy``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import privacct.counters.counter as counter_module
import privacct.mechanisms as mechanisms_module
from privacct.counters.blt import Blt
from privacct.counters.counter import FactorizedCounter
from privacct.counters.registry import get_strategy, strategy_names
from privacct.counters.strategies import Strategy
from privacct.counters.tree_honaker import TreeHonaker
from privacct.ledger import Ledger, check_ledger
from privacct.log import MechanismLog, ReleaseGroup, Sensitivity, Structure
from privacct.rng import spawn_generators

KS = (1, 2, 3, 5, 8, 13, 16, 33)
BUFFERS = ((0.9, 0.3), (0.5, 0.1))
RTOL = 1e-9            # float recursions and solves against explicit matrices, at K <= 33
NORM_MARGIN = 1e-5     # column norms are raised outward: 2^-20 + 2^-40 for blt (docs/counters.md#blt), less otherwise


def specs(impl, K):
    """The structures a strategy is checked at: explicit buffers and the default (optimised) ones if it takes them."""
    if impl.takes_buffers:
        return [Strategy(impl.name, BUFFERS).structure(K), Strategy(impl.name).structure(K)]
    return [Strategy(impl.name).structure(K)]


def _prefix_matrix(K):
    return np.tril(np.ones((K, K)))


# --------------------------------------------------------------------------- the checks
def check_declaration(impl, spec):
    """L R = A; column 1 of R dominates every column; a Toeplitz strategy's L and R are Toeplitz with its columns."""
    K = int(spec.leaves)
    L, R = impl.factorization(spec)
    assert L.shape[0] == K and R.shape[1] == K and L.shape[1] == R.shape[0], (L.shape, R.shape)
    np.testing.assert_allclose(L @ R, _prefix_matrix(K), rtol=0, atol=RTOL * K)
    for p in (1, 2):
        norms = np.linalg.norm(R, p, axis=0)
        assert norms[0] >= norms.max() * (1 - 1e-12), f"column 1 of R does not dominate in l{p}: {norms}"
    if impl.toeplitz:
        assert L.shape == R.shape == (K, K)
        for M, col in ((R, impl.column_coefficients(spec, K)), (L, impl.release_noise_column(spec, K))):
            np.testing.assert_array_equal(M[:, 0], col)
            for d in range(1, K):                              # every sub-diagonal constant: Toeplitz
                assert np.all(np.diagonal(M, -d) == M[d, 0]) and not np.any(np.triu(M, 1))


def check_accounting(impl, spec):
    """What the accountants see equals R: ``rows_per_user`` releases at ``release_multiplier``, ``column_norm`` an
    upper bound on the largest column norm of R, within its stated margin; the log's figures are the same."""
    K = int(spec.leaves)
    _, R = impl.factorization(spec)
    for p, norm in ((1, "l1"), (2, "l2")):
        brute = np.linalg.norm(R, p, axis=0).max()
        got = impl.column_norm(spec, norm)
        assert brute <= got <= brute * (1 + NORM_MARGIN), f"{norm} column norm {got!r} against brute force {brute!r}"
    if impl.uniform:
        assert set(np.unique(R)) <= {0.0, 1.0}, "a uniform strategy's R has 0/1 entries"
        assert int(np.count_nonzero(R[:, 0])) == impl.rows_per_user(K)
        assert int(np.count_nonzero(R, axis=0).max()) <= impl.rows_per_user(K)
        multipliers = {mech: 1.0 for mech in ("gaussian", "laplace")}
    else:
        assert impl.rows_per_user(K) == 1
        multipliers = {"gaussian": impl.column_norm(spec, "l2"), "laplace": impl.column_norm(spec, "l1")}
    for mech, m in multipliers.items():
        assert impl.release_multiplier(spec, mech) == m
        group = ReleaseGroup("g", mech, 1.0, Sensitivity("l1" if mech == "laplace" else "l2", 1.0), spec)
        assert group.sensitivity_multiplier == m and group.per_user_count == impl.rows_per_user(K)


def check_figures(impl, spec):
    """Prefix variances are the squared row norms of L, their maximum the worst over every prefix length; the worst
    prefix l1 is the largest row l1 norm of L."""
    K = int(spec.leaves)
    L, _ = impl.factorization(spec)
    rows2, rows1 = (L * L).sum(axis=1), np.abs(L).sum(axis=1)
    np.testing.assert_allclose(impl.prefix_variances(spec, K), rows2, rtol=RTOL)
    for T in sorted({1, max(K // 2, 1), K}):
        assert math.isclose(impl.worst_prefix_variance(spec, T), rows2[:T].max(), rel_tol=RTOL)
        assert math.isclose(impl.worst_prefix_l1(spec, T), rows1[:T].max(), rel_tol=RTOL)


class _Recorder:
    """A ledger that keeps each record's users and weights (FactorizedCounter records weighted draws itself)."""

    def __init__(self):
        self.rows = []

    def record(self, *, users, weights=None, **_):
        self.rows.append((users, None if weights is None else np.array(weights, dtype=float)))


def read_runtime(spec, monkeypatch, *, unit=True, leaf_users=None):
    """(L_exec, R_rec, releases): a FactorizedCounter of ``spec`` over K steps of x = 0 whose j-th draw is the unit
    vector e_j (values of N >= the declared draws coordinates), so the release after step t is row t of the executed
    L; R_rec from the ledger records (row j: draw j's users with its weights, 1 each if unweighted). ``unit=False``:
    every draw is zero and x_t = e_t, so the releases are the exact prefix sums. ``leaf_users``: batched leaves (leaf t
    holds users leaf_users[t - 1]); R_rec's columns are then users, not leaves."""
    K = int(spec.leaves)
    N = 2 * K + 2                      # more than any strategy here draws (tree-honaker: 2K - popcount(K))
    ledger = _Recorder()
    count = [0]

    def fake_draw(mechanism, rngs, shape, scale, *, ledger=None, group=None, users=None):
        out = np.zeros((len(rngs),) + tuple(shape))
        if unit:
            out[..., count[0]] = 1.0
        count[0] += 1
        if ledger is not None:          # TreeCounter's draws record themselves through draw()
            ledger.record(users=users)
        return out

    monkeypatch.setattr(counter_module, "draw", fake_draw)
    monkeypatch.setattr(mechanisms_module, "draw", fake_draw)
    shape = (N,) if unit else (K,)
    c = FactorizedCounter(shape, strategy=spec, leaves=K, mechanism="gaussian", scale=1.0, rngs=spawn_generators(0, 1),
                          ledger=ledger, group="g", leaf_users=leaf_users)
    out = np.array([c.add((np.zeros((1, N)) if unit else np.eye(1, K, t)))[0] for t in range(K)])
    n = count[0]
    assert n == len(ledger.rows) < N, "every draw recorded once"
    R_rec = np.zeros((n, K if leaf_users is None else leaf_users[-1][1]))
    for j, ((a, b), w) in enumerate(ledger.rows):
        R_rec[j, a - 1:b] = 1.0 if w is None else w
    return out[:, :n], R_rec, out


def check_runtime(impl, spec, monkeypatch):
    """The counter runs the declared factorization: its release noise is the declared L draw for draw, its ledger
    records the declared R, L_exec R_rec = A, and with zero noise it releases the exact prefix sums."""
    K = int(spec.leaves)
    L, R = impl.factorization(spec)
    L_exec, R_rec, _ = read_runtime(spec, monkeypatch)
    assert L_exec.shape == L.shape, f"the counter made {L_exec.shape[1]} draws, the factorization declares {L.shape[1]}"
    np.testing.assert_allclose(L_exec, L, rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(R_rec, R, rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(L_exec @ R_rec, _prefix_matrix(K), rtol=0, atol=RTOL * K)
    _, _, exact = read_runtime(spec, monkeypatch, unit=False)
    np.testing.assert_array_equal(exact, _prefix_matrix(K))


def check_structure(impl, spec):
    """A log carrying the structure round-trips through JSON and names the strategy; the log's figures come from it."""
    log = MechanismLog("t", "joint", (ReleaseGroup("g", "gaussian", 1.0, Sensitivity("l2", 1.0), spec),))
    back = MechanismLog.from_json(log.to_json())
    assert back == log and back.release_groups[0].structure.strategy == impl.name
    assert Structure.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    assert get_strategy(impl.name) is impl and Strategy.of(spec).implementation is impl


def batches(K, sizes=(2, 1, 3)):
    """Leaf t holds a batch of sizes[(t - 1) % len(sizes)] users, the batches contiguous from user 1."""
    out, first = [], 1
    for t in range(K):
        n = sizes[t % len(sizes)]
        out.append((first, first + n - 1))
        first += n
    return out


def check_batched_runtime(impl, spec, monkeypatch):
    """Batched leaves (docs/counters.md#batched-leaves): with leaf t holding several users, the release noise is the
    declared L as for one-user leaves, and the ledger records every user of leaf s with column s of the declared R
    (the users of a leaf share its weight)."""
    K = int(spec.leaves)
    L, R = impl.factorization(spec)
    leaf_users = batches(K)
    L_exec, R_rec, _ = read_runtime(spec, monkeypatch, leaf_users=leaf_users)
    leaf_of = np.concatenate([np.full(b - a + 1, s) for s, (a, b) in enumerate(leaf_users)])
    np.testing.assert_allclose(L_exec, L, rtol=RTOL, atol=RTOL)
    np.testing.assert_allclose(R_rec, R[:, leaf_of], rtol=RTOL, atol=RTOL)


def check_batched_ledger(impl, spec, mechanism="gaussian"):
    """A real Ledger of a counter over batched leaves: every user's weight norm is her leaf's column norm of R (as a
    one-user leaf's), and check_ledger accounts the run exactly as the same counter over one-user leaves: executed
    epsilon <= declared, and equal to the one-user run's."""
    K = int(spec.leaves)
    _, R = impl.factorization(spec)
    p = 1 if mechanism == "laplace" else 2
    log = MechanismLog("t", "joint", (ReleaseGroup("g", mechanism, 1.0, Sensitivity("l1" if p == 1 else "l2", 1.0),
                                                   spec),))
    leaf_users = batches(K)
    eps = []
    for lu in (leaf_users, None):
        ledger = Ledger()
        c = FactorizedCounter((2,), strategy=spec, leaves=K, mechanism=mechanism, scale=1.0,
                              rngs=spawn_generators(1, 2), ledger=ledger, group="g", leaf_users=lu)
        for _ in range(K):
            c.add(np.ones((2, 2)))
        if lu is not None:
            leaf_of = np.concatenate([np.full(b - a + 1, s) for s, (a, b) in enumerate(lu)])
            norms = ledger.per_user_norms("g", mechanism, 1.0)
            np.testing.assert_allclose(norms[:leaf_of.size], np.linalg.norm(R, p, axis=0)[leaf_of], rtol=1e-9)
        chk = check_ledger(log, ledger, delta=1e-6)
        assert chk.ok, (chk.declared_epsilon, chk.executed_epsilon)
        eps.append(chk.executed_epsilon)
    assert math.isclose(eps[0], eps[1], rel_tol=1e-12), eps


# --------------------------------------------------------------------------- the contract, for every strategy
class CounterStrategyContract:
    """Subclass with an ``impl`` fixture giving a registered strategy: it then passes every check above at KS."""

    @pytest.fixture(params=KS)
    def K(self, request):
        return request.param

    def test_declared_factorization(self, impl, K):
        for spec in specs(impl, K):
            check_declaration(impl, spec)

    def test_accounting_view(self, impl, K):
        for spec in specs(impl, K):
            check_accounting(impl, spec)

    def test_prefix_figures(self, impl, K):
        for spec in specs(impl, K):
            check_figures(impl, spec)

    def test_runtime_runs_the_declared_factorization(self, impl, K, monkeypatch):
        for spec in specs(impl, K):
            check_runtime(impl, spec, monkeypatch)

    def test_structure_round_trip(self, impl, K):
        for spec in specs(impl, K):
            check_structure(impl, spec)

    def test_batched_leaves_share_their_weight(self, impl, K, monkeypatch):
        for spec in specs(impl, K):
            check_batched_runtime(impl, spec, monkeypatch)

    @pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
    @pytest.mark.parametrize("leaves", [2, 13])     # the ledger's accounting at two K (the runtime check: every K)
    def test_batched_leaves_account_as_one_user_leaves(self, impl, leaves, mechanism):
        for spec in specs(impl, leaves):
            check_batched_ledger(impl, spec, mechanism)


class TestBuiltinStrategies(CounterStrategyContract):
    @pytest.fixture(params=strategy_names())
    def impl(self, request):
        return get_strategy(request.param)


class TestToyStrategy(CounterStrategyContract):
    @pytest.fixture
    def impl(self, toy):
        return toy


# --------------------------------------------------------------------------- the contract can fail
class _NormTooSmall(Blt):
    name = "broken-norm"

    def column_sums(self, spec):
        s2, s1 = super().column_sums(spec)
        return 0.9 * s2, 0.9 * s1


class _NoisePath(Blt):
    """The counter-noise-path mutant as a strategy: the recursion runs with Q halved, the declaration is unchanged."""

    name = "broken-noise-path"

    def init_parameters(self, counter):
        super().init_parameters(counter)
        counter._Q = [0.5 * q for q in counter._Q]


class _TreeVariance(TreeHonaker):
    name = "broken-variance"

    def level_variance(self, i):
        return 1.0                      # the plain tree's figure for a least-squares release


class _OneNodeShort(TreeHonaker):
    name = "broken-rows"

    def rows_per_user(self, leaves):
        return super().rows_per_user(leaves) - 1


class _LeafUsers(TreeHonaker):
    """Draws every node but records each over its last user only (a ledger that undercounts users)."""

    name = "broken-users"

    def step(self, counter, t, x, weights):
        draw = counter._draw
        counter._draw = lambda users, w=None: draw((users[1], users[1]), w)
        try:
            super().step(counter, t, x, weights)
        finally:
            del counter._draw


class _WrongDeclaration(TreeHonaker):
    name = "broken-declaration"

    def factorization(self, spec):
        L, R = super().factorization(spec)
        return L, 2.0 * R


@pytest.mark.parametrize("broken, check", [
    (_NormTooSmall, check_accounting),
    (_NoisePath, check_runtime),
    (_TreeVariance, check_figures),
    (_OneNodeShort, check_accounting),
    (_LeafUsers, check_runtime),
    (_WrongDeclaration, check_declaration),
])
def test_the_contract_catches(broken, check, registered, monkeypatch):
    impl = registered(broken())
    spec = Strategy(impl.name, BUFFERS if impl.takes_buffers else None).structure(13)
    args = (monkeypatch,) if check is check_runtime else ()
    with pytest.raises(AssertionError):
        check(impl, spec, *args)
    # the same check passes on the strategy it derives from
    parent = get_strategy(type(impl).__mro__[1].name)
    check(parent, Strategy(parent.name, BUFFERS if parent.takes_buffers else None).structure(13), *args)


# --------------------------------------------------------------------------- the batched-leaf checks can fail
def _leaves_as_users(self, first, last, weights=None):
    return (first, last), weights                    # the leaf map ignored: leaf s recorded as user s


def _one_weight(self, first, last, weights=None):
    users, w = FactorizedCounter.__dict__["_real_leaf_interval_users"](self, first, last, weights)
    return users, (None if w is None else np.full(w.shape, float(np.max(np.abs(weights)))))   # one weight for all


def _tree_without_leaf_users(self):
    return mechanisms_module.TreeCounter(self.shape, leaves=self.leaves, mechanism=self.mechanism, scale=self.scale,
                                         rngs=self.rngs, ledger=self.ledger, group=self.group)


@pytest.mark.parametrize("name, attr, broken", [
    ("tree", "_online_tree", _tree_without_leaf_users),
    ("tree-honaker", "leaf_interval_users", _leaves_as_users),
    ("sqrt-toeplitz", "leaf_interval_users", _leaves_as_users),
    ("blt", "leaf_interval_users", _leaves_as_users),
    ("sqrt-toeplitz", "leaf_interval_users", _one_weight),
    ("blt", "leaf_interval_users", _one_weight),
])
def test_the_batched_checks_catch(name, attr, broken, monkeypatch):
    """A counter that records a batched leaf's draws over the wrong users (the leaf index as a user, the tree not told
    of its batches) or with the wrong weights (the row's largest for every user) fails both batched checks."""
    impl = get_strategy(name)
    spec = Strategy(name, BUFFERS if impl.takes_buffers else None).structure(13)
    with pytest.MonkeyPatch.context() as mp:                   # the real counter passes
        check_batched_runtime(impl, spec, mp)
    check_batched_ledger(impl, spec)
    monkeypatch.setattr(FactorizedCounter, "_real_leaf_interval_users", FactorizedCounter.leaf_interval_users,
                        raising=False)
    monkeypatch.setattr(FactorizedCounter, attr, broken)
    with pytest.raises(AssertionError):
        check_batched_ledger(impl, spec)
    with pytest.raises(AssertionError):
        check_batched_runtime(impl, spec, monkeypatch)
