"""One-run ACTION audits of the two planted policy leaks and of the faithful learners (issue 20;
docs/auditing.md#one-run-action-audits, benchmarks/learner_audits.md#one-run-action-audits).

    python benchmarks/bench_one_run_actions.py [--part main ablation reach soundness mutants controls] [--only ROW ...] [--json FILE]
    python benchmarks/bench_one_run_actions.py --part strategies [--learners L ...] [--counters S ...] [--canaries M]
                                               [--episodes K] [--json FILE]

``main``: the faithful learners and the leaks at the audit configurations and at the papers' K (ucb-vi K = 2*10^4,
H = 20, printed bonus and the paper setting's tuned one; private-lsvi-ucb K = 10^4, (5, 1e-5) and (50, 1e-5)).
``ablation``: why the leaks are not caught at the papers' K: the canary count (window length), the leak's weight in
the policy (bonus scale, E-term scale), and, for Private LSVI-UCB, the number of policy updates (C, update cap).
``reach`` (a DIAGNOSTIC, no bound): for a sample of the canaries, their replay continued to the end of the run (the
later canaries playing their own bits, which a sound guess may not read): does flipping one canary change any later
action at all, and how far after her? It shows where the evidence a leak leaves lies relative to the windows.
``soundness``: repeated audits (seeds 0..N-1; ``--seeds`` for the small rows, ``--scale-seeds`` for those at the
papers' K) of faithful learners where their releases decide their actions: the number of audits whose bound exceeds
the accounted eps (a sound bound: at most the confidence's rate; in fact none gets a guess).
``mutants``: the one-run audits ``privacct mutants`` runs on the two policy leaks (privacct.audits.suite.policy_leaks),
faithful and planted, seeds 0..N-1 (``--mutant-seeds``): how far the bound of each seed is from the claim.
``controls``: the strategies part's positive control, ucb-vi at its audit configuration (K = 1025, H = 2, bonus 10^6,
E terms 10^-9) with each named counter, faithful and with bonus-on-exact-counts (64 canaries).
``strategies`` (issue 21: "audits (released statistics, actions, one-run) hold for every strategy with eps_lb <=
accounted"): every JDP learner that takes ``--option counter=`` x (``default``: tight's own choice, no option; and each
of ``tree``, ``tree-honaker``, ``sqrt-toeplitz``, ``blt`` named), the faithful learner, tight, claim eps = 1 at the delta
of the learner's JDP paper setting and that setting's K, H, environment and options -- the configuration
benchmarks/bench_counter_one_run.py gives the released-statistics audit (its ``config``) -- 1000 canaries (``--canaries``;
at most K - 1), seed 0. A row the audit refuses gives its one-line reason. Target: eps_lb <= accounted in every row.

Each row: one learner run (seed 0) with M canaries, one replay per canary of its window (engine fork), the guesses,
the bound for predictable guesses and the wall time (the machine's cores shared with whatever else runs).
"""

from __future__ import annotations

import argparse
import json
import time

from privacct.audits.one_run_actions import one_run_action_audit, replay_canaries

PRINTED_UCB = dict(episodes=20000, horizon=20, env="riverswim", options=(("confidence_delta", 0.1),), bonus_scale=1.0,
                   calibration="paper")
TUNED_UCB = dict(episodes=20000, horizon=20, env="riverswim", options=(("e_scale", 0.05), ("confidence_delta", 0.1)),
                 bonus_scale=0.002, calibration="paper")
LEAKY_UCB = dict(episodes=1025, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),))
LSVI_SWITCHING = dict(epsilon=50.0, delta=1e-5, episodes=1000, options=(("beta", 5.0),))
LSVI_PAPER = dict(epsilon=5.0, delta=1e-5, episodes=10000, options=(("beta", 5.0),))
LSVI_PAPER_50 = dict(epsilon=50.0, delta=1e-5, episodes=10000, options=(("beta", 5.0),))


def ucb_paper(bonus: float, e_scale: float | None) -> dict:
    opts = (("confidence_delta", 0.1),) + (() if e_scale is None else (("e_scale", e_scale),))
    return dict(PRINTED_UCB, bonus_scale=bonus, options=opts)


def lsvi(**opts) -> dict:
    return dict(LSVI_PAPER, options=(("beta", 5.0),) + tuple(opts.items()))


# name: (algorithm, configuration, mutant, canaries)
MAIN = {
    "ucb-vi-audit-setting": ("ucb-vi", LEAKY_UCB, None, 64),
    "ucb-vi-audit-setting-leak": ("ucb-vi", LEAKY_UCB, "bonus-on-exact-counts", 64),
    "ucb-vi-paper-K-printed": ("ucb-vi", PRINTED_UCB, None, 1000),
    "ucb-vi-paper-K-printed-leak": ("ucb-vi", PRINTED_UCB, "bonus-on-exact-counts", 1000),
    "ucb-vi-paper-K-tuned-leak": ("ucb-vi", TUNED_UCB, "bonus-on-exact-counts", 1000),
    "lsvi-switching": ("private-lsvi-ucb", LSVI_SWITCHING, None, 64),
    "lsvi-switching-leak": ("private-lsvi-ucb", LSVI_SWITCHING, "switch-on-exact-gram", 64),
    "lsvi-paper-K-eps5": ("private-lsvi-ucb", LSVI_PAPER, None, 1000),
    "lsvi-paper-K-eps5-leak": ("private-lsvi-ucb", LSVI_PAPER, "switch-on-exact-gram", 1000),
    "lsvi-paper-K-eps50-leak": ("private-lsvi-ucb", LSVI_PAPER_50, "switch-on-exact-gram", 1000),
}
ABLATION = {
    # the canary count: fewer canaries, longer windows (the window never passes the next canary)
    **{f"ucb-vi-printed-leak-M{m}": ("ucb-vi", PRINTED_UCB, "bonus-on-exact-counts", m) for m in (16, 128)},
    # the leak's weight in the policy at the paper's K and H (the billboard check's ablation, here in one run)
    "ucb-vi-paper-K-bonus1-e1e-9-leak": ("ucb-vi", ucb_paper(1.0, 1e-9), "bonus-on-exact-counts", 1000),
    "ucb-vi-paper-K-bonus1e6-e0.05-leak": ("ucb-vi", ucb_paper(1e6, 0.05), "bonus-on-exact-counts", 1000),
    "ucb-vi-paper-K-bonus1e6-e1e-9": ("ucb-vi", ucb_paper(1e6, 1e-9), None, 1000),
    "ucb-vi-paper-K-bonus1e6-e1e-9-leak": ("ucb-vi", ucb_paper(1e6, 1e-9), "bonus-on-exact-counts", 1000),
    # Private LSVI-UCB: more policy updates (a smaller update rate C, a larger cap)
    "lsvi-paper-K-eps5-C1.1-cap64-leak": ("private-lsvi-ucb", lsvi(C=1.1, update_cap=64), "switch-on-exact-gram", 1000),
    "lsvi-paper-K-eps5-C1.01-cap256-leak": ("private-lsvi-ucb", lsvi(C=1.01, update_cap=256), "switch-on-exact-gram",
                                            1000),
    "lsvi-paper-K-eps5-C1.01-cap256": ("private-lsvi-ucb", lsvi(C=1.01, update_cap=256), None, 1000),
}
SOUNDNESS = {
    # faithful learners where their releases decide their actions (a replay that read the canary through its
    # releases would guess every time): seeds 0..N-1
    "ucb-vi-release-driven": ("ucb-vi", dict(episodes=129, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),),
                                             epsilon=1000.0), None, 16),
    "ucb-po-release-driven": ("ucb-po", dict(episodes=129, horizon=2, bonus_scale=1e6, options=(("e_scale", 1e-9),),
                                             epsilon=1000.0), None, 16),
    "lsvi-switching-small": ("private-lsvi-ucb", dict(LSVI_SWITCHING, episodes=300), None, 32),
    # at the paper's K and H, where the bonus read from the releases decides the actions (--scale-seeds seeds)
    "ucb-vi-paper-K-release-driven": ("ucb-vi", ucb_paper(1e6, 1e-9), None, 128),
    "lsvi-paper-K-eps50": ("private-lsvi-ucb", LSVI_PAPER_50, None, 128),
}
AT_SCALE = ("ucb-vi-paper-K-release-driven", "lsvi-paper-K-eps50")
# the one-run audits of `privacct mutants` (privacct.audits.suite.policy_leaks, lsvi_one_run), seeds 0..N-1
# (--mutant-seeds): ucb-vi at its own configuration, Private LSVI-UCB where its switching test reads one user's
# features near the threshold (claim 2, C = 1.0005, update_cap K - 1, p = 0.5)
LSVI_MUTANTS = dict(epsilon=2.0, delta=1e-5, episodes=1025, horizon=2,
                    options=(("beta", 5.0), ("C", 1.0005), ("update_cap", 1024), ("p", 0.5)))
MUTANT_ROWS = {
    "ucb-vi-mutants": ("ucb-vi", LEAKY_UCB, None, 64),
    "ucb-vi-mutants-leak": ("ucb-vi", LEAKY_UCB, "bonus-on-exact-counts", 64),
    "lsvi-mutants": ("private-lsvi-ucb", LSVI_MUTANTS, None, 256),
    "lsvi-mutants-leak": ("private-lsvi-ucb", LSVI_MUTANTS, "switch-on-exact-gram", 256),
}
REACH = {
    "ucb-vi-paper-K-printed-leak": ("ucb-vi", PRINTED_UCB, "bonus-on-exact-counts", 1000),
    "lsvi-paper-K-eps5-leak": ("private-lsvi-ucb", LSVI_PAPER, "switch-on-exact-gram", 1000),
}
# the strategies part's positive control: the leak caught through every counter strategy (ucb-vi at its audit
# configuration, where the leak acts; the faithful learner beside it)
CONTROLS = {f"ucb-vi-audit-setting-{c}{'-leak' if m else ''}": (
    "ucb-vi", dict(LEAKY_UCB, options=LEAKY_UCB["options"] + (("counter", c),)), m, 64)
    for c in ("tree", "tree-honaker", "sqrt-toeplitz", "blt") for m in (None, "bonus-on-exact-counts")}
PARTS = {"main": MAIN, "ablation": ABLATION, "reach": REACH, "soundness": SOUNDNESS, "mutants": MUTANT_ROWS,
         "controls": CONTROLS}
#: the ``strategies`` part (module docstring): ``default`` = tight's own choice (no ``counter`` option), then the four
STRATEGY_ROWS = ("default", "tree", "tree-honaker", "sqrt-toeplitz", "blt")


def strategy_row(algorithm: str, counter: str, *, canaries: int = 1000, episodes: int | None = None,
                 seed: int = 0) -> dict:
    """One row of the ``strategies`` part: the one-run action audit of ``algorithm`` (faithful, tight, claim eps = 1
    at its JDP paper setting: bench_counter_one_run.config) with ``--option counter=counter`` (``default``: no option,
    tight's own choice, named in ``chosen``), or the audit's one-line refusal (``refused``)."""
    import dataclasses

    from bench_counter_one_run import config

    from privacct.algorithms.registry import get_learner
    from privacct.errors import PrivacctError

    t0 = time.perf_counter()
    out = {"row": f"{algorithm} {counter}", "learner": algorithm, "counter": counter, "seed": seed}
    try:
        cfg = config(algorithm, "tree" if counter == "default" else counter, episodes=episodes)
        if counter == "default":
            cfg = dataclasses.replace(cfg, options=tuple(o for o in cfg.options if o[0] != "counter"))
        params = get_learner(algorithm).build_log(cfg).params
        choice = params.get("tight_choice") or {}
        out.update(K=int(cfg.episodes), H=cfg.horizon, delta=float(cfg.delta),
                   chosen=choice.get("strategy", params.get("counter", counter)))
        m = min(canaries, max(1, int(cfg.episodes) - 1))
        r = one_run_action_audit(cfg, canaries=m, seed=seed)
    except PrivacctError as e:
        out.update(refused=str(e).splitlines()[0], wall_seconds=time.perf_counter() - t0)
        return out
    out.update({k: v for k, v in r.to_dict().items() if k != "decisive"}, wall_seconds=time.perf_counter() - t0,
               first_decisive=[(x.user, x.difference, x.kind) for x in r.replays if x.decisive][:8])
    return out


def strategy_line(d: dict) -> str:
    head = f"{d['learner']:<28} {d['counter']:<13} {d.get('chosen', ''):<13}"
    if "refused" in d:
        return f"{head} refused: {d['refused']} ({d['wall_seconds']:.1f} s)"
    return (f"{head} K={d['episodes']} H={d['horizon']} M={d['canaries']} (spacing {d['spacing']}) guesses "
            f"{d['guesses']} correct {d['correct']} eps_lb {d['epsilon_lower_bound']:.3f} accounted "
            f"{d['accounted_epsilon']:.3f} ({d['accountant']}) sandwich {d['sandwich_ok']} {d['verdict']} cut {d['cut']} "
            f"errors {d['errors']} replayed {d['replay_episodes']} run {d['run_seconds']:.1f} s wall "
            f"{d['wall_seconds']:.1f} s")


def reach(name: str, algorithm: str, kw: dict, mutant, canaries: int, sample: int) -> dict:
    """The diagnostic part (module docstring): ``sample`` canaries spread over the run, each replayed to the end."""
    from privacct.algorithms.registry import get_learner
    from privacct.audits.one_run import draw_bits
    from privacct.audits.one_run_learner import one_run_config, plan_users

    spec = get_learner(algorithm)
    cfg = one_run_config(algorithm, privacy="jdp", **kw)
    users = plan_users(int(cfg.episodes), canaries)
    bits = tuple("A" if v > 0 else "B" for v in draw_bits(0, len(users)))
    todo = set(range(0, len(users), max(1, len(users) // sample)))
    t0 = time.perf_counter()
    _, _, replays = replay_canaries(spec, cfg, users, bits, [int(cfg.episodes)] * len(users), todo,
                                    dict(fixed_users=False, coins_seed=0, mutant=mutant), seed=0, engine="fork")
    spacing = users[1] - users[0]
    hits = [(r.user, r.difference - r.user, r.kind) for r in replays if r.decisive]
    return {"row": name, "algorithm": algorithm, "episodes": int(cfg.episodes), "canaries": len(users),
            "spacing": spacing, "sampled": len(todo), "changed_later": len(hits),
            "within_window": sum(d < spacing for _, d, _ in hits), "cut": sum(r.cut_at is not None for r in replays),
            "hits": hits, "wall_seconds": time.perf_counter() - t0}


def row(name: str, algorithm: str, kw: dict, mutant, canaries: int, seed: int = 0) -> dict:
    t0 = time.perf_counter()
    r = one_run_action_audit(algorithm, canaries=canaries, mutant=mutant, seed=seed, **kw)
    wall = time.perf_counter() - t0
    first = [(x.user, x.difference, x.kind) for x in r.replays if x.decisive][:8]
    return dict(r.to_dict(), row=name, wall_seconds=wall, first_decisive=first, counter=_counter_of(algorithm, kw))


def _counter_of(algorithm: str, kw: dict) -> str:
    """The counter strategy the audited run of ``kw`` runs (its log's ``counter``; tight's own choice unless named)."""
    from privacct.algorithms.registry import get_learner
    from privacct.audits.one_run_learner import resolve_one_run_config

    cfg = resolve_one_run_config(algorithm, dict(kw, privacy="jdp"), caller="bench_one_run_actions")
    return str(get_learner(algorithm).build_log(cfg).params.get("counter", "tree"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", nargs="+", choices=sorted(PARTS) + ["strategies"], default=["main"])
    ap.add_argument("--only", nargs="+", default=None, help="rows by name (of the parts chosen)")
    ap.add_argument("--seeds", type=int, default=50, help="soundness part: audits per small row")
    ap.add_argument("--scale-seeds", type=int, default=10, help="soundness part: audits per row at the papers' K")
    ap.add_argument("--sample", type=int, default=16, help="reach part: canaries replayed to the end of the run")
    ap.add_argument("--mutant-seeds", type=int, default=4, help="mutants part: audits (seeds 0..N-1) per row")
    ap.add_argument("--learners", nargs="+", default=None, help="strategies part: learners (default: every JDP "
                    "learner with a counter option, bench_counter_one_run.LEARNERS)")
    ap.add_argument("--counters", nargs="+", choices=STRATEGY_ROWS, default=None,
                    help="strategies part: default (tight's own choice) and / or named strategies (default: all)")
    ap.add_argument("--canaries", type=int, default=1000, help="strategies part: canaries per row (at most K - 1)")
    ap.add_argument("--episodes", type=int, default=None, help="strategies part: K (default: the paper setting's)")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args()
    out = []
    if "strategies" in args.part:
        from bench_counter_one_run import LEARNERS
        bad = sorted(set(args.learners or ()) - set(LEARNERS))
        if bad or args.canaries < 1 or (args.episodes is not None and args.episodes < 2):
            ap.error(f"--learners must be among {', '.join(LEARNERS)} (got {', '.join(bad)})" if bad else
                     "--canaries must be >= 1 and --episodes >= 2")
        for alg in args.learners or LEARNERS:
            for counter in args.counters or STRATEGY_ROWS:
                d = strategy_row(alg, counter, canaries=args.canaries, episodes=args.episodes)
                out.append(d)
                print(strategy_line(d), flush=True)
                if args.json:   # written after every row: a long table survives an interrupted run
                    with open(args.json, "w") as f:
                        json.dump(out, f, indent=1, allow_nan=False)
        args.part = [p for p in args.part if p != "strategies"]
    if args.part:
        print(f"{'row':<40} {'K':>6} {'M':>5} {'guesses':>7} {'correct':>7} {'eps_lb':>7} {'accounted':>9} "
              f"{'verdict':<12} {'cut':>4} {'replayed':>8} {'wall s':>7}", flush=True)
    for part in args.part:
        for name, (algorithm, kw, mutant, m) in PARTS[part].items():
            if args.only and name not in args.only:
                continue
            if part == "reach":
                d = reach(name, algorithm, kw, mutant, m, args.sample)
                out.append(d)
                print(f"{name:<40} reach: {d['changed_later']} of {d['sampled']} sampled canaries change a later action "
                      f"({d['within_window']} within their window of {d['spacing'] - 1} users; {d['cut']} cut); "
                      f"distances {sorted(x[1] for x in d['hits'])}; {d['wall_seconds']:.0f} s", flush=True)
                continue
            seeds = (range(args.scale_seeds if name in AT_SCALE else args.seeds) if part == "soundness" else
                     range(args.mutant_seeds) if part == "mutants" else (0,))
            rows = []
            for s in seeds:
                rows.append(row(name, algorithm, kw, mutant, m, seed=s))
                if part == "soundness" and name in AT_SCALE:   # bound vs accounted per seed, as each ends
                    x = rows[-1]
                    print(f"  {name} seed {s} ({x['counter']}): guesses {x['guesses']} eps_lb "
                          f"{x['epsilon_lower_bound']:.3f} accounted {x['accounted_epsilon']:.3f} cut {x['cut']} "
                          f"errors {x['errors']} wall {x['wall_seconds']:.1f} s", flush=True)
            for d in rows:
                out.append(d)
            if part == "mutants":
                for s, d in zip(seeds, rows, strict=True):
                    print(f"{name + f' seed {s}':<40} {d['episodes']:>6} {d['canaries']:>5} {d['guesses']:>7} "
                          f"{d['correct']:>7} {d['epsilon_lower_bound']:>7.3f} {d['accounted_epsilon']:>9.3f} "
                          f"{d['verdict']:<12} {d['cut']:>4} {d['replay_episodes']:>8} {d['wall_seconds']:>7.1f}", flush=True)
                continue
            d = rows[0]
            if part == "soundness":
                over = sum(not x["sandwich_ok"] for x in rows)
                print(f"{name:<40} {d['episodes']:>6} {d['canaries']:>5} {sum(x['guesses'] for x in rows):>7} "
                      f"{sum(x['correct'] for x in rows):>7} {max(x['epsilon_lower_bound'] for x in rows):>7.3f} "
                      f"{d['accounted_epsilon']:>9.3f} {'over: ' + str(over) + '/' + str(len(rows)):<12} "
                      f"{sum(x['cut'] for x in rows):>4} {sum(x['replay_episodes'] for x in rows):>8} "
                      f"{sum(x['wall_seconds'] for x in rows):>7.1f}", flush=True)
                continue
            print(f"{name:<40} {d['episodes']:>6} {d['canaries']:>5} {d['guesses']:>7} {d['correct']:>7} "
                  f"{d['epsilon_lower_bound']:>7.3f} {d['accounted_epsilon']:>9.3f} {d['verdict']:<12} {d['cut']:>4} "
                  f"{d['replay_episodes']:>8} {d['wall_seconds']:>7.1f}   {d['first_decisive'][:3]}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, allow_nan=False)


if __name__ == "__main__":
    main()
