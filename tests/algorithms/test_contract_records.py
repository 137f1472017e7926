"""The contract's typed records, validated in one place (algorithms/contract.py)."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import (AuditHook, Observation, ObservedBlock, RunConfig, ScaledNoiseGenerator,
                                      check_observation, noise_generators, stream_generators)
from privacct.algorithms.registry import get_learner
from privacct.errors import PrivacctError
from privacct.mechanisms import gaussian, laplace
from privacct.rng import spawn_sequences


@pytest.mark.parametrize("kwargs, needle", [
    (dict(canary="C"), "audit.canary"), (dict(canary="A", fixed_users=1), "audit.fixed_users"),
    (dict(canary="A", coins_seed=-1), "audit.coins_seed"), (dict(canary="A", noise_multiplier=0.0), "noise_multiplier"),
    (dict(canary="A", noise_multiplier=1.5), "noise_multiplier"),
])
def test_audit_hook_refuses_bad_fields_in_one_line(kwargs, needle):
    with pytest.raises(PrivacctError, match=needle):
        AuditHook(**kwargs)


def test_scaled_generator_scales_every_primitive_draw_and_nothing_else():
    seq = np.random.SeedSequence(3)
    plain, scaled = np.random.default_rng(seq), ScaledNoiseGenerator(np.random.SeedSequence(3), 0.25)
    np.testing.assert_allclose(laplace([scaled], (1000,), 2.0), 0.25 * laplace([plain], (1000,), 2.0))
    np.testing.assert_allclose(gaussian([scaled], (10,), 1.0), 0.25 * gaussian([plain], (10,), 1.0))
    assert scaled.random() == plain.random()                     # uniforms (coins, environment) untouched


def test_streams_are_the_seeds_children_or_fixed_coins():
    seeds = spawn_sequences(0, 3)
    a = [g.random() for g in stream_generators(seeds, 2, None, fixed=False)]
    assert len(set(a)) == 3
    fixed = [g.random() for g in stream_generators(seeds, 2, AuditHook("A"), fixed=True)]
    assert len(set(fixed)) == 1                                 # the same coins in every trial
    n1 = [g.random() for g in noise_generators(seeds, 1, AuditHook("A"))]
    assert n1 == [g.random() for g in noise_generators(seeds, 1, None)]


def _observation(log, **over):
    g = log.release_groups[0]
    kw = dict(name="x", group=g.name, mechanism="laplace", scale=g.noise_scale, values=np.zeros((2, g.dimension)),
              mean_a=np.zeros(g.dimension), mean_b=np.ones(g.dimension))
    kw.update(over)
    return Observation("A", (ObservedBlock(**kw),))


@pytest.mark.parametrize("over, needle", [
    (dict(group="nope"), "not a release group"), (dict(mechanism="gaussian"), "does not observe"),
    (dict(scale=1.0), "declared noise_scale"), (dict(values=np.zeros((3, 4))), "values must have shape"),
    (dict(mean_a=np.zeros(3)), "mean_a"), (dict(present=np.ones(2)), "present"),
])
def test_observation_is_checked_against_the_log(over, needle):
    spec = get_learner("ucb-vi")
    log = spec.build_log(RunConfig("ucb-vi", "jdp", episodes=4, horizon=1))
    check_observation(_observation(log), log, 2, AuditHook("A"))
    with pytest.raises(PrivacctError, match=needle):
        check_observation(_observation(log, **over), log, 2, AuditHook("A"))
    with pytest.raises(PrivacctError, match="canary"):
        check_observation(_observation(log), log, 2, AuditHook("B"))


def test_the_former_module_name_still_imports_the_contract():
    """Code written against earlier privacct imports privacct.algorithms.base: the same objects as
    privacct.algorithms.contract (the module was renamed so that file names say what they hold, issue 22)."""
    from privacct.algorithms import base, contract

    assert set(base.__all__) == set(contract.__all__)
    assert all(getattr(base, name) is getattr(contract, name) for name in contract.__all__)
