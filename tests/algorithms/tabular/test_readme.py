"""``privacct reproduce tabular``'s README: per-figure claims computed from the run (algorithms/tabular/readme.py)."""

from __future__ import annotations

import math

import pytest

from privacct.algorithms.tabular.readme import checks, noise_ratio, ordering_note, per_figure


def _r(privacy, eps, final, half, cal="tuned-noise", panel="Private-UCB-VI", scale=1.0, acc=None):
    return {"calibration": cal, "panel": panel, "privacy": privacy, "claimed_epsilon": eps, "final_regret_mean": final,
            "regret_at_half": half, "noise_scale": scale, "accounted_epsilon": acc if acc is not None else (eps or 0) * 7}


def _panel(jdp1=300.0, ldp1=500.0, jdp_half=250.0):
    return [_r("none", None, 100.0, 80.0), _r("jdp", 1.0, jdp1, jdp_half, scale=2.0), _r("jdp", 0.5, 400.0, 300.0, scale=4.0),
            _r("ldp", 1.0, ldp1, 300.0, scale=1.0), _r("ldp", 0.5, 700.0, 400.0, scale=2.0)]


def test_checks_follow_the_numbers():
    assert checks(_panel()) == {"a": True, "b": True, "c": True}
    assert checks(_panel(ldp1=290.0))["b"] is False                  # LDP below JDP at eps = 1
    assert checks(_panel(jdp1=450.0, ldp1=800.0))["c"] is False      # JDP regret rises with eps
    assert checks(_panel(jdp_half=150.0))["a"] is False              # second half adds more than the first


def test_noise_ratio_is_the_count_noise_std_ratio():
    # K = 2000: 1999 local reports vs floor(log2 1999) + 1 = 11 nodes
    assert noise_ratio(1.0, 1.0, 2000) == pytest.approx(math.sqrt(1999 / 11))
    assert noise_ratio(3.0, 3.0 * math.log(2000), 2000) == pytest.approx(math.sqrt(1999 / 11) / math.log(2000))


def test_per_figure_table_and_ordering_note():
    rows = _panel()
    table = per_figure(rows)
    assert len(table) == 3 and table[2].startswith("| figure2_tuned-noise.png | Private-UCB-VI | **yes** | **yes** | **yes**")
    note = " ".join(ordering_note(rows, 2000))
    assert f"**{noise_ratio(1.0, 2.0, 2000):.2f}**" in note
