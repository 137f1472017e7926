"""``privacct reproduce tabular``: seed 002 Figure 2 (Chowdhury & Zhou 2022, §6).

Two panels (Private-UCB-PO, Private-UCB-VI) on RiverSwim (S = 6, A = 2, H = 20), five curves
each: non-private, JDP eps in {1, 0.5}, LDP eps in {1, 0.5}; mean cumulative regret +- one std
over seeds. The figure is drawn twice: with the ``paper`` calibration (printed noise scales
3H log K / eps and 3H / eps) and with ``tight`` (replace-one-user sensitivities, noise from the
calibrator for the same claimed eps). Every private curve is labelled with the claimed eps and
the eps the accountant certifies for the noise that ran.

Scale: ``full=True`` is the paper's 20 seeds x K = 2*10^4. The default is REDUCED (5 seeds x
K = 2000) so that it finishes in about a minute; every figure title and the README say so.

Tuned constants (the paper tunes "the learning rate eta and the scaling of the confidence
interval" without printing values, §6; docs/seed-002-tabular.md#why-the-printed-constants-cannot-learn
shows the theory constants cannot learn at this K): :data:`TUNED`. They are the same for every privacy setting and both calibrations; none of
them is a privacy parameter (the noise scales are the printed / calibrated ones).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from privacct.accounting import tightest_epsilon
from privacct.errors import PrivacctError, check_count
from privacct.rng import spawn_sequences

from ..contract import RunConfig
from ..scaleout import run_seeds
from . import LEARNERS, TUNED
from .readme import readme

FULL = {"episodes": 20000, "seeds": 20}
REDUCED = {"episodes": 2000, "seeds": 5}
ROOT_SEED = 2022
#: extra figure: final regret vs claimed eps with the printed (paper) noise, to show where learning starts
SWEEP_EPSILONS = (1.0, 10.0, 100.0, 1000.0, 10000.0)
SWEEP_MAX_SEEDS = 5
SETTINGS = (("Non-private", "none", None), ("JDP", "jdp", 1.0), ("JDP", "jdp", 0.5),
            ("LDP", "ldp", 1.0), ("LDP", "ldp", 0.5))
PANELS = (("ucb-po", "Private-UCB-PO"), ("ucb-vi", "Private-UCB-VI"))
#: Track B (docs/seed-002-tabular.md#figure-tracks: "figure-faithful tuned constants, with the mechanism
#: log reporting the guarantee actually achieved"): the printed noise divided by this factor, i.e. the
#: learner runs with a claim of eps x NOISE_DIVISOR. Chosen from the eps sweep: at 10^4 the JDP
#: curves flatten and LDP stays above them, the shape of the paper's Figure 2.
NOISE_DIVISOR = 1e4
TRACKS = ("paper", "tight", "tuned-noise")
#: The most processes ``workers`` may ask for: a reproduction has at most 3 tracks x 2 panels x 5 settings + the sweep's
#: 2 x 2 x 5 runs (50), each whole in one process (privacct.executors.map_tasks starts at most one per run)
MAX_WORKERS = 64


def _config(alg: str, privacy: str, eps: float | None, calibration: str, K: int) -> RunConfig:
    t = TUNED[alg]
    return RunConfig(alg, privacy, epsilon=1.0 if eps is None else eps, calibration=calibration, episodes=K,
                     env="riverswim", horizon=20, bonus_scale=t["bonus_scale"],
                     options=tuple(sorted(t["options"].items())))


def _run(alg: str, cfg: RunConfig, seeds) -> tuple[np.ndarray, Any, float, float]:
    """One curve's run: (regret (N, K), declared log, wall seconds, CPU seconds of this process). A process pool's
    task (module level)."""
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_seeds(LEARNERS[alg], cfg, seeds)
    return res.regret, res.log, time.perf_counter() - t0, time.process_time() - c0


def _run_all(runs: list[tuple[str, str, RunConfig, list]], progress: bool, workers: int) -> list[tuple]:
    """``[_run(alg, cfg, seeds) for label, alg, cfg, seeds in runs]``, in order: on ``workers`` processes (each run
    whole in one process, so the same bytes as inline), or inline (``workers`` 1, or a connected cluster, which splits
    each run's seeds itself) with each run's progress bar."""
    from ..scaleout import active_client

    workers = _fitting(workers, runs)
    if workers > 1 and len(runs) > 1 and active_client() is None:
        from privacct.executors import map_tasks

        bars = [_bar(label, cfg.episodes, len(seeds)) if progress else None for label, _a, cfg, seeds in runs]

        def done(i: int) -> None:
            if bars[i] is not None:
                bars[i](runs[i][2].episodes)
                bars[i].close()
        return map_tasks(_run, [(alg, cfg, seeds) for _l, alg, cfg, seeds in runs], "processes", workers=workers,
                         on_done=done)
    out = []
    for label, alg, cfg, seeds in runs:   # local, or seed chunks on --scheduler
        t0, c0 = time.perf_counter(), time.process_time()
        res = run_seeds(LEARNERS[alg], cfg, seeds, progress=_bar(label, cfg.episodes, len(seeds)) if progress else None)
        out.append((res.regret, res.log, time.perf_counter() - t0, time.process_time() - c0))
    return out


#: Bytes of a worker process besides its run: the interpreter, numpy, numba and the compiled kernels (about 212 MB
#: measured, docs/performance.md#memory-today), rounded up.
PROCESS_BYTES = 256 << 20


def _fitting(workers: int, runs) -> int:
    """``workers``, fewer if that many of the largest run (:func:`privacct.algorithms.memory.run_estimate`, plus
    :data:`PROCESS_BYTES` each) would not fit the memory available now (at least 1: one run is what the command's own
    memory check admitted)."""
    from privacct.resources import available_bytes

    from ..memory import run_estimate

    room = available_bytes() if workers > 1 and len(runs) > 1 else None
    if room is None:
        return workers
    need = max(run_estimate(LEARNERS[alg], cfg, len(seeds)).total for _l, alg, cfg, seeds in runs) + PROCESS_BYTES
    return max(1, min(workers, room // need))


def default_workers() -> int:
    """Processes for the independent runs of a reproduction: the machine's CPUs (at most 8), 1 on one CPU."""
    return max(1, min(8, os.cpu_count() or 1))


def reproduce(out_dir, *, full: bool = False, seeds: int | None = None, episodes: int | None = None,
              progress: bool = False, tracks: tuple[str, ...] = TRACKS, sweep: bool = True,
              workers: int | None = None) -> dict[str, Any]:
    """Run ``tracks`` (default all three: paper, tight, tuned-noise) x both panels x five settings, and the eps sweep
    (``sweep``); write figures, curves, results, README. ``workers``: processes for the independent runs, in
    [1, :data:`MAX_WORKERS`] (default :func:`default_workers`; each run is whole in one process, so the figures do not
    depend on it). ``privacct reproduce tabular --track NAME ... --workers N`` passes them."""
    scale = FULL if full else REDUCED
    K = check_count("episodes", episodes) if episodes is not None else scale["episodes"]
    N = check_count("seeds", seeds) if seeds is not None else scale["seeds"]
    workers = default_workers() if workers is None else check_count("workers", workers, maximum=MAX_WORKERS)
    tracks = tuple(tracks)
    if not tracks or any(t not in TRACKS for t in tracks) or len(set(tracks)) != len(tracks):
        raise PrivacctError(f"tracks must be distinct names among {', '.join(TRACKS)}, got {', '.join(map(str, tracks))}")
    is_paper_scale = K == FULL["episodes"] and N == FULL["seeds"]
    scale_note = ("paper scale" if is_paper_scale else
                  f"REDUCED scale: K = {K}, {N} seeds (paper: K = {FULL['episodes']}, {FULL['seeds']} seeds)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    seq = spawn_sequences(ROOT_SEED, N)
    results: list[dict[str, Any]] = []
    curves: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
    cache: dict[str, np.ndarray] = {}
    t_all = time.perf_counter()
    for calibration in tracks:
        plan = []   # (alg, title, name, privacy, eps, tuned, cfg, key) of every curve of the track, in figure order
        for alg, title in PANELS:
            for name, privacy, eps in SETTINGS:
                tuned = calibration == "tuned-noise" and eps is not None
                cfg = _config(alg, privacy, eps * NOISE_DIVISOR if tuned else eps,
                              "paper" if calibration == "tuned-noise" else calibration, K)
                plan.append((alg, title, name, privacy, eps, tuned, cfg, f"{alg}/none" if privacy == "none" else None))
        todo = [c for c in plan if c[7] is None or c[7] not in cache]   # the non-private curve runs once per panel
        done = dict(zip((id(c) for c in todo),
                        _run_all([(f"{calibration} {c[0]} {c[3]} {c[4] or ''}", c[0], c[6], seq) for c in todo],
                                 progress, workers), strict=True))
        for c in plan:
            alg, title, name, privacy, eps, tuned, cfg, key = c
            if id(c) in done:
                regret, log, elapsed, cpu = done[id(c)]
                if key is not None:
                    cache[key] = regret
            else:
                regret, log, elapsed, cpu = cache[key], None, 0.0, 0.0
            acc_name, acc = (None, None) if log is None else tightest_epsilon(log, delta=0.0)
            label = name if eps is None else (
                f"{name} (figure's ε = {eps:g}; noise = printed / {NOISE_DIVISOR:g}; certified ε = {acc:.3g})" if tuned
                else f"{name} (claimed ε = {eps:g}; certified ε = {acc:.3g})")
            cum = np.cumsum(regret, axis=1)
            curves[(calibration, alg, label)] = (cum.mean(0), cum.std(0))
            results.append({
                "calibration": calibration, "algorithm": alg, "panel": title, "setting": name,
                "privacy": privacy, "claimed_epsilon": eps, "accounted_epsilon": acc, "accountant": acc_name,
                "noise_scale": None if log is None else log.release_groups[0].noise_scale,
                "regret_at_quarter": float(cum[:, K // 4 - 1].mean()) if K >= 4 else None,
                "regret_at_half": float(cum[:, K // 2 - 1].mean()) if K >= 2 else None,
                "final_regret_mean": float(cum[:, -1].mean()), "final_regret_std": float(cum[:, -1].std()),
                "seconds": elapsed, "cpu_seconds": cpu, "label": label,
            })
        _figure(curves, calibration, K, N, scale_note, out / f"figure2_{calibration}.png")
    rows = _eps_sweep(K, min(N, SWEEP_MAX_SEEDS), cache, seq, progress, workers) if sweep else []
    if sweep:
        _sweep_figure(rows, K, min(N, SWEEP_MAX_SEEDS), scale_note, out / "eps_sweep_paper.png")
    total = time.perf_counter() - t_all
    np.savez_compressed(out / "curves.npz", **{
        f"{c}__{a}__{i}__{stat}": arr for i, ((c, a, lab), (m, s)) in enumerate(curves.items())
        for stat, arr in (("mean", m), ("std", s))})
    summary = {"scale": scale_note, "episodes": K, "seeds": N, "root_seed": ROOT_SEED, "horizon": 20,
               "env": "riverswim", "tuned": TUNED, "seconds": total, "results": results, "eps_sweep": rows}
    (out / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "README.md").write_text(readme(summary, NOISE_DIVISOR, TUNED))
    return summary


#: ``privacct reproduce tabular`` shows this reproduction's own progress bar per run (no heartbeat around it).
reproduce.draws_progress = True
#: ``privacct reproduce --workers`` refuses more than this (one line, exit 2, nothing written)
reproduce.max_workers = MAX_WORKERS


def _eps_sweep(K: int, n: int, cache: dict, seq, progress: bool, workers: int) -> list[dict[str, Any]]:
    """Final regret (mean over ``n`` seeds) vs claimed eps, paper calibration, JDP and LDP; the non-private rows are
    the first ``n`` seeds of the figure's non-private runs (a seed's regret is its own: batched = one by one)."""
    runs = [(f"sweep {alg} none", alg, _config(alg, "none", None, "paper", K), seq[:n]) for alg, _t in PANELS
            if f"{alg}/none" not in cache]
    runs += [(f"sweep {alg} {privacy} {eps:g}", alg, _config(alg, privacy, eps, "paper", K), seq[:n])
             for alg, _t in PANELS for privacy in ("jdp", "ldp") for eps in SWEEP_EPSILONS]
    done = _run_all(runs, progress, workers)
    runs = [(f"sweep {alg} none", alg, _config(alg, "none", None, "paper", K), seq[:n]) for alg, _t in PANELS
            if f"{alg}/none" in cache] + runs
    done = [(cache[f"{alg}/none"][:n], None, 0.0, 0.0) for alg, _t in PANELS if f"{alg}/none" in cache] + done
    rows = []
    for (_l, alg, cfg, _s), (regret, log, _sec, _cpu) in zip(runs, done, strict=True):
        fin = regret.sum(axis=1)
        acc_name, acc = (None, None) if log is None else tightest_epsilon(log, delta=0.0)
        rows.append({"algorithm": alg, "privacy": cfg.privacy,
                     "claimed_epsilon": None if cfg.privacy == "none" else cfg.epsilon,
                     "accounted_epsilon": acc, "accountant": acc_name,
                     "final_regret_mean": float(fin.mean()), "final_regret_std": float(fin.std())})
    order = {(alg, p): i for i, (alg, p) in enumerate((a, p) for a, _t in PANELS for p in ("none", "jdp", "ldp"))}
    return sorted(rows, key=lambda r: order[(r["algorithm"], r["privacy"])])   # per panel: none, then jdp, then ldp


def _sweep_figure(rows, K: int, n: int, scale_note: str, path: Path) -> None:
    from privacct.plotting import pyplot

    plt = pyplot()   # the one place matplotlib is set up (privacct/plotting.py)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (alg, title) in zip(axes, PANELS, strict=True):
        base = [r for r in rows if r["algorithm"] == alg and r["privacy"] == "none"][0]
        for privacy in ("jdp", "ldp"):
            rr = [r for r in rows if r["algorithm"] == alg and r["privacy"] == privacy]
            ax.errorbar([r["claimed_epsilon"] for r in rr], [r["final_regret_mean"] for r in rr],
                        yerr=[r["final_regret_std"] for r in rr], marker="o", capsize=3,
                        label=f"{privacy.upper()} (printed noise; certified ε = "
                              f"{rr[0]['accounted_epsilon'] / rr[0]['claimed_epsilon']:.3g} × claimed)")
        ax.axhline(base["final_regret_mean"], color="k", ls="--", label="Non-private")
        ax.set_xscale("log")
        ax.set_xlabel("claimed ε")
        ax.set_ylabel(f"Cumulative regret at K = {K}")
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.suptitle(f"Where the printed noise lets the learners learn (RiverSwim H = 20, {scale_note}, {n} seeds)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bar(label: str, K: int, N: int):
    from ..runner import ProgressBar

    return ProgressBar(K, label=label, unit_scale=N, enabled=True)


def _figure(curves, calibration: str, K: int, N: int, scale_note: str, path: Path) -> None:
    from privacct.plotting import pyplot

    plt = pyplot()   # the one place matplotlib is set up (privacct/plotting.py)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    x = np.arange(1, K + 1)
    for ax, (alg, title) in zip(axes, PANELS, strict=True):
        for (c, a, label), (m, s) in curves.items():
            if c != calibration or a != alg:
                continue
            ax.plot(x, m, label=label)
            ax.fill_between(x, m - s, m + s, alpha=0.2)
        ax.set_title(title)
        ax.set_xlabel("Episode (K)")
        ax.set_ylabel("Cumulative Regret")
        ax.ticklabel_format(style="sci", scilimits=(0, 0), axis="both")
        ax.legend(loc="upper left", fontsize=7)
    t = TUNED
    fig.suptitle(f"Seed 002 Fig. 2, RiverSwim H = 20, calibration = {calibration} ({scale_note}); mean ± std over {N} seeds\n"
                 f"tuned (not privacy) constants: VI bonus×{t['ucb-vi']['bonus_scale']:g}, PO bonus×{t['ucb-po']['bonus_scale']:g}, "
                 f"E×{t['ucb-vi']['options']['e_scale']:g}, η = {t['ucb-po']['options']['eta']:g};\n"
                 + (f"noise = printed / {NOISE_DIVISOR:g} (TUNED, track B, docs/seed-002-tabular.md#figure-tracks): the shape of the paper's figure, "
                    "at the eps the accountant certifies in each label" if calibration == "tuned-noise" else
                    f"{'printed' if calibration == 'paper' else 'calibrated to the claim'} (not tuned). Near-linear private "
                    "curves = the noise dominates the counts at this K (docs/seed-002-tabular.md); see eps_sweep_paper.png"), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
