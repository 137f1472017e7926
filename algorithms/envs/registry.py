"""Every environment privacct ships, by name, with the family of learners that runs it.

One index (issue 22: three registries, and ``--env riverswim`` naming two different MDPs): each name is one MDP.
The factories stay with their families (:mod:`.tabular` / :mod:`.riverswim` via :data:`privacct.algorithms.envs.ENVS`,
:mod:`.linear_mixture`, :mod:`.linear_mdp`); this module names them, says which learners run each one, and gives the
one error line a wrong name gets (``unknown_environment``), naming the right one where a name belongs to another
family (RiverSwim exists as seed 002's 6-state tabular chain, ``riverswim``, and as seed 001's normalised 3-state
linear mixture, ``riverswim-lm``).

Each entry also knows its sizes (:class:`EnvSizes`: states, actions, feature dimension, horizon) for the options and
horizon a run asks for, without building anything: the memory models (``algorithms/*/memory.py``) estimate from
them before the environment allocates (a horizon of 10^12 would make the environment itself fail).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from privacct.errors import PrivacctError

#: The kinds of environment, one per family of learners.
KINDS = ("tabular", "linear-mixture", "linear-mdp")


@dataclass(frozen=True)
class EnvSizes:
    """The sizes of one environment as a run would build it: ``states`` S, ``actions`` A, ``dim`` the feature
    dimension d (0 for a tabular MDP: no features) and ``horizon`` H, all integers >= 1 (dim >= 0)."""

    states: int
    actions: int
    dim: int
    horizon: int


def size_count(value: Any, default: int) -> int:
    """``value`` as an integer >= 1, else ``default``: an optional size of a configuration read for an estimate,
    before validation (a bad value is refused later, by the environment or the learner, with its own message)."""
    try:
        v = int(value)
        return v if v >= 1 else default
    except (TypeError, ValueError, OverflowError):
        return default


@dataclass(frozen=True)
class Environment:
    """One shipped environment: its name, the family of learners that runs it, what it is, and its sizes.

    ``size_rule(options, horizon)`` gives the :class:`EnvSizes` for a run's options (a mapping: ``n_states``,
    ``d``) and horizon (None: the environment's default) without building it; use :meth:`sizes`."""

    name: str
    kind: str
    description: str
    size_rule: Callable[[Mapping[str, Any], Any], EnvSizes] = field(repr=False, compare=False)

    def sizes(self, options: Mapping[str, Any] | None = None, horizon: Any = None) -> EnvSizes:
        """The sizes a run with ``options`` and ``horizon`` (None: the default) would build (class docstring)."""
        return self.size_rule(dict(options or {}), horizon)


def _riverswim_6(options: Mapping[str, Any], horizon: Any) -> EnvSizes:
    """seed 002's chain (algorithms/envs/riverswim.py): S = 6, A = 2, H = 20 by default."""
    return EnvSizes(6, 2, 0, size_count(horizon, 20))


def _riverswim_lm(options: Mapping[str, Any], horizon: Any) -> EnvSizes:
    """seed 001's RiverSwim as a linear mixture (algorithms/envs/linear_mixture.py): S states (option ``n_states``,
    default 3), A = 2, d = 2 S^2 (one-hot (s, a, s') features of the kernel), H = 2S by default."""
    S = size_count(options.get("n_states"), 3)
    return EnvSizes(S, 2, 2 * S * S, size_count(horizon, 2 * S))


def _hard_to_learn(options: Mapping[str, Any], horizon: Any) -> EnvSizes:
    """seed 001 §6.1's HardToLearn (algorithms/envs/linear_mixture.py): d (option ``d``, default 5; sizes capped at
    d = 64 for the estimate), 2^(d-1) actions, S = H + 2, H = 6 by default."""
    d = min(size_count(options.get("d"), 5), 64)
    H = size_count(horizon, 6)
    return EnvSizes(H + 2, 2 ** min(d - 1, 62), d, H)


#: (S, A, d, default H) of each shipped linear MDP, by name: its factory (algorithms/envs/linear_mdp.py, which
#: re-exports this table; its ``LINEAR_ENVS`` has these names) builds from these, and this index sizes a run from them
#: without building it.
LINEAR_ENV_SIZES: dict[str, tuple[int, int, int, int]] = {
    "linear-two-state": (2, 30, 10, 5),
    "linear-d10-h10": (10, 20, 10, 10),
}


def _linear_mdp(name: str) -> Callable[[Mapping[str, Any], Any], EnvSizes]:
    S, A, d, H0 = LINEAR_ENV_SIZES[name]
    return lambda options, horizon: EnvSizes(S, A, d, size_count(horizon, H0))


def _entries() -> tuple[Environment, ...]:
    out = [Environment("riverswim", "tabular", "seed 002's RiverSwim: a 6-state chain, 2 actions, H = 20 by default",
                       _riverswim_6),
           Environment("riverswim-lm", "linear-mixture", "seed 001 §6's RiverSwim as a linear mixture (S = 3 by default, "
                       "one-hot features, homogeneous kernel, H = 2S)", _riverswim_lm),
           Environment("riverswim-lm-inhomogeneous", "linear-mixture", "the same with a kernel that changes with h",
                       _riverswim_lm),
           Environment("hard-to-learn", "linear-mixture", "seed 001 §6.1's HardToLearn instance (d = 5, H = 6 by default)",
                       _hard_to_learn)]
    out += [Environment(n, "linear-mdp", "a toolkit-designed linear MDP (docs/learners.md)", _linear_mdp(n))
            for n in sorted(LINEAR_ENV_SIZES)]
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


__all__ = ["EnvSizes", "Environment", "KINDS", "LINEAR_ENV_SIZES", "environments", "size_count", "unknown_environment"]
