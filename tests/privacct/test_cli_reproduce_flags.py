"""``privacct reproduce tabular --track NAME ... --workers N`` (algorithms/cli.py reproduce_options,
algorithms/tabular/reproduce.py; README's commands table, docs/seed-002-tabular.md#figure-tracks): the flags reach the
tabular reproduction's ``tracks`` / ``workers``; a bad value, or a flag the family's reproduction does not take, is one
line naming the flag and its range (exit 2, nothing written)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("extra, needle", [
    (["--workers", "0"], "--workers must be an integer in [1, 64], got 0"),
    (["--workers", "65"], "--workers must be an integer in [1, 64], got 65"),
    (["--workers", "x"], "--workers"),
    (["--track", "figure"], "--track must be one of paper, tight, tuned-noise, each at most once, got figure"),
    (["--track", "paper", "--track", "paper"], "--track must be one of paper, tight, tuned-noise, each at most once"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:9"], "--workers does not apply with --scheduler"),
])
def test_bad_values_are_one_line_exit_2_nothing_written(extra, needle, cli, cli_contract):
    r = cli(["reproduce", "tabular", "--out", "o", "--seeds", "1", "--episodes", "4", *extra])
    cli_contract(r, codes=(2,))
    assert needle in r.err, r.err


@pytest.mark.parametrize("family, flag", [("linear-mdp", ["--track", "paper"]), ("linear-mixture", ["--workers", "2"])])
def test_a_family_without_the_flag_refuses_it(family, flag, cli, cli_contract):
    r = cli(["reproduce", family, "--out", "o", "--seeds", "1", "--episodes", "4", *flag])
    cli_contract(r, codes=(2,))
    assert f"{flag[0]} applies to a reproduction" in r.err and f"not to {family}" in r.err, r.err


def test_the_help_states_the_range_the_function_checks():
    from privacct.algorithms.tabular.reproduce import MAX_WORKERS, reproduce
    from privacct.cli import build_parser

    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    helps = {f: a.help for a in sub.choices["reproduce"]._actions for f in a.option_strings}
    assert f"an integer in [1, {MAX_WORKERS}]" in helps["--workers"] and reproduce.max_workers == MAX_WORKERS


def test_the_flags_reach_the_reproduction(cli, cli_contract, monkeypatch, tmp_path):
    """--track tight --workers 2: only the tight track is drawn, on the workers asked for (recorded at the pool)."""
    from privacct.algorithms.tabular import reproduce as RP

    asked, run_all = [], RP._run_all

    def spy(runs, progress, workers):
        asked.append(workers)
        return run_all(runs, progress, 1)          # inline: the same bytes (test_reproduce.py), no pool in a test
    monkeypatch.setattr(RP, "_run_all", spy)
    r = cli(["reproduce", "tabular", "--out", "rep", "--seeds", "1", "--episodes", "4", "--track", "tight",
             "--workers", "2", "--quiet"])
    cli_contract(r, codes=(0,), allowed_files=r.written)
    assert asked and set(asked) == {2}
    res = json.loads((tmp_path / "cwd" / "rep" / "results.json").read_text())   # the cli fixture's working directory
    assert {row["calibration"] for row in res["results"]} == {"tight"}
    assert "rep/figure2_tight.png" in r.written
    assert not any(w.endswith(("figure2_paper.png", "figure2_tuned-noise.png")) for w in r.written)
