"""One-run released-statistics audits of every counter strategy (issue 21; docs/auditing.md#one-run-audits-of-learners).

    python benchmarks/bench_counter_one_run.py [--only NAME ...] [--counters S ...] [--episodes K] [--canaries M]
                                               [--calibration C] [--seed N] [--noise-multiplier F]
                                               [--option KEY=VALUE ...] [--json]

Every JDP learner that takes ``--option counter=...`` x every strategy (``tree``, ``tree-honaker``, ``sqrt-toeplitz``,
``blt``): ONE learner run with ``--canaries`` canary users (default 1000, at most K - 1), the one-run bound of
:mod:`privacct.audits.one_run_learner` (the same as ``privacct audit ALG --privacy jdp --one-run --option counter=S
--calibration C``), claim eps = 1 with the delta of the learner's JDP paper setting, at that setting's K, H,
environment and options (``--episodes K`` runs every learner at K episodes instead, the rest of its setting kept:
the paper's K where one row takes over about a minute; ``--option batches=K`` gives the batched learners one user per batch, the only
configuration whose Gram releases hold a single canary). Seed 0, confidence 0.95. Per row: canaries, guesses, correct, eps_lb (Steinke et al.),
the f-DP Gaussian figure (mu_lb and its eps(delta): an eps bound only for a GDP-shaped mechanism; none at delta 0),
the accounted eps of the same configuration, the verdict, seconds, and every score's guesses / correct / bound
(docs/auditing.md#one-run-scores: ``difference`` always, ``window`` where a Toeplitz counter runs, ``output-only`` where
it runs with Laplace noise; the confidence split between them) with the name of the one that gave the bound. A Toeplitz
counter with Laplace noise (ucb-vi, ucb-po, pp-ucrl-vtr-laplace, batched-jdp-lsvi-ucb-laplace with sqrt-toeplitz or
blt: refused before the output-only score) is audited: fails or inconclusive, never passes. A combination the audit
refuses (a batched learner whose Gram leaves hold whole batches) is a row with its one-line reason. Soundness
target: eps_lb <= accounted in every row (``sandwich_ok``).

The many-trial audits of the same strategies are benchmarks/bench_counter_audits.py; this is a separate script
(not a ``--one-run`` mode of that one) because its rows share nothing with those but the learner list: another
configuration (the paper's K, not the audit setting's K = 2-5), another entry point and other columns.

Figures recorded in benchmarks/learner_audits.md#one-run-audits-of-every-counter-strategy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from privacct.errors import PrivacctError

LEARNERS = ("ucb-vi", "ucb-po", "private-linopt-vi", "private-linopt-po", "pp-ucrl-vtr", "pp-ucrl-vtr-plus",
            "pp-ucrl-vtr-laplace", "private-lsvi-ucb", "batched-jdp-lsvi-ucb", "batched-jdp-lsvi-ucb-laplace")
STRATEGIES = ("tree", "tree-honaker", "sqrt-toeplitz", "blt")
CLAIM_EPSILON = 1.0


def config(algorithm: str, counter: str, *, episodes: int | None = None, horizon: int | None = None,
           calibration: str = "tight", options: tuple = ()):
    """The RunConfig of one row: the learner's JDP paper setting (its K, H, environment, bonus scale and options) with
    ``options`` and ``counter`` added to its options, claim eps = 1 and the paper setting's delta (the CLI's default
    claim); ``episodes`` / ``horizon`` given replace the setting's K / H and nothing else (a smaller configuration of
    the same learner)."""
    import dataclasses

    from privacct.algorithms.defaults import default_delta
    from privacct.audits.learner_audit import check_audit_config
    from privacct.audits.one_run_learner import one_run_config

    opts = tuple(options) + (("counter", counter),)
    delta = default_delta(algorithm, "jdp")   # the CLI's default claim delta: the JDP paper setting's
    cfg = one_run_config(algorithm, privacy="jdp", epsilon=CLAIM_EPSILON, delta=delta, calibration=calibration,
                         options=opts)
    given = {k: v for k, v in (("episodes", episodes), ("horizon", horizon)) if v is not None}
    return check_audit_config(dataclasses.replace(cfg, **given)) if given else cfg


def row(algorithm: str, counter: str, *, canaries: int = 1000, episodes: int | None = None, horizon: int | None = None,
        calibration: str = "tight", seed: int = 0, confidence: float = 0.95, noise_multiplier: float = 1.0,
        options: tuple = ()) -> dict:
    """One table row (module docstring): the one-run audit of ``algorithm`` with ``--option counter=counter``, or
    the audit's one-line refusal (``refused``). ``canaries`` is capped at K - 1. ``noise_multiplier`` < 1: the
    planted learner-level bug (privacy noise x that factor, the log at the declared scale)."""
    from privacct.audits.one_run_learner import one_run_audit_learner

    t0 = time.perf_counter()
    out = {"learner": algorithm, "counter": counter, "calibration": calibration, "seed": seed,
           "confidence": confidence, "noise_multiplier": noise_multiplier, "options": dict(options)}
    try:
        cfg = config(algorithm, counter, episodes=episodes, horizon=horizon, calibration=calibration, options=options)
        out.update({"K": int(cfg.episodes), "H": cfg.horizon, "delta": float(cfg.delta)})
        m = min(canaries, max(1, int(cfg.episodes) - 1))
        r = one_run_audit_learner(cfg, canaries=m, confidence=confidence, seed=seed, noise_multiplier=noise_multiplier)
    except PrivacctError as e:
        out.update({"refused": str(e), "seconds": round(time.perf_counter() - t0, 1)})
        return out
    b = r.bound
    out.update({"canaries": r.canaries, "spacing": r.spacing, "releases_per_canary": round(r.releases_per_canary, 2),
                "guesses": b.guesses, "correct": b.correct, "eps_lb": round(r.epsilon_lower_bound, 4),
                "mu_lb": round(b.mu_lower_bound, 4),
                "eps_fdp": None if b.epsilon_fdp is None else round(b.epsilon_fdp, 4),
                "accountant": r.accountant, "accounted": round(r.accounted_epsilon, 4), "sandwich_ok": r.sandwich_ok,
                "verdict": r.verdict, "power": b.power.description, "notes": list(r.notes),
                "best_score": r.best_score,
                "scores": {x.name: {"releases_per_canary": round(x.releases_per_canary, 2), "guesses": int(x.bound.guesses),
                                    "correct": int(x.bound.correct), "eps_lb": round(float(x.bound.epsilon_lower_bound), 4)}
                           for x in r.scores},
                "seconds": round(time.perf_counter() - t0, 1)})
    return out


def line(out: dict) -> str:
    head = f"{out['learner']:30s} {out['counter']:14s}"
    if "refused" in out:
        return f"{head} refused: {out['refused']}"
    fdp = "n/a" if out["eps_fdp"] is None else f"{out['eps_fdp']:.3f}"
    return (f"{head} K={out['K']} H={out['H']} m={out['canaries']} {out['guesses']}/{out['correct']} eps_lb "
            f"{out['eps_lb']:.3f} mu_lb {out['mu_lb']:.3f} (eps {fdp}) accounted {out['accounted']:.3f} "
            f"sandwich {out['sandwich_ok']} {out['verdict']} {out['seconds']} s; scores {out['scores']} "
            f"(bound by {out['best_score']})")


def _option(text: str, episodes: int | None) -> tuple:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise SystemExit(f"--option must be KEY=VALUE, got {text!r}")
    if value == "K" and episodes is not None:
        return key, int(episodes)
    return key, int(value) if value.lstrip("-").isdigit() else value


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=None, help="learners (default: all of LEARNERS)")
    p.add_argument("--counters", nargs="*", default=None, help="strategies (default: all four)")
    p.add_argument("--episodes", type=int, default=None)
    p.add_argument("--horizon", type=int, default=None)
    p.add_argument("--canaries", type=int, default=1000)
    p.add_argument("--calibration", default="tight")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--noise-multiplier", type=float, default=1.0)
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a learner option added to every row (an integer VALUE is read as one; 'K' is --episodes)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    options = tuple(_option(o, args.episodes) for o in args.option)
    rows = []
    for alg in LEARNERS:
        if args.only and alg not in args.only:
            continue
        for counter in STRATEGIES:
            if args.counters and counter not in args.counters:
                continue
            out = row(alg, counter, canaries=args.canaries, episodes=args.episodes, horizon=args.horizon,
                      calibration=args.calibration, seed=args.seed, noise_multiplier=args.noise_multiplier,
                      options=options)
            rows.append(out)
            print(json.dumps(out) if args.json else line(out), flush=True)
    if args.json:
        print(json.dumps({"machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "rows": rows}))


if __name__ == "__main__":
    main()
