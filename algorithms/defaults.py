"""The defaults ``privacct run`` and ``privacct audit`` share, and the flags that apply to a configuration.

Nothing here is a learner's own setting: the claim defaults below are the same for every learner, and the
per-learner default (delta) is read from the learner's spec (docs/learners.md#where-a-learners-settings-live).

* **delta** (:func:`default_delta`): the delta of the learner's first paper setting with the same
  privacy model (:func:`privacct.algorithms.settings.paper_setting`: the setting at which the paper states its claim);
  a learner without one gets :func:`privacct.accounting.default_delta` of its declared log without a
  claim (0 for an all-Laplace log, :data:`privacct.accounting.DEFAULT_DELTA` with Gaussian releases).
* **calibration** (:data:`DEFAULT_CALIBRATION`): ``paper``, the printed noise constants -- what the
  paper claims is what a run shows and an audit tests; ``tight`` is asked for explicitly.
* **private-only flags** (:func:`refuse_inapplicable`): ``--epsilon``, ``--delta`` and
  ``--calibration`` mean nothing for ``--privacy none`` and are refused rather than ignored.
"""

from __future__ import annotations

import dataclasses

from privacct.errors import PrivacctError

from .contract import RunConfig
from .registry import get_learner

DEFAULT_CALIBRATION = "paper"
DEFAULT_EPSILON = 1.0


def private_models(algorithm: str) -> tuple[str, ...]:
    """The learner's private models (jdp, ldp), possibly none."""
    return tuple(p for p in get_learner(algorithm).privacy_models if p != "none")


def check_privacy(algorithm: str, privacy: str, *, arg: str = "--privacy") -> None:
    """One line when ``algorithm`` does not implement ``privacy`` (never an empty list of choices)."""
    spec = get_learner(algorithm)
    if privacy in spec.privacy_models:
        return
    models = ", ".join(spec.privacy_models)
    raise PrivacctError(f"{arg} must be one of {models} for {algorithm}, got {privacy!r}")


def default_delta(algorithm: str, privacy: str, config: RunConfig | None = None) -> float:
    """The claim's delta when none is given (module docstring); 0 for a non-private run."""
    if privacy == "none":
        return 0.0
    spec = get_learner(algorithm)
    from .settings import paper_setting

    setting = paper_setting(spec, privacy)
    if setting is not None:
        return float(setting.delta)
    from privacct.accounting import default_delta as log_default

    base = config if config is not None else RunConfig(algorithm, privacy=privacy)
    try:
        log = spec.build_log(dataclasses.replace(base, privacy=privacy, delta=0.0, calibration="paper"))
    except PrivacctError:
        log = None
    if log is None:
        return 0.0
    return log_default(dataclasses.replace(log, claim=None))


def refuse_inapplicable(privacy: str, given: dict[str, object]) -> None:
    """Refuse flags given (not None) that do not apply to a non-private run (module docstring)."""
    if privacy != "none":
        return
    named = [flag for flag, value in given.items() if value is not None]
    if named:
        verb = "applies" if len(named) == 1 else "apply"
        raise PrivacctError(f"{', '.join(named)} {verb} only to a private run (--privacy jdp or ldp); "
                            "--privacy none has no claim to set")


__all__ = ["DEFAULT_CALIBRATION", "DEFAULT_EPSILON", "check_privacy", "default_delta", "private_models",
           "refuse_inapplicable"]
