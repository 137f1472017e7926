"""Small self-contained privatizers, correct or with one planted bug, for the mutant registry.

Each privatizer is a picklable :class:`privacct.audits.protocols.Mechanism` on the datasets ``"A"`` and
``"B"`` (D and D': the same fixed other users, user 1 = canary A or B) that adds its noise only
through :mod:`privacct.mechanisms`, so one run with a :class:`privacct.ledger.Ledger` records
what ran. The trial axis is part of the noise *shape* (one Generator per chunk, shape
``(size, ...)``): a chunk of trials is one vectorised call, and a run with ``size = 1`` is one
ordinary run of the privatizer whose ledger the ledger check reads. ``build_log()`` is what the
privatizer declares; ``claim`` is what it claims.

Privatizers (units: epsilon in nats; users are 1-based episodes; replace-one-user neighbours):

* :class:`TreeCounterPrivatizer` -- central (JDP) tabular visit counter: user k visits one pair
  (s, a) at each of H steps (one-hot vector of H x P entries); a binary-tree counter over the K
  users releases the noisy prefix sum after every user (the billboard). Replace-one l1
  sensitivity 2H (docs/seed-002-tabular.md#any-two-trajectories: two trajectories differ at every step); each user
  sits in floor(log2 K) + 1 nodes (Chan, Shi, Song 2011); Laplace b = (floor(log2 K)+1) 2H / eps
  (basic composition over the nodes). Observation: the K releases, differenced to the node each
  release adds (r_t - r_{t - lowbit t}; an invertible post-processing of the billboard).
* :class:`LocalReportPrivatizer` -- local (LDP) randomizer of H rewards clipped to [0, 1], l1
  sensitivity H, Laplace b = H / eps (Chowdhury & Zhou 2022, Lemma 5.4 with one family).
  Observation: the canary's own report (what the LDP server sees).
* :class:`GramPrivatizer` -- central release of the Gram matrix sum_k z_k z_k^T (d = 2,
  ||z|| <= 1) with symmetric Gaussian noise ("Analyze Gauss", Dwork et al. 2014): replace-one
  upper-triangle l2 sensitivity <= 2; sigma from the analytic Gaussian (Balle & Wang 2018).
* :class:`SwitchingPrivatizer` -- a low-switching learner: at each policy switch it releases the
  noisy count of all users so far; switches when the episode index doubles, with the hard cap
  floor(log2 K) + 1 (the ``adaptive(max_count)`` structure; Qiao & Wang 2023 style doubling).

Power (docs/auditing.md#verdicts-and-power): each privatizer declares the power criterion of its audit
(``power_criterion("A", "B")``) from the exact privacy-loss distribution of what it RUNS, when that
observation is Laplace or Gaussian coordinates with known shifts
(:func:`privacct.audits.power.structure_power`): the correct controls and the bugs that only change a
noise scale or a sensitivity. Bugs that change the structure (noise redrawn, shared or reused) have no
such structure and declare none: their audit can fail, never pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privacct.ledger import Ledger
from privacct.log import Claim, MechanismLog, PaperStatement, ReleaseGroup, Sensitivity, Structure, tree_depth
from privacct.mechanisms import TreeCounter, add_noise, gaussian, laplace, symmetric_gaussian

from ..reference_mechanisms import gaussian_loss, laplace_loss, structure_criterion

OTHERS_SEED = 20_221_122  # fixed other users: part of the dataset, the same in D and D'


def _lowbit(t: int) -> int:
    return t & -t


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TreeCounterPrivatizer:
    """Central tabular visit counter (see module docstring). ``bug`` in
    None | "tree-redraw" | "noise-halved" | "sensitivity-h" | "depth-ln-k" | "shared-noise"."""

    users: int = 8
    horizon: int = 1
    pairs: int = 2
    epsilon: float = 4.0
    bug: str | None = None

    @property
    def claim(self) -> Claim:
        return Claim(self.epsilon, 0.0)

    @property
    def dim(self) -> int:
        return self.horizon * self.pairs

    def contributions(self, dataset: str) -> np.ndarray:
        """(K, H*P) one-hot visit vectors; user 1 visits pair 0 (A) or pair P-1 (B) at every step."""
        K, H, P = self.users, self.horizon, self.pairs
        others = np.random.default_rng(OTHERS_SEED).integers(0, P, size=(K, H))
        others[0] = 0 if dataset == "A" else P - 1
        x = np.zeros((K, H, P))
        x[np.arange(K)[:, None], np.arange(H)[None, :], others] = 1.0
        return x.reshape(K, H * P)

    def code_scale(self) -> float:
        """The Laplace scale the code computes (the planted bug may change it)."""
        L, H = tree_depth(self.users), self.horizon
        if self.bug == "sensitivity-h":
            return L * H / self.epsilon  # printed sensitivity H where replace-one gives 2H
        if self.bug == "depth-ln-k":
            return math.log(self.users) * 2 * H / self.epsilon  # ln K nodes per user, not floor(log2 K)+1
        return L * 2 * H / self.epsilon

    def build_log(self) -> MechanismLog:
        paper = None
        if self.bug == "sensitivity-h":
            paper = PaperStatement(sensitivity=self.horizon, equation="printed: H pairs per user (add/remove count)")
        if self.bug == "depth-ln-k":
            paper = PaperStatement(per_user_count=math.log(self.users), equation="printed: Lap(log K / eps) per node")
        group = ReleaseGroup(
            "visits", "laplace", self.code_scale(),
            Sensitivity("l1", 2 * self.horizon, "replace-one: canaries differ at every step, 2 entries of 1 per step"),
            Structure.tree(self.users), dimension=self.dim,
            description="N_h(s,a) for all (h, s, a), one binary tree counter over the K users", paper=paper)
        return MechanismLog(f"mutant-tree-counter-{self.bug or 'correct'}", "joint", (group,),
                            parameters={"K": self.users, "H": self.horizon, "P": self.pairs}, claim=self.claim,
                            source="privacct.audits.mutants.planted_privatizers.TreeCounterPrivatizer")

    def run(self, dataset: str, rng: np.random.Generator, size: int, ledger: Ledger | None = None) -> np.ndarray:
        """(size, K, H*P): the node each release adds (noisy), for ``size`` trials."""
        x = self.contributions(dataset)
        K, m = x.shape
        b = self.code_scale() * (0.5 if self.bug == "noise-halved" else 1.0)
        kw = dict(ledger=ledger, group="visits")
        rel = np.zeros((K + 1, size, m))
        if self.bug is None or self.bug in ("noise-halved", "sensitivity-h", "depth-ln-k"):
            tc = TreeCounter((size, m), leaves=K, mechanism="laplace", scale=b, rngs=[rng], **kw)
            for t in range(1, K + 1):
                rel[t] = tc.add(np.broadcast_to(x[t - 1], (1, size, m)))[0]
        elif self.bug == "tree-redraw":
            # BUG: every release redraws the noise of every node it sums (fresh noise per release)
            for t in range(1, K + 1):
                total = np.zeros((size, m))
                hi = t
                while hi > 0:
                    lo = hi - _lowbit(hi) + 1
                    total += x[lo - 1:hi].sum(axis=0) + laplace([rng], (size, m), b, users=(lo, hi), **kw)[0]
                    hi = lo - 1
                rel[t] = total
        elif self.bug == "shared-noise":
            # BUG: one noise value per step h shared by all pairs (s, a) of that step
            H, P = self.horizon, self.pairs
            tc = TreeCounter((size, H), leaves=K, mechanism="laplace", scale=b, rngs=[rng], **kw)
            for t in range(1, K + 1):
                tc.add(np.zeros((1, size, H)))
                nodes = tc.noisy_sum()[0]  # noise only: (size, H)
                rel[t] = x[:t].sum(axis=0) + np.repeat(nodes, P, axis=1)
        else:
            raise ValueError(f"unknown bug {self.bug!r}")
        t = np.arange(1, K + 1)
        prev = t - (t & -t)
        return (rel[t] - rel[prev]).transpose(1, 0, 2)

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.run(dataset, rng, size).reshape(size, -1)

    def loss_structure(self, dataset: str, neighbour: str):
        """User 1 sits in the floor(log2 K) + 1 nodes [1, 2^j], each observed alone (the release at t = 2^j
        adds exactly that node) with i.i.d. Laplace(b) noise on its H*P coordinates: a_j = |x_A - x_B| / b
        for every differing coordinate of every such node. None for the structural bugs (noise redrawn per
        release or shared across pairs)."""
        if self.bug not in (None, "noise-halved", "sensitivity-h", "depth-ln-k") or dataset == neighbour:
            return None
        b = self.code_scale() * (0.5 if self.bug == "noise-halved" else 1.0)
        nodes = tree_depth(self.users)
        xa, xb = self.contributions(dataset)[0], self.contributions(neighbour)[0]
        return laplace_loss(np.tile(xa, nodes), np.tile(xb, nodes), b)

    def power_criterion(self, dataset: str, neighbour: str):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"tree counter ({self.bug or 'correct'})")


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LocalReportPrivatizer:
    """Local randomizer of H rewards in [0, 1]. ``bug``: None | "no-clip-below".

    Canary A's raw rewards are ``raw_low`` (< 0: an out-of-range report a buggy environment or a
    malicious user can produce), canary B's are 1; clipping to [0, 1] makes the difference 1 per step.
    """

    horizon: int = 2
    epsilon: float = 1.0
    raw_low: float = -4.0
    bug: str | None = None

    @property
    def claim(self) -> Claim:
        return Claim(self.epsilon, 0.0)

    def code_scale(self) -> float:
        return self.horizon / self.epsilon

    def build_log(self) -> MechanismLog:
        group = ReleaseGroup("rewards", "laplace", self.code_scale(),
                             Sensitivity("l1", self.horizon, "rewards clipped to [0, 1]: |r - r'| <= 1 per step"),
                             Structure.single(), dimension=self.horizon,
                             description="each user's H rewards, perturbed once by the user (local model)")
        return MechanismLog(f"mutant-local-report-{self.bug or 'correct'}", "local", (group,),
                            parameters={"H": self.horizon}, claim=self.claim,
                            source="privacct.audits.mutants.planted_privatizers.LocalReportPrivatizer")

    def report(self, dataset: str) -> np.ndarray:
        """The noiseless report: the H rewards, clipped (the bug clips below only)."""
        raw = np.full(self.horizon, self.raw_low if dataset == "A" else 1.0)
        return np.minimum(raw, 1.0) if self.bug == "no-clip-below" else np.clip(raw, 0.0, 1.0)

    def loss_structure(self, dataset: str, neighbour: str):
        """H Laplace(H / eps) coordinates shifted by the clipped reports' difference."""
        return laplace_loss(self.report(dataset), self.report(neighbour), self.code_scale())

    def power_criterion(self, dataset: str, neighbour: str):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"local report ({self.bug or 'correct'})")

    def run(self, dataset: str, rng: np.random.Generator, size: int, ledger: Ledger | None = None) -> np.ndarray:
        clipped = self.report(dataset)
        value = np.broadcast_to(clipped, (1, size, self.horizon))
        return add_noise(value, "laplace", self.code_scale(), [rng], ledger=ledger, group="rewards", users=(1, 1))[0]

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.run(dataset, rng, size)


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GramPrivatizer:
    """Central Gram-matrix release with symmetric Gaussian noise. ``bug``: None | "not-symmetrised"."""

    users: int = 4
    epsilon: float = 1.0
    delta: float = 1e-5
    bug: str | None = None

    @property
    def claim(self) -> Claim:
        return Claim(self.epsilon, self.delta)

    def code_scale(self) -> float:
        from privacct.accounting.formulas import gaussian_mu_for
        return 2.0 / gaussian_mu_for(self.epsilon, self.delta)  # sensitivity 2 (replace-one, ||z|| <= 1)

    def build_log(self) -> MechanismLog:
        group = ReleaseGroup("gram", "symmetric-gaussian-matrix", self.code_scale(),
                             Sensitivity("frobenius-upper", 2.0, "replace-one: ||zz^T - z'z'^T||_upper <= 2 ||z||^2 <= 2"),
                             Structure.single(), dimension=3,
                             description="sum_k z_k z_k^T (d = 2) plus symmetric Gaussian noise, released once")
        return MechanismLog(f"mutant-gram-{self.bug or 'correct'}", "joint", (group,), parameters={"d": 2, "K": self.users},
                            claim=self.claim, source="privacct.audits.mutants.planted_privatizers.GramPrivatizer")

    def gram(self, dataset: str) -> np.ndarray:
        """The noiseless Gram matrix sum_k z_k z_k^T (user 1's z is canary A's or B's)."""
        z = np.random.default_rng(OTHERS_SEED).normal(size=(self.users, 2))
        z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1.0)
        z[0] = np.array([1.0, 1.0 if dataset == "A" else -1.0]) / math.sqrt(2.0)
        return z.T @ z

    def loss_structure(self, dataset: str, neighbour: str):
        """Gaussian: mu = ||Delta|| / sigma over the independently noised entries: the upper triangle
        (symmetric noise: the lower one repeats it), all d^2 entries for the unsymmetrised bug."""
        d = self.gram(dataset) - self.gram(neighbour)
        entries = d.ravel() if self.bug == "not-symmetrised" else d[np.triu_indices(2)]
        return gaussian_loss(entries, np.zeros_like(entries), self.code_scale())

    def power_criterion(self, dataset: str, neighbour: str):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"Gram release ({self.bug or 'correct'})")

    def run(self, dataset: str, rng: np.random.Generator, size: int, ledger: Ledger | None = None) -> np.ndarray:
        gram = self.gram(dataset)
        s = self.code_scale()
        if self.bug == "not-symmetrised":
            # BUG: i.i.d. noise on all d^2 entries; (i, j) and (j, i) carry independent noise
            noise = gaussian([rng], (size, 2, 2), s, ledger=ledger, group="gram", users=(1, self.users))[0]
        else:
            # one Generator per trial: the symmetric primitive batches over Generators
            noise = symmetric_gaussian(rng.spawn(size), 2, s, ledger=ledger, group="gram", users=(1, self.users))
        return (gram + noise).reshape(size, 4)

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.run(dataset, rng, size)


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SwitchingPrivatizer:
    """Low-switching release of noisy running counts. ``bug``: None | "no-cap".

    Correct: switch at episodes 1, 2, 4, 8, ... with at most floor(log2 K) + 1 switches (hard cap).
    Bugged: switch after every episode whose user reported 1 (others all report 1), no cap.
    """

    users: int = 8
    epsilon: float = 4.0
    bug: str | None = None

    @property
    def claim(self) -> Claim:
        return Claim(self.epsilon, 0.0)

    @property
    def cap(self) -> int:
        return tree_depth(self.users)

    def code_scale(self) -> float:
        return self.cap * 1.0 / self.epsilon

    def build_log(self) -> MechanismLog:
        group = ReleaseGroup("running-count", "laplace", self.code_scale(),
                             Sensitivity("l1", 1.0, "replace-one: one user's bit changes the running count by <= 1"),
                             Structure.adaptive(self.cap), dimension=1,
                             description="noisy count of users 1..k released at each policy switch")
        return MechanismLog(f"mutant-switching-{self.bug or 'correct'}", "joint", (group,), parameters={"K": self.users},
                            claim=self.claim, source="privacct.audits.mutants.planted_privatizers.SwitchingPrivatizer")

    def bits(self, dataset: str) -> np.ndarray:
        bits = np.ones(self.users)
        bits[0] = 0.0 if dataset == "A" else 1.0
        return bits

    def switches(self, dataset: str) -> list[int]:
        """The episodes k (1-based) at which the rule switches and releases (data-driven for the bug)."""
        bits, out = self.bits(dataset), []
        for k in range(1, self.users + 1):
            if self.bug == "no-cap":
                switch = k == 1 or bits[k - 1] == 1.0  # BUG: data-driven trigger, no cap on the count
            else:
                switch = (k & (k - 1)) == 0 and len(out) < self.cap
            if switch:
                out.append(k)
        return out

    def loss_structure(self, dataset: str, neighbour: str):
        """One Laplace(b) coordinate per release, shifted by user 1's bit; None when the two canaries switch at
        different episodes (the release pattern itself then differs: no finite eps)."""
        ks = self.switches(dataset)
        if ks != self.switches(neighbour):
            return None
        ca, cb = np.cumsum(self.bits(dataset)), np.cumsum(self.bits(neighbour))
        idx = np.array(ks) - 1
        return laplace_loss(ca[idx], cb[idx], self.code_scale())

    def power_criterion(self, dataset: str, neighbour: str):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"switching releases ({self.bug or 'correct'})")

    def run(self, dataset: str, rng: np.random.Generator, size: int, ledger: Ledger | None = None) -> np.ndarray:
        bits = self.bits(dataset)
        out = np.zeros((size, self.users))
        for k in self.switches(dataset):
            out[:, k - 1] = bits[:k].sum() + laplace([rng], (size,), self.code_scale(), ledger=ledger,
                                                     group="running-count", users=(1, k))[0]
        return out

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.run(dataset, rng, size)


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FactorizedCounterPrivatizer:
    """Central continual counter with a factorized strategy (docs/counters.md): user k adds x_k in
    [-1, 1] (user 1: +1 in A, -1 in B; replace-one l2 sensitivity 2); the counter releases every
    prefix sum L (R x + z) with Gaussian noise, sigma = 2 ||column of R||_2 / mu(eps, delta).
    ``strategy``: ``blt`` (with ``buffers``, (theta, omega) pairs) or ``sqrt-toeplitz``.
    Observation: R x + z = C A^(-1) release for a Toeplitz R = C (an invertible post-processing of
    the K releases), C the strategy the counter is built with. ``bug``: None | "norm-too-small"
    (runs ``blt`` buffers (theta, omega) but declares (theta, 0.05), whose column norm is too small)
    | "noise-reused" (draws z_1 once and adds it at every step instead of a fresh z_t per step) |
    "noise-path" (a ``blt`` counter built and declared with ``buffers`` whose noise recursion runs
    with its Q coefficients halved, drawing the declared noise: in generating functions the executed
    L(x) = P(x) / (Q_h(x) (1 - x)), so R_exec(x) = Q_h(x) / P(x) (docs/counters.md#ledger);
    with the buffer (0.9, 0.2), Q_1 = omega - theta = -0.7 runs as -0.35 and the column norm of
    R_exec at K = 8 is 1.49 for a declared 1.08)."""

    users: int = 8
    epsilon: float = 2.0
    delta: float = 1e-5
    bug: str | None = None
    strategy: str = "blt"
    buffers: tuple[tuple[float, float], ...] = ((0.9, 1.0),)

    @property
    def claim(self) -> Claim:
        return Claim(self.epsilon, self.delta)

    def _structure(self, buffers) -> Structure:
        """The strategy's structure over the users, with ``buffers`` if it takes them (privacct.counters.registry)."""
        from privacct.counters.registry import get_strategy
        from privacct.counters.strategies import Strategy

        takes = get_strategy(self.strategy).takes_buffers
        return Strategy(self.strategy, buffers if takes else None).structure(self.users)

    def declared_structure(self) -> Structure:
        if self.bug == "norm-too-small":
            return self._structure(tuple((t, 0.05) for t, _ in self.buffers))
        return self._structure(self.buffers)

    def run_structure(self) -> Structure:
        return self._structure(self.buffers)

    def code_scale(self) -> float:
        from privacct.accounting.formulas import gaussian_mu_for
        from privacct.counters.strategies import column_norm

        return 2.0 * column_norm(self.declared_structure(), "l2") / gaussian_mu_for(self.epsilon, self.delta)

    def build_log(self) -> MechanismLog:
        group = ReleaseGroup("prefix-sums", "gaussian", self.code_scale(),
                             Sensitivity("l2", 2.0, "replace-one: x_1 in [-1, 1] moves by at most 2"),
                             self.declared_structure(), dimension=1,
                             description=f"prefix sums of x_1..x_K released at every step through a {self.strategy} counter")
        kind = "factorized" if self.strategy == type(self).strategy else self.strategy   # the default keeps its first name
        return MechanismLog(f"mutant-{kind}-counter-{self.bug or 'correct'}", "joint", (group,),
                            parameters={"K": self.users}, claim=self.claim,
                            source="privacct.audits.mutants.planted_privatizers.FactorizedCounterPrivatizer")

    def contributions(self, dataset: str) -> np.ndarray:
        x = np.random.default_rng(OTHERS_SEED).uniform(-1.0, 1.0, size=self.users)
        x[0] = 1.0 if dataset == "A" else -1.0
        return x

    def loss_structure(self, dataset: str, neighbour: str):
        """The observation is C x + z with z i.i.d. N(0, s^2) (C the run strategy's lower-triangular Toeplitz
        matrix, column 1 = its coefficients r_0..r_(K-1)): mu = ||C (x_A - x_B)|| / s (Dong, Roth, Su 2019,
        Cor. 2.13). None for the reused-noise bug (rank-one noise: no finite eps) and for the noise-path bug (the
        observation inverts the factorization the counter is built with while the noise ran through another
        path: a structural bug, whose audit may fail or be inconclusive, never pass)."""
        from privacct.counters.strategies import column_coefficients

        if self.bug in ("noise-reused", "noise-path"):
            return None
        K = self.users
        r = np.asarray(column_coefficients(self.run_structure()), dtype=float)[:K]
        C = np.tril(np.array([[r[i - j] if i >= j else 0.0 for j in range(K)] for i in range(K)]))
        return gaussian_loss(C @ self.contributions(dataset), C @ self.contributions(neighbour), self.code_scale())

    def power_criterion(self, dataset: str, neighbour: str):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"factorized counter ({self.bug or 'correct'})")

    def run(self, dataset: str, rng: np.random.Generator, size: int, ledger: Ledger | None = None) -> np.ndarray:
        """(size, K): R x + z recovered from the K releases."""
        from privacct.counters.counter import FactorizedCounter
        from privacct.counters.strategies import column_coefficients

        x, K, s = self.contributions(dataset), self.users, self.code_scale()
        r = column_coefficients(self.run_structure())
        rel = np.empty((K, size))
        if self.bug == "noise-reused":
            # BUG: one noise draw z_1 reused at every step (the release noise is L (z_1, ..., z_1))
            z = gaussian([rng], (size,), s, ledger=ledger, group="prefix-sums", users=(1, 1))[0]
            Cinv = np.linalg.inv(np.tril(np.array([[r[i - j] if i >= j else 0.0 for j in range(K)] for i in range(K)])))
            noise = np.cumsum(Cinv @ np.ones(K))             # A C^{-1} (1, ..., 1)
            for t in range(K):
                rel[t] = x[:t + 1].sum() + noise[t] * z
        else:
            c = FactorizedCounter((size,), strategy=self.run_structure(), leaves=K, mechanism="gaussian", scale=s,
                                  rngs=[rng], ledger=ledger, group="prefix-sums")
            if self.bug == "noise-path":
                c._Q = [0.5 * q for q in c._Q]      # BUG: the noise recursion runs with halved Q (declared noise drawn)
            for t in range(K):
                rel[t] = c.add(np.full((1, size), x[t]))[0]
        steps = np.diff(rel, axis=0, prepend=0.0)           # A^{-1} release = C^{-1} (C x + z)
        C = np.tril(np.array([[r[i - j] if i >= j else 0.0 for j in range(K)] for i in range(K)]))
        return (C @ steps).T

    def __call__(self, dataset: str, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.run(dataset, rng, size)
