"""The learner registry: every learner comes from the ``privacct.learners`` entry-point group
(privacct.algorithms.registry). A third party registers with one entry-point line and nothing else names
its learner: the commands read everything off its spec (audit setting, memory model, report scale,
reproduction), with defaults where it says nothing.

Fake plugins are entry points added to the real ones (``registry._entry_points`` patched) whose value
names a module written under ``tmp_path``; the cache is forgotten (``registry.reload()``) before and
after every test so that no fake learner leaks into other tests.
"""

from __future__ import annotations

import sys
import textwrap
from importlib import metadata

import pytest

from privacct.algorithms import registry
from privacct.cli import main
from privacct.errors import PrivacctError

SHIPPED = {"ucb-vi", "ucb-po", "ldp-ucrl-vtr", "private-lsvi-ucb"}

#: A minimal third-party learner: zero regret, no log without privacy, declares nothing optional.
PLUGIN = '''
import numpy as np

from privacct.algorithms.contract import LearnerSpec, RunResult


def build_log(config):
    return None


def run(config, seeds, *, audit=None, progress=None):
    return RunResult(config, np.zeros((len(seeds), config.episodes)), None, None)


def reproduce(out_dir, *, full=False, seeds=None, episodes=None, progress=False):
    from pathlib import Path

    (Path(out_dir) / "figure.txt").write_text(f"episodes={{episodes}}\\n")


LEARNERS = {{
    "{name}": LearnerSpec(name="{name}", family="{family}", paper="a third party's", privacy_models=("none", "jdp"),
                          default_env="zero", description="a plugin learner of the registry tests",
                          build_log=build_log, run_batch=run, test_settings=(("episodes", 3),), reproduce={reproduce}),
}}
'''


@pytest.fixture
def plugins(monkeypatch, tmp_path):
    """``install(entry_name, module, source=None, attr="LEARNERS")``: one more entry point of the group, whose
    module ``module`` (written under tmp_path from ``source``) is imported when the registry loads."""
    original = registry._entry_points
    added: list[metadata.EntryPoint] = []
    modules: list[str] = []
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_entry_points", lambda: original() + added)

    def install(entry_name: str, module: str, source: str | None = None, attr: str = "LEARNERS") -> None:
        if source is not None:
            (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        modules.append(module)
        added.append(metadata.EntryPoint(entry_name, f"{module}:{attr}", registry.GROUP))
        registry.reload()

    registry.reload()
    yield install
    monkeypatch.undo()
    for m in modules:
        sys.modules.pop(m, None)
    registry.reload()


def plugin_source(name: str = "plugin-zero", family: str = "plugin-family", reproduce: str | None = None) -> str:
    return PLUGIN.format(name=name, family=family, reproduce=repr(reproduce))


def test_a_plugin_entry_point_adds_a_learner_everywhere(plugins, capsys, tmp_path):
    plugins("plugin", "privacct_test_plugin_zero", plugin_source())
    table = registry.learners()
    assert "plugin-zero" in table and SHIPPED <= set(table)
    assert registry.get_learner("plugin-zero").family == "plugin-family"
    assert [s.name for s in registry.families()["plugin-family"]] == ["plugin-zero"]
    assert "plugin-family" not in registry.reproducible_families()     # it declares no reproduction
    with pytest.raises(SystemExit) as e:
        main(["run", "--help"])
    assert e.value.code == 0
    assert "plugin-zero" in capsys.readouterr().out
    # it runs through the command like a shipped learner, with the generic memory model
    rc = main(["run", "plugin-zero", "--episodes", "3", "--seeds", "2", "--out", str(tmp_path / "run"), "--json",
               "--quiet"])
    assert rc == 0, capsys.readouterr().err
    assert (tmp_path / "run" / "curves.npz").exists()


def test_a_plugin_learner_gets_the_defaults_of_every_declaration(plugins):
    from privacct.algorithms.contract import AuditSetting, RunConfig
    from privacct.algorithms.memory import generic_memory, run_estimate
    from privacct.audits.report import ReportScale
    from privacct.audits.suite import audit_setting, paper_failures, planted_noise_bugs, suite

    plugins("plugin", "privacct_test_plugin_defaults", plugin_source())
    spec = registry.get_learner("plugin-zero")
    a = audit_setting("plugin-zero", "jdp")
    assert (a.episodes, a.trials) == (3, AuditSetting.DEFAULT_TRIALS)                  # its test_settings
    assert ("plugin-zero", "jdp") in {(x.algorithm, x.privacy) for x in suite()}
    assert {x.algorithm for x in paper_failures() + planted_noise_bugs()} <= SHIPPED | {"pp-ucrl-vtr"}
    assert ReportScale.default().regret_episodes(spec, 10_000) == 300
    assert ReportScale.tiny().regret_episodes(spec, 10_000) == 8
    assert ReportScale.full().regret_episodes(spec, 10_000) == 10_000
    cfg = RunConfig("plugin-zero", episodes=100)
    assert run_estimate(spec, cfg, 4, runner=False).total == 8 * 4 * 100 + sum(generic_memory(cfg, 4, False).values())


def test_a_plugin_reproduction_is_listed_and_runs_under_a_heartbeat(plugins, tmp_path, capsys):
    plugins("plugin", "privacct_test_plugin_figure", plugin_source(reproduce="privacct_test_plugin_figure:reproduce"))
    assert registry.reproducible_families()["plugin-family"] == "privacct_test_plugin_figure:reproduce"
    assert {"tabular", "linear-mixture", "linear-mdp"} <= set(registry.reproducible_families())
    out = tmp_path / "figure"
    assert main(["reproduce", "plugin-family", "--episodes", "5", "--out", str(out), "--quiet"]) == 0
    assert (out / "figure.txt").read_text() == "episodes=5\n"


def test_a_broken_plugin_is_skipped_with_one_warning(plugins, capsys):
    plugins("broken", "privacct_test_plugin_broken", "raise RuntimeError('the plugin needs a GPU')\n")
    plugins("absent", "privacct_test_no_such_module_xyz")
    table = registry.learners()
    assert SHIPPED <= set(table)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("privacct: warning: ") for line in err)
    assert "'broken'" in err[0] and "RuntimeError: the plugin needs a GPU" in err[0] and "skipped" in err[0]
    assert "'absent'" in err[1] and "ModuleNotFoundError" in err[1]
    registry.learners()                                     # cached: warned once, not at every call
    assert capsys.readouterr().err == ""
    with pytest.raises(PrivacctError, match="algorithm must be one of"):
        registry.get_learner("nope")


def test_a_duplicate_learner_name_is_an_error_naming_both_entry_points(plugins):
    plugins("dup-family", "privacct_test_plugin_dup", plugin_source(name="ucb-vi", family="tabular-clone"))
    with pytest.raises(PrivacctError, match="defined twice") as e:
        registry.learners()
    message = str(e.value)
    assert "'ucb-vi'" in message and "'tabular'" in message and "'dup-family'" in message
    assert "privacct.algorithms.tabular:LEARNERS" in message and "privacct_test_plugin_dup:LEARNERS" in message


def test_a_plugin_naming_no_learner_is_refused(plugins):
    plugins("bad", "privacct_test_plugin_bad", "LEARNERS = 42\n")
    with pytest.raises(PrivacctError, match="must name a LearnerSpec"):
        registry.learners()


def test_missing_own_entry_points_ask_for_a_reinstall(plugins, monkeypatch):
    plugins("plugin", "privacct_test_plugin_alone", plugin_source())
    third_party_only = [ep for ep in registry._entry_points()
                        if ep.dist is None or ep.dist.name != registry.OWN_DISTRIBUTION]
    monkeypatch.setattr(registry, "_entry_points", lambda: third_party_only)
    registry.reload()
    with pytest.raises(PrivacctError, match="reinstall privacct"):
        registry.learners()
    monkeypatch.setattr(registry, "_entry_points", lambda: [])
    registry.reload()
    with pytest.raises(PrivacctError, match=r"metadata is stale.*pip install -e \."):
        registry.learners()
