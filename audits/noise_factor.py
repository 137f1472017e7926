"""The common factor on a learner's noise scales that makes its declared log account to a target eps: the reference
learner of the audits' power criteria (a leakier version of the same code: the released audit's oracle, the action
audit's simulated reference; docs/auditing.md#verdicts-and-power, docs/auditing.md#power-of-the-action-audit)."""

from __future__ import annotations

import functools

from privacct.algorithms.contract import RunConfig


def noise_factor_for(config: RunConfig, accountant: str | None = None):
    """``f(eps)``: the common factor on every noise scale of ``config``'s log that makes it account to eps
    (under ``accountant``, default: the tightest that applies; :func:`privacct.calibrate.calibrate_log`)."""
    from privacct.algorithms.registry import get_learner
    from privacct.calibrate import calibrate_log

    log = get_learner(config.algorithm).declared_log(config)

    @functools.lru_cache(maxsize=8)
    def f(eps: float) -> float:
        cal = calibrate_log(log, epsilon=eps, delta=config.delta, accountant=accountant)
        return cal.release_groups[0].noise_scale / log.release_groups[0].noise_scale
    return f


__all__ = ["noise_factor_for"]
