"""One-run ACTION audits of seed 003's batched LSVI-UCB (issue 20; docs/auditing.md#batched-learners-in-the-action-audit,
benchmarks/learner_audits.md#one-run-action-audits).

    python benchmarks/bench_batched_actions.py [--only ROW ...] [--json FILE]

Rows: the two batched learners (``batched-jdp-lsvi-ucb``, Gaussian; ``-laplace``, pure DP) at their JDP paper setting
(K = 10^4, H = 5, tight, the setting's beta), 1000 canaries asked (the audit places one before each fixed release:
B - 1 of them), seed 0, confidence 0.95; the same at eps = 1000 (the releases nearly exact, so they decide the actions:
a replay that read the canary through its releases would change them); and at K = 64 with 8 batches, eps = 1000, the
ablation of the pin (its shift on a copy of the noise: every replay refused by the check of her releases; and
without that check, false guesses). Each row: canaries, guesses (= correct), the bound, the bound had EVERY canary
been guessed (the ceiling of this placement), windows cut, replays refused, wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from privacct.audits import one_run_actions as OA
from privacct.audits.one_run import predictable_epsilon_lower_bound

PAPER = dict(episodes=None)
SMALL = dict(episodes=64, options=(("batches", 8), ("beta", 1.0)))
ROWS = {
    "gaussian-paper-K": ("batched-jdp-lsvi-ucb", dict(delta=1e-5), None),
    "laplace-paper-K": ("batched-jdp-lsvi-ucb-laplace", dict(delta=0.0), None),
    "gaussian-paper-K-eps1000": ("batched-jdp-lsvi-ucb", dict(delta=1e-5, epsilon=1000.0), None),
    "gaussian-K64-eps1000": ("batched-jdp-lsvi-ucb", dict(delta=1e-5, epsilon=1000.0, **SMALL), None),
    "gaussian-K64-eps1000-no-pin": ("batched-jdp-lsvi-ucb", dict(delta=1e-5, epsilon=1000.0, **SMALL), "no-pin"),
    "gaussian-K64-eps1000-no-pin-no-check": ("batched-jdp-lsvi-ucb", dict(delta=1e-5, epsilon=1000.0, **SMALL),
                                             "no-pin-no-check"),
}


def _ablate(kind):
    """Undo-able patches: the pin's shift lands on a copy of the noise; and the check of her releases switched off."""
    import privacct.tap as T

    undo = []
    if kind is None:
        return undo
    orig = T.ActionPin.note_draw
    T.ActionPin.note_draw = lambda self, group, users, mechanism, noise: orig(self, group, users, mechanism, noise.copy())
    undo.append(lambda: setattr(T.ActionPin, "note_draw", orig))
    if kind == "no-pin-no-check":
        check = OA._verify_pin
        OA._verify_pin = lambda *args: None
        undo.append(lambda: setattr(OA, "_verify_pin", check))
    return undo


def run_row(name: str) -> dict:
    algorithm, kw, ablation = ROWS[name]
    kw = {k: v for k, v in kw.items() if not (k == "episodes" and v is None)}
    undo = _ablate(ablation)
    t0 = time.perf_counter()
    try:
        r = OA.one_run_action_audit(algorithm, canaries=1000, seed=0, confidence=0.95, **kw)
    finally:
        for u in reversed(undo):
            u()
    wall = time.perf_counter() - t0
    ceiling = predictable_epsilon_lower_bound(canaries=r.canaries, prefix=r.canaries, delta=r.delta,
                                              confidence=r.confidence)
    return {"row": name, "algorithm": algorithm, "episodes": r.episodes, "horizon": r.horizon, "epsilon": r.claimed_epsilon,
            "delta": r.delta, "ablation": ablation, "canaries": r.canaries, "spacing": r.spacing, "guesses": r.guesses,
            "correct": r.correct, "epsilon_lower_bound": r.epsilon_lower_bound, "ceiling_all_guessed": ceiling,
            "accounted": r.accounted_epsilon, "verdict": r.verdict, "cut": r.cut, "errors": r.errors,
            "replay_episodes": r.replay_episodes, "wall_s": round(wall, 1), "notes": list(r.notes)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(ROWS), default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out = []
    for name in args.only or list(ROWS):
        row = run_row(name)
        out.append(row)
        print(f"{name}: K={row['episodes']} M={row['canaries']} (spacing {row['spacing']}) guesses={row['guesses']} "
              f"eps_lb={row['epsilon_lower_bound']:.3f} (all guessed: {row['ceiling_all_guessed']:.3f}) accounted="
              f"{row['accounted']:.3f} {row['verdict']} cut={row['cut']} refused={row['errors']} {row['wall_s']} s",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.platform(), "cpus": os.cpu_count(), "rows": out}, f, indent=1)


if __name__ == "__main__":
    main()
