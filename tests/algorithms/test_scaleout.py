"""Seed chunks on any executor give the bytes of one batch (privacct.algorithms.scaleout); `reproduce`
and `report` on a loopback Dask cluster write the same bytes as locally."""

import json
import re
from pathlib import Path

import distributed
import numpy as np
import pytest

from privacct.algorithms import scaleout
from privacct.algorithms.contract import RunConfig
from privacct.algorithms.registry import get_learner, learners
from privacct.algorithms.scaleout import join, run_seeds, seed_chunks
from privacct.errors import PrivacctError
from privacct.rng import spawn_sequences

SEEDS = np.random.SeedSequence(3).spawn(5)
CASES = [("ucb-vi", "jdp"), ("ldp-ucrl-vtr", "ldp"), ("private-lsvi-ucb", "jdp")]


def _cfg(name, privacy, K=10):
    return RunConfig(name, privacy=privacy, epsilon=1.0, delta=1e-5, episodes=K)


def test_seed_chunks_cover_the_seeds_in_order():
    assert [list(r) for r in seed_chunks(5, 2)] == [[0, 1], [2, 3], [4]]
    assert [list(r) for r in seed_chunks(3, 8)] == [[0, 1, 2]]


@pytest.mark.parametrize("name,privacy", CASES)
def test_chunks_inline_equal_one_batch(name, privacy):
    spec, cfg = get_learner(name), _cfg(name, privacy)
    batch = spec.run(cfg, SEEDS)
    done = []
    chunked = run_seeds(spec, cfg, SEEDS, chunk_size=2, executor="inline", progress=done.append)
    assert chunked.regret.tobytes() == batch.regret.tobytes()
    assert chunked.log == batch.log and chunked.info["seed_chunks"] == 3
    assert done[-1] == cfg.episodes and done == sorted(done)


def test_chunks_on_a_loopback_dask_cluster_equal_one_batch():
    spec, cfg = get_learner("ucb-vi"), _cfg("ucb-vi", "jdp")
    batch = spec.run(cfg, SEEDS)
    with distributed.LocalCluster(n_workers=2, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        remote = run_seeds(spec, cfg, SEEDS, scheduler=cluster.scheduler_address, chunk_size=2)
    assert remote.regret.tobytes() == batch.regret.tobytes()


def test_join_refuses_chunks_that_ran_different_mechanisms():
    a = get_learner("ucb-vi").run(_cfg("ucb-vi", "jdp"), SEEDS[:1])
    b = get_learner("ucb-vi").run(_cfg("ucb-vi", "jdp", K=12), SEEDS[1:2])
    with pytest.raises(PrivacctError, match="different mechanism log"):
        join(a.config, [a, b])


def test_bad_chunk_size_and_scheduler_are_one_line_errors():
    spec, cfg = get_learner("ucb-vi"), _cfg("ucb-vi", "jdp")
    with pytest.raises(PrivacctError, match="chunk_size must be an integer >= 1"):
        run_seeds(spec, cfg, SEEDS, chunk_size=0, executor="inline")
    with pytest.raises(PrivacctError, match="scheduler"):
        run_seeds(spec, cfg, SEEDS, scheduler=42)


BATCH_CASES = [("ucb-vi", "jdp", 0.0), ("ucb-po", "ldp", 0.0), ("pp-ucrl-vtr", "jdp", 1e-5), ("ldp-ucrl-vtr", "ldp", 0.1),
         ("private-lsvi-ucb", "jdp", 1e-5), ("batched-jdp-lsvi-ucb", "jdp", 1e-5)]


@pytest.mark.parametrize("name, privacy, delta", BATCH_CASES)
def test_seed_chunks_give_bitwise_the_regret_of_one_batch_for_every_family(name, privacy, delta):
    cfg = RunConfig(name, privacy, delta=delta, episodes=12)
    seeds = spawn_sequences(9, 5)
    whole = learners()[name].run(cfg, seeds)
    chunked = scaleout.run_seeds(learners()[name], cfg, seeds, chunk_size=2, executor="inline")
    assert chunked.regret.tobytes() == np.asarray(whole.regret).tobytes() and chunked.log == whole.log


def test_run_seeds_is_the_local_run_without_a_cluster():
    cfg = RunConfig("ucb-vi", "jdp", episodes=6)
    seeds = spawn_sequences(1, 2)
    a = scaleout.run_seeds(learners()["ucb-vi"], cfg, seeds)
    assert np.array_equal(a.regret, learners()["ucb-vi"].run(cfg, seeds).regret) and a.ledger is not None


@pytest.mark.parametrize("address", ["", "not an address", "tcp://host", "http://x:1", "tcp://a:1\nverdict: holds"])
def test_bad_scheduler_addresses_are_refused(address):
    with pytest.raises(PrivacctError, match="--scheduler"):
        scaleout.check_scheduler(address)


def without_timings(obj):
    if isinstance(obj, dict):
        return {k: without_timings(v) for k, v in obj.items() if k not in ("seconds", "cpu_seconds", "generated", "elapsed_s")}
    if isinstance(obj, list):
        return [without_timings(v) for v in obj]
    return obj


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=None) as c:
        yield c.scheduler_address


def test_reproduce_on_a_cluster_writes_the_bytes_of_a_local_run(cluster, cli_tmp):
    from privacct.cli import run

    argv = ["reproduce", "tabular", "--seeds", "3", "--episodes", "4", "--quiet"]
    assert run(argv + ["--out", str(cli_tmp / "local")]) == 0
    assert run(argv + ["--out", str(cli_tmp / "dask"), "--scheduler", cluster]) == 0
    local, dask = cli_tmp / "local", cli_tmp / "dask"
    names = sorted(p.name for p in local.iterdir())
    assert names == sorted(p.name for p in dask.iterdir()) and "results.json" in names
    for name in names:
        if name in ("results.json", "manifest.json", "README.md"):
            continue
        assert (local / name).read_bytes() == (dask / name).read_bytes(), name
    timing = re.compile(r"\d+ s in all")   # the README's only wall-clock figure
    assert [timing.sub("", line) for line in (local / "README.md").read_text().splitlines()] == \
        [timing.sub("", line) for line in (dask / "README.md").read_text().splitlines()]
    a, b = (json.loads((d / "results.json").read_text()) for d in (local, dask))
    assert without_timings(a) == without_timings(b)


def test_report_rows_on_a_cluster_equal_local_rows(cluster, cli_tmp):
    from privacct.audits.report import ReportScale, make_report

    only = ["ucb-vi"]
    local = make_report(cli_tmp / "r-local", scale=ReportScale.tiny(), only=only, shown_dir="rep")
    with scaleout.connect(cluster):
        dask = make_report(cli_tmp / "r-dask", scale=ReportScale.tiny(), only=only, shown_dir="rep")
    assert scaleout.active_client() is None
    assert without_timings(local["rows"]) == without_timings(dask["rows"])
    assert any(r["audit"]["trials"] > 0 for r in dask["rows"])
    for name in ("report.md", "report.html"):   # the documents carry no clock time: the same bytes
        assert (cli_tmp / "r-local" / name).read_bytes() == (cli_tmp / "r-dask" / name).read_bytes(), name


@pytest.mark.parametrize("family, argv", [("linear-mdp", ["--seeds", "2", "--episodes", "16"]),
                                          ("linear-mixture", ["--seeds", "2", "--episodes", "6"])])
def test_linear_reproductions_on_a_cluster_write_the_bytes_of_a_local_run(family, argv, cluster, cli_tmp):
    from privacct.cli import run

    assert run(["reproduce", family, "--quiet", "--out", str(cli_tmp / "local")] + argv) == 0
    assert run(["reproduce", family, "--quiet", "--out", str(cli_tmp / "dask"), "--scheduler", cluster] + argv) == 0
    local, dask = cli_tmp / "local", cli_tmp / "dask"
    names = sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(dask).as_posix() for p in dask.rglob("*") if p.is_file())
    for name in names:
        if name == "manifest.json":
            continue
        a, b = (local / name).read_bytes(), (dask / name).read_bytes()
        if name.endswith(".json"):
            assert without_timings(json.loads(a)) == without_timings(json.loads(b)), name
        else:
            assert a == b, name


@pytest.mark.parametrize("name, privacy, delta, per_seed, shared", [
    ("private-lsvi-ucb", "jdp", 1e-5, ("n_updates", "floor_events"), ("cap", "switching_bound_thm11", "lam_tilde", "rho")),
    ("pp-ucrl-vtr", "jdp", 1e-5, ("non_pd_events",), ("noise_scales", "design", "env"))])
def test_merged_diagnostics_equal_the_batch_ones(name, privacy, delta, per_seed, shared):
    cfg = RunConfig(name, privacy, delta=delta, episodes=12)
    seeds = spawn_sequences(4, 5)
    whole = learners()[name].run(cfg, seeds)
    merged = scaleout.run_seeds(learners()[name], cfg, seeds, chunk_size=2, executor="inline", per_seed=per_seed,
                                shared=shared)
    assert merged.info["seed_chunks"] == 3
    for key in per_seed:
        assert np.array_equal(np.asarray(merged.info[key]), np.asarray(whole.info[key])), key
    for key in shared:
        assert json.dumps(merged.info[key], sort_keys=True, default=repr) == \
            json.dumps(whole.info[key], sort_keys=True, default=repr), key
    assert merged.regret.tobytes() == np.asarray(whole.regret, dtype=float).tobytes()


def test_bad_scheduler_is_refused_before_any_work(cli_tmp):
    from privacct.cli import run

    assert run(["reproduce", "linear-mdp", "--out", str(cli_tmp / "x"), "--scheduler", "no address"]) == 2
    assert run(["report", "--out", str(cli_tmp / "x"), "--scheduler", "tcp://"]) == 2
    assert not (cli_tmp / "x").exists()


@pytest.fixture
def cli_tmp(tmp_path) -> Path:
    return tmp_path
