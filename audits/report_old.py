"""``privacct report``: every private algorithm of the five papers, its claim verified three ways,
side by side with its regret.

For each private learner in :mod:`privacct.algorithms.registry` and each setting at which its paper states a
claim (``LearnerSpec.paper_settings``), one row:

* **accounted**: the learner's declared log with the printed constants (``calibration="paper"``,
  at the paper's K) through every accountant (:func:`privacct.report.privacy_report`), the
  verdict, and the cause of a failure (the release group and the paper's equation);
* **noise the claim needs**: the same learner's ``tight`` log (corrected sensitivities,
  calibrated to the same claim) divided by the printed noise, group by group;
* **audit**: an empirical lower bound from neighbouring-user simulations (canary A vs B in
  episode 1, valid under the paper's relation) of the paper-calibrated learner at its small audit
  configuration (:func:`privacct.audits.suite.audit_setting`), shown BESIDE the accounted eps of that
  same configuration (K, H, noise, relation), with a verdict passes / fails / inconclusive (passes
  only with power: :mod:`privacct.audits.power`);
* **regret**: exact cumulative regret at the report's K, paper vs tight calibration.

Outputs in ``--out DIR``: ``report.json`` (``{"rows": [...], "settings": ..., "assumptions": ...}``),
``report.md``, ``report.html`` (figures embedded), ``regret-<family>.png``, ``sandwich.png``, and
each row's mechanism logs. This module may import :mod:`privacct.algorithms` (it is the suite's report).
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import math
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from privacct.errors import PrivacctError, check_count
from privacct.log import MechanismLog
from privacct.report import privacy_report
from privacct.rng import spawn_sequences

GENERAL_ASSUMPTIONS = [
    "Neighbouring datasets differ in one user (one episode's trajectory) replaced by another "
    "(replace-one-user), the relation of the papers' JDP/LDP definitions; sensitivities are derived under it.",
    "A pure-DP claim (delta = 0) is checked at delta = 0, where only basic composition applies; "
    "approximate claims are checked at the claimed delta with every accountant.",
    "A binary-tree counter over K leaves puts one user in floor(log2 K) + 1 noised nodes (noise drawn once per node).",
    "The audit runs the paper-calibrated learner at a small audit configuration (privacct.audits.suite.AUDIT_SETTINGS) "
    "and is compared with the accounted eps of THAT configuration (eps_lb <= eps_accounted is asserted); the accounted "
    "column at the paper's K is a different configuration. Every family is audited with the other users fixed (two "
    "fixed neighbouring datasets, valid under the paper's relation: JDP response functions sharing a_1 where the paper "
    "fixes s_1) observing every release that contains user 1, with the exact likelihood-ratio test.",
    "Regret is exact: V*_1(s_1) - V^{pi_k}_1(s_1) by backward induction on the true model, summed over episodes.",
    "Bonus/confidence multipliers are tunables (RunConfig.bonus_scale, recorded per run), not privacy parameters.",
]


@dataclass(frozen=True)
class ReportScale:
    """How big each part of the report runs. ``default()`` finishes in minutes; ``full()`` uses
    the papers' K and seed counts for regret and a larger audit."""

    regret_episodes: dict[str, int]
    seeds: int
    audit_episodes: int
    audit_horizon: int | None
    audit_trials: int
    #: per family (episodes, horizon, trials): unused since the audits run at each learner's audit
    #: configuration (privacct.audits.suite.AUDIT_SETTINGS); kept for the JSON record.
    audit_by_family: dict[str, tuple[int, int | None, int]] = field(default_factory=dict)
    #: trials per side of each audit: privacct.audits.suite.suggest_trials within [audit_trials, max_audit_trials]
    #: (4 x what a median run needs to certify a violation of the claim, when one is there to certify).
    max_audit_trials: int = 100_000

    @classmethod
    def default(cls) -> "ReportScale":
        return cls({"tabular": 2000, "linear-mixture": 300, "linear-mdp": 300}, seeds=4,
                   audit_episodes=4, audit_horizon=1, audit_trials=2000, max_audit_trials=100_000)

    @classmethod
    def full(cls) -> "ReportScale":
        return cls({}, seeds=10, audit_episodes=4, audit_horizon=1, audit_trials=20_000, max_audit_trials=400_000)

    @classmethod
    def tiny(cls) -> "ReportScale":
        """For the test suite: seconds, not minutes."""
        return cls({"tabular": 40, "linear-mixture": 8, "linear-mdp": 8}, seeds=2,
                   audit_episodes=4, audit_horizon=1, audit_trials=200, max_audit_trials=200)


def _default_settings(spec) -> list[dict[str, Any]]:
    """eps = 1 for every private model; delta = 0 if the learner's log is pure, else 1e-5."""
    from privacct.algorithms.base import RunConfig

    settings = []
    for privacy in ("jdp", "ldp"):
        if privacy in spec.privacy_models:
            delta = 0.0
            try:
                log = spec.build_log(RunConfig(spec.name, privacy=privacy, epsilon=1.0, delta=0.0))
                if log is not None and any(g.mechanism != "laplace" for g in log.release_groups):
                    delta = 1e-5
            except PrivacctError:
                delta = 1e-5
            settings.append({"privacy": privacy, "epsilon": 1.0, "delta": delta})
    return settings


def paper_configs(only: list[str] | None = None):
    """(spec, RunConfig) for every private learner at every setting its paper states a claim."""
    from privacct.algorithms.base import RunConfig
    from privacct.algorithms.registry import learners

    table = learners()
    if only:
        unknown = sorted(set(only) - set(table))
        if unknown:
            raise PrivacctError(f"--only must name learners among {', '.join(sorted(table))}, got {', '.join(unknown)}")
    out = []
    for name, spec in sorted(table.items(), key=lambda kv: (kv[1].paper, kv[0])):
        if only and name not in only:
            continue
        if not any(p in spec.privacy_models for p in ("jdp", "ldp")):
            continue
        for s in (spec.paper_settings or _default_settings(spec)):
            kw = dict(s)
            kw.setdefault("calibration", "paper")
            if "options" in kw:
                kw["options"] = tuple(kw["options"])
            out.append((spec, RunConfig(algorithm=name, **kw)))
    return out


def _noise_ratios(paper_log: MechanismLog, tight_log: MechanismLog) -> dict[str, float]:
    tight = {g.name: g.noise_scale for g in tight_log.release_groups}
    return {g.name: tight[g.name] / g.noise_scale for g in paper_log.release_groups if g.name in tight}


def _run_regret(spec, cfg, seeds: int, seed: int) -> np.ndarray:
    res = spec.run(cfg, spawn_sequences(seed, seeds))
    return np.cumsum(np.asarray(res.regret, dtype=float), axis=1)


def _command(cfg, *, what: str, episodes: int, seeds: int = 0, trials: int = 0, horizon: int | None = None,
             audit=None) -> str:
    """The command line (run) or Python call (audit) that reproduces one part of a row (the same config)."""
    if what == "audit":
        a = audit
        if a.env is None and a.bonus_scale == 1.0 and not a.options:   # the CLI can express this configuration
            return (f"privacct audit {a.algorithm} --privacy {a.privacy} --epsilon {a.epsilon:g} --delta {a.delta:g} "
                    f"--calibration {a.calibration} --episodes {a.episodes} --horizon {a.horizon} --trials {trials} "
                    "--observe released --json")
        return (f"python -c \"from privacct.audits.suite import audit_setting; print(audit_setting({a.algorithm!r}, "
                f"{a.privacy!r}, calibration='paper', epsilon={a.epsilon!r}, delta={a.delta!r}).run(trials={trials}).summary())\"")
    base = f"--privacy {cfg.privacy} --epsilon {cfg.epsilon:g} --delta {cfg.delta:g} --calibration paper --episodes {episodes}"
    if cfg.env:
        base += f" --env {cfg.env}"
    if horizon:
        base += f" --horizon {horizon}"
    base += f" --bonus-scale {cfg.bonus_scale:g}" + "".join(f" --option {k}={v}" for k, v in cfg.options)
    return f"privacct run {cfg.algorithm} {base} --seeds {seeds} --out runs/{cfg.algorithm}-{cfg.privacy} --json"


def build_row(spec, cfg, scale: ReportScale, *, seed: int, out_dir: Path,
              say: Callable[[str], None]) -> dict[str, Any]:
    """One row of the report (see the module docstring)."""
    from .suite import audit_setting, suggest_trials

    t0 = time.perf_counter()
    tag = f"{cfg.algorithm}-{cfg.privacy}-eps{cfg.epsilon:g}"
    say(f"{tag}: accounting the printed constants")
    paper_log = spec.build_log(cfg)
    tight_cfg = replace(cfg, calibration="tight")
    tight_log = spec.build_log(tight_cfg)
    if paper_log is None or tight_log is None:
        raise PrivacctError(f"learner {cfg.algorithm!r} returned no mechanism log for privacy={cfg.privacy!r}")
    logs_dir = out_dir / "logs"
    logs_dir.mkdir(parents=True, exist_ok=True)
    paper_log.save(logs_dir / f"{tag}-paper.json")
    tight_log.save(logs_dir / f"{tag}-tight.json")
    rep = privacy_report(paper_log)

    k_run = scale.regret_episodes.get(spec.family, cfg.episodes)
    k_run = min(k_run, cfg.episodes)
    say(f"{tag}: regret at K={k_run}, {scale.seeds} seeds, paper and tight")
    run_cfg = replace(cfg, episodes=k_run)
    cum_paper = _run_regret(spec, run_cfg, scale.seeds, seed)
    cum_tight = _run_regret(spec, replace(run_cfg, calibration="tight"), scale.seeds, seed)

    audit_cfg = audit_setting(cfg.algorithm, cfg.privacy, calibration="paper", epsilon=cfg.epsilon, delta=cfg.delta)
    a_trials = suggest_trials(audit_cfg, low=scale.audit_trials, high=scale.max_audit_trials)
    say(f"{tag}: audit at its audit configuration (K={audit_cfg.episodes}, H={audit_cfg.horizon}), {a_trials} trials "
        "per side, other users fixed, every release of user 1 observed")
    audit = audit_cfg.run(trials=a_trials, seed=seed, executor="inline")   # raises if eps_lb > accounted (same config)
    eps_lb = float(audit.epsilon_lower_bound)
    if rep.holds is False:
        verdict = "FAILS (accountant+audit)" if audit.verdict == "fails" else "FAILS (accountant)"
    else:
        # the sandwich is asserted inside the audit; an audit above a claim the accountant certifies at the
        # paper's K would mean the small audit configuration accounts above the claim: reported as it is
        verdict = "FAILS (audit)" if audit.verdict == "fails" else rep.verdict
    causes = list(rep.causes) if not rep.holds else []
    ratios = _noise_ratios(paper_log, tight_log)
    row = {
        "algorithm": cfg.algorithm,
        "paper": spec.paper,
        "family": spec.family,
        "privacy_model": cfg.privacy,
        "claimed_epsilon": cfg.epsilon,
        "claimed_delta": cfg.delta,
        "paper_episodes": cfg.episodes,
        "accounted_epsilon": rep.tightest_epsilon,
        "accounted": rep.epsilons,
        "tightest": rep.tightest,
        "audit_epsilon_lower_bound": eps_lb,
        "audit_accounted_epsilon": float(audit.accounted_epsilon),
        "audit_verdict": audit.verdict,
        "audit": {"episodes": audit_cfg.episodes, "horizon": audit_cfg.horizon, "env": audit_cfg.env,
                  "bonus_scale": audit_cfg.bonus_scale, "options": [list(o) for o in audit_cfg.options],
                  "trials": a_trials, "observe": audit_cfg.observe, "fixed_users": audit_cfg.fixed_users,
                  "accounted_epsilon": float(audit.accounted_epsilon), "accountant": audit.accountant,
                  "verdict": audit.verdict, "sandwich_ok": audit.sandwich_ok, "test": str(audit.test),
                  "oracle_epsilon": None if audit.oracle is None else audit.oracle.epsilon,
                  "has_power": audit.power.has_power, "power": audit.power.to_dict()},
        "verdict": verdict,
        "causes": causes,
        "printed_slips": list(rep.causes),
        "over_noising_factor": rep.over_noising_factor,
        "noise_ratio_tight_over_printed": ratios,
        "regret_episodes": k_run,
        "seeds": scale.seeds,
        "regret_paper": float(cum_paper[:, -1].mean()),
        "regret_paper_std": float(cum_paper[:, -1].std()),
        "regret_tight": float(cum_tight[:, -1].mean()),
        "regret_tight_std": float(cum_tight[:, -1].std()),
        "tight_accounted_epsilon": privacy_report(tight_log).tightest_epsilon,
        "assumptions": [f"{g.name}: sensitivity {g.sensitivity.value:g} ({g.sensitivity.norm}) - {g.sensitivity.derivation}"
                        for g in paper_log.release_groups],
        "commands": {
            "verify": f"privacct verify {(logs_dir / (tag + '-paper.json')).as_posix()}",
            "run": _command(cfg, what="run", episodes=k_run, seeds=scale.seeds, horizon=cfg.horizon),
            "audit": _command(cfg, what="audit", episodes=audit_cfg.episodes, trials=a_trials, audit=audit_cfg),
        },
        "seconds": time.perf_counter() - t0,
        "_curves": {"paper": cum_paper.mean(0), "tight": cum_tight.mean(0)},
    }
    return row


# --------------------------------------------------------------------------- figures
def _downsample(y: np.ndarray, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(1, len(y) + 1)
    if len(y) <= n:
        return x, y
    idx = np.unique(np.linspace(0, len(y) - 1, n).astype(int))
    return x[idx], y[idx]


def plot_regret(rows: list[dict], family: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fam = [r for r in rows if r["family"] == family]
    fig, axes = plt.subplots(1, len(fam), figsize=(4.2 * len(fam), 3.4), squeeze=False)
    for ax, r in zip(axes[0], fam, strict=True):
        for mode, style in (("paper", "-"), ("tight", "--")):
            x, y = _downsample(r["_curves"][mode])
            eps = r["accounted_epsilon"] if mode == "paper" else r["tight_accounted_epsilon"]
            ax.plot(x, y, style, label=f"{mode} (certified eps={eps:.3g})")
        ax.set_title(f"{r['algorithm']} {r['privacy_model'].upper()} claim eps={r['claimed_epsilon']:g}", fontsize=9)
        ax.set_xlabel("episode")
        ax.set_ylabel("cumulative regret")
        ax.legend(fontsize=7)
    fig.suptitle(f"{family}: printed vs tight calibration (mean over {fam[0]['seeds']} seeds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sandwich(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(7, 0.9 * len(rows) + 2), 4.6))
    x = np.arange(len(rows))
    lb = np.array([r["audit_epsilon_lower_bound"] for r in rows])
    acc = np.array([r["audit_accounted_epsilon"] for r in rows])   # the SAME configuration as the audit
    paper_k = np.array([r["accounted_epsilon"] for r in rows])    # the paper's K: another configuration
    cl = np.array([r["claimed_epsilon"] for r in rows])
    positive = np.concatenate([v[v > 0] for v in (lb, acc, paper_k, cl)])
    floor = 10.0 ** math.floor(math.log10(positive.min() / 3.0))  # zeros are drawn here, hollow
    at = lambda v: np.where(v > 0, v, floor)  # noqa: E731
    ax.vlines(x, at(lb), at(acc), color="0.75", lw=3, zorder=1)
    ax.scatter(x + 0.25, paper_k, marker="x", color="tab:purple", zorder=3,
               label="eps accounted at the paper's K (printed constants; another configuration)")
    for vals, marker, color, label in ((lb, "^", "tab:green", "eps audit (lower bound, measured)"),
                                       (acc, "v", "tab:red", "eps accounted at the audit configuration (upper bound)")):
        pos = vals > 0
        ax.scatter(x[pos], vals[pos], marker=marker, color=color, zorder=3, label=label)
        ax.scatter(x[~pos], np.full((~pos).sum(), floor), marker=marker, facecolors="none", edgecolors=color, zorder=3,
                   label=f"{label.split(' (')[0]} = 0 (drawn at {floor:g})" if (~pos).any() else None)
    ax.scatter(x, cl, marker="_", s=500, color="k", zorder=4, label="eps claimed")
    for i, r in enumerate(rows):
        ax.annotate(r["audit_verdict"], (x[i], at(lb)[i]), textcoords="offset points", xytext=(0, -12), ha="center",
                    fontsize=6, color="tab:green" if r["audit_verdict"] != "fails" else "tab:red")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, max(positive.max(), cl.max()) * 3)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{r['algorithm']}\n{r['privacy_model']} eps={r['claimed_epsilon']:g}" for r in rows],
                       rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("epsilon (log scale)")
    ax.set_title("eps_audit <= eps_true <= eps_accounted of the same (audit) configuration, against eps_claimed",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------- documents
COLUMNS = ["algorithm", "model", "claimed (eps, delta)", "accounted eps (printed constants, paper's K)",
           "audit eps LB <= accounted eps, same (audit) configuration", "audit verdict", "verdict",
           "tight noise / printed", "regret at K: paper vs tight", "paper"]


def _fmt_ratios(r: dict) -> str:
    v = list(r["noise_ratio_tight_over_printed"].values())
    if not v:
        return "n/a"
    lo, hi = min(v), max(v)
    return f"{lo:.3g}" if math.isclose(lo, hi, rel_tol=1e-6) else f"{lo:.3g}-{hi:.3g}"


def _cells(r: dict) -> list[str]:
    acc = ", ".join(f"{k} {v:.4g}" for k, v in r["accounted"].items())
    return [
        r["algorithm"], r["privacy_model"].upper(), f"({r['claimed_epsilon']:g}, {r['claimed_delta']:g})",
        f"**{r['accounted_epsilon']:.4g}** ({r['tightest']}); {acc}",
        f"{r['audit_epsilon_lower_bound']:.3g} <= {r['audit_accounted_epsilon']:.3g} (K={r['audit']['episodes']}, "
        f"H={r['audit']['horizon']}, {r['audit']['trials']} trials)", r["audit_verdict"], r["verdict"], _fmt_ratios(r),
        f"K={r['regret_episodes']}: {r['regret_paper']:.4g} vs {r['regret_tight']:.4g}", r["paper"],
    ]


def to_markdown(doc: dict, figures: list[str]) -> str:
    rows = doc["rows"]
    out = ["# privacct report", "",
           f"Generated {doc['generated']} with `{doc['command']}` ({doc['scale_name']} scale, {doc['seconds']:.0f} s).", "",
           "The sandwich every row checks: eps_audit (measured lower bound) <= eps_true <= eps_accounted (derived upper "
           "bound) <=? eps_claimed. The accounted column uses the paper's printed constants at the paper's K; the tight "
           "column is the noise the same claim needs with corrected sensitivities, as a multiple of the printed noise.", "",
           "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(c.replace("|", "/") for c in _cells(r)) + " |" for r in rows]
    out += ["", "## Why a claim fails", ""]
    for r in rows:
        if r["causes"]:
            out.append(f"- **{r['algorithm']} {r['privacy_model'].upper()} eps={r['claimed_epsilon']:g}**: accounted "
                       f"{r['accounted_epsilon']:.4g} > claimed {r['claimed_epsilon']:g}.")
            out += [f"  - {c}" for c in r["causes"]]
        elif r["verdict"] != "holds":
            out.append(f"- **{r['algorithm']} {r['privacy_model'].upper()}**: {r['verdict']} (no printed statement names a cause).")
    out += ["", "## Figures", ""] + [f"![{f}]({f})" for f in figures]
    out += ["", "## Reproduce each row", ""]
    for r in rows:
        out.append(f"- {r['algorithm']} {r['privacy_model'].upper()} eps={r['claimed_epsilon']:g}:")
        out += [f"  - `{c}`" for c in r["commands"].values()]
    out += ["", "## Assumptions the toolkit made where a paper is silent", ""]
    out += [f"- {a}" for a in doc["assumptions"]]
    out += ["", "Per release group (sensitivity under replace-one-user and its derivation):", ""]
    for r in rows:
        out.append(f"- {r['algorithm']} {r['privacy_model'].upper()}:")
        out += [f"  - {a}" for a in r["assumptions"]]
    return "\n".join(out) + "\n"


def to_html(markdown_doc: dict, figures: list[str], out_dir: Path) -> str:
    rows = markdown_doc["rows"]
    head = "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c.replace('**', ''))}</td>" for c in _cells(r)) + "</tr>" for r in rows)
    imgs = "".join(
        f'<figure><img alt="{html.escape(f)}" src="data:image/png;base64,'
        f'{base64.b64encode((out_dir / f).read_bytes()).decode()}"/><figcaption>{html.escape(f)}</figcaption></figure>'
        for f in figures)
    causes = "".join(f"<li><b>{html.escape(r['algorithm'])} {r['privacy_model'].upper()}</b><ul>"
                     + "".join(f"<li>{html.escape(c)}</li>" for c in r["causes"]) + "</ul></li>" for r in rows if r["causes"])
    cmds = "".join(f"<li>{html.escape(r['algorithm'])} {r['privacy_model'].upper()}<ul>"
                   + "".join(f"<li><code>{html.escape(c)}</code></li>" for c in r["commands"].values()) + "</ul></li>" for r in rows)
    assum = "".join(f"<li>{html.escape(a)}</li>" for a in markdown_doc["assumptions"])
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>privacct report</title><style>"
        "body{font-family:sans-serif;max-width:1400px;margin:2em auto}table{border-collapse:collapse;font-size:13px}"
        "td,th{border:1px solid #bbb;padding:4px 6px;vertical-align:top}th{background:#eee}img{max-width:100%}"
        "</style></head><body><h1>privacct report</h1>"
        f"<p>Generated {html.escape(markdown_doc['generated'])} with <code>{html.escape(markdown_doc['command'])}</code>.</p>"
        f"<table>{head}{body}</table><h2>Why a claim fails</h2><ul>{causes}</ul><h2>Figures</h2>{imgs}"
        f"<h2>Reproduce each row</h2><ul>{cmds}</ul><h2>Assumptions</h2><ul>{assum}</ul></body></html>\n"
    )


def terminal_table(rows: list[dict]) -> str:
    head = (f"{'algorithm':<22} {'model':<5} {'claim':>8} {'accounted':>10} {'audit LB <= acc. (same cfg)':>27} "
            f"{'audit':<12} {'verdict':<24} {'tight/printed':>13} {'regret paper/tight':>22}")
    lines = [head, "-" * len(head)]
    for r in rows:
        same = f"{r['audit_epsilon_lower_bound']:.3g} <= {r['audit_accounted_epsilon']:.3g}"
        lines.append(f"{r['algorithm']:<22} {r['privacy_model'].upper():<5} {r['claimed_epsilon']:>8g} "
                     f"{r['accounted_epsilon']:>10.4g} {same:>27} {r['audit_verdict']:<12} {r['verdict']:<24} "
                     f"{_fmt_ratios(r):>13} {r['regret_paper']:>10.4g}/{r['regret_tight']:<10.4g}")
    return "\n".join(lines)


def make_report(out_dir: str | Path, *, scale: ReportScale, scale_name: str = "default", seed: int = 0,
                only: list[str] | None = None, command: str = "privacct report",
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build every row, write report.json / report.md / report.html and the figures; return the document."""
    out = Path(out_dir)
    configs = paper_configs(only)
    if not configs:
        raise PrivacctError("no private learner is registered (privacct.algorithms.registry is empty)")
    t0 = time.perf_counter()
    rows = []
    for i, (spec, cfg) in enumerate(configs, 1):
        say = (lambda msg, i=i: progress(f"[{i}/{len(configs)}] {msg}")) if progress else (lambda msg: None)
        rows.append(build_row(spec, cfg, scale, seed=seed, out_dir=out, say=say))
    figures = []
    for family in sorted({r["family"] for r in rows}):
        name = f"regret-{family}.png"
        plot_regret(rows, family, out / name)
        figures.append(name)
    plot_sandwich(rows, out / "sandwich.png")
    figures.append("sandwich.png")
    doc = {
        "generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": command,
        "scale_name": scale_name,
        "scale": {"regret_episodes": scale.regret_episodes, "seeds": scale.seeds, "audit_episodes": scale.audit_episodes,
                  "audit_horizon": scale.audit_horizon, "audit_trials": scale.audit_trials,
                  "audit_by_family": scale.audit_by_family},
        "seed": seed,
        "seconds": time.perf_counter() - t0,
        "assumptions": GENERAL_ASSUMPTIONS,
        "rows": [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
        "figures": figures,
    }
    (out / "report.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    (out / "report.md").write_text(to_markdown(doc, figures))
    (out / "report.html").write_text(to_html(doc, figures, out))
    return doc


# --------------------------------------------------------------------------- command line
def register_report(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("report", help="verify every seed algorithm's claim, side by side with its regret")
    p.add_argument("--out", default="privacct-report", help="output directory (default: privacct-report)")
    p.add_argument("--full", action="store_true", help="the papers' K and seed counts (hours), not the default minutes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", nargs="+", metavar="ALGORITHM", help="only these learners")
    p.add_argument("--json", action="store_true", help="print report.json's rows instead of the table")
    p.set_defaults(func=cmd_report)
    return p


def cmd_report(args) -> int:
    check_count("--seed", args.seed, minimum=0)
    scale = ReportScale.full() if args.full else ReportScale.default()
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise PrivacctError(f"--out must be a directory, got the file {str(out)!r}")
    configs = paper_configs(args.only)  # validate --only before anything is written
    if not configs:
        raise PrivacctError("no private learner is registered")
    out.mkdir(parents=True, exist_ok=True)
    command = "privacct report " + " ".join(a for a in sys.argv[2:]) if sys.argv[1:2] == ["report"] else "privacct report"
    doc = make_report(out, scale=scale, scale_name="full" if args.full else "default", seed=args.seed,
                      only=args.only, command=command.strip(), progress=lambda m: print(m, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(doc["rows"], indent=2))
    else:
        print(terminal_table(doc["rows"]))
        print(f"\nwrote {out / 'report.md'}, {out / 'report.html'}, {out / 'report.json'}")
    return 0
