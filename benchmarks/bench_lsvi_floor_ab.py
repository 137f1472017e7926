"""Benchmark: bench_lsvi_floor.py on two trees, interleaved run by run (the same load for both arms; not a test).

    python benchmarks/bench_lsvi_floor_ab.py /tmp/before 5 -- --seeds 1 --episodes 3000 --repeat 1 --floor

Arguments: ``BEFORE``, an importable copy of the package to compare with (``privacct/`` with ``algorithms/`` and
``audits/`` copied in as ``privacct/algorithms`` and ``privacct/audits``, e.g. from ``git archive COMMIT``: the
layout ``package-dir`` of pyproject.toml installs); ``ROUNDS`` (>= 1); after ``--``, bench_lsvi_floor.py's own
arguments. Each round runs bench_lsvi_floor.py once per arm, in alternating order, each in a fresh process started
outside the repository (so that ``BEFORE`` is imported through PYTHONPATH and the working tree through its editable
install); per arm and seed count the best round is kept and printed as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def one(before: str | None, args: list[str]) -> list[dict]:
    """bench_lsvi_floor.py's rows from one fresh process on ``before`` (None: the working tree)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    if before is not None:
        env["PYTHONPATH"] = before
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run([sys.executable, os.path.join(HERE, "bench_lsvi_floor.py"), *args], cwd=cwd, env=env,
                             capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main() -> None:
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="an importable copy of the package (module docstring)")
    ap.add_argument("rounds", type=int, help="rounds >= 1")
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if a.rounds < 1 or not os.path.isdir(os.path.join(a.before, "privacct", "algorithms")):
        ap.error("rounds must be >= 1 and BEFORE must hold privacct/ with privacct/algorithms/")
    best: dict[tuple[str, int], dict] = {}
    for r in range(a.rounds):
        arms = (("before", a.before), ("after", None))
        for name, tree in (arms if r % 2 == 0 else arms[::-1]):
            for row in one(tree, rest):
                key = (name, row["seeds"])
                if key not in best or row["us_per_episode"] < best[key]["us_per_episode"]:
                    best[key] = dict(row, arm=name)
    for key in sorted(best, key=lambda k: (k[1], k[0] != "before")):
        print(json.dumps(best[key]))


if __name__ == "__main__":
    main()
