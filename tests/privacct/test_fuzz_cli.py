"""Fuzzing the command line: malformed logs for ``verify`` and argument vectors for ``account``,
``calibrate``, ``schema`` (hypothesis, derandomized through the suite profile, bounded examples).

Every run must keep the CLI contract (conftest.assert_cli_contract): exit 0, 1 or 2, no traceback,
nothing written in the cwd, exit 2 with exactly one line on stderr; and for a log that is
accepted, the text report has exactly one ``verdict:`` line, which tells the truth (it matches the
exit code), no control characters, and ``--json`` is strict JSON.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = sorted((Path(__file__).parents[2] / "privacct" / "examples").glob("*.json"))
BASE = [json.loads(p.read_text()) for p in EXAMPLES]

RAW = "__RAW_TOKEN__"
RAW_TOKENS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1" * 5000, "-" + "9" * 400, '"\\ud800"', '"x\\udfff"',
              "[" * 33 + "]" * 33, "[" * 5000 + "]" * 5000, '{"a": 1, "a": 2}', "true", "null", '"\\u0000\\u001b[2J"', "1.0",
              "3.0", "0.0", "-0.0", "2e-324", "1e-320"]
NASTY = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1, 1.5, 1e308, -1e308, 2**53, 2**53 + 1, 10**30, "", "x", "laplace", "l2",
                     "tree", [], {}, [1], {"kind": "single"}, "\n", "\x1b[31m", "a\nverdict: holds", "\u2028", "\u202e",
                     "é" * 3, "x" * 250, "x" * 10_001]),
    st.text(max_size=12),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _paths(node, prefix=()):
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


def _set(root, path, value):
    node = root
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value


def _delete(root, path):
    node = root
    for k in path[:-1]:
        node = node[k]
    del node[path[-1]]


@st.composite
def malformed_logs(draw) -> bytes:
    doc = copy.deepcopy(draw(st.sampled_from(BASE)))
    raw = None
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["set", "set", "delete", "add", "raw"]))
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        if op == "set":
            _set(doc, path, copy.deepcopy(draw(NASTY)))
        elif op == "delete":
            _delete(doc, path)
        elif op == "add":
            parent = doc
            for k in path[:-1]:
                parent = parent[k]
            if isinstance(parent, dict):
                parent[draw(st.sampled_from(["extra", "Name", "nam\u0065", "name "]))] = copy.deepcopy(draw(NASTY))
        elif raw is None:
            raw = draw(st.sampled_from(RAW_TOKENS))
            _set(doc, path, RAW)
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()))
    if raw is not None:
        text = text.replace(f'"{RAW}"', raw, 1)
    post = draw(st.sampled_from(["none", "none", "duplicate", "truncate", "bom", "bad-utf8", "deep"]))
    if post == "duplicate":
        text = text.replace("{", '{"name": "dup", ', 1)
    elif post == "truncate":
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    elif post == "bom":
        text = "\ufeff" + text
    elif post == "deep":
        text = text.replace('"parameters": {', '"parameters": {"deep": ' + "[" * 40 + "]" * 40 + ", ", 1)
    data = text.encode("utf-8", "surrogatepass")
    if post == "bad-utf8":
        data = data[: len(data) // 2] + b"\xff\xfe" + data[len(data) // 2:]
    return data


def _check_accepted_output(r, json_mode: bool) -> None:
    if json_mode:
        d = json.loads(r.out, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
        assert d["verdict"] == ("holds" if r.code == 0 else "FAILS")
        assert r.out.isascii()
    else:
        verdicts = [ln for ln in r.out.splitlines() if ln.startswith("verdict:")]
        assert verdicts == [f"verdict: {'holds' if r.code == 0 else 'FAILS'}"], r.out
        assert all(ch == "\n" or ch.isprintable() for ch in r.out)


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=malformed_logs(), json_mode=st.booleans(), encoding=st.sampled_from(["utf-8", "ascii"]))
def test_verify_malformed_logs_keep_the_cli_contract(data, json_mode, encoding, cli, cli_contract, tmp_path):
    path = tmp_path / "log.json"
    path.write_bytes(data)
    r = cli(["verify", str(path)] + (["--json"] if json_mode else []), encoding=encoding)
    cli_contract(r)
    if r.code in (0, 1):
        _check_accepted_output(r, json_mode)


NUMBERS = st.sampled_from(["1", "0", "-1", "nan", "inf", "-inf", "1e308", "1e-320", "1e999", "0.5", "abc", "", " ", "\n", "1_000",
                           "0x10", "\u0663", "9" * 5000, "1000000", str(2**53), str(2**53 + 1), "\u00e9", "1e-6", "0.999999",
                           "\x1b[2J", "2", "3.0"])
OPTIONS = {
    "--mechanism": st.sampled_from(["laplace", "gaussian", "cauchy", "", "\n", "Laplace"]),
    "--noise-scale": NUMBERS, "--sensitivity": NUMBERS, "--count": NUMBERS, "--tree-leaves": NUMBERS,
    "--delta": st.sampled_from(["1e-6", "0", "1", "-0.1", "nan", "1e-300", "0.5", "x", "5e-324"]),
    "--epsilon": NUMBERS,
    "--accountant": st.sampled_from(["basic", "advanced", "zcdp", "rdp", "analytic-gaussian", "moments", ""]),
    "--json": st.none(), "--bogus": st.none(), "-h": st.none(),
}


@st.composite
def argument_vectors(draw) -> list[str]:
    argv = [draw(st.sampled_from(["account", "calibrate", "schema", "verify", "bogus", "--help"]))]
    for _ in range(draw(st.integers(0, 9))):
        opt = draw(st.sampled_from(sorted(OPTIONS)))
        argv.append(opt)
        value = draw(OPTIONS[opt])
        if value is not None:
            argv.append(value)
    return argv


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=argument_vectors(), encoding=st.sampled_from(["utf-8", "ascii"]))
def test_argument_vectors_keep_the_cli_contract(argv, encoding, cli, cli_contract):
    r = cli(argv, encoding=encoding)
    cli_contract(r, codes=(0, 1, 2) if argv[0] == "verify" else (0, 2))
    if r.code in (0, 1) and "--json" in argv and "-h" not in argv and argv[0] != "--help":
        json.loads(r.out, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


@pytest.mark.parametrize("argv", [
    ["account", "--mechanism", "laplace", "--noise-scale", "1", "--sensitivity", "1e308", "--count", "7"],
    ["account", "--mechanism", "gaussian", "--noise-scale", "1e-308", "--sensitivity", "1e308", "--count", "1", "--delta", "1e-6"],
    ["calibrate", "--mechanism", "gaussian", "--sensitivity", "1e308", "--count", "1", "--epsilon", "1e-300", "--delta", "1e-6"],
    ["calibrate", "--mechanism", "laplace", "--sensitivity", "1e-300", "--tree-leaves", str(2**53), "--epsilon", "1e300"],
    ["account", "--mechanism", "gaussian", "--noise-scale", "1e300", "--sensitivity", "1e-300", "--count", str(2**53), "--delta", "5e-324"],
])
def test_extreme_numbers_answer_without_traceback(argv, cli, cli_contract):
    """The issue's OverflowError / ZeroDivisionError / IndexError command lines."""
    cli_contract(cli(argv), codes=(0, 2))
    cli_contract(cli(argv + ["--json"]), codes=(0, 2))


def test_a_few_cases_through_the_installed_script(cli_subprocess, cli_contract, tmp_path):
    """The same contract from the console script, on an ASCII-only terminal (LANG=C)."""
    import os

    env = {**os.environ, "LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}
    doc = copy.deepcopy(BASE[0])
    doc["name"] = "caf\u00e9 \u65e5\u672c\nverdict: holds"
    path = tmp_path / "unicode.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    r = cli_subprocess(["verify", str(path)], env=env)
    cli_contract(r)
    assert [ln for ln in r.out.splitlines() if ln.startswith("verdict:")] == [f"verdict: {'holds' if r.code == 0 else 'FAILS'}"]
    r = cli_subprocess(["verify", str(tmp_path / "missing.json")], env=env)
    cli_contract(r, codes=(2,))
    assert "missing.json" in r.err and "no such file" in r.err
