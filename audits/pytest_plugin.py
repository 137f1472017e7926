"""pytest plugin ``privacct_audit`` (entry point ``pytest11``): privacy audits as tests.

Use in a test::

    @pytest.mark.privacy_audit(epsilon=1.0, delta=0.0)
    def test_my_mechanism_is_private(privacy_audit):
        privacy_audit.mechanism(my_mechanism, dataset, neighbour)       # fails the test unless "passes"
        privacy_audit.learner("ucb-vi", privacy="jdp", episodes=32)   # learner audit (AUDIT HOOK)

* marker ``privacy_audit(epsilon=, delta=, trials=, confidence=, allow_inconclusive=False)``: the
  claim and budget of every audit the test runs through the fixture (keyword arguments of the call
  override the marker). Its arguments are checked at COLLECTION (:func:`marker_problems`), for every
  test that carries the marker (on the function, its class or its module): keywords only, each in its
  range -- ``epsilon`` a finite number > 0, ``delta`` a number in [0, 1), ``trials`` an integer in
  [10, 2^53] or None, ``confidence`` a number in (0, 1), ``allow_inconclusive`` True or False -- and an
  unknown keyword is refused with the allowed ones. A bad marker is a collection error of its module, one
  line per test (``tests/test_x.py::test_y: @pytest.mark.privacy_audit: epsilon must be a finite number
  > 0, got -1``), so ``pytest --collect-only`` finds it before any audit runs; the same checks apply to
  these keywords given to ``mechanism(...)`` / ``learner(...)`` (the test fails with that line).
* no marker, or a marker without ``epsilon`` / ``delta``: the claim is the plugin's documented default
  (:data:`DEFAULT_CLAIM`: epsilon = 1, delta = 0, unless the call gives them), and the session summary
  names it on that audit's line (``default claim: epsilon=1 delta=0``) -- a test never audits an
  unstated claim silently.
* fixture ``privacy_audit``: an :class:`Auditor` with ``mechanism(...)`` (:func:`privacct.audits.audit_mechanism`),
  ``learner(...)`` (:func:`privacct.audits.learner_audit.audit_learner`: a learner name and the configuration as keywords,
  or a :class:`privacct.algorithms.contract.RunConfig` passed whole, whose claim is then the one audited) and
  ``check(result)``; each call returns
  the :class:`privacct.audits.AuditResult`. The test FAILS when the verdict is ``fails`` (the eps lower
  bound exceeds the claim: claimed eps, lower bound, the test, its counts) and also when it is
  ``inconclusive`` (the audit could not have seen a violation: the message names the trials per
  side it would need; for a black-box mechanism audited without ``leakier=`` or ``power=`` it says
  "no violation found; power unknown for this mechanism" and how to pass a leakier version), unless
  the test opts out explicitly with ``allow_inconclusive=True`` (marker or call keyword). Only
  ``passes`` lets a test through silently. ``mechanism(...)`` passes ``leakier=`` and ``power=`` on to
  :func:`privacct.audits.audit_mechanism`; privacct's own mechanisms (:mod:`privacct.audits.reference_mechanisms`)
  declare their power criterion and need neither.
* options ``--privacy-audit-trials N`` (overrides every audit's trials: the CI budget knob) and
  ``--privacy-audit-seed S`` (default 0; a call's explicit seed wins).

A summary of every audit run (its verdict) ends the session. Installing privacct loads this module
in EVERY pytest session of every project; it imports only pytest at load time and does nothing
(no stash entry, no summary section) in a session that never uses the fixture.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import pytest

DEFAULT_TRIALS = 20_000  # mechanism audits: trials per side unless the call, marker or option says otherwise
DEFAULT_LEARNER_TRIALS = 1_000  # learner audits given an explicit K (else the learner's audit setting's trials)
#: The claim of an audit whose marker and call leave it unstated (named in the session summary).
DEFAULT_CLAIM = {"epsilon": 1.0, "delta": 0.0}
DEFAULT_CONFIDENCE = 0.95
_RESULTS = pytest.StashKey[list]()
_OPT_OUT = "allow_inconclusive"
_MAX_TRIALS = 2**53


def _real(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool)


def _shown(v: Any) -> str:
    text = repr(v) if not (isinstance(v, int) and v.bit_length() > 64) else f"an integer of about {len(str(abs(v)))} digits"
    return text if len(text) <= 60 else text[:57] + "..."


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:   # an integer too large for a float
        return False


#: The marker's keywords: (allowed range said in the error, check).
MARKER_ARGS: dict[str, tuple[str, Any]] = {
    "epsilon": ("a finite number > 0", lambda v: _real(v) and _finite(v) and v > 0),
    "delta": ("a number in [0, 1)", lambda v: _real(v) and _finite(v) and 0 <= v < 1),
    "trials": ("an integer in [10, 2^53] or None (the default budget)",
               lambda v: v is None or (isinstance(v, Integral) and not isinstance(v, bool) and 10 <= v <= _MAX_TRIALS)),
    "confidence": ("a number in (0, 1)", lambda v: _real(v) and _finite(v) and 0 < v < 1),
    _OPT_OUT: ("True or False", lambda v: isinstance(v, bool)),
}


def argument_problems(kwargs: dict[str, Any], *, known_only: bool = False) -> list[str]:
    """One line per bad privacy_audit argument (its name and allowed range); ``known_only``: other keywords
    are let through (a call's own keywords: name, seed, leakier, ...)."""
    out = []
    for key, value in kwargs.items():
        if key not in MARKER_ARGS:
            if not known_only:
                out.append(f"unknown keyword {key!r}; allowed: {', '.join(MARKER_ARGS)}")
            continue
        what, ok = MARKER_ARGS[key]
        try:
            good = bool(ok(value))
        except (TypeError, ValueError, OverflowError):
            good = False
        if not good:
            out.append(f"{key} must be {what}, got {_shown(value)}")
    return out


def marker_problems(marker) -> list[str]:
    """The problems of one ``privacy_audit`` marker (positional arguments, unknown keywords, values out of range)."""
    out = []
    if marker.args:
        out.append(f"takes keyword arguments only ({', '.join(k + '=' for k in MARKER_ARGS)}), got "
                   f"{len(marker.args)} positional")
    return out + argument_problems(dict(marker.kwargs))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Collection-time check of every collected test's ``privacy_audit`` markers: a bad one turns the
    collector's report into a collection error, one line per test (module docstring)."""
    outcome = yield
    rep = outcome.get_result()
    if not rep.passed:
        return
    lines: list[str] = []
    for node in rep.result or ():
        if not isinstance(node, pytest.Item):
            continue
        for marker in node.iter_markers("privacy_audit"):
            for problem in marker_problems(marker):
                line = f"{node.nodeid}: @pytest.mark.privacy_audit: {problem}"
                if line not in lines:
                    lines.append(line)
    if lines:
        rep.outcome = "failed"
        rep.longrepr = "\n".join(lines)
        rep.result = []


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("privacy-audit", "privacct empirical privacy audits")
    group.addoption("--privacy-audit-trials", type=int, default=None, metavar="N",
                    help="trials per side for every privacy audit (overrides the tests' own; >= 10)")
    group.addoption("--privacy-audit-seed", type=int, default=0, metavar="S",
                    help="seed of every privacy audit that does not fix its own (default 0)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "privacy_audit(epsilon=1.0, delta=0.0, trials=None, confidence=0.95, "
                                       "allow_inconclusive=False): claimed privacy and budget of the audits run by the "
                                       "privacy_audit fixture")
    trials = config.getoption("--privacy-audit-trials", None)
    if trials is not None and trials < 10:
        raise pytest.UsageError(f"--privacy-audit-trials must be an integer >= 10, got {trials}")


class Auditor:
    """The ``privacy_audit`` fixture's object (see module docstring)."""

    def __init__(self, config: pytest.Config, marker_kwargs: dict[str, Any], nodeid: str, *,
                 has_marker: bool = True) -> None:
        self._config = config
        self._marker = dict(marker_kwargs)
        self._nodeid = nodeid
        self._has_marker = has_marker
        self._defaulted: dict[str, float] = {}
        self.results: list = []

    def _settings(self, kwargs: dict[str, Any], trials: int | None = DEFAULT_TRIALS,
                  record: Any = None) -> tuple[dict[str, Any], bool]:
        """(keyword arguments of the audit, whether an inconclusive verdict is allowed). ``record``: the RunConfig
        audited, whose claim is the audit's (a marker or call that states another one fails the test)."""
        problems = argument_problems(kwargs, known_only=True)
        if problems:
            pytest.fail(f"privacy_audit: {problems[0]}", pytrace=False)
        out = {**DEFAULT_CLAIM, "trials": trials, "confidence": DEFAULT_CONFIDENCE,
               "seed": self._config.getoption("--privacy-audit-seed", 0)}
        out.update(self._marker)
        out.update(kwargs)
        self._defaulted = {k: v for k, v in DEFAULT_CLAIM.items() if k not in self._marker and k not in kwargs}
        if record is not None:   # the record carries its claim
            for key in DEFAULT_CLAIM:
                stated = kwargs.get(key, self._marker.get(key))
                if stated is not None and stated != getattr(record, key):
                    pytest.fail(f"privacy_audit: {key}={stated!r} differs from the RunConfig's {key}="
                                f"{getattr(record, key)!r} (the record carries the claim audited)", pytrace=False)
                out.pop(key)
            self._defaulted = {}
        forced = self._config.getoption("--privacy-audit-trials", None)
        if forced is not None:
            out["trials"] = forced
        allow = out.pop(_OPT_OUT, False)
        return out, allow

    def check(self, result, *, allow_inconclusive: bool | None = None) -> Any:
        """Record ``result``; fail the test on ``fails``, and on ``inconclusive`` unless allowed
        (``allow_inconclusive`` here, else the marker's)."""
        if allow_inconclusive is None:
            allow_inconclusive = bool(self._marker.get(_OPT_OUT, False))
        self.results.append(result)
        if _RESULTS not in self._config.stash:
            self._config.stash[_RESULTS] = []
        defaults = ("" if not self._defaulted else
                    ("" if self._has_marker else "no privacy_audit marker; ") + "default claim: "
                    + " ".join(f"{k}={v:g}" for k, v in self._defaulted.items()))
        self._defaulted = {}
        self._config.stash[_RESULTS].append((self._nodeid, result, allow_inconclusive, defaults))
        if result.verdict == "fails" or (result.verdict == "inconclusive" and not allow_inconclusive):
            pytest.fail(_message(result), pytrace=False)
        return result

    def mechanism(self, mechanism, dataset, neighbour, **kwargs) -> Any:
        from privacct.audits import audit_mechanism
        s, allow = self._settings(kwargs)
        s.setdefault("name", getattr(mechanism, "__name__", type(mechanism).__name__))
        return self.check(audit_mechanism(mechanism, dataset, neighbour, **s), allow_inconclusive=allow)

    def learner(self, algorithm: Any, **kwargs) -> Any:
        """A learner audit (:func:`privacct.audits.learner_audit.audit_learner`) of ``algorithm``: a learner name with the
        configuration's fields as keywords, or a :class:`privacct.algorithms.contract.RunConfig` passed whole (its
        claim is the one audited; DEFAULT_LEARNER_TRIALS trials per side unless the test says)."""
        from privacct.algorithms.contract import RunConfig
        from privacct.audits.learner_audit import audit_learner
        # without episodes the learner's own audit setting supplies K, H, ... and its trials per side
        # (docs/auditing.md#audit-configurations); with episodes, DEFAULT_LEARNER_TRIALS unless the test says
        record = algorithm if isinstance(algorithm, RunConfig) else None
        s, allow = self._settings(kwargs, trials=DEFAULT_LEARNER_TRIALS if "episodes" in kwargs or record is not None else None,
                                  record=record)
        return self.check(audit_learner(algorithm, **s), allow_inconclusive=allow)

    def one_run(self, algorithm: Any, **kwargs) -> Any:
        """A ONE-RUN audit of a learner (:func:`privacct.audits.one_run_learner.one_run_audit_learner`;
        docs/auditing.md#one-run-audits): one run with ``canaries`` canary users (default 1000, at most K - 1); fails on a bound above
        the claim or above the learner's own accounted eps (the code leaks more than its log). ``algorithm``: a
        learner name with keywords (``canaries``, the configuration), or a RunConfig passed whole."""
        from privacct.algorithms.contract import RunConfig
        from privacct.audits.one_run_learner import one_run_audit_learner
        s, allow = self._settings(kwargs, trials=None, record=algorithm if isinstance(algorithm, RunConfig) else None)
        s.pop("trials", None)
        r = one_run_audit_learner(algorithm, **s)
        if not r.sandwich_ok:
            pytest.fail(f"privacy audit FAILED (one-run audit): {r.summary()}", pytrace=False)
        return self.check(r, allow_inconclusive=allow)

    def one_run_actions(self, algorithm: Any, **kwargs) -> Any:
        """The one-run ACTION audit of a JDP learner (:func:`privacct.audits.one_run_actions.one_run_action_audit`;
        docs/auditing.md#one-run-action-audits): fails when its bound exceeds the claim or the learner's own accounted
        eps. It has no power criterion, so ``inconclusive`` is its best outcome and does not fail the test by itself.
        ``algorithm``: a learner name with keywords (``canaries``, ``window``, ``mutant``, the configuration), or a
        RunConfig passed whole."""
        from privacct.algorithms.contract import RunConfig
        from privacct.audits.one_run_actions import one_run_action_audit
        s, _ = self._settings(kwargs, trials=None, record=algorithm if isinstance(algorithm, RunConfig) else None)
        s.pop("trials", None)
        r = self.check(one_run_action_audit(algorithm, **s), allow_inconclusive=True)   # recorded, fails on "fails"
        if not r.sandwich_ok:
            pytest.fail(f"privacy audit FAILED (one-run action audit): {r.summary()}", pytrace=False)
        return r

    def billboard(self, algorithm: Any, **kwargs) -> Any:
        """The billboard check of a JDP learner (:func:`privacct.audits.billboard.billboard_check`;
        docs/auditing.md#the-billboard-check): fails when coupled runs with equal releases prescribe users 2..K
        different actions. ``algorithm``: a learner name with keywords, or a RunConfig passed whole."""
        from privacct.algorithms.contract import RunConfig
        from privacct.audits.billboard import billboard_check
        s, allow = self._settings(kwargs, trials=None, record=algorithm if isinstance(algorithm, RunConfig) else None)
        if s.get("trials") is None:
            s.pop("trials", None)
        return self.check(billboard_check(algorithm, **s), allow_inconclusive=allow)


def _kind(result) -> str:
    """"billboard", "one-run", "one-run-actions" or "audit" (a many-trial audit): how a result is reported."""
    from privacct.audits.one_run_actions import OneRunActionResult
    from privacct.audits.one_run_learner import OneRunLearnerResult

    if getattr(result, "check", "") == "billboard":
        return "billboard"
    if isinstance(result, OneRunActionResult):
        return "one-run-actions"
    return "one-run" if isinstance(result, OneRunLearnerResult) else "audit"


def _message(result) -> str:
    head = {"fails": "FAILED", "inconclusive": "INCONCLUSIVE", "passes": "passed"}[result.verdict]
    if _kind(result) == "billboard":
        return f"privacy audit {head} (billboard check): {result.summary()}"
    if _kind(result) == "one-run":
        return f"privacy audit {head} (one-run audit): {result.summary()}"
    if _kind(result) == "one-run-actions":
        return f"privacy audit {head} (one-run action audit): {result.summary()}"
    lines = [
        f"privacy audit {head}{': ' + result.name if getattr(result, 'name', '') else ''}",
        f"  claimed epsilon      : {result.claimed_epsilon:g} (delta = {result.delta:g})",
        f"  epsilon lower bound  : {result.epsilon_lower_bound:.4f} (confidence {result.confidence:g}, "
        f"{result.trials} trials per side, seed {result.seed})",
        f"  distinguishing test  : {result.test}",
    ]
    for direction, c in result.counts.items():
        lines.append(f"  counts {direction:<14}: TP={c['TP']} FP={c['FP']} TN={c['TN']} FN={c['FN']}")
    lines.append(f"  GDP estimate         : mu >= {result.mu_lower_bound:.4f} (valid only for Gaussian-DP mechanisms)")
    p = result.power
    lines.append(f"  power ({p.criterion}): {p.description}")
    if result.verdict == "inconclusive":
        opt_out = f"to accept an inconclusive audit, opt out explicitly with {_OPT_OUT}=True (marker or call)"
        if p.criterion == "unknown":
            lines.append(f"  {result.reason}: a black-box mechanism passes only with power against a leakier version "
                         f"of itself: pass leakier=<the same mechanism with its noise scale halved> (or power=...); "
                         f"{opt_out}")
        elif p.trials_needed is not None:
            lines.append(f"  the audit could not have seen a violation: it needs about {p.trials_needed} trials per "
                         f"side (trials=... or --privacy-audit-trials); {opt_out}")
        else:
            lines.append(f"  the audit could not have seen a violation (the power criterion gives no trial count; see "
                         f"above: more trials, trials=... or --privacy-audit-trials); {opt_out}")
    return "\n".join(lines)


@pytest.fixture
def privacy_audit(request: pytest.FixtureRequest) -> Auditor:
    """Run privacy audits inside a test; see :mod:`privacct.audits.pytest_plugin`."""
    marker = request.node.get_closest_marker("privacy_audit")
    kwargs = dict(marker.kwargs) if marker is not None else {}
    return Auditor(request.config, kwargs, request.node.nodeid, has_marker=marker is not None)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    results = config.stash.get(_RESULTS, None)
    if not results:
        return
    terminalreporter.section("privacy audits")
    for nodeid, r, allowed, defaults in results:
        verdict = {"passes": "passes", "fails": "FAILS", "inconclusive": "INCONCLUSIVE"}[r.verdict]
        if _kind(r) in ("one-run", "one-run-actions"):
            actions = _kind(r) == "one-run-actions"
            claimed = r.claimed_epsilon if actions else r.bound.claimed_epsilon
            terminalreporter.write_line(f"{verdict:12} one-run {'action ' if actions else ''}audit: "
                                        f"eps_lb={r.epsilon_lower_bound:.4f} claimed={claimed:g} canaries={r.canaries} "
                                        + (f"guesses={r.guesses} " if actions else "")
                                        + f"accounted={r.accounted_epsilon:.4f} {r.seconds:.2f}s  {nodeid}"
                                        + (f" ({defaults})" if defaults else ""))
            continue
        if _kind(r) == "billboard":
            terminalreporter.write_line(f"{verdict:12} billboard check: {r.differing} of {r.trials} coupled trials "
                                        f"differ (P <= {r.p_upper:.3g}){' (allowed)' if allowed and r.verdict == 'inconclusive' else ''}"
                                        f"  {nodeid}")
            continue
        extra = ""
        if r.verdict == "inconclusive":
            extra = (f" needs~{r.power.trials_needed}" if r.power.trials_needed is not None
                     else " power=unknown" if r.power.criterion == "unknown" else " needs=?") + \
                    (" (allowed)" if allowed else "")
        terminalreporter.write_line(
            f"{verdict:12} eps_lb={r.epsilon_lower_bound:.4f} claimed={r.claimed_epsilon:g} "
            f"trials={r.trials}{extra} {r.seconds:.2f}s  {nodeid}{' [' + r.name + ']' if r.name else ''}"
            + (f" ({defaults})" if defaults else ""))
