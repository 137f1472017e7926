"""What ``tight`` chose, recorded on the log (privacct.counters.choice.TightChoice): every JDP learner with a continual
counter says it, the choice the counter that runs, and where no proxy ranks the counters the tree is kept and the
record says so (issue 21: "Where the proxy cannot rank strategies, keep the tree and say so")."""

from __future__ import annotations

import pytest

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.registry import get_learner
from privacct.counters.choice import TightChoice, tree_kept
from privacct.log import MechanismLog


def test_the_record_round_trips_and_prints_its_line():
    c = tree_kept("because")
    assert c.line() == "tree: tree kept: because" and not c.ranked and c.strategy == c.reference == "tree"
    assert TightChoice.from_params(c.to_params()) == c


@pytest.mark.parametrize("algorithm, extra", [
    ("pp-ucrl-vtr", {}), ("pp-ucrl-vtr-plus", {}), ("private-linopt-vi", {}), ("private-linopt-po", {}),
    ("batched-jdp-lsvi-ucb", {"options": (("batches", 4),)}),
])
def test_a_tight_log_that_keeps_the_tree_says_so_and_runs_the_tree(algorithm, extra, tmp_path):
    spec = get_learner(algorithm)
    log = spec.build_log(RunConfig(algorithm, "jdp", epsilon=1.0, delta=1e-5, calibration="tight", episodes=50, **extra))
    choice = TightChoice.from_params(log.params["tight_choice"])
    assert choice.strategy == "tree" and not choice.ranked and choice.line().startswith("tree: tree kept: ")
    assert all(g.structure.kind == "tree" for g in log.release_groups if g.structure.kind in ("tree", "factorized"))
    log.save(tmp_path / "log.json")
    assert TightChoice.from_params(MechanismLog.load(tmp_path / "log.json").params["tight_choice"]) == choice


@pytest.mark.parametrize("algorithm, extra", [("pp-ucrl-vtr", {}), ("batched-jdp-lsvi-ucb", {"options": (("batches", 4),)})])
def test_no_record_where_tight_chose_nothing(algorithm, extra):
    """The printed constants, and a counter the user named, are not tight's choice: no record."""
    spec = get_learner(algorithm)
    base = RunConfig(algorithm, "jdp", epsilon=1.0, delta=1e-5, episodes=50, **extra)
    assert "tight_choice" not in spec.build_log(base).params                       # paper
    named = RunConfig(algorithm, "jdp", epsilon=1.0, delta=1e-5, calibration="tight", episodes=50,
                      options=tuple(extra.get("options", ())) + (("counter", "blt"),))
    assert "tight_choice" not in spec.build_log(named).params


@pytest.mark.parametrize("algorithm", ["ucb-vi", "ucb-po"])
def test_the_tabular_choice_ranks_by_the_e_terms(algorithm):
    """Tabular JDP tight: the counter of least worst-prefix variance m at the claim (the bonus's E terms scale with
    b sqrt(m)); the record names it, the tree's m (its depth) and the chosen m, which is below it."""
    from privacct.log import tree_depth

    K = 300
    log = get_learner(algorithm).build_log(RunConfig(algorithm, "jdp", epsilon=1.0, calibration="tight", episodes=K))
    choice = TightChoice.from_params(log.params["tight_choice"])
    assert choice.ranked and choice.strategy == log.params["counter"] != "tree"
    assert choice.figure("m_tree") == tree_depth(K - 1) and 0 < choice.figure("m_chosen") < choice.figure("m_tree")
    assert choice.line().startswith(f"{choice.strategy}: least worst-prefix variance")
