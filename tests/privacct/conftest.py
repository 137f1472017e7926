"""A generic harness for the ``privacct`` command line, for any subcommand.

* :func:`run_cli` runs ``privacct.cli.run(argv)`` in-process in a given working directory, with
  stdout and stderr as byte streams of a chosen encoding (``ascii`` reproduces a ``LANG=C``
  terminal), and returns the exit code, both texts and the files that appeared in the cwd.
* :func:`run_cli_subprocess` runs the installed ``privacct`` console script the same way.
* :func:`assert_cli_contract` checks what every command promises: exit code 0, 1 or 2 (4 is an
  internal error and always fails), no traceback anywhere, nothing written in the cwd, and for
  exit 2 exactly one line on stderr and nothing on stdout.

To fuzz another command (run, audit, report, reproduce, mutants), move this file's helpers to
``tests/conftest.py`` (or import them from here) and call ``assert_cli_contract(run_cli(argv,
tmp_path))`` over a hypothesis strategy of argument vectors for it; commands that must write
(``run --out DIR``) pass the files they may write as ``allowed_files``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class CliResult:
    code: int
    out: str
    err: str
    written: list[str]


def _listing(cwd: Path) -> set[str]:
    return {str(p.relative_to(cwd)) for p in cwd.rglob("*")}


def run_cli(argv: list[str], cwd: Path, *, encoding: str = "utf-8") -> CliResult:
    """``privacct.cli.run(argv)`` in-process in ``cwd`` with streams of ``encoding``."""
    from privacct.cli import run

    before = _listing(cwd)
    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding=encoding, errors="strict", newline="")
    err = io.TextIOWrapper(err_b, encoding=encoding, errors="strict", newline="")
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = run(argv, stdout=out, stderr=err)
    finally:
        os.chdir(old)
        out.flush()
        err.flush()
    return CliResult(code, out_b.getvalue().decode(encoding), err_b.getvalue().decode(encoding),
                     sorted(_listing(cwd) - before))


def run_cli_subprocess(argv: list[str], cwd: Path, *, env: dict | None = None, timeout: float = 120) -> CliResult:
    """The installed ``privacct`` console script (the venv's), in ``cwd``."""
    exe = Path(sys.executable).parent / "privacct"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "privacct.cli"]
    before = _listing(cwd)
    r = subprocess.run(cmd + argv, cwd=cwd, capture_output=True, timeout=timeout, env=env)
    enc = "utf-8" if env is None else (env.get("PYTHONIOENCODING") or "utf-8")
    return CliResult(r.returncode, r.stdout.decode(enc, "replace"), r.stderr.decode(enc, "replace"),
                     sorted(_listing(cwd) - before))


def assert_cli_contract(r: CliResult, *, codes=(0, 1, 2), allowed_files=()) -> None:
    assert r.code in codes, (r.code, r.err)
    assert "Traceback" not in r.err and "Traceback" not in r.out, r.err
    assert [f for f in r.written if f not in allowed_files] == [], r.written
    if r.code == 2:
        assert r.out == "", r.out
        assert r.err.endswith("\n") and r.err.count("\n") == 1, repr(r.err)
    else:
        assert r.err == "", r.err


@pytest.fixture
def cli(tmp_path):
    """``cli(argv, encoding=...)`` -> CliResult, run in an empty working directory."""
    work = tmp_path / "cwd"
    work.mkdir()

    def call(argv, **kw):
        return run_cli(list(argv), work, **kw)

    return call


@pytest.fixture
def cli_subprocess(tmp_path):
    """``cli_subprocess(argv, env=...)`` -> CliResult from the installed console script."""
    work = tmp_path / "cwd-subprocess"
    work.mkdir()

    def call(argv, **kw):
        return run_cli_subprocess(list(argv), work, **kw)

    return call


@pytest.fixture
def cli_contract():
    """The checker every command must pass (see :func:`assert_cli_contract`)."""
    return assert_cli_contract
