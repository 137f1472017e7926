"""privacct audit / privacct mutants: JSON output and exit codes."""

import json

import pytest

from privacct.cli import main


def test_audit_json_and_exit_zero(capsys):
    rc = main(["audit", "ucb-vi", "--privacy", "jdp", "--epsilon", "1", "--calibration", "tight", "--episodes", "4",
               "--horizon", "1", "--trials", "4000", "--observe", "released", "--json", "--seed", "1"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["verdict"] == "passes" and d["power"]["has_power"] is True
    assert d["power"]["criterion"] == "learner-oracle"
    assert d["claimed_epsilon"] == 1.0 and 0.0 <= d["epsilon_lower_bound"] <= d["accounted_epsilon"]
    assert d["trials"] == 4000 and d["seed"] == 1


def test_audit_too_small_for_the_learner_is_inconclusive(capsys):
    # the learner's own criterion (exact privacy-loss distribution at 2 x claim) needs ~2900 trials per side here
    rc = main(["audit", "ucb-vi", "--privacy", "jdp", "--calibration", "tight", "--episodes", "4", "--horizon", "1",
               "--trials", "200", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 3 and d["verdict"] == "inconclusive" and d["power"]["trials_needed"] > 200


def test_audit_exit_one_when_the_audit_fails(capsys, monkeypatch):
    import privacct.audits.learner_audit
    from privacct.audits.reference_mechanisms import LaplaceMechanism
    from privacct.audits import audit_mechanism

    failing = audit_mechanism(LaplaceMechanism(0.25), 0.0, 1.0, epsilon=1.0, trials=10_000)
    monkeypatch.setattr(privacct.audits.learner_audit, "audit_learner", lambda *a, **k: failing)
    rc = main(["audit", "ucb-vi", "--privacy", "jdp", "--trials", "100"])
    assert rc == 1 and "privacy audit FAILS" in capsys.readouterr().out


def test_audit_exit_three_when_inconclusive_and_names_the_trials_needed(capsys, monkeypatch):
    import privacct.audits.learner_audit
    from privacct.audits.reference_mechanisms import LaplaceMechanism
    from privacct.audits import audit_mechanism

    weak = audit_mechanism(LaplaceMechanism(0.25), 0.0, 1.0, epsilon=1.0, trials=50)  # true eps 4, 50 trials
    assert weak.verdict == "inconclusive"
    monkeypatch.setattr(privacct.audits.learner_audit, "audit_learner", lambda *a, **k: weak)
    rc = main(["audit", "ucb-vi", "--privacy", "jdp", "--trials", "50"])
    out = capsys.readouterr().out
    assert rc == 3 and "privacy audit INCONCLUSIVE" in out
    # LaplaceMechanism declares its power criterion from its exact privacy-loss distribution
    assert f"needs about {weak.power.trials_needed} trials per side" in out and "exact-loss-2x" in out
    rc = main(["audit", "ucb-vi", "--privacy", "jdp", "--trials", "50", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 3 and d["verdict"] == "inconclusive" and d["power"]["trials_needed"] == weak.power.trials_needed


def _capture_audit(monkeypatch) -> dict:
    """Replace audit_learner by a recorder of the RunConfig it is passed (its fields, options as pairs) and of its
    keyword arguments (a passing result)."""
    import types

    import privacct.audits.learner_audit
    from privacct.algorithms.contract import RunConfig

    seen: dict = {}

    def fake(config, **kw):
        assert isinstance(config, RunConfig), "the command passes the record it validated, whole"
        seen.update({**kw, **config.to_dict(), "options": config.options})
        return types.SimpleNamespace(verdict="passes", sandwich_ok=True, summary=lambda: "privacy audit passes",
                                     to_dict=lambda: {})
    monkeypatch.setattr(privacct.audits.learner_audit, "audit_learner", fake)
    return seen


@pytest.mark.parametrize("algorithm, privacy", [("ucb-vi", "jdp"), ("pp-ucrl-vtr", "ldp"), ("private-lsvi-ucb", "jdp")])
def test_audit_defaults_to_the_learners_audit_setting(algorithm, privacy, monkeypatch, capsys):
    from privacct.algorithms.registry import get_learner

    seen = _capture_audit(monkeypatch)
    assert main(["audit", algorithm, "--privacy", privacy, "--json"]) == 0
    own = get_learner(algorithm).audit_configuration()
    assert (seen["episodes"], seen["horizon"], seen["env"], seen["bonus_scale"], tuple(seen["options"]), seen["trials"]) \
        == (own.episodes, own.horizon, own.env, own.bonus_scale, own.options, own.trials)
    d = json.loads(capsys.readouterr().out)
    assert (d["episodes"], d["horizon"], d["env"], d["bonus_scale"]) == (own.episodes, own.horizon, own.env, own.bonus_scale)
    assert [tuple(o) for o in d["options"]] == list(own.options)


def test_audit_flags_override_the_setting_and_options_merge_on_top(monkeypatch, capsys):
    seen = _capture_audit(monkeypatch)
    assert main(["audit", "private-lsvi-ucb", "--privacy", "jdp", "--episodes", "7", "--horizon", "3", "--trials", "50",
                 "--option", "C=2", "--option", "p=0.5"]) == 0
    assert (seen["episodes"], seen["horizon"], seen["trials"]) == (7, 3, 50)
    assert dict(seen["options"]) == {"beta": 1e6, "C": 2, "p": 0.5, "update_cap": 1}   # the setting's beta, update_cap kept
    assert main(["audit", "ucb-vi", "--privacy", "jdp", "--episodes", "9"]) == 0
    assert (seen["episodes"], seen["horizon"], seen["trials"]) == (9, 1, 100_000)


@pytest.mark.parametrize("algorithm, privacy, calibration, counter", [
    ("ucb-vi", "jdp", "tight", "tree-honaker"), ("ucb-vi", "jdp", "paper", "tree"),
    ("private-lsvi-ucb", "jdp", "tight", "blt"), ("pp-ucrl-vtr", "ldp", "paper", None)])
def test_audit_summary_names_the_counter_audited(algorithm, privacy, calibration, counter, monkeypatch, capsys):
    """Issue 23: the one-line summary names the continual counter the audited run ran (the report's rule,
    audits/report/rows.py counter_of; docs/auditing.md#factorized-counters); a learner without one (LDP) names none.
    --json carries it as "counter"."""
    _capture_audit(monkeypatch)
    argv = ["audit", algorithm, "--privacy", privacy, "--calibration", calibration]
    assert main(argv) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("privacy audit passes")
    if counter is None:
        assert "counter audited" not in line
    else:
        assert line.endswith(f"; counter audited: {counter}")
    assert main(argv + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counter"] == counter


def test_billboard_summary_names_the_counter_audited(capsys):
    assert main(["audit", "ucb-vi", "--privacy", "jdp", "--calibration", "tight", "--billboard", "--episodes", "4",
                 "--horizon", "2", "--trials", "10", "--quiet"]) == 3
    assert capsys.readouterr().out.strip().endswith("; counter audited: tree-honaker")


def test_audit_option_is_checked_by_the_learner(capsys):
    assert main(["audit", "ucb-vi", "--privacy", "jdp", "--option", "nope=1", "--trials", "10"]) == 2
    assert "unknown option(s) nope" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["audit", "ucb-vi", "--privacy", "jdp", "--option", "novalue"])
    assert e.value.code == 2 and "KEY=VALUE" in capsys.readouterr().err


def test_audit_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("0 passes", "1 fails", "3 inconclusive", "2 bad input", "--option KEY=VALUE",
                   "default to the learner's audit setting", "default: the learner's audit setting's K"):
        assert needle in text


@pytest.mark.parametrize("argv", [
    ["audit", "no-such-learner", "--privacy", "jdp"],
    ["audit", "ucb-vi", "--privacy", "jdp", "--trials", "3"],
    ["audit", "ucb-vi", "--privacy", "jdp", "--epsilon", "-1"],
    ["audit", "ucb-vi", "--privacy", "jdp", "--confidence", "1.5"],
    ["mutants", "--only", "no-such-mutant"],
])
def test_bad_input_exits_two(argv, capsys):
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err


def test_argparse_errors_exit_two():
    with pytest.raises(SystemExit) as e:
        main(["audit", "ucb-vi", "--privacy", "central"])
    assert e.value.code == 2


def test_mutants_json(capsys):
    rc = main(["mutants", "--json", "--only", "noise-shared-across-pairs", "ldp-not-clipped-below", "--trials", "20000"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert [d["name"] for d in out] == ["noise-shared-across-pairs", "ldp-not-clipped-below"]
    for d in out:
        assert d["caught_by"] and set(d["caught_by"]) <= {"accountant", "ledger", "audit"}
        assert set(d["epsilons"]) == {"accountant", "ledger", "audit"}


def test_memory_check_measures_the_audits_own_sample_when_the_bound_does_not_fit():
    """The learner's width bound counts every coordinate of every node (34 GiB for 2e6 trials at ucb-vi K = 5,
    H = 2); the audit keeps the coordinates the canaries move, about 20 times fewer: measured on the pilot, the
    audit fits. A size that does not fit even so is refused in one line naming the flags."""
    import argparse

    from privacct.audits.cli import check_audit_memory
    from privacct.audits.learner_audit import learner_config
    from privacct.errors import PrivacctError

    cfg = learner_config("ucb-vi", privacy="jdp", calibration="paper", episodes=5, horizon=2)
    args = argparse.Namespace(trials=2_000_000, episodes=5, horizon=2, observe="released", fresh_users=False,
                              scheduler=None)
    check_audit_memory(cfg, args)                                        # fits once measured
    with pytest.raises(PrivacctError, match="--trials 200000000 x --episodes 5 x --horizon 2 needs about"):
        check_audit_memory(cfg, argparse.Namespace(**{**vars(args), "trials": 200_000_000}))
