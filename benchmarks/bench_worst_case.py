"""Benchmark: no accounting input hangs (performance issue, item 4).

Target: every ``privacct account`` / ``calibrate`` / ``verify`` call answers within 10 s on the
project machine for any valid input; beyond what an accountant can do in that time it says
"not applicable" with the reason. This script measures the worst cases it knows of:

* per accountant: the slowest ``epsilon`` over a deterministic sweep of adversarial logs
  (1 to 1000 release groups, counts and tree leaves up to 10^12, noise from 1e-2 to 1e9,
  Laplace, Gaussian and mixed, delta in {1e-3, 1e-6, 1e-12});
* per command: the slowest in-process ``privacct.cli.run`` over adversarial argument vectors
  (counts up to 10^12 and 2^53 tree leaves, every accountant for calibrate) and logs (1000
  distinct groups, 10^12 releases per group, mixed), plus one subprocess run of each command
  (interpreter start-up and imports included).

    python benchmarks/bench_worst_case.py [--seconds S] [--json]

``--seconds`` bounds the random sweep (default 120 s); the fixed cases always run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time

from privacct.accounting import ACCOUNTANT_NAMES, get_accountant
from privacct.cli import run
from privacct.errors import PrivacctError
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure


def random_log(rng: random.Random) -> MechanismLog:
    n = rng.choice([1, 1, 2, 3, 30, 300, 1000])
    groups = []
    for i in range(n):
        mech = rng.choice(["laplace", "gaussian"])
        count = int(10 ** rng.uniform(0, 12))
        structure = rng.choice([Structure.repeated(count), Structure.tree(count), Structure.single()])
        groups.append(ReleaseGroup(f"g{i}", mech, 10 ** rng.uniform(-2, 9),
                                   Sensitivity("l1" if mech == "laplace" else "l2", 10 ** rng.uniform(-1, 1)), structure))
    return MechanismLog("sweep", "joint", tuple(groups), claim=Claim(1.0, 1e-6))


def fixed_logs() -> list[MechanismLog]:
    """Logs built to be slow: many distinct ratios, huge counts, mixtures."""
    out = []
    for mech, norm in (("gaussian", "l2"), ("laplace", "l1")):
        for count, scale in ((1, 1.0), (10**12, 3e6), (20, 400.0), (10**6, 3e4)):
            groups = tuple(ReleaseGroup(f"g{i}", mech, scale, Sensitivity(norm, 1.0 + i / 1000), Structure.repeated(count))
                           for i in range(1000))
            out.append(MechanismLog(f"1000-{mech}-{count}", "joint", groups, claim=Claim(1.0, 1e-6)))
    mixed = tuple(ReleaseGroup(f"g{i}", "laplace" if i % 2 else "gaussian", 50.0 * (1 + i / 100),
                               Sensitivity("l1" if i % 2 else "l2", 1.0), Structure.tree(2**40 + i)) for i in range(1000))
    out.append(MechanismLog("1000-mixed-tree-2^40", "joint", mixed, claim=Claim(1.0, 1e-6)))
    one = (ReleaseGroup("g", "laplace", 1e6, Sensitivity("l1", 1.0), Structure.repeated(10**12)),)
    out.append(MechanismLog("laplace-10^12", "joint", one, claim=Claim(1.0, 1e-6)))
    kov = (ReleaseGroup("g", "laplace", 3e3, Sensitivity("l1", 1.0), Structure.repeated(10**6)),)
    out.append(MechanismLog("laplace-10^6-kov", "joint", kov, claim=Claim(1.0, 1e-6)))
    return out


def fixed_argvs() -> list[list[str]]:
    argvs = []
    for mech, delta in (("laplace", None), ("laplace", "1e-6"), ("gaussian", "1e-6"), ("gaussian", "1e-12")):
        d = [] if delta is None else ["--delta", delta]
        for struct in (["--count", "1"], ["--count", "1000000000"], ["--count", "1000000000000"],
                       ["--tree-leaves", str(2**53)]):
            for noise in ("0.01", "1", "1e6", "1e9"):
                argvs.append(["account", "--mechanism", mech, "--noise-scale", noise, "--sensitivity", "1", *struct, *d])
            for eps in ("0.001", "1", "100"):
                argvs.append(["calibrate", "--mechanism", mech, "--sensitivity", "1", "--epsilon", eps, *struct, *d])
                for acc in ACCOUNTANT_NAMES:
                    argvs.append(["calibrate", "--mechanism", mech, "--sensitivity", "1", "--epsilon", eps, *struct, *d,
                                  "--accountant", acc])
    return argvs


def timed_run(argv: list[str]) -> tuple[float, int]:
    out, err = io.StringIO(), io.StringIO()
    t = time.perf_counter()
    code = run(argv, stdout=out, stderr=err)
    return time.perf_counter() - t, code


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=120.0, help="time for the random sweep (default 120)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    get_accountant("pld").epsilon(fixed_logs()[0], delta=1e-6)  # imports (scipy, dp_accounting) out of the timings

    per_acc = {n: (0.0, "") for n in ACCOUNTANT_NAMES}
    n_logs = 0

    def account_all(log: MechanismLog, delta: float) -> None:
        for name in ACCOUNTANT_NAMES:
            acc = get_accountant(name)
            t = time.perf_counter()
            try:
                if acc.supports(log, delta=delta):
                    acc.epsilon(log, delta=delta)
            except PrivacctError:
                pass
            dt = time.perf_counter() - t
            if dt > per_acc[name][0]:
                per_acc[name] = (dt, f"{log.name} ({len(log.release_groups)} groups), delta={delta:g}")

    for log in fixed_logs():
        account_all(log, 1e-6)
        n_logs += 1
    rng = random.Random(20261123)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        account_all(random_log(rng), rng.choice([1e-3, 1e-6, 1e-12]))
        n_logs += 1

    per_cmd = {"account": (0.0, ""), "calibrate": (0.0, ""), "verify": (0.0, "")}
    n_calls = 0
    for argv in fixed_argvs():
        dt, code = timed_run(argv)
        n_calls += 1
        if dt > per_cmd[argv[0]][0]:
            per_cmd[argv[0]] = (dt, " ".join(argv[1:]) + f" -> exit {code}")
    with tempfile.TemporaryDirectory() as tmp:
        for log in fixed_logs():
            path = os.path.join(tmp, "log.json")
            log.save(path)
            dt, code = timed_run(["verify", path])
            n_calls += 1
            if dt > per_cmd["verify"][0]:
                per_cmd["verify"] = (dt, f"{log.name} -> exit {code}")
        # start-up included: one subprocess per command
        log = fixed_logs()[0]
        path = os.path.join(tmp, "log.json")
        log.save(path)
        sub = {}
        for argv in (["--help"], ["account", "--mechanism", "laplace", "--noise-scale", "1", "--sensitivity", "1", "--count", "10"],
                     ["verify", path]):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "privacct.cli", *argv], capture_output=True, check=False)
            sub[" ".join(argv[:1])] = time.perf_counter() - t

    result = {
        "machine": f"{platform.platform()}, python {platform.python_version()}, {os.cpu_count()} cpus",
        "logs_swept": n_logs, "cli_calls": n_calls,
        "worst_epsilon_seconds": {k: {"seconds": round(v[0], 3), "case": v[1]} for k, v in per_acc.items()},
        "worst_command_seconds": {k: {"seconds": round(v[0], 3), "case": v[1]} for k, v in per_cmd.items()},
        "subprocess_seconds": {k: round(v, 3) for k, v in sub.items()},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"machine: {result['machine']}; {n_logs} logs swept, {n_calls} command calls")
    for k, v in result["worst_epsilon_seconds"].items():
        print(f"  epsilon  {k:<18} worst {v['seconds']:7.3f} s   {v['case']}")
    for k, v in result["worst_command_seconds"].items():
        print(f"  command  {k:<18} worst {v['seconds']:7.3f} s   {v['case']}")
    for k, v in result["subprocess_seconds"].items():
        print(f"  subprocess privacct {k:<9} {v:7.3f} s")


if __name__ == "__main__":
    main()
