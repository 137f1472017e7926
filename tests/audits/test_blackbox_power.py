"""Power against the mechanism audited (issue 19): black-box audits, leakier versions, declared criteria.

A black-box mechanism (a user's function, nothing declared) passes only with a power check against a
leakier version of itself (``leakier=``); without one (and without ``power=``) an audit that does not
fail is ``inconclusive``: "no violation found; power unknown for this mechanism".
"""

import functools
import json
import math

import numpy as np
import pytest

from privacct.audits import audit_mechanism, canonical_power, power
from privacct.audits.oracle import LossStructure
from privacct.audits.power import NO_POWER_REASON, PowerCheck, exact_epsilon, leakier_check, structure_power
from privacct.audits.mechanism_audit import LEAKIER_SPAWN_KEY, leakier_seeds
from privacct.errors import PrivacctError


# ------------------------------------------------------------------------------------------------
# A user's JDP UCB bandit on a Laplace binary-tree counter, written in plain numpy (the issue's case)

def ucb_tree_bandit(dataset, rng, size, *, users=16, arms=2, epsilon=1.0, noise=1.0, bug=None):
    """K users, A arms: user t gets the arm the agent picks from the released per-arm reward sums (UCB) and
    answers with a fixed reward; user 1 (the canary) answers 1 (D = "A") or 0 (D' = "B") to the agent's first
    arm (arm 0 for both: a valid JDP pair). The reward sums go through a binary-tree counter with Laplace node
    noise b = (floor(log2 K) + 1) / epsilon (sensitivity 1), times ``noise``; every release is observed.
    bug "redraw": every release redraws the noise of every node it sums (true pure eps K / (floor(log2 K) + 1),
    3.2 at K = 16); bug "no-depth": b = 1 / epsilon (true eps floor(log2 K) + 1)."""
    levels = int(math.floor(math.log2(users))) + 1
    b = (1 if bug == "no-depth" else levels) / epsilon * noise
    resp = np.random.default_rng(7).integers(0, 2, size=(users, arms)).astype(float)
    resp[0] = 1.0 if dataset == "A" else 0.0
    exact = np.zeros((levels, size, arms))
    noisy = np.zeros((levels, size, arms))
    pulls = np.zeros((size, arms))
    released = np.zeros((size, arms))
    out = np.empty((size, users, arms))
    rows = np.arange(size)
    for t in range(1, users + 1):
        if t == 1:
            arm = np.zeros(size, dtype=np.int64)
        else:
            n = np.maximum(pulls, 1.0)
            arm = np.argmax(released / n + np.sqrt(2.0 * math.log(t) / n), axis=1)
        pulls[rows, arm] += 1.0
        x = np.zeros((size, arms))
        x[rows, arm] = resp[t - 1, arm]
        i = (t & -t).bit_length() - 1
        exact[i] = exact[:i].sum(axis=0) + x
        exact[:i] = 0.0
        noisy[i] = exact[i] + rng.laplace(0.0, b, size=(size, arms))
        noisy[:i] = 0.0
        bits = [j for j in range(levels) if (t >> j) & 1]
        if bug == "redraw":
            released = sum(exact[j] + rng.laplace(0.0, b, size=(size, arms)) for j in bits)
        else:
            released = sum(noisy[j] for j in bits)
        out[:, t - 1] = released
    return out.reshape(size, users * arms)


def noisy_histogram(dataset, rng, size, *, noise=2.0):
    """A user's histogram release: counts + Laplace(noise) per bin (replace-one: two bins move by 1, so
    noise 2 is eps = 1; Dwork & Roth 2014, Sec. 3.3)."""
    counts = np.asarray(dataset, dtype=float)
    return counts + rng.laplace(0.0, noise, size=(size, counts.size))


HIST_D, HIST_D2 = np.array([3.0, 1, 1, 1, 1]), np.array([2.0, 2, 1, 1, 1])


# ------------------------------------------------------------------------------------------------ (a)

@pytest.mark.parametrize("bug", ["redraw", "no-depth"])
def test_planted_tree_bug_is_never_reported_passes_without_power(bug):
    """The issue's seed 0 ("passes" at eps_lb 0.870 with the canonical criterion): with the default, a black box
    that does not fail is inconclusive, whatever the seed."""
    mech = functools.partial(ucb_tree_bandit, bug=bug)
    verdicts = []
    for seed in range(4):
        r = audit_mechanism(mech, "A", "B", epsilon=1.0, trials=4000, seed=seed, executor="inline")
        verdicts.append(r.verdict)
        assert r.verdict in ("fails", "inconclusive")
        if r.verdict == "inconclusive":
            assert r.reason == NO_POWER_REASON and r.power.criterion == "unknown" and not r.power.has_power
    if bug == "no-depth":  # true eps 5: caught
        assert verdicts == ["fails"] * 4
    # the old default would have said "passes" for the redraw bug (the issue): the canonical criterion is optimistic
    old = audit_mechanism(functools.partial(ucb_tree_bandit, bug="redraw"), "A", "B", trials=4000, seed=0,
                          executor="inline", power=canonical_power)
    assert old.verdict == "passes" and old.epsilon_lower_bound < 1.0


def test_depth_bug_with_a_leakier_version_of_itself_still_never_passes():
    """A bug that only changes a noise scale (the tree depth ignored: eps 5) stays in the mechanism's family:
    with its leakier version (noise / 2) the audit fails, it never passes."""
    mech = functools.partial(ucb_tree_bandit, bug="no-depth")
    leaky = functools.partial(ucb_tree_bandit, bug="no-depth", noise=0.5)
    for seed in range(3):
        r = audit_mechanism(mech, "A", "B", epsilon=1.0, trials=4000, seed=seed, executor="inline", leakier=leaky)
        assert r.verdict == "fails"
        assert r.power.criterion == "leakier-simulated" and "not simulated" in r.power.description


def test_issue_scale_redraw_bug_is_not_passed_by_default():
    """The issue's exact budget: K = 16, 20,000 trials per side, seed 0."""
    r = audit_mechanism(functools.partial(ucb_tree_bandit, bug="redraw"), "A", "B", epsilon=1.0, trials=20_000, seed=0,
                        executor="inline")
    assert r.verdict != "passes"
    assert r.verdict == "fails" or r.reason == NO_POWER_REASON


# ------------------------------------------------------------------------------------------------ (b)

def test_correct_black_box_with_leakier_passes_at_an_adequate_trial_count():
    leaky = functools.partial(noisy_histogram, noise=1.0)  # noise scale halved: eps 2
    verdicts = [audit_mechanism(noisy_histogram, HIST_D, HIST_D2, epsilon=1.0, trials=4000, seed=s, executor="inline",
                                leakier=leaky).verdict for s in range(6)]
    assert verdicts.count("passes") >= 5 and "fails" not in verdicts, verdicts
    # the correct bandit (K = 8) passes at 20,000 trials per side
    bandit = functools.partial(ucb_tree_bandit, users=8)
    r = audit_mechanism(bandit, "A", "B", epsilon=1.0, trials=20_000, seed=0, executor="inline",
                        leakier=functools.partial(ucb_tree_bandit, users=8, noise=0.5))
    assert r.verdict == "passes" and r.power.criterion == "leakier-simulated"
    assert r.power.reference_epsilon is None and r.power.achievable_lower_bound > 1.0 and r.power.trials_needed is None
    assert "3 of 3" in r.power.description or "2 of 3" in r.power.description


def test_correct_black_box_with_leakier_fails_at_most_at_the_confidence_rate():
    """Soundness is the audit's: a leakier version changes power, never eps_lb. 60 small audits at confidence 0.9."""
    leaky = functools.partial(noisy_histogram, noise=1.0)
    rs = [audit_mechanism(noisy_histogram, HIST_D, HIST_D2, epsilon=1.0, trials=600, seed=s, confidence=0.9,
                          executor="inline", leakier=leaky) for s in range(60)]
    fails = sum(r.verdict == "fails" for r in rs)
    assert fails <= 6 + 4, fails  # 10% of 60, with slack for the binomial spread (P[Bin(60, 0.1) > 10] < 0.07)
    assert sum(r.verdict == "passes" for r in rs) >= 30  # and the audits are not vacuous


def test_too_leaky_a_reference_gives_no_power():
    """A leakier version certified above 2 x the claim is not a reference at 2 x the claim (noise / 8 of a correct
    mechanism: eps 8): no power, with the reason."""
    too = functools.partial(noisy_histogram, noise=0.25)
    r = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, epsilon=1.0, trials=20_000, seed=0, executor="inline",
                        leakier=too)
    assert r.verdict == "inconclusive" and not r.power.has_power
    assert "not a reference" in r.power.description and r.power.achievable_lower_bound > 2.0


# ------------------------------------------------------------------------------------------------ (c)

def test_black_box_without_leakier_or_power_is_inconclusive_with_the_reason():
    r = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, epsilon=1.0, trials=20_000, seed=0, executor="inline")
    assert r.verdict == "inconclusive" and 0.5 < r.epsilon_lower_bound <= 1.0
    assert r.reason == "no violation found; power unknown for this mechanism" == NO_POWER_REASON
    assert r.power.criterion == "unknown" and not r.power.has_power and r.power.trials_needed is None
    assert "leakier" in r.power.description
    assert NO_POWER_REASON in r.summary() and "INCONCLUSIVE" in r.summary()
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))  # strict JSON: no NaN, no Infinity
    assert d["reason"] == NO_POWER_REASON and d["power"]["reference_epsilon"] is None
    assert d["power"]["achievable_lower_bound"] is None
    # fails still happens whenever eps_lb > claim, power or not
    leaky = audit_mechanism(functools.partial(noisy_histogram, noise=0.5), HIST_D, HIST_D2, epsilon=1.0,
                            trials=20_000, seed=0, executor="inline")
    assert leaky.verdict == "fails" and leaky.reason.startswith("violation certified")


def test_canonical_power_is_an_explicit_opt_in():
    r = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, epsilon=1.0, trials=20_000, seed=0, executor="inline",
                        power=canonical_power)
    assert r.verdict == "passes" and r.power.criterion == "canonical-laplace-2x"
    assert "not the mechanism audited" in r.power.description


# ------------------------------------------------------------------------------------------------ (d)

def test_a_leakier_version_that_does_not_leak_more_gives_no_power():
    for seed in range(4):
        r = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, epsilon=1.0, trials=4000, seed=seed, executor="inline",
                            leakier=noisy_histogram)
        assert r.verdict == "inconclusive" and not r.power.has_power, r.power.description
        assert r.power.achievable_lower_bound <= 1.0


# ------------------------------------------------------------------------------------------------ contract

def test_leakier_runs_are_deterministic_and_independent_of_the_audit_streams():
    kw = dict(epsilon=1.0, trials=2000, seed=3, executor="inline", leakier=functools.partial(noisy_histogram, noise=1.0))
    a = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, **kw)
    b = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, **kw)
    assert a.power == b.power and a.counts == b.counts
    c = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, **dict(kw, seed=4))
    assert c.power.description != a.power.description
    # a leakier version identical to the mechanism does not replay the audit's own samples
    same = audit_mechanism(noisy_histogram, HIST_D, HIST_D2, **dict(kw, leakier=noisy_histogram))
    replicates = same.power.description.split("[")[1].split("]")[0].split(", ")
    assert len(set(replicates)) > 1 and replicates != [f"{same.epsilon_lower_bound:.3f}"] * 3
    seqs = leakier_seeds(3, 1, 2)
    assert [s.spawn_key for s in seqs] == [(LEAKIER_SPAWN_KEY, 1, 0), (LEAKIER_SPAWN_KEY, 1, 1)]
    assert all(s.entropy == 3 for s in seqs)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(leakier=42), "leakier must be a mechanism"),
    (dict(leakier=noisy_histogram, power=canonical_power), "not both"),
    (dict(leakier=lambda d, rng, size: rng.normal(size=(size, 3))), "shape"),
])
def test_bad_leakier_is_refused(kwargs, needle):
    with pytest.raises(PrivacctError, match=needle):
        audit_mechanism(noisy_histogram, HIST_D, HIST_D2, trials=200, executor="inline", **kwargs)


def test_leakier_check_rule():
    yes = leakier_check([1.2, 0.9, 1.1], 1.0, trials=100)
    assert yes.has_power and yes.achievable_lower_bound == 1.1 and "2 of 3" in yes.description
    no = leakier_check([1.2, 0.9, 0.8], 1.0, trials=100)
    assert not no.has_power and "rerun with more trials" in no.description
    capped = leakier_check([1.5, 1.6, 1.7], 1.0, trials=100, joint_lower_bounds=[1.4, 2.1, 1.6])
    assert not capped.has_power and "not a reference" in capped.description
    assert json.dumps(capped.to_dict(), allow_nan=False)


# ------------------------------------------------------------------------------------------------ exact criteria

def test_exact_epsilon_of_loss_structures():
    # Laplace shift a (b = 1): delta(eps) = 1 - e^((eps - a) / 2), so eps(delta) = a + 2 ln(1 - delta)
    assert exact_epsilon(LossStructure((1.0,), 0.0), 0.0) == 1.0
    assert exact_epsilon(LossStructure((1.0,), 0.0), 0.1) == pytest.approx(1.0 + 2 * math.log(0.9), abs=2e-3)
    assert exact_epsilon(LossStructure((), 1.0), 1e-5) == pytest.approx(power.bounds.epsilon_from_mu(1.0, 1e-5))
    assert math.isinf(exact_epsilon(LossStructure((0.5,), 0.3), 0.0))
    ref = power.reference_structure(LossStructure((0.2, 0.3), 0.1), 2.0, 1e-3)
    assert exact_epsilon(ref, 1e-3) == pytest.approx(2.0, abs=1e-6)


def test_structure_criterion_of_a_scalar_laplace_is_the_canonical_one():
    crit = structure_power(LossStructure((1.0,), 0.0))
    for n in (50, 500, 5000):
        a, b = crit(n, 0.025, 0.0, 1.0), canonical_power(n, 0.025, 0.0, 1.0)
        assert a.achievable_lower_bound == pytest.approx(b.achievable_lower_bound, abs=0.01)
        assert a.has_power == b.has_power


@pytest.mark.parametrize("case", ["laplace-vector", "tree-control"])
def test_structure_criterion_matches_simulated_audits_of_its_reference(case):
    """At the criterion's trials_needed, the reference (the same mechanism at 2 x the claim) is certified above
    the claim about half of the time (the criterion's conservative median), not far less: the criterion is not
    optimistic for these observations (independent coordinates)."""
    if case == "laplace-vector":
        from privacct.audits.catalog import get
        from privacct.audits.catalog.additive_and_local import LaplaceVector

        e = get("laplace-vector")
        mech, ref, d, d2, claim, conf, alpha = e.mechanism, LaplaceVector(0.5), e.dataset, e.neighbour, 1.0, 0.95, 0.025
    else:
        from privacct.audits.mutants.planted_privatizers import TreeCounterPrivatizer

        mech, ref, d, d2, claim, conf, alpha = (TreeCounterPrivatizer(), TreeCounterPrivatizer(epsilon=8.0), "A", "B",
                                                4.0, 0.99, 0.005)
    need = mech.power_criterion(d, d2)(10, alpha, 0.0, claim).trials_needed
    hit = np.mean([audit_mechanism(ref, d, d2, epsilon=claim, trials=need, seed=s, confidence=conf, executor="inline",
                                   power=power.unknown_power).epsilon_lower_bound > claim for s in range(40)])
    assert 0.35 <= hit <= 0.9, (need, hit)


def test_declared_criteria_of_privacct_mechanisms():
    from privacct.audits.reference_mechanisms import GaussianMechanism, LaplaceMechanism, NullMechanism, RandomizedResponse

    assert audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=20_000).power.criterion == "exact-loss-2x"
    assert audit_mechanism(RandomizedResponse(1.0), 0, 1, trials=20_000).power.criterion == "exact-rates-2x"
    assert audit_mechanism(NullMechanism(), 0, 1, trials=2000).power.criterion == "canonical-laplace-2x"
    g = audit_mechanism(GaussianMechanism(1.0), 0.0, 1.0, epsilon=1.0, trials=2000)  # delta = 0: no finite eps to scale
    assert g.verdict == "fails" or not g.power.has_power
    assert LaplaceMechanism(1.0).power_criterion(0.0, 0.0) is None  # nothing differs: no reference
    pc = LaplaceMechanism(1.0).power_criterion(0.0, 1.0)(5000, 0.025, 0.0, math.inf)
    assert isinstance(pc, PowerCheck) and not pc.has_power and pc.to_dict()["reference_epsilon"] is None


def test_catalogue_private_entries_all_have_power_against_themselves():
    """Every private catalogue entry either declares a criterion from its exact privacy-loss distribution, whose
    exact eps is the entry's stated true eps, or carries a leakier version of itself."""
    from privacct.audits.catalog import catalogue
    from privacct.audits.mechanism_audit import declared_power

    for e in catalogue().values():
        if not e.private:
            continue
        declared = declared_power(e.mechanism, [(e.dataset, e.neighbour)])
        assert (declared is None) != (e.leakier is None), e.name
        ls = getattr(e.mechanism, "loss_structure", None)
        if ls is not None:
            assert exact_epsilon(ls(e.dataset, e.neighbour), e.delta) == pytest.approx(e.true_epsilon, rel=1e-9), e.name


def test_planted_bug_structures_are_those_of_what_runs():
    from privacct.audits.mutants import CONTROLS, MUTANTS, LearnerMutant

    for m in list(MUTANTS.values()) + list(CONTROLS.values()):
        if isinstance(m, LearnerMutant):
            continue
        s = m.privatizer.loss_structure("A", "B")
        if m.name in CONTROLS:
            assert s is not None and exact_epsilon(s, m.claim.delta) <= m.claim.epsilon * (1 + 1e-6), m.name
        elif m.privatizer.bug in ("tree-redraw", "shared-noise", "noise-reused"):
            assert s is None and m.privatizer.power_criterion("A", "B") is None, m.name  # structural: no criterion
