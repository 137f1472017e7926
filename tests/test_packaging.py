"""Packaging: one installed import name (privacct), whatever folders a user's project holds.

The repository keeps three top-level folders, privacct/, algorithms/ and audits/; the wheel
installs the last two as ``privacct.algorithms`` and ``privacct.audits`` (pyproject.toml,
``[tool.setuptools] package-dir``), so a project with its own ``algorithms`` or ``audits``
package neither shadows ours nor is shadowed by it.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"privacct": "privacct", "algorithms": "privacct.algorithms", "audits": "privacct.audits"}


def _python_files():
    for folder in ("privacct", "algorithms", "audits", "tests", "benchmarks"):
        yield from (ROOT / folder).rglob("*.py")


def test_every_package_folder_is_listed_in_pyproject():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    found = set()
    for folder, name in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name,) + rel))
    assert listed == found
    assert conf["package-dir"] == {"privacct": "privacct", "privacct.algorithms": "algorithms",
                                   "privacct.audits": "audits"}


def test_no_module_imports_the_bare_folder_names():
    bad = []
    for path in _python_files():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            bad += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                    if n.split(".")[0] in ("algorithms", "audits")]
    assert not bad, "\n".join(bad)


@pytest.mark.slow
def test_wheel_runs_an_audit_beside_a_users_own_algorithms_and_audits(tmp_path):
    """Build the wheel, install it (not editable) into a fresh venv, and audit a learner from a
    directory that holds its own ``algorithms/`` and ``audits/`` packages."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(wheels), str(ROOT)], check=True, capture_output=True)
    wheel = next(wheels.glob("privacct-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], check=True, capture_output=True)
    # The dependencies (numpy, scipy, dp-accounting, matplotlib, pytest) come from this test's own
    # environment through a plain path entry: no .pth file of that environment is processed, so
    # the editable privacct of the development install stays invisible to the fresh venv.
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    project = tmp_path / "user_project"
    for pkg in ("algorithms", "audits"):
        (project / pkg).mkdir(parents=True)
        (project / pkg / "__init__.py").write_text(f"USER_PACKAGE = {pkg!r}\n")
        (project / pkg / "base.py").write_text("raise ImportError('the user project module was imported')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    code = ("import algorithms, audits, privacct\n"
            "assert algorithms.USER_PACKAGE == 'algorithms' and audits.USER_PACKAGE == 'audits'\n"
            "assert 'site-packages' in privacct.__file__, privacct.__file__\n"
            "from privacct.audits.learner_audit import audit_learner\n"
            "r = audit_learner('ucb-vi', privacy='jdp', episodes=4, horizon=1, trials=40, executor='inline')\n"
            "print('eps_lb', r.epsilon_lower_bound)\n"
            "from privacct.results import results_schema\n"
            "assert results_schema()['$defs']['result']\n"
            "from privacct.audits.report import make_report\n")
    out = subprocess.run([str(py), "-c", code], cwd=project, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "eps_lb" in out.stdout
    cli = subprocess.run([str(venv / "bin" / "privacct"), "audit", "ucb-vi", "--privacy", "jdp", "--episodes", "4",
                          "--horizon", "1", "--trials", "40", "--json"], cwd=project, env=env, capture_output=True,
                         text=True)
    assert cli.returncode in (0, 1, 3), cli.stderr
    assert "Traceback" not in cli.stderr
