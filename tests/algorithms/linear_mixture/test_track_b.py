"""Track B of ``privacct reproduce linear-mixture`` (algorithms/linear_mixture/track_b.py): the curves
separate by eps in the paper's order at small scale, every label states the certified eps, and the
noise that runs is the printed sigma divided by the track's divisor."""

from __future__ import annotations

import math

import pytest

from privacct.algorithms.linear_mixture import track_b as TB
from privacct.algorithms.linear_mixture.readme import readme
from privacct.algorithms.linear_mixture.reproduce import track_b
from privacct.rng import spawn_sequences


def test_order_holds_needs_the_reference_lowest_and_regret_falling_with_eps():
    assert TB.order_holds([(None, 10.0), (0.1, 30.0), (1.0, 20.0), (10.0, 15.0)])
    assert not TB.order_holds([(None, 10.0), (0.1, 30.0), (1.0, 31.0), (10.0, 15.0)])   # inverted pair
    assert not TB.order_holds([(None, 16.0), (0.1, 30.0), (1.0, 20.0), (10.0, 15.0)])   # reference not lowest
    assert not TB.order_holds([(None, 10.0), (0.1, 20.0), (1.0, 20.0)])                  # ties do not separate


@pytest.mark.slow
def test_seed_001_track_b_separates_by_eps_in_the_papers_order(tmp_path):
    K = 1000
    res = track_b(tmp_path, K, spawn_sequences(2024, 2), False, envs=("riverswim-lm",), seed_000=False)
    (panel,) = res.values()
    rows = panel["rows"]
    assert [r["figure_epsilon"] for r in rows] == [None, *TB.FIGURE_EPS]
    finals = [r["final_mean"] for r in rows]
    assert panel["order_holds"], finals
    for r in rows[1:]:
        # seed 001 Sec. 6.2: sigma = 4H sqrt(2 log(2.5H/delta))/eps (rewards / H), at the claim eps x divisor
        H = 6
        printed = 4 * H * math.sqrt(2 * math.log(2.5 * H / TB.DELTA_001)) / r["figure_epsilon"]
        assert all(s == pytest.approx(printed / TB.DIVISOR_001, rel=1e-12) for s in r["noise_scales"].values())
        assert r["accounted_epsilon"] > r["figure_epsilon"]          # the noise that ran certifies more than the figure's eps
        assert f"certified eps={r['accounted_epsilon']:.3g}" in r["legend"]
        assert r["options"]["shift_scale"] == TB.SHIFT_SCALE
    assert (tmp_path / "fig2_track_b.png").stat().st_size > 0
    assert (tmp_path / "track_b.csv").read_text().count("\n") > 4


@pytest.mark.slow
def test_seed_000_track_b_separates_by_eps(tmp_path):
    res = track_b(tmp_path, 1000, spawn_sequences(2024, 2), False, envs=(), seed_000=True)
    (panel,) = res.values()
    assert panel["order_holds"], [r["final_mean"] for r in panel["rows"]]
    assert (tmp_path / "own_track_b.png").stat().st_size > 0


def _row(privacy, eps, final, slope, cert=None):
    return {"privacy": privacy, "claimed_epsilon": eps, "final_mean": final, "loglog_slope_second_half": slope,
            "accounted_epsilon": cert, "delta": 0.1}


def test_readme_states_per_figure_what_the_run_shows():
    good = [_row("none", None, 30.0, 0.6), _row("ldp", 0.1, 90.0, 0.8, 0.5), _row("ldp", 1.0, 60.0, 0.7, 5.0)]
    bad = [_row("none", None, 30.0, 0.6), _row("ldp", 0.1, 60.0, 1.0, 0.5), _row("ldp", 1.0, 90.0, 1.0, 5.0)]
    s = {"episodes": 100, "seeds": 1, "root_seed": 0, "fig2": {"good": good, "bad": bad}, "own": {}}
    text = readme(s)
    good_line = next(line for line in text.splitlines() if "| good |" in line)
    bad_line = next(line for line in text.splitlines() if "| bad |" in line)
    assert "order by eps: **yes**" in good_line and "sublinear: **yes**" in good_line
    assert "order by eps: **no**" in bad_line and "sublinear: **no**" in bad_line
    assert "0.5, 5 (delta = 0.1)" in good_line and "REDUCED" in text
