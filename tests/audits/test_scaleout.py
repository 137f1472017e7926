"""Chunked sampling: the same seed gives the same result inline, on processes and on Dask."""

import distributed
import numpy as np
import pytest

from privacct.audits import audit_mechanism, sampling
from privacct.audits.reference_mechanisms import GaussianMechanism, LaplaceMechanism
from privacct.errors import PrivacctError

KW = dict(trials=24_000, seed=11, chunk_size=5000)


def test_plan_is_independent_of_executor():
    assert sampling.plan(12, 5) == [5, 5, 2]
    assert sampling.plan(10, 5) == [5, 5]


def test_inline_equals_processes():
    a = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, executor="inline", **KW)
    b = audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, executor="processes", workers=2, **KW)
    assert b.executor == "processes" and a.executor == "inline"
    assert a.epsilon_lower_bound == b.epsilon_lower_bound and a.counts == b.counts and a.test == b.test


def test_auto_falls_back_inline_for_unpicklable_mechanisms():
    r = audit_mechanism(lambda d, rng, n: d + rng.laplace(size=n), 0.0, 1.0, trials=40_000, chunk_size=2000)
    assert r.executor == "inline"


def test_dask_local_cluster_equals_inline():
    a = audit_mechanism(GaussianMechanism(1.0), np.zeros(3), np.ones(3), delta=1e-5, executor="inline", **KW)
    with distributed.LocalCluster(n_workers=1, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        b = audit_mechanism(GaussianMechanism(1.0), np.zeros(3), np.ones(3), delta=1e-5,
                            scheduler=cluster.scheduler_address, **KW)
    assert b.executor == "dask"
    assert a.epsilon_lower_bound == b.epsilon_lower_bound and a.counts == b.counts


def test_bad_executor_and_missing_scheduler():
    with pytest.raises(PrivacctError, match="executor"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=100, executor="threads")
    with pytest.raises(PrivacctError, match="scheduler"):
        audit_mechanism(LaplaceMechanism(1.0), 0.0, 1.0, trials=100, executor="dask")


def test_learner_audit_on_dask_equals_inline():
    from privacct.audits.learner_audit import audit_learner

    kw = dict(privacy="jdp", episodes=8, horizon=3, trials=200, seed=2, chunk_size=50)
    a = audit_learner("ucb-vi", executor="inline", **kw)
    with distributed.LocalCluster(n_workers=1, processes=False, protocol="tcp://", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        b = audit_learner("ucb-vi", scheduler=cluster.scheduler_address, **kw)
    assert b.executor == "dask" and a.counts == b.counts and a.epsilon_lower_bound == b.epsilon_lower_bound


class ReportBlasThreads:
    """A 'mechanism' whose output is the number of BLAS threads of the process that samples it."""

    def __call__(self, dataset, rng, size):
        return np.full(size, float(sampling.blas_threads()))


TASKS = [(ReportBlasThreads(), 0, np.random.SeedSequence(i), 3) for i in range(4)]


def test_process_workers_use_one_blas_thread_and_the_caller_keeps_its_own():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2):
        if sampling.blas_threads() < 2:
            pytest.skip("this BLAS cannot run two threads, so pinning cannot be observed")
        inline = sampling.run_tasks(TASKS, "inline")
        procs = sampling.run_tasks(TASKS, "processes", workers=2)  # forked: they inherit the caller's 2
        with distributed.LocalCluster(n_workers=1, processes=False, protocol="tcp://", host="127.0.0.1",
                                      dashboard_address=None) as cluster:
            sampling.run_tasks(TASKS, "dask", cluster.scheduler_address)  # a worker in the caller's process
        assert sampling.blas_threads() == 2  # the caller's own pools are left alone
    assert all((c == 2).all() for c in inline)
    assert all((c == 1).all() for c in procs)


def test_dask_worker_processes_use_one_blas_thread(monkeypatch):
    # the worker gets OPENBLAS_NUM_THREADS=2 (by default Dask's nanny sets 1 before the worker starts;
    # a worker started otherwise need not), so the audit has to pin it
    import dask

    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(v, "2")  # inherited by the worker process (this process's BLAS is already loaded)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": {}}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, protocol="tcp://",
                                     host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
            before = client.submit(sampling.blas_threads, pure=False).result()
            out = sampling.run_tasks(TASKS, "dask", client)
    if before < 2:
        pytest.skip("the worker's BLAS cannot run two threads, so pinning cannot be observed")
    assert all((c == 1).all() for c in out)


def test_vector_statistics_give_the_same_result_on_every_executor():
    from privacct.audits.catalog import get

    e = get("svt-alg3")  # mixed output: atoms, cells, per-cell ratios and the row hash are all deterministic
    a = e.audit(executor="inline", **KW)
    b = e.audit(executor="processes", workers=2, **KW)
    assert "split likelihood-ratio" in a.statistics and a.statistics == b.statistics
    assert (a.test, a.counts, a.epsilon_lower_bound) == (b.test, b.counts, b.epsilon_lower_bound)
