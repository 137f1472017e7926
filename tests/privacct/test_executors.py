"""privacct.executors: process-pool workers never outlive a killed parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import os, sys, time
from pathlib import Path
from privacct import executors

def task(i, where):
    Path(where, f"worker-{i}").write_text(str(os.getpid()))
    time.sleep(120)
    return i

if __name__ == "__main__":
    if sys.argv[2] == "plain":   # the pool as it was: BLAS pinning only, no watch of the parent
        executors.start_worker = lambda parent, interval=0.2: executors.pin_blas_threads()
    executors.map_tasks(task, [(0, sys.argv[1]), (1, sys.argv[1])], "processes", workers=2)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state   # a zombie has exited


def _killed_pool(tmp_path: Path, mode: str) -> tuple[list[int], subprocess.Popen]:
    script = tmp_path / "pool.py"
    script.write_text(SCRIPT)
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path), mode], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("worker-*"))) < 2:
        assert time.monotonic() < deadline and p.poll() is None, "the pool's workers did not start"
        time.sleep(0.05)
    pids = [int(f.read_text()) for f in tmp_path.glob("worker-*")]
    p.send_signal(signal.SIGKILL)
    return pids, p


@pytest.mark.skipif(not Path("/proc").is_dir() or not hasattr(os, "fork"), reason="needs /proc and fork (Linux)")
def test_workers_end_when_their_parent_is_killed(tmp_path):
    # the symptom it guards: `privacct reproduce` killed by SIGKILL left its workers holding its stdout and stderr, so
    # a caller reading them to EOF (subprocess.communicate) waited forever (tests/privacct/test_cli_interrupt.py)
    pids, p = _killed_pool(tmp_path, "watched")
    p.communicate(timeout=20)
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)


@pytest.mark.skipif(not Path("/proc").is_dir() or not hasattr(os, "fork"), reason="needs /proc and fork (Linux)")
def test_without_the_watch_the_workers_outlive_their_parent(tmp_path):
    # the guard above can fail: with the worker initializer reduced to BLAS pinning the workers stay alive
    pids, p = _killed_pool(tmp_path, "plain")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            p.communicate(timeout=3)
        assert all(_alive(pid) for pid in pids)
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        p.communicate(timeout=20)
