"""Paper settings with provenance (privacct.algorithms.settings): every registered setting is typed,
every number says where it comes from, repairs are named where the privacy figures rely on them,
and an untyped dict is never read as printed."""

import pytest

from privacct.algorithms.registry import learners
from privacct.algorithms.settings import (PROVENANCE_FIELDS, PaperSetting, Provenance, as_paper_setting, choice,
                                          printed)
from privacct.errors import PrivacctError

SETTINGS = [(n, s) for n, spec in learners().items() for s in spec.paper_settings]


def test_every_registered_setting_is_typed_with_full_provenance():
    assert SETTINGS
    for name, s in SETTINGS:
        assert isinstance(s, PaperSetting), name
        assert [f for f, _ in s.provenance] == list(PROVENANCE_FIELDS)
        for _, p in s.provenance:
            assert p.kind in ("printed", "choice", "derived") and p.note.strip()


def test_printed_numbers_cite_where_they_are_printed():
    for name, s in SETTINGS:
        for f, p in s.provenance:
            if p.kind == "printed":
                assert any(w in p.note for w in ("Sec.", "Lemma", "Cor.", "Thm", "App.", "Eq.", "Rem.")), (name, f)


@pytest.mark.parametrize("name", ["ldp-ucrl-vtr", "pp-ucrl-vtr", "pp-ucrl-vtr-laplace", "pp-ucrl-vtr-plus",
                                  "private-lsvi-ucb"])
def test_the_lower_clip_repair_is_named(name):
    for s in learners()[name].paper_settings:
        assert any("clip" in r.name for r in s.repairs) and all(r.why for r in s.repairs)


@pytest.mark.parametrize("name", ["private-linopt-vi", "pp-ucrl-vtr", "private-lsvi-ucb", "batched-jdp-lsvi-ucb"])
def test_settings_of_papers_without_experiments_are_not_claims(name):
    for s in learners()[name].paper_settings:
        assert not s.claim_printed and s.provenance_of("episodes").kind == "choice"


def test_untyped_settings_are_never_printed_and_bad_ones_refused():
    s = as_paper_setting({"privacy": "jdp", "epsilon": 0.5, "delta": 1e-5, "episodes": 100})
    assert all(p.kind == "choice" for _, p in s.provenance) and not s.claim_printed
    with pytest.raises(PrivacctError, match="unknown key"):
        as_paper_setting({"privacy": "jdp", "eps": 0.5})
    with pytest.raises(PrivacctError, match="provenance"):
        PaperSetting("jdp", 1.0, 0.0, 10, {"epsilon": printed("Thm 1")})
    with pytest.raises(PrivacctError, match="provenance.kind"):
        Provenance("guessed", "x")
    full = {f: choice("x") for f in PROVENANCE_FIELDS}
    assert PaperSetting("jdp", 1.0, 0.0, 10, {**full, "epsilon": printed("Thm 1"), "delta": printed("Thm 1")}).claim_printed


def test_a_setting_holds_its_learners_run_config_whole():
    """Issue 22: a PaperSetting holds a RunConfig (its learner's, printed constants) plus its own fields; the loose
    form a family declares makes the same record, bound to each learner that takes the setting."""
    import dataclasses

    from privacct.algorithms.contract import RunConfig

    for name, s in SETTINGS:
        assert isinstance(s.config, RunConfig) and s.config.algorithm == name and s.config.calibration == "paper"
        assert s.run_config(name) is s.config and s.run_config() is s.config      # passed on whole, never re-spelled
        assert s.run_config(name, calibration="tight") == dataclasses.replace(s.config, calibration="tight")
        assert (s.privacy, s.epsilon, s.episodes, s.options) == (s.config.privacy, s.config.epsilon,
                                                                s.config.episodes, s.config.options)
        d = s.to_dict()
        assert "algorithm" not in d and "calibration" not in d
        assert {k: d[k] for k in ("privacy", "epsilon", "delta", "episodes", "env", "horizon", "bonus_scale")} == \
            {k: getattr(s.config, k) for k in ("privacy", "epsilon", "delta", "episodes", "env", "horizon", "bonus_scale")}
        assert d["options"] == dict(s.config.options)
    vi, po = learners()["private-linopt-vi"].paper_settings[0], learners()["private-linopt-po"].paper_settings[0]
    assert (vi.config.algorithm, po.config.algorithm) == ("private-linopt-vi", "private-linopt-po")   # one declaration
    full = {f: choice("x") for f in PROVENANCE_FIELDS}
    loose = PaperSetting("jdp", 0.5, 1e-5, 100, full, env="riverswim", horizon=3, options=(("e_scale", 0.5),))
    record = PaperSetting(RunConfig("ucb-vi", "jdp", 0.5, 1e-5, episodes=100, env="riverswim", horizon=3,
                                    options=(("e_scale", 0.5),)), full)
    assert loose.bound("ucb-vi") == record and loose.run_config("ucb-vi") == record.config
    assert as_paper_setting({"privacy": "jdp", "epsilon": 0.5}, "ucb-vi").config.algorithm == "ucb-vi"


def test_a_setting_is_refused_in_one_line_naming_the_paper_setting():
    full = {f: choice("x") for f in PROVENANCE_FIELDS}
    for args, needle in [(("jdp", -1.0, 0.0, 10), "paper setting epsilon must be a finite number > 0"),
                         (("jdp", 1.0, 1.0, 10), "paper setting delta must be in [0, 1)"),
                         (("jdp", 1.0, 0.0, 0), "paper setting episodes must be"),
                         (("none", 1.0, 0.0, 10), "paper setting privacy must be jdp or ldp")]:
        with pytest.raises(PrivacctError, match=needle.replace("[", r"\[").replace(")", r"\)")):
            PaperSetting(*args, full)


def test_the_paper_setting_of_a_privacy_model_is_read_from_the_spec_by_one_rule(monkeypatch):
    """``settings.paper_setting(spec, privacy)``: the first paper setting of the model (an untyped one read too, bound to
    the learner), the one rule the claim's default delta (algorithms/defaults.py) and a one-run audit's default K, H,
    environment and constants (audits/one_run_learner.py, ``privacct audit --one-run``) read."""
    import dataclasses

    from privacct.algorithms import registry
    from privacct.algorithms.defaults import default_delta
    from privacct.algorithms.settings import paper_setting
    from privacct.audits.one_run_learner import one_run_config

    spec = learners()["pp-ucrl-vtr"]
    assert paper_setting(spec, "jdp") is spec.paper_settings[0] and paper_setting(spec, "ldp") is spec.paper_settings[1]
    assert paper_setting(learners()["ucb-vi"], "none") is None
    loose = dataclasses.replace(spec, paper_settings=({"privacy": "ldp", "delta": 0.25, "episodes": 7, "horizon": 2},))
    s = paper_setting(loose, "ldp")
    assert s.algorithm == "pp-ucrl-vtr" and (s.delta, s.episodes) == (0.25, 7) and paper_setting(loose, "jdp") is None
    table = tuple((n, loose if n == spec.name else x) for n, x in learners().items())
    monkeypatch.setattr(registry, "_load", lambda: table)
    assert default_delta("pp-ucrl-vtr", "ldp") == 0.25
    cfg = one_run_config("pp-ucrl-vtr", privacy="ldp", delta=1e-5)
    assert (cfg.episodes, cfg.horizon, cfg.delta) == (7, 2, 1e-5)
