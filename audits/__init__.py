"""privacct's empirical auditor: eps lower bounds from neighbouring-user simulations.

    from privacct.audits import audit_mechanism
    result = audit_mechanism(mechanism, dataset, neighbour, epsilon=1.0, delta=0.0,
                             trials=100_000, confidence=0.95, seed=0)

Every result carries a verdict, ``passes`` / ``fails`` / ``inconclusive``, decided with a power
criterion (:mod:`privacct.audits.power`): an audit passes only if it could have seen a violation of
the mechanism audited. A black-box mechanism needs ``leakier=`` (a leakier version of itself, e.g. its
noise scale halved: simulated power) or ``power=``; without them its audit is ``inconclusive`` unless it
fails.

Modules: :mod:`privacct.audits.bounds` (Clopper-Pearson, eps and GDP bounds), :mod:`privacct.audits.power`
(power criteria), :mod:`privacct.audits.statistics`, :mod:`privacct.audits.vector_statistics`
and :mod:`privacct.audits.testers` (tests chosen on one half, certified on the other),
:mod:`privacct.audits.catalog` (benchmark mechanisms with known privacy),
:mod:`privacct.audits.sampling` (chunks on processes or Dask), :mod:`privacct.audits.mechanism_audit` (the runner),
:mod:`privacct.audits.learner_audit` (learner audits through the AUDIT HOOK; :mod:`privacct.audits.action_power`, the
simulated power of its black-box action audit), :mod:`privacct.audits.suite`,
:mod:`privacct.audits.mutants` (planted bugs), :mod:`privacct.audits.cli` and :mod:`privacct.audits.pytest_plugin`;
:mod:`privacct.audits.one_run` (one-run audits: m canaries in ONE run, Steinke et al. and f-DP bounds; the bounds for
predictable guesses, ``predictable_epsilon_lower_bound`` and ``predictable_fdp_lower_bound``, exported here).
"""

from __future__ import annotations

import importlib

# Lazy exports (PEP 562): the pytest plugin (privacct.audits.pytest_plugin) is loaded by every pytest
# session of the project, so importing the package must not pull in scipy.stats or numpy work.
_EXPORTS = {
    "AuditResult": "mechanism_audit", "audit_mechanism": "mechanism_audit", "run_audit": "mechanism_audit",
    "PowerCheck": "power", "canonical_power": "power", "rates_power": "power", "structure_power": "power",
    "unknown_power": "power",
    "DeclaresPower": "protocols", "FixedPair": "protocols", "Mechanism": "protocols", "NeighbourGenerator": "protocols",
    "PairList": "protocols", "PropertyTester": "protocols", "ThresholdTester": "testers",
    "FdpBound": "one_run", "OneRunResult": "one_run", "best_guesses": "one_run", "fdp_epsilon_lower_bound": "one_run",
    "guess_grid": "one_run", "one_run_audit": "one_run", "one_run_audit_scores": "one_run", "one_run_power": "one_run",
    "steinke_epsilon_lower_bound": "one_run", "steinke_p_value": "one_run",
    "predictable_epsilon_lower_bound": "one_run", "predictable_fdp_lower_bound": "one_run",
    "one_run_action_audit": "one_run_actions", "OneRunActionResult": "one_run_actions",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
