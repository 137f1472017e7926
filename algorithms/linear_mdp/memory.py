"""Memory model of the linear-MDP learners (``LearnerSpec.memory`` / ``observation_width``; the runner's
own terms and the generic model are in :mod:`privacct.algorithms.memory`).

Per seed: the counts (H, S, A, S), the Gram matrices (H, d, d) with their tree counters, the batched /
switching learners' per-release statistics (up to K, H, d), with option ``counter=sqrt-toeplitz`` every z of the H
Gram counters (one (d, d) per step: K - 1 steps, or B - 1 batches for the batched learners); audits: the actions
(int64). Generous (x 2
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
    if private and dict(getattr(config, "options", ()) or ()).get("counter") == "sqrt-toeplitz":
        # sqrt-toeplitz keeps every z (privacct/counters/sqrt_toeplitz.py, ``_z``: leaves x seeds x (d, d)) in each of
        # the H Gram counters, over K - 1 episode leaves (private-lsvi-ucb) or the B - 1 batch leaves (batched)
        terms["sqrt-toeplitz draws"] = FLOAT * B * H * d * d * counter_leaves(config, K, d, H)
    if audit:
        terms["audit actions"] = FLOAT * B * K * H
    return terms


def counter_leaves(config, K: int, d: int, H: int) -> int:
    """The steps of the learner's Gram counters: one per released batch for the batched learners (B - 1 of the
    schedule, at most B: :func:`.batched_jdp.printed_constants`, option ``batches`` or the printed formula), else
    K - 1. ``d``, ``H``: the environment's (:func:`sizes`)."""
    name = str(getattr(config, "algorithm", ""))
    if not name.startswith("batched"):
        return max(1, K - 1)
    from . import batched_jdp as BJ

    opts = dict(getattr(config, "options", ()) or ())
    try:
        eps, delta = float(config.epsilon), float(config.delta)
        p = float(opts.get("p", 0.05))
        if name == BJ.NAME_LAPLACE:
            pc = BJ.printed_constants_laplace(K, H, d, eps, p, opts.get("batches"))
        else:
            pc = BJ.printed_constants(K, H, d, eps, delta, p, opts.get("batches"))
        return max(1, min(int(pc["B"]), K))
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        return max(1, K - 1)   # unknown: as many leaves as episodes (an upper bound)


def observation_width(config, observe: str = "released", *, default_env: str) -> int:
    """Floats per trial of an audit's flat sample (an upper bound): every Gram node and every response
    release, or the actions sent to users 2..K."""
    K = episodes_of(config)
    S, A, d, H = sizes(config, default_env)
    if observe == "actions":
        return max(1, (K - 1) * H)
    L = levels(K)
    return 3 * L * H * (d * (d + 1) // 2 + d) + 3 * K * H * d + K


__all__ = ["counter_leaves", "memory", "observation_width", "sizes"]
