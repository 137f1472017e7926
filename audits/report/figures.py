"""The report's figures, all drawn through :mod:`privacct.plotting` (one style, at most 3 panels a row).

* :func:`plot_regret` -- one PNG per family, one panel per row: cumulative regret of the private
  learner with the printed and the tight noise, the non-private learner at the same K and
  constants, and the uniform random policy. Each curve has its own colour, line style and marker
  (they stay apart where they coincide); legends carry the accounted eps *and delta*.
* :func:`plot_sandwich` -- per row, the audit's lower bound and the accounted eps of the same
  (audit) configuration, the accounted eps at the setting's K and the claim, on a log axis. A
  zero cannot sit on a log axis: it is drawn as a hollow marker on a floor line and annotated
  "0", never as a bar reaching down to the floor.
* :func:`plot_readings` -- per row with readings, the accounted eps of each reading against the
  claim (the proof-supported reading marked).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from privacct import plotting

#: Curves of a regret panel: key in ReportRow.curves, label stem.
CURVES = (("paper", "private, printed noise"), ("tight", "private, tight noise"), ("nonprivate", "non-private"),
          ("uniform", "uniform policy"))


def _eps(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def plot_regret(rows, family: str, path: Path) -> None:
    fam = [r for r in rows if r.family == family]
    fig, axes = plotting.panel_grid(len(fam), size=(4.6, 4.4))
    for ax, r in zip(axes, fam, strict=True):
        d = r.setting.delta
        labels = {"paper": f"{CURVES[0][1]} (accounted eps {_eps(r.report.tightest_epsilon)}, delta {d:g})",
                  "tight": f"{CURVES[1][1]} (accounted eps {_eps(r.tight_accounted_epsilon)}, delta {d:g})",
                  "nonprivate": f"{CURVES[2][1]} ({r.regret.nonprivate_learner})", "uniform": CURVES[3][1]}
        for i, (key, _) in enumerate(CURVES):
            if key in r.curves:
                plotting.plot_curve(ax, r.curves[key], i, labels[key])
        ax.set_title(f"{r.algorithm} {r.setting.privacy.upper()}, claim eps {r.setting.epsilon:g}, delta {d:g}")
        ax.set_xlabel("episode")
        ax.set_ylabel("cumulative regret")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=1)   # below the panel: never over a curve
    fig.suptitle(f"{family}: cumulative regret (mean over {fam[0].regret.seeds} seeds, K = {fam[0].regret.episodes})")
    plotting.save(fig, path)


def _floor(values: np.ndarray) -> float:
    pos = values[values > 0]
    low = pos.min() if pos.size else 1.0
    return 10.0 ** math.floor(math.log10(low / 3.0))


def plot_sandwich(rows, path: Path) -> None:
    """One line per row (rows down the y axis, eps on a log x axis), so the figure grows in height only."""
    plt = plotting.pyplot()
    n = len(rows)
    fig, ax = plt.subplots(figsize=(9.0, 0.42 * n + 2.6))
    y = np.arange(n, dtype=float)[::-1]
    lb = np.array([r.audit["epsilon_lower_bound"] for r in rows], dtype=float)
    acc = np.array([r.audit["accounted_epsilon"] for r in rows], dtype=float)
    at_k = np.array([np.nan if r.report.tightest_epsilon is None else r.report.tightest_epsilon for r in rows])
    claim = np.array([r.setting.epsilon for r in rows], dtype=float)
    allv = np.concatenate([lb, acc, np.nan_to_num(at_k), claim])
    floor = _floor(allv)
    ax.axvline(floor, color="0.6", lw=0.8, ls=":")
    series = ((lb, 0.15, 0, "eps audit: measured lower bound (audit configuration)"),
              (acc, 0.0, 1, "eps accounted at the audit configuration (upper bound, same configuration)"),
              (at_k, -0.15, 2, "eps accounted at the setting's K (printed constants)"))
    for vals, dy, i, label in series:
        st = plotting.style(i)
        pos = np.nan_to_num(vals) > 0
        ax.scatter(vals[pos], y[pos] + dy, marker=st["marker"], color=st["color"], zorder=3, label=label)
        zero = ~pos & ~np.isnan(vals)
        if zero.any():
            ax.scatter(np.full(zero.sum(), floor), y[zero] + dy, marker=st["marker"], facecolors="none",
                       edgecolors=st["color"], zorder=3)
            for yi in y[zero]:
                ax.annotate("0", (floor, yi + dy), textcoords="offset points", xytext=(-9, -3), fontsize=7,
                            color=st["color"])
    ax.scatter(claim, y, marker="|", s=300, color="k", zorder=4, label="eps of the setting (claimed or toolkit's)")
    top = max(np.nanmax(np.where(allv > 0, allv, np.nan)), claim.max())
    ax.set_xscale("log")
    ax.set_xlim(floor / 4, top * 3)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{r.algorithm} {r.setting.privacy.upper()} eps={r.setting.epsilon:g} delta={r.setting.delta:g} "
                        f"(audit: {r.audit['verdict']})" for r in rows], fontsize=7)
    ax.set_xlabel(f"epsilon (log scale); hollow markers annotated 0 on the dotted line at {floor:g} are zeros")
    ax.set_title("eps_audit <= eps_true <= eps_accounted (same audit configuration)\nagainst the setting's eps")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -1.2 / (0.42 * n + 2.6)), ncol=1)
    plotting.save(fig, path)


def plot_readings(rows, path: Path) -> bool:
    """One panel per row that carries readings; False (nothing written) when no row does."""
    with_readings = [r for r in rows if r.report.readings is not None]
    if not with_readings:
        return False
    fig, axes = plotting.panel_grid(len(with_readings))
    for ax, r in zip(axes, with_readings, strict=True):
        res = r.report.readings.results
        y = np.arange(len(res))
        vals = [0.0 if x.explanation.accounted_epsilon is None else x.explanation.accounted_epsilon for x in res]
        for j, x in enumerate(res):
            st = plotting.style(0 if x.supported_by else 1)
            ax.scatter([vals[j]], [y[j]], marker=st["marker"], color=st["color"], zorder=3,
                       label=("supported by the paper's proof" if x.supported_by else "other reading")
                       if j == next(k for k, z in enumerate(res) if bool(z.supported_by) == bool(x.supported_by)) else None)
            ax.annotate(f"{vals[j]:.3g} ({x.explanation.breakdown.dominant_family.name})", (vals[j], y[j]),
                        textcoords="offset points", xytext=(5, 4), fontsize=7)
        ax.axvline(r.setting.epsilon, color="k", lw=1.0, ls="--",
                   label=f"claim eps {r.setting.epsilon:g} (delta {r.setting.delta:g})")
        ax.set_yticks(y)
        ax.set_yticklabels([x.name for x in res], fontsize=7)
        ax.set_xlim(0, max(vals + [r.setting.epsilon]) * 1.45)
        ax.set_xlabel("accounted eps (dominant family)")
        ax.set_ylim(-0.6, len(res) - 0.4)
        ax.set_title(f"{r.algorithm} {r.setting.privacy.upper()}, eps {r.setting.epsilon:g}: every reading")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1)
    fig.suptitle("Readings of ambiguous printed settings: accounted eps of each")
    plotting.save(fig, path)
    return True


__all__ = ["CURVES", "plot_readings", "plot_regret", "plot_sandwich"]
