"""One-run audits (issue 20): soundness and certified eps vs true eps (docs/auditing.md#one-run-audits).

    python benchmarks/bench_one_run.py [--repeats 100] [--canaries 1000 10000] [--confidence 0.95] [--json FILE]

For each canary count m and each mechanism below, ``--repeats`` one-run audits (seeds 0, 1, ...) with
``privacct.audits.one_run.one_run_audit``; every canary i is observed once, as S_i plus noise:

* ``laplace``: S_i + Laplace(2 / eps), eps = 1 (a bit flip moves the mean by 2: exactly eps-DP per bit),
  claim (1, 0);
* ``gaussian``: S_i + N(0, (2 / mu)^2), mu = 1 (exactly 1-GDP per bit), claim (eps(1e-5) of 1-GDP = 4.4, 1e-5);
* ``laplace-4x``: the Laplace mechanism at eps = 4 audited against the claim (1, 0) (a bug leaking 4x);
* ``laplace-spread16``: each canary observed through 16 Laplace coordinates, each mean moved by 1/16 of
  the pure eps = 1 (S_i c + Laplace(32 c) per coordinate), scored by its exact log-likelihood ratio: the
  same pure eps as ``laplace``, spread thinly (docs/auditing.md#one-run-audits, limits).

The per-canary loss structure is given (power: :func:`privacct.audits.one_run.one_run_power`). Reported:
verdict counts; the Steinke bound's median and max and how often it exceeds the true eps (soundness: at
most 1 - confidence); the f-DP bounds (Gaussian family: mu and its eps(delta), and the (eps, delta)
family) likewise; seconds per audit. Results in benchmarks/README.md (one-run audits).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections import Counter

import numpy as np
from scipy import stats

from privacct.audits import bounds
from privacct.audits.one_run import one_run_audit
from privacct.audits.oracle import LossStructure


def laplace(eps: float):
    return lambda bits, rng: bits + rng.laplace(0.0, 2.0 / eps, size=bits.size)


def gaussian(mu: float):
    return lambda bits, rng: bits + rng.normal(0.0, 2.0 / mu, size=bits.size)


SPREAD = 16


def laplace_spread(eps: float, n: int = SPREAD):
    """(m, n) observations S_i + Laplace(2 n / eps) per coordinate (mean shift 2 per flip, a = eps / n each)."""
    return lambda bits, rng: bits[:, None] + rng.laplace(0.0, 2.0 * n / eps, size=(bits.size, n))


def spread_score(eps: float, n: int = SPREAD):
    """The exact log-likelihood ratio of S_i = +1 vs -1: sum_j (|o_j + 1| - |o_j - 1|) / b."""
    b = 2.0 * n / eps
    return lambda o: (np.abs(o + 1.0) - np.abs(o - 1.0)).sum(axis=1) / b


DELTA_G = 1e-5
EPS_G = float(bounds.epsilon_from_mu(1.0, DELTA_G))
CASES = {
    # name: (mechanism, score, claim eps, delta, true eps, true mu or None, per-canary structure)
    "laplace": (laplace(1.0), None, 1.0, 0.0, 1.0, None, LossStructure((1.0,), 0.0)),
    "gaussian": (gaussian(1.0), None, EPS_G, DELTA_G, EPS_G, 1.0, LossStructure((), 1.0)),
    "laplace-4x": (laplace(4.0), None, 1.0, 0.0, 4.0, None, LossStructure((1.0,), 0.0)),
    "laplace-spread16": (laplace_spread(1.0), spread_score(1.0), 1.0, 0.0, 1.0, None,
                         LossStructure((1.0 / SPREAD,) * SPREAD, 0.0)),
}


def run(name: str, m: int, repeats: int, confidence: float) -> dict:
    mech, score, claim, delta, true_eps, true_mu, structure = CASES[name]
    rows = []
    t0 = time.perf_counter()
    for seed in range(repeats):
        r = one_run_audit(mech, canaries=m, epsilon=claim, delta=delta, confidence=confidence, seed=seed,
                          score=score, per_canary_structure=structure)
        rows.append(r)
    sec = (time.perf_counter() - t0) / repeats
    lb = np.array([r.epsilon_lower_bound for r in rows])
    mu = np.array([r.mu_lower_bound for r in rows])
    fdp = np.array([np.nan if r.epsilon_fdp is None else r.epsilon_fdp for r in rows])
    apx = np.array([r.epsilon_fdp_approx_dp for r in rows])
    verdicts = Counter(r.verdict for r in rows)
    out = {
        "mechanism": name, "canaries": m, "repeats": repeats, "confidence": confidence, "claim": claim,
        "delta": delta, "true_epsilon": true_eps, "true_mu": true_mu,
        "verdicts": {v: verdicts.get(v, 0) for v in ("passes", "fails", "inconclusive")},
        "steinke": {"median": float(np.median(lb)), "max": float(lb.max()), "above_true": int((lb > true_eps).sum())},
        "fdp_approx_dp": {"median": float(np.median(apx)), "max": float(apx.max()),
                          "above_true": int((apx > true_eps).sum())},
        "fdp_gaussian_mu": {"median": float(np.median(mu)), "max": float(mu.max()),
                            "above_true": None if true_mu is None else int((mu > true_mu).sum())},
        "fdp_gaussian_eps": None if delta == 0 or np.isnan(fdp).all() else {
            "median": float(np.nanmedian(fdp)), "max": float(np.nanmax(fdp)),
            "above_true": int((fdp > true_eps).sum()) if true_mu is not None else None},
        "power": rows[0].power.to_dict(),
        "seconds_per_audit": sec,
        # a sound bound exceeds the truth in at most 1 - confidence of the audits: the count a sound
        # bound exceeds with probability < 1e-3 (binomial)
        "soundness_limit": int(stats.binom.ppf(0.999, repeats, 1 - confidence)),
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--canaries", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--cases", nargs="+", default=list(CASES))
    ap.add_argument("--json", default=None, help="write the results to this file")
    a = ap.parse_args()
    results = []
    print(f"# one-run audits: {a.repeats} repeats, confidence {a.confidence}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs")
    print("| mechanism (true eps) | m | passes / fails / inconclusive | Steinke eps_lb median (max) | > true | "
          "f-DP (eps, delta) family median (max) | > true | f-DP Gaussian mu median (max) [eps(delta)] | > true | "
          "s / audit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in a.canaries:
        for name in a.cases:
            r = run(name, m, a.repeats, a.confidence)
            results.append(r)
            v, s, x, g, ge = r["verdicts"], r["steinke"], r["fdp_approx_dp"], r["fdp_gaussian_mu"], r["fdp_gaussian_eps"]
            geps = "" if ge is None else f" [{ge['median']:.3f}]"
            above_g = "–" if g["above_true"] is None else str(g["above_true"])
            print(f"| {name} ({r['true_epsilon']:.3g}) | {m} | {v['passes']} / {v['fails']} / {v['inconclusive']} | "
                  f"{s['median']:.3f} ({s['max']:.3f}) | {s['above_true']} | {x['median']:.3f} ({x['max']:.3f}) | "
                  f"{x['above_true']} | {g['median']:.3f} ({g['max']:.3f}){geps} | {above_g} | "
                  f"{r['seconds_per_audit']:.2f} |", flush=True)
    print(f"(soundness: a sound bound exceeds the truth in more than {results[0]['soundness_limit']} of {a.repeats} "
          "audits with probability < 1e-3)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=1, allow_nan=False)


if __name__ == "__main__":
    main()
