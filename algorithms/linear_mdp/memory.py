"""Memory model of the linear-MDP learners (``LearnerSpec.memory`` / ``observation_width``; the runner's
own terms and the generic model are in :mod:`privacct.algorithms.memory`).

Per seed: the counts (H, S, A, S), the Gram matrices (H, d, d) with their tree counters, the batched /
switching learners' per-release statistics (up to K, H, d); audits: the actions (int64). Generous (x 2
on the learner state): the point is to refuse what cannot fit. An unknown environment gets the largest
sizes of the shipped ones.
"""

from __future__ import annotations

from ..envs.registry import environments
from ..memory import FLOAT, episodes_of, levels, positive_int

def sizes(config, default_env: str) -> tuple[int, int, int, int]:
    """(S, A, d, H) of ``config``'s environment (``default_env``: the learner's), from the environment index
    (algorithms/envs/registry.py) without building it; a name it does not know gets the largest shipped sizes."""
    env = getattr(config, "env", None) or default_env
    horizon = getattr(config, "horizon", None)
    known = environments("linear-mdp")
    if env in known:
        z = known[env].sizes(horizon=horizon)
        return z.states, z.actions, z.dim, z.horizon
    every = [e.sizes() for e in known.values()]
    return (max(z.states for z in every), max(z.actions for z in every), max(z.dim for z in every),
            positive_int(horizon, max(z.horizon for z in every)))


def memory(config, batch: int, audit: bool, *, default_env: str) -> dict[str, int]:
    """Bytes of the learner's own state for one batched run of ``batch`` seeds (module docstring)."""
    K, B = episodes_of(config), max(1, int(batch))
    S, A, d, H = sizes(config, default_env)
    L = levels(K)
    private = getattr(config, "privacy", "none") != "none"
    terms = {"counts": 2 * FLOAT * B * H * S * A * S,
             "gram matrices": 2 * FLOAT * B * H * d * d * ((2 * L + 6) if private else 6),
             "per-release statistics": (3 if audit else 1) * FLOAT * B * min(K, 2 ** 62) * H * d if private else 0}
    if audit:
        terms["audit actions"] = FLOAT * B * K * H
    return terms


def observation_width(config, observe: str = "released", *, default_env: str) -> int:
    """Floats per trial of an audit's flat sample (an upper bound): every Gram node and every response
    release, or the actions sent to users 2..K."""
    K = episodes_of(config)
    S, A, d, H = sizes(config, default_env)
    if observe == "actions":
        return max(1, (K - 1) * H)
    L = levels(K)
    return 3 * L * H * (d * (d + 1) // 2 + d) + 3 * K * H * d + K


__all__ = ["memory", "observation_width", "sizes"]
