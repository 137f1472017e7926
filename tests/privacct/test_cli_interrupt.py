"""`privacct run` killed at random times (SIGINT, SIGKILL) and run concurrently on one --out: the
directory holds the previous complete set, the new complete set, or nothing -- never a partial file
that looks complete -- and SIGINT ends with one line and exit 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from .test_cli_outputs import assert_complete_set, visible

pytestmark = pytest.mark.slow

SMALL = ["run", "ucb-vi", "--privacy", "jdp", "--episodes", "400", "--seeds", "2", "--quiet"]


def command(argv: list[str]) -> list[str]:
    exe = Path(sys.executable).parent / "privacct"
    return ([str(exe)] if exe.exists() else [sys.executable, "-m", "privacct.cli"]) + argv


def env() -> dict:
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONIOENCODING="utf-8")


def reference(tmp_path: Path, seed: int) -> dict[str, bytes]:
    """The complete set of a seed, from an uninterrupted run (same seed, same bytes)."""
    out = tmp_path / f"ref-{seed}"
    r = subprocess.run(command(SMALL + ["--seed", str(seed), "--out", str(out)]), env=env(), capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return {rel: (out / rel).read_bytes() for rel in visible(out)}


def check_state(out: Path, refs: list[dict[str, bytes]]) -> str:
    """'complete' (a verified set equal to one reference), 'empty', or 'commit-window' (files without a
    manifest, each byte-identical to a reference's file: complete files, none truncated)."""
    files = visible(out) if out.exists() else []
    if "manifest.json" in files:
        assert_complete_set(out)
        got = {rel: (out / rel).read_bytes() for rel in files}
        match = [ref for ref in refs if {k for k in ref if k != "timing.json"} == {k for k in got if k != "timing.json"}]
        assert any(all(got[k] == ref[k] for k in ref if k not in ("timing.json", "manifest.json")) for ref in match), files
        return "complete"
    for rel in files:
        data = (out / rel).read_bytes()
        if rel == "timing.json":
            json.loads(data)
        else:
            assert any(ref.get(rel) == data for ref in refs), f"{rel} is not a complete file of any run"
    return "commit-window" if files else "empty"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_killed_at_random_times_leaves_a_complete_set_or_none(sig, tmp_path):
    old, new = reference(tmp_path, 1), reference(tmp_path, 2)
    rng = np.random.default_rng(np.random.SeedSequence(16).spawn(2)[0 if sig == signal.SIGINT else 1])
    states = []
    for i in range(4):
        out = tmp_path / f"out-{i}"
        refs = [new]
        if i % 2:   # half the cases: a previous complete set is already there
            out.mkdir()
            for rel, data in old.items():
                (out / rel).write_bytes(data)
            refs = [old, new]
        p = subprocess.Popen(command(SMALL + ["--seed", "2", "--out", str(out)]), env=env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(float(rng.uniform(0.2, 2.5)))
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=120)
        err = stderr.decode()
        assert "Traceback" not in err, err
        if sig == signal.SIGINT and p.returncode == -signal.SIGINT:
            assert err == ""   # the signal came before the interpreter had started: nothing ran
        elif sig == signal.SIGINT and p.returncode != 0:
            assert p.returncode == 130, (p.returncode, err)
            assert err.count("\n") == 1 and "interrupted (SIGINT)" in err, err
        states.append(check_state(out, refs))
        if i % 2:
            assert states[-1] != "empty"   # the previous set is never lost
        # the next command on the same --out works (a dead command's lock and staging are reclaimed)
        r = subprocess.run(command(SMALL + ["--seed", "2", "--out", str(out)]), env=env(), capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert check_state(out, [new]) == "complete"
        assert [q.name for q in out.iterdir() if q.name.startswith(".")] == []


def test_concurrent_writers_never_interleave(tmp_path):
    new = reference(tmp_path, 3)
    out = tmp_path / "shared"
    procs = [subprocess.Popen(command(SMALL + ["--seed", "3", "--out", str(out)]), env=env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    results = [(p.wait(timeout=120), p.stderr.read().decode()) for p in procs]
    for code, err in results:
        assert code in (0, 2), err
        if code == 2:
            assert err.count("\n") == 1 and "in use by another privacct command" in err, err
    assert any(code == 0 for code, _ in results)
    assert check_state(out, [new]) == "complete"


def test_reproduce_killed_at_random_times_leaves_a_complete_set_or_none(tmp_path):
    argv = ["reproduce", "tabular", "--seeds", "1", "--episodes", "20", "--quiet"]
    rng = np.random.default_rng(np.random.SeedSequence(17))
    for i, sig in enumerate([signal.SIGINT, signal.SIGKILL, signal.SIGINT]):
        out = tmp_path / f"rep-{i}"
        p = subprocess.Popen(command(argv + ["--out", str(out)]), env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(float(rng.uniform(0.5, 6.0)))
        p.send_signal(sig)
        _, stderr = p.communicate(timeout=300)
        assert "Traceback" not in stderr.decode(), stderr
        files = visible(out) if out.exists() else []
        if "manifest.json" in files:
            assert_complete_set(out)
        else:   # nothing, or (killed inside the commit) complete files without their manifest
            for rel in files:
                data = (out / rel).read_bytes()
                if rel.endswith(".json"):
                    json.loads(data)
                elif rel.endswith(".png"):
                    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data.endswith(b"IEND\xaeB`\x82"), rel
    r = subprocess.run(command(argv + ["--out", str(tmp_path / "rep-1")]), env=env(), capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert_complete_set(tmp_path / "rep-1")
