"""Every environment privacct ships, by name, with the family of learners that runs it.

One index (issue 22: three registries, and ``--env riverswim`` naming two different MDPs): each name is one MDP.
The factories stay with their families (:mod:`.tabular` / :mod:`.riverswim` via :data:`privacct.algorithms.envs.ENVS`,
:mod:`.linear_mixture`, :mod:`.linear_mdp`); this module names them, says which learners run each one, and gives the
one error line a wrong name gets (``unknown_environment``), naming the right one where a name belongs to another
family (RiverSwim exists as seed 002's 6-state tabular chain, ``riverswim``, and as seed 001's normalised 3-state
linear mixture, ``riverswim-lm``).
"""

from __future__ import annotations

from dataclasses import dataclass

from privacct.errors import PrivacctError

#: The kinds of environment, one per family of learners.
KINDS = ("tabular", "linear-mixture", "linear-mdp")


@dataclass(frozen=True)
class Environment:
    """One shipped environment: its name, the family of learners that runs it and what it is."""

    name: str
    kind: str
    description: str


def _entries() -> tuple[Environment, ...]:
    from .linear_mdp import LINEAR_ENVS

    out = [Environment("riverswim", "tabular", "seed 002's RiverSwim: a 6-state chain, 2 actions, H = 20 by default"),
           Environment("riverswim-lm", "linear-mixture", "seed 001 §6's RiverSwim as a linear mixture (S = 3 by default, "
                       "one-hot features, homogeneous kernel, H = 2S)"),
           Environment("riverswim-lm-inhomogeneous", "linear-mixture", "the same with a kernel that changes with h"),
           Environment("hard-to-learn", "linear-mixture", "seed 001 §6.1's HardToLearn instance (d = 5, H = 6 by default)")]
    out += [Environment(n, "linear-mdp", "a toolkit-designed linear MDP (docs/learners.md)") for n in sorted(LINEAR_ENVS)]
    return tuple(out)


def environments(kind: str | None = None) -> dict[str, Environment]:
    """Every shipped environment (of ``kind``, one of :data:`KINDS`), by name."""
    if kind is not None and kind not in KINDS:
        raise PrivacctError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return {e.name: e for e in _entries() if kind is None or e.kind == kind}


def unknown_environment(name: object, kind: str, learner: str | None = None) -> PrivacctError:
    """The one-line error for ``--env NAME`` that a ``kind`` learner cannot run (not raised: returned)."""
    mine = environments(kind)
    who = f"{learner}" if learner else f"{kind} learners"
    line = f"env must be one of {', '.join(mine)} for {who}, got {name!r}"
    other = environments().get(name) if isinstance(name, str) else None
    if other is not None:
        line += f" ({name!r} is the {other.kind} environment: {other.description})"
    return PrivacctError(line)


__all__ = ["Environment", "KINDS", "environments", "unknown_environment"]
