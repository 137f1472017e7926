"""Benchmark: linear-mixture learners, wall time for a batch of seeds (not a timed test).

Target (issue 4): LDP-UCRL-VTR on HardToLearn (d = 5, H = 6, S = 8, A = 16), 10 seeds x 10^4
episodes in under 3 minutes on the 2-core machine. The seed-001 authors' code runs ~9 episodes/s.

    python benchmarks/bench_linear_mixture.py                 # the target run
    python benchmarks/bench_linear_mixture.py --episodes 2000 --all --numpy   # every learner, shorter, both loops
    python benchmarks/bench_linear_mixture.py --counters          # option counter: tree vs each strategy

Prints one JSON line per configuration: wall and CPU seconds (run only, then ledger check), batched
episodes/s (one episode of all seeds) and seed-episodes/s, final cumulative regret mean +- std. ``--numpy`` runs
each configuration a second time with the engine's compiled episode loop switched off (issue 23: the numpy loop,
the code that ran before it; the same bytes, so the same regret).

``--counters`` (issue 21; benchmarks/linear_mixture.md#counters-pp-ucrl-vtr-jdp-tight): pp-ucrl-vtr, JDP, ``tight``,
at the report's setting (the learner's paper setting: hard-to-learn, eps 0.5, delta 1e-5, bonus_scale 0.1) and
its report K (``spec.report_scale().default``; ``--episodes`` overrides it), 10 seeds (root ``--seed``, default 0,
the report's), once per counter; per strategy the final cumulative regret and, paired by seed against ``tree``,
the mean difference (strategy - tree) with its 95% Student-t interval (the report's ``mean_interval``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mixture import LEARNERS
from privacct.ledger import check_ledger
from privacct.rng import spawn_sequences

CONFIGS = {
    "target": [("ldp-ucrl-vtr", "ldp", "hard-to-learn")],
    "all": [("ucrl-vtr", "none", "hard-to-learn"), ("ldp-ucrl-vtr", "ldp", "hard-to-learn"),
            ("ldp-ucrl-vtr", "ldp", "riverswim-lm"), ("pp-ucrl-vtr", "jdp", "hard-to-learn"),
            ("pp-ucrl-vtr", "ldp", "hard-to-learn"), ("private-linopt-vi", "jdp", "hard-to-learn"),
            ("private-linopt-po", "jdp", "hard-to-learn"), ("pp-ucrl-vtr-laplace", "jdp", "hard-to-learn"),
            ("pp-ucrl-vtr-laplace", "ldp", "hard-to-learn"), ("pp-ucrl-vtr-plus", "jdp", "hard-to-learn"),
            ("pp-ucrl-vtr-plus", "ldp", "hard-to-learn")],
}


def bench(name: str, privacy: str, env: str, episodes: int, seeds: int, calibration: str, numpy_loop: bool = False) -> dict:
    """One configuration; ``numpy_loop``: the engine's compiled episode loop switched off (the numpy loop, issue 23)."""
    from privacct.algorithms.linear_mixture import engine

    cfg = RunConfig(name, privacy=privacy, epsilon=1.0, delta=0.1, calibration=calibration, episodes=episodes,
                    env=env, bonus_scale=1.0)
    spec = LEARNERS[name]
    spec.build_log(cfg)  # calibration (tight) is not part of the timed loop
    before = engine.COMPILED
    engine.COMPILED = not numpy_loop
    try:
        t, c = time.perf_counter(), time.process_time()
        res = spec.run(cfg, spawn_sequences(0, seeds))
        run_s, run_cpu = time.perf_counter() - t, time.process_time() - c
    finally:
        engine.COMPILED = before
    t = time.perf_counter()
    gaussian = res.log is not None and all(g.mechanism != "laplace" for g in res.log.release_groups)
    ok = None if res.ledger is None else bool(check_ledger(res.log, res.ledger,
                                                           accountant="analytic-gaussian" if gaussian else "basic").ok)
    check_s = time.perf_counter() - t
    cum = res.cumulative_regret[:, -1]
    return {"learner": name, "privacy": privacy, "env": env, "calibration": calibration, "episodes": episodes,
            "seeds": seeds, "loop": "numpy" if numpy_loop else "compiled", "run_seconds": round(run_s, 2),
            "run_cpu_seconds": round(run_cpu, 2), "ledger_check_seconds": round(check_s, 2),
            "batched_episodes_per_s": round(episodes / run_s, 1), "seed_episodes_per_s": round(episodes * seeds / run_s, 1),
            "final_cum_regret_mean": float(np.mean(cum)), "final_cum_regret_std": float(np.std(cum)),
            "ledger_ok": ok, "non_pd_events": int(np.sum(res.info["non_pd_events"]))}


def counters(name: str, privacy: str, episodes: int | None, seeds: int, seed: int, env: str | None,
             epsilon: float | None = None, bonus_scale: float | None = None) -> list[dict]:
    """Final cumulative regret of ``name`` ``tight`` at its first paper setting of ``privacy`` with each counter,
    paired by seed against the tree (module docstring)."""
    import dataclasses

    from privacct.audits.report.regret import mean_interval

    spec = LEARNERS[name]
    setting = next(s for s in spec.paper_settings if s.privacy == privacy)
    base = setting.run_config(name, calibration="tight")
    base = dataclasses.replace(base, episodes=episodes or spec.report_scale().default, env=env or base.env,
                               epsilon=epsilon or base.epsilon,
                               bonus_scale=base.bonus_scale if bonus_scale is None else bonus_scale)
    finals, out = {}, []
    for counter in ("tree", "tree-honaker", "sqrt-toeplitz", "blt"):
        cfg = dataclasses.replace(base, options=tuple(base.options) + (("counter", counter),))
        t = time.perf_counter()
        log = spec.build_log(cfg)
        res = spec.run(cfg, spawn_sequences(seed, seeds))
        finals[counter] = res.cumulative_regret[:, -1]
        row = {"learner": name, "privacy": privacy, "calibration": "tight", "env": cfg.env, "episodes": cfg.episodes,
               "epsilon": cfg.epsilon, "delta": cfg.delta, "bonus_scale": cfg.bonus_scale, "seeds": seeds, "root_seed": seed,
               "counter": counter, "noise_scale": log.release_groups[0].noise_scale,
               "upsilon": res.info["design"].get("upsilon"), "uniform_cum_regret": spec.uniform_regret(cfg) * cfg.episodes,
               "final_cum_regret_mean": float(np.mean(finals[counter])),
               "final_cum_regret_std": float(np.std(finals[counter])), "seconds": round(time.perf_counter() - t, 2),
               "ledger_ok": bool(check_ledger(res.log, res.ledger).ok)}
        if counter != "tree":
            diff = finals[counter] - finals["tree"]
            iv = mean_interval(diff)
            row.update({"diff_vs_tree_mean": float(np.mean(diff)), "diff_vs_tree_95": [iv.low, iv.high]})
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=None, help="K (default 10^4; --counters: the report's K)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="root seed (--counters)")
    ap.add_argument("--env", default=None, help="environment (--counters; default the report setting's)")
    ap.add_argument("--epsilon", type=float, default=None, help="claimed eps (--counters; default the report setting's)")
    ap.add_argument("--bonus-scale", type=float, default=None, help="(--counters; default the report setting's)")
    ap.add_argument("--calibration", default="paper", choices=("paper", "tight"))
    ap.add_argument("--all", action="store_true", help="every learner instead of the target only")
    ap.add_argument("--counters", action="store_true", help="pp-ucrl-vtr JDP tight: tree vs each counting strategy")
    ap.add_argument("--numpy", action="store_true", help="also each configuration with the numpy episode loop")
    args = ap.parse_args()
    print(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                      "numpy": np.__version__, "loadavg_before": os.getloadavg()}))
    if args.counters:
        for row in counters("pp-ucrl-vtr", "jdp", args.episodes, args.seeds, args.seed, args.env, args.epsilon,
                            args.bonus_scale):
            print(json.dumps(row), flush=True)
    else:
        for name, privacy, env in CONFIGS["all" if args.all else "target"]:
            for numpy_loop in (False, True) if args.numpy else (False,):
                print(json.dumps(bench(name, privacy, env, args.episodes or 10_000, args.seeds, args.calibration,
                                       numpy_loop)), flush=True)
    print(json.dumps({"loadavg_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
