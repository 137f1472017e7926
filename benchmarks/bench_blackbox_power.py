"""Black-box audit power (issue 19): a user's JDP UCB bandit on a binary-tree counter, planted bugs.

    python benchmarks/bench_blackbox_power.py [--seeds 20] [--trials 20000] [--users 16] [--arms 2] [--json]

The issue: a black-box audit said ``passes`` for a mechanism leaking 3.2 x its claim, because its power
criterion was the scalar canonical one (``canonical_power``), not the mechanism audited. This script
audits, at the README's CI budget (20,000 trials per side) over ``--seeds`` seeds, a user-style
mechanism written in plain numpy (nothing from privacct's primitives, no declared power criterion):

* ``correct``: a JDP UCB bandit (A arms, K users; user k receives the arm the agent chooses from the
  released statistics and answers with a fixed reward) whose per-arm reward sums go through a Laplace
  binary-tree counter (Chan, Shi, Song 2011): b = (floor(log2 K) + 1) / eps for the claim eps = 1,
  replace-one sensitivity 1 (user 1, the canary, answers 1 (D) or 0 (D') to the agent's first arm).
  Observation: the release after every user (K x A noisy prefix sums).
* ``redraw``: the planted bug of the issue: the tree redraws the noise of every node at every release,
  so user 1 is noised in all K releases: true pure eps K / (floor(log2 K) + 1) = 3.2 at K = 16.
* ``no-depth``: tree noise calibrated ignoring the tree depth (b = 1 / eps): true eps floor(log2 K) + 1 = 5.

Each is audited three ways: ``canonical`` (``power=canonical_power``, the old default), ``default``
(no power, no leakier: the new default) and ``leakier`` (``leakier=`` the same code with its noise scale
halved). Counts of passes / fails / inconclusive; the correct mechanism's fail rate (must stay at or
below 1 - confidence). Results in benchmarks/README.md (black-box power).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from privacct.audits import audit_mechanism, canonical_power


@dataclass(frozen=True)
class TreeUCBBandit:
    """A user's JDP UCB bandit on a Laplace binary-tree counter, in plain numpy (module docstring)."""

    arms: int = 2
    users: int = 16
    epsilon: float = 1.0
    bug: str | None = None  # None | "redraw" | "no-depth"
    noise: float = 1.0  # noise scale multiplier (0.5: the leakier version)
    responses_seed: int = 7

    def scale(self) -> float:
        depth = int(math.floor(math.log2(self.users))) + 1
        return (1 if self.bug == "no-depth" else depth) / self.epsilon * self.noise

    def responses(self, canary: str) -> np.ndarray:
        r = np.random.default_rng(self.responses_seed).integers(0, 2, size=(self.users, self.arms)).astype(float)
        r[0] = 1.0 if canary == "A" else 0.0
        return r

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        K, A, b = self.users, self.arms, self.scale()
        resp = self.responses(dataset)
        levels = int(math.floor(math.log2(K))) + 1
        exact = np.zeros((levels, size, A))  # node sums alpha_i
        noisy = np.zeros((levels, size, A))  # noisy nodes, each drawn once
        pulls = np.zeros((size, A))
        released = np.zeros((size, A))
        out = np.empty((size, K, A))
        rows = np.arange(size)
        for t in range(1, K + 1):
            if t == 1:
                arm = np.zeros(size, dtype=np.int64)  # the agent's first arm: the same for both canaries
            else:
                n = np.maximum(pulls, 1.0)
                arm = np.argmax(released / n + np.sqrt(2.0 * math.log(t) / n), axis=1)
            pulls[rows, arm] += 1.0
            x = np.zeros((size, A))
            x[rows, arm] = resp[t - 1, arm]
            i = (t & -t).bit_length() - 1
            exact[i] = exact[:i].sum(axis=0) + x
            exact[:i] = 0.0
            noisy[i] = exact[i] + rng.laplace(0.0, b, size=(size, A))
            noisy[:i] = 0.0
            bits = [j for j in range(levels) if (t >> j) & 1]
            if self.bug == "redraw":  # BUG: fresh noise for every node at every release
                released = sum(exact[j] + rng.laplace(0.0, b, size=(size, A)) for j in bits)
            else:
                released = sum(noisy[j] for j in bits)
            out[:, t - 1] = released
        return out.reshape(size, K * A)


def run(seeds: int, trials: int, users: int, arms: int) -> dict:
    rows = []
    for bug in ("redraw", "no-depth", None):
        mech = TreeUCBBandit(arms=arms, users=users, bug=bug)
        leakier = TreeUCBBandit(arms=arms, users=users, bug=bug, noise=0.5)
        for mode in ("canonical", "default", "leakier"):
            kw = {"canonical": {"power": canonical_power}, "default": {}, "leakier": {"leakier": leakier}}[mode]
            t0 = time.perf_counter()
            verdicts, lbs, meds = Counter(), [], []
            for s in range(seeds):
                r = audit_mechanism(mech, "A", "B", epsilon=1.0, trials=trials, seed=s, executor="inline", **kw)
                verdicts[r.verdict] += 1
                lbs.append(r.epsilon_lower_bound)
                if mode == "leakier" and r.power.achievable_lower_bound is not None:
                    meds.append(r.power.achievable_lower_bound)
            row = {"mechanism": bug or "correct", "power": mode, "passes": verdicts["passes"],
                   "fails": verdicts["fails"], "inconclusive": verdicts["inconclusive"],
                   "eps_lb_median": round(float(np.median(lbs)), 3), "eps_lb_max": round(float(np.max(lbs)), 3),
                   "leakier_median_of_medians": round(float(np.median(meds)), 3) if meds else None,
                   "seconds": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
            "seeds": seeds, "trials_per_side": trials, "users": users, "arms": arms, "claim": 1.0,
            "true_pure_eps": {"correct": 1.0, "redraw": users / (math.floor(math.log2(users)) + 1),
                              "no-depth": float(math.floor(math.log2(users)) + 1)},
            "rows": rows}


def markdown(res: dict) -> str:
    lines = ["| mechanism (true pure eps) | power | passes | fails | inconclusive | eps_lb median (max) | leakier median | s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        eps = res["true_pure_eps"][r["mechanism"]]
        lines.append(f"| {r['mechanism']} ({eps:g}) | {r['power']} | {r['passes']} | {r['fails']} | {r['inconclusive']} | "
                     f"{r['eps_lb_median']} ({r['eps_lb_max']}) | {r['leakier_median_of_medians'] or '-'} | {r['seconds']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--trials", type=int, default=20_000)
    ap.add_argument("--users", type=int, default=16)
    ap.add_argument("--arms", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = run(a.seeds, a.trials, a.users, a.arms)
    print(json.dumps(res, indent=2) if a.json else markdown(res))


if __name__ == "__main__":
    main()
