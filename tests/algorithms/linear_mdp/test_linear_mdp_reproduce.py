"""``reproduce`` for the linear-MDP family writes labelled figures and a consistent summary."""

import json

import pytest

from privacct.algorithms.linear_mdp.reproduce import LABEL, reproduce
from privacct.errors import PrivacctError
from privacct.log import MechanismLog
from privacct.results import check_results


def test_reproduce_small(tmp_path):
    reproduce(tmp_path, full=False, seeds=1, episodes=40, eps_grid=[1.0])
    for f in ("regret_vs_episode.png", "paper_vs_tight.png", "switches.png", "summary.json"):
        assert (tmp_path / f).stat().st_size > 0
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data["label"] == LABEL and "own experiment" in LABEL
    check_results(data["runs"])                   # the one results schema (privacct/schemas/results.schema.json)
    rows = {(r["algorithm"], r["calibration"]): r for r in data["runs"]}
    assert rows[("private-lsvi-ucb", "paper")]["verdict"] == "FAILS"
    assert rows[("private-lsvi-ucb", "tight")]["accounted_epsilon"] <= 1.0 * (1 + 1e-9)
    for name in ("private-lsvi-ucb", "batched-jdp-lsvi-ucb"):
        assert rows[(name, "tight")]["verdict"] == "holds"
    r = rows[("private-lsvi-ucb", "tight")]
    assert max(r["n_updates"]) <= r["cap"]
    text = (tmp_path / "README.md").read_text()   # per figure: claim, shown (computed), certified eps
    assert "| paper_vs_tight.png | private-lsvi-ucb [paper] | the printed sigma meets the claim | **no** (FAILS)" in text
    assert "| paper_vs_tight.png | private-lsvi-ucb [tight] | certified eps <= claimed eps (calibrated) | **yes**" in text
    assert "| switches.png | private-lsvi-ucb [tight] eps = 1 |" in text
    logs = sorted((tmp_path / "logs").glob("*.json"))
    assert len(logs) == 4 and MechanismLog.load(logs[0]).claim.epsilon == 1.0


def test_reproduce_bad_arguments(tmp_path):
    with pytest.raises(PrivacctError, match="episodes"):
        reproduce(tmp_path, episodes=3)
    with pytest.raises(PrivacctError, match="seeds"):
        reproduce(tmp_path, seeds=0)
    with pytest.raises(PrivacctError, match="eps_grid"):
        reproduce(tmp_path, episodes=40, eps_grid=[-1.0])
