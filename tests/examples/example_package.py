"""The worked third-party example (examples/custom_learner, docs/extending.md) for tests that need it in process.

Loaded from its source folder as a package WITHOUT putting that folder on sys.path: importlib.metadata scans
sys.path for installation metadata, so a build left in the folder would otherwise register the example's
entry point for the whole session."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_learner"
PACKAGE = "privacct_example_pucb"


def load():
    """The example's package module (imported once per process)."""
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    init = EXAMPLE / PACKAGE / "__init__.py"
    spec = importlib.util.spec_from_file_location(PACKAGE, init, submodule_search_locations=[str(init.parent)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)
    return module
