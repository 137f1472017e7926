"""Every finite number a flag accepts either works or is refused in one line, and every scheduler address
either reaches a scheduler or is refused in one line, fast (README "Before any work").

Two exhaustive grids (deterministic fuzzing):

* extreme values (1e308, 5e-324, -0.0, 1e-320, 10**400, '1_000', ' 1', 'nan', 'inf', '0x10', ...) for every
  numeric flag of account, calibrate, run, audit, report, reproduce and mutants: the command keeps the CLI
  contract (tests/privacct/conftest.py: no traceback, exit 2 is one line on stderr and nothing on stdout, no
  internal error), and a refusal names the flag. Commands whose real work takes minutes (report, reproduce,
  mutants) get a last argument that is refused after every number was checked (an --out that is a file,
  an unknown mutant), so an accepted number ends in THAT refusal and a refused one names its own flag;
* scheduler addresses of every scheme and shape for reproduce, report and audit: refused in one line naming
  --scheduler, exit 2, nothing on stdout, nothing written, within a few seconds (an unreachable scheduler
  must not wait for distributed's 30 s connect timeout).

Only loopback (127.0.0.1, [::1]) is ever contacted: every other address in this file is a syntax error,
refused before anything is contacted.
"""

from __future__ import annotations

import importlib.util
import socket
import time

import pytest

EXTREMES = ["1e308", "5e-324", "-0.0", "1e-320", str(10**400), "1_000", " 1", "nan", "inf", "-inf", "0x10", "1e999",
            "1e-400", "", "\u0663", "9" * 5000, "-1", "0", "+2"]
PARSE_REFUSED = {"1_000", "nan", "inf", "-inf", "0x10", "1e999", "1e-400", "", "\u0663", str(10**400)}


def _cases():
    """(id, argv before the flag, flag, exit codes of an accepted value, the flag a late refusal names)."""
    lap = ["--mechanism", "laplace"]
    gau = ["--mechanism", "gaussian"]
    out = []
    for flag, base in [("--noise-scale", lap + ["--sensitivity", "1", "--count", "3"]),
                       ("--sensitivity", lap + ["--noise-scale", "1", "--count", "3"]),
                       ("--count", lap + ["--noise-scale", "1", "--sensitivity", "1"]),
                       ("--tree-leaves", lap + ["--noise-scale", "1", "--sensitivity", "1"]),
                       ("--counter-leaves", lap + ["--noise-scale", "1", "--sensitivity", "1"]),
                       ("--delta", gau + ["--noise-scale", "1", "--sensitivity", "1", "--count", "3"])]:
        out.append((f"account{flag}", ["account"] + base, flag, (0,), None))
    for flag, base in [("--sensitivity", lap + ["--epsilon", "1", "--count", "3"]),
                       ("--epsilon", lap + ["--sensitivity", "1", "--count", "3"]),
                       ("--count", lap + ["--sensitivity", "1", "--epsilon", "1"]),
                       ("--tree-leaves", lap + ["--sensitivity", "1", "--epsilon", "1"]),
                       ("--counter-leaves", lap + ["--sensitivity", "1", "--epsilon", "1"]),
                       ("--delta", gau + ["--sensitivity", "1", "--epsilon", "1", "--count", "3"])]:
        out.append((f"calibrate{flag}", ["calibrate"] + base, flag, (0,), None))
    run = ["run", "ucb-vi", "--privacy", "jdp", "--episodes", "3", "--horizon", "2", "--quiet"]
    for flag in ("--epsilon", "--delta", "--episodes", "--seeds", "--seed", "--horizon", "--bonus-scale"):
        out.append((f"run{flag}", run, flag, (0,), None))
    audit = ["audit", "ucb-vi", "--privacy", "jdp", "--episodes", "4", "--horizon", "1", "--trials", "10", "--quiet"]
    for flag in ("--epsilon", "--delta", "--episodes", "--horizon", "--trials", "--confidence", "--seed"):
        out.append((f"audit{flag}", audit, flag, (0, 1, 3), None))
    out.append(("audit--canaries", ["audit", "ucb-vi", "--privacy", "jdp", "--quiet"], "--canaries", (), "--one-run"))
    out.append(("report--seed", ["report", "--quiet", "--out", "OUTFILE"], "--seed", (), "--out"))
    for flag in ("--seeds", "--episodes"):
        out.append((f"reproduce{flag}", ["reproduce", "tabular", "--quiet", "--out", "OUTFILE"], flag, (), "--out"))
    for flag in ("--trials", "--seed"):
        out.append((f"mutants{flag}", ["mutants", "--quiet", "--only", "no-such-mutant"], flag, (), "--only"))
    return out


CASES = _cases()
#: Flag values still known to misbehave, with why (an xfail each, failing once fixed so that the entry goes).
#: audit --epsilon 1e308 was one: the statistic's rounding overflowed and the power criterion asked for 2 x the
#: claim (inf); both fixed (audits/statistics.py, audits/oracle.py).
KNOWN: dict = {}   # (flag, value) -> why it is still known to misbehave (none left)


@pytest.mark.filterwarnings("error::RuntimeWarning")   # in a console, a warning would be a second stderr line
@pytest.mark.parametrize("value", EXTREMES, ids=lambda v: repr(v)[:12])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_number_a_flag_takes_works_or_is_refused_in_one_line(case, value, cli, cli_contract, tmp_path):
    """Exit 2 is one line naming the problem; any other exit code keeps stderr empty (a warning is an error here)."""
    name, base, flag, accepted_codes, late = case
    outfile = tmp_path / "a-file"
    outfile.write_text("not a directory\n")
    argv = [str(outfile) if a == "OUTFILE" else a for a in base]
    if base[0] == "run":
        argv += ["--out", str(tmp_path / "run-out")]
    r = cli(argv + [f"{flag}={value}"])
    if (name, value) in KNOWN:
        if r.code == 4 and "RuntimeWarning" in r.err:
            pytest.xfail(KNOWN[name, value])
        pytest.fail(f"fixed? {KNOWN[name, value]}: remove it from KNOWN (exit {r.code}, stderr {r.err!r})")
    cli_contract(r, codes=(2,) + tuple(accepted_codes))   # exit 2: one line on stderr, nothing on stdout
    if value in PARSE_REFUSED:
        assert r.code == 2 and flag in r.err, r.err      # refused as a number, naming the flag
    elif not accepted_codes:
        # a command stopped by a last bad argument: an accepted value reaches that refusal, a refused one
        # (out of the flag's range) names the flag
        assert r.code == 2 and (flag in r.err or late in r.err), r.err


@pytest.mark.parametrize("text, expected", [("1e308", 1e308), ("5e-324", 5e-324), ("-0.0", 0.0), (" 1", 1.0), ("+2", 2.0),
                                            (".5", 0.5), ("1E-5", 1e-5), ("1e-320", 1e-320)])
def test_decimal_numbers_are_read_as_written(text, expected):
    import math

    from privacct.cli import parse_number

    v = parse_number("--x", text)
    assert v == expected and math.copysign(1.0, v) == math.copysign(1.0, expected)   # -0.0 is read as 0


@pytest.mark.parametrize("text, needle", [("1_000", "decimal number"), ("0x10", "decimal number"), ("nan", "finite"),
                                          ("inf", "finite"), ("-Infinity", "finite"), ("1e999", "beyond the floating-point"),
                                          (str(10**400), "beyond the floating-point"), ("1e-400", "too close to 0"),
                                          ("\u0663", "decimal number"), ("", "decimal number")])
def test_numbers_python_would_take_are_refused_naming_the_flag(text, needle):
    import argparse

    from privacct.cli import parse_number

    with pytest.raises(argparse.ArgumentTypeError, match=needle) as e:
        parse_number("--x", text)
    assert str(e.value).startswith("--x ") and "\n" not in str(e.value)


@pytest.mark.parametrize("text, ok", [("12", 12), (" 7 ", 7), ("+3", 3), ("-1", -1), (str(10**400), 10**400),
                                      ("1_000", None), ("0x10", None), ("1e3", None), ("3.0", None), ("9" * 5000, None)])
def test_integers_are_plain_digits(text, ok):
    import argparse

    from privacct.cli import parse_integer

    if ok is None:
        with pytest.raises(argparse.ArgumentTypeError, match="--n"):
            parse_integer("--n", text)
    else:
        assert parse_integer("--n", text) == ok


# ----------------------------------------------------------------------------------------------- schedulers
def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def silent_port():
    """A loopback port that accepts connections (the kernel's backlog) and never says a word."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield s.getsockname()[1]
    s.close()


CLOSED = _closed_port()
UCX_INSTALLED = importlib.util.find_spec("ucp") is not None or importlib.util.find_spec("ucxx") is not None
#: Valid addresses where no scheduler answers (loopback only): refused by the probe ("cannot reach").
UNREACHABLE = [
    f"tcp://127.0.0.1:{CLOSED}", f"127.0.0.1:{CLOSED}", f"tls://127.0.0.1:{CLOSED}", f"ws://127.0.0.1:{CLOSED}",
    f"wss://127.0.0.1:{CLOSED}", f"tcp://[::1]:{CLOSED}", "SILENT",
]
#: Not addresses: refused by the syntax check, before anything is contacted.
MALFORMED = [
    "", " ", "tcp://", "tcp://127.0.0.1", "127.0.0.1", "tcp://:8786", "http://127.0.0.1:8786", "tcp:/127.0.0.1:8786",
    "tcp://127.0.0.1:0", "tcp://127.0.0.1:65536", "tcp://127.0.0.1:-1", "tcp://127.0.0.1:99999999999", "tcp://127.0.0.1:8786/",
    "tcp://::1:8786", "tcp://[::1:8786", "tcp://[::g]:8786", "tcp://[127.0.0.1]:8786", "tcp://999.0.0.1:8786",
    "tcp://h\u00f4te:8786", "tcp://\u0661\u0662\u0667.0.0.1:8786", "tcp://a:1\nverdict: holds", "tcp://\u202e127.0.0.1:8786",
    "tcp://" + "a" * 5000 + ":8786", "tcp://" + ".".join(["a" * 63] * 5) + ":8786", "tcp://-bad-.host:8786",
    "inproc://", "inproc://x y",
]
#: Well-formed, but nothing this process can reach: an inproc address of another process, ucx without UCX.
ELSEWHERE = ["inproc://127.0.0.1/1/1"] + ([] if UCX_INSTALLED else [f"ucx://127.0.0.1:{CLOSED}"])
ADDRESSES = ([(a, "cannot reach a Dask scheduler") for a in UNREACHABLE]
             + [(a, "must be a Dask scheduler address") for a in MALFORMED]
             + [(a, "scheduler") for a in ELSEWHERE])
COMMANDS = {
    "reproduce": lambda out: ["reproduce", "tabular", "--quiet", "--out", out, "--seeds", "1", "--episodes", "1"],
    "report": lambda out: ["report", "--quiet", "--out", out],
    "audit": lambda out: ["audit", "ucb-vi", "--privacy", "jdp", "--quiet", "--episodes", "4", "--trials", "10"],
}


@pytest.mark.parametrize("address, said", ADDRESSES, ids=[repr(a)[:40] for a, _ in ADDRESSES])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_bad_or_unreachable_scheduler_is_one_line_within_seconds(command, address, said, silent_port, cli,
                                                                       cli_contract, tmp_path):
    address = f"tcp://127.0.0.1:{silent_port}" if address == "SILENT" else address
    out = tmp_path / "out"
    t0 = time.perf_counter()
    r = cli(COMMANDS[command](str(out)) + [f"--scheduler={address}"])
    took = time.perf_counter() - t0
    cli_contract(r, codes=(2,))
    assert "--scheduler" in r.err and said in r.err, r.err
    assert not out.exists()
    assert took < 8, f"{took:.1f} s"   # the probe waits at most PROBE_TIMEOUT (3 s) a step, not distributed's 10-30 s


def test_a_silent_server_is_not_a_scheduler_and_says_so(silent_port):
    from privacct.algorithms import scaleout
    from privacct.errors import PrivacctError

    t0 = time.perf_counter()
    with pytest.raises(PrivacctError, match="sends nothing within 3 s: not a Dask scheduler"):
        scaleout.check_scheduler(f"tcp://127.0.0.1:{silent_port}")
    assert time.perf_counter() - t0 < scaleout.PROBE_TIMEOUT + 3


def test_a_refused_port_is_said_at_once():
    from privacct.algorithms import scaleout
    from privacct.errors import PrivacctError

    t0 = time.perf_counter()
    with pytest.raises(PrivacctError, match="cannot reach a Dask scheduler"):
        scaleout.check_scheduler(f"tcp://127.0.0.1:{_closed_port()}")
    assert time.perf_counter() - t0 < 2


@pytest.fixture(scope="module")
def loopback_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=None) as c:
        yield c.scheduler_address


def test_a_live_scheduler_passes_the_probe_and_connects(loopback_cluster):
    from privacct.algorithms import scaleout

    assert scaleout.check_scheduler(loopback_cluster) == loopback_cluster
    bare = loopback_cluster.split("://", 1)[1]     # no scheme: tcp
    assert scaleout.check_scheduler(bare) == bare
    with scaleout.connect(loopback_cluster) as client:
        assert scaleout.active_client() is client
        assert client.submit(sum, [1, 2, 3]).result() == 6
    assert scaleout.active_client() is None


def test_an_inproc_scheduler_of_this_process_passes():
    distributed = pytest.importorskip("distributed")
    from privacct.algorithms import scaleout

    with distributed.LocalCluster(n_workers=0, processes=False, protocol="inproc://", dashboard_address=":0") as c:
        assert scaleout.check_scheduler(c.scheduler_address) == c.scheduler_address
