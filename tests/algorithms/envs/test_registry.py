"""One index of environments (algorithms/envs/registry.py): each name is one MDP, and a name of another family is
refused with the right one named."""

from __future__ import annotations

import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.envs.registry import KINDS, environments, unknown_environment
from privacct.algorithms.registry import get_learner
from privacct.errors import PrivacctError


def test_every_name_is_one_environment_of_one_kind():
    envs = environments()
    assert {e.kind for e in envs.values()} == set(KINDS)
    assert envs["riverswim"].kind == "tabular" and envs["riverswim-lm"].kind == "linear-mixture"
    from privacct.algorithms.envs import ENVS
    from privacct.algorithms.envs.linear_mdp import LINEAR_ENVS
    from privacct.algorithms.envs.linear_mixture import LM_ENVS

    assert set(environments("tabular")) == set(ENVS)                 # the index names what the factories build
    assert set(environments("linear-mixture")) == set(LM_ENVS)
    assert set(environments("linear-mdp")) == set(LINEAR_ENVS)


@pytest.mark.parametrize("learner, env, hint", [
    ("ucrl-vtr", "riverswim", "'riverswim' is the tabular environment"),
    ("ucb-vi", "riverswim-lm", "'riverswim-lm' is the linear-mixture environment"),
    ("ucb-vi", "linear-two-state", "is the linear-mdp environment"),
])
def test_a_name_of_another_family_is_refused_naming_it(learner, env, hint):
    spec = get_learner(learner)
    privacy = "none" if "none" in spec.privacy_models else "jdp"
    with pytest.raises(PrivacctError) as e:
        spec.build_log(RunConfig(learner, privacy, episodes=4, env=env)) if privacy != "none" else \
            spec.uniform_regret(RunConfig(learner, privacy, episodes=4, env=env))
    assert "env must be one of" in str(e.value) and hint in str(e.value)


def test_unknown_names_and_kinds():
    assert "'nope'" in str(unknown_environment("nope", "tabular")) and "is the" not in str(unknown_environment("nope", "tabular"))
    with pytest.raises(PrivacctError, match="kind must be one of"):
        environments("atari")


def _build(name: str, kind: str, options: dict, horizon):
    if kind == "tabular":
        from privacct.algorithms.envs import make_env

        return make_env(name, horizon)
    if kind == "linear-mdp":
        from privacct.algorithms.envs.linear_mdp import make_linear_env

        return make_linear_env(name, horizon)
    from privacct.algorithms.envs.linear_mixture import make_linear_mixture_env

    return make_linear_mixture_env(name, horizon=horizon, n_states=options.get("n_states"), d=options.get("d"))


@pytest.mark.parametrize("name", sorted(environments()))
@pytest.mark.parametrize("options, horizon", [({}, None), ({}, 3), ({"n_states": 4, "d": 4}, None), ({"d": 6}, 4)])
def test_the_index_sizes_are_those_of_the_built_environment(name, options, horizon):
    """The sizes the memory models read (Environment.sizes, without building) are the built environment's."""
    e = environments()[name]
    if e.kind != "linear-mixture" or name == "hard-to-learn":
        options = {k: v for k, v in options.items() if k == "d" and name == "hard-to-learn"}
    else:
        options = {k: v for k, v in options.items() if k == "n_states"}
    env = _build(name, e.kind, options, horizon)
    z = e.sizes(options, horizon)
    assert (z.states, z.actions, z.horizon) == (env.n_states, env.n_actions, env.horizon)
    assert z.dim == (0 if e.kind == "tabular" else env.dim)


def test_the_memory_models_read_the_index():
    """A family's memory model sizes a run from the index (no table of its own): the linear-MDP model follows a
    change of the index's sizes."""
    from privacct.algorithms.linear_mdp import memory as lm
    from privacct.algorithms.tabular import memory as tm

    cfg = RunConfig("private-lsvi-ucb", "jdp", episodes=10, env="linear-d10-h10", horizon=7)
    assert lm.sizes(cfg, "linear-two-state") == (10, 20, 10, 7)
    assert tm.sizes(RunConfig("ucb-vi", "jdp", episodes=10, horizon=3), "riverswim") == (6, 2, 3)
