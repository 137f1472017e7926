"""Privatizers of seed 002 (Chowdhury & Zhou 2022, §5) and their declared mechanism logs.

Three families of per-episode statistics (:mod:`.stats`): ``visits`` N_h(s,a), ``costs``
C_h(s,a) and ``transitions`` N_h(s,a,s'), concatenated into ONE release group ``counts``; one
ledger draw is one release of all coordinates together (basic composition of the paper's three
eps/3 families is the same pure-eps bound as one group with the summed l1 sensitivity).

* CENTRAL (JDP, §5.1, Lemma 5.1): one vector-valued binary-tree counter over the concatenated
  vector (:class:`privacct.mechanisms.TreeCounter`, Chan-Shi-Song; the paper runs one counter per
  coordinate, which releases the same noisy values), Laplace noise per node, drawn once and reused.
  The tree has K - 1 leaves: "the tree has k - 1 leaf nodes at the start of episode k" (§5.1), so
  the prefix over users 1..K is never formed and user K's data is never released. Printed per-node
  scale ``1/eps' = 3 H log K / eps`` (Lemma 5.1 / Cor. 5.2).
* LOCAL (LDP, §5.2, Lemma 5.4): user k perturbs every coordinate of her concatenated vector with
  Laplace noise (:func:`privacct.mechanisms.add_noise`, ``users=(k, k)``); printed scale
  ``1/eps' = 3 H / eps``. The agent sums the reports (post-processing).
* NONE: exact running sums.

Sensitivity (declared in every log; :func:`tabular_neighbours` is the one place it is derived).
Under JDP (Def. 2.2) a user is a response function and s_1 is fixed (Sec. 2.1), so both neighbours
receive the same a_1 from the data-free pi^1: the stage-1 visit coordinate is shared, the stage-1
cost coordinate moves by at most 1, and every other step moves 2 coordinates per family by 1:
l1 <= (2H - 2) + (2H - 1) + 2H = **6H - 3** for the concatenation. Under LDP (Def. 2.3, any two
trajectories) every step may differ: **6H** (2H per family; costs c + c' <= 2 per step). The
paper's proof counts H per family (App. C, "at most H state-action pairs are encountered"), i.e.
3H for the concatenation at the same printed scale: recorded in ``paper``; the any-two-trajectories
value 6H is recorded in the JDP log's parameters (``sensitivity_any_two_trajectories``).
Counter (option ``counter``, docs/counters.md): the JDP counter may be any factorized strategy over the
K - 1 leaves (``tree``, ``tree-honaker``, ``sqrt-toeplitz``, ``blt``); ``tight`` without one picks the
least worst-prefix variance at the claim (:func:`privacct.counters.compare.with_least_noise`; Laplace noise:
``tree-honaker``, same noise scale as the tree and about half its prefix variance); ``paper`` keeps
the tree. An explicit ``counter=tree`` is the printed tree itself.
Per-user releases: the tree structure derives floor(log2 (K - 1)) + 1 nodes; the paper's proof uses
"log K" (base not stated; we read the natural log, which the printed noise scale then uses).
Departure: the printed scale is 0 at K = 1 (log 1 = 0); we use max(1, ln K) so the scale
stays positive.

E terms (Assumption 1; Lemma 5.1: E_1 = (3H/eps) sqrt(8 log^3 K log(6SAT/delta)),
Lemma 5.4: E_1 = (3H/eps) sqrt(8 K log(6SAT/delta)), E_2 with S^2 A T). Both are
``b sqrt(8 m log(6 S A T / delta))`` for per-coordinate Laplace scale b summed over m noises
(Dwork-Roth Cor. 12.4); we compute them from the scale actually used (b from the log, so the
``tight`` mode gets its own E) with m = floor(log2 (K - 1)) + 1 nodes (central; the paper's log K) or
m = K reports (local), times the tunable option ``e_scale`` (1 = theory; docs/seed-002-tabular.md#why-the-printed-constants-cannot-learn shows the
theory values make learning impossible at K = 2e4, so reproductions tune it). For a factorized
counter other than the tree, a release's noise is sum_i w_i Y_i with Y_i i.i.d. Laplace(b), i.e.
independent Laplace(|w_i| b), and Dwork-Roth Cor. 12.3 applies with nu^2 = b^2 sum_i w_i^2: m becomes
the counter's worst prefix variance in node variances (docs/counters.md), its actual error bound.
"""

from __future__ import annotations

import math

import numpy as np

from privacct.errors import PrivacctError
from privacct.ledger import Ledger
from privacct.log import (Claim, MechanismLog, PaperStatement, ReleaseGroup, Sensitivity, Structure,
                          tree_depth)
from privacct.log_readings import GroupOverride, Reading
from privacct.mechanisms import TreeCounter, add_noise

from ..neighbours import GroupDistance, NeighbourSpec, jdp, ldp

from .stats import family_dims

SOURCE = ("Chowdhury & Zhou, Differentially Private Regret Minimization in Episodic MDPs, AAAI 2022 "
          "(arXiv 2112.10599), seed 002")



def paper_log_k(K: int) -> float:
    """The paper's "log K" read as ln K, floored at 1 so the printed scale is positive at K < 3."""
    return max(1.0, math.log(K))


def paper_noise_scale(privacy: str, H: int, K: int, epsilon: float) -> float:
    """Printed Laplace scale: 3 H log K / eps (central, Lemma 5.1) or 3 H / eps (local, Lemma 5.4)."""
    if privacy == "jdp":
        return 3.0 * H * paper_log_k(K) / epsilon
    if privacy == "ldp":
        return 3.0 * H / epsilon
    raise PrivacctError(f"privacy must be jdp or ldp for a noise scale, got {privacy!r}")


GROUP = "counts"


def jdp_readings(H: int, K: int, epsilon: float) -> tuple[Reading, ...]:
    """The four readings of the central privatizer's printed setting (docs/seed-002-tabular.md#readings-and-accounted-epsilon):
    "log K" as ln K (the declared log) or log2 K, times the l1 change of the valid JDP pair (6H - 3, declared)
    or of any two trajectories (6H). The paper's own proof supports (log2 K, 6H - 3)."""
    eq = ("Lemma 5.1 / Cor. 5.2 and App. C: Lap(3H log K / eps) per node, <= H pairs per user in each of 3 families "
          "(eps/3 each), <= log K nodes per release; 'log K' read as log2 K")
    log2 = PaperStatement(sensitivity=3.0 * H, per_user_count=max(1.0, math.log2(K)), equation=eq)
    b2 = 3.0 * H * max(1.0, math.log2(K)) / epsilon
    any_two = Sensitivity("l1", 6.0 * H, "any two trajectories (Def. 2.3's relation; ignores the shared s_1 and a_1 of Def. 2.2): "
                                         "2H per family, 6H in all (docs/seed-002-tabular.md#any-two-trajectories)")
    ln_text = "'log K' read as ln K (b = 3H ln K / eps, the declared printed scale)"
    log2_text = "'log K' read as log2 K (b = 3H log2 K / eps)"
    pair_text = "l1 = 6H - 3 for the valid JDP pair (Def. 2.2: both neighbours receive the same a_1)"
    any_text = "l1 = 6H for any two trajectories (neighbours with different first actions, outside Def. 2.2)"
    return (
        Reading("ln K, valid pair (6H-3)", f"{ln_text}; {pair_text}"),
        Reading("ln K, any two (6H)", f"{ln_text}; {any_text}", overrides=(GroupOverride(GROUP, sensitivity=any_two),)),
        Reading("log2 K, valid pair (6H-3)", f"{log2_text}; {pair_text}",
                supported_by="the proof of Lemma 5.1 (App. C) gives each counter eps/(3H) and lets one user change H "
                             "entries of each of the 3 count families (an l1 change of 3H, i.e. add/remove); under the "
                             "replace-one relation of Def. 2.2 (a user is a response function, s_1 is fixed, Sec. 2.1, so "
                             "both neighbours receive the same a_1) that change is 6H - 3. The proof counts the nodes of "
                             "Chan et al.'s binary mechanism (their Thm 3.5), whose log is base 2: floor(log2 K) + 1 per "
                             "user, so its 'log K' is log2 K",
                overrides=(GroupOverride(GROUP, noise_scale=b2, paper=log2),)),
        Reading("log2 K, any two (6H)", f"{log2_text}; {any_text}",
                overrides=(GroupOverride(GROUP, noise_scale=b2, sensitivity=any_two, paper=log2),)),
    )


#: The paper's definitions of the two privacy models (seed 002).
JDP_RELATION = jdp("seed 002 Def. 2.2 (JDP; s_1 fixed, Sec. 2.1)", shared_start=True)
LDP_RELATION = ldp("seed 002 Def. 2.3 (LDP)")


def tabular_neighbours(privacy: str, H: int) -> NeighbourSpec:
    """The valid pair of seed 002 and the worst-case l1 change of the ``counts`` release (see module
    docstring; the canaries of :mod:`.canary` attain it)."""
    if privacy == "jdp":
        return NeighbourSpec(JDP_RELATION, "JDP response functions A (cost 1, stay) and B (cost 0 at h=1 then 1, "
                                           "move to s_1 + 1 and stay), same a_1 (.canary)", (GroupDistance(
            GROUP, "l1", 6.0 * H - 3.0, True,
            "Def. 2.2: user = cost/state responses to prescribed actions; s_1 fixed (Sec. 2.1) and a_1 from the "
            "data-free pi^1, so at h=1 the visit coordinate is shared (0), the cost coordinate moves by <= 1 and the "
            "transition coordinates by 2; at h>=2 each family moves 2 coordinates by 1: (2H-2)+(2H-1)+2H = 6H-3",
            arbitrary=6.0 * H),))
    if privacy == "ldp":
        return NeighbourSpec(LDP_RELATION, "LDP trajectories A (action 0, stay, cost 1) and B (action A-1, move, "
                                           "cost 1) (.canary)", (GroupDistance(
            GROUP, "l1", 6.0 * H, True,
            "Def. 2.3: any two trajectories; different (s_h, a_h) at every h moves each family's 2H coordinates "
            "by 1 (costs c + c' <= 2 per step): 3 x 2H = 6H"),))
    raise PrivacctError(f"privacy must be jdp or ldp for a neighbouring relation, got {privacy!r}")


def build_tabular_log(*, algorithm: str, privacy: str, calibration: str, epsilon: float, delta: float,
                      H: int, S: int, A: int, K: int, parameters: dict, pooled: bool = False,
                      counter: str | None = None) -> MechanismLog | None:
    """The declared log of one tabular configuration (None when ``privacy == "none"``).

    One release group ``counts``: the three families concatenated (visits | costs | transitions,
    length 2HSA + HSAS), released together, so one ledger draw is one release of everything.
    l1 sensitivity from :func:`tabular_neighbours`: 6H - 3 (JDP) or 6H (LDP); the paper's proof uses
    H per family with eps/3 each, i.e. 3H for the concatenation at the same printed scale (``paper``).
    JDP: a binary tree over K - 1 leaves (the prefix of all K users is never used; Sec. 5.1), so
    K >= 2.

    ``paper``: printed scales, with the derived sensitivity in ``sensitivity.value``; ``tight``:
    the same group, its scale multiplied by the calibrator's smallest factor that meets the claim
    (``privacct.calibrate.calibrate_log``).

    ``pooled`` (option ``pool_over_h``, a departure: docs/seed-002-tabular.md#counts-pooled-over-h): the
    families are summed over h (length 2SA + SAS); the l1 sensitivity is unchanged (6H - 3 / 6H: one user
    still adds H per family, :func:`tabular_neighbours`), so the accounted eps is the same at the same scale.
    """
    if privacy == "none":
        return None
    b = paper_noise_scale(privacy, H, K, epsilon)
    dim = sum(family_dims(H, S, A, pooled).values())
    central = privacy == "jdp"
    dist = tabular_neighbours(privacy, H).group(GROUP)
    if central:
        if K < 2:
            raise PrivacctError(f"episodes must be an integer >= 2 for JDP (the tree has K - 1 leaves), got {K}")
        paper = PaperStatement(sensitivity=3.0 * H, per_user_count=paper_log_k(K),
                               equation="Lemma 5.1 / Cor. 5.2 and App. C: Lap(3H log K / eps) per node, <= H pairs "
                                        "per user in each of 3 families (eps/3 each), <= log K nodes per release")
        if counter in (None, "tree"):
            structure = Structure.tree(K - 1)
            how = "binary tree counter over the K - 1 used prefixes, noise drawn once per dyadic node and reused"
        else:
            from privacct.counters.strategies import Strategy

            structure = Strategy(counter).structure(K - 1, norm="l1")
            how = f"{counter} continual counter over the K - 1 used prefixes (docs/counters.md)"
    else:
        if counter is not None:
            raise PrivacctError(f"option counter applies to JDP (central) learners, got counter={counter!r} with privacy ldp")
        paper = PaperStatement(sensitivity=3.0 * H, per_user_count=1.0,
                               equation="Lemma 5.4 and App. C: Lap(3H / eps) on every coordinate of the user's "
                                        "report, <= H pairs per user in each of 3 families (eps/3 each)")
        structure = Structure.single()
        how = "local randomizer: each user perturbs her own report once"
    sens = Sensitivity("l1", dist.worst_case, dist.derivation)
    what = ("N(s,a) | C(s,a) (costs c = 1 - r) | N(s,a,s') summed over h (pooled: the authors' public code, "
            "a departure from the paper's per-step counts)" if pooled else
            "N_h(s,a) | C_h(s,a) (costs c = 1 - r) | N_h(s,a,s') for all h, s, a, s'")
    group = ReleaseGroup(GROUP, "laplace", b, sens, structure, dimension=dim,
                         description=f"{what}, concatenated; {how}", paper=paper)
    params = {"K": K, "H": H, "S": S, "A": A, "algorithm": algorithm, "privacy": privacy,
              "calibration": calibration, "pool_over_h": bool(pooled), **parameters}
    if dist.arbitrary is not None:
        params["sensitivity_any_two_trajectories"] = dist.arbitrary
    if central and counter is not None:
        params["counter"] = counter
    readings = jdp_readings(H, K, epsilon) if central and calibration == "paper" else ()
    log = MechanismLog(
        name=f"private-{algorithm}-{privacy}-{calibration}",
        privacy_model="joint" if central else "local",
        release_groups=(group,),
        neighbouring="replace-one-user",
        parameters=params,
        claim=Claim(epsilon, delta),
        source=SOURCE + (", Algorithm 1 (PO)" if algorithm == "ucb-po" else ", Algorithm 2 (VI)")
        + (", CENTRAL-PRIVATIZER" if central else ", LOCAL-PRIVATIZER"),
        readings=readings,
    )
    if calibration == "tight" and central and counter is None:
        from privacct.counters.compare import with_least_noise

        log, chosen = with_least_noise(log, GROUP, epsilon=epsilon, delta=delta)
        log = MechanismLog(log.name, log.privacy_model, log.release_groups, log.neighbouring,
                           {**log.params, "counter": chosen, "tight_choice": _tight_choice(log, chosen, K).to_params()},
                           log.claim, log.source)
    elif calibration == "tight":
        from privacct.calibrate import calibrate_log

        log = calibrate_log(log, epsilon=epsilon, delta=delta)
    elif calibration != "paper":
        raise PrivacctError(f"calibration must be paper or tight, got {calibration!r}")
    return log


def e_terms(log: MechanismLog | None, *, S: int, A: int, H: int, K: int, confidence_delta: float,
            e_scale: float) -> tuple[float, float]:
    """(E_{eps,delta,1}, E_{eps,delta,2}) for the scales of ``log`` (0, 0 without privacy)."""
    if log is None:
        return 0.0, 0.0
    T = K * H
    m = counter_terms(log.group(GROUP).structure) if log.privacy_model == "joint" else K
    b1 = b2 = log.group(GROUP).noise_scale
    e1 = b1 * math.sqrt(8.0 * m * math.log(6.0 * S * A * T / confidence_delta))
    e2 = b2 * math.sqrt(8.0 * m * math.log(6.0 * S * S * A * T / confidence_delta))
    return e_scale * e1, e_scale * e2


def _tight_choice(log: MechanismLog, chosen: str, K: int):
    """What ``tight`` chose for the counts and why (privacct.counters.choice.TightChoice, docs/counters.md#choosing-for-regret):
    the noise reaches the policy only through the bonus's E terms, b sqrt(8 m log(6SAT/delta)) with m the counter's worst
    prefix variance in node variances (docs/seed-002-tabular.md#e-terms, :func:`counter_terms`), so at the claim the
    strategy of least b^2 m ranks first; the tree's m is its depth."""
    from privacct.counters.choice import TightChoice

    g = log.group(GROUP)
    m_tree, m = float(tree_depth(max(1, K - 1))), counter_terms(g.structure)
    why = (f"least worst-prefix variance of the counts at the claim: the bonus's E terms scale with b sqrt(m), m = {m:.4g} "
           f"node variances for {chosen} vs {m_tree:.4g} for the tree (noise scale b = {g.noise_scale:.4g})")
    return TightChoice(chosen, "tree", True, why, "E terms (docs/seed-002-tabular.md#e-terms)",
                       (("m_chosen", m), ("m_tree", m_tree), ("noise_scale", g.noise_scale)))


def counter_terms(structure: Structure) -> float:
    """m of the E terms for a central counter: the tree's floor(log2 (K - 1)) + 1 nodes, or a
    factorized counter's worst prefix variance in node variances (module docstring)."""
    from privacct.counters.strategies import Strategy, worst_prefix_variance

    if Strategy.of(structure).is_binary_tree:
        return float(tree_depth(int(structure.leaves)))
    return worst_prefix_variance(structure)


class Privatizer:
    """Turns each episode's statistics into the released (noisy) prefix sums over users 1..k.

    The statistic is the concatenation of the three families (:data:`.stats.FAMILIES`), one
    vector of length 2HSA + HSAS per seed. Central: the tree has K - 1 leaves and user K's
    statistic is never added (no user would read that prefix); ``exact`` holds the noiseless
    prefix sum of what was released (for the audit observation; never released).

    ``ahead`` (the compiled loop of :mod:`.episode_jit`, outside audits and in the many-trial audits of
    :mod:`.audited`): a binary tree is a
    :class:`.ahead.TreeAhead` and a tree-honaker counter a :class:`.ahead.HonakerAhead`, whose nodes the compiled
    loop draws and adds (:meth:`release` is not called then). A fresh blt counter is swapped for an
    :class:`.ahead.BltAhead` by the compiled loop (``learner._drive``, ``BltAhead.runs``).
    """

    def __init__(self, log: MechanismLog | None, dim: int, K: int, rngs: list[np.random.Generator],
                 ledger: Ledger | None, *, ahead: bool = False) -> None:
        self.log = log
        self.rngs = rngs
        self.ledger = ledger
        self.K = K
        self.kind = "none" if log is None else ("central" if log.privacy_model == "joint" else "local")
        self.sums = np.zeros((len(rngs), dim))
        self.exact = np.zeros((len(rngs), dim))
        if self.kind == "central":
            structure = log.group(GROUP).structure
            if structure.kind == "tree" and ahead:   # the compiled loop's counter (.ahead: same draws, same ledger)
                from .ahead import TreeAhead

                self.tree = TreeAhead((dim,), leaves=K - 1, scale=log.group(GROUP).noise_scale, rngs=rngs,
                                      ledger=ledger, group=GROUP)
            elif structure.kind == "tree":
                self.tree = TreeCounter((dim,), leaves=K - 1, mechanism="laplace", scale=log.group(GROUP).noise_scale,
                                        rngs=rngs, ledger=ledger, group=GROUP)
            elif structure.strategy == "tree-honaker" and ahead:   # drawn by the compiled loop (.ahead, the same bytes)
                from .ahead import HonakerAhead

                self.tree = HonakerAhead((dim,), leaves=K - 1, scale=log.group(GROUP).noise_scale, rngs=rngs,
                                         ledger=ledger, group=GROUP)
            else:
                from privacct.counters.counter import FactorizedCounter

                self.tree = FactorizedCounter((dim,), strategy=structure, leaves=K - 1, mechanism="laplace",
                                              scale=log.group(GROUP).noise_scale, rngs=rngs, ledger=ledger, group=GROUP)

    def release(self, k: int, x: np.ndarray) -> np.ndarray:
        """Add user k's statistic ``x`` (B, dim) and return the released sums over users 1..k
        (central, k = K: the sums over users 1..K-1, unchanged)."""
        if self.kind == "central":
            if k <= self.K - 1:
                self.sums = self.tree.add(x)
                self.exact = self.exact + x
        elif self.kind == "local":
            self.sums = self.sums + add_noise(x, "laplace", self.log.group(GROUP).noise_scale, self.rngs,
                                              ledger=self.ledger, group=GROUP, users=(k, k))
            self.exact = self.exact + x
        else:
            self.sums = self.sums + x
            self.exact = self.sums
        return self.sums

    def released(self) -> np.ndarray:
        """The last released statistics (B, 2HSA + HSAS): visits | costs | transitions."""
        return self.sums.copy()
