"""Tabular learners of seed 002 (Chowdhury & Zhou, AAAI 2022): UCB-VI / UCB-PO, JDP and LDP.

``LEARNERS`` holds two specs, ``ucb-vi`` and ``ucb-po``; ``RunConfig.privacy`` selects the
non-private baseline (``none``: UCB-VI of Azar et al. 2017 / OPPO of Efroni et al. 2020, read as
the same algorithm with exact counts and E = 0), the CENTRAL privatizer (``jdp``: Private-UCB-*
with binary-tree counters) or the LOCAL privatizer (``ldp``).

Audit hook: the contract's :class:`privacct.algorithms.contract.AuditHook` (:mod:`.learner` says what
each canary is and what the observation holds; :func:`.privatizers.tabular_neighbours` states the
valid pair of Defs. 2.2 / 2.3 and its l1 distance, 6H - 3 (JDP) and 6H (LDP)). Options:
``e_scale``, ``confidence_delta``, ``eta`` (:mod:`.learner`).

Departures from the paper, each for a stated reason (details in the module docstrings):

* costs c = 1 - r of the reward environment, privatised as the cost stream actually used (the
  paper minimises costs; regret is unchanged because every episode has H steps; docs/seed-002-tabular.md#departures);
* the three count families are released as ONE concatenated vector per episode (one tree
  counter / one local report), l1 sensitivity 6H - 3 (JDP: same s_1 and a_1) or 6H (LDP) under
  replace-one-user; the paper argues H per family (App. C) -- recorded in the log's ``paper`` statement;
* the printed "log K" is read as ln K (floored at 1 so the printed scale is positive at K < 3);
  the tree really puts each user in floor(log2 K) + 1 nodes, which the accountant uses;
* E_{eps,delta,1/2} are computed from the noise scale that runs (so ``tight`` gets its own E) with
  m = floor(log2 K) + 1 noisy nodes instead of the printed log K; ``e_scale`` tunes them;
* VI ties ("broken arbitrarily") go to the smallest untruncated Q (:func:`.planning.plan_vi`);
* the non-private baselines are the same algorithms with exact counts and E = 0 (the paper does
  not print them).

With the printed noise the private learners do not learn RiverSwim at K = 2e4 and eps <= 1
(docs/seed-002-tabular.md#why-the-printed-constants-cannot-learn; ``privacct reproduce tabular`` shows it
and sweeps eps).
"""

from __future__ import annotations

from functools import partial

from ..contract import AuditSetting, ConstantSet, LearnerSpec, ReportEpisodes, RunConfig
from ..neighbours import NeighbourSpec
from ..settings import PaperSetting, choice, printed
from . import learner, memory
from .learner import build_log, make_mdp, run
from .privatizers import tabular_neighbours


def neighbours(config: RunConfig) -> NeighbourSpec:
    """The valid pair of seed 002 for ``config`` (:func:`.privatizers.tabular_neighbours`)."""
    return tabular_neighbours(config.privacy, make_mdp(config).horizon)

#: bonus_scale multiplies the whole confidence width beta (1 = Lemmas 3.1 / 4.1); e_scale multiplies
#: E_{eps,delta,1/2} (1 = Lemmas 5.1 / 5.4); eta is the PO step (theory: sqrt(2 ln A / (H^2 K))).
#: The ``tuned`` set (docs/learners.md#constant-sets, docs/seed-002-tabular.md#constant-sets): bonus_scale
#: and eta by the family grid of benchmarks/tune_constants.py on the NON-PRIVATE learner (RiverSwim H = 20,
#: K = 2000, 3 tuning seeds, root seed 7, smallest mean final regret); e_scale 0.05 and confidence_delta 0.1
#: are not visible without privacy (E = 0) and are kept from the figure reproduction (seed 002 Sec. 6 tunes
#: "the scaling of the confidence interval" without printing it).
TUNED: dict[str, dict] = {
    "ucb-vi": {"bonus_scale": 0.002, "options": {"e_scale": 0.05, "confidence_delta": 0.1}},
    "ucb-po": {"bonus_scale": 0.0005, "options": {"e_scale": 0.05, "confidence_delta": 0.1, "eta": 1.0}},
}
TUNING = ("grid of benchmarks/tune_constants.py on the non-private learner: RiverSwim H = 20, K = 2000, 3 tuning "
          "seeds (root 7), smallest mean final regret over bonus_scale in {1e-4, 2e-4, 5e-4, ..., 0.5, 1} (1-2-5 steps; "
          "PO also eta in {0.1, 0.3, 1, 3, 10}); e_scale 0.05 and confidence_delta 0.1 (E = 0 without privacy) kept "
          "from the seed-002 figure reproduction")


def constant_sets(name: str) -> tuple[ConstantSet, ...]:
    t = TUNED[name]
    return (ConstantSet("theory", 1.0, (), "seed 002 Lemmas 3.1 / 4.1 (beta), 5.1 / 5.4 (E), Thm 3.2 (eta); "
                                           "confidence delta 0.1"),
            ConstantSet("tuned", t["bonus_scale"], tuple(sorted(t["options"].items())), TUNING))


def uniform_regret(config: RunConfig) -> float:
    """Per-episode regret of the uniform random policy on ``config``'s environment (exact)."""
    return make_mdp(config).uniform_policy_regret()

_PAPER = "Chowdhury & Zhou 2022, Differentially Private Regret Minimization in Episodic MDPs (seed 002)"


def paper_settings(name: str) -> tuple[PaperSetting, ...]:
    """Seed 002's settings (docs/seed-002-tabular.md#experiments): RiverSwim, H = 20, K = 2e4 and a pure
    claim are printed (Sec. 6; Lemmas 5.1, 5.4); the eps values and the tuned constants are privacct's."""
    tuned = TUNED[name]
    opts = ", ".join(f"{k} {v:g}" for k, v in tuned["options"].items())
    return tuple(PaperSetting(
        privacy=p, epsilon=e, delta=0.0, episodes=20_000, env="riverswim", horizon=20,
        bonus_scale=tuned["bonus_scale"], options=tuple(tuned["options"].items()),
        provenance={
            "epsilon": choice(f"the paper claims eps-{'JDP' if p == 'jdp' else 'LDP'} for every eps > 0 "
                              f"({'Cor. 5.2' if p == 'jdp' else 'Cor. 5.5'}) and prints no value; {{0.5, 1}} are the eps of "
                              "the authors' plotting scripts (docs/seed-002-tabular.md#riverswim)"),
            "delta": printed(f"pure claim: {'Lemma 5.1 / Cor. 5.2' if p == 'jdp' else 'Lemma 5.4 / Cor. 5.5'} "
                             "(their delta is a confidence level, not a privacy delta)"),
            "episodes": printed("K = 2e4 (Sec. 6)"),
            "env": printed("RiverSwim, S = 6, A = 2 (Sec. 6, Fig. 1); its probabilities are the authors' public code's "
                           "(docs/seed-002-tabular.md#riverswim)"),
            "horizon": printed("H = 20 (Sec. 6)"),
            "constants": choice(f"the tuned set, bonus_scale {tuned['bonus_scale']:g}, {opts} (not privacy parameters): "
                                f"{TUNING}; the paper tunes eta and the confidence scaling without printing values (Sec. 6)"),
        },
        baseline=None, baseline_note=f"{'UCB-VI' if name == 'ucb-vi' else 'OPPO'} read as the same algorithm with exact "
                                     "counts and E = 0 (the paper compares with them, Sec. 6)")
        for p in ("jdp", "ldp") for e in (0.5, 1.0))


#: The audit configuration (docs/auditing.md#audit-configurations): RiverSwim, K = 4, H = 1 -- the tree has 3
#: leaves, user 1 sits in 2 nodes; 6 (JDP: 6H - 3 = 3 coordinates per node) or 6 (LDP: 6H) Laplace coordinates
#: carry the whole loss. Trials per side: the 2-minute budget of benchmarks/bench_learner_audits.py.
AUDIT = AuditSetting(episodes=4, horizon=1, trials=100_000,
                     why="RiverSwim, K = 4, H = 1: user 1 sits in 2 tree nodes whose 6 Laplace coordinates (JDP 6H - 3 "
                         "per node, LDP 6H) carry the whole accounted loss; 1e5 trials per side fit the 2-minute budget")
#: Regret K of ``privacct report`` (default / tiny scale).
REPORT_EPISODES = ReportEpisodes(default=2000, tiny=40)


def _spec(name: str, alg_no: int, baseline: str) -> LearnerSpec:
    return LearnerSpec(
        name=name,
        family="tabular",
        paper=f"{_PAPER}, Algorithm {alg_no}",
        privacy_models=("none", "jdp", "ldp"),
        default_env="riverswim",
        description=f"{'Private-UCB-VI' if name == 'ucb-vi' else 'Private-UCB-PO'} (tabular; "
                    f"none = {baseline}, jdp = central tree counters, ldp = local Laplace)",
        build_log=partial(build_log, algorithm=name),
        run_batch=partial(run, algorithm=name),
        neighbours=neighbours,
        mutants=(("bonus-on-exact-counts", "PLANTED: the bonus's sqrt(1 / N) term reads the exact visit counts, not the "
                                           "released ones (the log, the ledger and the released counts are unchanged; "
                                           "only the actions leak)"),),
        # Seed 002, Sec. 6 / Fig. 2: RiverSwim, H = 20, K = 2e4, pure eps in {0.5, 1}, JDP and LDP,
        # with the tuned (non-privacy) constants of the reproduction.
        test_settings=(("episodes", 4), ("horizon", 3), ("delta", 0.0)),
        constants=constant_sets(name), default_constants="tuned", uniform_regret=uniform_regret,
        paper_settings=paper_settings(name),
        audit_setting=AUDIT,
        memory=partial(memory.memory, default_env="riverswim"),
        observation_width=partial(memory.observation_width, default_env="riverswim"),
        report_episodes=REPORT_EPISODES,
        reproduce="privacct.algorithms.tabular.reproduce:reproduce",
    )


LEARNERS: dict[str, LearnerSpec] = {
    "ucb-vi": _spec("ucb-vi", 2, "UCB-VI (Azar et al. 2017)"),
    "ucb-po": _spec("ucb-po", 1, "OPPO (Efroni et al. 2020)"),
}

__all__ = ["LEARNERS", "learner"]
