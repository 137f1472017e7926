"""Wall and CPU time of one track of seed 002's Figure 2 at the paper's scale (issue 23): both panels (UCB-PO, UCB-VI),
five settings each (non-private, JDP eps 1 / 0.5, LDP eps 1 / 0.5), 20 seeds x K = 2*10^4, H = 20, RiverSwim: what
``privacct reproduce tabular --full`` runs per track (it runs three tracks and an eps sweep).

    python benchmarks/bench_figure2.py [--track paper] [--workers 2] [--episodes 20000] [--seeds 20]

Prints the wall seconds, the CPU seconds of this process and its worker processes, and each curve's run seconds
(wall and CPU, in its own process). ``--workers 1`` runs the ten curves one after the other in this process (the reproduction's
behaviour before issue 23's item 3); the figures do not depend on it (each run is whole in one process).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    from privacct.algorithms.tabular.reproduce import TRACKS, reproduce
    from privacct.executors import pin_blas_threads

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--track", default="paper", choices=TRACKS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--episodes", type=int, default=20_000)
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args()
    pin_blas_threads()
    from privacct.algorithms.tabular.learner import _po_compiles
    _po_compiles(args.seeds, 20, 6, 2)   # numba's kernels loaded before the clock starts (forked workers share them)
    c0, t0 = cpu(), time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        s = reproduce(d, seeds=args.seeds, episodes=args.episodes, tracks=(args.track,), sweep=False,
                      workers=args.workers)
    wall, used = time.perf_counter() - t0, cpu() - c0
    per = {f"{r['algorithm']} {r['privacy']} {r['claimed_epsilon'] or ''}".strip():
           (round(r["seconds"], 1), round(r["cpu_seconds"], 1)) for r in s["results"]}
    eps = args.seeds * args.episodes * len(s["results"])
    print(json.dumps({"track": args.track, "workers": args.workers, "seeds": args.seeds, "episodes": args.episodes,
                      "wall_s": round(wall, 1), "cpu_s": round(used, 1),
                      "seed_episodes_per_cpu_s": round(eps / used), "load_average": os.getloadavg()[0]}))
    for name, (w, c) in per.items():
        print(f"  {name:18s} wall {w:6.1f} s  CPU {c:6.1f} s")


if __name__ == "__main__":
    main()
