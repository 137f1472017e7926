"""Benchmark: issue 23 part 2 before / after in one process, interleaved (the same load for both arms; not a test).

    python benchmarks/bench_lsvi_part2_ab.py 1 10000 3

Arguments: seed counts (comma-separated), episodes K, repeats (best kept). ``after``: this tree. ``before``: the
ledger's lazy prefix rows off (``Ledger._prefix_step`` returning False: every row summed when recorded, as before part
2) and the rollout and history counts as before part 2 (the numpy rollout for every seed count, ``np.add.at``), copied
below (since part 3 the learner runs these numpy functions only when they are replaced, as here: the ``after`` arm
runs the compiled episode, so this script now measures parts 2 and 3's episode together; part 3's own A/B against its
parent tree is bench_lsvi_floor_ab.py). The setting is bench_lsvi_floor.py's (private-lsvi-ucb, ``linear-d10-h10``, tight at (5, 1e-5), beta = 10);
CPU seconds of one ``LearnerSpec.run`` per episode, in us.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_lsvi_floor as b  # noqa: E402
import numpy as np  # noqa: E402

from privacct.algorithms.linear_mdp import common as C  # noqa: E402
from privacct.ledger import Ledger  # noqa: E402



def old_play(env, policy, env_rngs):
    """The rollout before part 2: the numpy path for every seed count."""
    return C.batched_rollout(env, policy, np.stack([r.random(env.horizon) for r in env_rngs]))


def old_add(self, states, actions):
    env = self.env
    B, H = actions.shape
    bb = np.arange(B)
    phi = env.phi[states[:, :H], actions]
    r = env.tabular.R[np.arange(H)[None, :], states[:, :H], actions]
    np.add.at(self.N, (bb[:, None], np.arange(H)[None, :], states[:, :H], actions, states[:, 1:H + 1]), 1.0)
    self.Rphi += phi * r[..., None]
    outer = phi[..., :, None] * phi[..., None, :]
    self.gram += outer
    self.outer = outer
    return phi


ON = (Ledger._prefix_step, C.play_episode, C.History.add)

def _off(self, *a):
    return False


OFF = (_off, old_play, old_add)


def arm(fs):
    Ledger._prefix_step, C.play_episode, C.History.add = fs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seeds", help="seed counts, comma-separated (each >= 1)")
    ap.add_argument("episodes", type=int, help="episodes K >= 20")
    ap.add_argument("repeat", type=int, help="repeats >= 1 (best kept)")
    a = ap.parse_args()
    try:
        seeds = [int(x) for x in a.seeds.split(",")]
    except ValueError:
        seeds = []
    if not seeds or min(seeds) < 1 or a.episodes < 20 or a.repeat < 1:
        ap.error("seeds must be integers >= 1, episodes >= 20, repeat >= 1")
    K, rep = a.episodes, a.repeat
    b.run_once(1, 20)
    best = {}
    for _ in range(rep):
        for B in seeds:
            for name, fs in (("after", ON), ("before", OFF)):
                arm(fs)
                best[(name, B)] = min(best.get((name, B), np.inf), b.run_once(B, K) / K)
    arm(ON)
    for B in seeds:
        print(json.dumps({"seeds": B, "episodes": K, "before_us": round(1e6*best[("before", B)], 1),
                          "after_us": round(1e6*best[("after", B)], 1)}))


if __name__ == "__main__":
    main()
