"""The privacct_audit pytest plugin, exercised through pytester."""


# Load numpy/scipy and the auditor before pytester snapshots sys.modules: an in-process pytester run
# restores sys.modules afterwards, and numpy's C extension cannot be imported twice in one process.
import privacct.audits.reference_mechanisms  # noqa: F401
import privacct.audits.mechanism_audit  # noqa: F401

TEST_FILE = '''
import pytest
from privacct.audits.reference_mechanisms import LaplaceMechanism


@pytest.mark.privacy_audit(epsilon=1.0)
def test_correct_laplace(privacy_audit):
    r = privacy_audit.mechanism(LaplaceMechanism(1.0), 0.0, 1.0)
    assert r.trials == TRIALS


@pytest.mark.privacy_audit(epsilon=1.0)
def test_half_noise_laplace(privacy_audit):
    privacy_audit.mechanism(LaplaceMechanism(0.5), 0.0, 1.0)
'''


def test_plugin_passes_correct_and_fails_broken_with_readable_message(pytester):
    pytester.makepyfile(TEST_FILE.replace("TRIALS", "30000"))
    result = pytester.runpytest("-p", "no:hypothesispytest", "--privacy-audit-trials", "30000",
                                "--privacy-audit-seed", "3")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*privacy audit FAILED*",
        "*claimed epsilon      : 1 (delta = 0)*",
        "*epsilon lower bound  : 1.*",
        "*distinguishing test  : value*",
        "*counts D vs D'*TP=*FP=*TN=*FN=*",
        "*privacy audits*",
    ])


def test_plugin_options_reach_the_audit(pytester):
    pytester.makepyfile('''
        from privacct.audits.reference_mechanisms import NullMechanism

        def test_seed_and_trials(privacy_audit):
            r = privacy_audit.mechanism(NullMechanism(), 0, 1)
            assert (r.seed, r.trials, r.epsilon_lower_bound) == (5, 200, 0.0)
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest", "--privacy-audit-trials=200", "--privacy-audit-seed=5")
    result.assert_outcomes(passed=1)


def test_plugin_rejects_tiny_budget(pytester):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:hypothesispytest", "--privacy-audit-trials=3")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--privacy-audit-trials must be an integer >= 10*"])


def test_marker_is_registered(pytester):
    result = pytester.runpytest("-p", "no:hypothesispytest", "--markers")
    result.stdout.fnmatch_lines(["*privacy_audit(epsilon=1.0*"])


INCONCLUSIVE_FILE = '''
import pytest
from privacct.audits.reference_mechanisms import LaplaceMechanism

WEAK = dict(epsilon=1.0, trials=50)  # true eps 4, but 50 trials cannot see a violation of 1


def test_weak_audit_fails_the_test(privacy_audit):
    privacy_audit.mechanism(LaplaceMechanism(0.25), 0.0, 1.0, **WEAK)


@pytest.mark.privacy_audit(allow_inconclusive=True)
def test_weak_audit_allowed_by_marker(privacy_audit):
    r = privacy_audit.mechanism(LaplaceMechanism(0.25), 0.0, 1.0, **WEAK)
    assert r.verdict == "inconclusive"


def test_weak_audit_allowed_by_call(privacy_audit):
    r = privacy_audit.mechanism(LaplaceMechanism(0.25), 0.0, 1.0, allow_inconclusive=True, **WEAK)
    assert r.verdict == "inconclusive"


def test_strong_audit_passes(privacy_audit):
    assert privacy_audit.mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=2000).verdict == "passes"
'''


def test_inconclusive_audit_fails_unless_the_test_opts_out(pytester):
    from privacct.audits import audit_mechanism
    from privacct.audits.reference_mechanisms import LaplaceMechanism

    need = audit_mechanism(LaplaceMechanism(0.25), 0.0, 1.0, epsilon=1.0, trials=50).power.trials_needed
    pytester.makepyfile(INCONCLUSIVE_FILE)
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*privacy audit INCONCLUSIVE*",
        f"*the audit could not have seen a violation: it needs about {need} trials per side*allow_inconclusive=True*",
        "*privacy audits*",
    ])
    # the plugin's section only: pytest's own "short test summary info" after it repeats the failure
    # message, and whether it is cut to the terminal width depends on the machine
    summary = result.stdout.str().split("privacy audits")[-1].split("short test summary info")[0]
    assert summary.count("INCONCLUSIVE") == 3 and summary.count("(allowed)") == 2
    assert "passes" in summary and f"needs~{need}" in summary


BLACKBOX_FILE = '''
import functools

import numpy as np
import pytest


def my_mechanism(dataset, rng, size, noise=1.0):  # a user's black box: f(D) + Lap(noise), eps = 1 / noise
    return dataset + rng.laplace(0.0, noise, size=size)


@pytest.mark.privacy_audit(epsilon=1.0, trials=20_000)
def test_black_box_without_leakier(privacy_audit):
    privacy_audit.mechanism(my_mechanism, 0.0, 1.0)


@pytest.mark.privacy_audit(epsilon=1.0, trials=20_000)
def test_black_box_with_leakier(privacy_audit):
    r = privacy_audit.mechanism(my_mechanism, 0.0, 1.0, leakier=functools.partial(my_mechanism, noise=0.5))
    assert r.verdict == "passes" and r.power.criterion == "leakier-simulated"
'''


def test_black_box_needs_a_leakier_version_to_pass(pytester):
    pytester.makepyfile(BLACKBOX_FILE)
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*privacy audit INCONCLUSIVE*",
        "*no violation found; power unknown for this mechanism: a black-box mechanism passes only with power "
        "against a leakier version of itself: pass leakier=*allow_inconclusive=True*",
    ])
    summary = result.stdout.str().split("privacy audits")[-1].split("short test summary info")[0]
    assert "INCONCLUSIVE" in summary and "power=unknown" in summary and "passes" in summary


def test_plugin_is_inert_in_a_session_that_does_not_use_it(tmp_path):
    """Installed, the plugin loads in every pytest session: it must import nothing heavy, stash nothing and
    print no section when no test uses it."""
    import os
    import subprocess
    import sys

    (tmp_path / "test_plain.py").write_text(
        "import sys\n"
        "def test_plain(request):\n"
        "    from privacct.audits.pytest_plugin import _RESULTS\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith('privacct'))\n"
        "    assert loaded == ['privacct', 'privacct.audits', 'privacct.audits.pytest_plugin'], loaded\n"
        "    heavy = [m for m in ('numpy', 'scipy', 'matplotlib', 'distributed') if m in sys.modules]\n"
        "    assert not heavy, heavy\n"
        "    assert _RESULTS not in request.config.stash\n")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "privacct.audits.pytest_plugin",
                           "--rootdir", str(tmp_path), str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout and "privacy audits" not in proc.stdout


BAD_MARKERS_FILE = '''
import pytest

pytestmark = []


@pytest.mark.privacy_audit(epsilon=-1)
def test_negative_epsilon(privacy_audit):
    raise AssertionError("never runs: a bad marker stops collection")


@pytest.mark.privacy_audit(epsilon=float("nan"), delta=1.0)
def test_nan_epsilon_and_delta_one():
    pass


@pytest.mark.privacy_audit(trials=5, confidence=1.5, allow_inconclusive="yes")
def test_three_bad_values():
    pass


@pytest.mark.privacy_audit(trials=True)
def test_boolean_trials():
    pass


@pytest.mark.privacy_audit(epsilom=1.0)
def test_unknown_keyword():
    pass


@pytest.mark.privacy_audit(1.0)
def test_positional():
    pass


@pytest.mark.privacy_audit(epsilon=1.0, delta=1e-5, trials=None, confidence=0.9, allow_inconclusive=True)
def test_good_marker():
    pass
'''


def test_bad_markers_are_collection_errors_naming_the_argument_and_its_range(pytester):
    pytester.makepyfile(test_markers=BAD_MARKERS_FILE)
    result = pytester.runpytest("-p", "no:hypothesispytest", "--collect-only")
    assert result.ret == 2   # pytest's "errors during collection"
    out = result.stdout.str()
    expected = [
        "test_markers.py::test_negative_epsilon: @pytest.mark.privacy_audit: epsilon must be a finite number > 0, got -1",
        "test_markers.py::test_nan_epsilon_and_delta_one: @pytest.mark.privacy_audit: epsilon must be a finite number > 0, "
        "got nan",
        "test_markers.py::test_nan_epsilon_and_delta_one: @pytest.mark.privacy_audit: delta must be a number in [0, 1), got 1.0",
        "test_markers.py::test_three_bad_values: @pytest.mark.privacy_audit: trials must be an integer in [10, 2^53] or None "
        "(the default budget), got 5",
        "test_markers.py::test_three_bad_values: @pytest.mark.privacy_audit: confidence must be a number in (0, 1), got 1.5",
        "test_markers.py::test_three_bad_values: @pytest.mark.privacy_audit: allow_inconclusive must be True or False, "
        "got 'yes'",
        "test_markers.py::test_boolean_trials: @pytest.mark.privacy_audit: trials must be an integer in [10, 2^53] or None "
        "(the default budget), got True",
        "test_markers.py::test_unknown_keyword: @pytest.mark.privacy_audit: unknown keyword 'epsilom'; allowed: epsilon, "
        "delta, trials, confidence, allow_inconclusive",
        "test_markers.py::test_positional: @pytest.mark.privacy_audit: takes keyword arguments only (epsilon=, delta=, "
        "trials=, confidence=, allow_inconclusive=), got 1 positional",
    ]
    lines = out.splitlines()
    for line in expected:
        assert line in lines, (line, out)
    assert "test_good_marker" not in out.split("ERROR collecting")[-1].split("short test summary")[0]


def test_a_bad_marker_on_a_module_or_class_is_caught_for_each_test(pytester):
    pytester.makepyfile(test_module_marker='''
        import pytest

        pytestmark = pytest.mark.privacy_audit(delta=-0.5)

        def test_a():
            pass

        class TestB:
            def test_b(self):
                pass
    ''', test_class_marker='''
        import pytest

        @pytest.mark.privacy_audit(confidence=0)
        class TestC:
            def test_c(self):
                pass
    ''', test_fine='''
        import pytest

        @pytest.mark.privacy_audit(epsilon=2)
        def test_fine():
            pass
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest", "--continue-on-collection-errors")
    result.stdout.fnmatch_lines([
        "test_class_marker.py::TestC::test_c: @pytest.mark.privacy_audit: confidence must be a number in (0, 1), got 0",
        "test_module_marker.py::test_a: @pytest.mark.privacy_audit: delta must be a number in [0, 1), got -0.5",
    ])   # (the module's collection stops at its first error: TestB is not collected, hence not listed)
    result.assert_outcomes(passed=1, errors=2)   # the good module still runs


def test_without_a_marker_the_default_claim_is_used_and_named_in_the_summary(pytester):
    pytester.makepyfile('''
        import pytest
        from privacct.audits.reference_mechanisms import NullMechanism

        def test_no_marker(privacy_audit):
            assert privacy_audit.mechanism(NullMechanism(), 0, 1).claimed_epsilon == 1.0

        @pytest.mark.privacy_audit(epsilon=2.0)
        def test_epsilon_only(privacy_audit):
            assert privacy_audit.mechanism(NullMechanism(), 0, 1).claimed_epsilon == 2.0

        @pytest.mark.privacy_audit(epsilon=1.0, delta=0.0)
        def test_full_claim(privacy_audit):
            privacy_audit.mechanism(NullMechanism(), 0, 1)

        def test_claim_in_the_call(privacy_audit):
            privacy_audit.mechanism(NullMechanism(), 0, 1, epsilon=1.0, delta=0.0)

        def test_bad_call_keyword(privacy_audit):
            privacy_audit.mechanism(NullMechanism(), 0, 1, confidence=2)
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest", "--privacy-audit-trials=200")
    result.assert_outcomes(passed=4, failed=1)
    summary = result.stdout.str().split("privacy audits")[-1].split("short test summary info")[0]
    lines = {ln.split("::")[1].split()[0]: ln for ln in summary.splitlines() if "::" in ln}
    assert lines["test_no_marker"].endswith("(no privacy_audit marker; default claim: epsilon=1 delta=0)")
    assert lines["test_epsilon_only"].endswith("(default claim: delta=0)")
    assert "default claim" not in lines["test_full_claim"] and "default claim" not in lines["test_claim_in_the_call"]
    result.stdout.fnmatch_lines(["*privacy_audit: confidence must be a number in (0, 1), got 2*"])


def test_plugin_billboard_check_passes_faithful_and_fails_a_policy_leak(pytester):
    pytester.makepyfile('''
        import pytest

        LEAKY = dict(episodes=4, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),), trials=32)

        def test_faithful(privacy_audit):
            r = privacy_audit.billboard("ucb-vi", **LEAKY)
            assert r.verdict == "passes" and r.trials == 32

        def test_policy_leak(privacy_audit):
            privacy_audit.billboard("ucb-vi", mutant="bonus-on-exact-counts", **LEAKY)
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*privacy audit FAILED (billboard check)*billboard step of the proof fails*",
                                 "*privacy audits*", "*passes*billboard check: 0 of 32*",
                                 "*FAILS*billboard check: * of 32*"])


def test_plugin_one_run_audit_fails_a_leaky_learner_and_reports_it(pytester):
    pytester.makepyfile('''
        import pytest

        @pytest.mark.privacy_audit(epsilon=1.0, allow_inconclusive=True)
        def test_faithful(privacy_audit):
            r = privacy_audit.one_run("ucb-vi", privacy="ldp", calibration="tight", canaries=200, episodes=201,
                                      horizon=1)
            assert r.verdict in ("passes", "inconclusive") and r.canaries == 200

        @pytest.mark.privacy_audit(epsilon=1.0)
        def test_printed_constants(privacy_audit):
            privacy_audit.one_run("ucb-vi", privacy="ldp", calibration="paper", canaries=1000, episodes=1001,
                                  horizon=1)
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*privacy audit FAILED (one-run audit): one-run audit FAILS*",
                                 "*privacy audits*", "*one-run audit: eps_lb=*canaries=200*",
                                 "*FAILS*one-run audit: eps_lb=*canaries=1000*"])


def test_plugin_one_run_action_audit_fails_a_policy_leak_and_lets_a_faithful_learner_through(pytester):
    """privacy_audit.one_run_actions: inconclusive is its best outcome (no power criterion), so a faithful learner's
    test passes even without allow_inconclusive; the planted policy leak fails it; both are in the session summary."""
    pytester.makepyfile('''
        import pytest

        LEAKY = dict(episodes=129, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),), calibration="tight")

        @pytest.mark.privacy_audit(epsilon=1.0)
        def test_faithful(privacy_audit):
            r = privacy_audit.one_run_actions("ucb-vi", canaries=16, **LEAKY)
            assert r.verdict == "inconclusive" and r.guesses == 0

        @pytest.mark.privacy_audit(epsilon=1.0)
        def test_leak(privacy_audit):
            privacy_audit.one_run_actions("ucb-vi", canaries=32, mutant="bonus-on-exact-counts", **LEAKY)
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*privacy audit FAILED (one-run action audit)*", "*privacy audits*",
                                 "*INCONCLUSIVE*one-run action audit: *guesses=0*",
                                 "*FAILS*one-run action audit: *canaries=32*"])


def test_plugin_learner_audit_takes_a_run_config_whole(pytester):
    """Issue 22: ``privacy_audit.learner(config)`` audits the RunConfig's own claim; a marker or call that states
    another claim fails the test in one line (the record carries it)."""
    pytester.makepyfile('''
        import pytest
        from privacct.algorithms.contract import RunConfig

        CONFIG = RunConfig("ucb-vi", "ldp", epsilon=1.0, delta=0.0, calibration="tight", episodes=4, horizon=1)

        @pytest.mark.privacy_audit(epsilon=1.0, allow_inconclusive=True)
        def test_record(privacy_audit):
            r = privacy_audit.learner(CONFIG, trials=200, executor="inline")
            assert r.config is CONFIG and r.trials == 200 and r.claimed_epsilon == 1.0

        @pytest.mark.privacy_audit(epsilon=0.5)
        def test_other_claim(privacy_audit):
            privacy_audit.learner(CONFIG, trials=200, executor="inline")
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*privacy_audit: epsilon=0.5 differs from the RunConfig's epsilon=1.0*"])
    summary = result.stdout.str().split("privacy audits")[-1]
    assert "default claim" not in summary


def test_plugin_one_run_audit_takes_a_run_config_whole(pytester):
    """``privacy_audit.one_run(config)`` audits the RunConfig passed whole (its claim is the audit's; a marker stating
    another fails the test in one line), as ``.learner`` and ``.one_run_actions`` do."""
    pytester.makepyfile('''
        import pytest
        from privacct.algorithms.contract import RunConfig

        CONFIG = RunConfig("ucb-vi", "ldp", epsilon=1.0, delta=0.0, calibration="tight", episodes=65, horizon=1)

        @pytest.mark.privacy_audit(epsilon=1.0, allow_inconclusive=True)
        def test_record(privacy_audit):
            r = privacy_audit.one_run(CONFIG, canaries=64)
            assert r.config is CONFIG and r.canaries == 64 and r.bound.claimed_epsilon == 1.0

        @pytest.mark.privacy_audit(epsilon=0.5)
        def test_other_claim(privacy_audit):
            privacy_audit.one_run(CONFIG, canaries=64)
    ''')
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*privacy_audit: epsilon=0.5 differs from the RunConfig's epsilon=1.0*"])
    assert "default claim" not in result.stdout.str().split("privacy audits")[-1]
