"""Private LSVI-UCB (seed 004: Ngo, Vietri, Wu, ICML 2022, Alg. 1), rho-zCDP -> (eps, delta)-JDP.

Mechanisms (docs/seed-004-private-lsvi-ucb.md#algorithm-and-releases):

* Gram matrices: H binary-tree counters (one per step h; Shariff & Sheffet 2018 variant), every
  tree node noised once with a symmetric Gaussian matrix (:class:`privacct.mechanisms.TreeCounter`,
  ``symmetric-gaussian-matrix``), released every episode and shifted:
  Lam~_h^{k+1} = C_h^{(k)} + 2 lam~ I (Alg. 1 lines 4, 22).
* Switch rule (Alg. 1 line 8): update at episode k iff some h has
  logdet Lam~_h^k - logdet Lam~_h^{k~} >= log C, computed from the noisy released matrices only
  (log-determinants by Cholesky), and the number of updates so far is below the hard cap
  N_cap = ceil(N_max) - 1 (N_count starts at 1, test strict: docs/seed-004-private-lsvi-ucb.md#algorithm-and-releases;
  :func:`paper_cap`), which is 0 when N_max <= 1: the run then never updates and keeps the data-free policy,
  and the log declares no y group (there is no y release). The cap is enforced on every run, so it holds surely
  (docs/seed-004-private-lsvi-ucb.md#per-user-release-count). Option ``update_cap`` (an integer >= 0) replaces
  the paper's cap: a configuration the paper would not run when it exceeds ceil(N_max) - 1, used by the audit
  setting (docs/seed-004-private-lsvi-ucb.md#the-update-cap); the log accounts its H * update_cap y releases.
* Responses: at every update, for h = H..1, y_h is recomputed from the whole history with the
  current V and released with fresh Gaussian noise (Alg. 1 lines 10-11); y_h uses only the released
  y~_{h+1}. Between updates the policy (w and the bonus matrix) is frozen (docs/seed-004-private-lsvi-ucb.md#algorithm-and-releases).

Privacy claim: the paper claims rho-zCDP for the billboard (rho/2 Gram + rho/2 y; Sec. 4.2) and
converts with Lemma 6, eps = rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016 Prop. 1.3). The
toolkit takes the claimed (eps, delta) of the config, inverts that conversion to get rho (recorded
in the log's parameters as ``rho``), and declares the claim (eps, delta). Sec. 4.2 prints the
conversion without the 2; Lemma 6 / Thm 16 have it; the correct one is used (docs/seed-004-private-lsvi-ucb.md#other-slips).

Calibration modes:

``paper`` (printed constants; docs/seed-004-private-lsvi-ucb.md#constants-as-printed): lam~ = ln K (6 sqrt(d+1) + 2 ln(3KH/p)) / sqrt(2 rho);
N_max = (dH/ln 2) ln(1 + K/(lam~ d)); y noise variance 6 H^2 N_max / rho (line 11); Gram node std
sqrt(ln K / (2 rho)) -- the only reading of Eq. (6) consistent with lam~ (Eq. (6) is ambiguous:
docs/seed-004-private-lsvi-ucb.md#eq-6-node-noise). The log records the toolkit's sensitivities (Gram sqrt(2) in the
upper-triangle l2 norm, y 2(H+1) with V clipped to [0, H]) and tree depth floor(log2 K) + 1, with
what the paper printed in ``paper``: Gram, operator-norm sensitivity 2 and ln K nodes (Lemma 14,
Eq. (6)); y, Sec. 4.2's per-update sensitivity 3H over H N_max releases, composed by Lemma 15's rule
(``composition`` ``sensitivities-added``: the sensitivities summed, 3H^2 N_max, and the variance set to
that sum over rho/2, line 11's 6 H^2 N_max / rho), so that by the paper's own rule the y part costs
the claimed rho/2, and as derived (zCDP adds the squares, with Lemma 14's 2H + 2) (H+1)^2 rho / (3H)
(times N_cap / N_max under the hard cap; docs/seed-004-private-lsvi-ucb.md#lemma-15-sums-sensitivities). The Gram part costs about
2H rho instead of rho/2 (docs/seed-004-private-lsvi-ucb.md#eq-6-node-noise). ``privacct verify`` shows the claim fails and names both.
The log's parameters record rho, rho_claimed_gram = rho_claimed_y = rho/2 and (when the cap allows a y release)
rho_y_printed_constants = (H+1)^2 rho / (3H). Option ``update_cap`` keeps line 11's printed y variance (it is a
constant of the paper) and declares H * update_cap releases. Departure: Q is
clipped to [0, H], not only from above, in both modes -- without the lower clip the response has
no finite sensitivity at all (docs/seed-004-private-lsvi-ucb.md#sensitivity), and nothing could be verified.

Tree: the Gram prefix after episode k is read at episode k + 1 (Alg. 1 line 8), so the prefix after
episode K is never read: the H trees have K - 1 leaves and user K's features are never added (the
same rule as seed 002 Sec. 5.1's "k - 1 leaf nodes at the start of episode k").

``tight`` (docs/seed-004-private-lsvi-ucb.md#tight-calibration): node std sqrt(2 H L / rho) with L = floor(log2 (K - 1)) + 1, lam~ =
sqrt(L) sigma_node (4 sqrt(d) + 2 ln(3KH/p)) (Claim 32 / Tao with the actual prefix std), N_max by
Thm 11's formula with that lam~, y std sqrt(N_cap H (2H+2)^2 / rho) (rho/2 each; a Gram share g instead gives
g rho and (1 - g) rho, :func:`sound_constants`); then
:func:`privacct.calibrate.calibrate_log` rescales all noise for the claimed (eps, delta) under
the tightest accountant, and lam~ is recomputed from the calibrated node std (lam~ is proportional
to it). The cap is part of the declared structure, so each calibration runs with a fixed cap; it is then
checked against Thm 11's N_max of the calibrated lam~ (the noise that runs) and, if the paper's rule
ceil(N_max) - 1 gives another cap, the log is rebuilt with that cap and calibrated again (:func:`_tight_fixed_point`,
:func:`cap_fixed_point`), so the recorded ``N_max_thm11`` (of the lam~ that runs) and ``N_cap`` agree:
N_cap = ceil(N_max_thm11) - 1 (docs/seed-004-private-lsvi-ucb.md#tight-calibration). ``N_cap_rule`` in the log's
parameters says which rule set the cap, ``N_cap_paper`` is the paper's cap ceil(N_max_thm11) - 1 (the same unless
option ``update_cap`` is set).
With no y releases (cap 0) the Gram part alone is calibrated to the claim.

Positive definiteness: every noisy matrix the learner uses is eigenvalue-floored at lam~ when its
smallest eigenvalue is below lam~ (post-processing; docs/seed-004-private-lsvi-ucb.md#departures); the number of floored
matrices is reported in ``info["floor_events"]``; with option ``eig_floor=False`` a matrix that is
not positive definite raises :class:`privacct.errors.NumericalError` instead.

Bonus: beta = bonus_scale * (5 H^2 sqrt(d lam~ log chi) + 6 d H sqrt(log chi)), chi =
25^4 162 K^4 d U_K H / p, U_K = max{1, 2H sqrt(dK/lam~) + lam~_y/lam~} (Thm 16, Lemma 20), with
lam~_y = H N_max sqrt(log(3KH/p)/rho) (Eq. 16) in paper mode and sigma_y (sqrt(d) + 2 sqrt(log(3KH/p)))
(Laurent-Massart) in tight mode (0 there when the cap is 0: no y noise enters any policy); option ``beta`` sets beta
directly (data-independent: privacy unchanged).

Counter (option ``counter`` / ``privacct run --counter STRATEGY``; docs/counters.md): the H Gram
counters may run any factorized strategy over the K - 1 leaves. Its column norm replaces the tree
depth in the per-user cost (the zCDP of the Gram part is H ||col||_2^2 Delta^2 / (2 sigma^2)), and
its worst prefix variance V (in node variances) replaces L in lam~ = sqrt(V) sigma_node (4 sqrt(d) +
2 ln(3KH/p)): a release's noise is sum_i w_i Z_i, a symmetric Gaussian matrix with entry variance
sigma^2 sum_i w_i^2 <= V sigma^2, so Claim 32 applies with that std -- the regularizer shift comes
from the counter's actual error bound. ``tight`` without a counter chooses the counter, the shift lam~ and the
Gram / y budget split together for regret (:func:`choose_tight`, docs/counters.md#choosing-for-regret): the proxy is the
paper's regret bound term by term (:class:`RegretProxy`: Lemma 26's widths (27) and Eq. (21)), and a configuration is
taken over the tree with the printed split only when it dominates it (every term at most the tree's, the y width
lower): the streaming strategy (:func:`privacct.counters.compare.candidates_for`) of least ||col||^2 V, at the tree's
shift, with the Gram share (1/2) ||col||^2 V / L^2 (the budget that keeps that shift) and the rest on the y releases;
the tree is kept, with the reason, when the proxy cannot rank (no y release). Where the tree's shift allows no
data-triggered update within K, the reference is instead the streaming strategy at the printed split whose shift does,
of least bound, and the same dominance step runs at its shift. The choice is recorded as
``tight_choice`` (:class:`.common.TightChoice`) in the log's parameters. A named counter keeps the printed split
rho/2 + rho/2; ``paper`` keeps the tree. An audited run runs the counter the unaudited run of the same configuration
runs (tight's choice included) and its audit observes that counter (docs/auditing.md#factorized-counters).

Options: ``p`` (default 0.05), ``C`` (update rate > 1, default 2), ``beta``, ``eig_floor``
(default True), ``counter``, ``update_cap`` (default: the paper's ceil(N_max) - 1). Audit hook: the contract's
AuditHook (canaries and observation: :mod:`.canary`, the package docstring). A one-run audit (``audit.plan``):
each canary user k <= K - 1 answers by her bit to the current policy and reports her Gram leaves phi_h phi_h^T
under both bits (:func:`.common.user_episode`). One user per leaf: every node the tree draws over her that holds no
other canary (those starting at her leaf, below the canary spacing) is recorded by the tree; the y releases (users
1..k - 1 at once) are not observed (docs/auditing.md#one-run-audits-of-learners).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from privacct.errors import PrivacctError, check_count, check_positive
from privacct.ledger import Ledger
from privacct.log import (FACTORIZED_STRATEGIES, Claim, MechanismLog, PaperStatement, ReleaseGroup, Sensitivity, Structure,
                          tree_depth)
from privacct.log_readings import GroupOverride, Reading
from privacct.counters.stacked import StackedCounters
from privacct.mechanisms import TreeCounter, gaussian
from privacct.tap import prescribed, user_contribution

from ..contract import AuditHook, RunConfig, RunResult, noise_generators, stream_generators
from . import canary as CAN
from . import common as C
from .audited_y import BulkY, bulk_y

NAME = "private-lsvi-ucb"
OPTIONS = C.COMMON_OPTIONS + ("C", "counter", "update_cap")
COUNTERS = FACTORIZED_STRATEGIES  # the counting strategies, named once (privacct.log)
SOURCE = "Ngo, Vietri, Wu (ICML 2022), Improved Regret for Differentially Private Exploration in Linear MDP, Alg. 1 [seed 004]"
SQRT2 = math.sqrt(2.0)
#: Relative tolerance of "equal" when ``tight`` compares the regret-bound terms of two calibrated configurations
#: (:meth:`RegretProxy.dominates`): the tree's shift, kept by a calibrated candidate, agrees with it to about 1e-12.
PROXY_RTOL = 1e-6


def printed_constants(K: int, H: int, d: int, rho: float, p: float) -> dict[str, float]:
    """Alg. 1 lines 2, 3, 11 and the Gram node std of Eq. (6), reading A (docs/seed-004-private-lsvi-ucb.md#eq-6-node-noise)."""
    lnK = math.log(K)
    lam = lnK * (6 * math.sqrt(d + 1) + 2 * math.log(3 * K * H / p)) / math.sqrt(2 * rho)
    n_max = d * H / math.log(2) * math.log(1 + K / (lam * d))
    return {
        "lam_tilde": lam,
        "N_max": n_max,
        "sigma_y": math.sqrt(6 * H * H * n_max / rho),
        "sigma_node": math.sqrt(lnK / (2 * rho)),
        "lam_y": H * n_max * math.sqrt(math.log(3 * K * H / p) / rho),
    }


def paper_cap(n_max: float) -> int:
    """The number of policy updates Alg. 1 can make: N_count starts at 1 (line 6), an update needs N_count < N_max
    (line 8) and adds 1 (line 22), so the updates are those with N_count = 1, 2, ..., i.e. the integers in [1, N_max):
    ceil(N_max) - 1, which is 0 for N_max <= 1 (docs/seed-004-private-lsvi-ucb.md#algorithm-and-releases)."""
    if not n_max > 0:
        raise PrivacctError(f"N_max must be > 0 (Thm 11's bound with lam~ > 0), got {n_max!r}")
    return math.ceil(n_max) - 1


#: The Gram counters' share of the budget as printed: Sec. 4.2 gives rho/2 to the H Gram counters and rho/2 to the y
#: releases (docs/seed-004-private-lsvi-ucb.md#constants-as-printed).
PRINTED_GRAM_SHARE = 0.5


def sound_constants(K: int, H: int, d: int, rho: float, p: float, structure: Structure | None = None,
                    cap: int | None = None, gram_share: float = PRINTED_GRAM_SHARE) -> dict[str, Any]:
    """Sound constants (docs/seed-004-private-lsvi-ucb.md#tight-calibration), before calibration: ``gram_share`` rho
    for the Gram counters and the rest for the y releases (the printed rho/2 + rho/2 by default); for a factorized
    counter the tree depth L becomes its squared column norm (cost) and its worst prefix variance (lam~), module
    docstring. ``cap`` None: the paper's cap ceil(N_max) - 1 of this N_max (:func:`paper_cap`); ``sigma_y`` is None
    when the cap is 0 (no y release; the calibration then gives the Gram part the whole claim)."""
    if not 0.0 < gram_share < 1.0:
        raise PrivacctError(f"gram_share must be in (0, 1), got {gram_share!r}")
    L, V = counter_figures(K, structure)
    rho_gram, rho_y = gram_share * rho, (1.0 - gram_share) * rho
    sigma_node = math.sqrt(H * L * 2.0 / (2 * rho_gram))
    lam = math.sqrt(V) * sigma_node * (4 * math.sqrt(d) + 2 * math.log(3 * K * H / p))
    n_max = switching_bound(K, H, d, lam)
    n_cap = paper_cap(n_max) if cap is None else cap
    sigma_y = None if n_cap == 0 else math.sqrt(n_cap * H * (2 * H + 2) ** 2 / (2 * rho_y))
    return {"lam_tilde": lam, "N_max": n_max, "N_cap": n_cap, "sigma_y": sigma_y, "sigma_node": sigma_node}


def counter_figures(K: int, structure: Structure | None) -> tuple[float, float]:
    """(per-user cost multiplier ||col||_2^2, worst prefix variance V) of the Gram counter over K - 1
    leaves: (L, L) for the tree (L = floor(log2 (K - 1)) + 1; the prefix sums at most L nodes), the
    derived figures of docs/counters.md otherwise."""
    from privacct.counters.strategies import Strategy, column_norm, worst_prefix_variance

    if structure is None or Strategy.of(structure).is_binary_tree:
        L = tree_depth(K - 1)
        return float(L), float(L)
    return column_norm(structure, "l2") ** 2, worst_prefix_variance(structure)


def lam_from_node(sigma_node: float, K: int, H: int, d: int, p: float, structure: Structure | None = None) -> float:
    """lam~ = sqrt(V) sigma_node (4 sqrt(d) + 2 ln(3KH/p)): Claim 32 (Tao) for the prefix noise,
    union bound over KH matrices (docs/seed-004-private-lsvi-ucb.md#tight-calibration); V = L for the tree."""
    return math.sqrt(counter_figures(K, structure)[1]) * sigma_node * (4 * math.sqrt(d) + 2 * math.log(3 * K * H / p))


def switching_bound(K: int, H: int, d: int, lam_tilde: float) -> float:
    """Thm 11: N_count <= (dH / log 2) log(1 + K / (lam~ d)) (on the event ||Lam~ - Lam|| <= lam~)."""
    return d * H / math.log(2) * math.log(1 + K / (lam_tilde * d))


def log_chi(K: int, H: int, d: int, lam: float, lam_y: float, p: float) -> float:
    """log chi, chi = 25^4 162 K^4 d U_K H / p (Thm 16, Lemma 25), U_K = max{1, 2H sqrt(dK/lam~) + lam~_y/lam~} (Lemma 20)."""
    U = max(1.0, 2 * H * math.sqrt(d * K / lam) + lam_y / lam)
    return math.log(25 ** 4 * 162.0) + 4 * math.log(K) + math.log(d * U * H / p)


def theory_beta(K: int, H: int, d: int, lam: float, lam_y: float, p: float) -> float:
    """Thm 16 / Lemma 25: beta = 5H^2 sqrt(d lam~ log chi) + 6dH sqrt(log chi)."""
    lc = log_chi(K, H, d, lam, lam_y, p)
    return 5 * H * H * math.sqrt(d * lam * lc) + 6 * d * H * math.sqrt(lc)


def y_norm_bound(sigma_y: float | None, K: int, H: int, d: int, p: float) -> float:
    """lam~_y = sigma_y (sqrt(d) + 2 sqrt(log(3KH/p))): the y noise's norm bound (Laurent-Massart), 0 with no y release."""
    return 0.0 if sigma_y is None else sigma_y * (math.sqrt(d) + 2 * math.sqrt(math.log(3 * K * H / p)))


@dataclass(frozen=True)
class RegretProxy:
    """The terms of the paper's regret bound for one configuration of the learner (docs/counters.md#choosing-for-regret):
    Lemma 26's confidence width beta* (its condition (27), App. B.6) split by where each part comes from, and the
    bound of App. B.5 with that width (Eq. (21) and the line after it).

    * ``width_gram`` = 4 H sqrt(d lam~): q1 and p2, the shift 2 lam~ I and the Gram noise M (||M|| <= lam~ on E_2);
    * ``width_stat`` = 6 d H sqrt(log chi): q2 (Lemma 25), chi through U_K (Lemma 20) with the y noise's lam~_y;
    * ``width_y`` = lam~_y / sqrt(lam~): q4, the y noise through the ridge (Eq. (12));
    * ``bonus_sum`` = 2 d log((lam~ + K) / lam~): the elliptical potential of Eq. (21);
    * ``bound`` = sqrt(2 K H^3 log chi) + 6 beta* H sqrt(K bonus_sum), beta* = the three widths.

    lam~ sets N_cap (Thm 11), and N_cap with the y share of the budget sets sigma_y, hence lam~_y."""

    lam_tilde: float
    n_cap: int
    sigma_y: float | None
    width_gram: float
    width_stat: float
    width_y: float
    bonus_sum: float
    bound: float

    @classmethod
    def of(cls, K: int, H: int, d: int, p: float, lam: float, n_cap: int, sigma_y: float | None) -> "RegretProxy":
        lam_y = y_norm_bound(sigma_y, K, H, d, p)
        lc = log_chi(K, H, d, lam, lam_y, p)
        w_gram, w_stat, w_y = 4 * H * math.sqrt(d * lam), 6 * d * H * math.sqrt(lc), lam_y / math.sqrt(lam)
        bonus = 2 * d * math.log((lam + K) / lam)
        bound = math.sqrt(2 * K * H ** 3 * lc) + 6 * (w_gram + w_stat + w_y) * H * math.sqrt(K * bonus)
        return cls(lam, n_cap, sigma_y, w_gram, w_stat, w_y, bonus, bound)

    def terms(self) -> tuple[float, float, float, float]:
        """The terms the bound is increasing in: (width_gram, width_stat, width_y, bonus_sum)."""
        return (self.width_gram, self.width_stat, self.width_y, self.bonus_sum)

    def dominates(self, other: "RegretProxy", rtol: float = PROXY_RTOL) -> bool:
        """Every term at most ``other``'s (to ``rtol`` relative) and the y width below it by more than ``rtol``: the
        bound is then lower whatever its constants (docs/counters.md#choosing-for-regret)."""
        return (all(a <= b * (1 + rtol) for a, b in zip(self.terms(), other.terms(), strict=True))
                and self.width_y < other.width_y * (1 - rtol))


def _check(config: RunConfig):
    env, K = C.check_config(config, privacy_models=("jdp",), default_env="linear-two-state")
    opts = C.check_options(config, OPTIONS)
    if K < 2:
        raise PrivacctError(f"episodes must be an integer >= 2 for {NAME} (the paper's ln K must be > 0), got {K}")
    c = check_positive("options.C (policy update rate)", opts.get("C", 2.0))
    if c <= 1:
        raise PrivacctError(f"options.C (policy update rate) must be > 1, got {c!r}")
    if opts.get("counter") is not None and opts["counter"] not in COUNTERS:
        raise PrivacctError(f"options.counter must be one of {', '.join(COUNTERS)}, got {opts['counter']!r}")
    if opts.get("update_cap") is not None:
        opts["update_cap"] = check_count("options.update_cap (policy updates allowed)", opts["update_cap"], minimum=0)
    return env, K, opts


def _groups(H: int, d: int, K: int, sigma_node: float, sigma_y: float | None, cap: int, n_max_paper: float | None,
            structure: Structure | None = None) -> list[ReleaseGroup]:
    """The 2 kinds of release groups; ``n_max_paper`` None (tight mode) omits the PaperStatements,
    which describe the printed calibration only; ``structure``: the Gram counters' (default the tree). With
    ``cap`` 0 there is no y group: no update, so no y release (a group of 0 releases is not declared)."""
    groups = []
    structure = Structure.tree(leaves=K - 1) if structure is None else structure
    for h in range(1, H + 1):
        groups.append(ReleaseGroup(
            name=f"gram_h{h}", mechanism="symmetric-gaussian-matrix", noise_scale=sigma_node,
            sensitivity=Sensitivity("frobenius-upper", SQRT2,
                                    "replace-one: ||vec_ut(phi phi^T - psi psi^T)||_2 <= ||.||_F <= sqrt(2) for ||phi||, ||psi|| <= 1 "
                                    "(docs/seed-004-private-lsvi-ucb.md#sensitivity; tight for e1 vs e2)"),
            structure=structure, dimension=d * (d + 1) // 2,
            description=f"{'tree' if structure.kind == 'tree' else structure.strategy} counter of sum_i phi_h^i phi_h^i^T at step h={h}, released every episode, shifted by 2 lam~ I",
            paper=None if n_max_paper is None else PaperStatement(
                sensitivity=2.0, per_user_count=math.log(K),
                equation="Lemma 14 (operator norm 2); Eq. (6) (a point in at most log K nodes)"),
        ))
    if cap == 0:
        return groups
    groups.append(ReleaseGroup(
        name="y", mechanism="gaussian", noise_scale=sigma_y,
        sensitivity=Sensitivity("l2", 2.0 * (H + 1),
                                "replace-one: ||phi t - phi' t'||_2 <= 2 max|t|, t = r + V_{h+1} in [0, H+1] with Q clipped "
                                "to [0, H] (Lemma 14; docs/seed-004-private-lsvi-ucb.md#sensitivity: the paper clips only from above)"),
        structure=Structure.adaptive(max_count=H * cap), dimension=d,
        description=f"responses y_h (one release per step h = H..1 at every policy update; fresh Gaussian noise each), "
                    f"updates triggered by noisy log-det doubling, hard cap N_cap = {cap} updates, so at most H * N_cap = {H * cap} releases",
        # What the paper prints for the y releases (Sec. 4.2): on an update episode Delta(f_h^k) =
        # Delta(y_h^k) <= 3H, at most N_max update episodes, H steps; Lemma 15 composes them by adding the
        # sensitivities (sum_k Delta(f_k) <= Delta = 3H^2 N_max) and sets the variance Delta / rho' (rho' = rho/2:
        # Alg. 1 line 11's 6H^2 N_max / rho). privacct.explain costs the group by that rule (rho/2) and names it
        # as the cause against zCDP composition (squares added) with Lemma 14's 2H + 2.
        paper=None if n_max_paper is None else PaperStatement(
            sensitivity=3.0 * H, per_user_count=H * n_max_paper,
            equation=("Sec. 4.2: Delta(f_h^k) = Delta(y_h^k) <= 3H on an update episode, at most N_max update "
                      "episodes (Thm 11) for each of the H steps; Lemma 14 itself prints Delta(y_h^k) <= 2H + 2"),
            composition="sensitivities-added",
            composition_equation="Lemma 15 (sum_k Delta(f_k) <= Delta, noise N(0, Delta/rho); Alg. 1 line 11)"),
    ))
    return groups


def node_readings(K: int, H: int, rho: float) -> tuple[Reading, ...]:
    """The two readings of Eq. (6)'s Gram node noise (docs/seed-004-private-lsvi-ucb.md#eq-6-node-noise): A, the
    declared log (sigma_node^2 = ln K / (2 rho), back-solved from the shift lam~), and B, what the privacy proof
    needs (each node rho / (2H log K)-zCDP with Lemma 14's Delta = 2: sigma_node^2 = 4 H ln K / rho, 8H times A)."""
    sigma_b = math.sqrt(4.0 * H * math.log(K) / rho)
    return (
        Reading("A", "Eq. (6)'s log(K)^2/(2 rho) read as the per-entry variance of a prefix spread over ln K nodes: "
                     "sigma_node^2 = ln K / (2 rho), back-solved from the shift lam~ (Alg. 1 line 2, Eq. (7): prefix std "
                     "log K / sqrt(2 rho)); consistent with lam~, N_max and beta, not with the privacy proof"),
        Reading("B", "Eq. (6) read through the privacy proof: each node rho/(2H log K)-zCDP with Delta = 2: "
                     "sigma_node^2 = 4 H ln K / rho (8H times reading A's variance); the printed lam~ is then about "
                     "2 sqrt(2H) too small for the noise that runs (utility, not privacy)",
                supported_by="Sec. 4.2 ('each partial sum satisfies rho/(2H log(K))-zCDP', 'the output of C_h satisfies "
                             "rho/(2H)-zCDP') with Lemma 14's Delta = 2 and Def. 9 (sigma^2 = Delta^2 / (2 rho')) gives "
                             "sigma_node^2 = 4 H ln K / rho; Thm 18's utility bound carries the sqrt(H) this implies",
                overrides=tuple(GroupOverride(f"gram_h{h}", noise_scale=sigma_b) for h in range(1, H + 1))),
    )


#: Rounds of the tight calibration's cap fixed point (:func:`cap_fixed_point`). Among caps >= 1 it settles in 1 or 2
#: rounds: the base log's y part costs rho / 2 whatever the cap, so the calibration factor does not depend on it.
CAP_ROUNDS = 8


def cap_fixed_point(start: int, paper_cap_of: Callable[[int], int]) -> tuple[int, bool]:
    """(cap, settled): the cap c with c = ``paper_cap_of(c)``, iterating from ``start``, where ``paper_cap_of(c)`` is
    the paper's cap ceil(N_max) - 1 of Thm 11's N_max under the noise of the log calibrated with cap c
    (:func:`_tight_fixed_point`). ``settled`` False: a cycle, or no fixed point within :data:`CAP_ROUNDS` rounds; the
    cap is then the largest cap tried that is at most the paper's cap of its own calibrated N_max (Alg. 1 would make at
    least that many updates with that noise), else 0. The cycle that occurs is 0 <-> 1 near N_max = 1: with no y release
    the Gram part gets the whole claim, so its calibrated noise, lam~, is smaller and N_max larger than with one (K = 50,
    H = 2, eps = 20, the tree: N_max 1.35 at cap 0, 0.96 at cap 1); cap 0 is kept, the paper's rule for its own noise
    would allow 1 (docs/seed-004-private-lsvi-ucb.md#tight-calibration)."""
    seen: dict[int, int] = {}
    cap = start
    while cap not in seen and len(seen) < CAP_ROUNDS:
        seen[cap] = nxt = paper_cap_of(cap)
        if nxt == cap:
            return cap, True
        cap = nxt
    ok = [c for c, n in seen.items() if c <= n]
    return (max(ok) if ok else 0), False


def _tight_fixed_point(K: int, H: int, d: int, rho: float, p: float, claim: Claim, structure: Structure | None,
                       forced: int | None, gram_share: float = PRINTED_GRAM_SHARE) -> dict[str, Any]:
    """The tight log of one Gram counter with its cap (docs/seed-004-private-lsvi-ucb.md#tight-calibration).

    The cap is part of the declared structure (the y group's max_count), so each calibration runs with a fixed cap;
    calibrating rescales the noise, and lam~ (Claim 32 with the calibrated prefix std, :func:`lam_from_node`) with it,
    so Thm 11's N_max of the noise that runs differs from the N_max of :func:`sound_constants` (before calibration).
    The paper's rule (Alg. 1 lines 3, 6, 8: N_cap = ceil(N_max) - 1, :func:`paper_cap`) is applied to the calibrated
    N_max; if it gives another cap, the log is rebuilt with that cap and calibrated again (:func:`cap_fixed_point`),
    so that the cap is the paper's cap of the lam~ that runs. ``forced`` (option ``update_cap``): that cap, calibrated once.
    ``gram_share``: the Gram counters' share of the base log's budget (:func:`sound_constants`); the calibration's
    common factor keeps the split."""
    from privacct.calibrate import calibrate_log

    done: dict[int, dict[str, Any]] = {}

    def calibrated(cap: int) -> dict[str, Any]:
        if cap not in done:
            sc = sound_constants(K, H, d, rho, p, structure, cap=cap, gram_share=gram_share)
            base = MechanismLog(f"{NAME}/tight", "joint",
                                tuple(_groups(H, d, K, sc["sigma_node"], sc["sigma_y"], cap, None, structure)),
                                claim=claim, source=SOURCE, parameters={})
            log, acc = calibrate_log(base, epsilon=claim.epsilon, delta=claim.delta, return_accountant=True)
            lam = lam_from_node(log.release_groups[0].noise_scale, K, H, d, p, structure)
            done[cap] = {"log": log, "accountant": acc, "base": base, "cap": cap, "lam_tilde": lam,
                         "N_max": switching_bound(K, H, d, lam)}
        return done[cap]

    if forced is not None:
        return {**calibrated(forced), "rule": f"option update_cap = {forced}"}
    cap, settled = cap_fixed_point(sound_constants(K, H, d, rho, p, structure, gram_share=gram_share)["N_cap"],
                                   lambda c: paper_cap(calibrated(c)["N_max"]))
    rule = ("paper: ceil(N_max) - 1 of the calibrated lam~ (Alg. 1 lines 3, 6, 8; Thm 11)" if settled else
            f"no fixed point of ceil(N_max) - 1 over the caps {sorted(done)}: the largest cap at most the paper's cap of "
            f"its own calibrated N_max, ceil(N_max_thm11) - 1 = {paper_cap(calibrated(cap)['N_max'])} (privacy "
            f"unaffected: the log declares the cap that runs)")
    return {**calibrated(cap), "rule": rule}


def _proxy_of(t: dict[str, Any], K: int, H: int, d: int, p: float) -> RegretProxy:
    """The :class:`RegretProxy` of a calibrated tight log (:func:`_tight_fixed_point`)."""
    log, cap = t["log"], t["cap"]
    return RegretProxy.of(K, H, d, p, t["lam_tilde"], cap, log.group("y").noise_scale if cap > 0 else None)


def first_update_episode(lam: float, d: int, rate: float) -> float:
    """The earliest episode at which the data alone can trigger an update (Alg. 1 line 8, rate C): with the shift
    2 lam~ I and ||phi|| <= 1, log det(2 lam~ I + Lam_h^k) - log det(2 lam~ I) <= d log(1 + (k - 1) / (2 lam~ d))
    (trace and AM-GM, the argument of Lemma 29), which reaches log C only at k >= 1 + 2 lam~ d (C^(1/d) - 1).
    Before it the learner plays its data-free policy unless the Gram noise triggers a switch."""
    return 1.0 + 2.0 * lam * d * (rate ** (1.0 / d) - 1.0)


def _least_cv_at_shift(K: int, H: int, d: int, rho: float, p: float, claim: Claim, forced: int | None,
                       ref_proxy: RegretProxy, ref_cv: float, ref_share: float) -> tuple[Any, str]:
    """The dominance step of :func:`choose_tight` at a reference's shift: the streaming strategy of least c V below the
    reference's ``ref_cv``, with the Gram share ``ref_share`` c V / ref_cv (the budget that keeps the reference's shift),
    calibrated, when it dominates the reference (:meth:`RegretProxy.dominates`). Returns ``((name, structure, c V,
    calibrated dict, proxy), "")`` or ``(None, why)``."""
    from privacct.counters.compare import candidates_for

    best = None
    for name in candidates_for("symmetric-gaussian-matrix"):
        if name == "tree":
            continue
        st = _counter_structure(name, K)
        cv = math.prod(counter_figures(K, st))
        if cv < ref_cv * (1 - PROXY_RTOL) and (best is None or cv < best[0]):
            best = (cv, name, st)
    if best is None:
        return None, (f"no streaming counter has less worst prefix error at equal per-user cost "
                      f"(||col||^2 max Var = {ref_cv:.4g}), so none leaves budget for the y releases at this shift")
    cv, name, st = best
    t = _tight_fixed_point(K, H, d, rho, p, claim, st, forced, gram_share=ref_share * cv / ref_cv)
    prox = _proxy_of(t, K, H, d, p)
    if not prox.dominates(ref_proxy):
        return None, (f"{name} at this shift did not dominate it after calibration (lam~ {prox.lam_tilde:.6g} vs "
                      f"{ref_proxy.lam_tilde:.6g}, N_cap {prox.n_cap} vs {ref_proxy.n_cap})")
    return (name, st, cv, t, prox), ""


def _updating_candidates(K: int, H: int, d: int, rho: float, p: float, claim: Claim, forced: int | None,
                         rate: float) -> list[tuple[str, float, dict[str, Any], RegretProxy, float]]:
    """The streaming strategies other than the tree at the printed split (rho/2 + rho/2, each at the shift of its own
    prefix error: the configuration of option ``counter``), calibrated to the claim, whose shift allows a
    data-triggered update within K (N_cap >= 1 and :func:`first_update_episode` <= K), as (name, c V, calibrated dict,
    proxy, first update episode), least regret bound first (docs/counters.md#choosing-for-regret)."""
    from privacct.counters.compare import candidates_for

    out = []
    for name in candidates_for("symmetric-gaussian-matrix"):
        if name == "tree":
            continue
        st = _counter_structure(name, K)
        t = _tight_fixed_point(K, H, d, rho, p, claim, st, forced)
        prox = _proxy_of(t, K, H, d, p)
        first = first_update_episode(prox.lam_tilde, d, rate)
        if t["cap"] >= 1 and first <= K:
            out.append((name, math.prod(counter_figures(K, st)), t, prox, first))
    return sorted(out, key=lambda c: c[3].bound)


def _shares(t: dict[str, Any], K: int, H: int) -> float:
    """The Gram counters' share of the accounted zCDP of a calibrated tight log (:func:`_tight_fixed_point`)."""
    groups = t["log"].release_groups
    rho_g = H * counter_figures(K, groups[0].structure)[0] * 2.0 / (2 * groups[0].noise_scale ** 2)
    rho_y = H * t["cap"] * (2 * H + 2) ** 2 / (2 * t["log"].group("y").noise_scale ** 2) if t["cap"] > 0 else 0.0
    return rho_g / (rho_g + rho_y)


def choose_tight(K: int, H: int, d: int, rho: float, p: float, claim: Claim,
                 forced: int | None, rate: float = 2.0, *, updating: bool = True) -> tuple[C.TightChoice, dict[str, Any]]:
    """``tight``'s counter, shift and budget split, chosen together for regret (docs/counters.md#choosing-for-regret).

    Reference: the tree with the printed split (Sec. 4.2: rho/2 Gram, rho/2 y), calibrated to the claim with its cap
    (:func:`_tight_fixed_point`). The proxy is the paper's regret bound (:class:`RegretProxy`); its terms are monotone
    in the shift lam~ and the y noise sigma_y, but the bound's constants (Lemma 19's ||w|| <= 2H sqrt(d), the covering
    of Lemma 24) do not pin how a change of lam~ trades the Gram width against the y width and the bonus sum, so a
    configuration is preferred to the reference only when it DOMINATES it: every term at most the reference's, the y
    width lower. At the reference's shift the Gram width, the bonus sum and the cap are the reference's, and the y
    noise is least when the Gram counters take only the budget that keeps that shift: a strategy of per-user cost
    c = ||col||_2^2 and worst prefix variance V needs the Gram share (1/2) c V / L^2 of the tree's (L the tree's
    depth), and the rest goes to y. So the strategy of least c V among the streaming candidates
    (:func:`privacct.counters.compare.candidates_for`) is chosen, at the tree's shift, if its c V is below the tree's
    L^2 and the calibrated log dominates the reference; otherwise the tree is kept and the reason says why (no y
    release: every strategy gives the same bound; no strategy below the tree's c V). ``rate``: the update rate C of
    option ``C``, for the figure :func:`first_update_episode`.

    When the tree's shift allows no data-triggered update within K (N_cap = 0 or :func:`first_update_episode` > K:
    the learner would play its data-free policy throughout, which the bound does not see) and ``updating`` (default),
    the reference becomes the candidate at the printed split whose shift does allow one, of least regret bound among
    those (:func:`_updating_candidates`), and the same dominance step runs at its shift; with no such candidate the
    rule above applies and the reason says the shift allows no update. ``updating=False``: the rule without this
    step (for ablations). Every candidate is calibrated to the same claim. Returns the choice and its calibrated tight
    log (:func:`_tight_fixed_point`'s dict)."""
    tree = _counter_structure("tree", K)
    ref = _tight_fixed_point(K, H, d, rho, p, claim, tree, forced)
    ref_proxy = _proxy_of(ref, K, H, d, p)
    ref_cv = math.prod(counter_figures(K, tree))
    proxy_name = "paper's regret bound (App. B.5, Eq. (21), (27)), dominance at the tree's shift (docs/counters.md#choosing-for-regret)"
    first = first_update_episode(ref_proxy.lam_tilde, d, rate)
    ref_figures = (("reference_lam_tilde", ref_proxy.lam_tilde), ("reference_N_cap", float(ref_proxy.n_cap)),
                   ("reference_width_y", ref_proxy.width_y), ("reference_bound", ref_proxy.bound),
                   ("reference_cV", ref_cv), ("first_update_episode", first))
    late = (f"; at this shift no data-triggered update can happen before episode {first:,.0f} > K = {K}, so the learner "
            f"plays its data-free policy (first_update_episode)" if first > K else "")

    def keep(why: str) -> tuple[C.TightChoice, dict[str, Any]]:
        return C.TightChoice("tree", "tree", False, why + late, proxy_name, ref_figures), ref

    if updating and (ref["cap"] == 0 or first > K):
        upd = _updating_candidates(K, H, d, rho, p, claim, forced, rate)
        if upd:
            return _choose_updating(K, H, d, rho, p, claim, forced, rate, upd, ref_proxy, first, ref_figures)
    if ref["cap"] == 0:
        return keep("tree kept: no y release (N_cap = 0), so at the tree's shift every counter gives the same regret "
                    "bound and the proxy cannot rank them")
    found, why_not = _least_cv_at_shift(K, H, d, rho, p, claim, forced, ref_proxy, ref_cv, PRINTED_GRAM_SHARE)
    if found is None:
        return keep(f"tree kept at the tree's shift: {why_not}")
    name, st, cv, t, prox = found
    g = _shares(t, K, H)
    why = (f"{name} at the tree's shift (lam~ {prox.lam_tilde:.4g}, N_cap {prox.n_cap}) with {100 * g:.1f}% of the budget on "
           f"the Gram counters (tree 50%): y noise {prox.sigma_y:.4g} vs {ref_proxy.sigma_y:.4g}, y width "
           f"{prox.width_y:.4g} vs {ref_proxy.width_y:.4g}, every other term of the regret bound equal" + late)
    figures = (("lam_tilde", prox.lam_tilde), ("N_cap", float(prox.n_cap)), ("gram_share", g),
               ("sigma_y", float(prox.sigma_y or 0.0)), ("reference_sigma_y", float(ref_proxy.sigma_y or 0.0)),
               ("width_y", prox.width_y), ("bound", prox.bound), ("cV", cv)) + ref_figures
    return C.TightChoice(name, "tree", True, why, proxy_name, figures), t


def _choose_updating(K: int, H: int, d: int, rho: float, p: float, claim: Claim, forced: int | None, rate: float,
                     upd: list, tree_proxy: RegretProxy, tree_first: float,
                     tree_figures: tuple) -> tuple[C.TightChoice, dict[str, Any]]:
    """:func:`choose_tight`'s choice when the tree's shift allows no update within K: the updating candidate of least
    bound (``upd[0]``), then the dominance step at its shift (:func:`_least_cv_at_shift`)."""
    name0, cv0, t0, prox0, first0 = upd[0]
    found, _ = _least_cv_at_shift(K, H, d, rho, p, claim, forced, prox0, cv0, PRINTED_GRAM_SHARE)
    name, cv, t, prox = (name0, cv0, t0, prox0) if found is None else (found[0], found[2], found[3], found[4])
    g = _shares(t, K, H)
    others = ", ".join(f"{n} {c[3].bound:.4g}" for n, c in ((c[0], c) for c in upd[1:]))
    tree_why = (f"no update before episode {tree_first:,.0f} > K = {K}" if tree_first > K and tree_proxy.n_cap > 0
                else f"N_cap {tree_proxy.n_cap}")
    why = (f"{name} at {name0}'s shift at the printed split (lam~ {prox.lam_tilde:.4g}, N_cap {prox.n_cap}, "
           f"{100 * g:.1f}% of the budget on the Gram counters; a data-triggered update possible from episode "
           f"{first0:,.0f}): the tree's shift (lam~ {tree_proxy.lam_tilde:.4g}) allows no update within K ({tree_why}), "
           f"so its learner would play the data-free policy throughout; among the candidates that can update, the "
           f"least regret bound ({prox0.bound:.4g}" + (f"; {others}" if others else "") + ")")
    figures = (("lam_tilde", prox.lam_tilde), ("N_cap", float(prox.n_cap)), ("gram_share", g),
               ("sigma_y", float(prox.sigma_y or 0.0)), ("reference_sigma_y", float(tree_proxy.sigma_y or 0.0)),
               ("width_y", prox.width_y), ("bound", prox.bound), ("cV", cv),
               ("chosen_first_update_episode", first_update_episode(prox.lam_tilde, d, rate)),
               ("updating_candidates", float(len(upd)))) + tree_figures
    return C.TightChoice(name, "tree", True, why, "paper's regret bound (App. B.5, Eq. (21), (27)), least among the "
                         "candidates whose shift allows an update within K (docs/counters.md#choosing-for-regret)",
                         figures), t


def _plan(config: RunConfig) -> tuple[MechanismLog, dict[str, Any]]:
    """The declared log and the constants the run uses (scales from the log). Cached per config
    (calibration can take seconds under the PLD accountant); the returned dict must not be mutated."""
    env, K, opts = _check(config)
    H, d = env.horizon, env.dim
    eps, delta = float(config.epsilon), float(config.delta)
    rho = C.zcdp_rho(eps, delta)
    p = float(opts.get("p", 0.05))
    forced = opts.get("update_cap")
    params: dict[str, Any] = {
        "K": K, "H": H, "d": d, "S": env.n_states, "A": env.n_actions, "env": env.name,
        "calibration": config.calibration, "rho": rho, "p": p, "C": float(opts.get("C", 2.0)),
        "conversion": "zCDP -> (eps, delta): eps = rho + 2 sqrt(rho log(1/delta)) (Bun-Steinke 2016 Prop. 1.3; paper Lemma 6)",
        "tree_depth_L": tree_depth(K - 1),
        "rho_claimed_gram": rho / 2, "rho_claimed_y": rho / 2,
    }
    if config.calibration == "paper":
        pc = printed_constants(K, H, d, rho, p)
        cap = paper_cap(pc["N_max"]) if forced is None else forced
        rule = "paper: ceil(N_max) - 1 (Alg. 1 lines 3, 6, 8)" if forced is None else f"option update_cap = {forced}"
        structure = _counter_structure(opts.get("counter"), K)
        log = MechanismLog(f"{NAME}/paper", "joint",
                           tuple(_groups(H, d, K, pc["sigma_node"], pc["sigma_y"], cap, pc["N_max"], structure)),
                           claim=Claim(eps, delta), source=SOURCE, parameters={})
        if structure is not None:
            params["counter"] = opts["counter"]
        lam, n_max, lam_y = pc["lam_tilde"], pc["N_max"], pc["lam_y"]
        if cap > 0:
            # What the printed y variance delivers (docs/seed-004-private-lsvi-ucb.md#lemma-15-sums-sensitivities):
            # N_max H (2H+2)^2 / (2 * 6 H^2 N_max / rho).
            params["rho_y_printed_constants"] = (H + 1) ** 2 * rho / (3 * H)
            params["rho_y_note"] = ("printed y variance 6 H^2 N_max / rho gives (H+1)^2 rho / (3H) zCDP for the y part, "
                                    "not rho/2 (Lemma 15 sums sensitivities, not their squares)")
    else:
        claim = Claim(eps, delta)
        structure = _counter_structure(opts.get("counter"), K)
        if structure is None:    # tight chooses the counter, shift and split for regret (docs/counters.md#choosing-for-regret)
            choice, t = choose_tight(K, H, d, rho, p, claim, forced, params["C"])
            structure = t["log"].release_groups[0].structure
            params["tight_choice"] = choice.to_params()
        else:
            t = _tight_fixed_point(K, H, d, rho, p, claim, structure, forced)
        log, cap, lam, n_max, rule = t["log"], t["cap"], t["lam_tilde"], t["N_max"], t["rule"]
        params["counter"] = structure.strategy if structure.kind == "factorized" else "tree"
        # lam~_y: the y noise's norm bound (Laurent-Massart); 0 with no y release (the bonus then sees no y noise)
        lam_y = y_norm_bound(log.group("y").noise_scale if cap > 0 else None, K, H, d, p)
        params["calibration_accountant"] = t["accountant"]
        params["calibration_factor"] = log.release_groups[0].noise_scale / t["base"].release_groups[0].noise_scale
    sig_node = log.release_groups[0].noise_scale
    sig_y = log.group("y").noise_scale if cap > 0 else None
    beta = float(opts["beta"]) if opts.get("beta") is not None else config.bonus_scale * theory_beta(K, H, d, lam, lam_y, p)
    params.update({"lam_tilde": lam, "N_max_thm11": n_max, "N_cap": cap, "N_cap_rule": rule,
                   "N_cap_paper": paper_cap(n_max), "sigma_node": sig_node, "sigma_y": sig_y,
                   "lam_y": lam_y, "beta": beta, "bonus_scale": config.bonus_scale})
    params["rho_y_accounted"] = 0.0 if cap == 0 else H * cap * (2 * H + 2) ** 2 / (2 * sig_y ** 2)
    params["rho_gram_accounted"] = H * counter_figures(K, log.release_groups[0].structure)[0] * 2.0 / (2 * sig_node ** 2)
    readings = node_readings(K, H, rho) if config.calibration == "paper" else ()
    log = MechanismLog(log.name, log.privacy_model, log.release_groups, log.neighbouring, params, log.claim, log.source,
                       readings=readings)
    return log, {**params, "env": env, "K": K, "opts": opts}


def _counter_structure(counter: str | None, K: int) -> Structure | None:
    """The Gram counters' structure for option ``counter`` (None: not chosen; ``tree``: the tree itself)."""
    if counter is None:
        return None
    if counter == "tree":
        return Structure.tree(leaves=K - 1)
    from privacct.counters.strategies import Strategy

    return Strategy(counter).structure(K - 1, norm="l2")


plan = C.cached_plan(_plan)


def _plant_noise_path(counters, structure: Structure) -> None:
    """The PLANTED mutant counter-noise-path (docs/auditing.md#planted-bugs): every Gram counter's BLT recursion
    Q(B) u = P(B) z runs with its Q coefficients halved while drawing the declared noise, before its first draw (so the
    ledger's probe records the executed encoder R_exec = L_exec^-1 A); the log is the faithful learner's. BLT only."""
    if structure.kind != "factorized" or structure.strategy != "blt":
        raise PrivacctError(f"audit.mutant counter-noise-path needs the BLT Gram counter (tight's own, or option "
                            f"counter=blt), got {structure.strategy if structure.kind == 'factorized' else 'tree'}")
    for c in counters:
        c._Q = [0.5 * q for q in c._Q]   # BUG: the noise recursion runs with halved Q (as the privatizer mutant's)


#: :func:`.common.play_episode` and :meth:`.common.History.add` as imported: a patched one (a benchmark's other arm)
#: keeps the numpy episode
_NUMPY_EPISODE = (C.play_episode, C.History.add)
#: episodes of uniforms drawn ahead per seed and call of the environment's Generator (the same values, in order)
U_CHUNK = 256
#: whether unaudited runs play their episodes compiled (:func:`_compiled_episode`, same bytes); False: the numpy episode
#: (with ``privacct.counters.stacked.COMPILED = False``, no numba in the process: docs/performance.md)
COMPILED_EPISODE = True
#: the largest K whose visit counts (B, H, S, A, S) are kept in float32 (every whole number up to 2^24 exactly; 7.6 MB
#: instead of 15.3 at 100 seeds of linear-d10-h10, issue 23): every reader widens them exactly to float64 (the numpy
#: episode's ``+= 1.0``, the compiled episode's, ``common.lsvi``'s ``N * V`` in float64), so the bytes are unchanged
COUNTS_F32_MAX = 2**24


def _compiled_episode(env, audit: AuditHook | None, B: int, K: int,
                      env_rngs: list[np.random.Generator]) -> Callable[..., np.ndarray] | None:
    """``play(k, pol, hist)``: user k's episode of every seed under ``pol`` added to ``hist``, compiled
    (:func:`.episode_jit.play_and_add`), returning the actions (B, H); the same states, actions, history and draws
    as :func:`.common.user_episode` + :meth:`.common.History.add` (the uniforms of each seed's ``random(H)`` calls,
    drawn ahead in chunks of at most :data:`U_CHUNK` episodes, never past K). None (the numpy episode) in an audited
    run (canary users), for an environment whose ``sample_next`` is not :class:`TabularMDP`'s, or when the numpy
    episode's functions were replaced."""
    from ..envs.tabular import TabularMDP

    if not COMPILED_EPISODE or audit is not None or type(env.tabular).sample_next is not TabularMDP.sample_next \
            or (C.play_episode, C.History.add) != _NUMPY_EPISODE:
        return None
    from .episode_jit import play_and_add

    H, d = env.horizon, env.dim
    tab = env.tabular
    cdf, phi, R, s0 = tab._cdf, np.ascontiguousarray(env.phi, dtype=float), np.ascontiguousarray(tab.R, dtype=float), \
        int(env.initial_state)
    states = np.empty((B, H + 1), dtype=np.int64)
    outer = np.empty((B, H, d, d))
    buf = SimpleNamespace(u=np.empty((B, 0, H)), j=0)

    def play(k: int, pol: np.ndarray, hist: C.History) -> np.ndarray:
        if buf.j == buf.u.shape[1]:
            n = min(U_CHUNK, K - k + 1)
            buf.u, buf.j = np.empty((B, n, H)), 0
            for b, r in enumerate(env_rngs):
                r.random(out=buf.u[b])
        actions = np.empty((B, H), dtype=np.int64)
        play_and_add(pol, cdf, phi, R, s0, buf.u[:, buf.j], states, actions, hist.N, hist.Rphi, hist.gram, outer)
        buf.j += 1
        hist.outer = outer
        return actions

    return play


def _compiled_logdet(play, B: int, H: int, d: int, lam_eye: np.ndarray):
    """The switching test's log-determinants compiled (:func:`.logdet_jit.compiled_logdet`: the fast path of
    :func:`.common.released_logdet`, the same bits; a matrix needing the floor sends that episode to numpy), when the
    episode runs compiled (``play`` not None: unaudited, :data:`COMPILED_EPISODE`) and numpy's LAPACK and log loop
    pass its self-check; None otherwise."""
    if play is None or C.released_logdet is not _RELEASED_LOGDET:
        return None
    from .logdet_jit import compiled_logdet

    return compiled_logdet(B, H, d, lam_eye)


#: :func:`.common.released_logdet` as imported: a patched one keeps the numpy call every episode
_RELEASED_LOGDET = C.released_logdet


def build_log(config: RunConfig) -> MechanismLog:
    return plan(config)[0]


def run(config: RunConfig, seeds, *, audit: AuditHook | None = None, progress=None) -> RunResult:
    # an audited run runs (and its audit observes) the counter the unaudited run of the same config runs: tight's own
    # choice without the option, the named one with it (docs/auditing.md#factorized-counters)
    log, c = plan(config)
    env, K, opts = c["env"], c["K"], c["opts"]
    seeds = C.check_seeds(seeds)
    B, H, d = len(seeds), env.horizon, env.dim
    lam, cap, beta = c["lam_tilde"], c["N_cap"], c["beta"]
    sig_node, sig_y = c["sigma_node"], c["sigma_y"]
    log_C = math.log(c["C"])
    allow_floor = bool(opts.get("eig_floor", True))
    env_rngs = stream_generators(seeds, 0, audit, fixed=audit is not None and audit.fixed_users)
    noise_rngs = noise_generators(seeds, 1, audit)
    tree_ledger = Ledger()   # a binary tree's node draws kept as (offset, count) (privacct.ledger, Tree runs)
    # a many-trial audited run's y releases for all updating seeds at once (.audited_y: same records, ledger, bytes)
    bulk = BulkY(noise_rngs, sig_y, d, H) if bulk_y(audit) else None
    y_ledgers = None if bulk is not None else [Ledger() for _ in range(B)]
    gram_structure = log.release_groups[0].structure
    if gram_structure.kind == "tree":
        trees = [TreeCounter((d, d), leaves=K - 1, mechanism="symmetric-gaussian-matrix", scale=sig_node, rngs=noise_rngs,
                             ledger=tree_ledger, group=f"gram_h{h + 1}") for h in range(H)]
    else:
        from privacct.counters.counter import FactorizedCounter

        trees = [FactorizedCounter((d, d), strategy=gram_structure, leaves=K - 1, mechanism="symmetric-gaussian-matrix",
                                   scale=sig_node, rngs=noise_rngs, ledger=tree_ledger, group=f"gram_h{h + 1}")
                 for h in range(H)]
    if audit is not None and audit.mutant == "counter-noise-path":
        _plant_noise_path(trees, gram_structure)
    # the H factorized counters stepped as one (privacct.counters.stacked: one generator call per seed per step for
    # the H statistics, one mixing step; same bytes); the trees one by one
    # the stack's ledger rows recorded together when the episodes end (defer_records; the same ledger)
    stack = None if gram_structure.kind == "tree" else StackedCounters(trees, defer_records=True)
    step_all = None if stack is None else stack.add
    hist = C.History(env, B)
    if K <= COUNTS_F32_MAX:   # the visit counts (whole numbers <= K) in float32: the same values, half the memory
        hist.N = np.zeros(hist.N.shape, dtype=np.float32)
    eye = np.eye(d)
    shift = 2.0 * lam * eye
    cur = np.broadcast_to(shift, (B, H, d, d)).copy()          # Lam~_h^k (Alg. 1 line 4)
    _, ref_logdet, _ = C.floored_logdet(cur, lam, allow_floor=allow_floor, what=f"{NAME} initial matrix")
    # one seed's data-free policy repeated (every seed's is the same, bit for bit: no data, zero responses; not a
    # (B, H, S, A, S) zero history of 15 MB at 100 seeds, whose release would keep glibc's heap high for the run)
    pol = np.repeat(C.data_free_policy(env, 1, 2.0 * lam, beta), B, axis=0)
    n_upd = np.zeros(B, dtype=np.int64)
    floor_events = np.zeros(B, dtype=np.int64)
    update_eps: list[list[int]] = [[] for _ in range(B)]
    cap_hit = np.full(B, -1, dtype=np.int64)
    # a classic audited run: user 1's trajectory under each canary (the data-free first policy), to report her share
    # of each response release (privacct.tap.user_contribution; it depends on the release's value function). A
    # one-run audit's canaries report their Gram leaves (C.user_episode); the y releases, aggregates of many users
    # noised without a canary's share, stay unobserved (the primitives list them)
    user1 = {w: CAN.rollout(env, w, pol) for w in CAN.CANARIES} if audit is not None and audit.plan is None else None
    # the regret's runs (first, stop, per-seed regret of episodes first+1..stop), written out into the (B, K) array
    # after the run's state is released (issue 23: the two are never resident together)
    regret_runs: list[tuple[int, int, np.ndarray]] = []
    cur_regret = env.regret(pol)
    filled = 0             # regret[:, :filled] recorded; the episodes after it have regret cur_regret (recorded when it changes)
    # the PLANTED mutant switch-on-exact-gram: the switching test reads the exact Gram matrices (never released)
    exact_switch = audit is not None and audit.mutant == "switch-on-exact-gram"
    if exact_switch:
        ref_logdet = np.linalg.slogdet(hist.gram + shift)[1]
    lam_eye = lam * eye    # floored_logdet's floor * eye, made once
    chol_buf = np.empty((2,) + cur.shape)   # the fast path's pair of factorisations, one call (C.released_logdet)
    capped = False         # every seed at its cap with its cap_hit episode set: the switching test can change nothing
    play = _compiled_episode(env, audit, B, K, env_rngs)
    fast_logdet = _compiled_logdet(play, B, H, d, lam_eye)
    logdet_buf = np.empty((B, H))
    for k in range(1, K + 1):
        if fast_logdet is not None and fast_logdet(cur, logdet_buf):   # released_logdet's fast path, compiled
            mats, logdet, low = cur, logdet_buf, None
        else:
            mats, logdet, low = C.released_logdet(cur, lam, lam_eye, allow_floor=allow_floor, buf=chol_buf,
                                                  what=lambda k=k: f"{NAME} episode {k}")
        if low is not None:
            floor_events += low.sum(axis=1)
        if exact_switch:
            logdet = np.linalg.slogdet(hist.gram + shift)[1]
        hit = None if capped else logdet - ref_logdet >= log_C
        idx = ()
        tested = hit is not None and hit.any()
        if tested:
            trig = hit.any(axis=1)
            blocked = trig & (n_upd >= cap)
            cap_hit[(cap_hit < 0) & blocked] = k
            idx = np.flatnonzero(trig & (n_upd < cap))
        if len(idx):
            def y_noise(h, y, V, idx=idx, k=k):
                out = np.empty_like(y)
                own = None if user1 is None else {w: CAN.contribution(env, user1[w][0][idx], user1[w][1][idx], h, V)
                                                  for w in user1}
                if bulk is not None:
                    return bulk.noise(h, y, idx, k, n_upd, own)
                for j, b in enumerate(idx):
                    if own is not None:   # seed b's update n_upd[b] + 1: user 1's share under each canary
                        user_contribution("y", a=own["A"][j:j + 1], b=own["B"][j:j + 1], rows=[b],
                                          name=f"y[h={h + 1}] update {int(n_upd[b]) + 1}")
                    out[j] = y[j] + gaussian([noise_rngs[b]], (d,), sig_y, ledger=y_ledgers[b],
                                             group="y", users=(1, k - 1))[0]
                return out
            Ainv = np.linalg.inv(mats[idx])
            new_pol, ys = C.lsvi(env, Ainv, hist.N[idx], hist.Rphi[idx], beta, y_noise=y_noise)
            pol[idx] = new_pol
            ref_logdet[idx] = logdet[idx]
            n_upd[idx] += 1
            for b in idx:
                update_eps[b].append(k)
            regret_runs.append((filled, k - 1, cur_regret.copy()))
            filled = k - 1
            cur_regret[idx] = env.regret(new_pol)
        if tested and np.all(n_upd >= cap) and np.all(cap_hit >= 0):
            capped = True   # no seed can update again: its test would only re-set what is set
        if play is not None:
            actions = play(k, pol, hist)      # user_episode + hist.add, compiled (the same draws and bytes)
        else:
            states, actions = C.user_episode(k, audit, env, pol, env_rngs)
            hist.add(states, actions)
        prescribed(k, actions)   # the actions sent to user k (an audit's JDP output M_-1; a no-op otherwise)
        if k <= K - 1:                                         # the prefix after episode K is never read
            outer = hist.outer                                      # phi phi^T of this episode (B, H, d, d)
            if step_all is not None:
                step_all(outer, out=cur, plus=shift)                  # Alg. 1 line 22, the H counters stacked
            else:
                for h in range(H):
                    cur[:, h] = trees[h].add(outer[:, h]) + shift       # Alg. 1 line 22
        if progress is not None:
            progress(k)
    regret_runs.append((filled, K, cur_regret))
    if stack is not None:
        stack.flush_records()   # before any ledger is read
    if np.any(n_upd > cap):  # cannot happen: the cap is enforced above; kept as a guard
        raise PrivacctError(f"{NAME}: internal error, {int(n_upd.max())} updates exceed the cap {cap}")
    final_release = np.concatenate([C.upper(np.stack([t.noisy_sum() for t in trees], axis=1)).reshape(B, -1)], axis=1)
    # the counts, the counters' state and the episode's buffers released before the regret is written out (about
    # 8 MB off the peak at 100 seeds x K = 10^4: docs/performance.md#part-4-the-one-seed-step-compiled-and-the-memory-floor)
    hist = trees = stack = step_all = play = fast_logdet = chol_buf = cur = outer = None
    regret = np.zeros((B, K))
    for first, stop, r in regret_runs:      # the same values in the same places as written during the run before
        regret[:, first:stop] = r[:, None]
    # Seed b's ledger = the shared tree draws + its own y draws: a read-only view over the one tree ledger and
    # the seed's y ledger, not a copy (docs/performance.md#design-a-compact-ledger-item-2, item 3). Seeds with
    # the same update episodes have identical y records, so they share one view (cheap for 1000+ seeds).
    merged: dict[tuple[int, ...], Ledger] = {}
    ledgers = []
    for b in range(B):
        key = tuple(update_eps[b])
        if key not in merged:
            merged[key] = Ledger.chain(tree_ledger, y_ledgers[b] if bulk is None else bulk.ledger(key))
        ledgers.append(merged[key])
    worst = int(np.argmax(n_upd))
    info: dict[str, Any] = {
        "n_updates": n_upd, "update_episodes": [np.array(u, dtype=np.int64) for u in update_eps],
        "cap": cap, "switching_bound_thm11": c["N_max_thm11"], "cap_reached_episode": cap_hit,
        "floor_events": floor_events, "lam_tilde": lam, "beta": beta, "sigma_node": sig_node, "sigma_y": sig_y,
        "rho": c["rho"], "env": env.name, "ledgers": ledgers, "ledger_seed": worst,
        "final_release": final_release,
    }
    # no observation code: an audit derives it from what the primitives recorded (privacct.tap)
    return RunResult(config=config, regret=regret, log=log, ledger=ledgers[worst], info=info)
