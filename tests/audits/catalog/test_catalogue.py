"""The catalogue of benchmark mechanisms (privacct.audits.catalog): soundness at small scale, the
stated true eps of the sparse-vector entries, and the entries' contract."""

import math
import pickle

import numpy as np
import pytest

from privacct.audits.catalog import catalogue, get
from privacct.errors import PrivacctError

PRIVATE = [e for e in catalogue().values() if e.private]


def test_catalogue_has_private_and_broken_entries_with_sources():
    cat = catalogue()
    assert len(PRIVATE) >= 15 and sum(not e.private for e in cat.values()) >= 15
    for e in cat.values():
        assert e.source and (e.true_epsilon <= e.claim_epsilon * (1 + 1e-12)) == e.private, e.name
        out = np.asarray(e.mechanism(e.dataset, np.random.default_rng(0), 7))
        assert out.shape[0] == 7 and np.all(np.isfinite(out))
        pickle.loads(pickle.dumps(e.mechanism))  # runs on processes
    with pytest.raises(PrivacctError, match="catalogue entry"):
        get("no-such-mechanism")


@pytest.mark.parametrize("entry", PRIVATE, ids=lambda e: e.name)
def test_private_mechanism_is_never_audited_above_its_true_epsilon(entry):
    for seed in (0, 1):
        r = entry.audit(trials=20_000, seed=seed, executor="inline")
        assert r.epsilon_lower_bound <= entry.true_epsilon, (seed, r.test)
        assert r.verdict != "fails"


def _first_above_loss(b_nu, b_rho, q, q2, threshold=1.0):
    """sup |privacy loss| of the c = 1 sparse vector that releases (index k of the first answer above the
    noisy threshold, its noisy answer v), by numerical integration of
    p(k, v) = f_nu(v - q_k) int_{rho <= v - T} f_rho(rho) prod_{j<k} F_nu(T + rho - q_j) d rho."""
    r = np.linspace(-50, 50, 20001)
    dr = r[1] - r[0]
    f = lambda x, b: np.exp(-np.abs(x) / b) / (2 * b)  # noqa: E731
    F = lambda x, b: np.where(x < 0, 0.5 * np.exp(x / b), 1 - 0.5 * np.exp(-x / b))  # noqa: E731

    def dens(q):
        rows = []
        for k in range(len(q)):
            g = f(r, b_rho) * np.prod([F(threshold + r - q[j], b_nu) for j in range(k)], axis=0)
            rows.append(f(r + threshold - q[k], b_nu) * np.cumsum(g) * dr)
        return np.array(rows)
    p, p2 = dens(q), dens(q2)
    ok = (p > 1e-250) & (p2 > 1e-250)
    return float(np.abs(np.log(p[ok]) - np.log(p2[ok])).max())


def test_stated_true_epsilon_of_the_alg3_entries():
    e = get("svt-first-above-index-value")
    assert _first_above_loss(2.0, 2.0, e.dataset, e.neighbour) == pytest.approx(e.true_epsilon, abs=0.01)
    assert get("svt-alg3").true_epsilon == e.true_epsilon
    r = get("numerical-svt-reused-noise")
    assert _first_above_loss(6.0, 3.0, r.dataset, r.neighbour) == pytest.approx(r.true_epsilon, abs=0.01)
    assert math.isinf(get("noiseless-branch").true_epsilon)


def test_binary_randomized_response_keeps_the_catalogues_former_draws():
    """The catalogue's randomized response is the reference one under its own label; its keep probability
    expit(eps) equals the former 1 / (1 + exp(-eps)) at every eps the catalogue lists, so its draws are the same
    bytes (a different keep rule, e.g. e^eps / (1 + e^-eps), changes them and fails here)."""
    from privacct.audits.catalog.additive_and_local import BinaryRandomizedResponse

    for e in catalogue().values():
        if not isinstance(e.mechanism, BinaryRandomizedResponse):
            continue
        eps = e.mechanism.epsilon
        for bit in (0, 1):
            got = e.mechanism(bit, np.random.default_rng(3), 4096)
            u = np.random.default_rng(3).random(4096)
            former = np.where(u < 1.0 / (1.0 + math.exp(-eps)), bit, 1 - bit)
            assert np.array_equal(got, former), e.name
        check = e.mechanism.power_criterion(0, 1)(10_000, 0.025, 0.0, eps)
        assert check.description.startswith("binary randomized response"), check.description
