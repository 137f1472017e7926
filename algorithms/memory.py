"""How much memory a run or an audit of a learner will need, from its configuration alone.

Nothing is built: the estimate comes before the environment and the learner allocate anything
(a horizon of 10^12 would make the environment itself fail), so that ``privacct run`` and
``privacct audit`` can refuse a configuration that does not fit with one line
(:func:`privacct.resources.check_memory`) instead of dying in a MemoryError.

Per family, from the sizes every learner of the family allocates (float64 unless said):

* all: the regret (B, K) and, in the runner, its cumulative sum, the CSV table and the npz buffers;
* tabular (S x A states and actions, d = H S A): the tree counter's 2L + 2 arrays of the released
  vector (2d + dS per seed, L = floor(log2 K) + 1 levels), the optimistic model and its planning
  arrays (about six (H, S, A, S) arrays), pre-drawn uniforms; audits: the actions sent to users
  2..K (int8) and one released vector per observed node;
* linear mixture (feature dimension d): the features (S, A, S, d), per seed the Gram matrices and
  their inverses (H, d, d) with the tree counters' 2L + 2 copies, the planning features (H, S A, d);
  audits: actions (int64);
* linear MDP: per seed the counts (H, S, A, S), the Gram matrices (H, d, d) with their tree
  counters, the batched / switching learners' per-release statistics (up to K, H, d); audits: actions.

The figures are deliberately generous (x 2 on the learner state): the point is to refuse what
cannot fit, not to squeeze the last byte. Unknown families or environments fall back to the
largest shipped sizes of their family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FLOAT = 8
#: Environment sizes (S, A, d, default H) of the shipped environments, per family.
TABULAR_ENVS = {"riverswim": (6, 2, None, 20)}
LINEAR_MDP_ENVS = {"linear-two-state": (2, 30, 10, 5), "linear-d10-h10": (10, 20, 10, 10)}
#: The families' default environment (the learners' ``default_env``) when --env is not given.
DEFAULT_ENV = {"tabular": "riverswim", "linear-mixture": "riverswim", "linear-mdp": "linear-two-state"}
#: Audit batch: trials run together per chunk (privacct.audits.learner.LEARNER_CHUNK) and pilot trials.
AUDIT_CHUNK = 250
AUDIT_PILOT = 64


@dataclass(frozen=True)
class MemoryEstimate:
    """``total`` bytes, and the largest terms by name (for the message)."""

    total: int
    terms: tuple[tuple[str, int], ...]

    def main_terms(self, n: int = 2) -> str:
        top = sorted(self.terms, key=lambda t: -t[1])[:n]
        return ", ".join(name for name, b in top if b > 0)


def _levels(leaves: int) -> int:
    return max(1, int(leaves).bit_length())   # floor(log2 K) + 1


def _int(value: Any, default: int) -> int:
    try:
        v = int(value)
        return v if v >= 1 else default
    except (TypeError, ValueError, OverflowError):
        return default


def family_sizes(family: str, config, default_env: str | None = None) -> tuple[int, int, int, int]:
    """(S, A, d, H) of ``config``'s environment (``default_env``: the learner's), without building it."""
    opts = dict(getattr(config, "options", ()) or ())
    env = getattr(config, "env", None) or default_env or DEFAULT_ENV.get(family, "")
    horizon = getattr(config, "horizon", None)
    if family == "tabular":
        S, A, _, H0 = TABULAR_ENVS.get(env, TABULAR_ENVS["riverswim"])
        return S, A, H0 * S * A, _int(horizon, H0)
    if family == "linear-mixture":
        if env == "hard-to-learn":
            d = min(_int(opts.get("d"), 5), 64)
            H = _int(horizon, 6)
            return H + 2, 2 ** min(d - 1, 62), d, H
        S = _int(opts.get("n_states"), 3)
        return S, 2, 2 * S * S, _int(horizon, 2 * S)
    if family == "linear-mdp":
        S, A, d, H0 = LINEAR_MDP_ENVS.get(env, (10, 30, 10, 10))
        return S, A, d, _int(horizon, H0)
    return 1, 1, 1, _int(horizon, 1)


def run_estimate(family: str, config, batch: int, *, default_env: str | None = None, audit: bool = False,
                 runner: bool = True) -> MemoryEstimate:
    """Bytes of one batched run of ``batch`` seeds (module docstring); ``audit``: with the audit recorder;
    ``runner``: plus what :func:`privacct.algorithms.runner.run_experiment` keeps and writes."""
    K = max(1, int(config.episodes))
    B = max(1, int(batch))
    S, A, d, H = family_sizes(family, config, default_env)
    L = _levels(K)
    private = getattr(config, "privacy", "none") != "none"
    terms: dict[str, int] = {"regret arrays": FLOAT * B * K * (4 if runner else 1)}
    if runner:
        terms["curves table"] = FLOAT * K * 6
    if family == "tabular":
        dim = H * S * A * (2 + S)
        terms["tree counter"] = FLOAT * B * dim * ((2 * L + 4) if private else 4)
        terms["optimistic model"] = 2 * FLOAT * B * 6 * H * S * A * S
        terms["pre-drawn uniforms"] = FLOAT * B * 2 * 256 * H
        if audit:
            terms["audit actions"] = B * K * H
            terms["observed nodes"] = FLOAT * B * L * dim
    elif family == "linear-mixture":
        terms["features"] = FLOAT * S * A * S * d + FLOAT * H * S * A
        terms["gram matrices"] = 2 * FLOAT * B * H * (d * d + d) * ((2 * L + 6) if private else 6)
        terms["planning"] = 2 * FLOAT * B * H * (S * A * d + 3 * S * A + S)
        if audit:
            terms["audit actions"] = FLOAT * B * K * H
            terms["observed nodes"] = FLOAT * B * L * H * (d * d + d)
    elif family == "linear-mdp":
        terms["counts"] = 2 * FLOAT * B * H * S * A * S
        terms["gram matrices"] = 2 * FLOAT * B * H * d * d * ((2 * L + 6) if private else 6)
        terms["per-release statistics"] = (3 if audit else 1) * FLOAT * B * min(K, 2 ** 62) * H * d if private else 0
        if audit:
            terms["audit actions"] = FLOAT * B * K * H
    else:
        terms["learner state"] = FLOAT * B * K
    return MemoryEstimate(int(sum(terms.values())), tuple(terms.items()))


def observation_width(family: str, config, observe: str, default_env: str | None = None) -> int:
    """Floats per trial of an audit's flat sample (an upper bound)."""
    K = max(1, int(config.episodes))
    S, A, d, H = family_sizes(family, config, default_env)
    if observe == "actions":
        return max(1, (K - 1) * H)
    L = _levels(K)
    if family == "tabular":
        return L * H * S * A * (2 + S)
    if family == "linear-mixture":
        return 3 * L * H * (d * (d + 1) // 2 + d) + L
    if family == "linear-mdp":
        return 3 * L * H * (d * (d + 1) // 2 + d) + 3 * K * H * d + K
    return K


def audit_estimate(family: str, config, trials: int, observe: str, workers: int, *,
                   default_env: str | None = None) -> MemoryEstimate:
    """Bytes of an audit of ``trials`` per side: both sides' samples (kept whole for the two halves, with
    a copy for the statistics), plus ``workers`` learner batches of :data:`AUDIT_CHUNK` trials at once."""
    width = observation_width(family, config, observe, default_env)
    samples = 2 * 2 * FLOAT * int(trials) * width
    batch = min(int(trials), AUDIT_CHUNK)
    runs = max(1, int(workers)) * run_estimate(family, config, max(batch, AUDIT_PILOT), default_env=default_env, audit=True,
                                                     runner=False).total
    return MemoryEstimate(samples + runs, (("samples of both sides", samples), ("learner batches", runs)))


def samples_lower_bound(trials: int) -> int:
    """The least an audit of ``trials`` per side can need: one float per trial and side."""
    return 2 * FLOAT * int(trials)


__all__ = ["AUDIT_CHUNK", "MemoryEstimate", "audit_estimate", "family_sizes", "observation_width", "run_estimate",
           "samples_lower_bound"]
