"""Memory model of the linear-mixture learners (``LearnerSpec.memory`` / ``observation_width``; the
runner's own terms and the generic model are in :mod:`privacct.algorithms.memory`).

With feature dimension d (RiverSwim with S states: d = 2 S^2, H = 2S by default; HardToLearn: d from
the option, 2^(d-1) actions, H = 6 by default): the features (S, A, S, d), per seed the Gram matrices
and their inverses (H, d, d) with the tree counters' 2L + 2 copies, the planning features (H, S A, d);
audits: the actions (int64) and every observed tree node of every statistic. Generous (x 2 on the
learner state): the point is to refuse what cannot fit. A ``sqrt-toeplitz`` counter (option ``counter``,
docs/counters.md#sqrt-toeplitz) keeps every draw: K - 1 more copies of each statistic; the other strategies
keep O(log K) (``tree-honaker``) or O(d) (``blt``, 4 buffers) copies, within the tree's.
"""

from __future__ import annotations

from ..envs.registry import environments
from ..memory import FLOAT, episodes_of, levels


def sizes(config, default_env: str) -> tuple[int, int, int, int]:
    """(S, A, d, H) of ``config``'s environment (``default_env``: the learner's), from the environment index
    (algorithms/envs/registry.py) without building it; a name it does not know is estimated as RiverSwim."""
    env = getattr(config, "env", None) or default_env
    known = environments("linear-mixture")
    z = (known.get(env) or known["riverswim-lm"]).sizes(dict(getattr(config, "options", ()) or ()),
                                                         getattr(config, "horizon", None))
    return z.states, z.actions, z.dim, z.horizon


def opts_counter(config) -> str | None:
    """The option ``counter`` of ``config`` (None when absent)."""
    return dict(getattr(config, "options", ()) or ()).get("counter")


def memory(config, batch: int, audit: bool, *, default_env: str) -> dict[str, int]:
    """Bytes of the learner's own state for one batched run of ``batch`` seeds (module docstring)."""
    K, B = episodes_of(config), max(1, int(batch))
    S, A, d, H = sizes(config, default_env)
    L = levels(K)
    private = getattr(config, "privacy", "none") != "none"
    terms = {"features": FLOAT * S * A * S * d + FLOAT * H * S * A,
             "gram matrices": 2 * FLOAT * B * H * (d * d + d) * ((2 * L + 6) if private else 6),
             "planning": 2 * FLOAT * B * H * (S * A * d + 3 * S * A + S)}
    if private and opts_counter(config) == "sqrt-toeplitz":
        terms["sqrt-toeplitz draws"] = 2 * FLOAT * B * H * (d * d + d) * max(K - 1, 1)
    if audit:
        terms["audit actions"] = FLOAT * B * K * H
        terms["observed nodes"] = FLOAT * B * L * H * (d * d + d)
    return terms


def observation_width(config, observe: str = "released", *, default_env: str) -> int:
    """Floats per trial of an audit's flat sample (an upper bound): every tree node of every statistic
    (upper triangles of the Gram matrices, the vectors), or the actions sent to users 2..K."""
    K = episodes_of(config)
    S, A, d, H = sizes(config, default_env)
    if observe == "actions":
        return max(1, (K - 1) * H)
    L = levels(K)
    return 3 * L * H * (d * (d + 1) // 2 + d) + L


__all__ = ["memory", "observation_width", "sizes"]
