"""Per-learner constants: noise scales, shifts, confidence radii, release groups and the MechanismLog.

Units. Every environment has one-step rewards in [0, r_max] (r_max = 1/H for the normalised
RiverSwim of seed 001 §6, 1 for HardToLearn), so values satisfy V_h <= r_max (H - h + 1) (1-based
h). The papers write their constants for r_max = 1 (V <= H); we substitute the value scale
``vs = r_max * H`` wherever the papers write H *as a bound on V* (sensitivities, sub-Gaussian
scales, lambda of seed 003), and keep H where it counts stages (budget splits, unions over h).
With r_max = 1 every constant is exactly as printed. seed 001's experiments (rewards / H) print
sigma = 4 H sqrt(2 log(2.5H/delta))/eps, which is this substitution (Delta_f = 1 -> 2 per release).

Sensitivities (``tight`` and the ``sensitivity.value`` of ``paper`` logs) are derived here under
replace-one-user, with the clip the derivation needs made explicit in the learner: the user clips
V_{h+1} to [0, vbar_{h+1}], vbar_{h+1} = r_max (H - h) (docs/seed-001-linear-mixture-ldp.md#sensitivity: Alg. 1 clips only from
above), so ||phi_V|| <= b * vbar_{h+1} with b = ``env.phi_norm_bound`` (computed from the real
features, docs/seed-001-linear-mixture-ldp.md#sensitivity), y = V_{h+1}(s') in [0, vbar_{h+1}], and for the reward statistics of
seed 000 ||varphi|| <= 1, r in [0, r_max]. Per release (one stage h, one statistic):

* Gram phi phi^T (symmetric-gaussian-matrix, ``frobenius-upper``):
  ||upper(xx^T - x'x'^T)||_2 <= ||xx^T - x'x'^T||_F = sqrt(|x|^4 + |x'|^4 - 2 (x.x')^2) <= sqrt(2) B^2;
* target phi y (gaussian, ``l2``): ||x y - x' y'|| <= 2 B vbar.

Those hold for any two trajectories (LDP; JDP of seed 003, whose user owns s_1). Under seed 000's JDP
(Def. 2.2 with s_1 fixed, Sec. 2.1) both neighbours share stage 1's x_1 = phi_{V_2}(s_1, a_1) (a_1 and V_2
come from the data-free first episode with the agent's coins): the stage-1 Gram change is 0 (the log
keeps sqrt(2) B^2, conservative: it cannot express 0) and the stage-1 target change is |x_1| |y - y'| <=
B vbar, which the log declares (likewise |varphi| r_max for the reward target). :func:`mixture_neighbours`
returns these per-group worst cases with the relation.

Shifts and radii are functions of the noise scale that RUNS: in ``tight`` mode the calibrator
multiplies every printed sigma by one common factor (``noise_factor``), and the shift (2 Gamma_k,
2 Upsilon) and the radii are recomputed with the calibrated sigma, exactly as each paper derives
them from its own sigma.

Stage H transition statistics are identically 0 (V_{H+1} = 0, so phi_V = 0): they carry no user
data and theta_H is never used (Q_H = r_H), so no learner releases them (the papers send pure
noise there; their sigma still assumes the printed 2H-way budget split, which we keep in ``paper``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from privacct.errors import PrivacctError
from privacct.log import FACTORIZED_STRATEGIES, Claim, MechanismLog, PaperStatement, ReleaseGroup, Sensitivity, Structure
from privacct.log_readings import GroupOverride, Reading

from ..envs.linear_mixture import LinearMixtureMDP
from ..neighbours import GroupDistance, NeighbourSpec, jdp, ldp

SOURCES = {
    "001": "Liao, He, Gu (ACML 2022), Locally Differentially Private RL for Linear Mixture MDPs [seed 001]",
    "000": "Zhou (2022), Differentially Private RL with Linear Function Approximation [seed 000]",
    "003": "Luyo, Garcelon, Lazaric, Pirotta (2021), DP Exploration in RL with Linear Representation [seed 003]",
}


@dataclass(frozen=True)
class GroupSpec:
    """One release group: statistic ``kind`` (gram|target) of ``family`` (p|r) at 0-based stage h."""

    name: str
    family: str
    kind: str
    h: int
    dim: int
    sensitivity: float
    derivation: str
    paper_sigma: float
    paper_sensitivity: float
    paper_count: float
    equation: str
    worst_case: float = -1.0   # under the learner's relation (-1: = sensitivity)
    any_pair: float = -1.0     # for any two trajectories (-1: = sensitivity)

    def __post_init__(self) -> None:
        if self.worst_case < 0:
            object.__setattr__(self, "worst_case", self.sensitivity)
        if self.any_pair < 0:
            object.__setattr__(self, "any_pair", self.sensitivity)


@dataclass
class Design:
    """Everything a run needs besides randomness: resolved from (config, env)."""

    learner: str
    paper: str
    privacy: str                       # none | jdp | ldp
    mechanism: str                     # none | local | tree
    env: LinearMixtureMDP
    K: int
    lam: float                         # ridge regulariser lambda (I coefficient of Sigma_1)
    reward_regression: bool            # seed 000: learn theta_r from varphi and realised rewards
    policy: str                        # greedy | mirror-descent
    eta: float = 0.0
    groups: list[GroupSpec] = field(default_factory=list)
    shift_p: Callable[[int], float] = lambda k: 0.0
    shift_r: Callable[[int], float] = lambda k: 0.0
    radius_p: Callable[[int, np.ndarray | None], np.ndarray] | None = None   # (k, logdet (B,H)|None) -> (H,) or (B,H)
    radius_r: Callable[[int], np.ndarray] | None = None
    record: dict = field(default_factory=dict)
    #: (c_theta, caps (H,), c) when ``radius_p(k, logdet)`` = c_theta + caps sqrt(c + max(logdet, 0)) at every k
    #: (UCRL-VTR, seed 001 Sec. 6.2): the closed form the compiled loop evaluates per seed from the log det it keeps
    #: (:func:`.episode_jit.logdet_beta`; the engine checks it against ``radius_p`` bit for bit before using it).
    logdet_radius: "tuple[float, np.ndarray, float] | None" = None
    #: Upper truncation of Q: ``stage`` = r_max (H - h + 1) (1-based h; seed 001 Alg. 1 line 5) or ``horizon``
    #: = r_max H at every stage (seed 003 Alg. 1 and Alg. 3: Q~ = min{H, ...}).
    cap: str = "stage"
    #: Privacy noise of the release groups: ``gaussian`` (symmetric Gaussian Gram matrices, Gaussian
    #: vectors; l2 / upper-triangle l2 sensitivities) or ``laplace`` (Laplace on the upper triangle and the
    #: vector; l1 sensitivities; the pure-DP variants of seed 003 Rem. 1 / App. C.4).
    noise: str = "gaussian"
    #: Seed 003 Alg. 3 (variance-aware): a second regression family ``q`` (phi_{V^2}, V^2) and per-step
    #: weights sigma_bar; ``radius_check`` (beta-check) and ``radius_q`` (beta-tilde) enter the E term.
    variance_aware: bool = False
    shift_q: Callable[[int], float] = lambda k: 0.0
    radius_check: Callable[[int], float] | None = None
    radius_q: Callable[[int], float] | None = None
    #: The continual counter of every ``tree`` release group (option ``counter``, :class:`CounterChoice`); None: the
    #: printed tree.
    counter: "CounterChoice | None" = None

    @property
    def H(self) -> int:
        return self.env.horizon

    @property
    def vs(self) -> float:
        """Value scale r_max H (the papers' H as a bound on V)."""
        return self.env.reward_max * self.env.horizon

    def vbar(self, h: int) -> float:
        """Bound on V_{h+1} at 0-based stage h (what the user-side clip guarantees).

        ``stage`` cap: r_max (H - h - 1). ``horizon`` cap (seed 003, min{H, .}): r_max H, except V_H
        (h = H - 2), which is r_H + 0 <= r_max since V_{H+1} = 0 makes phi_V = 0 at the last stage."""
        if self.cap == "stage" or h + 1 >= self.H - 1:
            return self.env.value_cap(h + 1)
        return self.vs

    def qcaps(self) -> np.ndarray:
        """Upper truncation of Q_h for 0-based h = 0..H-1 (planning.plan's clip)."""
        if self.cap == "stage":
            return np.array([self.env.value_cap(h) for h in range(self.H)])
        return np.full(self.H, self.vs)

    def log(self, *, claim: Claim | None, name: str) -> MechanismLog | None:
        """The paper-scale log (sensitivities derived here, printed ones in ``paper``)."""
        if not self.groups:
            return None
        rgs = []
        for g in self.groups:
            if self.noise == "laplace":
                mech, norm = "laplace", "l1"   # Gram released as its upper triangle (d(d+1)/2 Laplace values)
            else:
                mech = "symmetric-gaussian-matrix" if g.kind == "gram" else "gaussian"
                norm = "frobenius-upper" if g.kind == "gram" else "l2"
            if self.mechanism == "local":
                struct = Structure.single()
            elif self.counter is not None and not self.counter.printed:
                # factorized: the accountants charge its column norm (docs/counters.md#accounting)
                struct = self.counter.structure
            else:
                struct = Structure.tree(self.K - 1)
            rgs.append(ReleaseGroup(
                g.name, mech, g.paper_sigma, Sensitivity(norm, g.sensitivity, g.derivation), struct,
                dimension=g.dim * (g.dim + 1) // 2 if g.kind == "gram" else g.dim,
                description=(f"{'Gram' if g.kind == 'gram' else 'target'} statistic of family {g.family} "
                             f"({FAMILY_TEXT[g.family]}), stage h={g.h + 1}"),
                paper=PaperStatement(g.paper_sensitivity, g.paper_count, g.equation)))
        params = {"K": self.K, "H": self.H, "S": self.env.n_states, "A": self.env.n_actions, "d": self.env.dim,
                  "env": self.env.name, "r_max": self.env.reward_max, "phi_norm_bound": self.env.phi_norm_bound,
                  "phi_l1_bound": self.env.phi_l1_bound, "learner": self.learner, "q_cap": self.cap, "noise": self.noise}
        if self.reward_regression:
            params["d2"] = self.env.reward_dim
        if self.counter is not None and self.counter.name is not None:
            params["counter"] = self.counter.name
        return MechanismLog(name, "local" if self.mechanism == "local" else "joint", tuple(rgs),
                            "replace-one-user", params, claim, self.paper)


FAMILY_TEXT = {"p": "x = phi_V(s_h, a_h), y = V_{h+1}(s_{h+1})", "r": "varphi(s_h, a_h), r_h",
               "q": "x = phi_{V^2}(s_h, a_h), y = V_{h+1}^2(s_{h+1}) (seed 003 Alg. 3)"}


def pair_bound(kind: str, noise: str, xb2: float, xb1: float, yb: float) -> float:
    """Replace-one bound on one release of ``kind`` for statistics x (||x||_2 <= xb2, ||x||_1 <= xb1), y in
    [0, yb] (any two users; docs/seed-003-linear-representation.md#sensitivity):

    * Gaussian Gram, upper-triangle l2: ||upper(xx^T - x'x'^T)||_2 <= ||xx^T - x'x'^T||_F
      = sqrt(|x|^4 + |x'|^4 - 2 (x.x')^2) <= sqrt(2) xb2^2 (rank-one PSD);
    * Gaussian target, l2: ||x y - x' y'||_2 <= 2 xb2 yb;
    * Laplace Gram, upper-triangle l1: ||upper(xx^T)||_1 = (||x||_1^2 + ||x||_2^2) / 2, so by the triangle
      inequality ||upper(xx^T - x'x'^T)||_1 <= xb1^2 + xb2^2;
    * Laplace target, l1: ||x y - x' y'||_1 <= 2 xb1 yb.
    """
    if kind == "gram":
        return math.sqrt(2.0) * xb2**2 if noise == "gaussian" else xb1**2 + xb2**2
    return 2.0 * (xb2 if noise == "gaussian" else xb1) * yb


def _stat_sens(env: LinearMixtureMDP, h: int, kind: str, family: str,
               shared_first_stage: bool = False, vb: float | None = None,
               noise: str = "gaussian") -> tuple[float, str, float, float]:
    """Sensitivity of one release at 0-based stage h under the learner's relation (module docstring):
    (declared value, derivation, worst case under the relation, worst case for any two trajectories).

    ``vb``: the bound on V_{h+1} the user-side clip guarantees (default r_max (H - h - 1), the ``stage``
    cap; ``Design.vbar``). ``noise``: ``gaussian`` (l2 / upper-triangle l2) or ``laplace`` (l1 of the
    released vector / upper triangle; :func:`pair_bound`).

    ``shared_first_stage``: JDP with a fixed s_1 (seed 000 Def. 2.2 and Sec. 2.1): at h = 0 both neighbours
    have the same x_1 = phi_{V_2}(s_1, a_1) (s_1 fixed; a_1 and V_2 from the data-free first episode with
    the same coins) and the same varphi(s_1, a_1), so the Gram change is 0 (declared: the any-pair value,
    conservative; a log cannot express 0) and the target change is ||x_1 (y - y')|| <= |x_1| vbar
    (y, y' in [0, vbar]), half the any-pair value."""
    if family == "r":
        if noise != "gaussian":
            raise PrivacctError("the reward family (seed 000) is Gaussian only")
        rnorm = float(np.max(np.linalg.norm(env.reward_features, axis=-1)))
        if kind == "gram":
            v = math.sqrt(2.0) * rnorm**2
            why = f"sqrt(2)|varphi|^2, |varphi|<={rnorm:g} (PSD rank-one, replace-one)"
            if shared_first_stage and h == 0:
                return v, why + "; stage 1 under seed 000 Def. 2.2: varphi(s_1, a_1) shared, worst case 0 (kept: conservative)", 0.0, v
            return v, why, v, v
        v = 2.0 * rnorm * env.reward_max
        if shared_first_stage and h == 0:
            w = rnorm * env.reward_max
            return w, (f"|varphi| r_max: stage 1 under seed 000 Def. 2.2, varphi(s_1, a_1) shared and |r - r'| <= "
                       f"r_max = {env.reward_max:g} (any two trajectories: 2|varphi| r_max)"), w, v
        return v, f"2|varphi| r_max, r in [0,{env.reward_max:g}] (replace-one)", v, v
    vb = env.value_cap(h + 1) if vb is None else vb
    B, B1 = env.phi_norm_bound * vb, env.phi_l1_bound * vb
    if kind == "gram":
        v = pair_bound("gram", noise, B, B1, vb)
        if noise == "gaussian":
            why = (f"sqrt(2) B^2, B = b*vbar = {env.phi_norm_bound:.4g}*{vb:.4g} "
                   f"(V clipped to [0,vbar] by the user; PSD rank-one, replace-one)")
        else:
            why = (f"B1^2 + B^2 (upper-triangle l1), B = b*vbar = {env.phi_norm_bound:.4g}*{vb:.4g}, "
                   f"B1 = b1*vbar = {env.phi_l1_bound:.4g}*{vb:.4g} (V clipped to [0,vbar] by the user; replace-one)")
        if shared_first_stage and h == 0:
            return v, why + "; stage 1 under seed 000 Def. 2.2: x_1 shared, worst case 0 (kept: conservative)", 0.0, v
        return v, why, v, v
    v = pair_bound("target", noise, B, B1, vb)
    if shared_first_stage and h == 0:
        w = B * vb
        return w, (f"B vbar, B = {B:.4g}: stage 1 under seed 000 Def. 2.2, x_1 = phi_V2(s_1, a_1) shared and "
                   f"y, y' in [0,{vb:.4g}] (any two trajectories: 2 B vbar)"), w, v
    if noise == "gaussian":
        return v, f"2 B vbar, B = {B:.4g}, y in [0,{vb:.4g}] (user clip; replace-one)", v, v
    return v, f"2 B1 vbar (l1), B1 = {B1:.4g}, y in [0,{vb:.4g}] (user clip; replace-one)", v, v


#: Whether the learner's paper fixes s_1 under JDP (seed 000 Sec. 2.1: "The initial state s_1^k is assumed to
#: be fixed and history independent") or makes it the user's (seed 003 Sec. 2.1: personal information
#: "encoded in state s_1k"). LDP learners compare any two trajectories.
SHARED_START = {"ucrl-vtr": True, "ldp-ucrl-vtr": False, "private-linopt-vi": True, "private-linopt-po": True,
                "pp-ucrl-vtr": False, "pp-ucrl-vtr-laplace": False, "pp-ucrl-vtr-plus": False}
RELATIONS = {
    ("ldp-ucrl-vtr", "ldp"): ldp("seed 001 Def. 3.6 (LDP)"),
    ("private-linopt-vi", "jdp"): jdp("seed 000 Def. 2.2 (JDP; s_1 fixed, Sec. 2.1)", shared_start=True),
    ("private-linopt-po", "jdp"): jdp("seed 000 Def. 2.2 (JDP; s_1 fixed, Sec. 2.1)", shared_start=True),
    ("pp-ucrl-vtr", "jdp"): jdp("seed 003 Def. 3 (JDP; s_1 the user's, Sec. 2.1)", shared_start=False),
    ("pp-ucrl-vtr", "ldp"): ldp("seed 003 Def. 4 (LDP)"),
    ("pp-ucrl-vtr-laplace", "jdp"): jdp("seed 003 Def. 3 (JDP; s_1 the user's, Sec. 2.1)", shared_start=False),
    ("pp-ucrl-vtr-laplace", "ldp"): ldp("seed 003 Def. 4 (LDP)"),
    ("pp-ucrl-vtr-plus", "jdp"): jdp("seed 003 Def. 3 (JDP; s_1 the user's, Sec. 2.1)", shared_start=False),
    ("pp-ucrl-vtr-plus", "ldp"): ldp("seed 003 Def. 4 (LDP)"),
}


def mixture_neighbours(des: "Design", privacy: str) -> NeighbourSpec:
    """The valid pair of ``des``'s paper and every release group's worst-case change under it.

    The bounds are in the worst case over feature geometries allowed by ||phi_V|| <= B; the
    environments' features and the episode's V need not attain them (``attained`` False: the canary
    pair's change is tested to stay below)."""
    rel = RELATIONS.get((des.learner, privacy))
    if rel is None:
        raise PrivacctError(f"privacy must be one of the private models of {des.learner}, got {privacy!r}")
    def norm(g):
        if des.noise == "laplace":
            return "l1"
        return "frobenius-upper" if g.kind == "gram" else "l2"
    dists = tuple(GroupDistance(g.name, norm(g), g.worst_case, False,
                                g.derivation, g.any_pair if g.any_pair != g.worst_case else None) for g in des.groups)
    return NeighbourSpec(rel, "JDP response functions A (stay, reward r_max) / B (jump to S-1; reward 0 then r_max); "
                              "LDP trajectories A / B (.canary)", dists)


def _check_claim(eps: float, delta: float, what: str) -> None:
    if not (0 < delta < 1):
        raise PrivacctError(f"delta must be in (0, 1) for {what} (Gaussian noise), got {delta!r}")


# ---- the continual counter of the JDP release groups (option ``counter``; docs/counters.md#learners) ----------
#: The strategies of option ``counter`` (privacct.counters.strategies.STRATEGIES).
COUNTERS = FACTORIZED_STRATEGIES


@dataclass(frozen=True)
class CounterChoice:
    """The continual counter every JDP release group runs (option ``counter``; docs/counters.md).

    ``name`` None (option not given) or ``tree``: the printed binary tree, ``Structure.tree(K - 1)`` (``structure``
    None), and every constant as printed: the tree's node count (seed 000's m, seed 003's K0) stays in the shifts.

    Otherwise the factorized strategy ``name`` over the K - 1 read prefixes (``structure``; blt buffers optimised
    for the noise's norm, docs/counters.md#blt), and the figure each paper derives from the tree's prefix error
    comes from this counter instead:

    * ``variance`` (Gaussian noise): V, the counter's worst prefix variance in node variances
      (:func:`privacct.counters.strategies.worst_prefix_variance`, docs/counters.md#strategies). A release's noise
      is sum_i w_i Z_i over i.i.d. draws Z_i (symmetric Gaussian matrices / Gaussian vectors, entry std sigma), so
      every entry is N(0, sigma^2 sum_i w_i^2) with sum_i w_i^2 <= V. The papers' prefix std is this with m (seed
      000, Lemmas B.4 / B.5 "with the prefix variance m sigma^2", docs/seed-000-linear-mixture-jdp.md#constants-as-printed)
      or K0 (seed 003 Cor. 5 / Cor. 10) nodes of weight 1: sqrt(V) replaces sqrt(m) and sqrt(K0) wherever they
      enter a shift, an eigenvalue bound or a radius.
    * ``l1`` (Laplace noise, seed 003's pure-DP variant): max over prefixes t of sum_i |w_i|, the worst row l1 norm of
      the release-noise matrix L. There the paper's Upsilon is Claim 29 per node and the triangle inequality over the
      K0 nodes of a prefix (App. C.4 with App. E.3's argument; docs/seed-003-linear-representation.md#pure-dp-variants):
      ||sum_i w_i Y_i|| <= (sum_i |w_i|) max_i ||Y_i||, the tree's K0 being that sum with K0 weights of 1. A variance has
      no such form (the printed bound is not a variance bound), so the Laplace Upsilon takes the row l1 norm
      (:func:`prefix_l1`), and ``draws`` (the counter's draws per group over the tree's K - 1) widens the union bound of
      Claim 29 over the nodes: L = log(6 K H d draws / p).
    """

    name: str | None
    structure: Structure | None = None
    variance: float | None = None
    l1: float | None = None
    draws: float = 1.0

    @property
    def printed(self) -> bool:
        """True for the printed tree (option absent or ``tree``): every constant as the paper prints it."""
        return self.structure is None


@functools.lru_cache(maxsize=32)
def counter_choice(counter: str | None, K: int, noise: str = "gaussian") -> CounterChoice:
    """The :class:`CounterChoice` of option ``counter`` for K episodes (K - 1 read prefixes) and ``noise``."""
    if counter is not None and counter not in COUNTERS:
        raise PrivacctError(f"option counter must be one of {', '.join(COUNTERS)}, got {counter!r}")
    from privacct.counters.strategies import Strategy, worst_prefix_variance

    if counter is None or Strategy(counter).is_binary_tree:
        return CounterChoice(counter)
    if K < 2:
        raise PrivacctError("episodes must be an integer >= 2 for tree-based (JDP) learners")
    structure = Strategy(counter).structure(K - 1, norm="l1" if noise == "laplace" else "l2")
    if noise == "laplace":
        return CounterChoice(counter, structure, l1=prefix_l1(structure),
                             draws=Strategy(counter).implementation.draws_per_step)
    return CounterChoice(counter, structure, variance=worst_prefix_variance(structure))


def prefix_l1(structure: Structure) -> float:
    """Worst row l1 norm of a counter's release-noise matrix L, max_t sum_i |L[t, i]| (:class:`CounterChoice`).

    Trees: one unit weight per set bit of t (``tree``; the max popcount) or the weight a_i of :func:`_honaker_l1`
    (``tree-honaker``). Toeplitz strategies (``sqrt-toeplitz``, ``blt``): row t of L is (l_(t-1), ..., l_0), l the
    impulse response of the noise path the counter RUNS (:meth:`privacct.counters.counter.FactorizedCounter.impulse_response`,
    docs/counters.md#ledger), so the worst row is the last, sum_(k<K) |l_k| (math.fsum). The strategy objects compute
    it (privacct/counters/: ``worst_prefix_l1``)."""
    from privacct.counters.strategies import worst_prefix_l1

    return worst_prefix_l1(structure)


# ---- seed 001: LDP-UCRL-VTR ------------------------------------------------------------------------
def ldp_ucrl_vtr(env: LinearMixtureMDP, K: int, eps: float, delta: float, alpha: float, shift_scale: float,
                 radius: str, noise_factor: float = 1.0) -> Design:
    """Seed 001 Alg. 1. sigma = 2H Delta sqrt(2 log(2.5H/delta))/eps with printed Delta = 2 vs^2
    (= 4H^3 sqrt(...)/eps, Alg. 1 line 1, for r_max = 1; = 4H sqrt(...)/eps, §6, for rewards / H).
    Shift r_k = 2 Gamma_k, Gamma_k = sqrt(k-1) sigma (sqrt(4d) + 2 log(6H/alpha)) (proof of Lemma B.1,
    eq. B.2 with its typos fixed, docs/seed-001-linear-mixture-ldp.md#algorithm-and-releases) times ``shift_scale``; lambda = 1.
    Radius ``theory``: the sum of the three Lemma B.1 bounds (q1: sqrt(3 Gamma + lambda) C_theta;
    q2: 8 vs sqrt(d log(1+(k-1) B^2/(d lambda)) log(24 (k-1)^2 H/alpha)) + 4 vs log(24 (k-1)^2 H/alpha);
    q3: sigma sqrt((k-1) d log(12 d H/alpha)) / sqrt(Gamma_k)), with k-1 read as max(k-1, 1).
    ``paper-experiment``: §6, beta_{k,h} = d^{3/4} (H-h+1)^{3/2} k^{1/4} (c = bonus_scale).
    Departure from the authors' HardToLearn code: it computes sigma with delta = 0.01 whatever the
    claim; we use the claimed delta, so ``paper`` is the printed formula at the claimed (eps, delta).
    """
    _check_claim(eps, delta, "ldp-ucrl-vtr")
    H, d = env.horizon, env.dim
    vs = env.reward_max * H
    paper_delta = 2.0 * vs**2
    sigma = 2.0 * H * paper_delta * math.sqrt(2.0 * math.log(2.5 * H / delta)) / eps
    groups = []
    for h in range(H - 1):
        for kind in ("gram", "target"):
            s, why, w, anyp = _stat_sens(env, h, kind, "p")
            groups.append(GroupSpec(f"{kind}[h={h + 1}]", "p", kind, h, d, s, why, sigma, paper_delta, 1.0,
                                    ("seed 001 App. A: Delta = 2H^2 per release, Alg. 1 line 1" if env.reward_max == 1.0 else
                                     "seed 001 §6: 'Delta f <= 1' with rewards / H, i.e. Delta = 2 per release (sigma = 4H sqrt(2 log(2.5H/delta))/eps)"),
                                    w, anyp))
    c_gamma = math.sqrt(4 * d) + 2 * math.log(6 * H / alpha)
    sig_run = noise_factor * sigma  # the sigma that runs (tight: calibrated); shift and radius follow it

    def gamma(k: int) -> float:
        return math.sqrt(k - 1) * sig_run * c_gamma

    def shift(k: int) -> float:
        return shift_scale * 2.0 * gamma(k)

    lam = 1.0
    Bphi = env.phi_norm_bound * vs
    ctheta = env.theta_norm_bound
    hh = np.arange(H)

    def rad(k: int, logdet=None) -> np.ndarray:
        if radius == "paper-experiment":
            return d**0.75 * (H - hh) ** 1.5 * k**0.25
        km = max(k - 1, 1)
        lg = math.log(24 * km**2 * H / alpha)
        g = shift_scale * gamma(k)
        q1 = math.sqrt(3 * g + lam) * ctheta
        q2 = 8 * vs * math.sqrt(d * math.log(1 + km * Bphi**2 / (d * lam)) * lg) + 4 * vs * lg
        q3 = sig_run * math.sqrt(km * d * math.log(12 * d * H / alpha)) / math.sqrt(g) if g > 0 else 0.0
        return np.full(H, q1 + q2 + q3)

    des = Design("ldp-ucrl-vtr", SOURCES["001"], "ldp", "local", env, K, lam, False, "greedy", groups=groups,
                 shift_p=shift, radius_p=rad)
    des.record = {"sigma_paper": sigma, "sigma_run": sig_run, "shift": f"{shift_scale:g} x 2 Gamma_k, Gamma_k = sqrt(k-1) sigma (sqrt(4d) + 2 log(6H/alpha))",
                  "radius": radius, "lambda": lam, "alpha": alpha}
    return des


# ---- non-private UCRL-VTR (seed 001 §6.2 baseline) ------------------------------------------------
def ucrl_vtr(env: LinearMixtureMDP, K: int) -> Design:
    """Inhomogeneous UCRL-VTR (Jia et al. 2020), the seed-001 §6.2 baseline. Radius (our reading of
    the misprinted §6.2 formula, docs/seed-001-linear-mixture-ldp.md#where-the-constants-slip): beta_{k,h} = sqrt(lambda) C_theta + cap_h sqrt(2 log K +
    log(det M_{k,h} / det(lambda I))), cap_h = r_max (H-h+1); C_theta = ||theta_h|| bound (sqrt(SA) one-hot
    = the paper's c sqrt(d_1)). lambda = 1."""
    H = env.horizon
    caps = np.array([env.value_cap(h) for h in range(H)])
    ct = env.theta_norm_bound

    c = 2 * math.log(max(K, 2))

    def rad(k: int, logdet=None) -> np.ndarray:
        ld = 0.0 if logdet is None else np.maximum(logdet, 0.0)
        return ct + caps * np.sqrt(c + ld)

    des = Design("ucrl-vtr", SOURCES["001"], "none", "none", env, K, 1.0, False, "greedy", radius_p=rad,
                 logdet_radius=(float(ct), caps, c))
    des.record = {"radius": "sqrt(lambda) C_theta + cap_h sqrt(2 log K + log det ratio)", "lambda": 1.0}
    return des


# ---- seed 003: Privacy-Preserving UCRL-VTR (Alg. 1), JDP (Cor. 5) and LDP (Cor. 6) ------------------
def _check_pure(eps: float, delta: float, what: str) -> None:
    if not (0 <= delta < 1):
        raise PrivacctError(f"delta must be in [0, 1) for {what} (Laplace noise, a pure-DP claim at delta = 0), got {delta!r}")


def laplace_matrix_width(d: int, log_term: float) -> float:
    """Claim 29 of seed 003 (symmetric matrix with Lap(0, 1) entries): ||M|| <= 2d + 2 sqrt(d L) + L with
    probability 1 - d e^{-L}, L = log(d / alpha) (seed 003 App. G, Claim 29; used in App. E.3)."""
    return 2 * d + 2 * math.sqrt(d * log_term) + log_term


def printed_alg1(K: int, H: int, d: int, eps: float, delta: float, p: float, privacy: str, noise: str,
                 vs: float | None = None, *, counter: CounterChoice | None = None) -> dict[str, float]:
    """Seed 003 Alg. 1's printed noise scale and Upsilon (:func:`pp_ucrl_vtr`; vs = r_max H, default H).

    Gaussian: Cor. 5 (JDP) / Cor. 6 (LDP). Laplace: the pure-DP reading of Rem. 1 / App. C.4
    (docs/seed-003-linear-representation.md#pure-dp-variants). ``counter`` (JDP, a factorized strategy; the
    printed tree otherwise): sigma as printed, and in Upsilon the counter's prefix factor replaces the tree's
    (:class:`CounterChoice`): sqrt(V) for sqrt(K0) (Gaussian), the worst row l1 norm of L for K0 and the union
    bound of Claim 29 over the counter's draws (Laplace)."""
    vs = float(H) if vs is None else vs
    K0 = math.ceil(math.log2(K) + 1)
    factorized = privacy == "jdp" and counter is not None and not counter.printed
    if noise == "gaussian":
        if privacy == "jdp":
            sigma = (32 * vs**2 / eps) * math.sqrt(2 * H * K0 * math.log(8 * H / delta) * math.log(4 / delta)
                                                   * math.log(16 * H * K0 / delta))
            root = math.sqrt(counter.variance) if factorized else math.sqrt(K0)   # type: ignore[union-attr, arg-type]
            ups = sigma * root * (4 * math.sqrt(d) + 2 * math.log(6 * K * H / p))
        else:
            sigma = (4 * H * vs**2 / eps) * math.sqrt(2 * math.log(4 * H / delta))
            ups = sigma * math.sqrt(K) * (4 * math.sqrt(d) + 2 * math.log(6 * K * H / p))
    else:
        width = laplace_matrix_width(d, math.log(6 * K * H * d / p))
        if privacy == "jdp":
            sigma = 2 * vs**2 * 2 * H * K0 / eps
            if factorized:
                width = laplace_matrix_width(d, math.log(6 * K * H * d * counter.draws / p))   # type: ignore[union-attr]
                ups = sigma * counter.l1 * width   # type: ignore[union-attr, operator]
            else:
                ups = sigma * K0 * width
        else:
            sigma = 2 * vs**2 * 2 * H / eps
            ups = sigma * math.sqrt(K) * width
    return {"K0": K0, "sigma": sigma, "upsilon": ups}


def printed_alg3(K: int, H: int, d: int, eps: float, delta: float, p: float, privacy: str,
                 vs: float | None = None, *, counter: CounterChoice | None = None) -> dict[str, float]:
    """Seed 003 Alg. 3's printed noise scales and Upsilons (Cor. 10 JDP / Cor. 11 LDP; :func:`pp_ucrl_vtr_plus`).
    ``counter`` (JDP, a factorized strategy): sigmas as printed, sqrt(V) in place of sqrt(K0) in the Upsilons
    (:class:`CounterChoice`)."""
    vs = float(H) if vs is None else vs
    K0 = math.ceil(math.log2(K) + 1)
    if privacy == "jdp":
        c = math.sqrt(2 * H * K0 * math.log(16 * H / delta) * math.log(8 / delta) * math.log(32 * H * K0 / delta))
        root = math.sqrt(K0) if counter is None or counter.printed else math.sqrt(counter.variance)  # type: ignore[arg-type]
        sig1, sig2 = 64 * d / eps * c, 64 * vs**4 / eps * c
    else:
        g = math.sqrt(2 * math.log(8 * H / delta))
        sig1, sig2, root = 8 * d * H / eps * g, 8 * H * vs**4 / eps * g, math.sqrt(K)
    width = 4 * math.sqrt(d) + 2 * math.log(24 * K * H / p)
    return {"K0": K0, "sigma1": sig1, "sigma2": sig2, "upsilon1": sig1 * root * width, "upsilon2": sig2 * root * width}


def pp_ucrl_vtr(env: LinearMixtureMDP, K: int, eps: float, delta: float, alpha: float, privacy: str,
                shift_scale: float, noise_factor: float = 1.0, noise: str = "gaussian",
                counter: CounterChoice | None = None) -> Design:
    """Seed 003 Alg. 1. lambda = vs^2 (printed H^2, Alg. 1 Initialize). Paper per-leaf Delta = 2 vs^2
    (App. C.2/C.3). Q~ = min{H, ...} (Alg. 1 user side; the ``horizon`` cap, with privacct's lower clip at 0).

    ``counter`` (JDP; :class:`CounterChoice`, docs/counters.md): every tree becomes a factorized counter of that
    strategy; sigma as printed (``paper``) or calibrated with the counter's column norm (``tight``), and Upsilon^J
    (hence the shift 2 Upsilon^J and beta_k) from the counter's prefix error: sigma_B sqrt(V) (4 sqrt d +
    2 log(6KH/p)) (Gaussian), b l1 W with L = log(6 K H d draws / p) (Laplace; :func:`printed_alg1`).

    ``privacy="none"``: B = g = 0 (seed 003 Sec. 3, "setting B_{k,h} = 0 and g_{k,h} = 0 yields the non-private
    UCRL-VTR", footnote 6): no shift, beta_k with Upsilon = 0.

    GAUSSIAN (approximate DP):
    JDP (Cor. 5): K0 = ceil(log2 K + 1), sigma_B = (32 vs^2/eps) sqrt(2 H K0 log(8H/delta) log(4/delta)
    log(16 H K0/delta)); Upsilon^J = sigma_B sqrt(K0)(4 sqrt d + 2 log(6KH/p)); constant shift 2 Upsilon^J.
    LDP (Cor. 6): sigma_B = (4 H vs^2/eps) sqrt(2 log(4H/delta)) (printed 4H^3/eps ...);
    Upsilon^L = sigma_B sqrt(K)(4 sqrt d + 2 log(6KH/p)); shift 2 Upsilon^L. p = alpha.
    beta_k = 3 (C_w + 1) sqrt(lambda + Upsilon) + sqrt(2 vs^2 log(3H (1+KH)^{d/2}/p)) (constant in k).
    Matrix noise: Cor. 5's text asks for "symmetric matrices with all of its entries N(0, sigma_B^2)",
    which is privacct's symmetric Gaussian (upper triangle iid, mirrored); App. C.2 builds
    (Z'+Z'^T)/sqrt 2 instead (diagonal variance 2 sigma^2) -- we follow the corollary's text. For LDP,
    Cor. 6 adds an iid (non-symmetric) d x d matrix; we use the symmetric Gaussian too (the server
    symmetrises anyway) and account exactly what runs.

    LAPLACE (pure DP; Rem. 1 and App. C.4, which print no scale; the paper's chain with its own tools,
    docs/seed-003-linear-representation.md#pure-dp-variants): every advanced composition of Cor. 5 /
    Cor. 6 becomes simple composition (App. F.5) and every Gaussian mechanism the Laplace mechanism
    Lap(Delta_1 / eps') of App. F.2, with the printed per-release Delta = 2 vs^2 (App. C.2/C.3) as Delta_1:
    JDP: Lambda and u eps/2 each (F.5), H trees eps/(2H) each (F.5), K0 nodes per user eps/(2 H K0) each
    (F.5): b = 2 vs^2 * 2 H K0 / eps; LDP: 2H messages eps/(2H) each (Cor. 6's chain): b = 2 vs^2 * 2H / eps.
    Upsilon (App. C.4 prints only O~(d sigma_B) and O~(d sigma_B sqrt K)): JDP b K0 W, LDP b sqrt(K) W with
    W = 2d + 2 sqrt(d L) + L, L = log(6KHd/p) (Claim 29 per node, the triangle inequality over the K0 nodes
    of a prefix as App. E.3 does for Alg. 2; for LDP sqrt(K) is the order C.4 states, not a proven
    high-probability bound). beta_k as above with that Upsilon (C.4: beta_K = O~(max{H sqrt d, (C_w+1)
    sqrt(Upsilon)})). The log declares l1 sensitivities derived from the real features
    (:func:`pair_bound`); Delta_1 = 2 vs^2 as printed is recorded in ``paper`` -- the printed bound is a
    Frobenius/l2 bound, and the l1 norm of the upper triangle of x x^T can be up to (d+1)/2 times larger.
    """
    name = "pp-ucrl-vtr" if noise == "gaussian" else "pp-ucrl-vtr-laplace"
    H, d = env.horizon, env.dim
    vs = env.reward_max * H
    lam = vs**2
    pdelta = 2.0 * vs**2
    cw = env.theta_norm_bound
    conf = math.sqrt(2 * vs**2 * (math.log(3 * H / alpha) + d / 2 * math.log(1 + K * H)))
    if privacy == "none":
        des = Design(name, SOURCES["003"], "none", "none", env, K, lam, False, "greedy", cap="horizon", noise=noise,
                     radius_p=lambda k, logdet=None: np.full(H, 3 * (cw + 1) * math.sqrt(lam) + conf))
        des.record = {"lambda": lam, "alpha": alpha, "shift": "none (B = g = 0)", "q_cap": "min{H, .} (Alg. 1)",
                      "radius": "3 (C_w + 1) sqrt(lambda) + sqrt(2 vs^2 log(3H (1+KH)^{d/2}/p)) (Upsilon = 0)"}
        return des
    if noise == "gaussian":
        _check_claim(eps, delta, name)
    else:
        _check_pure(eps, delta, name)
    pc = printed_alg1(K, H, d, eps, delta, alpha, privacy, noise, vs, counter=counter)
    K0, sigma = pc["K0"], pc["sigma"]
    ups = noise_factor * pc["upsilon"]   # Upsilon follows the sigma that runs (tight: calibrated)
    if noise == "gaussian":
        if privacy == "jdp":
            count, eq, mech = float(K0), "seed 003 Cor. 5 / App. C.2", "tree"
        else:
            count, eq, mech = 1.0, "seed 003 Cor. 6 / App. C.3", "local"
    else:
        if privacy == "jdp":
            count = float(K0)
            eq = ("seed 003 Rem. 1 / App. C.4 with Cor. 5's chain, simple composition (F.5) and the Laplace mechanism "
                  "(F.2): Lap(2H^2 * 2 H K0 / eps) per node, Delta_1 = 2H^2 as printed (App. C.2)")
            mech = "tree"
        else:
            count, mech = 1.0, "local"
            eq = ("seed 003 Rem. 1 / App. C.4 with Cor. 6's chain (2H messages, simple composition) and the Laplace "
                  "mechanism (F.2): Lap(2H^2 * 2H / eps) per message, Delta_1 = 2H^2 as printed (App. C.3)")
    des = Design(name, SOURCES["003"], privacy, mech, env, K, lam, False, "greedy", cap="horizon", noise=noise,
                 counter=counter if privacy == "jdp" else None)
    groups = []
    for h in range(H - 1):
        for kind in ("gram", "target"):
            s_, why, w, anyp = _stat_sens(env, h, kind, "p", vb=des.vbar(h), noise=noise)
            groups.append(GroupSpec(f"{kind}[h={h + 1}]", "p", kind, h, d, s_, why, sigma, pdelta, count, eq, w, anyp))
    des.groups = groups

    def rad(k: int, logdet=None) -> np.ndarray:
        return np.full(H, 3 * (cw + 1) * math.sqrt(lam + shift_scale * ups) + conf)

    des.shift_p = lambda k: shift_scale * 2 * ups
    des.radius_p = rad
    des.record = {"sigma_paper": sigma, "sigma_run": noise_factor * sigma, "upsilon": ups, "K0": K0,
                  "shift": f"{shift_scale:g} x 2 Upsilon", "lambda": lam, "alpha": alpha, "noise": noise,
                  "q_cap": "min{H, .} (Alg. 1)"}
    _record_counter(des)
    return des


def _record_counter(des: Design) -> None:
    """The counter's figures in ``des.record`` (only for a factorized counter: the printed tree records nothing new)."""
    c = des.counter
    if c is None or c.printed:
        return
    des.record["counter"] = c.name
    if c.variance is not None:
        des.record["counter_prefix_variance"] = c.variance
        des.record["prefix_factor"] = "sqrt(V) (counter's worst prefix variance) in place of the tree's sqrt(node count)"
    if c.l1 is not None:
        des.record["counter_prefix_l1"] = c.l1
        des.record["prefix_factor"] = ("worst row l1 norm of L in place of the tree's node count K0 (triangle inequality), "
                                       f"Claim 29's union bound over {c.draws:g} x the tree's draws")


# ---- seed 003: Privacy-Preserving UCRL-VTR+ (Alg. 3), JDP (Cor. 10) and LDP (Cor. 11) -----------------
def pp_ucrl_vtr_plus(env: LinearMixtureMDP, K: int, eps: float, delta: float, alpha: float, privacy: str,
                     shift_scale: float, noise_factor: float = 1.0, counter: CounterChoice | None = None) -> Design:
    """Seed 003 Alg. 3 (App. D), variance-aware (Bernstein-type) UCRL-VTR+; docs/seed-003-linear-representation.md#algorithm-3-variance-aware.

    ``counter`` (JDP; :class:`CounterChoice`, docs/counters.md): the 4H trees become factorized counters of that
    strategy, and sqrt(V) replaces sqrt(K0) in Upsilon^{J,1}, Upsilon^{J,2} (:func:`printed_alg3`), hence in both
    shifts and in beta-hat, beta-check, beta-tilde.

    Two regressions per stage h (H - 1 released stages: phi_{V_{H+1}} = 0): family ``p`` (hat), the
    weighted one, x = phi_V(s_h, a_h) / sigma_bar, y = V_{h+1}(s_{h+1}) / sigma_bar, so the released Gram is
    sigma_bar^{-2} x x^T and the target sigma_bar^{-2} x y (Alg. 3 'Send'); family ``q`` (tilde), phi_{V^2} and
    V^2(s_{h+1}). lambda = 1 (Alg. 3 Initialize). The user plans with (Lambda-hat, w-hat) only:
    Q-hat = min{H, r + <phi_V, w-hat> + beta-hat ||phi_V||_{Lambda-hat^{-1}}}; sigma_bar (Alg. 3, user side) from
    Vbar = [<phi_{V^2}, w-tilde>]_[0,H^2] - [<phi_V, w-hat>]_[0,H]^2,
    E = min{H^2, 2H beta-check ||phi_V||_{Lambda-hat^{-1}}} + min{H^2, beta-tilde ||phi_{V^2}||_{Lambda-tilde^{-1}}}
    (the printed second term has phi_{V~_{k,h+1}}, a symbol Alg. 3 never defines: read as phi_{V-hat^2}, the
    variance term of UCRL-VTR+), sigma_bar^2 = max{H^2/d, Vbar + E}. H is the value scale vs = r_max H wherever
    it bounds a value (H^2 -> vs^2, H^4 -> vs^4); H counts stages elsewhere.

    Noise (printed): JDP (Cor. 10): 4H trees; K0 = ceil(log2 K + 1); c = sqrt(2 H K0 log(16H/delta) log(8/delta)
    log(32 H K0/delta)); sigma_{B,1} = (64 d/eps) c (p family), sigma_{B,2} = (64 vs^4/eps) c (q family);
    Upsilon^{J,i} = sigma_{B,i} sqrt(K0) (4 sqrt d + 2 log(24KH/p)); shifts 2 Upsilon^{J,1} (hat) and
    2 Upsilon^{J,2} (tilde). LDP (Cor. 11): sigma_{B,1} = (8 d H/eps) sqrt(2 log(8H/delta)), sigma_{B,2} =
    (8 H vs^4/eps) sqrt(2 log(8H/delta)); Upsilon^{L,i} = sigma_{B,i} sqrt(K) (4 sqrt d + 2 log(24KH/p)).
    Printed per-release Delta: 2d (p family: ||sigma_bar^{-2} x x^T||_F, ||sigma_bar^{-2} x y|| <= d, D.3/D.4)
    and 2 vs^4 (q family: <= H^4; D.3 writes H^2 for the last target once, a slip for H^4).
    Radii (eq. (6)/(7)): beta-hat_k = 3 (C_w+1) sqrt(lambda + Upsilon^1) + 8 sqrt(d log(1 + K/lambda) log(24k^2H/p))
    + 4 sqrt(d) log(24k^2H/p); beta-check_k the same with 8 d sqrt(...) for 8 sqrt(d ...); beta-tilde_k =
    3 (C_w+1) sqrt(lambda + Upsilon^2) + 8 sqrt(d vs^4 log(1 + K vs^4/(d lambda)) log(24k^2H/p)) + 4 vs^2 log(24k^2H/p).
    ``bonus_scale`` (the engine) multiplies all three. Non-private (``none``): every noise 0, Upsilon = 0
    (Sec. D.1: "all the tuning vectors/matrices equal to 0").
    Matrix noise: Cor. 10 prints (Z' + Z'^T)/sqrt 2 and Cor. 11 an iid d x d matrix; privacct runs its
    symmetric Gaussian (upper triangle iid N(0, sigma^2)) in both and accounts what runs (as for Alg. 1).

    Sensitivities (derived, replace-one, any two trajectories since s_1 is the user's): sigma_bar^2 >= vs^2/d
    always, so ||x / sigma_bar||_2 <= sqrt(d) b vbar / vs and |y / sigma_bar| <= sqrt(d) vbar / vs; phi_{V^2}
    has ||.||_2 <= b vbar^2 and V^2 <= vbar^2 (:func:`pair_bound`).
    """
    name = "pp-ucrl-vtr-plus"
    H, d = env.horizon, env.dim
    vs = env.reward_max * H
    lam = 1.0
    cw = env.theta_norm_bound
    if privacy == "none":
        ups1 = ups2 = 0.0
        mech, sig1, sig2, count, eq = "none", 0.0, 0.0, 0.0, ""
    else:
        _check_claim(eps, delta, name)
        pc = printed_alg3(K, H, d, eps, delta, alpha, privacy, vs, counter=counter)
        sig1, sig2 = pc["sigma1"], pc["sigma2"]
        if privacy == "jdp":
            count, eq, mech = float(pc["K0"]), "seed 003 Cor. 10 / App. D.3 (privacy analysis)", "tree"
        else:
            count, eq, mech = 1.0, "seed 003 Cor. 11 / App. D.4 (privacy analysis)", "local"
        ups1 = noise_factor * pc["upsilon1"]   # the Upsilons follow the sigmas that run (tight: calibrated)
        ups2 = noise_factor * pc["upsilon2"]
    des = Design(name, SOURCES["003"], privacy, mech, env, K, lam, False, "greedy", cap="horizon",
                 variance_aware=True, counter=counter if privacy == "jdp" else None)
    if privacy != "none":
        b2, b1 = env.phi_norm_bound, env.phi_l1_bound
        groups = []
        for h in range(H - 1):
            vb = des.vbar(h)
            w = math.sqrt(d) / vs          # 1 / sigma_bar <= sqrt(d) / vs
            stats = {("p", "gram"): (w * b2 * vb, w * b1 * vb, w * vb), ("p", "target"): (w * b2 * vb, w * b1 * vb, w * vb),
                     ("q", "gram"): (b2 * vb**2, b1 * vb**2, vb**2), ("q", "target"): (b2 * vb**2, b1 * vb**2, vb**2)}
            for fam, kind in (("p", "gram"), ("p", "target"), ("q", "gram"), ("q", "target")):
                xb2, xb1, yb = stats[(fam, kind)]
                v = pair_bound(kind, "gaussian", xb2, xb1, yb)
                if fam == "p":
                    why = (f"{'sqrt(2) z^2' if kind == 'gram' else '2 z t'}: z = sqrt(d) b vbar / vs = {xb2:.4g}, "
                           f"t = sqrt(d) vbar / vs = {yb:.4g} (sigma_bar^2 >= vs^2/d, V clipped to [0, vbar = {vb:.4g}]; "
                           "replace-one)")
                    sigma, pd = sig1, 2.0 * d
                else:
                    why = (f"{'sqrt(2) z^2' if kind == 'gram' else '2 z t'}: z = b vbar^2 = {xb2:.4g}, t = vbar^2 = {yb:.4g} "
                           "(V^2 in [0, vbar^2]; replace-one)")
                    sigma, pd = sig2, 2.0 * vs**4
                gname = f"{kind}[h={h + 1}]" if fam == "p" else f"{kind}2[h={h + 1}]"
                groups.append(GroupSpec(gname, fam, kind, h, d, v, why, sigma, pd, count, eq, v, v))
        des.groups = groups

    def lg(k: int) -> float:
        return math.log(24 * k * k * H / alpha)

    def beta_hat(k: int, logdet=None) -> np.ndarray:
        return np.full(H, 3 * (cw + 1) * math.sqrt(lam + shift_scale * ups1)
                       + 8 * math.sqrt(d * math.log(1 + K / lam) * lg(k)) + 4 * math.sqrt(d) * lg(k))

    def beta_check(k: int) -> float:
        return (3 * (cw + 1) * math.sqrt(lam + shift_scale * ups1) + 8 * d * math.sqrt(math.log(1 + K / lam) * lg(k))
                + 4 * math.sqrt(d) * lg(k))

    def beta_tilde(k: int) -> float:
        return (3 * (cw + 1) * math.sqrt(lam + shift_scale * ups2)
                + 8 * math.sqrt(d * vs**4 * math.log(1 + K * vs**4 / (d * lam)) * lg(k)) + 4 * vs**2 * lg(k))

    des.radius_p, des.radius_check, des.radius_q = beta_hat, beta_check, beta_tilde
    des.shift_p = lambda k: shift_scale * 2 * ups1
    des.shift_q = lambda k: shift_scale * 2 * ups2
    des.record = {"sigma_paper": {"B,1": sig1, "B,2": sig2}, "noise_factor": noise_factor, "upsilon_1": ups1,
                  "upsilon_2": ups2, "lambda": lam, "alpha": alpha, "weight_floor": vs**2 / d,
                  "shift": f"{shift_scale:g} x 2 Upsilon^1 (hat), {shift_scale:g} x 2 Upsilon^2 (tilde)",
                  "q_cap": "min{H, .} (Alg. 3)", "E_term": "second term read as phi_{V-hat^2} (Zhou et al. 2021)"}
    _record_counter(des)
    return des


# ---- seed 000: Private-LinOpt-VI / -PO --------------------------------------------------------------
def private_linopt(env: LinearMixtureMDP, K: int, eps: float, delta: float, alpha: float, policy: str,
                   shift_scale: float, private: bool, noise_factor: float = 1.0,
                   counter: CounterChoice | None = None) -> Design:
    """Seed 000 Algs. 1-2 with the Sec. 6.1 PRIVATIZER (docs/seed-000-linear-mixture-jdp.md#constants-as-printed; symbols as there).

    m = ceil(log2 K), L = ln(4H/delta); printed (add/remove) Delta_{p,1} = d1 vs^2, Delta_{p,2} = sqrt(d1) vs^2,
    Delta_{r,1} = Delta_{r,2} = 1; sigma_c = (H Delta_c/eps) sqrt(32 m L).
    Upsilon_p = sigma_{p,1} sqrt(m)(4 sqrt(d1) + sqrt(8 ln(8KH/alpha))) (printed '4 sqrt d'; d1 is the matrix
    size, docs/seed-000-linear-mixture-jdp.md#where-the-constants-slip), Upsilon_r likewise with d2;
    shifts gamma = 2 Upsilon (Z = N + gamma I, no extra lambda); lambda_min = Upsilon, lambda_max = 3 Upsilon;
    nu_c = sigma_{c,2} sqrt(m/Upsilon_c)(sqrt(d_c) + sqrt(2 ln(4KH/alpha))).
    beta_p = (vs/2) sqrt(2 ln(H/alpha) + d1 ln(1 + K vs^2/lambda_min)) + sqrt(d1 lambda_max) + nu_p (Lemma 3.1),
    beta_r = (r_max/2) sqrt(2 ln(H/alpha) + d2 ln(1 + K/(d2 lambda_min,r))) + sqrt(d2 lambda_max,r) + nu_r.
    Non-private instance (``private=False``): Z = lambda I with lambda = 1, z = 0 (UCRL-VTR / OPPO).
    PO: eta = sqrt(2 log A/(H^2 K)) / r_max (Cai et al. 2020 eq. C.2; / r_max keeps eta Q unit-free).

    ``counter`` (:class:`CounterChoice`, docs/counters.md): the 4H trees become factorized counters of that strategy;
    the sigmas keep the printed m (``paper``; privacy is then what the accountant says of the counter's column norm)
    or are calibrated with it (``tight``), and the prefix variance m sigma^2 of Lemmas B.4 / B.5 becomes V sigma^2,
    V the counter's worst prefix variance: m -> V in Upsilon_p, Upsilon_r (sqrt(m)) and nu_p, nu_r (sqrt(m/Upsilon)),
    hence in the shifts, lambda_min, lambda_max and beta_p, beta_r.
    """
    H, d1, d2 = env.horizon, env.dim, env.reward_dim
    vs, rm = env.reward_max * H, env.reward_max
    groups: list[GroupSpec] = []
    if private:
        _check_claim(eps, delta, "private-linopt")
        if K < 2:
            raise PrivacctError("episodes must be an integer >= 2 for the tree-based learners (K-1 tree leaves)")
        m = max(1, math.ceil(math.log2(K)))
        L = math.log(4 * H / delta)
        pd = {("p", "gram"): d1 * vs**2, ("p", "target"): math.sqrt(d1) * vs**2, ("r", "gram"): 1.0, ("r", "target"): 1.0}
        sig = {c: (H * D / eps) * math.sqrt(32 * m * L) for c, D in pd.items()}
        run = {c: noise_factor * v for c, v in sig.items()}  # the sigmas that run (tight: calibrated)
        # the prefix variance in node variances: the tree's m as printed, or the counter's worst prefix variance V
        mv = m if counter is None or counter.printed else counter.variance
        ups_p = run[("p", "gram")] * math.sqrt(mv) * (4 * math.sqrt(d1) + math.sqrt(8 * math.log(8 * K * H / alpha)))
        ups_r = run[("r", "gram")] * math.sqrt(mv) * (4 * math.sqrt(d2) + math.sqrt(8 * math.log(8 * K * H / alpha)))
        nu_p = run[("p", "target")] * math.sqrt(mv / ups_p) * (math.sqrt(d1) + math.sqrt(2 * math.log(4 * K * H / alpha)))
        nu_r = run[("r", "target")] * math.sqrt(mv / ups_r) * (math.sqrt(d2) + math.sqrt(2 * math.log(4 * K * H / alpha)))
        lmin_p, lmax_p, lmin_r, lmax_r = ups_p, 3 * ups_p, ups_r, 3 * ups_r
        lam = 0.0
        for h in range(H):
            for fam in ("p", "r"):
                if fam == "p" and h == H - 1:
                    continue  # phi_H = 0: no data (module docstring)
                for kind in ("gram", "target"):
                    s, why, w, anyp = _stat_sens(env, h, kind, fam, shared_first_stage=True)
                    dim = d1 if fam == "p" else d2
                    groups.append(GroupSpec(f"{fam}-{kind}[h={h + 1}]", fam, kind, h, dim, s, why, sig[(fam, kind)],
                                            pd[(fam, kind)], float(m), "seed 000 Sec. 6.1-6.2, Thm 6.4", w, anyp))
        shift_p = lambda k: shift_scale * 2 * ups_p
        shift_r = lambda k: shift_scale * 2 * ups_r
        record = {"sigma_paper": {f"{a}{'1' if b == 'gram' else '2'}": v for (a, b), v in sig.items()},
                  "noise_factor": noise_factor, "upsilon_p": ups_p, "upsilon_r": ups_r, "m": m}
    else:
        lam = 1.0
        lmin_p = lmax_p = lmin_r = lmax_r = 1.0
        nu_p = nu_r = 0.0
        shift_p = shift_r = lambda k: 0.0
        record = {}
    lmin_p_eff = lmin_p * (shift_scale if private else 1.0)
    lmin_r_eff = lmin_r * (shift_scale if private else 1.0)
    beta_p = ((vs / 2) * math.sqrt(2 * math.log(H / alpha) + d1 * math.log(1 + K * vs**2 / lmin_p_eff))
              + math.sqrt(d1 * lmax_p * (shift_scale if private else 1.0)) + nu_p / math.sqrt(shift_scale if private else 1.0))
    beta_r = ((rm / 2) * math.sqrt(2 * math.log(H / alpha) + d2 * math.log(1 + K / (d2 * lmin_r_eff)))
              + math.sqrt(d2 * lmax_r * (shift_scale if private else 1.0)) + nu_r / math.sqrt(shift_scale if private else 1.0))
    eta = math.sqrt(2 * math.log(env.n_actions) / (H**2 * K)) / rm if policy == "mirror-descent" else 0.0
    name = "private-linopt-vi" if policy == "greedy" else "private-linopt-po"
    des = Design(name, SOURCES["000"], "jdp" if private else "none", "tree" if private else "none", env, K, lam,
                 True, policy, eta=eta, groups=groups, shift_p=shift_p, shift_r=shift_r,
                 radius_p=lambda k, logdet=None: np.full(H, beta_p), radius_r=lambda k: np.full(H, beta_r),
                 counter=counter if private else None)
    record.update({"beta_p": beta_p, "beta_r": beta_r, "lambda": lam, "alpha": alpha, "eta": eta,
                   "shift": f"{shift_scale:g} x 2 Upsilon" if private else "none"})
    des.record = record
    _record_counter(des)
    return des


def linopt_readings(log: MechanismLog, K: int) -> tuple[Reading, ...]:
    """The two readings of seed 000's m = ceil(log K) (docs/seed-000-linear-mixture-jdp.md#where-the-constants-slip):
    base 2 (the declared log: the exact depth of the tree over K - 1 leaves) or e (every printed sigma, which is
    proportional to sqrt(m), shrinks by sqrt(ceil(ln K) / ceil(log2 K)) while the tree keeps its depth)."""
    m2, me = max(1, math.ceil(math.log2(K))), max(1, math.ceil(math.log(K)))
    shrink = math.sqrt(me / m2)
    st = log.release_groups[0].structure
    keeps = (f"the tree still puts a user in {m2} nodes" if st.kind != "factorized" else
             f"the {st.strategy} counter keeps its column norm (docs/counters.md#accounting)")
    return (
        Reading("m = ceil(log2 K)", f"m = ceil(log2 K) = {m2} in every printed sigma (Sec. 6.1-6.2, proof of Thm 6.4)",
                supported_by="Lemma 6.1(i): 'each episode appears only in at most m P-sums' holds for m = ceil(log2 K), "
                             "the depth of the tree over the K - 1 read prefixes; ceil(ln K) undercounts it"),
        Reading("m = ceil(ln K)", f"m = ceil(ln K) = {me} in every printed sigma (sigma x sqrt({me}/{m2})); {keeps}",
                overrides=tuple(GroupOverride(g.name, noise_scale=g.noise_scale * shrink,
                                              paper=PaperStatement(g.paper.sensitivity, float(me), g.paper.equation + "; m read as ceil(ln K)"))
                                for g in log.release_groups)),
    )


__all__ = ["COUNTERS", "CounterChoice", "Design", "GroupSpec", "RELATIONS", "SHARED_START", "counter_choice",
           "laplace_matrix_width", "ldp_ucrl_vtr", "linopt_readings", "mixture_neighbours", "pair_bound", "pp_ucrl_vtr",
           "pp_ucrl_vtr_plus", "prefix_l1", "printed_alg1", "printed_alg3", "private_linopt", "ucrl_vtr"]
