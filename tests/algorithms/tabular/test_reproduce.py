"""``privacct reproduce tabular`` (algorithms/tabular/reproduce.py): the curves do not depend on how many processes
run them (each run is whole in one process), and a track list is checked."""

import json

import numpy as np
import pytest

from privacct.algorithms.tabular.reproduce import reproduce
from privacct.errors import PrivacctError


def _figures(out, summary):
    s = json.loads(json.dumps(summary))
    s.pop("seconds")
    for r in s["results"]:
        r.pop("seconds")
        r.pop("cpu_seconds")
    curves = np.load(out / "curves.npz")
    return s, {k: curves[k].tobytes() for k in curves.files}


def test_process_pool_gives_the_inline_figures(tmp_path):
    kw = dict(seeds=2, episodes=24, tracks=("paper",))
    one = _figures(tmp_path / "one", reproduce(tmp_path / "one", workers=1, **kw))
    two = _figures(tmp_path / "two", reproduce(tmp_path / "two", workers=2, **kw))
    assert one == two
    s = one[0]
    assert [r["calibration"] for r in s["results"]] == ["paper"] * 10
    assert [(r["algorithm"], r["privacy"], r["claimed_epsilon"]) for r in s["eps_sweep"]][:3] == [
        ("ucb-po", "none", None), ("ucb-po", "jdp", 1.0), ("ucb-po", "jdp", 10.0)]


@pytest.mark.parametrize("tracks", [(), ("paper", "paper"), ("papers",)])
def test_tracks_are_checked(tmp_path, tracks):
    with pytest.raises(PrivacctError, match="tracks must be"):
        reproduce(tmp_path, seeds=1, episodes=4, tracks=tracks)


@pytest.mark.parametrize("workers", [0, 65, 2.5, True])
def test_workers_are_checked_before_anything_is_written(tmp_path, workers):
    """workers in [1, MAX_WORKERS] (64; `privacct reproduce --workers` states the same range): a bad value is refused
    before the output folder is made."""
    with pytest.raises(PrivacctError, match=r"workers must be an integer in \[1, 64\]"):
        reproduce(tmp_path / "out", seeds=1, episodes=4, workers=workers)
    assert not (tmp_path / "out").exists()


def test_workers_shrink_to_the_runs_that_fit_in_memory(monkeypatch):
    import privacct.resources as R
    from privacct.algorithms.tabular import reproduce as RP
    from privacct.rng import spawn_sequences

    runs = [("x", "ucb-vi", RP._config("ucb-vi", "jdp", 1.0, "paper", 2000), spawn_sequences(0, 20))] * 3
    monkeypatch.setattr(R, "available_bytes", lambda: 2 * RP.PROCESS_BYTES + (RP.PROCESS_BYTES >> 1))
    assert RP._fitting(8, runs) == 2
    monkeypatch.setattr(R, "available_bytes", lambda: 1)
    assert RP._fitting(8, runs) == 1
    monkeypatch.setattr(R, "available_bytes", lambda: None)   # unknown: as asked
    assert RP._fitting(8, runs) == 8
