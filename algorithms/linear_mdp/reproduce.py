"""``privacct reproduce linear-mdp``: the toolkit's own linear-MDP experiments.

The papers print no experiments (docs/seed-003-linear-representation.md#experiments,
docs/seed-004-private-lsvi-ucb.md#experiments): every figure here is labelled
"toolkit's own experiment". What is run, on ``linear-two-state`` (S = 2, d = 10, H = 5):

1. ``regret_vs_episode.png``: cumulative regret vs episode for each eps of the grid: LSVI-UCB
   (non-private), Private LSVI-UCB (seed 004) and the batched JDP LSVI-UCB (seed 003), each in
   ``paper`` and ``tight`` calibration.
2. ``paper_vs_tight.png``: for each private learner and eps, the certified eps (tightest accountant
   on the declared log, at the claimed delta) of the paper and tight configurations next to the
   claim, and their final cumulative regrets side by side.
3. ``switches.png``: number of policy updates of Private LSVI-UCB per eps against its hard cap
   N_cap and the seed-004 Thm 11 bound (dH/log 2) log(1 + K/(lam~ d)), for both calibrations.

The bonus width is a utility knob: all learners use the same data-independent beta = H (option
``beta``; the theoretical betas of the papers, 1e4 to 1e6 here, saturate Q at H for any practical
K, docs/seed-004-private-lsvi-ucb.md#worked-numbers); this does not change any privacy figure. ``summary.json`` holds every
number; ``logs/`` the declared mechanism logs; ``README.md`` (:mod:`.readme`) states per figure the
papers' claim about its shape (their theorems: they print no experiment), whether the run shows it and
at what certified eps.

Quick mode (``full=False``): K = 2000, 2 seeds, eps in {1, 5, 20}. Full: K = 10^4, 5 seeds,
eps in {0.5, 1, 2, 5, 10, 20}. ``seeds`` / ``episodes`` override.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from privacct.errors import PrivacctError, check_count
from privacct.progress import note
from privacct.privacy_report import privacy_report
from privacct.rng import spawn_sequences

from ..contract import RunConfig
from ..scaleout import run_seeds
from . import LEARNERS
from .readme import readme

LABEL = "toolkit's own experiment (the papers print no experiments)"
DELTA = 1e-5
ENV = "linear-two-state"
PRIVATE = ("private-lsvi-ucb", "batched-jdp-lsvi-ucb")


def _say(progress: bool, msg: str) -> None:
    if progress:
        note(msg)


def reproduce(out_dir, *, full: bool = False, seeds: int | None = None, episodes: int | None = None,
              progress: bool = False, eps_grid: list[float] | None = None) -> dict[str, Any]:
    """Run the experiments and write figures, logs and ``summary.json`` into ``out_dir``.

    ``eps_grid`` (optional, each > 0) replaces the mode's grid (used by the tests to stay small).
    Returns the summary dict (also written to ``summary.json``)."""
    from privacct.plotting import pyplot

    plt = pyplot()   # the one place matplotlib is set up (privacct/plotting.py)

    out = Path(out_dir)
    K = check_count("episodes", episodes) if episodes is not None else (10_000 if full else 2000)
    n_seeds = check_count("seeds", seeds) if seeds is not None else (5 if full else 2)
    if K < 16:
        raise PrivacctError(f"episodes must be an integer >= 16 for the linear-MDP experiments, got {K}")
    if eps_grid is None:
        eps_grid = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0] if full else [1.0, 5.0, 20.0]
    else:
        from privacct.errors import check_positive

        eps_grid = [check_positive("eps_grid[]", e) for e in eps_grid]
        if not eps_grid:
            raise PrivacctError("eps_grid must hold at least one epsilon > 0")
    out.mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(exist_ok=True)
    seed_seqs = spawn_sequences(2022, n_seeds)
    H = 5
    beta = float(H)
    summary: dict[str, Any] = {"label": LABEL, "env": ENV, "episodes": K, "seeds": n_seeds, "delta": DELTA,
                               "beta": beta, "eps_grid": eps_grid, "runs": []}
    curves: dict[tuple, np.ndarray] = {}
    t0 = time.perf_counter()
    base = RunConfig("lsvi-ucb", privacy="none", episodes=K, env=ENV, options=(("beta", beta),))
    res = run_seeds(LEARNERS["lsvi-ucb"], base, seed_seqs)   # local, or seed chunks on --scheduler
    curves[("lsvi-ucb", "none", None)] = res.cumulative_regret
    summary["runs"].append({"algorithm": "lsvi-ucb", "privacy": "none", "calibration": "none", "claimed_epsilon": None,
                            "accounted_epsilon": None, "accountant": None,
                            "final_regret_mean": float(res.cumulative_regret[:, -1].mean())})
    _say(progress, f"lsvi-ucb done ({time.perf_counter() - t0:.1f}s)")
    for eps in eps_grid:
        for name in PRIVATE:
            for cal in ("paper", "tight"):
                cfg = RunConfig(name, privacy="jdp", epsilon=eps, delta=DELTA, calibration=cal, episodes=K, env=ENV,
                                options=(("beta", beta),))
                spec = LEARNERS[name]
                log = spec.build_log(cfg)
                log.save(out / "logs" / f"{name}_{cal}_eps{eps:g}.json")
                rep = privacy_report(log)
                res = run_seeds(spec, cfg, seed_seqs, per_seed=("n_updates", "floor_events"),
                                shared=("cap", "switching_bound_thm11", "lam_tilde", "rho"))
                curves[(name, cal, eps)] = res.cumulative_regret
                row = {"algorithm": name, "privacy": cfg.privacy, "calibration": cal, "claimed_epsilon": eps,
                       "delta": cfg.delta, "accounted_epsilon": rep.tightest_epsilon, "accountant": rep.tightest, "verdict": rep.verdict,
                       "final_regret_mean": float(res.cumulative_regret[:, -1].mean()),
                       "final_regret_seeds": [float(x) for x in res.cumulative_regret[:, -1]],
                       "n_updates": [int(x) for x in res.info["n_updates"]]}
                if name == "private-lsvi-ucb":
                    row.update({"cap": int(res.info["cap"]), "switching_bound_thm11": float(res.info["switching_bound_thm11"]),
                                "lam_tilde": float(res.info["lam_tilde"]), "rho": float(res.info["rho"]),
                                "floor_events": [int(x) for x in res.info["floor_events"]]})
                summary["runs"].append(row)
                _say(progress, f"{name} {cal} eps={eps:g}: accounted eps {rep.tightest_epsilon:.4g} ({rep.verdict}), "
                               f"final regret {row['final_regret_mean']:.1f} ({time.perf_counter() - t0:.1f}s)")
    summary["elapsed_s"] = round(time.perf_counter() - t0, 1)
    x = np.arange(1, K + 1)

    # 1. regret vs episode
    fig, axes = plt.subplots(1, len(eps_grid), figsize=(max(4.2 * len(eps_grid), 8.0), 3.6), sharey=True, squeeze=False)
    styles = {("private-lsvi-ucb", "paper"): ("tab:red", "--"), ("private-lsvi-ucb", "tight"): ("tab:red", "-"),
              ("batched-jdp-lsvi-ucb", "paper"): ("tab:blue", "--"), ("batched-jdp-lsvi-ucb", "tight"): ("tab:blue", "-")}
    for ax, eps in zip(axes[0], eps_grid, strict=True):
        base_c = curves[("lsvi-ucb", "none", None)]
        ax.plot(x, base_c.mean(0), color="k", label="LSVI-UCB (non-private)")
        for (name, cal), (col, ls) in styles.items():
            c = curves[(name, cal, eps)]
            ax.plot(x, c.mean(0), color=col, ls=ls, label=f"{name} [{cal}]")
            ax.fill_between(x, c.min(0), c.max(0), color=col, alpha=0.08)
        ax.set_title(f"claimed eps = {eps:g}, delta = {DELTA:g}")
        ax.set_xlabel("episode k")
    axes[0][0].set_ylabel("cumulative regret (exact)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"Linear MDP ({ENV}): regret vs episode, {n_seeds} seeds -- {LABEL}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "regret_vs_episode.png", dpi=120)
    plt.close(fig)

    # 2. paper vs tight: certified eps and final regret
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.2
    idx = np.arange(len(eps_grid))
    for j, (name, cal) in enumerate(styles):
        rows = [r for r in summary["runs"] if r["algorithm"] == name and r["calibration"] == cal]
        col, ls = styles[(name, cal)]
        hatch = "//" if cal == "paper" else None
        a1.bar(idx + (j - 1.5) * width, [r["accounted_epsilon"] for r in rows], width, color=col, hatch=hatch,
               alpha=0.8, label=f"{name} [{cal}]")
        a2.bar(idx + (j - 1.5) * width, [r["final_regret_mean"] for r in rows], width, color=col, hatch=hatch,
               alpha=0.8, label=f"{name} [{cal}]")
    a1.plot(idx, eps_grid, "k_", markersize=30, mew=2, label="claimed eps")
    a1.set_yscale("log")
    a1.set_ylabel(f"certified eps at delta={DELTA:g} (tightest accountant)")
    a2.axhline(summary["runs"][0]["final_regret_mean"], color="k", lw=1, label="LSVI-UCB (non-private)")
    a2.set_ylabel(f"cumulative regret after K={K}")
    for a in (a1, a2):
        a.set_xticks(idx, [f"eps={e:g}" for e in eps_grid])
        a.legend(fontsize=7)
    fig.suptitle(f"paper vs tight calibration -- {LABEL}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "paper_vs_tight.png", dpi=120)
    plt.close(fig)

    # 3. switches vs the seed-004 bound
    fig, ax = plt.subplots(figsize=(6, 4))
    for cal, col in (("paper", "tab:orange"), ("tight", "tab:green")):
        rows = [r for r in summary["runs"] if r["algorithm"] == "private-lsvi-ucb" and r["calibration"] == cal]
        n = np.array([r["n_updates"] for r in rows], dtype=float)
        ax.errorbar(eps_grid, n.mean(1), yerr=[n.mean(1) - n.min(1), n.max(1) - n.mean(1)], fmt="o-", color=col,
                    label=f"policy updates [{cal}]")
        ax.plot(eps_grid, [r["cap"] for r in rows], "s--", color=col, alpha=0.6, label=f"hard cap N_cap [{cal}]")
        ax.plot(eps_grid, [r["switching_bound_thm11"] for r in rows], ":", color=col, label=f"Thm 11 bound [{cal}]")
    ax.set_xscale("log")
    ax.set_xlabel("claimed eps")
    ax.set_ylabel("number of policy updates")
    ax.set_title(f"Private LSVI-UCB switches, K={K} -- {LABEL}", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "switches.png", dpi=120)
    plt.close(fig)

    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(readme(summary), encoding="utf-8")
    summary["files"] = ["regret_vs_episode.png", "paper_vs_tight.png", "switches.png", "summary.json", "README.md",
                        "logs/"]
    return summary
