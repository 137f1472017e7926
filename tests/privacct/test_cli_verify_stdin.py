"""`privacct verify` takes its log from a path, from standard input (`-`) or from the shipped
examples (`--example NAME`); there is no default log. Standard input goes through the same strict
parser and the same size bound as a file (privacct.log.read_stream_text, MechanismLog.from_json)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from privacct.cli import EXAMPLE_NAMES, VERIFY_NEEDS_LOG
from privacct.log import MAX_DOCUMENT_BYTES, MAX_DOCUMENT_CHARS

EX = Path(__file__).parents[2] / "privacct" / "examples"
NEEDLE = "LOG is required: a path, or - for standard input; the shipped examples are listed by --example"


def console() -> list[str]:
    exe = Path(sys.executable).parent / "privacct"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "privacct.cli"]


def verify(args: list[str], stdin: bytes | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(console() + ["verify"] + args, input=stdin, capture_output=True, timeout=120, **kw)


def in_process(cli, monkeypatch, argv: list[str], data: bytes):
    """The command in-process with ``data`` on standard input (a binary buffer, as a pipe gives)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    return cli(argv)


# ---- standard input --------------------------------------------------------------------------------
def test_verify_dash_reads_the_log_from_standard_input_like_a_file():
    path = EX / "seed002-ucbvi-jdp-paper.json"
    from_file = verify([str(path)])
    from_stdin = verify(["-"], stdin=path.read_bytes())
    assert from_stdin.returncode == from_file.returncode == 1   # the paper's claim fails
    assert from_stdin.stdout == from_file.stdout and b"verdict: FAILS" in from_stdin.stdout
    assert from_stdin.stderr == b""


@pytest.mark.parametrize("name", ["laplace-repeated", "gaussian-tree"])
def test_verify_dash_json_in_process(name, cli, cli_contract, monkeypatch):
    data = (EX / f"{name}.json").read_bytes()
    r = in_process(cli, monkeypatch, ["verify", "-", "--json"], data)
    cli_contract(r)
    assert r.code == 0 and json.loads(r.out)["verdict"] == "holds"
    assert r.out == cli(["verify", str(EX / f"{name}.json"), "--json"]).out


def test_a_converted_dp_accounting_event_verifies_from_a_pipe():
    """docs/interop.md: a log converted from a DpEvent goes straight into `privacct verify -`."""
    import dp_accounting as dpa
    from dp_accounting.pld import PLDAccountant

    from privacct.interop import log_from_dp_event

    event = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(4.0), 20),
                                 dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(10.0), 3)])
    log = log_from_dp_event(event, sensitivity=1.0, privacy_model="joint", claim=(6.0, 1e-6))
    r = verify(["-", "--json"], stdin=log.to_json().encode())
    assert r.returncode == 0, r.stderr
    acc = PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(event)
    ref = acc.get_epsilon(1e-6)
    got = json.loads(r.stdout)["accounted_epsilon"]
    assert ref - 1e-4 <= got <= ref + 1e-3


@pytest.mark.parametrize("data, core", [
    (b"", "not a JSON document: Expecting value"),
    (b'{"schema_version": 1, "schema_version": 1}', "duplicate key 'schema_version'"),
    (b'{"x": NaN}', "non-finite number NaN"),
    (b"[" * 40 + b"]" * 40, "not a JSON document this parser accepts: nested deeper than 32 levels"),
    (b'{"name": "\xff"}', "not UTF-8 text (invalid byte at offset 10)"),
    (b'{"schema_version": 1, "name": "x", "privacy_model": "joint", "release_groups": [], "extra": 1}',
     "unknown field(s) 'extra'"),
])
def test_standard_input_is_parsed_as_strictly_as_a_file(data, core, cli, cli_contract, monkeypatch, tmp_path):
    r = in_process(cli, monkeypatch, ["verify", "-"], data)
    cli_contract(r, codes=(2,))
    assert "standard input" in r.err and core in r.err, r.err
    path = tmp_path / "log.json"
    path.write_bytes(data)
    f = cli(["verify", str(path)])   # the same refusal from a file
    assert f.code == 2 and core in f.err, f.err


def test_a_document_of_exactly_the_size_limit_is_accepted_from_standard_input(cli, cli_contract, monkeypatch):
    doc = (EX / "laplace-repeated.json").read_text()
    data = (doc + " " * (MAX_DOCUMENT_CHARS - len(doc))).encode()
    assert len(data) == MAX_DOCUMENT_CHARS
    r = in_process(cli, monkeypatch, ["verify", "-"], data)
    cli_contract(r)
    assert r.code == 0 and "verdict: holds" in r.out


def test_a_document_one_character_over_the_limit_is_refused(cli, cli_contract, monkeypatch):
    doc = (EX / "laplace-repeated.json").read_text()
    data = (doc + " " * (MAX_DOCUMENT_CHARS + 1 - len(doc))).encode()
    r = in_process(cli, monkeypatch, ["verify", "-"], data)
    cli_contract(r, codes=(2,))
    assert f"must be at most {MAX_DOCUMENT_CHARS} characters, got {MAX_DOCUMENT_CHARS + 1}" in r.err


def test_an_endless_standard_input_is_refused_after_the_bound_not_drained():
    """`yes | privacct verify -`: at most MAX_DOCUMENT_BYTES + 1 bytes are read, then one line, exit 2."""
    p = subprocess.Popen(console() + ["verify", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    limit = 4 * MAX_DOCUMENT_BYTES   # the writer stops here if the command drained everything
    written = 0

    def feed():
        nonlocal written
        chunk = b" " * 65536
        try:
            while written < limit:
                p.stdin.write(chunk)
                written += len(chunk)
            p.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    t = threading.Thread(target=feed)
    t.start()
    out, err = p.stdout.read(), p.stderr.read()   # one short line each at most: no pipe fills up
    p.wait(timeout=120)
    t.join(timeout=120)
    assert p.returncode == 2
    assert out == b"" and err.count(b"\n") == 1, err
    assert f"cannot read log from standard input: larger than {MAX_DOCUMENT_CHARS} characters".encode() in err
    assert written < 2 * MAX_DOCUMENT_BYTES   # refused long before the writer's end: the rest was never read


def test_closed_standard_input_is_one_line():
    r = subprocess.run(["bash", "-c", 'exec "$@" <&-', "bash"] + console() + ["verify", "-"],
                       capture_output=True, timeout=120)
    assert r.returncode == 2 and r.stdout == b"" and r.stderr.count(b"\n") == 1
    assert b"LOG is - but standard input is closed" in r.stderr


def test_a_terminal_on_standard_input_is_refused_rather_than_waited_on():
    master, slave = os.openpty()
    try:
        r = subprocess.run(console() + ["verify", "-"], stdin=slave, capture_output=True, timeout=30)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 2 and r.stdout == b"" and r.stderr.count(b"\n") == 1
    assert b"LOG is - but standard input is a terminal" in r.stderr


# ---- no LOG, --example -------------------------------------------------------------------------
def test_verify_without_log_exits_2_with_one_line_naming_log(cli, cli_contract):
    r = cli(["verify"])
    cli_contract(r, codes=(2,))
    assert r.out == "" and r.err.count("\n") == 1
    assert r.err == f"privacct verify: error: {VERIFY_NEEDS_LOG}\n" and NEEDLE in r.err
    assert cli(["verify", "--json"]).err == r.err


def test_verify_without_log_from_the_console_script_does_not_read_standard_input():
    """`privacct verify < my-log.json` used to verify the shipped example silently."""
    r = verify([], stdin=(EX / "laplace-repeated.json").read_bytes())
    assert r.returncode == 2 and r.stdout == b"" and r.stderr.count(b"\n") == 1
    assert NEEDLE.encode() in r.stderr


@pytest.mark.parametrize("name", ["seed002-ucbvi-jdp-paper", "laplace-repeated"])
def test_example_verifies_a_shipped_example(name, cli, cli_contract):
    r = cli(["verify", "--example", name])
    cli_contract(r)
    assert r.code == (1 if name.startswith("seed002-ucbvi-jdp") else 0)
    assert r.out == cli(["verify", str(EX / f"{name}.json")]).out and "verdict:" in r.out


def test_example_names_are_the_shipped_files():
    assert EXAMPLE_NAMES == tuple(sorted(p.stem for p in EX.glob("*.json")))
    assert "seed002-ucbvi-jdp-paper" in EXAMPLE_NAMES and len(EXAMPLE_NAMES) >= 6


def test_example_without_name_lists_them(cli, cli_contract):
    r = cli(["verify", "--example"])
    cli_contract(r)
    assert r.code == 0
    listed = [ln.split()[0] for ln in r.out.splitlines()[1:]]
    assert listed == list(EXAMPLE_NAMES)
    j = cli(["verify", "--example", "--json"])
    assert [e["name"] for e in json.loads(j.out)["examples"]] == list(EXAMPLE_NAMES)


@pytest.mark.parametrize("argv, needle", [
    (["verify", "--example", "nope"], "--example must be one of gaussian-factorized, "),
    (["verify", "--example", "laplace-repeated.json"], "--example must be one of"),
    (["verify", "--example", "../examples/laplace-repeated"], "--example must be one of"),
    (["verify", str(EX / "laplace-repeated.json"), "--example", "laplace-repeated"], "give LOG or --example NAME, not both"),
    (["verify", "-", "--example"], "--example needs a NAME when LOG is given"),
])
def test_example_misuse_is_one_line(argv, needle, cli, cli_contract):
    r = cli(argv)
    cli_contract(r, codes=(2,))
    assert needle in r.err, r.err
