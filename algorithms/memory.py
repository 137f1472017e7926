"""How much memory a run or an audit of a learner will need, from its configuration alone.

Nothing is built: the estimate comes before the environment and the learner allocate anything
(a horizon of 10^12 would make the environment itself fail), so that ``privacct run`` and
``privacct audit`` can refuse a configuration that does not fit with one line
(:func:`privacct.resources.check_memory`) instead of dying in a MemoryError.

Two parts, added up by :func:`run_estimate`:

* the RUNNER's own terms, the same for every learner: the regret (B, K) and, in the runner
  (:func:`privacct.algorithms.runner.run_experiment`), its cumulative sum, the CSV table and the npz
  buffers;
* the LEARNER's own state, from its spec (:attr:`privacct.algorithms.contract.LearnerSpec.memory`,
  ``memory(config, batch, audit) -> {term: bytes}``): each shipped family states its model in its own
  package (``privacct.algorithms.tabular.memory``, ``...linear_mixture.memory``,
  ``...linear_mdp.memory``), deliberately generous (x 2 on the learner state): the point is to refuse
  what cannot fit, not to squeeze the last byte.

A learner that declares no model (``memory=None``, e.g. a third party's) gets the GENERIC model
:func:`generic_memory`: a conservative allowance per seed, :data:`GENERIC_SEED_BYTES` (64 KiB of
K-independent state), plus :data:`GENERIC_EPISODE_BYTES` (1 KiB, 128 floats) per seed and episode,
twice that per episode with the audit recorder; so ``B`` seeds of ``K`` episodes are allowed about
``B (64 KiB + 1 KiB K)``. A tiny run is never refused (K = 10^4 with 10 seeds: about 100 MiB) and an
absurd one is (K = 10^9 needs about 1 TiB per seed); a learner whose state is larger than this per
episode should declare its own model.

An audit's flat sample (:func:`observation_width`) is the spec's
:attr:`~privacct.algorithms.contract.LearnerSpec.observation_width` (floats per trial; the shipped families'
also answer ``observe="actions"``); without one, :data:`GENERIC_OBSERVATION_FLOATS` (64) floats per
episode.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from .envs.registry import size_count as positive_int  # optional sizes of a configuration, read for an estimate

FLOAT = 8
#: Audit batch: trials run together per chunk (privacct.audits.learner_audit.LEARNER_CHUNK) and pilot trials.
AUDIT_CHUNK = 250
AUDIT_PILOT = 64
#: The generic model (module docstring): learner state per seed, and per seed and episode.
GENERIC_SEED_BYTES = 64 * 1024
GENERIC_EPISODE_BYTES = 1024
#: The generic observation: floats per episode of an audit's flat sample.
GENERIC_OBSERVATION_FLOATS = 64


@dataclass(frozen=True)
class MemoryEstimate:
    """``total`` bytes, and the largest terms by name (for the message)."""

    total: int
    terms: tuple[tuple[str, int], ...]

    def main_terms(self, n: int = 2) -> str:
        top = sorted(self.terms, key=lambda t: -t[1])[:n]
        return ", ".join(name for name, b in top if b > 0)


def levels(leaves: int) -> int:
    """Nodes of a binary tree counter that contain one leaf: floor(log2 K) + 1."""
    return max(1, int(leaves).bit_length())


def episodes_of(config) -> int:
    return max(1, int(config.episodes))


def generic_memory(config, batch: int, audit: bool) -> dict[str, int]:
    """The generic learner-state model of a spec without ``memory`` (module docstring)."""
    K, B = episodes_of(config), max(1, int(batch))
    return {"learner state (generic model)": B * (GENERIC_SEED_BYTES + (2 if audit else 1) * GENERIC_EPISODE_BYTES * K)}


def run_estimate(spec, config, batch: int, *, audit: bool = False, runner: bool = True) -> MemoryEstimate:
    """Bytes of one batched run of ``batch`` seeds of the learner ``spec`` (a
    :class:`privacct.algorithms.contract.LearnerSpec`) at ``config``: the runner's terms plus
    ``spec.memory(config, batch, audit)`` (or :func:`generic_memory`); ``audit``: with the audit recorder;
    ``runner``: plus what :func:`privacct.algorithms.runner.run_experiment` keeps and writes."""
    K, B = episodes_of(config), max(1, int(batch))
    terms: dict[str, int] = {"regret arrays": FLOAT * B * K * (4 if runner else 1)}
    if runner:
        terms["curves table"] = FLOAT * K * 6
    model = spec.memory if spec.memory is not None else generic_memory
    for name, size in model(config, B, bool(audit)).items():
        terms[name] = terms.get(name, 0) + int(size)
    return MemoryEstimate(int(sum(terms.values())), tuple(terms.items()))


def _takes_observe(fn) -> bool:
    """Whether ``fn`` accepts ``(config, observe)`` (the shipped families' widths do; the contract's
    one-argument form gives the released width only)."""
    try:
        inspect.signature(fn).bind(None, "released")
    except (TypeError, ValueError):
        return False
    return True


def observation_width(spec, config, observe: str) -> int:
    """Floats per trial of an audit's flat sample of ``spec`` at ``config`` (an upper bound): ``observe``
    ``released`` (every release that contains user 1) or ``actions`` (the actions sent to users 2..K)."""
    K = episodes_of(config)
    fn = spec.observation_width
    if fn is not None and observe == "released":
        return max(1, int(fn(config)))
    if fn is not None and _takes_observe(fn):
        return max(1, int(fn(config, observe)))
    return max(1, (K - 1 if observe == "actions" else K) * GENERIC_OBSERVATION_FLOATS)


def one_run_width(spec, config) -> int:
    """Floats one canary's records of a one-run audit can hold at ``config`` (an upper bound): her releases under the
    learner's log, per group its per-user release count times its dimension (a canary's share of a release is kept
    only where the release holds no other canary, so never more), and never more than the classic audit's
    :func:`observation_width` (which counts every release over user 1, e.g. every response release of a learner
    that re-releases all users at each update)."""
    classic = observation_width(spec, config, "released")
    log = spec.build_log(config)
    if log is None:
        return classic
    per_log = sum(int(g.structure.per_user_count()) * int(g.dimension or GENERIC_OBSERVATION_FLOATS)
                  for g in log.release_groups)
    return max(1, min(classic, per_log))


def audit_estimate(spec, config, trials: int, observe: str, workers: int, *, width: int | None = None) -> MemoryEstimate:
    """Bytes of an audit of ``trials`` per side: both sides' samples (kept whole for the two halves, with
    a copy for the statistics), plus ``workers`` learner batches of :data:`AUDIT_CHUNK` trials at once. ``width``:
    floats per trial when known (the audit's own layout, measured on its pilot); default the learner's upper bound
    :func:`observation_width`."""
    width = observation_width(spec, config, observe) if width is None else int(width)
    samples = 2 * 2 * FLOAT * int(trials) * width
    batch = min(int(trials), AUDIT_CHUNK)
    runs = max(1, int(workers)) * run_estimate(spec, config, max(batch, AUDIT_PILOT), audit=True, runner=False).total
    return MemoryEstimate(samples + runs, (("samples of both sides", samples), ("learner batches", runs)))


def samples_lower_bound(trials: int) -> int:
    """The least an audit of ``trials`` per side can need: one float per trial and side."""
    return 2 * FLOAT * int(trials)


__all__ = ["AUDIT_CHUNK", "FLOAT", "GENERIC_EPISODE_BYTES", "GENERIC_OBSERVATION_FLOATS", "GENERIC_SEED_BYTES",
           "MemoryEstimate", "audit_estimate", "generic_memory", "levels", "observation_width", "one_run_width", "positive_int",
           "run_estimate", "samples_lower_bound"]
