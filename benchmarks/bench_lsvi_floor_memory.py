"""Benchmark: where Private LSVI-UCB's peak RSS before its run goes (issue 23's 200 MB target; not a timed test).

    python benchmarks/bench_lsvi_floor_memory.py

Each row is a FRESH process (``subprocess``) that does the stages up to its own, in the order the memory bench
(``bench_lsvi_floor.py --memory``) does them, and prints its peak RSS (``VmHWM`` of /proc/self/status, MB): the
interpreter with numpy; privacct's imports (the bench's: contract, registry, rng); the plan of the benchmark's
configuration (tight at (5, 1e-5), K = 10^4; its BLT buffers from the optimiser's on-disk cache,
privacct/counters/blt_cache.py, so scipy.optimize is not imported once an earlier process wrote the entry, and the
prefix coefficients through privacct/counters/blt_filter.py, not scipy.signal);
``import numba``; numba's CPU target context (its lowering registries and LLVM set-up, what loading any compiled kernel
needs first); the two cached kernels the run calls (privacct.counters.blt_jit.blt_symmetric_step,
linear_mdp.episode_jit.play_and_add); the benchmark's one-seed warm-up run (K = 20). Two more rows measure the parts
alone: numpy + numba + one cached kernel (no privacct import but the kernel's module), and numpy + dp_accounting's import.
``--numba-opt0``: the same with ``NUMBA_OPT=0`` (numba's own runtime module compiled unoptimised) and a private
``NUMBA_CACHE_DIR`` (the kernels compiled there unoptimised: the shared cache never receives them; a kernel numba
caches unoptimised runs about 30x slower in every later process). Figures: docs/performance.md#part-4-the-one-seed-step-compiled-and-the-memory-floor.

``--ablation``: issue 23's memory slice one change at a time: ``bench_lsvi_floor.py --seeds 100 --episodes 10000
--memory`` in fresh processes (``REPEAT`` each; min and max of the peak RSS and the run's CPU seconds) with everything
(``all``), then with one change undone: ``lfilter`` (the prefix coefficients by ``scipy.signal.lfilter``, which imports
scipy.signal), ``optimiser`` (``PRIVACCT_BLT_CACHE=0``: the optimiser runs, importing scipy.optimize), ``f64-counts``
(the visit counts in float64), ``batch-data-free`` (the data-free policy computed for all 100 seeds at once, a (B, H,
S, A, S) zero history), and ``none`` (all four undone). The slice's fifth change (the regret written out after the run's
state is released) has no switch: compare ``all`` before and after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

STAGES = ("numpy", "privacct", "plan", "numba", "target", "kernels", "warmup")
ARMS = ("all", "lfilter", "optimiser", "f64-counts", "batch-data-free", "none")
MEMORY_RUN = ["--seeds", "100", "--episodes", "10000", "--memory"]
ALONE = ("numba-alone", "dp-accounting-alone")
#: processes per row (min and max printed: a process's RSS varies by a few MB run to run)
REPEAT = 3


def peak_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _kernels() -> None:
    import numpy as np

    from privacct.algorithms.linear_mdp.episode_jit import play_and_add
    from privacct.counters.blt_jit import blt_symmetric_step

    B, H, S, A, d, nb = 1, 10, 10, 20, 10, 3
    m = d * (d + 1) // 2
    i64 = np.int64
    play_and_add(np.zeros((B, H, S), dtype=i64), np.ones((H, S, A, S)), np.ones((S, A, d)), np.ones((H, S, A)), 0,
                 np.zeros((B, H)), np.empty((B, H + 1), dtype=i64), np.empty((B, H), dtype=i64),
                 np.zeros((B, H, S, A, S), dtype=np.float32), np.zeros((B, H, d)), np.zeros((B, H, d, d)),
                 np.zeros((B, H, d, d)))   # the visit counts in float32, as the learner keeps them (K <= 2^24)
    blt_symmetric_step(1, np.ones(nb), np.ones(nb), np.zeros((B, H * m)), 1.0, np.zeros(m, dtype=i64),
                       np.zeros(m, dtype=i64), np.zeros((nb, H, B, m)), np.zeros((nb, H, B, m)), np.zeros((H, B, d, d)),
                       np.zeros((H, B, d, d)), np.zeros((B, H, d, d)), np.zeros((B, H, d, d)), np.zeros((d, d)), True)


def child(stage: str) -> float:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import numpy  # noqa: F401

    if stage == "numba-alone":
        import numba  # noqa: F401
        from privacct.counters.blt_jit import blt_symmetric_step  # noqa: F401  (privacct.counters' import: small)

        _kernels()
        return peak_mb()
    if stage == "dp-accounting-alone":
        import dp_accounting  # noqa: F401

        return peak_mb()
    upto = STAGES.index(stage)
    if upto >= 1:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_lsvi_floor as bl
    if upto >= 2:
        bl.get_learner(bl.NAME).build_log(bl.config(10_000))
    if upto >= 3:
        import numba  # noqa: F401
    if upto >= 4:
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()
    if upto >= 5:
        _kernels()
    if upto >= 6:
        bl.run_once(1, 20)
    return peak_mb()


def ablation_child(arm: str) -> None:
    """The memory run with one change of issue 23's memory slice undone (``none``: all of them; module docstring)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    undo = {"lfilter", "optimiser", "f64-counts", "batch-data-free"} if arm == "none" else {arm} - {"all"}
    if "optimiser" in undo:
        os.environ["PRIVACCT_BLT_CACHE"] = "0"
    if "lfilter" in undo:
        from privacct.counters import blt_filter

        blt_filter._sigtools_linear_filter = lambda: None      # scipy.signal.lfilter itself (the same bytes)
    if "f64-counts" in undo:
        import privacct.algorithms.linear_mdp.private_lsvi_ucb as learner

        learner.COUNTS_F32_MAX = 0
    if "batch-data-free" in undo:
        import privacct.algorithms.linear_mdp.common as C

        one = C.data_free_policy   # the policy of all the run's seeds at once, as before (the same rows)
        C.data_free_policy = lambda env, B, reg, beta: one(env, max(B, int(MEMORY_RUN[1])), reg, beta)[:B]
    import bench_lsvi_floor as bl

    bl.main(MEMORY_RUN)


def ablation(env: dict) -> list[dict]:
    rows = []
    for arm in ARMS:
        got = []
        for _ in range(REPEAT):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--ablation-child", arm], env=env,
                                 check=True, capture_output=True, text=True).stdout
            got.append(json.loads(out.strip().splitlines()[-1]))
        peaks, cpus = [g["peak_rss_MB"] for g in got], [g["cpu_s"] for g in got]
        row = {"arm": arm, "peak_rss_MB_min": min(peaks), "peak_rss_MB_max": max(peaks),
               "rss_before_run_MB_min": min(g["rss_before_run_MB"] for g in got), "cpu_s_min": min(cpus),
               "cpu_s_max": max(cpus)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv=None) -> list[dict]:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        print(json.dumps({"stage": argv[1], "peak_rss_MB": round(child(argv[1]), 1)}))
        return []
    if argv and argv[0] == "--ablation-child":
        ablation_child(argv[1])
        return []
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if "--numba-opt0" in argv:   # a private cache: a kernel compiled unoptimised must never reach the shared one
        env["NUMBA_OPT"] = "0"
        env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba-opt0-")
    if "--ablation" in argv:
        return ablation(env)
    rows = []
    for stage in STAGES + ALONE:
        got = []
        for _ in range(REPEAT):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", stage], env=env, check=True,
                                 capture_output=True, text=True).stdout
            got.append(json.loads(out.strip().splitlines()[-1])["peak_rss_MB"])
        row = {"stage": stage, "peak_rss_MB_min": min(got), "peak_rss_MB_max": max(got)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
