"""Option ``reading``: the printed JDP constants run under one named reading of seed 002 (docs/seed-002-tabular.md
#readings-and-accounted-epsilon), so that the reading the proof supports (log2 K) can be run and audited."""

from __future__ import annotations

import numpy as np
import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.registry import get_learner
from privacct.errors import PrivacctError
from privacct.ledger import Ledger, check_ledger

LOG2 = "log2 K, valid pair (6H-3)"


def _cfg(**kw):
    base = dict(privacy="jdp", epsilon=1.0, calibration="paper", episodes=5, horizon=2)
    base.update(kw)
    return RunConfig("ucb-vi", **base)


def test_the_learner_runs_the_readings_noise_and_its_log_says_so():
    spec = get_learner("ucb-vi")
    declared = spec.build_log(_cfg())
    led = spec.build_log(_cfg(options=(("reading", LOG2),)))
    expected = declared.under_reading(LOG2)
    assert [g.noise_scale for g in led.release_groups] == [g.noise_scale for g in expected.release_groups]
    assert led.release_groups[0].noise_scale != declared.release_groups[0].noise_scale   # log2 5 vs ln 5
    assert dict(led.params)["reading"] == LOG2 and not led.readings
    res = spec.run(_cfg(options=(("reading", LOG2),)), np.random.SeedSequence(0).spawn(1))
    ledger = res.ledger if res.ledger is not None else Ledger()
    assert len(ledger) and check_ledger(led, ledger).ok                 # what ran is the reading's noise
    assert {d.scale for d in ledger.draws()} == {led.release_groups[0].noise_scale}


@pytest.mark.parametrize("kw, match", [
    (dict(options=(("reading", "log3 K"),)), "option reading must be one of"),
    (dict(calibration="tight", options=(("reading", LOG2),)), "option reading applies to the printed JDP constants"),
    (dict(privacy="ldp", options=(("reading", LOG2),)), "option reading applies to the printed JDP constants"),
])
def test_bad_readings_are_refused_in_one_line(kw, match):
    with pytest.raises(PrivacctError, match=match):
        get_learner("ucb-vi").build_log(_cfg(**kw))
