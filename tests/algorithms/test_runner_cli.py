"""`privacct run`, `privacct reproduce` and the runner's files (the learner registry: test_registry.py)."""

import json
import math

import numpy as np
import pytest

from privacct.algorithms import registry
from privacct.algorithms.contract import RunConfig
from privacct.algorithms.runner import ProgressBar, run_experiment
from privacct.accounting import tightest_epsilon
from privacct.cli import main
from privacct.log import MechanismLog
from privacct.privacy_report import privacy_report


def test_run_json_and_files(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(["run", "ucb-vi", "--privacy", "jdp", "--epsilon", "0.5", "--calibration", "paper",
               "--episodes", "12", "--seeds", "3", "--env", "riverswim", "--horizon", "6", "--out", str(out), "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    for key in ("final_regret_mean", "final_regret_std", "episodes_per_second", "claimed_epsilon", "accounted_epsilon"):
        assert key in summary
    assert summary["claimed_epsilon"] == 0.5
    log = MechanismLog.load(out / "mechanism_log.json")
    assert log.params["K"] == 12 and log.params["H"] == 6
    assert summary["accounted_epsilon"] == pytest.approx(tightest_epsilon(log, delta=0.0)[1])
    assert summary["accounted_epsilon"] > 0.5  # printed constants miss the claim under replace-one-user
    assert summary["ledger_ok"] is True and summary["claim_holds"] is False
    assert summary["verdict"] == "FAILS" and "Lemma 5.1" in summary["verdict_cause"]   # the run says it, not only the file
    rep = json.loads((out / "privacy_report.json").read_text())
    assert rep["report"]["holds"] is False and rep["ledger_check"]["ok"] is True
    curves = np.load(out / "curves.npz")
    assert curves["regret"].shape == (3, 12)
    assert summary["final_regret_mean"] == pytest.approx(curves["regret"].sum(axis=1).mean())
    csv = np.loadtxt(out / "curves.csv", delimiter=",", skiprows=1)
    assert csv.shape == (12, 5)
    np.testing.assert_allclose(csv[:, 1], curves["cumulative"].mean(0), rtol=1e-5)
    assert (out / "regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((out / "summary.json").read_text())["seeds"] == 3


def test_run_tight_meets_claim_and_text_output(tmp_path, capsys):
    rc = main(["run", "ucb-po", "--privacy", "ldp", "--epsilon", "1", "--calibration", "tight", "--episodes", "5",
               "--seeds", "2", "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "accounted eps 1" in text
    assert "\nclaim eps=1 delta=0: holds (accounted 1 <= 1, " in text and "FAILS" not in text
    log = MechanismLog.load(tmp_path / "mechanism_log.json")
    assert privacy_report(log).holds is True


def test_run_non_private_has_no_privacy_files(tmp_path, capsys):
    rc = main(["run", "ucb-vi", "--episodes", "4", "--seeds", "2", "--out", str(tmp_path), "--json",
               "--option", "e_scale=0.5"])
    assert rc == 0
    s = json.loads(capsys.readouterr().out)
    assert s["accounted_epsilon"] is None and s["claimed_epsilon"] is None
    assert not (tmp_path / "mechanism_log.json").exists()


@pytest.mark.parametrize("argv, needle", [
    (["--epsilon", "0"], "--epsilon"),
    (["--epsilon", "-1"], "--epsilon"),
    (["--episodes", "0"], "--episodes"),
    (["--seeds", "0"], "--seeds"),
    (["--horizon", "0"], "--horizon"),
    (["--option", "canary=C", "--privacy", "jdp"], "canary"),
    (["--option", "nonsense=1"], "unknown option"),
    (["--env", "mountaincar"], "env"),
    (["--counter", "blt"], "--counter applies only to a private run"),
    (["--counter", "blt", "--privacy", "ldp"], "counter applies to JDP"),
    (["--counter", "blt", "--privacy", "jdp", "--option", "counter=tree"], "--counter and --option counter"),
])
def test_bad_run_arguments_exit_2(tmp_path, capsys, argv, needle):
    rc = main(["run", "ucb-vi", "--out", str(tmp_path / "x"), "--episodes", "3"] + argv)
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_unknown_algorithm_exits_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "ucb-xx", "--out", str(tmp_path)])
    assert e.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_run_help_lists_registry_names(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "--help"])
    assert e.value.code == 0
    text = capsys.readouterr().out
    for name in registry.learners():
        assert name in text
    assert "ucb-vi" in text and "ucb-po" in text


def test_reproduce_tabular_tiny(tmp_path, capsys):
    rc = main(["reproduce", "tabular", "--out", str(tmp_path), "--seeds", "2", "--episodes", "8", "--no-progress"])
    assert rc == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert "REDUCED" in res["scale"] and res["episodes"] == 8 and res["seeds"] == 2
    rows = res["results"]
    from privacct.results import check_results

    check_results(rows + res["eps_sweep"])          # the one results schema
    assert len(rows) == 3 * 2 * 5  # tracks (paper, tight, tuned-noise) x panels x settings
    for r in rows:
        if r["privacy"] != "none" and r["calibration"] == "tuned-noise":
            # track B (docs/seed-002-tabular.md#figure-tracks) runs the printed noise / NOISE_DIVISOR: it certifies far more than the figure's eps
            assert r["accounted_epsilon"] > 1000 * r["claimed_epsilon"]
        if r["privacy"] != "none" and r["calibration"] == "tight":
            assert r["accounted_epsilon"] <= r["claimed_epsilon"] * (1 + 1e-9)
        if r["privacy"] != "none" and r["calibration"] == "paper":
            assert r["accounted_epsilon"] > r["claimed_epsilon"]
        assert f"{r['accounted_epsilon']:.3g}" in r["label"] if r["accounted_epsilon"] else True
    sweep = res["eps_sweep"]
    assert len(sweep) == 2 * (1 + 2 * 5)
    for r in sweep:
        if r["privacy"] == "jdp":  # (6H - 3) / 3H x (floor(log2 (8 - 1)) + 1) / ln 8 times the claim (H = 20)
            assert r["accounted_epsilon"] == pytest.approx(r["claimed_epsilon"] * (117 / 60) * 3 / math.log(8))
    for name in ("figure2_paper.png", "figure2_tight.png", "figure2_tuned-noise.png", "eps_sweep_paper.png"):
        assert (tmp_path / name).stat().st_size > 1000
    text = (tmp_path / "README.md").read_text()
    assert "Tuned constants" in text and "## Per figure" in text
    assert all(f"| {f} |" in text for f in ("figure2_paper.png", "figure2_tight.png", "figure2_tuned-noise.png"))


def test_reproduce_bad_input_exits_2(tmp_path, capsys):
    assert main(["reproduce", "tabular", "--out", str(tmp_path), "--seeds", "0"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "bandits", "--out", str(tmp_path)])
    assert e.value.code == 2


def test_runner_progress_callback_and_summary(tmp_path):
    seen = []
    s = run_experiment(RunConfig("ucb-vi", "ldp", episodes=10), n_seeds=2, out_dir=None, progress=seen.append)
    assert seen and seen[-1] == 10 and seen == sorted(seen)
    assert s["ledger_ok"] is True and math.isfinite(s["episodes_per_second"])


def test_progress_bar_follows_the_one_convention(monkeypatch):
    """Not a terminal: a plain line when the interval has passed (none within it); disabled: nothing."""
    import io

    buf = io.StringIO()
    ProgressBar(4, label="x", stream=buf)(4)  # within the interval: nothing
    assert buf.getvalue() == ""
    monkeypatch.setenv("PRIVACCT_PROGRESS_INTERVAL", "0")
    bar = ProgressBar(4, label="run x", stream=buf)
    bar(4)
    assert buf.getvalue().startswith("run x: 4/4 episodes (100%)") and buf.getvalue().endswith("\n")
    quiet = io.StringIO()
    ProgressBar(4, label="x", stream=quiet, enabled=False)(4)
    assert quiet.getvalue() == ""


def test_run_counter_flag_is_recorded_in_the_log(tmp_path, capsys):
    rc = main(["run", "ucb-vi", "--privacy", "jdp", "--calibration", "tight", "--episodes", "9", "--counter", "tree-honaker",
               "--out", str(tmp_path), "--json", "--no-progress"])
    assert rc == 0
    log = json.loads((tmp_path / "mechanism_log.json").read_text())
    assert log["parameters"]["counter"] == "tree-honaker"
    assert log["release_groups"][0]["structure"] == {"kind": "factorized", "leaves": 8, "strategy": "tree-honaker"}


def test_a_failing_claim_is_printed_and_the_completed_run_exits_0(tmp_path, capsys):
    """The verdict is on stdout (text: one 'claim ...: FAILS (accounted ... > ...; cause)' line; --json: verdict),
    the same as privacy_report.json's; a completed run exits 0 whatever it is (privacct run --help says so)."""
    argv = ["run", "ucb-vi", "--privacy", "jdp", "--episodes", "6", "--horizon", "3", "--quiet"]
    assert main(argv + ["--out", str(tmp_path / "t")]) == 0
    lines = capsys.readouterr().out.splitlines()
    claim = [ln for ln in lines if ln.startswith("claim ")]
    assert len(claim) == 1 and claim[0].startswith("claim eps=1 delta=0: FAILS (accounted ") and " > 1, basic; " in claim[0]
    assert lines[-1].startswith("wrote ")
    report = json.loads((tmp_path / "t" / "privacy_report.json").read_text())["report"]
    assert report["verdict"] == "FAILS" and f"{report['accounted_epsilon']:.3g} > 1" in claim[0]
    assert main(argv + ["--out", str(tmp_path / "j"), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["verdict"] == "FAILS" and s["verdict_cause"] and s["claim_holds"] is False
    assert main(["run", "ucb-vi", "--episodes", "3", "--quiet", "--out", str(tmp_path / "n")]) == 0
    assert not any(ln.startswith("claim ") for ln in capsys.readouterr().out.splitlines())   # no claim, no verdict line


def test_run_help_states_the_exit_status(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 the run completed and wrote its files, whatever the claim's verdict" in text
    assert "privacct verify" in text and "1 the claim does not hold" not in text


def test_run_estimate_speaks_only_for_long_runs():
    """A fake clock: a 1 s warm-up, then ``per_episode`` seconds an episode (reports every ``step`` episodes)."""
    from privacct.algorithms.runner import RunEstimate

    def drive(episodes, per_episode, step=50):
        t = [0.0]
        said = []
        est = RunEstimate(episodes, 20, "run x/jdp", say=said.append, clock=lambda: t[0])
        t[0] = 1.0
        for done in range(step, episodes + 1, step):
            est(done)
            t[0] += step * per_episode
        return said

    assert drive(5000, 0.01) == []                        # 51 s in all: nothing
    said = drive(20000, 0.01)                             # 201 s: one line, early, that says it is an estimate
    assert len(said) == 1 and said[0].startswith("run x/jdp: estimated 3 min 2")
    assert "20 seeds x K = 20,000 episodes" in said[0] and "an estimate" in said[0]
    assert drive(100, 1.0, step=10) == ["run x/jdp: estimated 1 min 31 s in all for 20 seeds x K = 100 episodes "
                                        "(extrapolated from the rate of episodes 11-20; an estimate)"]


def test_run_estimate_of_a_growing_cost_is_quadratic():
    """A sqrt-toeplitz counter sums every past draw: episode k costs a k. The estimate extrapolates that growth
    (a linear extrapolation would say about half the time); the declared log tells the runner which counter runs."""
    from privacct.algorithms.runner import RunEstimate, cost_growth

    t = [0.0]
    said = []
    est = RunEstimate(2000, 5, "run x/jdp", say=said.append, clock=lambda: t[0], growth=1)
    for k in range(1, 2001):
        if k % 10 == 0:
            est(k)
        t[0] += 1e-3 * k                                   # exact total: 1e-3 * 2000 * 2001 / 2 = 2001 s
        if said:
            break
    total = float(said[0].split("estimated ")[1].split(" in all")[0].replace(" min ", ".").split(".")[0]) * 60
    assert 1900 < total < 2100 + 60 and "growing as k^1" in said[0]
    linear = RunEstimate(2000, 5, "lin", clock=lambda: t[0]).growth
    assert linear == 0

    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.contract import RunConfig

    spec = get_learner("ucb-vi")
    cfg = RunConfig("ucb-vi", "jdp", epsilon=1.0, episodes=20, horizon=2)
    assert cost_growth(spec.build_log(cfg)) == 0
    toeplitz = RunConfig("ucb-vi", "jdp", epsilon=1.0, episodes=20, horizon=2, options=(("counter", "sqrt-toeplitz"),))
    assert cost_growth(spec.build_log(toeplitz)) == 1


def test_run_prints_its_estimate_on_stderr_unless_quiet(tmp_path, capsys, monkeypatch):
    """Through the command: a threshold of 0 s makes any run 'long'; --quiet silences it; the default
    threshold (60 s) keeps a short run silent."""
    from privacct.algorithms import runner

    argv = ["run", "ucb-vi", "--privacy", "jdp", "--episodes", "40", "--horizon", "2"]
    monkeypatch.setenv("PRIVACCT_PROGRESS_INTERVAL", "3600")   # no progress lines: only the estimate
    assert main(argv + ["--out", str(tmp_path / "a")]) == 0
    assert "estimated" not in capsys.readouterr().err
    monkeypatch.setattr(runner, "ESTIMATE_THRESHOLD", 0.0)
    monkeypatch.setattr(runner, "ESTIMATE_WINDOW", 0.0)
    assert main(argv + ["--out", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("run ucb-vi/jdp: estimated ") and err[0].endswith("an estimate)")
    assert main(argv + ["--out", str(tmp_path / "c"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("value", ["1e999", "Infinity", "NaN", "-Infinity"])
def test_non_finite_option_values_are_refused(tmp_path, capsys, value):
    from privacct.cli import run

    assert run(["run", "ucb-vi", "--episodes", "3", "--out", str(tmp_path / "x"), "--option", f"e_scale={value}"]) == 2
    err = capsys.readouterr().err
    assert "--option 'e_scale': values must be finite" in err and len(err.splitlines()) == 1
