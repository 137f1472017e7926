"""Counter throughput against the tree's on the same learner (issue 21 target: "counter throughput within 1.5x of the
tree's on the same learner"), for every JDP learner that takes ``--option counter=``.

    OMP_NUM_THREADS=1 python benchmarks/bench_counter_throughput.py                  # every learner, 5 seeds, 3 rounds
    OMP_NUM_THREADS=1 python benchmarks/bench_counter_throughput.py --only ucb-vi ucb-po --seeds 5 --repeat 5 --json

Per learner: its first JDP paper setting (claim, environment, horizon, constants) at the report's default K
(``LearnerSpec.report_scale().default``), calibration ``tight`` -- the setting benchmarks/bench_tight_regret.py compares
regrets at -- run on the SAME seeds (``spawn_sequences(--seed, --seeds)``) with: ``default`` (no option: tight's own
choice, named in the ``chosen`` column, docs/counters.md#choosing-for-regret) and ``counter=tree``, ``tree-honaker``,
``blt``, ``sqrt-toeplitz``. The variants run INTERLEAVED in this one process (round r runs every variant once, the order
rotated by r), so each ratio compares CPU times taken under the same load; every variant first runs once untimed at a
small K (imports, numba compilation and loading). CPU time is ``time.process_time`` of ``spec.run`` (this process
only; BLAS pinned to one thread). Per variant: seed-episodes per CPU-second at the median round, and its ratio to the
tree's, the median over rounds of the per-round ratio ``cpu(variant) / cpu(tree)`` (the target: <= 1.5).

``sqrt-toeplitz`` keeps every z_t and does O(t) work per step (docs/counters.md), so at the report's K one run can take
minutes: a pilot at K / 8 (one seed, timed, also for the tree) estimates its time at K as pilot x 64 x seeds (quadratic
in K); when that exceeds ``--max-seconds`` it is measured instead at the largest K' = K / 2^j whose estimate fits, with
the tree again at the same K' (rows marked ``at_episodes``). Its ratio to the tree then is a LOWER bound of the ratio at
K (its per-step work grows with t while the tree's grows with log t).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import replace

from threadpoolctl import threadpool_limits

from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences

#: every JDP learner with option ``counter`` (benchmarks/bench_counter_one_run.py LEARNERS)
LEARNERS = ("ucb-vi", "ucb-po", "private-linopt-vi", "private-linopt-po", "pp-ucrl-vtr", "pp-ucrl-vtr-plus",
            "pp-ucrl-vtr-laplace", "private-lsvi-ucb", "batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace")
VARIANTS = ("default", "tree", "tree-honaker", "blt", "sqrt-toeplitz")
TARGET = 1.5


def config(name: str, variant: str, episodes: int | None):
    """The learner's first JDP paper setting at the report's default K (or ``episodes``), tight, with ``counter=variant``
    (``default``: no option)."""
    spec = learners()[name]
    setting = next(s for s in spec.paper_settings if s.config.privacy == "jdp")
    K = episodes or spec.report_scale().default
    opts = tuple(o for o in setting.config.options if o[0] != "counter")
    if variant != "default":
        opts += (("counter", variant),)
    return spec, replace(setting.config, calibration="tight", episodes=int(K), options=opts)


def cpu_of(spec, cfg, seed: int, seeds: int) -> float:
    """CPU seconds (this process) of one ``spec.run`` of ``cfg`` on ``spawn_sequences(seed, seeds)``."""
    t0 = time.process_time()
    spec.run(cfg, spawn_sequences(seed, seeds))
    return time.process_time() - t0


def chosen(spec, cfg) -> str:
    params = spec.build_log(cfg).params
    return (params.get("tight_choice") or {}).get("strategy") or params.get("counter") or "tree"


def measure(name: str, variants: tuple[str, ...], *, seeds: int, seed: int, repeat: int, episodes: int | None,
            max_seconds: float) -> list[dict]:
    """The rows of one learner (module docstring)."""
    spec, base = config(name, "tree", episodes)
    K = int(base.episodes)
    cfgs = {v: config(name, v, episodes)[1] for v in variants}
    for v in variants:   # untimed warm-up: imports, numba compilation / cache loading, the calibration code paths
        cpu_of(spec, replace(cfgs[v], episodes=min(64, K)), seed, 1)
    at = {v: K for v in variants}
    notes = {}
    if "sqrt-toeplitz" in variants:
        k0 = max(8, K // 8)
        pilot = cpu_of(spec, replace(cfgs["sqrt-toeplitz"], episodes=k0), seed, 1)
        estimate = pilot * (K / k0) ** 2 * seeds
        k = K
        while k > k0 and pilot * (k / k0) ** 2 * seeds > max_seconds:
            k //= 2
        at["sqrt-toeplitz"] = k
        notes["sqrt-toeplitz"] = (f"pilot {pilot:.2f} s at K = {k0}, 1 seed; estimated {estimate:.0f} s at K = {K}, "
                                  f"{seeds} seeds" + ("" if k == K else f"; measured at K = {k} with the tree there"))
    runs: dict[tuple[str, int], list[float]] = {(v, at[v]): [] for v in variants}
    for k in set(at.values()):
        runs.setdefault(("tree", k), [])
    keys = sorted(runs)
    for r in range(repeat):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            v, k = key
            runs[key].append(cpu_of(spec, replace(cfgs[v], episodes=k), seed, seeds))
    rows = []
    for v in variants:
        k = at[v]
        cpu, tree = runs[(v, k)], runs[("tree", k)]
        ratios = [a / b for a, b in zip(cpu, tree, strict=True)]
        med = statistics.median(cpu)
        ratio = statistics.median(ratios)
        rows.append({"learner": name, "variant": v, "chosen": chosen(spec, cfgs[v]), "episodes": K, "at_episodes": k,
                     "seeds": seeds, "epsilon": base.epsilon, "delta": base.delta, "cpu_s": [round(x, 3) for x in cpu],
                     "tree_cpu_s": [round(x, 3) for x in tree], "episodes_per_cpu_s": round(seeds * k / med, 1),
                     "ratio_to_tree": round(ratio, 3), "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
                     "within_target": bool(ratio <= TARGET), "lower_bound": k != K, "note": notes.get(v, "")})
    return rows


def line(r: dict) -> str:
    at = "" if not r["lower_bound"] else f" (at K = {r['at_episodes']}: ratio a lower bound)"
    return (f"{r['learner']:<28} {r['variant']:<13} {r['chosen']:<13} K {r['episodes']:<6} "
            f"{r['episodes_per_cpu_s']:>10.1f} ep/CPU-s  x tree {r['ratio_to_tree']:>7.3f} "
            f"[{r['ratio_range'][0]:.3f}, {r['ratio_range'][1]:.3f}]  {'met' if r['within_target'] else 'NOT met'}{at}"
            + (f"  ({r['note']})" if r["note"] else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", default=None, choices=LEARNERS, metavar="NAME")
    ap.add_argument("--counters", nargs="+", default=None, choices=VARIANTS, help="variants (tree is always timed)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    ap.add_argument("--episodes", type=int, default=None, help="K (default: each learner's report default K)")
    ap.add_argument("--max-seconds", type=float, default=60.0,
                    help="sqrt-toeplitz: largest estimated CPU seconds of one run at K before it runs at a smaller K")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    for flag, v, lo in (("--seeds", a.seeds, 1), ("--repeat", a.repeat, 1), ("--episodes", a.episodes or 8, 8)):
        if v < lo:
            ap.exit(2, f"{flag} must be an integer >= {lo}, got {v}\n")
    variants = tuple(a.counters or VARIANTS)
    variants = variants if "tree" in variants else ("tree",) + variants
    rows = []
    t0 = time.time()
    with threadpool_limits(1):
        for name in a.only or LEARNERS:
            for r in measure(name, variants, seeds=a.seeds, seed=a.seed, repeat=a.repeat, episodes=a.episodes,
                             max_seconds=a.max_seconds):
                rows.append(r)
                print(line(r), flush=True, file=sys.stderr if a.json else sys.stdout)   # progress, with --json too
    if a.json:
        print(json.dumps({"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                      "processor": platform.machine(), "load_average_end": os.getloadavg()},
                          "wall_s": round(time.time() - t0, 1), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
