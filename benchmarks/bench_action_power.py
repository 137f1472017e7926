"""Power of the many-trial black-box ACTION audit (issue 20; audits/action_power.py,
docs/auditing.md#power-of-the-action-audit): the same learner with its noise scaled until its log accounts 2 x the
claim, its action audit simulated 3 times at the same trials.

    python benchmarks/bench_action_power.py [--trials 20000] [--only ROW ...] [--json FILE]

Rows: every registered JDP learner at its audit configuration (``privacct audit NAME --privacy jdp --observe actions
--trials N``: K, H, environment, options of its audit setting, tight, claim 1 at its JDP paper setting's delta);
ucb-vi at K = 2, H = 1 without a bonus (its greedy action then reads the cost coordinate, one of the three units of l1
its canaries move) at claims 1, 2, 4; and the test learner of tests/audits/threshold_learner.py (one Laplace release,
a threshold policy in its upper tail: the action carries the whole loss), at the trials given and at the count the
criterion's estimate names for a 100-trial audit. Each: verdict, eps_lb, the replicates' median eps_lb for the
reference, power, the estimated trials, wall seconds (4 x the audit's runs when it does not fail).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import time
from pathlib import Path

from privacct.audits.learner_audit import audit_config, audit_learner

TEST_LEARNER = Path(__file__).resolve().parents[1] / "tests" / "audits" / "threshold_learner.py"


def _threshold_learner():
    """Register tests/audits/threshold_learner.py's learner in this process."""
    from privacct.algorithms import registry

    spec = importlib.util.spec_from_file_location("threshold_learner", TEST_LEARNER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    table = dict(registry.learners())
    table[mod.NAME] = mod.SPEC
    registry.learners = lambda: dict(table)
    return mod.NAME


def rows(trials: int) -> dict:
    out = {}
    for name, delta in (("ucb-vi", 0.0), ("ucb-po", 0.0), ("batched-jdp-lsvi-ucb", 1e-5),
                        ("batched-jdp-lsvi-ucb-laplace", 0.0), ("private-lsvi-ucb", 1e-5), ("private-linopt-vi", 1e-5),
                        ("private-linopt-po", 1e-5), ("pp-ucrl-vtr", 1e-5), ("pp-ucrl-vtr-plus", 1e-5),
                        ("pp-ucrl-vtr-laplace", 0.0)):
        out[f"{name}-audit-setting"] = (lambda name=name, delta=delta: audit_config(name, privacy="jdp", delta=delta),
                                        trials)
    for claim in (1.0, 2.0, 4.0):
        out[f"ucb-vi-K2-H1-no-bonus-eps{claim:g}"] = (
            lambda claim=claim: audit_config("ucb-vi", privacy="jdp", epsilon=claim, episodes=2, horizon=1,
                                             bonus_scale=0.0, options=(("e_scale", 1e-9),)), trials)
    out["threshold-learner"] = (lambda: _config(_threshold_learner()), trials)
    out["threshold-learner-100"] = (lambda: _config(_threshold_learner()), 100)
    return out


def _config(name):
    from privacct.algorithms.contract import RunConfig

    return RunConfig(name, privacy="jdp", epsilon=1.0, delta=0.0, calibration="tight", episodes=2)


def run_row(name: str, make, trials: int) -> dict:
    cfg = make()
    t0 = time.perf_counter()
    r = audit_learner(cfg, observe="actions", trials=trials, seed=0, on_violation="report")
    wall = time.perf_counter() - t0
    p = r.power
    row = {"row": name, "algorithm": cfg.algorithm, "episodes": cfg.episodes, "horizon": cfg.horizon,
           "epsilon": cfg.epsilon, "delta": cfg.delta, "trials": trials, "verdict": r.verdict,
           "epsilon_lower_bound": r.epsilon_lower_bound, "reference_median": p.achievable_lower_bound,
           "has_power": p.has_power, "trials_needed": p.trials_needed, "wall_s": round(wall, 1),
           "power": p.description}
    if name == "threshold-learner-100" and p.trials_needed:
        again = audit_learner(cfg, observe="actions", trials=p.trials_needed, seed=0)
        row["at_trials_needed"] = {"trials": p.trials_needed, "verdict": again.verdict,
                                   "reference_median": again.power.achievable_lower_bound}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20_000)
    ap.add_argument("--only", nargs="+", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    table = rows(args.trials)
    out = []
    for name in args.only or list(table):
        make, trials = table[name]
        row = run_row(name, make, trials)
        out.append(row)
        med = row["reference_median"]
        print(f"{name}: {row['verdict']} eps_lb={row['epsilon_lower_bound']:.3f} reference median="
              f"{'-' if med is None else f'{med:.3f}'} power={row['has_power']} needed={row['trials_needed']} "
              f"{row['wall_s']} s" + (f" | at {row['at_trials_needed']}" if "at_trials_needed" in row else ""),
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.platform(), "cpus": os.cpu_count(), "trials": args.trials, "rows": out}, f,
                      indent=1)


if __name__ == "__main__":
    main()
