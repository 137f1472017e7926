"""All learners by name, from the ``privacct.learners`` entry-point group (docs/extending.md#register).

Every learner, shipped or third-party, registers the same way: a package declares, in its
``pyproject.toml``,

    [project.entry-points."privacct.learners"]
    my-family = "my_package:LEARNERS"

where the object named is a :class:`privacct.algorithms.contract.LearnerSpec`, a ``dict`` of them by
name, or a callable with no argument returning either. privacct's three families register in its
own pyproject (``tabular``, ``linear-mixture``, ``linear-mdp``); nothing else names them.

Loading rules (one place):

* an entry point that fails to load (ImportError or any exception while importing it) is skipped
  with ONE warning line on stderr naming it and the error, so a broken third-party plugin never
  takes the shipped learners down; a learner of a skipped plugin is then "unknown";
* privacct's own entry points must be present: without them the installation's metadata is stale
  (an editable install made before learners were entry points), and every command says so in one
  line (``pip install -e .`` again);
* two entry points defining the same learner name is an error naming both.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from importlib import metadata

from privacct.errors import PrivacctError

from .contract import LearnerSpec

GROUP = "privacct.learners"
#: The distribution whose own entry points must be present.
OWN_DISTRIBUTION = "privacct"


def _entry_points() -> list[metadata.EntryPoint]:
    return sorted(metadata.entry_points(group=GROUP), key=lambda ep: (ep.dist.name if ep.dist else "", ep.name))


def _specs_of(obj, where: str) -> dict[str, LearnerSpec]:
    """The learners an entry point's object holds (a spec, a dict of specs, or a callable returning either)."""
    if callable(obj) and not isinstance(obj, (LearnerSpec, dict)):
        obj = obj()
    if isinstance(obj, LearnerSpec):
        return {obj.name: obj}
    if isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, LearnerSpec) for k, v in obj.items()):
        for k, v in obj.items():
            if k != v.name:
                raise PrivacctError(f"{where}: key {k!r} holds the learner named {v.name!r}; the key must be its name")
        return dict(obj)
    raise PrivacctError(f"{where} must name a LearnerSpec, a dict of LearnerSpec by name, or a callable returning "
                        f"one of these; got {type(obj).__name__}")


def _warn(text: str) -> None:
    sys.stderr.write(f"privacct: warning: {text}\n")


@lru_cache(maxsize=1)
def _load() -> tuple[tuple[str, LearnerSpec], ...]:
    merged: dict[str, LearnerSpec] = {}
    origin: dict[str, str] = {}
    own = 0
    for ep in _entry_points():
        dist = ep.dist.name if ep.dist is not None else "?"
        where = f"entry point {ep.name!r} ({ep.value}) of {dist}"
        own += dist == OWN_DISTRIBUTION
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 - a broken plugin is reported, never fatal for the others
            if dist == OWN_DISTRIBUTION:
                raise
            _warn(f"{where} could not be loaded and is skipped: {type(e).__name__}: {e}")
            continue
        for name, spec in _specs_of(obj, where).items():
            if name in merged:
                raise PrivacctError(f"learner name {name!r} is defined twice: by {origin[name]} and by {where}")
            merged[name] = spec
            origin[name] = where
    if own == 0:
        raise PrivacctError(f"no {GROUP!r} entry point of privacct itself is installed: the installation's metadata is "
                            "stale; reinstall privacct (pip install -e . in the repository)")
    return tuple(merged.items())


def learners() -> dict[str, LearnerSpec]:
    """Every available learner by name (cached after the first call; :func:`reload` forgets it)."""
    return dict(_load())


def reload() -> None:
    """Forget the cached table (after installing a plugin in the same process, or in tests)."""
    _load.cache_clear()


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


def families() -> dict[str, tuple[LearnerSpec, ...]]:
    """Every family by name with its learners (in name order)."""
    out: dict[str, list[LearnerSpec]] = {}
    for _name, spec in sorted(learners().items()):
        out.setdefault(spec.family, []).append(spec)
    return {f: tuple(v) for f, v in out.items()}


def reproducible_families() -> dict[str, str]:
    """Family -> the ``module:function`` of its figure reproduction, for families whose learners declare one
    (``LearnerSpec.reproduce``); learners of one family must agree on it."""
    out: dict[str, str] = {}
    for fam, specs in families().items():
        targets = {s.reproduce for s in specs if s.reproduce is not None}
        if len(targets) > 1:
            raise PrivacctError(f"family {fam!r}: its learners declare different reproductions {sorted(targets)}")
        if targets:
            out[fam] = targets.pop()
    return out


def family_reproduce_function(family: str):
    """The callable ``reproduce(out_dir, *, full, seeds, episodes, progress)`` of ``family``."""
    import importlib

    table = reproducible_families()
    if family not in table:
        raise PrivacctError(f"family must be one of {', '.join(sorted(table))}, got {family!r}")
    module, _, attr = table[family].partition(":")
    return getattr(importlib.import_module(module), attr or "reproduce")
