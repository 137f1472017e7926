"""LearnerSpec wiring: RunConfig -> environment + Design -> MechanismLog (paper | tight) -> run.

Options (``RunConfig.options``), all optional:

* ``n_states`` (RiverSwim S >= 3, default 3, H = 2S), ``d`` (HardToLearn, default 5), ``instance_seed``
  (environment instance: p_h or mu_h, default 0);
* ``instance_episodes``: the K in HardToLearn's Delta = sqrt(1/(H K))/(4 sqrt 2) (default: episodes;
  a small value gives an easier instance with a larger action gap);
* ``shift_scale`` > 0: multiplier on the theoretical regulariser shift (default 1; recorded);
* ``radius``: ``theory`` (default) or ``paper-experiment`` (seed 001 §6 form; ldp-ucrl-vtr only);
* ``alpha`` in (0, 1): failure probability in shifts and radii (default 0.01, as seed 001 §6);
* ``on_non_pd``: ``floor`` (default: eigenvalues floored, counted in info["non_pd_events"]) or ``error``;
* ``eta`` > 0: the mirror-descent step of private-linopt-po (default: the theory value of design.private_linopt);
  a tunable, not a privacy parameter;
* ``counter`` (JDP only; ``privacct run --counter STRATEGY``): the continual counter of every tree release group,
  one of ``tree``, ``tree-honaker``, ``sqrt-toeplitz``, ``blt`` (docs/counters.md). The log's groups then
  declare ``Structure.factorized`` (the accountants charge the strategy's column norm), the aggregator runs a
  FactorizedCounter with the same noise scale and mechanism, and the shifts and radii take the counter's prefix
  error in place of the tree's (:class:`.design.CounterChoice`). Default (and ``tree``): the printed tree, under
  ``paper`` and ``tight`` alike (benchmarks/linear_mixture.md#counters-pp-ucrl-vtr-jdp-tight measures the
  strategies). Audited runs run the counter the unaudited run of the same configuration runs, and the audit observes
  it (docs/auditing.md#factorized-counters); a one-run audit of a Toeplitz counter with Laplace noise scores it
  output-only (docs/auditing.md#one-run-scores; :func:`refuse_audited_counter` no longer refuses it).

The audit hook is the contract's :class:`privacct.algorithms.contract.AuditHook` (canaries: :mod:`.canary`;
valid pair and distances: :func:`.design.mixture_neighbours`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable

import numpy as np

from privacct.calibrate import calibrate_log
from privacct.counters.choice import tree_kept
from privacct.errors import PrivacctError, UnsupportedLogError, check_count, check_delta, check_positive
from privacct.log import Claim, MechanismLog

from ..contract import AuditHook, AuditSetting, ConstantSet, LearnerSpec, ReportEpisodes, RunConfig, RunResult
from ..envs.linear_mixture import LM_ENVS, LinearMixtureMDP, make_linear_mixture_env
from ..neighbours import NeighbourSpec
from ..settings import PaperSetting, Repair, choice, derived, printed
from . import design as D
from . import memory as M
from .engine import run_design

OPTIONS = ("n_states", "d", "instance_seed", "instance_episodes", "shift_scale", "radius", "alpha", "on_non_pd", "eta",
           "counter")


def _opts(config: RunConfig) -> dict[str, Any]:
    opts = dict(config.options)
    extra = sorted(set(opts) - set(OPTIONS))
    if extra:
        raise PrivacctError(f"unknown option(s) {', '.join(map(repr, extra))}; allowed: {', '.join(OPTIONS)}")
    return opts


@functools.lru_cache(maxsize=64)
def _env(name: str, horizon: int | None, episodes: int, n_states: int | None, d: int | None, seed: int) -> LinearMixtureMDP:
    return make_linear_mixture_env(name, horizon=horizon, episodes=episodes, n_states=n_states, d=d, instance_seed=seed)


def make_env(config: RunConfig, default_env: str) -> LinearMixtureMDP:
    o = _opts(config)
    name = config.env or default_env
    if name not in LM_ENVS:
        from ..envs.registry import unknown_environment

        raise unknown_environment(name, "linear-mixture", config.algorithm)
    n_states = None if o.get("n_states") is None else check_count("option n_states", o["n_states"], minimum=3)
    d = None if o.get("d") is None else check_count("option d", o["d"], minimum=2)
    seed = check_count("option instance_seed", o.get("instance_seed", 0), minimum=0)
    horizon = None if config.horizon is None else check_count("horizon", config.horizon)
    k_inst = check_count("option instance_episodes", o.get("instance_episodes", config.episodes))
    return _env(name, horizon, k_inst, n_states, d, seed)


def _validate(config: RunConfig, spec_privacy: tuple[str, ...]) -> dict[str, Any]:
    o = _opts(config)
    if config.privacy not in spec_privacy:
        raise PrivacctError(f"privacy must be one of {', '.join(spec_privacy)} for {config.algorithm}, got {config.privacy!r}")
    # calibration, episodes, epsilon and delta in [0, 1): RunConfig validated them (algorithms/contract.py); the family
    # adds what it alone knows: which privacy models a learner has, and that its Gaussian learners need delta > 0
    if config.privacy != "none":
        check_delta("delta", config.delta, allow_zero=config.algorithm in PURE)
    out = {
        "shift_scale": check_positive("option shift_scale", o.get("shift_scale", 1.0)),
        "alpha": check_delta("option alpha", o.get("alpha", 0.01)),
        "radius": o.get("radius", "theory"),
        "eta": None if o.get("eta") is None else check_positive("option eta", o["eta"]),
        "on_non_pd": o.get("on_non_pd", "floor"),
    }
    if out["eta"] is not None and config.algorithm != "private-linopt-po":
        raise PrivacctError(f"option eta exists only for private-linopt-po, not {config.algorithm}")
    if out["radius"] not in ("theory", "paper-experiment"):
        raise PrivacctError(f"option radius must be 'theory' or 'paper-experiment', got {out['radius']!r}")
    if out["on_non_pd"] not in ("floor", "error"):
        raise PrivacctError(f"option on_non_pd must be 'floor' or 'error', got {out['on_non_pd']!r}")
    counter = o.get("counter")
    if counter is not None and (not isinstance(counter, str) or counter not in D.COUNTERS):
        raise PrivacctError(f"option counter must be one of {', '.join(D.COUNTERS)}, got {counter!r}")
    if counter is not None and config.privacy != "jdp":
        raise PrivacctError(f"option counter applies to JDP (central) learners, got privacy {config.privacy!r}")
    out["counter"] = counter
    return out


def refuse_audited_counter(counter: str | None, *, one_run: bool = False, laplace: bool = False) -> None:
    """An audited run observes any counter (privacct.counters.observed, docs/auditing.md#factorized-counters): classic
    audits the tree's or tree-honaker's nodes [1, 2^j] and a Toeplitz counter's releases whitened by its declared L;
    one-run audits the nodes holding one canary and a Toeplitz counter's difference of releases at a canary's leaf. With
    Laplace noise (``laplace``) that difference is not Laplace noise: a ONE-RUN audit scores it output-only (no exact
    likelihood; its verdict fails or inconclusive, docs/auditing.md#one-run-scores), so nothing is refused here any more
    (the signature is kept for callers)."""
    del counter, one_run, laplace


def design_for(name: str, config: RunConfig, default_env: str, noise_factor: float = 1.0) -> D.Design:
    """The Design (constants, groups) of learner ``name`` for ``config``; ``noise_factor`` = running sigma /
    printed sigma (1 for ``paper``; the calibrator's common factor for ``tight``)."""
    env = make_env(config, default_env)
    o = _validate(config, SPECS_PRIVACY[name])
    K, eps, delta = config.episodes, config.epsilon, config.delta
    if name == "ucrl-vtr":
        return D.ucrl_vtr(env, K)
    if name == "ldp-ucrl-vtr":
        return D.ldp_ucrl_vtr(env, K, eps, delta, o["alpha"], o["shift_scale"], o["radius"], noise_factor)
    if o["radius"] != "theory":
        raise PrivacctError(f"option radius='paper-experiment' exists only for ldp-ucrl-vtr, not {name}")
    noise = "laplace" if name.endswith("laplace") else "gaussian"
    counter = None if o["counter"] is None else D.counter_choice(o["counter"], K, noise)
    if name in ("pp-ucrl-vtr", "pp-ucrl-vtr-laplace"):
        return D.pp_ucrl_vtr(env, K, eps, delta, o["alpha"], config.privacy, o["shift_scale"], noise_factor,
                             noise=noise, counter=counter)
    if name == "pp-ucrl-vtr-plus":
        return D.pp_ucrl_vtr_plus(env, K, eps, delta, o["alpha"], config.privacy, o["shift_scale"], noise_factor,
                                  counter=counter)
    if name in ("private-linopt-vi", "private-linopt-po"):
        des = D.private_linopt(env, K, eps, delta, o["alpha"], "greedy" if name.endswith("vi") else "mirror-descent",
                               o["shift_scale"], config.privacy == "jdp", noise_factor, counter=counter)
        if o["eta"] is not None:
            des.eta = o["eta"]
            des.record["eta"] = o["eta"]
            des.record["eta_source"] = "option eta (tunable)"
        return des
    raise PrivacctError(f"unknown linear-mixture learner {name!r}")


@functools.lru_cache(maxsize=64)
def _log_cached(name: str, key: tuple, default_env: str) -> tuple[MechanismLog | None, str | None]:
    """(log, calibration accountant) of the record ``key`` stands for (:func:`_log_key`), built on a miss only."""
    config = RunConfig(**dict(key))
    des = design_for(name, config, default_env)
    if not des.groups:
        return None, None
    if config.privacy != "none" and config.episodes < 2 and des.mechanism == "tree":
        raise PrivacctError("episodes must be an integer >= 2 for tree-based (JDP) learners")
    log = des.log(claim=Claim(config.epsilon, config.delta), name=f"{name}-{config.privacy}-{config.calibration}")
    if config.calibration == "paper":
        if name in ("private-linopt-vi", "private-linopt-po"):
            log = dataclasses.replace(log, readings=D.linopt_readings(log, config.episodes))
        return log, None
    if config.privacy == "jdp" and dict(config.options).get("counter") is None:   # tight keeps the tree: say why
        log = dataclasses.replace(log, parameters=tuple(log.params.items()) + (("tight_choice", TREE_KEPT.to_params()),))
    # Every group is Gaussian, so the analytic-Gaussian (GDP) accountant applies and is the tightest
    # (calibrate_log over all accountants picks it too, only slower); fall back to all if it does not.
    try:
        return calibrate_log(log, epsilon=config.epsilon, delta=config.delta, accountant="analytic-gaussian",
                             return_accountant=True)
    except UnsupportedLogError:
        return calibrate_log(log, epsilon=config.epsilon, delta=config.delta, return_accountant=True)


#: What ``tight`` records for a JDP linear-mixture learner without option ``counter`` (docs/counters.md#choosing-for-regret).
TREE_KEPT = tree_kept("no regret proxy ranks the counters for the linear-mixture learners; at the report's setting no "
                      "strategy separates from the tree (benchmarks/linear_mixture.md, counters); option counter=NAME "
                      "runs another")


_LOG_OPTIONS = ("n_states", "d", "instance_seed", "instance_episodes", "shift_scale", "alpha", "counter")


def _log_key(config: RunConfig) -> tuple:
    """The cache key of ``config``'s log: its fields minus those that cannot change the log (``bonus_scale``, the
    options outside :data:`_LOG_OPTIONS`), a tuple derived once per record (:meth:`RunConfig.log_key`)."""
    return config.log_key(_LOG_OPTIONS)


def noise_factor(des: D.Design, log: MechanismLog | None) -> float:
    """Running sigma / printed sigma, common to every group (calibrate_log scales all groups alike)."""
    if log is None or not des.groups:
        return 1.0
    ratios = [log.group(g.name).noise_scale / g.paper_sigma for g in des.groups]
    if max(ratios) > min(ratios) * (1 + 1e-9):
        raise PrivacctError("the log's noise scales are not one common multiple of the printed ones")
    return ratios[0]


def make_spec(name: str, *, paper: str, privacy_models: tuple[str, ...], default_env: str, description: str,
              audit_setting: AuditSetting | None = None) -> LearnerSpec:
    """The learner ``name``'s spec: every setting of the learner lives on it (docs/learners.md#where-a-learners-settings-live);
    ``audit_setting`` is given at registration (:data:`LEARNERS`), None for a learner with no private model."""
    def build_log(config: RunConfig) -> MechanismLog | None:
        _validate(config, privacy_models)
        make_env(config, default_env)  # validates the environment options before they become a cache key
        return _log_cached(name, _log_key(config), default_env)[0]

    def run(config: RunConfig, seeds: list[np.random.SeedSequence], *, audit: AuditHook | None = None,
            progress: Callable[[int], None] | None = None) -> RunResult:
        if not seeds or not all(isinstance(s, np.random.SeedSequence) for s in seeds):
            raise PrivacctError("seeds must be a non-empty list of numpy SeedSequence")
        o = _validate(config, privacy_models)
        log, acc = _log_cached(name, _log_key(config), default_env)
        if audit is not None:
            refuse_audited_counter(o["counter"], one_run=getattr(audit, "plan", None) is not None,
                                   laplace=any(g.mechanism == "laplace" for g in log.release_groups))
        des = design_for(name, config, default_env, noise_factor(design_for(name, config, default_env), log))
        t0 = time.perf_counter()
        out = run_design(des, log, list(seeds), bonus_scale=config.bonus_scale, audit=audit, on_non_pd=o["on_non_pd"],
                         shared_start=D.SHARED_START[name], progress=progress)
        info = dict(out["info"])
        cap = ("r_max H at every stage (min{H, .}, seed 003)" if des.cap == "horizon" else "r_max (H-h) (0-based h)")
        info.update({
            "seconds": time.perf_counter() - t0, "env": des.env.describe(), "design": des.record,
            "bonus_scale": config.bonus_scale, "shift_scale": o["shift_scale"], "radius": o["radius"],
            "calibration": config.calibration, "calibration_accountant": acc,
            "noise_scales": {g.name: g.noise_scale for g in log.release_groups} if log is not None else {},
            "counter": (log.params.get("counter", "tree") if des.mechanism == "tree" and log is not None else None),
            "tie_breaking": "uniformly random among maximisers (policy stream)" if des.policy == "greedy" else "sampled from pi_k",
            "non_pd_fallback": f"eigenvalues floored at {des.lam if des.lam > 0 else 1.0:g} (post-processing)",
            "value_clip": f"Q clipped to [0, {cap}] on the user side before forming phi_V and y",
        })
        return RunResult(config, out["regret"], log, out["ledger"], info, observation=out["observation"])

    def neighbours(config: RunConfig) -> NeighbourSpec:
        _validate(config, privacy_models)
        if config.privacy == "none":
            raise PrivacctError("privacy must be jdp or ldp for a neighbouring relation, got 'none'")
        return D.mixture_neighbours(design_for(name, config, default_env), config.privacy)

    def uniform_regret(config: RunConfig) -> float:
        return make_env(config, default_env).uniform_policy_regret()

    return LearnerSpec(name, "linear-mixture", paper, privacy_models, default_env, description, build_log, run,
                       neighbours=neighbours, paper_settings=PAPER_SETTINGS.get(name, ()),
                       test_settings=(("episodes", 4), ("horizon", 3), ("env", "riverswim-lm"), ("bonus_scale", 1e6),
                                      ("delta", 0.0 if name in PURE else 1e-5)),
                       constants=CONSTANTS[name], default_constants="tuned", uniform_regret=uniform_regret,
                       audit_setting=audit_setting,
                       memory=functools.partial(M.memory, default_env=default_env),
                       observation_width=functools.partial(M.observation_width, default_env=default_env),
                       report_episodes=REPORT_EPISODES,
                       reproduce="privacct.algorithms.linear_mixture.reproduce:reproduce")


#: The learners whose noise is Laplace (pure DP; delta may be 0).
PURE = ("pp-ucrl-vtr-laplace",)

#: Audit configurations (docs/auditing.md#audit-configurations), each given to its learner's spec at registration
#: (:data:`LEARNERS`): the RiverSwim linear mixture (S = 3, one-hot features, d = 18), H = 3, K = 2 (one tree node),
#: bonus scale 10^6 so that the data-free first episode's value function sits at its cap (the canaries' features then
#: have the largest norm the clip allows). HardToLearn (the default environment of seeds 000, 003) has nearly parallel
#: features, which hide one user: a valid but weaker configuration. Trials per side: the 2-minute budget of
#: benchmarks/bench_learner_audits.py.
_RIVERSWIM_WHY = ("RiverSwim linear mixture (S = 3, one-hot features, d = 18), H = 3, K = 2 (one tree node), bonus scale "
                  "1e6 so the data-free first episode's value function sits at its cap and the canaries' features have the "
                  "largest norm the clip allows; trials per side fit the 2-minute budget")


def _riverswim_audit(trials: int, why: str = _RIVERSWIM_WHY) -> AuditSetting:
    """The RiverSwim audit configuration above with ``trials`` per side."""
    return AuditSetting(episodes=2, horizon=3, env="riverswim-lm", bonus_scale=1e6, trials=trials, why=why)


#: seed 003 Alg. 3 (four statistics per stage, the weights data-free at K = 2): pp-ucrl-vtr's configuration
_PLUS_AUDIT = _riverswim_audit(150_000, why="pp-ucrl-vtr's configuration (Alg. 3's four statistics per stage, the "
                                            "weights data-free at K = 2): " + _RIVERSWIM_WHY)
#: seed 003's pure-DP variant of Alg. 1 (Laplace blocks, the exact Laplace likelihood ratio): HardToLearn. On the
#: RiverSwim configuration the canaries' Laplace atoms span 6 orders of magnitude (the 5/(1000H) reward of state
#: 0 at the last stage), and the oracle's power search (privacct.audits.oracle.trials_for) takes ~140 s there
#: (it certifies 0.31 at 2 x claim with 2000 trials, ~2.6e5 trials per side for power); HardToLearn runs in ~1 s
#: but its nearly parallel features leave the audit without power (inconclusive) -- see docs/seed-003-
#: linear-representation.md#what-an-audit-needs
_LAPLACE_AUDIT = AuditSetting(
    episodes=2, horizon=3, env="hard-to-learn", bonus_scale=1e6, trials=150_000,
    why="HardToLearn, H = 3, K = 2, bonus scale 1e6: on RiverSwim the canaries' Laplace atoms span 6 orders of "
        "magnitude and the oracle's power search takes ~140 s; HardToLearn runs in ~1 s but its nearly parallel "
        "features leave the audit without power (docs/seed-003-linear-representation.md#what-an-audit-needs)")
#: Regret K of ``privacct report`` (default / tiny scale).
REPORT_EPISODES = ReportEpisodes(default=300, tiny=8)

#: Constant sets (docs/learners.md#constant-sets; docs/seed-001-linear-mixture-ldp.md#constant-sets).
#: ``theory``: bonus_scale 1 on each paper's radius (seed 001: the Lemma B.1 radius). ``tuned``: one
#: multiplier per learner chosen by the family grid of benchmarks/tune_constants.py on the learner's
#: NON-PRIVATE instance (privacy none; for ldp-ucrl-vtr, which has none, its noise-free limit: the same
#: formulas at a claimed eps of 1e8) on RiverSwim (S = 3, H = 6), K = 2000, 3 tuning seeds (root 7):
#: smallest mean final regret over {1e-4, 2e-4, 5e-4, ..., 0.5, 1} (1-2-5 steps; BONUS_GRID of the script;
#: private-linopt-po also eta in {0.1, 0.3, 1, 3, 10}). ldp-ucrl-vtr's tuned set
#: also takes the seed-001 Sec. 6 experimental radius c d^{3/4} (H-h+1)^{3/2} k^{1/4} (the form its
#: figure used). Never a noise scale, a sensitivity or the shift (shift_scale is not a constant).
TUNING = ("grid of benchmarks/tune_constants.py on the learner's non-private instance (ldp-ucrl-vtr: noise-free "
          "limit, claim eps = 1e8): RiverSwim S = 3, H = 6, K = 2000, 3 tuning seeds (root 7), smallest mean final "
          "regret over bonus_scale in {1e-4, 2e-4, 5e-4, ..., 0.5, 1} (1-2-5 steps)")
TUNED_BONUS = {"ucrl-vtr": 0.1, "ldp-ucrl-vtr": 0.0005, "private-linopt-vi": 0.05, "private-linopt-po": 0.01,
               "pp-ucrl-vtr": 0.05, "pp-ucrl-vtr-laplace": 0.05, "pp-ucrl-vtr-plus": 0.001}
_THEORY_HOW = {
    "ucrl-vtr": "seed 001 Sec. 6.2 radius (our reading), bonus_scale 1",
    "ldp-ucrl-vtr": "seed 001 Lemma B.1 radius, bonus_scale 1",
    "private-linopt-vi": "seed 000 Lemma 3.1 radius, bonus_scale 1",
    "private-linopt-po": "seed 000 Lemma 3.1 radius, eta of Cai et al. 2020, bonus_scale 1",
    "pp-ucrl-vtr": "seed 003 Cor. 5 / Cor. 6 beta_k, bonus_scale 1",
    "pp-ucrl-vtr-laplace": "seed 003 Cor. 5 / Cor. 6 beta_k with the Laplace Upsilon (App. C.4), bonus_scale 1",
    "pp-ucrl-vtr-plus": "seed 003 eq. (6) / (7) (beta-hat, beta-check, beta-tilde), bonus_scale 1",
}
#: Non-bonus options of the tuned sets: ldp-ucrl-vtr's radius form; private-linopt-po's mirror-descent step
#: eta (the grid's choice jointly with its bonus_scale, tune_constants.py --check).
TUNED_OPTIONS: dict[str, tuple[tuple[str, Any], ...]] = {"ldp-ucrl-vtr": (("radius", "paper-experiment"),),
                                                         "private-linopt-po": (("eta", 3.0),)}
CONSTANTS: dict[str, tuple[ConstantSet, ...]] = {
    n: (ConstantSet("theory", 1.0, (), _THEORY_HOW[n]),
        ConstantSet("tuned", TUNED_BONUS[n], TUNED_OPTIONS.get(n, ()), TUNING))
    for n in _THEORY_HOW
}


#: Settings at which each learner's claim is checked (``privacct report``), with provenance. Seed 001 Sec. 6.2:
#: RiverSwim, K = 10^4, delta = 0.1, eps not given in the text (eps = 1 is privacct's). Seeds 000 and 003 print no
#: experiment: eps = 0.5 (their theorems are stated for eps < 1 / eps in (0, 1)), delta = 1e-5 and K = 10^4 are
#: the toolkit's choices (0 for the pure-DP Laplace variant of seed 003 Rem. 1 / App. C.4). bonus_scale 0.1 x
#: the theoretical radius is the tunable of ``reproduce``.
_BONUS = 0.1
_HTL = "hard-to-learn"
_BONUS_NOTE = (f"bonus_scale {_BONUS:g} x the theoretical radius: privacct's tuning of a non-privacy constant "
               "(docs/learners.md; it enters no privacy figure)")
_CLIP = Repair("lower clip V >= 0 (user side)",
               "Alg. 1 truncates Q only from above; with a noisy estimate V can be arbitrarily negative and the "
               "message's sensitivity is not surely bounded (docs/seed-001-linear-mixture-ldp.md#sensitivity)")
_CLIP_003 = Repair("lower clip V >= 0 (user side)",
                   "Alg. 1 clips Q~ only from above (min{H, .}) while w~ is noisy: without the lower clip the "
                   "sensitivity 2H^2 is not surely bounded (docs/seed-003-linear-representation.md#sensitivity)")
_NO_EXPERIMENT = {
    "delta": choice("no value printed (the paper has no experiment): 1e-5"),
    "episodes": choice("no value printed (the paper has no experiment): K = 10^4"),
    "env": choice("HardToLearn (the hard instance of Zhou, Gu, Szepesvari 2021; d = 5, H = 6): the paper has no environment"),
    "horizon": choice("H = 6, HardToLearn's default (no value printed)"),
    "constants": choice(_BONUS_NOTE),
}
_LINOPT = PaperSetting(
    "jdp", 0.5, 1e-5, 10_000, {**_NO_EXPERIMENT, "epsilon": choice(
        "Thm 6.4 holds for any eps > 0 and prints no value; 0.5 < 1 keeps the O(eps, delta) of Thm 6.4 within 1% of eps "
        "(docs/seed-000-linear-mixture-jdp.md#constants-as-printed)")},
    env=_HTL, bonus_scale=_BONUS, baseline_note="the same algorithm without privacy (Z = lambda I, no noise): UCRL-VTR / OPPO")


def _pp(privacy: str, delta: float = 1e-5, cors: tuple[str, str] = ("Cor. 5", "Cor. 6")) -> PaperSetting:
    pure = {"delta": printed("pure claim, delta = 0 (Rem. 1 / App. C.4)")} if delta == 0 else {}
    return PaperSetting(
        privacy, 0.5, delta, 10_000, {**_NO_EXPERIMENT, **pure, "epsilon": choice(
            f"{cors[0] if privacy == 'jdp' else cors[1]} fixes any eps, delta in (0, 1) and prints no value: 0.5")},
        env=_HTL, bonus_scale=_BONUS, repairs=(_CLIP_003,), baseline="ucrl-vtr",
        baseline_note="UCRL-VTR (Ayoub et al. 2020 / Jia et al. 2020), the algorithm Alg. 1 privatises, at the same "
                      "environment and bonus scale")


PAPER_SETTINGS: dict[str, tuple[PaperSetting, ...]] = {
    "ldp-ucrl-vtr": (PaperSetting(
        "ldp", 1.0, 0.1, 10_000, {
            "epsilon": choice("Thm 5.1 holds for any eps > 0; the text gives no value (Fig. 2 is an image): eps = 1 "
                              "(docs/seed-001-linear-mixture-ldp.md#readings-and-accounted-epsilon)"),
            "delta": printed("delta = 0.1 (Sec. 6.2)"),
            "episodes": printed("K = 10,000 (Sec. 6.2)"),
            "env": choice("RiverSwim as a linear mixture with one-hot features and rewards / H is the paper's (Sec. 6); "
                          "S = 3 is privacct's (S is not printed)"),
            "horizon": derived("H = 2S (Sec. 6) with privacct's S = 3: H = 6"),
            "constants": choice(_BONUS_NOTE + "; the paper tunes its c by grid search (Sec. 6.2)"),
        }, bonus_scale=_BONUS, repairs=(_CLIP,), baseline="ucrl-vtr",
        baseline_note="UCRL-VTR (Jia et al. 2020), the paper's own baseline (Sec. 6.2), same environment and bonus scale"),),
    "private-linopt-vi": (_LINOPT,),
    "private-linopt-po": (_LINOPT,),
    "pp-ucrl-vtr": (_pp("jdp"), _pp("ldp")),
    "pp-ucrl-vtr-laplace": (_pp("jdp", 0.0), _pp("ldp", 0.0)),
    "pp-ucrl-vtr-plus": (_pp("jdp", cors=("Cor. 10", "Cor. 11")), _pp("ldp", cors=("Cor. 10", "Cor. 11"))),
}


SPECS_PRIVACY = {
    "ucrl-vtr": ("none",),
    "ldp-ucrl-vtr": ("ldp",),
    "private-linopt-vi": ("jdp", "none"),
    "private-linopt-po": ("jdp", "none"),
    "pp-ucrl-vtr": ("jdp", "ldp", "none"),
    "pp-ucrl-vtr-laplace": ("jdp", "ldp"),
    "pp-ucrl-vtr-plus": ("jdp", "ldp", "none"),
}

#: Default environments. RiverSwim (S = 3, H = 6) for every learner: the non-private instances learn it
#: (tests/algorithms/test_constants.py); HardToLearn (the default of seeds 000 / 003 before) is a minimax
#: lower-bound instance whose gap shrinks with K (Delta = sqrt(1/(HK))/(4 sqrt 2)), so no learner gets well
#: below the uniform policy on it at any K. The report's paper settings keep HardToLearn (``env`` above).
_ENV = "riverswim-lm"
LEARNERS: dict[str, LearnerSpec] = {
    "ucrl-vtr": make_spec("ucrl-vtr", paper=D.SOURCES["001"], privacy_models=SPECS_PRIVACY["ucrl-vtr"],
                          default_env=_ENV,
                          description="Inhomogeneous UCRL-VTR (Jia et al. 2020), the non-private baseline of seed 001 §6"),
    "ldp-ucrl-vtr": make_spec("ldp-ucrl-vtr", paper=D.SOURCES["001"], privacy_models=SPECS_PRIVACY["ldp-ucrl-vtr"],
                              default_env=_ENV, audit_setting=_riverswim_audit(120_000),
                              description="LDP-UCRL-VTR (seed 001 Alg. 1): users send Gaussian-noised Gram matrices and vectors"),
    "private-linopt-vi": make_spec("private-linopt-vi", paper=D.SOURCES["000"], privacy_models=SPECS_PRIVACY["private-linopt-vi"],
                                   default_env=_ENV, audit_setting=_riverswim_audit(150_000),
                                   description="Private-LinOpt-VI (seed 000): JDP Gaussian tree counters + shifted regulariser"),
    "private-linopt-po": make_spec("private-linopt-po", paper=D.SOURCES["000"], privacy_models=SPECS_PRIVACY["private-linopt-po"],
                                   default_env=_ENV, audit_setting=_riverswim_audit(150_000),
                                   description="Private-LinOpt-PO (seed 000): policy optimisation (mirror descent) on the same privatizer"),
    "pp-ucrl-vtr": make_spec("pp-ucrl-vtr", paper=D.SOURCES["003"], privacy_models=SPECS_PRIVACY["pp-ucrl-vtr"],
                             default_env=_ENV, audit_setting=_riverswim_audit(150_000),
                             description="Privacy-Preserving UCRL-VTR (seed 003 Alg. 1): JDP trees (Cor. 5), LDP messages "
                                         "(Cor. 6), or none (B = g = 0)"),
    "pp-ucrl-vtr-laplace": make_spec(
        "pp-ucrl-vtr-laplace", paper=D.SOURCES["003"], privacy_models=SPECS_PRIVACY["pp-ucrl-vtr-laplace"],
        default_env=_ENV, audit_setting=_LAPLACE_AUDIT,
        description="seed 003 Alg. 1, pure DP (Rem. 1 / App. C.4): Laplace trees (JDP) or Laplace messages (LDP), "
                    "basic composition"),
    "pp-ucrl-vtr-plus": make_spec(
        "pp-ucrl-vtr-plus", paper=D.SOURCES["003"], privacy_models=SPECS_PRIVACY["pp-ucrl-vtr-plus"],
        default_env=_ENV, audit_setting=_PLUS_AUDIT,
        description="Privacy-Preserving UCRL-VTR+ (seed 003 Alg. 3, variance-aware): JDP (Cor. 10), LDP (Cor. 11) "
                    "or none"),
}
