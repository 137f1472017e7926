"""Learner-audit chunk size: wall time, CPU time and peak memory of one learner audit per chunk size.

    python benchmarks/bench_learner_chunk.py [--trials 4000] [--chunks 250 500 1000] [--repeat 2]

Each setting runs in a fresh subprocess (peak RSS = ``ru_maxrss`` of that process), inline, on
Private-UCB-VI (``ucb-vi``) JDP, tight calibration, K = 32, H = 5, released statistics: the audit of
benchmarks/audit.md. The chunk is ``audit_learner(..., chunk_size=N)`` (default
``privacct.audits.learner_audit.LEARNER_CHUNK``). Recorded in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, resource, time
from privacct.audits.learner_audit import audit_learner
audit_learner("ucb-vi", privacy="jdp", episodes=32, horizon=5, trials=100, executor="inline")  # warm-up
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
w, c = time.perf_counter(), time.process_time()
r = audit_learner("ucb-vi", privacy="jdp", epsilon=1.0, calibration="tight", episodes=32, horizon=5,
                  observe="released", trials={trials}, seed=0, executor="inline", chunk_size={chunk})
print(json.dumps({{"chunk": {chunk}, "wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "warmup_rss_mb": base / 1024, "eps_lb": r.epsilon_lower_bound}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--chunks", type=int, nargs="+", default=[250, 500, 1000])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    for _ in range(args.repeat):
        for chunk in args.chunks:
            out = subprocess.run([sys.executable, "-c", CHILD.format(trials=args.trials, chunk=chunk)],
                                 capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
            d = json.loads(out)
            print(f"chunk {d['chunk']:>5}: wall {d['wall_s']:6.2f} s  cpu {d['cpu_s']:6.2f} s  "
                  f"peak RSS {d['peak_rss_mb']:7.1f} MB (after warm-up {d['warmup_rss_mb']:.1f})  eps_lb {d['eps_lb']:.4f}",
                  flush=True)


if __name__ == "__main__":
    main()
