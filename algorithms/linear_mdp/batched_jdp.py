"""Privacy-preserving LSVI-UCB through batching (seed 003: Luyo, Garcelon, Lazaric, Pirotta 2021,
Alg. 2, App. E), (eps, delta)-JDP with a fixed (data-independent) batch schedule.

Schedule (Alg. 2; docs/seed-003-linear-representation.md#algorithm-2-batched-lsvi-ucb): B batches, batch i starts at k_i = i ceil(K/B) + 1 (i < B).
Batch 0 plays the data-free policy of Lam~_0 = lambda I, w~_0 = 0. At the end of batch b (episode
k_{b+1} - 1) the server releases, for h = H..1,

    Lam~_{b+1,h} = lambda I + (c_K + Upsilon) I + (noisy prefix of tree h after b+1 leaves)
    u~_{b+1,h}   = sum_{i <= k} phi_h^i (r_h^i + V_{h+1}(x_{h+1}^i)) + fresh N(0, sigma_u^2 I_d)

where tree h (B - 1 leaves: one per released batch, leaf = the batch's sum of phi phi^T) is a
:class:`privacct.mechanisms.TreeCounter` with symmetric Gaussian node noise, and then plays
Q = clip(<phi, w~> + beta ||phi||_{Lam~^{-1}}, 0, H) until the next release. Releases that no user
would see (after the last episode) are skipped (docs/seed-003-linear-representation.md#per-user-release-count), so there are B - 1 releases.
Ledger: the tree's leaf t holds the users of batch t - 1, so each node's draw is recorded over
that batch range of users (:class:`privacct.mechanisms.TreeCounter` with ``leaf_users``).

Log: ``gram_h{h}`` (h = 1..H) symmetric-gaussian-matrix, sensitivity sqrt(2) (upper-triangle l2,
replace-one), tree(leaves = B - 1); ``u`` Gaussian, sensitivity 2(H+1) (Lemma in App. E.2.1,
needs V in [0, H], which Alg. 2 enforces with Pi_[0,H]), repeated(H (B - 1)) -- the schedule is
fixed, so the first batch's users are in every release of every step.

``paper`` mode (App. E.1): lambda = d, B = ceil((K eps)^{2/5} / (d^{3/5} H^{1/5})),
B0 = ceil(log2 B + 1), sigma_Lam = (128/eps) sqrt(B H B0) log^2(32 H B0 B / delta),
sigma_u = (128/eps) H sqrt(H B) log^2(32 H B0 B / delta), Upsilon = sigma_Lam B0 (4 sqrt(d) +
2 log(6KH/p)), c_K = d Upsilon, C^J = sigma_u (sqrt(d) + 2 sqrt(log(6KHd/p))), U_K = max{1, 2H
sqrt(dK/(lambda + c_K)) + C^J/(lambda + c_K)}, chi = 24^2 18 K^2 d U_K H / p, beta = 24 H sqrt(d
(lambda + c_K)) log chi. The paper's node noise is (Z' + Z'^T)/2 with Z'_ij ~ N(0, sigma_Lam^2)
(off-diagonal std sigma/sqrt(2)); the toolkit's primitive gives every upper entry std sigma_Lam,
i.e. at least the paper's noise on every coordinate (departure: privacy is not weakened). The
paper's sigmas deliver far less than its claimed eps (docs/seed-003-linear-representation.md#readings-and-accounted-epsilon): ``verify`` reports the claim
holding with a large over-noising factor.

``tight`` mode: the same log with corrected sensitivities, scales rescaled by
:func:`privacct.calibrate.calibrate_log` for the claimed (eps, delta); Upsilon is recomputed from
the calibrated node std as sigma sqrt(B0) (4 sqrt(d) + 2 log(6KH/p)) (the prefix sums B0 nodes at
most; the paper's B0 instead of sqrt(B0) is conservative, docs/seed-003-linear-representation.md#tight-calibration) and c_K = d Upsilon.

Options: ``p`` (default 0.05), ``batches`` (B >= 2, overrides the formula), ``beta``, ``eig_floor``, ``counter``.

Counter (option ``counter`` / ``privacct run --counter STRATEGY``, any registered strategy; docs/counters.md#learners):
the H Gram counters run that factorized strategy over the B - 1 batch leaves
(:class:`privacct.counters.counter.FactorizedCounter` with ``leaf_users``: the users of a batch share its leaf's
weight, docs/counters.md#batched-leaves), and the log's Gram groups declare its ``factorized`` structure (blt buffers
optimised for the noise's norm), calibrated as the tree (``tight``: one common factor; ``paper``: the printed
scales). The shift comes from that counter's error bound in place of the tree's depth
(docs/seed-003-linear-representation.md#tight-calibration): Gaussian, Upsilon = sigma_Lam sqrt(V) (4 sqrt(d) +
2 log(6KH/p)), V the worst prefix variance in node variances (a release's noise sum_i w_i Z_i is a symmetric
Gaussian matrix of entry variance sigma^2 sum_i w_i^2 <= V sigma^2, so Claim 26 applies with that std); Laplace,
Upsilon = b_Lam l1 (2d + 2 sqrt(d L) + L), l1 the worst row l1 norm of the release-noise matrix
(:func:`privacct.counters.strategies.worst_prefix_l1`; Claim 29 per draw and the triangle inequality, as App. E.3
argues for the tree's B0 nodes) and L = log(6KHd draws/p), Claim 29's union bound widened to the counter's draws
per step (as the linear-mixture learners, :class:`algorithms.linear_mixture.design.CounterChoice`). Without the option
(or with ``tree``) the printed tree runs, byte for byte as before; ``tight`` does not choose a counter here. Audited
runs observe any counter (docs/auditing.md#factorized-counters); a one-run audit of a Toeplitz counter with Laplace
noise is scored output-only (docs/auditing.md#one-run-scores; :func:`refuse_audited_counter` no longer refuses).

PURE-DP VARIANT ``batched-jdp-lsvi-ucb-laplace`` (App. E.3; docs/seed-003-linear-representation.md#pure-dp-variants):
Laplace noise, every advanced composition replaced by simple composition. App. E.3 prints only the orders
sigma_Lam = O~(B H / eps), sigma_u = O~(H^2 B / eps) and the batch count B = ceil((K eps)^{1/3} / (d^{2/3}
H^{1/3})); privacct's reading follows Thm 8's chain (App. E.2.1) with simple composition (F.5) and the
Laplace mechanism (F.2): Lam and u eps/2 each, H stages eps/(2H) each, the Lam tree composed over the B
prefixes x B0 nodes the paper counts (eps/(2 H B B0) per node) with the printed l1 sensitivity 2 ("the
L1-sensitivity of phi phi^T w.r.t. the user is bounded by 2", App. E.2.1): b_Lam = 4 H B B0 / eps; each of
the <= B releases of u per stage eps/(2 H B) with the printed Delta_u = 4H (App. E.2.1): b_u = 8 H^2 B / eps
-- both match E.3's orders. Upsilon^J = b_Lam B0 (2d + 2 sqrt(d log(6KHd/p)) + log(6KHd/p)) and
C^J = b_u sqrt(d) log(6KHd/p) as E.3 prints them (Claims 29 and 28), c_K = d Upsilon^J, beta as App. E.1
with that C^J. The Gram is released as its upper triangle with i.i.d. Laplace noise, mirrored (the
paper's Claim 29 matrix M = Z' with Z'_ij = Z'_ji ~ Lap); the log declares l1 sensitivities derived
from the features: ||upper(phi phi^T)||_1 = (||phi||_1^2 + ||phi||_2^2)/2, so 2 max of that (= 2 for the
simplex features, attained by e_0, e_1), and 2 max ||phi||_1 (H + 1) for u.

Audit hook (the contract's AuditHook; canaries: :mod:`.canary`): the observation holds the Gram
nodes [1, 2^j] of every tree (leaf 1 is the first batch, which holds user 1) and every u release
(all H (B - 1) of them contain user 1), each minus the exact contribution of the other users, with
both canaries' contributions as means (u: under the release's V, per trial).

One-run audits (``audit.plan``; docs/auditing.md#one-run-audits-of-learners): each canary answers by her bit
under the current policy and reports her Gram terms under both bits (:func:`.canary.report_gram`); the tree
records a node only when its leaves are one-user batches and it holds exactly one canary (a leaf of several
users holds a canary's share the primitive cannot split off; every u release sums all users and is noised
without a canary's share). With batches of many users (B - 1 leaves for K users, the paper setting's 1667
users per batch) no release is a single canary's, and a one-run RELEASED audit is refused up front saying so
(:func:`_check_one_run`; the one-run ACTION audit pins the batch releases instead,
docs/auditing.md#batched-learners-in-the-action-audit); ``options batches = K`` gives one user per batch, and then the tree is the one
Private LSVI-UCB's one-run audit observes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privacct.counters.choice import tree_kept
from privacct.counters.stacked_tree import StackedTreeCounters
from privacct.errors import PrivacctError, check_count
from privacct.ledger import Ledger
from privacct.log import (
    FACTORIZED_STRATEGIES,
    Claim,
    MechanismLog,
    PaperStatement,
    ReleaseGroup,
    Sensitivity,
    Structure,
    tree_depth,
)
from privacct.mechanisms import TreeCounter, gaussian, laplace
from privacct.tap import current as current_tap
from privacct.tap import canary_contribution, current_pin, prescribed, user_contribution

from ..contract import AuditHook, RunConfig, RunResult, noise_generators, stream_generators
from . import canary as CAN
from . import common as C
from .chunks import chunk as C_chunk

NAME = "batched-jdp-lsvi-ucb"
NAME_LAPLACE = "batched-jdp-lsvi-ucb-laplace"
OPTIONS = C.COMMON_OPTIONS + ("batches", "counter")
COUNTERS = FACTORIZED_STRATEGIES  # the counting strategies, named once (privacct.log)
#: Outside audits the episodes between two releases run compiled (:mod:`.batched_jit`, same bytes); False: the numpy
#: loop, the reference (its tests compare both)
COMPILED = True
#: the H Gram trees step as one (:class:`privacct.counters.stacked_tree.StackedTreeCounters`, same bytes) outside audits;
#: False: one by one (the reference, its tests compare both)
STACKED = True
#: episodes per compiled call (and per seed's ``Generator.random`` call), at most: never across a release, and fewer
#: when the seeds' uniforms would pass 8 MB (:func:`.chunks.chunk`)
_CHUNK = 1024
SOURCE = ("Luyo, Garcelon, Lazaric, Pirotta (2021), Differentially Private Exploration in RL with Linear "
          "Representation, Alg. 2 / App. E [seed 003]")


def printed_constants(K: int, H: int, d: int, eps: float, delta: float, p: float, batches: int | None = None) -> dict[str, float]:
    """App. E.1 of seed 003 (docs/seed-003-linear-representation.md#constants-as-printed)."""
    B = batches if batches is not None else math.ceil((K * eps) ** 0.4 / (d ** 0.6 * H ** 0.2))
    B = max(2, min(B, K))
    B0 = math.ceil(math.log2(B) + 1)
    lg = math.log(32 * H * B0 * B / delta) ** 2
    sigma_lam = 128 / eps * math.sqrt(B * H * B0) * lg
    sigma_u = 128 / eps * H * math.sqrt(H * B) * lg
    ups = sigma_lam * B0 * (4 * math.sqrt(d) + 2 * math.log(6 * K * H / p))
    return {"B": B, "B0": B0, "lambda": float(d), "sigma_lam": sigma_lam, "sigma_u": sigma_u, "upsilon": ups}


def printed_constants_laplace(K: int, H: int, d: int, eps: float, p: float, batches: int | None = None) -> dict[str, float]:
    """App. E.3 of seed 003 read with Thm 8's chain (module docstring): B = ceil((K eps)^{1/3} / (d^{2/3} H^{1/3})),
    B0 = ceil(log2 B + 1), lambda = d, b_Lam = 4 H B B0 / eps, b_u = 8 H^2 B / eps,
    Upsilon = b_Lam B0 (2d + 2 sqrt(d L) + L), C^J = b_u sqrt(d) L, L = log(6KHd/p)."""
    B = batches if batches is not None else math.ceil((K * eps) ** (1 / 3) / (d ** (2 / 3) * H ** (1 / 3)))
    B = max(2, min(B, K))
    B0 = math.ceil(math.log2(B) + 1)
    b_lam = 2.0 * 2 * H * B * B0 / eps
    b_u = 4.0 * H * 2 * H * B / eps
    L = math.log(6 * K * H * d / p)
    ups = b_lam * B0 * (2 * d + 2 * math.sqrt(d * L) + L)
    return {"B": B, "B0": B0, "lambda": float(d), "sigma_lam": b_lam, "sigma_u": b_u, "upsilon": ups,
            "CJ": b_u * math.sqrt(d) * L}


def gaussian_CJ(sigma_u: float, K: int, H: int, d: int, p: float) -> float:
    """App. E.1 (Claim 27): C^J = sigma_u (sqrt(d) + 2 sqrt(log(6KHd/p)))."""
    return sigma_u * (math.sqrt(d) + 2 * math.sqrt(math.log(6 * K * H * d / p)))


def laplace_CJ(b_u: float, K: int, H: int, d: int, p: float) -> float:
    """App. E.3 (Claim 28): C^J = b_u sqrt(d) log(6KHd/p)."""
    return b_u * math.sqrt(d) * math.log(6 * K * H * d / p)


def theory_beta(K: int, H: int, d: int, lam: float, c_K: float, sigma_u: float, p: float,
                CJ: float | None = None) -> float:
    """App. E.1: beta = 24 H sqrt(d (lambda + c_K)) log chi (``CJ``: App. E.3's Laplace value; default
    the Gaussian one of ``sigma_u``)."""
    CJ = gaussian_CJ(sigma_u, K, H, d, p) if CJ is None else CJ
    U = max(1.0, 2 * H * math.sqrt(d * K / (lam + c_K)) + CJ / (lam + c_K))
    log_chi = math.log(24 ** 2 * 18.0 * K * K * d * U * H / p)
    return 24 * H * math.sqrt(d * (lam + c_K)) * log_chi


def schedule(K: int, B: int) -> np.ndarray:
    """Episodes (1-based) after which a release happens: k_{b+1} - 1 for b + 1 = 1..B-1, if < K."""
    step = math.ceil(K / B)
    ends = np.array([i * step for i in range(1, B)], dtype=np.int64)
    return ends[ends < K]


def _check(config: RunConfig):
    env, K = C.check_config(config, privacy_models=("jdp",), default_env="linear-two-state",
                            allow_zero_delta=config.algorithm == NAME_LAPLACE)
    opts = C.check_options(config, OPTIONS)
    if K < 2:
        raise PrivacctError(f"episodes must be an integer >= 2 for {config.algorithm}, got {K}")
    if opts.get("batches") is not None:
        check_count("options.batches", opts["batches"], minimum=2)
    if opts.get("counter") is not None and opts["counter"] not in COUNTERS:
        raise PrivacctError(f"options.counter must be one of {', '.join(COUNTERS)}, got {opts['counter']!r}")
    return env, K, opts


def counter_structure(counter: str | None, leaves: int, laplace: bool) -> Structure | None:
    """The Gram counters' factorized structure for option ``counter`` over ``leaves`` batch leaves; None for the
    printed tree (option absent or ``tree``). blt buffers are optimised for the noise's norm (l1 for Laplace)."""
    from privacct.counters.strategies import Strategy

    if counter is None or Strategy(counter).is_binary_tree:
        return None
    return Strategy(counter).structure(leaves, norm="l1" if laplace else "l2")


def counter_shift_factor(structure: Structure, laplace: bool) -> tuple[float, float]:
    """(prefix factor, draws per step) of a factorized Gram counter (module docstring): sqrt(V), V its worst prefix
    variance in node variances (Gaussian, Claim 26 with the prefix std), or its worst row l1 norm of L (Laplace,
    Claim 29 per draw and the triangle inequality); the draws per step widen Claim 29's union bound (Laplace)."""
    from privacct.counters.strategies import Strategy, worst_prefix_l1, worst_prefix_variance

    if laplace:
        return worst_prefix_l1(structure), float(Strategy.of(structure).implementation.draws_per_step)
    return math.sqrt(worst_prefix_variance(structure)), 1.0


#: What ``tight`` records without option ``counter`` (docs/counters.md#choosing-for-regret).
TREE_KEPT = tree_kept("no regret proxy ranks the Gram counters of the batched learner; option counter=NAME runs another")


def refuse_audited_counter(name: str, counter: str | None, *, one_run: bool = False, laplace: bool = False) -> None:
    """An audited run observes any Gram counter (privacct.counters.observed, docs/auditing.md#factorized-counters;
    user 1's share of batch leaf 1 reported by the learner): a ONE-RUN audit observes a Toeplitz counter through the
    difference of two releases at a canary's leaf; with Laplace noise (``laplace``: the -laplace variant) that is not
    Laplace noise, so the audit scores it output-only (verdict fails or inconclusive, docs/auditing.md#one-run-scores):
    nothing is refused here any more (the signature is kept for callers)."""
    del name, counter, one_run, laplace


def feature_l1_bounds(env) -> tuple[float, float]:
    """(max_{s,a} (||phi||_1^2 + ||phi||_2^2) / 2, max_{s,a} ||phi||_1): ||upper(phi phi^T)||_1 and ||phi||_1
    bounds of the environment's real features (the l1 sensitivities of the Laplace variant)."""
    phi = env.phi.reshape(-1, env.dim)
    l1 = np.abs(phi).sum(-1)
    l2sq = (phi * phi).sum(-1)
    return float(((l1 * l1 + l2sq) / 2).max()), float(l1.max())


def _plan(config: RunConfig) -> tuple[MechanismLog, dict[str, Any]]:
    """The declared log and the constants the run uses. Cached per config; do not mutate the dict."""
    env, K, opts = _check(config)
    laplace = config.algorithm == NAME_LAPLACE
    H, d = env.horizon, env.dim
    eps, delta = float(config.epsilon), float(config.delta)
    p = float(opts.get("p", 0.05))
    if laplace:
        pc = printed_constants_laplace(K, H, d, eps, p, opts.get("batches"))
    else:
        pc = printed_constants(K, H, d, eps, delta, p, opts.get("batches"))
    ends = schedule(K, pc["B"])
    n_rel = int(ends.size)
    if n_rel < 1:
        raise PrivacctError(f"episodes={K} with {pc['B']} batches leaves no release; use more episodes or options.batches")
    if laplace:
        gram_l1, phi_l1 = feature_l1_bounds(env)
        gram_mech, gram_sens = "laplace", Sensitivity(
            "l1", 2 * gram_l1, f"replace-one: ||upper(phi phi^T - psi psi^T)||_1 <= 2 max (||phi||_1^2 + ||phi||_2^2)/2 "
                               f"= {2 * gram_l1:.4g} over the environment's features")
        u_mech, u_sens = "laplace", Sensitivity(
            "l1", 2.0 * phi_l1 * (H + 1), f"replace-one: ||phi t - phi' t'||_1 <= 2 max||phi||_1 (H+1) = "
                                          f"2 x {phi_l1:.4g} x {H + 1}, t = r + V in [0, H+1] (Pi_[0,H])")
        paper_gram = PaperStatement(sensitivity=2.0, per_user_count=float(pc["B"] * pc["B0"]),
                                    equation="App. E.3 with App. E.2.1's l1 sensitivity 2; simple composition over B "
                                             "prefixes x B0 nodes")
        paper_u = PaperStatement(sensitivity=4.0 * H, per_user_count=float(H * pc["B"]),
                                 equation="App. E.3 with App. E.2.1's Delta_u = 4H; simple composition over B releases")
    else:
        gram_mech, gram_sens = "symmetric-gaussian-matrix", Sensitivity(
            "frobenius-upper", math.sqrt(2.0),
            "replace-one: ||vec_ut(phi phi^T - psi psi^T)||_2 <= sqrt(2) for ||phi||, ||psi|| <= 1 (docs/seed-003-linear-representation.md#sensitivity)")
        u_mech, u_sens = "gaussian", Sensitivity(
            "l2", 2.0 * (H + 1), "replace-one: ||phi t - phi' t'|| <= 2(H+1), t = r + V in [0, H+1] (Pi_[0,H]; App. E.2.1)")
        paper_gram = PaperStatement(sensitivity=2.0, per_user_count=float(pc["B"] * pc["B0"]),
                                    equation="App. E.2.1: sensitivity 2; advanced composition over B prefixes x B0 nodes")
        paper_u = PaperStatement(sensitivity=4.0 * H, per_user_count=float(H * pc["B"]),
                                 equation="App. E.2.1: Delta_u = 2(H+1) <= 4H; B releases per step")
    counter = counter_structure(opts.get("counter"), n_rel, laplace)
    groups = [ReleaseGroup(
        name=f"gram_h{h}", mechanism=gram_mech, noise_scale=pc["sigma_lam"], sensitivity=gram_sens,
        structure=Structure.tree(leaves=n_rel) if counter is None else counter, dimension=d * (d + 1) // 2,
        description=f"{'tree' if counter is None else counter.strategy + ' counter'} over the {n_rel} released "
                    f"batches of sum phi_h phi_h^T at step h={h}" + (" (upper triangle, Laplace)" if laplace else ""),
        paper=None if config.calibration != "paper" else paper_gram,
    ) for h in range(1, H + 1)]
    groups.append(ReleaseGroup(
        name="u", mechanism=u_mech, noise_scale=pc["sigma_u"], sensitivity=u_sens,
        structure=Structure.repeated(H * n_rel), dimension=d,
        description=f"response u_h, fresh {'Laplace' if laplace else 'Gaussian'} noise at each of the {n_rel} fixed "
                    "batch ends, for each of H steps",
        paper=None if config.calibration != "paper" else paper_u,
    ))
    params: dict[str, Any] = {"K": K, "H": H, "d": d, "S": env.n_states, "A": env.n_actions, "env": env.name,
                              "calibration": config.calibration, "p": p, "B": pc["B"], "B0": pc["B0"],
                              "lambda": pc["lambda"], "release_episodes": [int(e) for e in ends], "n_releases": n_rel,
                              "noise": "laplace" if laplace else "gaussian"}
    if opts.get("counter") is not None:
        params["counter"] = opts["counter"]
    name = NAME_LAPLACE if laplace else NAME
    log = MechanismLog(f"{name}/{config.calibration}", "joint", tuple(groups), claim=Claim(eps, delta),
                       source=SOURCE + (" (pure DP: App. E.3)" if laplace else ""))
    width = (2 * d + 2 * math.sqrt(d * math.log(6 * K * H * d / p)) + math.log(6 * K * H * d / p) if laplace
             else 4 * math.sqrt(d) + 2 * math.log(6 * K * H / p))
    if counter is not None:
        factor, draws = counter_shift_factor(counter, laplace)
        if laplace:   # Claim 29's union bound over the counter's draws: L = log(6KHd draws / p)
            Lc = math.log(6 * K * H * d * draws / p)
            width = 2 * d + 2 * math.sqrt(d * Lc) + Lc
        params["counter_prefix_factor"] = factor
    if counter is not None and config.calibration == "paper":
        # the printed sigma_Lam with the counter's prefix factor for the tree's B0 (module docstring)
        ups = pc["sigma_lam"] * factor * width
    elif config.calibration == "paper":
        ups = pc["upsilon"]
    else:
        from privacct.calibrate import calibrate_log

        base = log
        log, acc = calibrate_log(base, epsilon=eps, delta=delta, return_accountant=True)
        params["calibration_accountant"] = acc
        params["calibration_factor"] = log.release_groups[0].noise_scale / base.release_groups[0].noise_scale
        if counter is not None:
            # the counter's prefix factor in place of the tree's depth (docs/seed-003-linear-representation.md#tight-calibration)
            ups = log.release_groups[0].noise_scale * factor * width
        else:
            depth = tree_depth(n_rel)
            # a prefix sums at most depth nodes: sqrt(depth) for Gaussian nodes (Claim 26), depth for Laplace
            # nodes (Claim 29 per node and the triangle inequality, as App. E.3)
            ups = log.release_groups[0].noise_scale * (depth if laplace else math.sqrt(depth)) * width
    sig_lam = log.release_groups[0].noise_scale
    sig_u = log.group("u").noise_scale
    c_K = d * ups
    CJ = laplace_CJ(sig_u, K, H, d, p) if laplace else gaussian_CJ(sig_u, K, H, d, p)
    beta = float(opts["beta"]) if opts.get("beta") is not None else config.bonus_scale * theory_beta(
        K, H, d, pc["lambda"], c_K, sig_u, p, CJ)
    params.update({"sigma_lam": sig_lam, "sigma_u": sig_u, "upsilon": ups, "c_K": c_K, "beta": beta,
                   "bonus_scale": config.bonus_scale})
    if config.calibration == "tight" and opts.get("counter") is None:   # tight keeps the tree: say why
        params["tight_choice"] = TREE_KEPT.to_params()
    log = MechanismLog(log.name, log.privacy_model, log.release_groups, log.neighbouring, params, log.claim, log.source)
    return log, {**params, "env": env, "K": K, "opts": opts, "ends": ends, "laplace": laplace}


plan = C.cached_plan(_plan)


def build_log(config: RunConfig) -> MechanismLog:
    return plan(config)[0]


def run(config: RunConfig, seeds, *, audit: AuditHook | None = None, progress=None) -> RunResult:
    log, c = plan(config)
    if audit is not None:
        refuse_audited_counter(config.algorithm, dict(config.options).get("counter"), one_run=audit.plan is not None,
                               laplace=bool(c["laplace"]))
    env, K, opts, ends = c["env"], c["K"], c["opts"], c["ends"]
    seeds = C.check_seeds(seeds)
    Bs, H, d = len(seeds), env.horizon, env.dim
    lam, c_K, ups, beta = c["lambda"], c["c_K"], c["upsilon"], c["beta"]
    sig_lam, sig_u = c["sigma_lam"], c["sigma_u"]
    lap = c["laplace"]
    n_rel = int(ends.size)
    allow_floor = bool(opts.get("eig_floor", True))
    env_rngs = stream_generators(seeds, 0, audit, fixed=audit is not None and audit.fixed_users)
    noise_rngs = noise_generators(seeds, 1, audit)
    ledger = Ledger()
    starts = np.concatenate([[1], ends + 1])
    leaf_users = [(int(starts[t]), int(ends[t])) for t in range(n_rel)]   # leaf t -> the users of batch t
    # Laplace: each tree holds the upper triangle of the batch Grams (d(d+1)/2 values), mirrored on release
    gram_shape, gram_mech = (d * (d + 1) // 2,) if lap else (d, d), "laplace" if lap else "symmetric-gaussian-matrix"
    gram_structure = log.release_groups[0].structure
    if gram_structure.kind == "tree":
        trees = [TreeCounter(gram_shape, leaves=n_rel, mechanism=gram_mech, scale=sig_lam, rngs=noise_rngs,
                             ledger=ledger, group=f"gram_h{h + 1}", leaf_users=leaf_users) for h in range(H)]
        # the H trees stepped as one (privacct.counters.stacked_tree: one generator call per seed per node for the H
        # steps, the same bytes and ledger; one by one in an audited run)
        stacked = StackedTreeCounters(trees) if audit is None and STACKED else None
    else:   # option counter: the strategy over the same batch leaves (module docstring)
        from privacct.counters.counter import FactorizedCounter

        stacked = None
        trees = [FactorizedCounter(gram_shape, strategy=gram_structure, leaves=n_rel, mechanism=gram_mech, scale=sig_lam,
                                   rngs=noise_rngs, ledger=ledger, group=f"gram_h{h + 1}", leaf_users=leaf_users)
                 for h in range(H)]
    if audit is not None and audit.plan is not None:
        if current_pin() is None:   # a one-run RELEASE audit; an action audit pins batched releases by each canary's share
            _check_one_run(config.algorithm, audit.plan, leaf_users, K, c["B"])
    hist = C.History(env, Bs)
    pol = _data_free_policy(env, Bs, lam, beta, audit)
    # a classic audited run: user 1's trajectory under each canary (the data-free first policy), to report her
    # contributions to the releases that hold her with other users (privacct.tap.user_contribution). A one-run
    # audit's canaries report their Gram terms under both bits (C.user_episode); module docstring
    user1 = {w: CAN.rollout(env, w, pol) for w in CAN.CANARIES} if audit is not None and audit.plan is None else None
    # a one-run ACTION audit (an action pin active): each canary's trajectories under both bits, to report her share of
    # every later u release given its V (privacct.tap.canary_contribution), so that the pin holds u too
    paths = {} if audit is not None and audit.plan is not None and current_pin() is not None else None
    cur_regret = env.regret(pol)
    regret = np.zeros((Bs, K))
    batch_gram = np.zeros((Bs, H, d, d))
    floor_events = np.zeros(Bs, dtype=np.int64)
    last_u = np.zeros((Bs, H, d))
    last_lam = np.zeros((Bs, H, d, d))
    eye = np.eye(d)
    rel = 0
    fast = _compiles(audit, env)   # outside audits the episodes between releases run compiled (.batched_jit)
    u_buf = np.empty((Bs, C_chunk(_CHUNK, Bs, H, K), H)) if fast else None
    passes = _passes_compiled(audit, env)   # the releases' passes compiled (.lsvi_jit), same bytes; many-trial audits too
    lsvi = _lsvi(env, Bs) if passes else C.lsvi
    regret_of = _regret_of(env) if passes else env.regret
    release_inverse = _release_inverse(env, Bs) if passes else _release_inverse_numpy
    k = 0
    while k < K:
        k0 = k + 1
        if fast:   # episodes k0..k in one compiled call: a chunk never crosses a release
            k = min(k + u_buf.shape[1], K, int(ends[rel]) if rel < n_rel else K)
            _play_compiled(env, pol, env_rngs, u_buf, k - k0 + 1, hist, batch_gram)
            regret[:, k0 - 1:k] = cur_regret[:, None]
        else:
            k += 1
            regret[:, k - 1] = cur_regret
            states, actions = C.user_episode(k, audit, env, pol, env_rngs, gram_upper=lap)
            if paths is not None and audit.plan.bit(k) is not None:
                paths[k] = {w: CAN.rollout(env, w, pol) for w in CAN.CANARIES}
            phi = hist.add(states, actions)
            prescribed(k, actions)   # the actions sent to user k (an audit's JDP output M_-1; a no-op otherwise)
            batch_gram += phi[..., :, None] * phi[..., None, :]
        if rel < n_rel and k == ends[rel]:
            if stacked is not None:   # the H trees as one: trees[h].add(batch_gram[:, h]) for every h
                noisy = C.sym(stacked.add(C.upper(batch_gram)), d) if lap else stacked.add(batch_gram)
            else:
                noisy = np.empty((Bs, H, d, d))
                for h in range(H):
                    if user1 is not None and rel == 0:   # leaf 1 holds users 1..B0: user 1's share under each canary
                        own = {w: _gram_value(env.phi[user1[w][0][:, h], user1[w][1][:, h]], lap) for w in user1}
                        user_contribution(f"gram_h{h + 1}", a=own["A"], b=own["B"])
                    noisy[:, h] = (C.sym(trees[h].add(C.upper(batch_gram[:, h])), d) if lap
                                   else trees[h].add(batch_gram[:, h]))
            batch_gram[:] = 0.0
            lam_t = noisy + (lam + c_K + ups) * eye
            mats, Ainv, low = release_inverse(lam_t, lam + c_K, allow_floor=allow_floor,
                                              what=f"{NAME} release after episode {k}")
            floor_events += low.sum(axis=1)

            def u_noise(h, y, V, k=k):
                if user1 is not None:   # user 1's share of this release under each canary, given its V
                    own = {w: CAN.contribution(env, *user1[w], h, V) for w in user1}
                    user_contribution("u", a=own["A"], b=own["B"])
                for c, both in (paths or {}).items():   # an action audit: each canary's share under both bits
                    canary_contribution(c, "u", a=CAN.contribution(env, *both["A"], h, V),
                                        b=CAN.contribution(env, *both["B"], h, V))
                out = y + (laplace if lap else gaussian)(noise_rngs, (d,), sig_u, ledger=ledger, group="u", users=(1, k))
                if paths is not None:   # the audit compares the replay's u releases with the run's
                    current_pin().note_release(out)
                return out
            pol, ys = lsvi(env, Ainv, hist.N, hist.Rphi, beta, y_noise=u_noise)
            last_u, last_lam = ys, noisy
            cur_regret = regret_of(pol)
            rel += 1
        if progress is not None:
            for i in range(k0, k + 1):
                progress(i)
    info: dict[str, Any] = {"n_updates": np.full(Bs, rel), "release_episodes": ends, "B": c["B"], "B0": c["B0"],
                            "beta": beta, "upsilon": ups, "c_K": c_K, "sigma_lam": sig_lam, "sigma_u": sig_u,
                            "floor_events": floor_events, "env": env.name,
                            "final_release": np.concatenate([C.upper(last_lam).reshape(Bs, -1), last_u.reshape(Bs, -1)], axis=1)}
    # no observation code: an audit derives it from what the primitives recorded (privacct.tap)
    return RunResult(config=config, regret=regret, log=log, ledger=ledger, info=info)


def _check_one_run(name: str, plan, leaf_users: list[tuple[int, int]], K: int, batches: int) -> None:
    """Refuse a one-run audit that would observe no canary (module docstring): a release is a canary's only when it
    holds no other canary and the primitive can split her share off, i.e. a tree node built from one-user leaves;
    at least one canary must sit alone in a one-user leaf (a batch of one user)."""
    if any(a == b and plan.bit(a) is not None for a, b in leaf_users):
        return
    sizes = sorted({b - a + 1 for a, b in leaf_users})
    raise PrivacctError(
        f"{name}: a one-run audit would observe no canary at K = {K} with {batches} batches: every Gram tree leaf "
        f"holds a whole batch ({sizes[0]}{'' if len(sizes) == 1 else f' to {sizes[-1]}'} users) noised together, and "
        "every u release noises the sum over all users, so no release holds one canary whose share the primitives can "
        "split off; only a canary alone in a one-user batch is observed (options batches = K: one user per batch)")


def _gram_value(phi: np.ndarray, lap: bool) -> np.ndarray:
    """One user's Gram term phi phi^T (B, d) -> as the tree counter takes it: its upper triangle (Laplace) or the
    matrix (symmetric Gaussian)."""
    m = phi[:, :, None] * phi[:, None, :]
    return C.upper(m) if lap else m


def _compiles(audit, env) -> bool:
    """Whether :func:`run` plays its episodes compiled: ``COMPILED``, no audit hook, no tap and no action pin active
    (they see every user's episode, :func:`privacct.tap.prescribed`), and the environment's own ``sample_next``."""
    from ..envs.tabular import TabularMDP

    return (COMPILED and audit is None and current_tap() is None and current_pin() is None
            and type(env.tabular).sample_next is TabularMDP.sample_next)


#: Many-trial audited runs take the releases' compiled passes (:func:`_passes_compiled`); False: numpy's in every
#: audited run (the reference; tests/algorithms/linear_mdp/test_audited_compiled.py compares both)
AUDITS_COMPILED = True


def _passes_compiled(audit, env) -> bool:
    """Whether the data-free policy, the releases' LSVI passes, their inverses and the regret run compiled
    (:mod:`.lsvi_jit`, :func:`.batched_jit.regrets`: the same bytes; each still subject to its own self-check): THE
    predicate of the audited runs that do. Every run whose episodes run compiled (:func:`_compiles`), and a
    many-trial audit of user 1 (canary A or B, fixed or environment users, faithful or the planted noise multiplier)
    with its tap open: these passes read and write arrays only, and the tap sees them only through ``u_noise``, which
    the compiled pass calls as :func:`.common.lsvi` does (h = H..1, the same y and V). Its episodes stay numpy (user
    by user: the canaries' responses and :func:`privacct.tap.prescribed`; at the audit configuration K = 2 they are
    about 3% of a run, docs/performance.md#many-trial-audits-of-the-linear-mdp-learners). The numpy passes stay for:

    * a one-run audit (``audit.plan``, a tap with a plan) or an action pin (:func:`privacct.tap.current_pin`): their
      canaries' reports and the pin's replay are checked against the numpy path only
      (tests/audits/test_one_run_actions.py);
    * the billboard check (``audit.coupling``, a tap with a coupling): the same;
    * an audit hook without its tap (nothing records), a tap without a hook, or a tap of the other canary;
    * an environment whose ``sample_next`` is not :class:`TabularMDP`'s (the compiled regret reads its kernel);
    * :data:`AUDITS_COMPILED` False (audited runs) or :data:`COMPILED` False (all runs)."""
    from ..envs.tabular import TabularMDP

    if _compiles(audit, env):
        return True
    if not (COMPILED and AUDITS_COMPILED) or audit is None or type(env.tabular).sample_next is not TabularMDP.sample_next:
        return False
    tap = current_tap()
    return (tap is not None and audit.plan is None and audit.coupling is None and tap.plan is None
            and tap.coupling is None and current_pin() is None and tap.canary == audit.canary)


def _release_inverse_numpy(M: np.ndarray, floor: float, *, allow_floor: bool, what: str):
    """(matrices, inverses, floored) of a release: :func:`.common.floored_logdet` then ``np.linalg.inv``."""
    mats, _, low = C.floored_logdet(M, floor, allow_floor=allow_floor, what=what)
    return mats, np.linalg.inv(mats), low


def _release_inverse(env, n: int):
    """:func:`.lsvi_jit.release_inverse_numpy_or_compiled` when lsvi_jit's self-check holds here, else the numpy one."""
    from . import lsvi_jit

    return lsvi_jit.release_inverse_numpy_or_compiled if lsvi_jit.compiles(env, n) else _release_inverse_numpy


def _data_free_policy(env, B: int, lam: float, beta: float, audit) -> np.ndarray:
    """:func:`.common.data_free_policy` (LSVI with no data and design matrix lam I), its pass compiled
    (:func:`.lsvi_jit.lsvi_compiled`, the same bytes) when the releases' passes run compiled (:func:`_passes_compiled`)."""
    from . import lsvi_jit

    if not (_passes_compiled(audit, env) and lsvi_jit.compiles(env, B)):
        return C.data_free_policy(env, B, lam, beta)
    H, S, A, d = env.horizon, env.n_states, env.n_actions, env.dim
    Ainv = np.broadcast_to(np.eye(d) / lam, (B, H, d, d))
    return lsvi_jit.lsvi_compiled(env, Ainv, np.zeros((B, H, S, A, S)), np.zeros((B, H, d)), beta)[0]


def _regret_of(env):
    """``env.regret`` compiled (:func:`.batched_jit.regrets`, the same bytes), V*_1(s_1) computed once."""
    from .batched_jit import regrets

    tab = env.tabular
    H, S, A = tab.R.shape
    Rsa, v_star, s0 = np.ascontiguousarray(tab.R.reshape(H, S * A)), float(tab.optimal_value()), int(tab.initial_state)

    def regret_of(pol: np.ndarray) -> np.ndarray:
        out = np.empty(pol.shape[0])
        regrets(np.ascontiguousarray(pol, dtype=np.int64), Rsa, tab.P, s0, v_star, out)
        return out
    return regret_of


def _lsvi(env, n: int):
    """:func:`.lsvi_jit.lsvi_compiled` when its self-check holds for this environment at n seeds, else
    :func:`.common.lsvi`."""
    from . import lsvi_jit

    return lsvi_jit.lsvi_compiled if lsvi_jit.compiles(env, n) else C.lsvi


def _play_compiled(env, pol: np.ndarray, env_rngs, u_buf: np.ndarray, n: int, hist: C.History,
                   batch_gram: np.ndarray) -> None:
    """``n`` episodes of every seed under ``pol``, added to ``hist.N``, ``hist.Rphi`` and ``batch_gram``
    (:func:`.batched_jit.play_chunk`; ``hist.gram``, which this learner does not read, is left alone). Each seed's
    n x H uniforms in one ``Generator.random`` call: the numpy loop's n ``random(H)`` calls, value for value."""
    from .batched_jit import play_chunk   # numba loads here, not on import (CLI start-up)

    for b, g in enumerate(env_rngs):
        g.random(out=u_buf[b, :n])
    tab = env.tabular
    play_chunk(pol, tab._cdf, env.phi, tab.R, int(env.initial_state), u_buf, n, hist.N, hist.Rphi, batch_gram)
