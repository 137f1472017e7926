"""One index of environments (algorithms/envs/registry.py): each name is one MDP, and a name of another family is
refused with the right one named."""

from __future__ import annotations

import pytest

from privacct.algorithms.base import RunConfig
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
