"""pytest plugin ``privacct_audit`` (entry point ``pytest11``): privacy audits as tests.

Use in a test::

    @pytest.mark.privacy_audit(epsilon=1.0, delta=0.0)
    def test_my_mechanism_is_private(privacy_audit):
        privacy_audit.mechanism(my_mechanism, dataset, neighbour)       # fails the test if eps_lb > eps
        privacy_audit.learner("ucb-vi", privacy="jdp", episodes=32)   # learner audit (AUDIT HOOK)

* marker ``privacy_audit(epsilon=, delta=, trials=, confidence=)``: the claim and budget of every
  audit the test runs through the fixture (keyword arguments of the call override the marker).
* fixture ``privacy_audit``: an :class:`Auditor` with ``mechanism(...)`` (:func:`privacct.audits.audit_mechanism`),
  ``learner(...)`` (:func:`privacct.audits.learner.audit_learner`) and ``check(result)``; each call returns
  the :class:`audits.AuditResult` and fails the test with a readable message (claimed eps, eps
  lower bound, the test, its counts) when the lower bound exceeds the claim.
* options ``--privacy-audit-trials N`` (overrides every audit's trials: the CI budget knob) and
  ``--privacy-audit-seed S`` (default 0; a call's explicit seed wins).

A summary of all audits run is printed at the end of the session.
"""

from __future__ import annotations

from typing import Any

import pytest

DEFAULT_TRIALS = 20_000  # mechanism audits: trials per side unless the call, marker or option says otherwise
DEFAULT_LEARNER_TRIALS = 1_000  # learner audits (each trial is one learner run per side)
_RESULTS = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("privacy-audit", "privacct empirical privacy audits")
    group.addoption("--privacy-audit-trials", type=int, default=None, metavar="N",
                    help="trials per side for every privacy audit (overrides the tests' own; >= 10)")
    group.addoption("--privacy-audit-seed", type=int, default=0, metavar="S",
                    help="seed of every privacy audit that does not fix its own (default 0)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "privacy_audit(epsilon=1.0, delta=0.0, trials=None, confidence=0.95): "
                                       "claimed privacy and budget of the audits run by the privacy_audit fixture")
    config.stash[_RESULTS] = []
    trials = config.getoption("--privacy-audit-trials", None)
    if trials is not None and trials < 10:
        raise pytest.UsageError(f"--privacy-audit-trials must be an integer >= 10, got {trials}")


class Auditor:
    """The ``privacy_audit`` fixture's object (see module docstring)."""

    def __init__(self, config: pytest.Config, marker_kwargs: dict[str, Any], nodeid: str) -> None:
        self._config = config
        self._marker = dict(marker_kwargs)
        self._nodeid = nodeid
        self.results: list = []

    def _settings(self, kwargs: dict[str, Any], trials: int = DEFAULT_TRIALS) -> dict[str, Any]:
        out = {"epsilon": 1.0, "delta": 0.0, "trials": trials, "confidence": 0.95,
               "seed": self._config.getoption("--privacy-audit-seed", 0)}
        out.update(self._marker)
        out.update(kwargs)
        forced = self._config.getoption("--privacy-audit-trials", None)
        if forced is not None:
            out["trials"] = forced
        return out

    def check(self, result) -> Any:
        """Record ``result`` and fail the test if it did not pass."""
        self.results.append(result)
        self._config.stash[_RESULTS].append((self._nodeid, result))
        if not result.passed:
            pytest.fail(_message(result), pytrace=False)
        return result

    def mechanism(self, mechanism, dataset, neighbour, **kwargs) -> Any:
        from privacct.audits import audit_mechanism
        s = self._settings(kwargs)
        s.setdefault("name", getattr(mechanism, "__name__", type(mechanism).__name__))
        return self.check(audit_mechanism(mechanism, dataset, neighbour, **s))

    def learner(self, algorithm: str, **kwargs) -> Any:
        from privacct.audits.learner import audit_learner
        s = self._settings(kwargs, trials=DEFAULT_LEARNER_TRIALS)
        return self.check(audit_learner(algorithm, **s))


def _message(result) -> str:
    lines = [
        f"privacy audit FAILED{': ' + result.name if getattr(result, 'name', '') else ''}",
        f"  claimed epsilon      : {result.claimed_epsilon:g} (delta = {result.delta:g})",
        f"  epsilon lower bound  : {result.epsilon_lower_bound:.4f} (confidence {result.confidence:g}, "
        f"{result.trials} trials per side, seed {result.seed})",
        f"  distinguishing test  : {result.test}",
    ]
    for direction, c in result.counts.items():
        lines.append(f"  counts {direction:<14}: TP={c['TP']} FP={c['FP']} TN={c['TN']} FN={c['FN']}")
    lines.append(f"  GDP estimate         : mu >= {result.mu_lower_bound:.4f} (valid only for Gaussian-DP mechanisms)")
    return "\n".join(lines)


@pytest.fixture
def privacy_audit(request: pytest.FixtureRequest) -> Auditor:
    """Run privacy audits inside a test; see :mod:`privacct.audits.pytest_plugin`."""
    marker = request.node.get_closest_marker("privacy_audit")
    kwargs = dict(marker.kwargs) if marker is not None else {}
    return Auditor(request.config, kwargs, request.node.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, [])
    if not results:
        return
    terminalreporter.section("privacy audits")
    for nodeid, r in results:
        verdict = "passed" if r.passed else "FAILED"
        terminalreporter.write_line(
            f"{verdict:6} eps_lb={r.epsilon_lower_bound:.4f} claimed={r.claimed_epsilon:g} "
            f"trials={r.trials} {r.seconds:.2f}s  {nodeid}{' [' + r.name + ']' if r.name else ''}")
