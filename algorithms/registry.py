"""All learners by name: the union of every family package's ``LEARNERS``.

Families and their packages: ``tabular`` -> :mod:`privacct.algorithms.tabular`, ``linear-mixture`` ->
:mod:`privacct.algorithms.linear_mixture`, ``linear-mdp`` -> :mod:`privacct.algorithms.linear_mdp`. A family is
skipped only when its own package is missing (``ModuleNotFoundError`` naming that package) or is
still an empty namespace directory without an ``__init__.py``; any other import error is
re-raised, and two families defining the same learner name is an error.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from privacct.errors import PrivacctError

from .base import LearnerSpec

FAMILY_MODULES: dict[str, str] = {
    "tabular": "privacct.algorithms.tabular",
    "linear-mixture": "privacct.algorithms.linear_mixture",
    "linear-mdp": "privacct.algorithms.linear_mdp",
}


def _import_family(module: str):
    """The family's package, or None when the package itself does not exist (yet)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name) and e.name.startswith("privacct.algorithms."):
            return None
        raise
    if getattr(mod, "__file__", None) is None and not hasattr(mod, "LEARNERS"):
        return None  # namespace directory without __init__.py: the family is not written yet
    return mod


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[str, LearnerSpec], ...]:
    merged: dict[str, LearnerSpec] = {}
    for family, module in FAMILY_MODULES.items():
        mod = _import_family(module)
        if mod is None:
            continue
        learners = getattr(mod, "LEARNERS", None)
        if not isinstance(learners, dict):
            raise PrivacctError(f"family {family!r}: {module}.LEARNERS must be a dict of LearnerSpec")
        for name, spec in learners.items():
            if name in merged:
                raise PrivacctError(f"learner name {name!r} is defined by two families ({merged[name].family}, {family})")
            merged[name] = spec
    return tuple(merged.items())


def learners() -> dict[str, LearnerSpec]:
    """Every available learner by name (cached after the first call)."""
    return dict(_load())


def get_learner(name: str) -> LearnerSpec:
    """The learner ``name``, or a PrivacctError listing the known names."""
    table = learners()
    if name not in table:
        raise PrivacctError(f"algorithm must be one of {', '.join(sorted(table))}, got {name!r}")
    return table[name]


def __getattr__(name: str):
    """``privacct.algorithms.registry.LEARNERS``: the merged dict, built on first access (PEP 562)."""
    if name == "LEARNERS":
        return learners()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def family_reproduce_module(family: str) -> str:
    """Module path of a family's ``reproduce`` (``algorithms.<package>.reproduce``)."""
    if family not in FAMILY_MODULES:
        raise PrivacctError(f"family must be one of {', '.join(FAMILY_MODULES)}, got {family!r}")
    return FAMILY_MODULES[family] + ".reproduce"
