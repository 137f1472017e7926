"""Run one :class:`~privacct.algorithms.base.RunConfig` over N seeds in one batch and write its outputs.

Files written to ``out_dir`` (created if needed) as one complete set or not at all
(:class:`privacct.outputs.OutputSet`: staged, then renamed into place, ``manifest.json`` last):

* ``curves.npz``  -- ``regret`` (N, K) exact per-episode regret, ``cumulative`` (N, K);
* ``curves.csv``  -- episode, mean, std, min, max of cumulative regret over seeds;
* ``mechanism_log.json`` -- the declared log the run used (private runs only);
* ``privacy_report.json`` -- :func:`privacct.report.privacy_report` of that log, plus the
  declared-vs-executed ledger check (private runs only);
* ``regret.png`` -- cumulative regret, mean and a +-1 std band over seeds;
* ``summary.json`` -- what :func:`run_experiment` returns, without the timings: the same seed gives
  the same bytes (every file but ``timing.json`` is byte-reproducible, :mod:`privacct.atomic`);
* ``timing.json`` -- ``elapsed_seconds`` and ``episodes_per_second`` (aggregate: seeds x K /
  wall-clock seconds of the learner's run);
* ``manifest.json`` -- every file with its size and SHA-256 (written last).

Before anything is built, ``out_dir`` is checked (:func:`privacct.outputs.check_out`) and the
run's memory is estimated (:func:`privacct.algorithms.memory.run_estimate`) and refused with one
line above the limit (:func:`privacct.resources.check_memory`).

The summary names the constant set the run used (``constants``: theory | tuned, or ``custom`` for a
config built by hand; ``constants_overridden``: the fields the caller set on top of the set) and the
exact regret of the uniform random policy at the same K (``uniform_policy_regret``), so that a curve
near that level reads as "did not learn" (docs/learners.md#constant-sets).
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from privacct import atomic
from privacct.errors import PrivacctError, check_count
from privacct.outputs import Outputs, OutputSet, check_out
from privacct.progress import Progress
from privacct.resources import check_memory
from privacct.rng import spawn_sequences

from .base import ConstantSet, RunConfig, RunResult
from .memory import run_estimate
from .registry import get_learner

#: What ``privacct run`` writes (:class:`privacct.outputs.Outputs`).
RUN_OUTPUTS = Outputs("privacct run", ("curves.npz", "curves.csv", "mechanism_log.json", "privacy_report.json",
                                       "regret.png", "summary.json", "timing.json"))
#: Fields of the summary that are timings: written to ``timing.json``, not ``summary.json``.
TIMING_FIELDS = ("elapsed_seconds", "episodes_per_second")


class ProgressBar:
    """Episode progress of one batched run, in the one convention of :mod:`privacct.progress` (a tqdm
    bar on a terminal, a line every few seconds otherwise); ``enabled=False``: nothing."""

    def __init__(self, total: int, label: str = "", stream=None, enabled: bool | None = None, unit_scale: int = 1):
        self.total = max(1, int(total))
        self._p = Progress(self.total, label, unit="episodes", scale=unit_scale, quiet=enabled is False, stream=stream)

    def __call__(self, done: int) -> None:
        self._p.update(done)
        if done >= self.total:
            self._p.close()

    def close(self) -> None:
        self._p.close()


def _figure(curves: dict[str, np.ndarray], *, title: str = "", uniform_per_episode: float | None = None):
    from privacct.plotting import pyplot

    plt = pyplot()   # the one place matplotlib is set up (privacct/plotting.py)

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, regret in curves.items():
        cum = np.cumsum(np.atleast_2d(regret), axis=1)
        x = np.arange(1, cum.shape[1] + 1)
        m, s = cum.mean(axis=0), cum.std(axis=0)
        ax.plot(x, m, label=label)
        ax.fill_between(x, m - s, m + s, alpha=0.25)
    if uniform_per_episode is not None:
        K = max(np.atleast_2d(r).shape[1] for r in curves.values())
        x = np.arange(1, K + 1)
        ax.plot(x, uniform_per_episode * x, "k--", lw=1, label="uniform random policy (exact)")
    ax.set_xlabel("Episode (K)")
    ax.set_ylabel("Cumulative regret")
    ax.ticklabel_format(style="sci", scilimits=(0, 0), axis="both")
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig, plt


def plot_cumulative(curves: dict[str, np.ndarray], path: str | Path, *, title: str = "",
                    uniform_per_episode: float | None = None) -> None:
    """PNG of cumulative regret (for each label, the mean over seeds and a +-1 std band; with
    ``uniform_per_episode``, the uniform random policy's exact cumulative regret as a dashed line),
    written atomically with fixed metadata (:func:`privacct.atomic.write_png`): same curves, same bytes."""
    fig, plt = _figure(curves, title=title, uniform_per_episode=uniform_per_episode)
    try:
        atomic.write_png(path, fig)
    finally:
        plt.close(fig)


def write_curves(regret: np.ndarray, out_dir: Path) -> None:
    """``curves.npz`` and ``curves.csv`` (module docstring), each written atomically, reproducible bytes."""
    cum = np.cumsum(regret, axis=1)
    atomic.write_npz(out_dir / "curves.npz", {"regret": regret, "cumulative": cum})
    ep = np.arange(1, cum.shape[1] + 1)
    table = np.column_stack([ep, cum.mean(0), cum.std(0), cum.min(0), cum.max(0)])
    buf = io.StringIO()
    np.savetxt(buf, table, delimiter=",", fmt=["%d", "%.6g", "%.6g", "%.6g", "%.6g"],
               header="episode,cumulative_regret_mean,cumulative_regret_std,cumulative_regret_min,cumulative_regret_max",
               comments="")
    atomic.write_text(out_dir / "curves.csv", buf.getvalue())


def check_run_memory(config: RunConfig, n_seeds: int) -> None:
    """Refuse (one line, exit 2) a run whose arrays would not fit in memory, before anything is allocated."""
    spec = get_learner(config.algorithm)
    est = run_estimate(spec, config, n_seeds)
    named = f"--episodes {config.episodes} x --seeds {n_seeds}"
    lower = "--episodes or --seeds"
    if config.horizon is not None:
        named += f" x --horizon {config.horizon}"
        lower = "--episodes, --seeds or --horizon"
    check_memory(est.total, args=named, what=est.main_terms(), lower=lower)


def privacy_summary(result: RunResult) -> dict[str, Any]:
    """Claimed and accounted epsilon of the log the run used, the report and the ledger check."""
    from privacct.accounting import tightest_epsilon
    from privacct.ledger import check_ledger
    from privacct.report import privacy_report

    log = result.log
    if log is None:
        return {"claimed_epsilon": None, "accounted_epsilon": None, "accountant": None, "report": None,
                "ledger_check": None}
    delta = log.claim.delta if log.claim is not None else result.config.delta
    name, eps = tightest_epsilon(log, delta=delta)
    report = privacy_report(log)
    check = check_ledger(log, result.ledger) if result.ledger is not None and len(result.ledger) else None
    return {
        "claimed_epsilon": None if log.claim is None else log.claim.epsilon,
        "accounted_epsilon": eps,
        "accountant": name,
        "report": report.to_dict(),
        "ledger_check": None if check is None else check.to_dict(),
    }


def uniform_policy_regret(config: RunConfig) -> float | None:
    """K times the exact per-episode regret of the uniform random policy on ``config``'s environment
    (None when the learner's family does not provide it)."""
    spec = get_learner(config.algorithm)
    if spec.uniform_regret is None:
        return None
    return float(config.episodes * spec.uniform_regret(config))


def run_experiment(config: RunConfig, *, n_seeds: int, seed: int = 0, out_dir: str | Path | None = None,
                   progress: bool | Callable[[int], None] | None = None, constants: ConstantSet | None = None,
                   overridden: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run ``config`` for ``n_seeds`` seeds (spawned from ``seed``) in one batch; write outputs.

    ``progress``: True/None = :class:`ProgressBar` on stderr, False = none, or a callable taking the
    number of episodes done. ``constants``: the :class:`ConstantSet` ``config`` was built from
    (recorded; None = ``custom``), ``overridden``: the fields set on top of it. Returns the summary dict
    (``summary.json`` plus the timings; with ``out_dir``, also ``out`` (the absolute directory) and
    ``written`` (the files, manifest included)). ``out_dir`` is checked, the memory estimated and the
    directory locked before the learner runs.
    """
    n_seeds = check_count("seeds", n_seeds)
    spec = get_learner(config.algorithm)
    if out_dir is not None:
        check_out(out_dir, RUN_OUTPUTS)
    check_run_memory(config, n_seeds)
    spec.build_log(config)  # validates the configuration before anything runs
    seeds = spawn_sequences(seed, n_seeds)
    with contextlib.ExitStack() as stack:
        outputs = stack.enter_context(OutputSet(out_dir, RUN_OUTPUTS)) if out_dir is not None else None
        if callable(progress):
            cb = progress
        elif progress is False:
            cb = None
        else:
            cb = ProgressBar(config.episodes, label=f"run {config.algorithm}/{config.privacy}", unit_scale=n_seeds)
            stack.callback(cb.close)
        t0 = time.perf_counter()
        result = spec.run(config, seeds, progress=cb)
        elapsed = time.perf_counter() - t0
        regret = np.asarray(result.regret, dtype=float)
        if regret.shape != (n_seeds, config.episodes):
            raise PrivacctError(f"learner {config.algorithm!r} returned regret of shape {regret.shape}, "
                                f"expected {(n_seeds, config.episodes)}")
        final = regret.sum(axis=1)
        priv = privacy_summary(result)
        uniform = uniform_policy_regret(config)
        summary: dict[str, Any] = {
            "algorithm": config.algorithm,
            "family": spec.family,
            "privacy": config.privacy,
            "calibration": config.calibration,
            "epsilon": config.epsilon,
            "delta": config.delta,
            "episodes": config.episodes,
            "seeds": n_seeds,
            "seed": seed,
            "env": config.env or spec.default_env,
            "horizon": config.horizon,
            "bonus_scale": config.bonus_scale,
            "options": {k: v for k, v in config.options},
            "constants": "custom" if constants is None else constants.name,
            "constants_how": None if constants is None else constants.how,
            "constants_overridden": list(overridden),
            "final_regret_mean": float(final.mean()),
            "final_regret_std": float(final.std()),
            "uniform_policy_regret": uniform,
            "regret_over_uniform": None if not uniform else float(final.mean()) / uniform,
            "claimed_epsilon": priv["claimed_epsilon"],
            "accounted_epsilon": priv["accounted_epsilon"],
            "accountant": priv["accountant"],
            "claim_holds": None if priv["report"] is None else priv["report"].get("holds"),
            "ledger_ok": None if priv["ledger_check"] is None else priv["ledger_check"]["ok"],
        }
        timing = {"elapsed_seconds": elapsed, "episodes_per_second": n_seeds * config.episodes / max(elapsed, 1e-12)}
        if outputs is None:
            return {**summary, **timing}
        out = outputs.staging
        write_curves(regret, out)
        files = ["curves.npz", "curves.csv", "regret.png", "summary.json", "timing.json"]
        if result.log is not None:
            atomic.write_text(out / "mechanism_log.json", result.log.to_json() + "\n")
            atomic.write_json(out / "privacy_report.json", {"report": priv["report"], "ledger_check": priv["ledger_check"]},
                              default=_jsonable)
            files += ["mechanism_log.json", "privacy_report.json"]
        label = config.privacy if config.privacy == "none" else (
            f"{config.privacy.upper()} (claimed eps={config.epsilon:g}, accounted {priv['accounted_epsilon']:.3g})")
        plot_cumulative({f"{label}, {summary['constants']} constants": regret}, out / "regret.png",
                        title=f"{config.algorithm} on {summary['env']}, {n_seeds} seeds",
                        uniform_per_episode=None if uniform is None else uniform / config.episodes)
        summary["files"] = sorted(files)
        atomic.write_json(out / "summary.json", summary, default=_jsonable)
        atomic.write_json(out / "timing.json", timing)
        written = outputs.commit()
        return {**summary, **timing, "out": str(outputs.final), "written": written}


def _jsonable(x: Any) -> Any:
    """JSON fallback for numpy scalars/arrays (anything else: its string form)."""
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)
