"""The privacct_audit pytest plugin, exercised through pytester."""


# Load numpy/scipy and the auditor before pytester snapshots sys.modules: an in-process pytester run
# restores sys.modules afterwards, and numpy's C extension cannot be imported twice in one process.
import privacct.audits.mechanisms  # noqa: F401
import privacct.audits.runner  # noqa: F401

TEST_FILE = '''
import pytest
from privacct.audits.mechanisms import LaplaceMechanism


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
        from privacct.audits.mechanisms import NullMechanism

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
