"""``reproduce`` writes its CSV/JSON/PNG outputs with certified-eps labels (tiny scale)."""

from __future__ import annotations

import csv
import json

import pytest

from privacct.algorithms.linear_mixture.reproduce import reproduce
from privacct.errors import PrivacctError
from privacct.results import check_results


@pytest.mark.slow
def test_reproduce_writes_outputs(tmp_path):
    out = reproduce(tmp_path, episodes=6, seeds=1)
    for name in out["files"]:
        assert (tmp_path / name).stat().st_size > 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == 6 and summary["seeds"] == 1
    panels = summary["fig2"]
    check_results([r for rows in list(panels.values()) + list(summary["own"].values()) for r in rows])
    assert {p.split(" [")[0] for p in panels} == {"riverswim-lm", "riverswim-lm-inhomogeneous", "hard-to-learn"}
    tight = [r for p, rows in panels.items() if "tight" in p for r in rows if r["privacy"] == "ldp"]
    # tight calibration certifies exactly the claim (up to the calibrator's rounding toward privacy)
    assert all(abs(r["accounted_epsilon"] - r["claimed_epsilon"]) <= 1e-6 * r["claimed_epsilon"] for r in tight)
    assert all("OUR OWN" in p for p in summary["own"])
    with (tmp_path / "fig2.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows and {"accounted_epsilon", "mean_cumulative_regret"} <= set(rows[0])
    assert set(summary["track_b"]) and all("order_holds" in p for p in summary["track_b"].values())
    text = (tmp_path / "README.md").read_text()   # one row per figure panel: claim, shown, certified eps
    for fig in ("| fig2.png |", "| own.png |", "| fig2_track_b.png |", "| own_track_b.png |"):
        assert fig in text


def test_reproduce_bad_arguments(tmp_path):
    with pytest.raises(PrivacctError, match="episodes"):
        reproduce(tmp_path, episodes=0)
    with pytest.raises(PrivacctError, match="seeds"):
        reproduce(tmp_path, seeds=-1)
