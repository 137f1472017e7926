"""Benchmark: memory held by the ledger of one run, and the run's peak RSS (issue 14 item 2's motivation).

    python benchmarks/bench_ledger_memory.py ldp-ucrl-vtr ldp 8000 1
    python benchmarks/bench_ledger_memory.py private-lsvi-ucb jdp 1000 40

Arguments: learner, privacy, episodes K, seeds B[, horizon]. tracemalloc runs around one
``LearnerSpec.run``; "held by ledger and mechanisms" sums the live allocations made in
privacct/ledger.py, privacct/mechanisms.py and privacct/counters/ (the ledger's Python objects);
the peak RSS is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of the whole process. CPU time is inflated
by tracemalloc: not a speed figure. Figures: docs/performance.md#memory-today-measured-2026-11-24-this-machine-tracemalloc.
"""
import json
import os
import resource
import sys
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")

from privacct.algorithms.base import RunConfig  # noqa: E402
from privacct.algorithms.registry import get_learner  # noqa: E402
from privacct.rng import spawn_sequences  # noqa: E402
name, privacy, K, B = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
extra = dict(horizon=int(sys.argv[5])) if len(sys.argv) > 5 else {}
spec = get_learner(name)
cfg = RunConfig(name, privacy, epsilon=1.0, delta=1e-5, episodes=K, **extra)
spec.build_log(cfg)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
t = time.process_time()
res = spec.run(cfg, spawn_sequences(0, B))
cpu = time.process_time() - t
snap = tracemalloc.take_snapshot()
cur, peak = tracemalloc.get_traced_memory()
OWN = ("/privacct/ledger.py", "/privacct/mechanisms.py", "/privacct/counters/")
led = sum(s.size for s in snap.statistics("filename") if any(o in s.traceback[0].filename for o in OWN))
n = len(res.ledger) if res.ledger is not None else 0
print(json.dumps({"learner": name, "K": K, "seeds": B, "cpu_s": round(cpu, 1), "ledger_draws": n,
                  "traced_current_MB": round(cur / 2**20, 1), "traced_peak_MB": round(peak / 2**20, 1),
                  "held_by_ledger_and_mechanisms_MB": round(led / 2**20, 1),
                  "bytes_per_draw": round(led / max(n, 1), 1),
                  "ledgers_in_info": len(res.info.get("ledgers", [])),
                  "peak_rss_MB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "rss_before_run_MB": round(rss0 / 1024, 1)}))
