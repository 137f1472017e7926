"""Run one :class:`~privacct.algorithms.contract.RunConfig` over N seeds in one batch and write its outputs.

Files written to ``out_dir`` (created if needed) as one complete set or not at all
(:class:`privacct.outputs.OutputSet`: staged, then renamed into place, ``manifest.json`` last):

* ``curves.npz``  -- ``regret`` (N, K) exact per-episode regret, ``cumulative`` (N, K);
* ``curves.csv``  -- episode, mean, std, min, max of cumulative regret over seeds;
* ``mechanism_log.json`` -- the declared log the run used (private runs only);
* ``privacy_report.json`` -- :func:`privacct.privacy_report.privacy_report` of that log, plus the
  declared-vs-executed ledger check (private runs only);
* ``regret.png`` -- cumulative regret, mean and a +-1 std band over seeds;
* ``summary.json`` -- what :func:`run_experiment` returns, without the timings: the run's RunConfig serialised
  whole (:meth:`~privacct.algorithms.contract.RunConfig.to_dict`, the environment resolved) and the run's results; the
  same seed gives the same bytes (every file but ``timing.json`` is byte-reproducible, :mod:`privacct.atomic`);
* ``timing.json`` -- ``elapsed_seconds`` and ``episodes_per_second`` (aggregate: seeds x K /
  wall-clock seconds of the learner's run);
* ``manifest.json`` -- every file with its size and SHA-256 (written last).

Before anything is built, ``out_dir`` is checked (:func:`privacct.outputs.check_out`) and the
run's memory is estimated (:func:`privacct.algorithms.memory.run_estimate`) and refused with one
line above the limit (:func:`privacct.resources.check_memory`).

The summary carries the claim's verdict (``verdict``: ``holds`` / ``FAILS``, ``verdict_cause``: for a failing
claim the one-line computed cause, :func:`privacct.explain.headline`), the same verdict as
``privacy_report.json`` and ``privacct verify mechanism_log.json``; :func:`verdict_line` is the line
``privacct run`` prints. A run that completes exits 0 whatever the verdict (``privacct verify`` is the check
whose exit status is the verdict).

Before a long run: with the default progress (not ``progress=False``, i.e. not ``--quiet``), the first
:data:`ESTIMATE_WINDOW` seconds of episodes after the first progress report (the compiled loops are warm by
then) are timed and extrapolated to all K episodes (:class:`RunEstimate`); an estimate above
:data:`ESTIMATE_THRESHOLD` seconds is said once on stderr, e.g. ``run ucb-vi/jdp: estimated 3 min 20 s in all
for 20 seeds x K = 20,000 episodes (extrapolated from the rate of episodes 101-1,300; an estimate)``. A
shorter run says nothing.

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
from privacct.progress import Progress, note
from privacct.resources import check_memory
from privacct.rng import spawn_sequences

from .contract import ConstantSet, RunConfig, RunResult
from .memory import run_estimate
from .registry import get_learner

#: What ``privacct run`` writes (:class:`privacct.outputs.Outputs`).
RUN_OUTPUTS = Outputs("privacct run", ("curves.npz", "curves.csv", "mechanism_log.json", "privacy_report.json",
                                       "regret.png", "summary.json", "timing.json"))
#: The order of the summary's first keys (``summary.json``, ``privacct run --json``): the run's RunConfig
#: (:meth:`~privacct.algorithms.contract.RunConfig.to_dict`) with the run's own ``family``, ``seeds`` and ``seed`` among
#: its fields; the values come from the record.
SUMMARY_HEAD = dict.fromkeys(("algorithm", "family", "privacy", "calibration", "epsilon", "delta", "episodes", "seeds",
                              "seed"))
#: Fields of the summary that are timings: written to ``timing.json``, not ``summary.json``.
TIMING_FIELDS = ("elapsed_seconds", "episodes_per_second")
#: A run whose estimated wall-clock time exceeds this many seconds says so on stderr (not with ``--quiet``).
ESTIMATE_THRESHOLD = 60.0
#: Seconds of episodes timed, after the first progress report, before the estimate is made.
ESTIMATE_WINDOW = 2.0


def duration_text(seconds: float) -> str:
    """``45 s``, ``3 min 20 s``, ``2 h 05 min``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def cost_growth(log) -> int:
    """The largest growth g of the episode cost (episode k costs a k^g, :class:`RunEstimate`) that the counters of a
    declared log cause: a factorized counter's per-step growth (:attr:`privacct.counters.strategies.Strategy.
    step_cost_growth`; sqrt-toeplitz sums its t past draws at step t) counts when the counter steps with the episodes.
    A counter over L leaves costs O(L^2) a run with g = 1; over K episodes (the log's ``K``; without one, L + 1) that
    grows the episode cost only when L^2 > K: the per-episode counters (L = K - 1: private-lsvi-ucb, the tabular and
    linear-mixture JDP learners) do; the batched learner's B - 1 batch leaves (batched_jdp, B = O((K eps)^0.4)) do not
    at its default B, whose O(B^2) fits within the episodes' constant cost. 0 for a log without factorized counters or
    None."""
    if log is None:
        return 0
    from privacct.counters.strategies import Strategy

    K = log.params.get("K")
    growth = 0
    for g in log.release_groups:
        if g.structure is None or g.structure.kind != "factorized":
            continue
        L = int(g.structure.leaves or 0)
        episodes = int(K) if isinstance(K, (int, np.integer)) and K >= 1 else L + 1
        if L * L > episodes:
            growth = max(growth, Strategy.of(g.structure).step_cost_growth)
    return growth


class RunEstimate:
    """The time estimate of one batched run (module docstring), fed with the number of episodes done.

    The first progress report (after the learner's set-up and its compiled loops' first episode) starts
    the clock of the rate; once :data:`ESTIMATE_WINDOW` seconds of episodes have been timed, the run's
    total is estimated as the time so far plus the remaining episodes at that rate, and ``say`` gets one
    line if it exceeds :data:`ESTIMATE_THRESHOLD`. The estimate is redone at later reports until it is said,
    but not once half the episodes are done (the progress line says what is left by then)."""

    def __init__(self, episodes: int, n_seeds: int, label: str, *, say: Callable[[str], None] | None = None,
                 threshold: float | None = None, window: float | None = None, clock: Callable[[], float] = time.perf_counter,
                 growth: int = 0):
        self.episodes, self.n_seeds, self.label = max(1, int(episodes)), int(n_seeds), label
        #: the cost of episode k grows as k^growth (0: constant; 1: a sqrt-toeplitz counter summing every past draw)
        self.growth = int(growth)
        self.threshold = ESTIMATE_THRESHOLD if threshold is None else threshold
        self.window = ESTIMATE_WINDOW if window is None else window
        self._clock = clock
        self._say = say
        self.start = clock()
        self._first: tuple[int, float] | None = None
        self.said: str | None = None

    def estimate(self, done: int, now: float) -> float | None:
        """Seconds the whole run is estimated to take, from the reports so far (None: not enough timed yet)."""
        if self._first is None:
            return None
        d0, t0 = self._first
        if done <= d0 or now - t0 < self.window:
            return None
        if self.growth == 0:
            return (now - self.start) + (self.episodes - done) * (now - t0) / (done - d0)
        # episode k costs a k^g: episodes d0+1..done took a (done^(g+1) - d0^(g+1)) / (g+1), the rest the same way
        p = self.growth + 1
        return (now - self.start) + (now - t0) * (float(self.episodes) ** p - float(done) ** p) / (float(done) ** p - float(d0) ** p)

    def __call__(self, done: int) -> None:
        if self.said is not None or done >= self.episodes:
            return
        now = self._clock()
        if self._first is None:
            self._first = (int(done), now)
            return
        total = self.estimate(int(done), now)
        if total is None or total <= self.threshold or 2 * done > self.episodes:
            return
        d0 = self._first[0]
        seeds = f"{self.n_seeds} seed{'s' if self.n_seeds != 1 else ''}"
        grows = "" if self.growth == 0 else f", each episode's cost growing as k^{self.growth}"
        self.said = (f"{self.label}: estimated {duration_text(total)} in all for {seeds} x K = {self.episodes:,} episodes "
                     f"(extrapolated from the rate of episodes {d0 + 1:,}-{int(done):,}{grows}; an estimate)")
        if self._say is not None:
            self._say(self.said)


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
    from privacct.explain import headline
    from privacct.ledger import check_ledger
    from privacct.privacy_report import privacy_report

    log = result.log
    if log is None:
        return {"claimed_epsilon": None, "accounted_epsilon": None, "accountant": None, "report": None,
                "ledger_check": None, "verdict": None, "verdict_cause": None}
    delta = log.claim.delta if log.claim is not None else result.config.delta
    report = privacy_report(log)
    # with a claim the report is at the claim's delta (privacct.accounting.default_delta): its tightest figure is the
    # run's; without one the run's delta differs, and the accountants are asked once more at it
    name, eps = (report.tightest, report.tightest_epsilon) if log.claim is not None else tightest_epsilon(log, delta=delta)
    check = check_ledger(log, result.ledger) if result.ledger is not None and len(result.ledger) else None
    return {
        "claimed_epsilon": None if log.claim is None else log.claim.epsilon,
        "accounted_epsilon": eps,
        "accountant": name,
        "report": report.to_dict(),
        "ledger_check": None if check is None else check.to_dict(),
        "verdict": report.verdict,
        "verdict_cause": headline(report.explanation) if report.holds is False else None,
    }


def verdict_line(summary: dict[str, Any]) -> str | None:
    """The line ``privacct run`` prints for the claim of a private run (None for a run without a log):
    ``claim eps=1 delta=0: FAILS (accounted 2.95 > 1, basic; <the computed cause>)`` or
    ``claim eps=0.5 delta=0: holds (accounted 0.5 <= 0.5, basic)``; a ledger that does not match the
    declared log is said after it."""
    verdict = summary.get("verdict")
    if verdict is None:
        return None
    claimed, acc, name = summary.get("claimed_epsilon"), summary.get("accounted_epsilon"), summary.get("accountant")
    head = "claim" if claimed is None else f"claim eps={claimed:g} delta={summary.get('delta', 0.0):g}"
    if acc is None or claimed is None:
        figure = "accounted eps n/a"
    elif verdict == "FAILS":
        figure = f"accounted {acc:.3g} > {claimed:g}, {name}"
    elif acc == 0.0:
        verdict, figure = "holds trivially", f"accounted 0 at delta={summary.get('delta', 0.0):g}, {name}"
    else:
        figure = f"accounted {acc:.3g} <= {claimed:g}, {name}"
    cause = summary.get("verdict_cause")
    line = f"{head}: {verdict} ({figure}{'; ' + cause if cause else ''})"
    if summary.get("ledger_ok") is False:
        line += "; LEDGER MISMATCH: the run executed releases its declared log does not account (privacy_report.json)"
    return line


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
    declared = spec.declared_log(config)  # the family validates its options before anything runs (built once per record)
    seeds = spawn_sequences(seed, n_seeds)
    with contextlib.ExitStack() as stack:
        outputs = stack.enter_context(OutputSet(out_dir, RUN_OUTPUTS)) if out_dir is not None else None
        if callable(progress):
            cb = progress
        elif progress is False:
            cb = None
        else:
            label = f"run {config.algorithm}/{config.privacy}"
            bar = ProgressBar(config.episodes, label=label, unit_scale=n_seeds)
            stack.callback(bar.close)
            estimate = RunEstimate(config.episodes, n_seeds, label, say=note, growth=cost_growth(declared))

            def cb(done: int) -> None:
                estimate(done)
                bar(done)
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
            **SUMMARY_HEAD,                                         # the keys' order in summary.json
            **config.to_dict(),                                     # the record, serialised whole
            "env": config.env or spec.default_env,                  # ... with the environment it ran
            "family": spec.family, "seeds": n_seeds, "seed": seed,
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
            "verdict": priv["verdict"],
            "verdict_cause": priv["verdict_cause"],
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
