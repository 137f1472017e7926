"""Memory model of the tabular learners (``LearnerSpec.memory`` / ``observation_width``; the runner's own
terms and the generic model are in :mod:`privacct.algorithms.memory`).

With S x A states and actions, horizon H and d = H S A: the tree counter's 2L + 2 arrays of the released
vector (2d + dS per seed, L = floor(log2 K) + 1 levels), the optimistic model and its planning arrays
(about six (H, S, A, S) arrays), pre-drawn uniforms; audits: the actions sent to users 2..K (int8) and
one released vector per observed node. Generous (x 2 on the model): the point is to refuse what cannot
fit. An unknown environment falls back to RiverSwim's sizes.
"""

from __future__ import annotations

from ..envs.registry import environments
from ..memory import FLOAT, episodes_of, levels

def sizes(config, default_env: str) -> tuple[int, int, int]:
    """(S, A, H) of ``config``'s environment (``default_env``: the learner's), from the environment index
    (algorithms/envs/registry.py) without building it; an environment it does not name (a Gymnasium adapter)
    is estimated at RiverSwim's sizes."""
    env = getattr(config, "env", None) or default_env
    known = environments("tabular")
    z = (known.get(env) or known["riverswim"]).sizes(horizon=getattr(config, "horizon", None))
    return z.states, z.actions, z.horizon


def memory(config, batch: int, audit: bool, *, default_env: str) -> dict[str, int]:
    """Bytes of the learner's own state for one batched run of ``batch`` seeds (module docstring)."""
    K, B = episodes_of(config), max(1, int(batch))
    S, A, H = sizes(config, default_env)
    L = levels(K)
    private = getattr(config, "privacy", "none") != "none"
    dim = H * S * A * (2 + S)
    terms = {"tree counter": FLOAT * B * dim * ((2 * L + 4) if private else 4),
             "optimistic model": 2 * FLOAT * B * 6 * H * S * A * S,
             "pre-drawn uniforms": FLOAT * B * 2 * 256 * H}
    if audit:
        terms["audit actions"] = B * K * H
        terms["observed nodes"] = FLOAT * B * L * dim
    return terms


def observation_width(config, observe: str = "released", *, default_env: str) -> int:
    """Floats per trial of an audit's flat sample (an upper bound): every node of the released vector that
    contains user 1, or the actions sent to users 2..K (``observe="actions"``)."""
    K = episodes_of(config)
    S, A, H = sizes(config, default_env)
    if observe == "actions":
        return max(1, (K - 1) * H)
    return levels(K) * H * S * A * (2 + S)


__all__ = ["memory", "observation_width", "sizes"]
