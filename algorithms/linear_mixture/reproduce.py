"""``privacct reproduce linear-mixture``: seed 001 Figure 2 settings, and our own seed 000/003 runs.

Part 1 -- seed 001 Figure 2 (LDP-UCRL-VTR vs UCRL-VTR, cumulative regret, mean +- std over seeds)
on the homogeneous and inhomogeneous RiverSwim linear mixture (S = 3, H = 2S = 6, d = 18, rewards / H)
and on HardToLearn (d = 5, H = 6, the authors' code), delta = 0.1 and alpha = 0.01 as in §6,
epsilon in {0.1, 1, 10} (the values in the authors' code; the paper prints no grid), side by side:
``paper`` (printed sigma) and ``tight`` (calibrated sigma for the same claim). Curves are labelled
with the epsilon the accountant certifies for the log that ran (tightest accountant, at delta = 0.1).
Full scale (``full=True``): K = 10^4 episodes, 10 seeds; default: K = 1000, 3 seeds.

Choices the paper leaves open (recorded in summary.json): UCRL-VTR uses bonus_scale c x the §6.2
radius (our reading, design.ucrl_vtr); LDP-UCRL-VTR uses the §6 experimental radius
c d^{3/4} (H-h+1)^{3/2} k^{1/4}; the shift is r_k = 2 Gamma_k (the theoretical value: the paper does
not state the one it used). Like the paper ("we fine tune c for different experiments") c is
grid-searched per configuration over C_GRID, but on separate tuning seeds and shorter runs
(K_tune episodes), never on the reported seeds; the grid and the choice are in summary.json.

Part 2 -- OUR OWN experiment (seeds 000 and 003 print no experiments): Private-LinOpt-VI/PO
(seed 000) and Privacy-Preserving UCRL-VTR JDP/LDP (seed 003) on the homogeneous RiverSwim at
epsilon = 10, delta = 0.1 (outside the papers' eps < 1 range, to make anything visible), paper vs
tight, with their theoretical radii x bonus_scale 0.1 and theoretical shifts; non-private
references UCRL-VTR and LinOpt-VI (lambda I regulariser).

Part 3 -- TRACK B (:mod:`.track_b`): the printed noise divided by a factor (a claim of eps x divisor in
``paper`` calibration) and the shift x 0.1, so that the figure's shape is visible; every label gives the
figure's eps and the eps the accountant certifies for the noise that ran: seed 001 Fig. 2 on both
RiverSwim MDPs, and seed 000's Private-LinOpt-VI (our own panel). ``README.md`` (:mod:`.readme`) states
per figure the paper's claim about its shape, whether the run shows it and at what certified eps.
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import numpy as np

from privacct.accounting import epsilon as account
from privacct.accounting import tightest_epsilon
from privacct.errors import UnsupportedLogError, check_count
from privacct.progress import note
from privacct.rng import spawn_sequences

from ..contract import RunConfig
from ..scaleout import run_seeds
from . import LEARNERS
from . import track_b as TB
from .readme import readme

EPS_GRID = (0.1, 1.0, 10.0)
DELTA = 0.1
C_GRID = (0.01, 0.1, 1.0)
OWN_BONUS = 0.1
SEED = 2024
SMALL_DELTA = 1e-5


def _certify(log, delta: float) -> tuple[str, float]:
    """(accountant, eps) certified for ``log`` at ``delta``: analytic Gaussian (exact GDP composition,
    every group here is Gaussian), else the tightest accountant that applies."""
    try:
        return "analytic-gaussian", account(log, delta=delta, accountant="analytic-gaussian")
    except UnsupportedLogError:
        return tightest_epsilon(log, delta=delta)
TUNE_SEED = 2025


def _tune(make, grid, k_tune: int, tune_seeds, progress: bool, label: str) -> tuple[float, dict]:
    """The c in ``grid`` with the smallest mean final cumulative regret on the tuning seeds."""
    scores = {}
    for c in grid:
        res = run_seeds(LEARNERS[make(c, k_tune).algorithm], make(c, k_tune), tune_seeds)
        scores[c] = float(res.cumulative_regret[:, -1].mean())
    best = min(scores, key=lambda c: (scores[c], c))
    if progress:
        note(f"[linear-mixture] tune {label}: {scores} -> c={best:g}")
    return best, {str(c): v for c, v in scores.items()}


def _run(config: RunConfig, seeds, progress: bool, label: str) -> dict:
    spec = LEARNERS[config.algorithm]
    t = time.perf_counter()
    res = run_seeds(spec, config, seeds, per_seed=("non_pd_events",), shared=("noise_scales", "design", "env"))
    dt = time.perf_counter() - t
    cert = cert_small = None
    acc = None
    if res.log is not None:
        acc, cert = _certify(res.log, config.delta)
        cert_small = _certify(res.log, SMALL_DELTA)[1]
    cum = res.cumulative_regret
    if progress:
        note(f"[linear-mixture] {label}: {dt:.1f}s, final cumulative regret {cum[:, -1].mean():.3f}"
             + (f", accounted eps {cert:.4g} ({acc})" if cert is not None else ""))
    return {"label": label, "algorithm": config.algorithm, "privacy": config.privacy, "calibration": config.calibration,
            "claimed_epsilon": config.epsilon if config.privacy != "none" else None, "delta": config.delta,
            "accounted_epsilon": cert, "accountant": acc, f"accounted_epsilon_at_{SMALL_DELTA:g}": cert_small, "bonus_scale": config.bonus_scale,
            "options": dict(config.options), "seconds": dt, "mean": cum.mean(0), "std": cum.std(0),
            "final_mean": float(cum[:, -1].mean()), "final_std": float(cum[:, -1].std()),
            "loglog_slope_second_half": _slope(cum.mean(0)),
            "non_pd_events": int(np.sum(res.info.get("non_pd_events", 0))),
            "noise_scales": res.info.get("noise_scales", {}), "design": res.info.get("design", {}),
            "env": res.info.get("env", {})}


def _slope(mean_cum: np.ndarray) -> float | None:
    """log-log slope of mean cumulative regret between K/2 and K (1 = linear; < 1 sublinear)."""
    K = len(mean_cum)
    a, b = mean_cum[K // 2 - 1] if K >= 2 else 0.0, mean_cum[-1]
    if K < 4 or a <= 0 or b <= 0:
        return None
    return float(np.log(b / a) / np.log(K / (K // 2)))


def _label(r: dict) -> str:
    if "legend" in r:
        return r["legend"]
    if r["privacy"] == "none":
        return r["algorithm"] + ("" if r["algorithm"] == "ucrl-vtr" else " (non-private: lambda I, no noise)")
    cert, small = r["accounted_epsilon"], r[f"accounted_epsilon_at_{SMALL_DELTA:g}"]
    return (f"{r['algorithm']} {r['privacy']} claim eps={r['claimed_epsilon']:g}: accounted {cert:.3g} "
            f"@delta={r['delta']:g}, {small:.3g} @{SMALL_DELTA:g}")


def _write_csv(path: Path, rows: list[dict], panel: str) -> None:
    new = not path.exists()
    with path.open("a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["panel", "algorithm", "privacy", "calibration", "claimed_epsilon", "accounted_epsilon", "delta",
                        "episode", "mean_cumulative_regret", "std_cumulative_regret"])
        for r in rows:
            K = len(r["mean"])
            step = max(1, K // 200)
            for k in list(range(step - 1, K, step)) + ([K - 1] if (K - 1) % step != step - 1 else []):
                w.writerow([panel, r["algorithm"], r["privacy"], r["calibration"], r["claimed_epsilon"],
                            r["accounted_epsilon"], r["delta"], k + 1, f"{r['mean'][k]:.6g}", f"{r['std'][k]:.6g}"])


def _plot(panels: dict[str, list[dict]], path: Path, title: str) -> None:
    from privacct.plotting import pyplot

    plt = pyplot()   # the one place matplotlib is set up (privacct/plotting.py)

    names = list(panels)
    ncol = 2
    nrow = (len(names) + 1) // 2
    fig, axes = plt.subplots(nrow, ncol, figsize=(12, 3.6 * nrow), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        for r in panels[name]:
            x = np.arange(1, len(r["mean"]) + 1)
            ax.plot(x, r["mean"], label=_label(r), lw=1.2)
            ax.fill_between(x, r["mean"] - r["std"], r["mean"] + r["std"], alpha=0.2)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("episode k")
        ax.set_ylabel("cumulative regret")
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _strip(r: dict) -> dict:
    return {k: v for k, v in r.items() if k not in ("mean", "std")}


def reproduce(out_dir, *, full: bool = False, seeds: int | None = None, episodes: int | None = None,
              progress: bool = False) -> dict:
    """Write fig2.csv/png (seed 001 settings), own.csv/png (seeds 000/003) and summary.json to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    K = check_count("episodes", episodes) if episodes is not None else (10_000 if full else 1000)
    n = check_count("seeds", seeds) if seeds is not None else (10 if full else 3)
    seed_seqs = spawn_sequences(SEED, n)
    k_tune = min(K, 2000 if full else 300)
    tune_seqs = spawn_sequences(TUNE_SEED, 3 if full else 2)
    for name in ("fig2.csv", "own.csv"):
        (out / name).unlink(missing_ok=True)
    summary: dict = {"episodes": K, "seeds": n, "root_seed": SEED, "delta": DELTA, "eps_grid": list(EPS_GRID),
                     "choices": {"c_grid": list(C_GRID), "tuning_episodes": k_tune, "tuning_seeds": len(tune_seqs),
                                 "tuning_root_seed": TUNE_SEED, "ldp_radius": "paper-experiment",
                                 "ldp_shift": "2 Gamma_k (theory)", "own_bonus_scale": OWN_BONUS},
                     "tuning": {},
                     "fig2": {}, "own": {}}
    # ---- Part 1: seed 001 Figure 2 settings --------------------------------------------------------
    panels: dict[str, list[dict]] = {}
    for env in ("riverswim-lm", "riverswim-lm-inhomogeneous", "hard-to-learn"):
        def mk_u(c, k, env=env):
            return RunConfig("ucrl-vtr", episodes=k, env=env, bonus_scale=c,
                             options=(("instance_episodes", K),) if env == "hard-to-learn" else ())
        cu, summary["tuning"][f"{env} ucrl-vtr"] = _tune(mk_u, C_GRID, k_tune, tune_seqs, progress, f"{env} ucrl-vtr")
        base = _run(mk_u(cu, K), seed_seqs, progress, f"{env} ucrl-vtr")
        for cal in ("paper", "tight"):
            rows = [base]
            for eps in EPS_GRID:
                def mk(c, k, env=env, eps=eps, cal=cal):
                    opts = (("radius", "paper-experiment"),) + ((("instance_episodes", K),) if env == "hard-to-learn" else ())
                    return RunConfig("ldp-ucrl-vtr", privacy="ldp", epsilon=eps, delta=DELTA, calibration=cal, episodes=k,
                                     env=env, bonus_scale=c, options=opts)
                tag = f"{env} ldp eps={eps:g} {cal}"
                cb, summary["tuning"][tag] = _tune(mk, C_GRID, k_tune, tune_seqs, progress, tag)
                rows.append(_run(mk(cb, K), seed_seqs, progress, tag))
            panel = f"{env} [{cal} calibration]"
            panels[panel] = rows
            _write_csv(out / "fig2.csv", rows, panel)
            summary["fig2"][panel] = [_strip(r) for r in rows]
    _plot(panels, out / "fig2.png", f"seed 001 Figure 2 settings: LDP-UCRL-VTR vs UCRL-VTR, K={K}, {n} seeds, "
                                    f"delta={DELTA} (labels: claimed eps and the eps certified for what ran)")
    # ---- Part 2: our own experiment for seeds 000 / 003 ---------------------------------------------
    own: dict[str, list[dict]] = {}
    env = "riverswim-lm"
    refs = [_run(RunConfig("ucrl-vtr", episodes=K, env=env, bonus_scale=OWN_BONUS), seed_seqs, progress, "own ucrl-vtr"),
            _run(RunConfig("private-linopt-vi", privacy="none", episodes=K, env=env, bonus_scale=OWN_BONUS), seed_seqs,
                 progress, "own linopt-vi (non-private)")]
    for cal in ("paper", "tight"):
        rows = list(refs)
        for name, priv in (("private-linopt-vi", "jdp"), ("private-linopt-po", "jdp"), ("pp-ucrl-vtr", "jdp"),
                           ("pp-ucrl-vtr", "ldp")):
            c = RunConfig(name, privacy=priv, epsilon=10.0, delta=DELTA, calibration=cal, episodes=K, env=env,
                          bonus_scale=OWN_BONUS)
            rows.append(_run(c, seed_seqs, progress, f"own {name} {priv} {cal}"))
        panel = f"OUR OWN experiment (no paper figure): {env} eps=10 [{cal}]"
        own[panel] = rows
        _write_csv(out / "own.csv", rows, panel)
        summary["own"][panel] = [_strip(r) for r in rows]
    _plot(own, out / "own.png", f"Our own experiment for seeds 000/003 (they print none): RiverSwim S=3, K={K}, {n} seeds")
    # ---- Part 3: track B (printed noise / divisor, certified eps in every label) --------------------
    summary["track_b"] = track_b(out, K, seed_seqs, progress)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=_json_default) + "\n")
    (out / "README.md").write_text(readme(summary))
    return {"out_dir": str(out), "files": ["fig2.csv", "fig2.png", "own.csv", "own.png", "fig2_track_b.png",
                                           "own_track_b.png", "track_b.csv", "summary.json", "README.md"],
            "episodes": K, "seeds": n}


def track_b(out: Path, K: int, seed_seqs, progress: bool, envs: tuple[str, ...] = TB.ENVS_001,
            seed_000: bool = True) -> dict:
    """Track B panels (:mod:`.track_b`): seed 001 Fig. 2 per RiverSwim MDP and seed 000's own panel;
    writes fig2_track_b.png, own_track_b.png (if ``seed_000``) and track_b.csv; returns
    {panel: {"rows": [...], "order_holds": bool}}."""
    (out / "track_b.csv").unlink(missing_ok=True)
    result: dict = {}
    fig_panels: dict[str, list[dict]] = {}
    own_panels: dict[str, list[dict]] = {}
    for env in envs:
        rows, ok = TB.run_panel(TB.seed_001_curves(env, K), lambda c, t: _run(c, seed_seqs, progress, t), f"B {env}")
        name = f"seed 001 Fig. 2, {env} [track B: noise = printed/{TB.DIVISOR_001:g}]"
        fig_panels[name] = rows
        result[name] = {"figure": "fig2_track_b.png", "rows": [_strip(r) for r in rows], "order_holds": ok}
    if seed_000:
        rows, ok = TB.run_panel(TB.seed_000_curves(K), lambda c, t: _run(c, seed_seqs, progress, t), "B seed 000")
        name = f"seed 000 (no paper figure; OUR OWN), riverswim [track B: noise = printed/{TB.DIVISOR_000:g}]"
        own_panels[name] = rows
        result[name] = {"figure": "own_track_b.png", "rows": [_strip(r) for r in rows], "order_holds": ok}
    n = len(seed_seqs)
    if fig_panels:
        _plot(fig_panels, out / "fig2_track_b.png", f"TRACK B: seed 001 Fig. 2 shape at the eps each curve certifies "
                                                    f"(K={K}, {n} seeds; noise = printed/{TB.DIVISOR_001:g})")
    if own_panels:
        _plot(own_panels, out / "own_track_b.png", f"TRACK B: seed 000 Private-LinOpt-VI, OUR OWN experiment "
                                                   f"(K={K}, {n} seeds; noise = printed/{TB.DIVISOR_000:g})")
    for name, rows in {**fig_panels, **own_panels}.items():
        _write_csv(out / "track_b.csv", rows, name)
    return result


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    return str(o)
