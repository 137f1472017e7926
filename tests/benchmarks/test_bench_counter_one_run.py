"""benchmarks/bench_counter_one_run.py's row builder (issue 21; benchmarks/learner_audits.md#one-run-audits-of-every-counter-strategy):
one learner x strategy at a tiny configuration gives a full row whose eps_lb stays below the accounted eps of the
same configuration, the planted learner-level bug (privacy noise x 1/100) breaks that sandwich through the same
builder, and a combination the audit refuses is a row with its one-line reason."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_counter_one_run.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_counter_one_run", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_row_of_a_toeplitz_counter_keeps_its_sandwich_and_the_planted_bug_breaks_it(bench):
    tiny = dict(canaries=32, episodes=129)
    r = bench.row("private-lsvi-ucb", "sqrt-toeplitz", **tiny)
    assert "refused" not in r, r
    assert (r["K"], r["canaries"], r["guesses"]) == (129, 32, 32) and 0 <= r["correct"] <= 32
    assert r["delta"] == 1e-5 and r["accounted"] == pytest.approx(1.0)      # tight: the claim, at the paper's delta
    assert r["eps_lb"] <= r["accounted"] and r["sandwich_ok"] and r["verdict"] != "fails"
    assert r["mu_lb"] >= 0 and r["eps_fdp"] is not None and r["seconds"] > 0
    assert "sqrt-toeplitz" in bench.line(r)
    bug = bench.row("private-lsvi-ucb", "sqrt-toeplitz", noise_multiplier=0.01, **tiny)
    assert bug["eps_lb"] > bug["accounted"] and not bug["sandwich_ok"] and bug["verdict"] == "fails"


def test_a_refused_combination_is_a_row_with_its_reason(bench):
    """A batched learner whose Gram leaves hold whole batches: no release holds one canary, so the one-run released
    audit is refused in one line (Laplace noise through a Toeplitz counter is no longer refused: scored output-only,
    docs/auditing.md#one-run-scores)."""
    r = bench.row("batched-jdp-lsvi-ucb", "tree", canaries=8, episodes=64)
    assert "\n" not in r["refused"] and "whole batch" in r["refused"] and "eps_lb" not in r
    assert "refused" in bench.line(r)
    lap = bench.row("ucb-vi", "blt", canaries=8, episodes=33, horizon=1)
    assert "refused" not in lap and lap["eps_lb"] <= lap["accounted"] and lap["verdict"] != "passes"
