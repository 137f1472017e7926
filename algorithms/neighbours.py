"""Neighbouring relations per privacy model, written once, and the per-group distances they imply.

JDP (seed 002 Def. 2.2; seed 000 Def. 2.2 (same definition); seed 003 Def. 3; seed 004 Def. 4): two
user sequences are neighbours when they differ in one user, and a user is a RESPONSE FUNCTION -- the
state and cost/reward responses she gives to the actions the agent prescribes (seed 004: "a tree of
depth H encoding the state and reward responses"). The agent prescribes user k's actions from its
policy pi^k (computed from released statistics of users 1..k-1) with its own coins. For user 1 the
policy is data-free, so both neighbours receive the same a_1 whenever they start in the same state:

* ``initial_state="shared"``: the paper fixes s_1 (seed 002 Sec. 2.1 "The initial state s_1^k is
  assumed to be fixed and history independent"; seed 000 Sec. 2.1, the same sentence). Then (s_1, a_1)
  coincide in D and D', and every stage-1 statistic that depends on (s_1, a_1) only is unchanged.
* ``initial_state="user"``: the initial state is the user's (seed 003 Sec. 2.1: "their personal
  information is encoded in state s_1k"; seed 004 Sec. 2.1: "the environment chooses an initial state
  x_1^k" and a user is a tree of responses); then s_1, hence a_1, may differ.

Later actions follow each user's own states (same policy, same coins), so from stage 2 on the two
trajectories may visit different (s, a) pairs.

LDP (seed 002 Def. 2.3; seed 001 Def. 3.6; seed 003 Def. 4): the local randomizer must be
indistinguishable on ANY two trajectories (states, actions, rewards), so the stage-1 statistics may
differ too.

Each family states, next to the sensitivity its log declares, the worst-case change of every
release group under its valid pair (:class:`GroupDistance`), and a test checks that (a) the log
declares exactly that worst case where it is positive, (b) a positive value where it is 0 (the log
cannot express 0; conservative), and (c) the canary pair's actual change, measured from the
noiseless observations, never exceeds it and equals it where ``attained``.
"""

from __future__ import annotations

from dataclasses import dataclass

from privacct.errors import PrivacctError

INITIAL_STATES = ("shared", "user", "any")


@dataclass(frozen=True)
class Relation:
    """A neighbouring relation: ``model`` jdp | ldp, ``initial_state`` (see module docstring),
    ``reference`` (paper and definition), ``description`` (one sentence)."""

    model: str
    initial_state: str
    reference: str
    description: str

    def __post_init__(self) -> None:
        if self.model not in ("jdp", "ldp"):
            raise PrivacctError(f"relation.model must be jdp or ldp, got {self.model!r}")
        if self.initial_state not in INITIAL_STATES:
            raise PrivacctError(f"relation.initial_state must be one of {', '.join(INITIAL_STATES)}, got {self.initial_state!r}")
        if (self.model == "ldp") != (self.initial_state == "any"):
            raise PrivacctError("relation.initial_state must be 'any' exactly for LDP (any two trajectories)")


def jdp(reference: str, *, shared_start: bool) -> Relation:
    """The JDP relation of a paper: one user replaced by another response function."""
    if shared_start:
        text = ("one user replaced by another response function; s_1 is fixed by the paper and a_1 prescribed "
                "from the data-free policy with the agent's coins, so (s_1, a_1) coincide in D and D'")
    else:
        text = ("one user replaced by another response function; the initial state is the user's, so s_1 "
                "and a_1 may differ")
    return Relation("jdp", "shared" if shared_start else "user", reference, text)


def ldp(reference: str) -> Relation:
    """The LDP relation: the randomizer is compared on any two trajectories."""
    return Relation("ldp", "any", reference, "any two trajectories (states, actions and rewards/costs may all differ)")


@dataclass(frozen=True)
class GroupDistance:
    """The worst-case change of one release of a group under a relation.

    ``group``: the log's release group; ``norm``: l1 | l2 | frobenius-upper (the log's);
    ``worst_case``: sup over valid pairs of the change of ONE release (>= 0; 0 when the relation
    cannot change it); ``attained``: the family's canary pair attains ``worst_case`` (tested with
    equality; otherwise tested with <=); ``derivation``: the argument, with the paper's equation;
    ``arbitrary``: the change under arbitrary trajectories (kept for the record where it differs,
    e.g. seed 002 JDP: 6H, the "any two trajectories" reading).
    """

    group: str
    norm: str
    worst_case: float
    attained: bool
    derivation: str
    arbitrary: float | None = None

    def __post_init__(self) -> None:
        if not (self.worst_case >= 0):
            raise PrivacctError(f"group {self.group!r}: worst_case must be >= 0, got {self.worst_case!r}")


@dataclass(frozen=True)
class NeighbourSpec:
    """A learner configuration's relation, its canary pair and every group's worst-case distance."""

    relation: Relation
    canaries: str
    groups: tuple[GroupDistance, ...]

    def group(self, name: str) -> GroupDistance:
        for g in self.groups:
            if g.group == name:
                return g
        raise PrivacctError(f"no neighbour distance for group {name!r}; groups: {', '.join(g.group for g in self.groups)}")


def check_log_against(spec: NeighbourSpec, log) -> list[str]:
    """Disagreements between a declared log and a NeighbourSpec (empty list: they agree).

    Every log group needs a distance in the same norm; the declared value must equal the worst case
    when it is positive (relative 1e-9), and be positive (it always is) when the worst case is 0."""
    problems = []
    names = {g.group for g in spec.groups}
    for g in log.release_groups:
        if g.name not in names:
            problems.append(f"group {g.name!r}: no worst-case distance under {spec.relation.reference}")
            continue
        d = spec.group(g.name)
        if d.norm != g.sensitivity.norm:
            problems.append(f"group {g.name!r}: distance in {d.norm}, sensitivity declared in {g.sensitivity.norm}")
        if d.worst_case > 0 and abs(g.sensitivity.value - d.worst_case) > 1e-9 * d.worst_case:
            problems.append(f"group {g.name!r}: declared sensitivity {g.sensitivity.value!r} != worst case {d.worst_case!r}")
    return problems


__all__ = ["GroupDistance", "INITIAL_STATES", "NeighbourSpec", "Relation", "check_log_against", "jdp", "ldp"]
