"""Benchmark: memory held by the ledger of one run, and the run's peak RSS (issue 14 item 2's motivation).

    python benchmarks/bench_ledger_memory.py ldp-ucrl-vtr ldp 8000 1
    python benchmarks/bench_ledger_memory.py private-lsvi-ucb jdp 1000 40

Arguments: learner, privacy, episodes K, seeds B[, horizon][, --rss-only][, --tree-runs]. tracemalloc runs around one
``LearnerSpec.run``; "held by ledger and mechanisms" sums the live allocations made in
privacct/ledger.py, privacct/mechanisms.py and privacct/counters/ (the ledger's objects and what the
primitives still hold), "held by ledger.py" those made in privacct/ledger.py alone (the ledger's columns);
the peak RSS is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of the whole process. CPU time is inflated
by tracemalloc: not a speed figure. After tracemalloc stops, ``check_ledger`` of the run's log is timed
(best of 3, CPU seconds) on every distinct ledger the run returned (``info["ledgers"]``, else
``RunResult.ledger``): ``check_ledger_s`` is their sum. ``--rss-only``: no tracemalloc (its bookkeeping of
every live allocation inflates the RSS of a run that holds millions of Python objects, and its CPU time):
peak RSS, CPU time and ``check_ledger`` only (the traced figures print as null). ``--tree-runs``: the learners' ledgers
are :class:`privacct.ledger_tree_runs.TreeRunLedger` (a binary tree's node draws kept as one run per key: the
prototype of issue 23's memory fix; the learner modules that build a ``Ledger()`` are imported first and their name
rebound). Figures: docs/performance.md#memory-today.
"""
import json
import os
import resource
import sys
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")

from privacct.algorithms.contract import RunConfig  # noqa: E402
from privacct.ledger import check_ledger  # noqa: E402
from privacct.algorithms.registry import get_learner  # noqa: E402
from privacct.rng import spawn_sequences  # noqa: E402
FLAGS = ("--rss-only", "--tree-runs")
argv = [a for a in sys.argv[1:] if a not in FLAGS]
trace = "--rss-only" not in sys.argv[1:]
if "--tree-runs" in sys.argv[1:]:
    import importlib

    from privacct.ledger import Ledger
    from privacct.ledger_tree_runs import TreeRunLedger

    for mod in ("privacct.algorithms.tabular.learner", "privacct.algorithms.linear_mixture.engine",
                "privacct.algorithms.linear_mdp.batched_jdp", "privacct.algorithms.linear_mdp.private_lsvi_ucb"):
        m = importlib.import_module(mod)
        if getattr(m, "Ledger", None) is Ledger:
            m.Ledger = TreeRunLedger
name, privacy, K, B = argv[0], argv[1], int(argv[2]), int(argv[3])
extra = dict(horizon=int(argv[4])) if len(argv) > 4 else {}
spec = get_learner(name)
cfg = RunConfig(name, privacy, epsilon=1.0, delta=1e-5, episodes=K, **extra)
spec.build_log(cfg)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if trace:
    tracemalloc.start()
t = time.process_time()
res = spec.run(cfg, spawn_sequences(0, B))
cpu = time.process_time() - t
cur = peak = led = led_py = float("nan")
if trace:
    snap = tracemalloc.take_snapshot()
    cur, peak = tracemalloc.get_traced_memory()
    OWN = ("/privacct/ledger.py", "/privacct/mechanisms.py", "/privacct/counters/")
    led = sum(s.size for s in snap.statistics("filename") if any(o in s.traceback[0].filename for o in OWN))
    led_py = sum(s.size for s in snap.statistics("filename") if "/privacct/ledger.py" in s.traceback[0].filename)
    tracemalloc.stop()
n = len(res.ledger) if res.ledger is not None else 0
distinct = list({id(x): x for x in res.info.get("ledgers", []) or ([res.ledger] if res.ledger is not None else [])}.values())
check_s, ok = 0.0, True
for one in distinct:
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        chk = check_ledger(res.log, one)
        best = min(best, time.process_time() - t)
    check_s += best
    ok = ok and chk.ok


def rnd(x: float, digits: int):
    return None if x != x else round(x, digits)   # NaN (not traced) prints as null


print(json.dumps({"learner": name, "K": K, "seeds": B, "tree_runs": "--tree-runs" in sys.argv[1:],
                  "cpu_s": round(cpu, 1), "ledger_draws": n,
                  "traced_current_MB": rnd(cur / 2**20, 1), "traced_peak_MB": rnd(peak / 2**20, 1),
                  "held_by_ledger_and_mechanisms_MB": rnd(led / 2**20, 3),
                  "bytes_per_draw": rnd(led / max(n, 1), 1),
                  "held_by_ledger_py_MB": rnd(led_py / 2**20, 3), "ledger_py_bytes_per_draw": rnd(led_py / max(n, 1), 1),
                  "ledgers_in_info": len(res.info.get("ledgers", [])), "distinct_ledgers": len(distinct),
                  "check_ledger_s": round(check_s, 4), "check_ok": ok,
                  "peak_rss_MB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "rss_before_run_MB": round(rss0 / 1024, 1)}))
