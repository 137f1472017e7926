"""The README's code blocks run as written (they cannot rot).

Every ```python block of README.md is either a script (run in a fresh interpreter, in an empty
working directory) or, when it defines ``test_`` functions, a pytest module (run by pytest in a
subprocess, with the privacct plugin that the installation registers). The two set-up commands
(```` ``` ```` blocks after the ``main-command`` / ``test-command`` markers) are what CI runs
(``.ci/run``), so they are checked there, not here.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)]


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_as_written(index, tmp_path):
    code = BLOCKS[index]
    is_test_module = re.search(r"^def test_", code, re.M) is not None
    path = tmp_path / (f"test_readme_block_{index}.py" if is_test_module else f"readme_block_{index}.py")
    path.write_text(code)
    cmd = ([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name] if is_test_module
           else [sys.executable, path.name])
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    if is_test_module:
        assert "passed" in out.stdout and "failed" not in out.stdout
