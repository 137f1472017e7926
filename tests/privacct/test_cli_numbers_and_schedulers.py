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


#: ids name the closed port CLOSED, not its number: the same ids in every collecting process (pytest-xdist's workers)
@pytest.mark.parametrize("address, said", ADDRESSES, ids=[repr(a.replace(str(CLOSED), "CLOSED"))[:40] for a, _ in ADDRESSES])
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


# ----------------------------------------------------------------------------------------------- calibrate
_CAL = {"laplace": ["--mechanism", "laplace", "--epsilon", "1"],
        "gaussian": ["--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5"]}


@pytest.mark.parametrize("mechanism", sorted(_CAL))
@pytest.mark.parametrize("structure", [["--count", "3"], ["--tree-leaves", "8"], ["--counter-leaves", "64"]],
                         ids=lambda s: s[0])
@pytest.mark.parametrize("value", ["1e308", "1.7976931348623157e308", "1e-305", "2.2250738585072014e-308", "5e-324"])
def test_calibrate_an_extreme_sensitivity_names_the_flag_and_its_range(mechanism, structure, value, cli, cli_contract):
    """A finite --sensitivity whose calibrated noise would leave the float range: one line naming --sensitivity
    and the range it may take at this budget, exit 2, nothing written (it used to list every accountant's
    failure; 5e-324 answered a noise scale 10^200 times too large, the accountant's ratio floor)."""
    import re

    r = cli(["calibrate", *_CAL[mechanism], *structure, "--sensitivity", value])
    cli_contract(r, codes=(2,))
    m = re.search(r"--sensitivity must be in \[([^,\]]+), ([^\]]+)\] for this --epsilon, --delta and structure", r.err)
    assert m, r.err
    low, high = float(m.group(1)), float(m.group(2))
    assert not low <= float(value) <= high and low < 1 < high
    for inside in (low, high):   # the bounds said are sensitivities that work
        ok = cli(["calibrate", *_CAL[mechanism], *structure, "--sensitivity", repr(inside), "--json"])
        cli_contract(ok, codes=(0,))


def test_calibrate_a_tiny_sensitivity_scales_the_noise_down_with_it(cli):
    """Scale invariance down to the range's low end: from noise scale 1, a sensitivity below the accountants'
    ratio floor (1e-100) was accounted as the floor, and the answer stopped shrinking (4e-100 for 1e-300)."""
    import json

    for sens in ("1", "1e-200", "1e-300"):
        r = cli(["calibrate", "--mechanism", "laplace", "--tree-leaves", "8", "--epsilon", "1", "--sensitivity", sens, "--json"])
        assert r.code == 0, r.err
        assert json.loads(r.out)["noise_scale"] == pytest.approx(4 * float(sens), rel=1e-12)


def test_calibrate_a_budget_no_noise_meets_names_epsilon_and_delta(cli, cli_contract):
    r = cli(["calibrate", "--mechanism", "laplace", "--count", "3", "--sensitivity", "1", "--epsilon", "1e-300"])
    cli_contract(r, codes=(2,))
    assert "--epsilon 1e-300 and --delta 0" in r.err and "--sensitivity must" not in r.err, r.err


# ----------------------------------------------------------------------------------------------- tls:// and non-Dask servers
@pytest.fixture(scope="module")
def http_port():
    """A loopback port whose server answers every connection with an HTTP error and closes it."""
    import threading

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)

    def serve():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            with c:
                c.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    yield s.getsockname()[1]
    s.close()


def _refused_fast(address: str, said: str, limit: float) -> None:
    from privacct.errors import PrivacctError
    from privacct.executors import map_tasks

    t0 = time.perf_counter()
    with pytest.raises(PrivacctError, match=said) as e:
        map_tasks(abs, [(-1,)], "dask", address)
    assert time.perf_counter() - t0 < limit, f"{time.perf_counter() - t0:.1f} s"
    assert str(e.value).startswith(f"--scheduler '{address}'") and "\n" not in str(e.value)


def test_tls_on_a_closed_port_is_refused_at_once():
    pytest.importorskip("distributed")
    _refused_fast(f"tls://127.0.0.1:{_closed_port()}", "cannot reach a Dask scheduler", 2)


def test_tls_on_a_silent_port_is_refused_within_the_probe_timeout(silent_port):
    """It waited distributed's 30 s (or, without TLS settings, failed with an internal TypeError)."""
    pytest.importorskip("distributed")
    from privacct.executors import PROBE_TIMEOUT

    _refused_fast(f"tls://127.0.0.1:{silent_port}", "completes no TLS handshake within 3 s", PROBE_TIMEOUT + 2)


@pytest.mark.parametrize("scheme, said", [("tls", "does not speak TLS"), ("tcp", "not with Dask's handshake")])
def test_a_server_that_is_not_dask_is_refused_at_once(scheme, said, http_port):
    """tcp: the first bytes were taken for Dask's, and the Client then tried to allocate the 'frame length' it read
    from them (exabytes: an internal MemoryError)."""
    pytest.importorskip("distributed")
    _refused_fast(f"{scheme}://127.0.0.1:{http_port}", said, 2)


def test_a_tls_server_passes_the_probe_and_then_needs_dask_tls_settings(tmp_path):
    """A real TLS server (a self-signed certificate made with openssl) is not refused by the probe: the Client's
    own security settings decide; without any, one line says so (not distributed's TypeError)."""
    import shutil
    import ssl
    import subprocess
    import threading

    pytest.importorskip("distributed")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: no certificate for a loopback TLS server")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True, timeout=60)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            try:
                with ctx.wrap_socket(c, server_side=True):
                    pass
            except (OSError, ssl.SSLError):
                pass

    threading.Thread(target=serve, daemon=True).start()
    try:
        _refused_fast(f"tls://127.0.0.1:{srv.getsockname()[1]}", "tls:// needs Dask's TLS settings", 5)
    finally:
        srv.close()


@pytest.mark.parametrize("server", ["silent", "http"])
def test_audit_with_tls_to_a_port_that_is_not_dask_is_one_line(server, silent_port, http_port, cli, cli_contract):
    pytest.importorskip("distributed")
    port = silent_port if server == "silent" else http_port
    t0 = time.perf_counter()
    r = cli(["audit", "ucb-vi", "--privacy", "jdp", "--quiet", "--episodes", "4", "--trials", "10",
             f"--scheduler=tls://127.0.0.1:{port}"])
    cli_contract(r, codes=(2,))
    assert "--scheduler" in r.err and "not a Dask scheduler over TLS" in r.err, r.err
    assert time.perf_counter() - t0 < 12
