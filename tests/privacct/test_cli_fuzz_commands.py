"""Fuzzed argument vectors for the long commands (run, reproduce, audit, mutants, report): whatever
else the vector holds, one bad argument (last, so argparse keeps it) means exit 2, one line, no
traceback, nothing written -- and no work: every vector answers at once (bounded by hypothesis'
deadline), which a validation done after the work would not."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NUMBERS = st.sampled_from(["1", "0", "-1", "nan", "inf", "1e308", "1e999", "0.5", "abc", "", "\n", "2", "10",
                           str(2**53), "9" * 400, "\x1b[2J", "\u0663"])
COMMON = {"--json": None, "--quiet": None, "--no-progress": None, "--seed": NUMBERS}
OPTIONS = {
    "run": {**COMMON, "--privacy": st.sampled_from(["none", "jdp", "ldp", "x"]), "--epsilon": NUMBERS, "--delta": NUMBERS,
            "--calibration": st.sampled_from(["paper", "tight", "loose"]), "--episodes": NUMBERS, "--seeds": NUMBERS,
            "--env": st.sampled_from(["riverswim", "x", ""]), "--horizon": NUMBERS, "--bonus-scale": NUMBERS,
            "--option": st.sampled_from(["e_scale=0.5", "eta=x", "bad", "=1", "canary=A"])},
    "reproduce": {**COMMON, "--full": None, "--seeds": NUMBERS, "--episodes": NUMBERS},
    "audit": {**COMMON, "--privacy": st.sampled_from(["jdp", "ldp", "none"]), "--epsilon": NUMBERS, "--delta": NUMBERS,
              "--calibration": st.sampled_from(["paper", "tight"]), "--episodes": NUMBERS, "--horizon": NUMBERS,
              "--trials": NUMBERS, "--observe": st.sampled_from(["released", "actions", "x"]), "--fresh-users": None,
              "--confidence": NUMBERS},
    "mutants": {**COMMON, "--trials": NUMBERS, "--controls": None, "--learners": None},
    "report": {**COMMON, "--full": None, "--only": st.sampled_from(["ucb-vi", "nope"])},
}
HEAD = {"run": ["run", "ucb-vi", "--out", "o"], "reproduce": ["reproduce", "tabular", "--out", "o"],
        "audit": ["audit", "ucb-vi", "--privacy", "jdp"], "mutants": ["mutants"], "report": ["report", "--out", "o"]}
BAD = {
    "run": [["--episodes", "0"], ["--seeds", "-1"], ["--epsilon", "nan"], ["--delta", "1"], ["--horizon", "0"],
            ["--bonus-scale", "inf"], ["--out", "/proc/x"], ["--seed", "-5"], ["--episodes", "100000000000"],
            ["--env", "mountaincar"], ["--option", "nonsense=1"], ["--out", " "]],
    "reproduce": [["--seeds", "0"], ["--episodes", "-2"], ["--out", "/sys/x"], ["--episodes", "100000000000"],
                  ["--scheduler", "no address"], ["--workers", "0"], ["--workers", "65"], ["--track", "x"]],
    "audit": [["--trials", "9"], ["--confidence", "1"], ["--epsilon", "0"], ["--delta", "-0.1"], ["--seed", "-1"],
              ["--trials", "10000000000000"], ["--episodes", "0"], ["--scheduler", "x"]],
    "mutants": [["--trials", "3"], ["--seed", "-1"], ["--only", "no-such-mutant"], ["--trials", "10000000000000"]],
    "report": [["--seed", "-1"], ["--only", "no-such-learner"], ["--out", "/proc/rep"], ["--scheduler", "tcp://"]],
}


@st.composite
def vectors(draw):
    command = draw(st.sampled_from(sorted(OPTIONS)))
    argv = list(HEAD[command])
    for _ in range(draw(st.integers(0, 6))):
        opt = draw(st.sampled_from(sorted(OPTIONS[command])))
        argv.append(opt)
        if OPTIONS[command][opt] is not None:
            argv.append(draw(OPTIONS[command][opt]))
    return argv + draw(st.sampled_from(BAD[command]))


@settings(max_examples=200, deadline=20_000, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=vectors())
def test_one_bad_argument_means_exit_2_one_line_nothing_written(argv, cli, cli_contract):
    r = cli(argv)
    cli_contract(r, codes=(2,))
